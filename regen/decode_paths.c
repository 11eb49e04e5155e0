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

static uint64_t next_bits(void *ctx, unsigned int n)
{
	return regen_read_bits(ctx, n);
}

/*
 * The class of the path that starts after path end e (a DAG edge into
 * EXIT) or, with e GRAPH_NONE, at the activation's first vertex v: for
 * reading its number's word.
 */
static int64_t next_class(const struct paths_model *m, uint32_t e, uint32_t v)
{
	const struct pathnum *p = &m->pn;
	const struct graph *g = p->g;

	if (e == GRAPH_NONE)
		return path_codes_class_at(&m->pc, p, v);
	if (p->kind[e] == PATHNUM_BACK_END)
		return path_codes_class_at(&m->pc, p, g->edges[p->orig[e]].dst);
	if (p->kind[e] == PATHNUM_CALL_END && graph_out_degree(g, v) == 1)
		return path_codes_class_at(&m->pc, p, g->edges[g->out_edges[g->out_start[v]]].dst);
	return -PT_EFORMAT;	/* path_codes_load refuses codes for such a function */
}

/*
 * Reads the next path number (a word of class cls when the model is coded
 * and the number's bits do not start a segment) and enters the path at its
 * first block: returns that block (ENTRY or the target of its START edge)
 * with the remaining value in *rest, or a negative PT_E*.
 */
static int64_t read_path(const struct paths_model *m, struct regen_bitreader *br,
			 int64_t cls, int64_t *partial, uint64_t *rest)
{
	const struct pathnum *p = &m->pn;
	uint64_t id;
	uint32_t e;

	if (m->coded && !regen_at_seg_start(br)) {
		/* the rest of a path a PARTIAL split is a segment's first bits: never a word */
		if (cls < 0 || *partial)
			return -PT_EFORMAT;
		if (path_codes_read(&m->pc, (uint32_t)cls, next_bits, br, &id))
			return br->eof ? -PT_ETRUNC : -PT_EFORMAT;
		if (br->eof)
			return -PT_ETRUNC;
		goto enter;
	}
	id = regen_read_bits(br, p->width);
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
enter:
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
	const struct paths_model *m = f->model;
	const struct pathnum *p = &m->pn;
	const struct graph *g = f->g;
	uint64_t r;
	uint32_t e, k;
	int64_t first;
	int fresh = 0;

	if (v >= g->nv || v == g->exit)
		return -PT_EINVAL;
	if (!state[ST_ACTIVE]) {
		first = read_path(m, br, m->coded ? next_class(m, GRAPH_NONE, v) : -1, partial,
				  &state[ST_REST]);
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
	first = read_path(m, br, m->coded ? next_class(m, e, v) : -1, partial, &state[ST_REST]);
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

int decode_paths_model(const struct graph *g, int plan_nbits, struct paths_model **out)
{
	struct paths_model *m = calloc(1, sizeof(*m));
	int err;

	*out = NULL;
	if (!m)
		return -PT_ENOMEM;
	err = pathnum_build(&m->pn, g, NULL, NULL);
	if (!err && plan_nbits >= 0 && (unsigned int)plan_nbits != m->pn.width) {
		pathnum_free(&m->pn);
		err = -PT_EFORMAT;
	}
	if (err) {
		free(m);
		return err;
	}
	*out = m;
	return 0;
}

int decode_paths_codes(struct paths_model *m, const struct pt_path_code *codes, uint32_t ncodes,
		       const struct pt_path_range *ranges, uint32_t nranges, uint64_t npaths,
		       char *why, size_t whylen)
{
	int err = path_codes_load(&m->pc, &m->pn, codes, ncodes, ranges, nranges, npaths, why,
				  whylen);

	m->coded = !err;
	return err;
}

void decode_paths_model_free(void *model)
{
	struct paths_model *m = model;

	if (!m)
		return;
	path_codes_free(&m->pc);
	pathnum_free(&m->pn);
	free(m);
}
