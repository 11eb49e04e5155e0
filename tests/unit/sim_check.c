// SPDX-License-Identifier: GPL-2.0
/* Simulator <-> engine glue for tests (sim_check.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>

#include "sim_check.h"

int simc_funcs(const struct sim_program *p, const struct regen_decoder_ops *ops,
	       const void *const *models, struct regen_func **arr, struct regen_funcs *fs)
{
	struct regen_func *rf = calloc(p->nfuncs + 1, sizeof(*rf));
	uint32_t i, n = 0;

	if (!rf)
		return -PT_ENOMEM;
	for (i = 0; i < p->nfuncs; i++) {
		const struct sim_func *f = &p->funcs[i];

		if (!f->traced)
			continue;
		rf[n].func_id = f->func_id;
		rf[n].name = "sim";
		rf[n].g = &f->g;
		rf[n].call_ret_addr = f->ret_addr;
		rf[n].call_callee = f->callee_id;
		rf[n].call_implicit = f->implicit;
		rf[n].tail_callee = f->tail_id;
		rf[n].framed = f->framed;
		rf[n].ops = ops;
		rf[n].model = models ? models[i] : (const void *)&f->enc;
		n++;
	}
	*arr = rf;
	memset(fs, 0, sizeof(*fs));	/* no index: each walk builds its own */
	fs->funcs = rf;
	fs->nfuncs = n;
	/* the witness decoder's tables, as pathregen binds them (pr_bind.c) */
	for (i = 0; ops == &regen_decode_witness_ops && i < n; i++) {
		const struct encoding *enc = rf[i].model;
		struct regen_word_lookup *lk = NULL;
		uint32_t *fe = NULL;
		int err;

		if (!enc->pred_row || !enc->edge_nbits)
			continue;	/* refused: no tables, never run */
		err = regen_word_lookup_build(rf[i].g, enc, rf[i].call_ret_addr, &lk);

		rf[i].lookup = lk;
		if (!err)
			err = regen_witness_free_edges(rf[i].g, rf[i].model, &fe);
		rf[i].free_edge = fe;
		if (err) {
			simc_funcs_free(rf, n);
			return err;
		}
	}
	return 0;
}

void simc_funcs_free(struct regen_func *arr, uint32_t n)
{
	uint32_t i;

	for (i = 0; arr && i < n; i++) {
		regen_word_lookup_free((struct regen_word_lookup *)arr[i].lookup);
		free((uint32_t *)arr[i].free_edge);
	}
	free(arr);
}

struct collect {
	struct regen_event *ev;
	uint32_t n, cap;
	int nomem;
};

static int collect(void *ctx, const struct regen_event *ev)
{
	struct collect *c = ctx;

	if (c->n == c->cap) {
		uint32_t ncap = c->cap ? c->cap * 2 : 256;
		struct regen_event *ne = realloc(c->ev, ncap * sizeof(*ne));

		if (!ne) {
			c->nomem = 1;
			return 1;
		}
		c->ev = ne;
		c->cap = ncap;
	}
	c->ev[c->n++] = *ev;
	return 0;
}

static const char *evname(uint32_t t)
{
	static const char *const n[] = { "?", "ENTER", "BLOCK", "EXIT", "GAP", "RESYNC",
					  "TRUNCATED" };

	return t < 7 ? n[t] : "?";
}

/*
 * Where the truth's prefix t[0..k) leaves the innermost open activation,
 * after `popped` more of them returned: its func, depth and last block.
 * Returns 0 when none is open.
 */
static int open_at(const struct sim_truth *t, uint32_t k, uint32_t popped, uint32_t *func,
		   uint32_t *depth, uint32_t *block)
{
	uint32_t i, open = 0;

	for (i = 0; i < k; i++) {
		const struct sim_event *x = &t->ev[i];

		if (x->type == REGEN_EV_ENTER)
			open = x->depth + 1;
		else if (x->type == REGEN_EV_EXIT)
			open = x->depth;
	}
	if (open <= popped)
		return 0;
	open -= popped;
	*depth = open - 1;
	for (i = k; i-- > 0;) {
		const struct sim_event *x = &t->ev[i];

		if (x->type == REGEN_EV_BLOCK && x->depth == open - 1) {
			*func = x->func;
			*block = x->block;
			return 1;
		}
	}
	return 0;
}

