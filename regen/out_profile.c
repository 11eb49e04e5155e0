// SPDX-License-Identifier: GPL-2.0
/*
 * out_profile - edge (--edges) and block (--blocks) profiles: how often
 * each CFG edge was taken and each block executed, over every stream,
 * per function, from the regenerated execution (exact counts, not
 * samples). Edges into EXIT are counted when an activation returns.
 * Edges-mode functions have no stream to regenerate: their counts come
 * from the COUNTERS records (edge_counts.h, w->counts), or the function
 * says why it has none.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "edge_counts.h"
#include "out.h"
#include "pathtrace_abi.h"

struct profile {
	uint64_t **edge;	/* per function: cfg.nedges counts */
	uint64_t **block;	/* per function: cfg.nblocks counts */
	uint64_t *entries;	/* per function: activations entered */
	uint64_t ambiguous;	/* edges chosen among parallel edges */
};

static int profile_open(struct out_writer *w)
{
	const struct pr_model *m = w->m;
	struct profile *p = calloc(1, sizeof(*p));
	uint32_t i, n = m->nfuncs ? m->nfuncs : 1;

	if (!p)
		return -PT_ENOMEM;
	w->priv = p;
	p->edge = calloc(n, sizeof(*p->edge));
	p->block = calloc(n, sizeof(*p->block));
	p->entries = calloc(n, sizeof(*p->entries));
	if (!p->edge || !p->block || !p->entries)
		return -PT_ENOMEM;
	for (i = 0; i < m->nfuncs; i++) {
		p->edge[i] = calloc(m->funcs[i].cfg.nedges + 1, sizeof(uint64_t));
		p->block[i] = calloc(m->funcs[i].cfg.nblocks + 1, sizeof(uint64_t));
		if (!p->edge[i] || !p->block[i])
			return -PT_ENOMEM;
	}
	return 0;
}

static int profile_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	struct profile *p = w->priv;
	uint32_t fi;

	(void)st;
	if (!sp->f)
		return 0;
	fi = sp->f->index;
	switch (sp->ev->type) {
	case REGEN_EV_ENTER:
		p->entries[fi]++;
		break;
	case REGEN_EV_BLOCK:
		if (sp->ev->block < sp->f->cfg.nblocks)
			p->block[fi][sp->ev->block]++;
		/* fall through */
	case REGEN_EV_EXIT:
		if (sp->edge != UINT32_MAX)
			p->edge[fi][sp->edge]++;
		p->ambiguous += sp->edge_ambiguous != 0;
		break;
	default:
		break;
	}
	return 0;
}

/*
 * For an edges-mode function: its counted edges and blocks in place of the
 * regenerated ones (none), and the header's note. Returns 0 to print the
 * counts, 1 when there are none to print (the note says why).
 */
static int counted(const struct out_writer *w, const struct profile *p, uint32_t i,
		   char *note, size_t n)
{
	const struct edge_counts_func *ef;
	const struct pr_func *f = &w->m->funcs[i];

	note[0] = 0;
	if (f->mode != PT_MODE_EDGES)
		return 0;
	if (!w->counts || i >= w->counts->nfuncs) {
		snprintf(note, n, " (edges mode: counters not read)");
		return 1;
	}
	ef = &w->counts->f[i];
	switch (ef->status) {
	case 0:
		memcpy(p->edge[i], ef->edge, f->cfg.nedges * sizeof(uint64_t));
		memcpy(p->block[i], ef->block, f->cfg.nblocks * sizeof(uint64_t));
		p->entries[i] = ef->activations;
		snprintf(note, n, " (edges mode: %u chord counters in %" PRIu64
			 " COUNTERS records, %" PRIu64 " increments, the other edges by the flow law)",
			 ef->chords, ef->records, ef->increments);
		return 0;
	case -PT_ETRUNC:
		snprintf(note, n, " (edges mode: not counted: %" PRIu64 " entries counted but %"
			 PRIu64 " activations by the flow law: activations were open when "
			 "recording started or stopped)", ef->enters, ef->activations);
		return 1;
	case -PT_EINVAL:
		snprintf(note, n, " (edges mode: not counted: the counters contradict the flow law)");
		return 1;
	default:
		snprintf(note, n, " (edges mode: not counted: malformed plan or COUNTERS record)");
		return 1;
	}
}

/* Prints function i's heading; returns non-zero when it has no counts to list. */
static int print_heading(struct out_writer *w, const struct profile *p, uint32_t i)
{
	const struct pr_func *f = &w->m->funcs[i];
	char note[256];
	int none = counted(w, p, i, note, sizeof(note));

	fprintf(w->fp, "%s (func %u): %" PRIu64 " activations%s\n", f->name, f->func_id,
		p->entries[i], note);
	return none;
}

