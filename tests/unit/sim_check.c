// SPDX-License-Identifier: GPL-2.0
/* Simulator <-> engine glue for tests (sim_check.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		rf[n].ops = ops;
		rf[n].model = models ? models[i] : (const void *)&f->enc;
		n++;
	}
	*arr = rf;
	fs->funcs = rf;
	fs->nfuncs = n;
	return 0;
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

int simc_compare(const struct regen_funcs *fs, const struct sim_stream *s,
		 const struct sim_truth *t, uint32_t flags, char *msg, size_t len, uint32_t *nev)
{
	struct regen_stream rs;
	struct collect c = { NULL, 0, 0, 0 };
	uint32_t i;
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
	for (i = 0; i < t->nev && !rc; i++) {
		const struct sim_event *x = &t->ev[i];
		const struct regen_event *y = i < c.n ? &c.ev[i] : NULL;

		if (y && (flags & SIMC_TRUNCATED) && i + 1 == c.n &&
		    (y->type == REGEN_EV_TRUNCATED ||
		     (y->type == REGEN_EV_GAP && y->reason == -PT_EMISMATCH)))
			break;	/* bits ran out before the run's last events */
		if (!y || y->type != x->type || y->func != x->func || y->depth != x->depth ||
		    (x->type == REGEN_EV_BLOCK && (y->block != x->block || y->edge != x->edge))) {
			snprintf(msg, len,
				 "event %u: truth %s f%u b%u e%u d%u, regenerated %s f%u b%u e%u d%u reason %d pos %llu",
				 i, evname(x->type), x->func, x->block, x->edge, x->depth,
				 y ? evname(y->type) : "none", y ? y->func : 0, y ? y->block : 0,
				 y ? y->edge : 0, y ? y->depth : 0, y ? y->reason : 0,
				 y ? (unsigned long long)y->pos : 0ull);
			rc = -PT_EMISMATCH;
		}
	}
	if (!rc && !(flags & SIMC_TRUNCATED) && c.n != t->nev) {
		snprintf(msg, len, "%u events regenerated, %u executed; extra %s reason %d",
			 c.n, t->nev, evname(c.ev[t->nev].type), c.ev[t->nev].reason);
		rc = -PT_EMISMATCH;
	}
	if (!rc && (flags & SIMC_TRUNCATED)) {
		/*
		 * Past the truth only a continuation the stream determines (no
		 * bits needed), then the end is marked; an end without bits
		 * left cannot be told from a return (see the report).
		 */
		if (c.n == 0 && t->nev) {
			snprintf(msg, len, "nothing regenerated from a stopped run");
			rc = -PT_EMISMATCH;
		}
		for (i = t->nev; i < c.n && !rc; i++) {
			uint32_t ty = c.ev[i].type;
			int last = i + 1 == c.n;

			if (last ? !(ty == REGEN_EV_TRUNCATED ||
				     (ty == REGEN_EV_GAP && c.ev[i].reason == -PT_EMISMATCH) ||
				     ty == REGEN_EV_EXIT) :
				   !(ty == REGEN_EV_BLOCK || ty == REGEN_EV_EXIT)) {
				snprintf(msg, len, "after the truncated truth: event %u %s reason %d",
					 i, evname(ty), c.ev[i].reason);
				rc = -PT_EMISMATCH;
			}
		}
	}
	free(c.ev);
	return rc;
}
