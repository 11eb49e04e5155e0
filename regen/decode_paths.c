// SPDX-License-Identifier: GPL-2.0
/*
 * Path-mode decoding: read a path's number (plus pending PARTIAL sums)
 * when the previous path ends at a back edge or a call (after the callee's
 * markers: the engine calls next_edge there last), or at the activation's
 * first vertex; then walk the numbered DAG choosing at each vertex the
 * out-edge e with Val(e) <= r < Val(e) + NumPaths(dst), as the slides'
 * Step 4 does, and hand the engine one CFG edge per call.
 */
#include <stdlib.h>

#include <pathtrace/error.h>

#include "decode_paths.h"

enum { ST_ACTIVE, ST_REST, ST_NEXT };

static void paths_begin(const struct regen_func *f, uint64_t *state)
{
	(void)f;
	state[ST_ACTIVE] = 0;
	state[ST_REST] = 0;
	state[ST_NEXT] = 0;
}

/* The DAG out-edge of v that path value r takes, or GRAPH_NONE. */
static uint32_t pick(const struct pathnum *p, uint32_t v, uint64_t r)
{
	const struct graph *d = &p->dag;
	uint32_t k;

	for (k = d->out_start[v]; k < d->out_start[v + 1]; k++) {
		uint32_t e = d->out_edges[k];

		if (p->val[e] <= r && r - p->val[e] < p->numpaths[d->edges[e].dst])
			return e;
	}
	return GRAPH_NONE;
}

/*
 * Reads the next path number and enters the path at its first block:
 * returns that block (ENTRY or the target of its START edge) with the
 * remaining value in *rest, or a negative PT_E*.
 */
static int64_t read_path(const struct pathnum *p, struct regen_bitreader *br,
			 int64_t *partial, uint64_t *rest)
{
	uint64_t id = regen_read_bits(br, p->width);
	uint32_t e;

	if (br->eof)
		return -PT_ETRUNC;
	/*
	 * One path (width 0): all increments are 0, so this function never
	 * leaves a PARTIAL; one pending now is its caller's, emitted at the
	 * same bit position after this activation returned.
	 */
	if (p->width) {
		/*
		 * The probe emitted the low width bits of (partial-less
		 * register + value); the number is below 2^width, so adding
		 * the partial sums modulo 2^width gives it exactly.
		 */
		id += (uint64_t)*partial;
		if (p->width < 64)
			id &= (1ull << p->width) - 1;
		*partial = 0;
	}
	if (id >= p->npaths)
		return -PT_EFORMAT;
	e = pick(p, p->dag.entry, id);
	if (e != GRAPH_NONE && p->kind[e] == PATHNUM_START) {
		*rest = id - p->val[e];
		return p->dag.edges[e].dst;
	}
	*rest = id;
	return p->dag.entry;
}

static int64_t paths_next_edge(const struct regen_func *f, uint64_t *state,
			       struct regen_bitreader *br, uint32_t v, int64_t *partial)
{
	const struct pathnum *p = f->model;
	const struct graph *g = f->g;
	uint64_t r;
	uint32_t e, k;
	int64_t first;
	int fresh = 0;

	if (v >= g->nv || v == g->exit)
		return -PT_EINVAL;
	if (!state[ST_ACTIVE]) {
		first = read_path(p, br, partial, &state[ST_REST]);
		if (first < 0)
			return first;
		state[ST_NEXT] = (uint64_t)first;
		state[ST_ACTIVE] = 1;
		fresh = 1;
	}
	if (state[ST_NEXT] != v)
		return -PT_EFORMAT;	/* the number starts its path elsewhere */
	r = state[ST_REST];
	e = pick(p, v, r);
	if (e == GRAPH_NONE || p->kind[e] == PATHNUM_START)
		return -PT_EFORMAT;
	r -= p->val[e];
	state[ST_REST] = r;
	if (p->dag.edges[e].dst != g->exit) {
		state[ST_NEXT] = p->dag.edges[e].dst;
		return p->orig[e];
	}
	/* The path ends here. */
	if (r)
		return -PT_EFORMAT;
	state[ST_ACTIVE] = 0;
	if (p->kind[e] == PATHNUM_REAL)
		return p->orig[e];	/* the activation returns */
	/*
	 * A path read in this very call (the activation's first, at ENTRY)
	 * that ends here: PARTIAL markers before the next number are not
	 * consumed yet, so read it in the next call (at ENTRY again: only
	 * ENTRY's self-loop gets here, and ENTRY is then no call vertex).
	 */
	if (fresh && p->kind[e] == PATHNUM_BACK_END)
		return p->orig[e];
	/* The next path's number follows at once (after the callee's bits). */
	first = read_path(p, br, partial, &state[ST_REST]);
	if (first < 0)
		return first;
	state[ST_ACTIVE] = 1;
	state[ST_NEXT] = (uint64_t)first;
	if (p->kind[e] == PATHNUM_BACK_END) {
		uint32_t h = g->edges[p->orig[e]].dst;

		return (uint32_t)first == h ? (int64_t)p->orig[e] : -PT_EFORMAT;
	}
	for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
		e = g->out_edges[k];
		if (g->edges[e].dst == (uint32_t)first)
			return e;
	}
	return -PT_EFORMAT;
}

/* A path number read: the path up to its end ran (it is emitted there). */
static int paths_pending(const struct regen_func *f, const uint64_t *state)
{
	(void)f;
	return state[ST_ACTIVE] != 0;
}

const struct regen_decoder_ops regen_decode_paths_ops = {
	.name = "paths",
	.begin = paths_begin,
	.next_edge = paths_next_edge,
	.pending = paths_pending,
};

int decode_paths_model(const struct graph *g, int plan_nbits, struct pathnum **out)
{
	struct pathnum *p = calloc(1, sizeof(*p));
	int err;

	*out = NULL;
	if (!p)
		return -PT_ENOMEM;
	err = pathnum_build(p, g, NULL, NULL);
	if (!err && plan_nbits >= 0 && (unsigned int)plan_nbits != p->width) {
		pathnum_free(p);
		err = -PT_EFORMAT;
	}
	if (err) {
		free(p);
		return err;
	}
	*out = p;
	return 0;
}

void decode_paths_model_free(void *model)
{
	if (!model)
		return;
	pathnum_free(model);
	free(model);
}