int simc_compare(const struct regen_funcs *fs, const struct sim_stream *s,
		 const struct sim_truth *t, uint32_t flags, char *msg, size_t len, uint32_t *nev)
{
	struct regen_stream rs;
	struct collect c = { NULL, 0, 0, 0 };
	uint32_t i, k, func = 0, depth = 0, block = 0, extra_exits = 0;
	const struct regen_event *last;
	int rc;

	sim_stream_view(s, 1, &rs);
	rc = regen_stream(fs, &rs, collect, &c);
	if (c.nomem || rc == -PT_ENOMEM) {
		free(c.ev);
		return -PT_ENOMEM;
	}
	if (nev)
		*nev = c.n;
	rc = 0;
	last = c.n ? &c.ev[c.n - 1] : NULL;
	/* The regenerated events before a final TRUNCATED (or GAP) are the truth's, in order. */
	k = last && (last->type == REGEN_EV_TRUNCATED || last->type == REGEN_EV_GAP) ? c.n - 1 : c.n;
	for (i = 0; i < k && !rc; i++) {
		const struct sim_event *x = i < t->nev ? &t->ev[i] : NULL;
		const struct regen_event *y = &c.ev[i];

		if (!x && (flags & SIMC_TRUNCATED) && y->type == REGEN_EV_EXIT) {
			extra_exits++;	/* stopped right after the proven edge into EXIT */
			continue;
		}
		if (!x || y->type != x->type || y->func != x->func || y->depth != x->depth ||
		    (x->type == REGEN_EV_BLOCK && (y->block != x->block || y->edge != x->edge))) {
			snprintf(msg, len,
				 "event %u: truth %s f%u b%u e%u d%u, regenerated %s f%u b%u e%u d%u reason %d pos %llu",
				 i, x ? evname(x->type) : "none", x ? x->func : 0, x ? x->block : 0,
				 x ? x->edge : 0, x ? x->depth : 0, evname(y->type), y->func, y->block,
				 y->edge, y->depth, y->reason, (unsigned long long)y->pos);
			rc = -PT_EMISMATCH;
		}
	}
	if (rc || k == c.n) {
		if (!rc && !(flags & SIMC_TRUNCATED) && c.n != t->nev) {
			snprintf(msg, len, "%u events regenerated, %u executed", c.n, t->nev);
			rc = -PT_EMISMATCH;
		}
		free(c.ev);
		return rc;
	}
	/*
	 * The stream ended inside activations: nothing after its last
	 * evidence is reported. Every bit was consumed; no ENTER of the truth
	 * is missing (an ENTER marker is evidence; an implicit entry after the
	 * last bit has none); the TRUNCATED event names
	 * the innermost open activation where the truth had it.
	 */
	if (last->type == REGEN_EV_GAP) {
		if (!(flags & SIMC_TRUNCATED) || last->reason != -PT_EMISMATCH) {
			snprintf(msg, len, "gap at event %u reason %d", k, last->reason);
			rc = -PT_EMISMATCH;
		}
		free(c.ev);
		return rc;
	}
	if (last->pos != rs.nbits) {
		snprintf(msg, len, "TRUNCATED at bit %llu of %llu", (unsigned long long)last->pos,
			 (unsigned long long)rs.nbits);
		rc = -PT_EMISMATCH;
	}
	for (i = k; i < t->nev && !rc; i++) {
		if (t->ev[i].type == REGEN_EV_ENTER && !t->ev[i].implicit) {
			snprintf(msg, len, "TRUNCATED at event %u before the truth's ENTER %u", k, i);
			rc = -PT_EMISMATCH;
		}
	}
	/* ... and nothing is left out that a later bit proves */
	for (i = k; i < t->nev && !rc; i++) {
		if (t->ev[i].pos < rs.nbits) {
			snprintf(msg, len, "TRUNCATED at event %u, but the truth's event %u came "
				 "before bit %llu of %llu", k, i, (unsigned long long)t->ev[i].pos,
				 (unsigned long long)rs.nbits);
			rc = -PT_EMISMATCH;
		}
	}
	if (!rc && !(flags & SIMC_TRUNCATED) && t->nev == k) {
		snprintf(msg, len, "TRUNCATED although the run ended");
		rc = -PT_EMISMATCH;
	}
	if (!rc && (!open_at(t, k < t->nev ? k : t->nev, extra_exits, &func, &depth, &block) ||
		    last->func != func || last->depth != depth || last->block != block)) {
		snprintf(msg, len, "TRUNCATED f%u b%u d%u, the truth has f%u b%u d%u open",
			 last->func, last->block, last->depth, func, block, depth);
		rc = -PT_EMISMATCH;
	}
	free(c.ev);
	return rc;
}
