// SPDX-License-Identifier: GPL-2.0
/* Edges mode: exact edge and block counts from COUNTERS records (edge_counts.h). */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/eprof.h>
#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "edge_counts.h"

int edge_counts_func(const struct graph *g, const struct plan_view *pv, const uint64_t *sum,
		     uint64_t *edge_count, uint64_t *activations, uint32_t *chords)
{
	struct counters c;
	uint32_t i;
	int err;

	*chords = 0;
	if (pv->hdr.mode != PT_MODE_EDGES ||
	    (pv->hdr.nr_counters != g->ne && pv->hdr.nr_counters != g->ne + 1))
		return -PT_EFORMAT;
	memset(&c, 0, sizeof(c));
	c.ne = g->ne;
	c.ncounters = g->ne;
	c.counter = malloc(((size_t)g->ne + 1) * sizeof(*c.counter));
	c.in_tree = malloc((size_t)g->ne + 1);
	c.removed = calloc((size_t)g->ne + 1, 1);
	if (!c.counter || !c.in_tree || !c.removed) {
		counters_free(&c);
		return -PT_ENOMEM;
	}
	for (i = 0; i < g->ne; i++) {
		c.counter[i] = GRAPH_NONE;
		c.in_tree[i] = 1;
	}
	/* The chords are the edges the plan counts; the rest is its tree. */
	for (i = 0; i < pv->hdr.nr_actions; i++) {
		const struct pt_action *a = &pv->actions[i];

		if (a->op != PT_OP_COUNT || (a->arg == g->ne && pv->hdr.nr_counters > g->ne))
			continue;	/* (the activation counter is no edge's) */
		if (a->arg >= g->ne) {
			counters_free(&c);
			return -PT_EFORMAT;
		}
		*chords += c.in_tree[a->arg];
		c.in_tree[a->arg] = 0;
		c.counter[a->arg] = a->arg;
	}
	/* A counter no action increments stays 0: it must be on no edge. */
	for (i = 0; i < g->ne; i++)
		if (c.in_tree[i] && sum[i]) {
			counters_free(&c);
			return -PT_EFORMAT;
		}
	err = eprof_counts(g, &c, sum, NULL, edge_count, activations);
	counters_free(&c);
	return err;
}

void edge_counts_free(struct edge_counts *ec)
{
	uint32_t i;

	for (i = 0; ec->f && i < ec->nfuncs; i++) {
		free(ec->f[i].edge);
		free(ec->f[i].block);
	}
	free(ec->f);
	memset(ec, 0, sizeof(*ec));
}

/* The model's function func_id if it is in edges mode, else NULL. */
static const struct pr_func *edges_func(const struct pr_model *m, uint32_t func_id)
{
	const struct pr_func *f = pr_model_func(m, func_id);

	return f && f->mode == PT_MODE_EDGES ? f : NULL;
}

static void count_one(const struct tf_function *fn, const struct pr_func *f,
		      const uint64_t *sum, struct edge_counts_func *ef)
{
	struct plan_view pv;
	uint32_t b, k;
	int err;

	for (k = 0; k < ef->counters; k++)
		ef->increments += sum[k];

	memset(&pv, 0, sizeof(pv));
	err = plan_parse(fn->plan, fn->plan_len, &pv, NULL, 0);
	if (!err && ef->counters && ef->counters != pv.hdr.nr_counters)
		err = -PT_EFORMAT;	/* records of another plan's size */
	if (!err)
		err = edge_counts_func(&f->g, &pv, sum, ef->edge, &ef->activations, &ef->chords);
	if (!err && pv.hdr.nr_counters > f->cfg.nedges)
		ef->enters += sum[f->cfg.nedges];	/* entries counted in the kernel */
	plan_view_free(&pv);
	if (err) {
		ef->status = err == -PT_ENOMEM ? err : (err == -PT_EINVAL ? err : -PT_EFORMAT);
		memset(ef->edge, 0, f->cfg.nedges * sizeof(*ef->edge));
		return;
	}
	for (b = 0; b < f->cfg.nblocks; b++) {
		const struct cfg_block *bl = &f->cfg.blocks[b];

		for (k = bl->first_succ; k < bl->first_succ + bl->nsucc; k++)
			ef->block[b] += ef->edge[k];
	}
	ef->status = ef->enters == ef->activations ? 0 : -PT_ETRUNC;
}

int edge_counts_build(const struct pr_model *m, const struct tracefile *tf,
		      const struct tr_records *rs, struct edge_counts *out)
{
	uint64_t **sum;
	size_t r;
	uint32_t i;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->nfuncs = m->nfuncs;
	out->f = calloc(m->nfuncs + 1, sizeof(*out->f));
	sum = calloc(m->nfuncs + 1, sizeof(*sum));
	if (!out->f || !sum) {
		free(sum);
		return -PT_ENOMEM;
	}
	for (i = 0; i < m->nfuncs; i++) {
		const struct pr_func *f = &m->funcs[i];
		struct edge_counts_func *ef = &out->f[i];

		ef->status = -PT_ENOENT;
		if (f->mode != PT_MODE_EDGES)
			continue;
		ef->status = 0;
		ef->edge = calloc(f->cfg.nedges + 1, sizeof(*ef->edge));
		ef->block = calloc(f->cfg.nblocks + 1, sizeof(*ef->block));
		sum[i] = calloc(f->cfg.nedges + 2, sizeof(**sum));
		if (!ef->edge || !ef->block || !sum[i]) {
			err = -PT_ENOMEM;
			goto out;
		}
	}
	for (r = 0; r < rs->n; r++) {
		const struct tr_rec *rec = &rs->recs[r];
		const struct pr_func *f;
		const uint64_t *body;
		struct edge_counts_func *ef;
		uint32_t k;

		if (rec->type != PT_REC_COUNTERS && rec->type != PT_REC_ENTER)
			continue;
		f = edges_func(m, rec->arg);
		if (!f) {
			out->stray += rec->type == PT_REC_COUNTERS;
			continue;
		}
		ef = &out->f[f->index];
		if (rec->type == PT_REC_ENTER) {
			ef->enters++;
			continue;
		}
		ef->records++;
		/* one counter per edge, and one for the activations since plans count them */
		if ((rec->nwords != f->cfg.nedges && rec->nwords != f->cfg.nedges + 1) ||
		    (ef->counters && rec->nwords != ef->counters)) {
			ef->status = -PT_EFORMAT;
			continue;
		}
		ef->counters = rec->nwords;
		body = tr_body(rs, rec);
		for (k = 0; k < rec->nwords; k++) {
			if (sum[f->index][k] + body[k] < sum[f->index][k])
				ef->status = -PT_EFORMAT;	/* overflowed: not a count */
			sum[f->index][k] += body[k];
		}
	}
	for (i = 0; i < m->nfuncs; i++) {
		const struct pr_func *f = &m->funcs[i];
		uint32_t t;

		if (out->f[i].status)
			continue;
		for (t = 0; t < tf->nfuncs; t++)
			if (tf->funcs[t].func_id == f->func_id)
				break;
		if (t == tf->nfuncs) {
			out->f[i].status = -PT_EFORMAT;
			continue;
		}
		count_one(&tf->funcs[t], f, sum[i], &out->f[i]);
		if (out->f[i].status == -PT_ENOMEM) {
			err = -PT_ENOMEM;
			goto out;
		}
	}
out:
	for (i = 0; i < m->nfuncs; i++)
		free(sum[i]);
	free(sum);
	return err;
}