static void print_blocks(struct out_writer *w, const struct profile *p)
{
	const struct pr_model *m = w->m;
	char buf[192];
	uint32_t i, b;

	fprintf(w->fp, "# block profile: executions per block, per function\n");
	for (i = 0; i < m->nfuncs; i++) {
		const struct pr_func *f = &m->funcs[i];
		int none = print_heading(w, p, i);

		for (b = 0; !none && b < f->cfg.nblocks; b++)
			fprintf(w->fp, "%12" PRIu64 "  %s\n", p->block[i][b],
				pr_block_name(f, b, buf, sizeof(buf)));
	}
}

static void print_edges(struct out_writer *w, const struct profile *p)
{
	const struct pr_model *m = w->m;
	char src[192], dst[192];
	uint32_t i, e;

	fprintf(w->fp, "# edge profile: traversals per CFG edge, per function\n");
	for (i = 0; i < m->nfuncs; i++) {
		const struct pr_func *f = &m->funcs[i];
		int none = print_heading(w, p, i);

		for (e = 0; !none && e < f->cfg.nedges; e++) {
			const struct cfg_edge *ce = &f->cfg.edges[e];
			uint32_t k = ce->kind;

			pr_block_name(f, ce->src, src, sizeof(src));
			if (ce->dst >= f->cfg.nblocks)
				snprintf(dst, sizeof(dst), "EXIT");
			else
				pr_block_name(f, ce->dst, dst, sizeof(dst));
			fprintf(w->fp, "%12" PRIu64 "  %s -> %s (%s)\n", p->edge[i][e], src, dst,
				cfg_edge_kind_name(k));
		}
	}
	if (p->ambiguous)
		fprintf(w->fp, "# %" PRIu64 " traversals were between blocks joined by parallel edges: counted on the first\n",
			p->ambiguous);
}

static void profile_free(const struct pr_model *m, struct profile *p)
{
	uint32_t i;

	if (!p)
		return;
	for (i = 0; i < m->nfuncs; i++) {
		if (p->edge)
			free(p->edge[i]);
		if (p->block)
			free(p->block[i]);
	}
	free(p->edge);
	free(p->block);
	free(p->entries);
	free(p);
}

static int edges_close(struct out_writer *w)
{
	if (w->priv && ((struct profile *)w->priv)->entries)
		print_edges(w, w->priv);
	profile_free(w->m, w->priv);
	w->priv = NULL;
	return ferror(w->fp) ? -PT_EIO : 0;
}

static int blocks_close(struct out_writer *w)
{
	if (w->priv && ((struct profile *)w->priv)->entries)
		print_blocks(w, w->priv);
	profile_free(w->m, w->priv);
	w->priv = NULL;
	return ferror(w->fp) ? -PT_EIO : 0;
}

/* For tests and other writers: the counts while the writer is open. */
const uint64_t *out_profile_edges(const struct out_writer *w, uint32_t func_index)
{
	const struct profile *p = w->priv;

	return p && func_index < w->m->nfuncs ? p->edge[func_index] : NULL;
}

const uint64_t *out_profile_blocks(const struct out_writer *w, uint32_t func_index)
{
	const struct profile *p = w->priv;

	return p && func_index < w->m->nfuncs ? p->block[func_index] : NULL;
}

int out_counts_open(struct out_counts *c, const struct out_writer *w)
{
	int err;

	c->null = fopen("/dev/null", "w");
	if (!c->null)
		return -PT_EIO;
	c->prof = (struct out_writer){ .ops = &out_edges_ops, .fp = c->null, .m = w->m,
				       .counts = w->counts };
	err = c->prof.ops->open(&c->prof);
	if (err) {
		fclose(c->null);
		c->null = NULL;
	}
	return err;
}

int out_counts_step(struct out_counts *c, const struct out_stream *st, const struct out_step *sp)
{
	return c->prof.ops->step(&c->prof, st, sp);
}

int out_counts_stream_end(struct out_counts *c, const struct out_stream *st)
{
	return c->prof.ops->stream_end ? c->prof.ops->stream_end(&c->prof, st) : 0;
}

int out_counts_close(struct out_counts *c)
{
	int err = c->prof.ops->close(&c->prof);

	fclose(c->null);
	c->null = NULL;
	return err;
}

/* The counts are sums over the streams: a part's are added. */
static int profile_merge(struct out_writer *w, struct out_writer *part)
{
	struct profile *p = w->priv, *q = part->priv;
	uint32_t i, k;

	for (i = 0; i < w->m->nfuncs; i++) {
		const struct cfg *c = &w->m->funcs[i].cfg;

		p->entries[i] += q->entries[i];
		for (k = 0; k < c->nedges; k++)
			p->edge[i][k] += q->edge[i][k];
		for (k = 0; k < c->nblocks; k++)
			p->block[i][k] += q->block[i][k];
	}
	p->ambiguous += q->ambiguous;
	profile_free(part->m, q);
	part->priv = NULL;
	return 0;
}

const struct out_writer_ops out_edges_ops = {
	.name = "edges",
	.open = profile_open,
	.step = profile_step,
	.close = edges_close,
	.merge = profile_merge,
};

const struct out_writer_ops out_blocks_ops = {
	.name = "blocks",
	.open = profile_open,
	.step = profile_step,
	.close = blocks_close,
	.merge = profile_merge,
};
