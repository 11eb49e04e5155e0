// SPDX-License-Identifier: GPL-2.0
/*
 * out_dot - --dot (and --svg through Graphviz's dot): each executed
 * function's CFG as a Graphviz cluster, its blocks and edges shaded by how
 * often they ran (the edge profile of the regenerated execution, or an
 * edges-mode function's counters), its hottest Ball-Larus path drawn in
 * red, and the blocks where its plan placed probes drawn with a double
 * border and what they do (enter, witness bits, path register, counter).
 * --func NAME draws that function only.
 *
 * The counts and the hottest path come from the --edges and --paths
 * writers, run alongside on the same steps with their text discarded.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/plan.h>
#include <pathtrace/tracefile.h>

#include "edge_counts.h"
#include "out.h"
#include "pathtrace_abi.h"

/* What a block's probe sites do (bits of a mask). */
enum {
	DOT_ENTER = 1, DOT_EMIT = 2, DOT_PATH = 4, DOT_COUNT = 8,
};

struct dot {
	struct out_writer prof, paths;
	struct out_writer *subs[2];
	FILE *null;
};

static int dot_open(struct out_writer *w)
{
	struct dot *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return -PT_ENOMEM;
	d->null = fopen("/dev/null", "w");
	if (!d->null) {
		free(d);
		return -PT_EIO;
	}
	d->prof = (struct out_writer){ .ops = &out_edges_ops, .fp = d->null, .m = w->m,
				       .counts = w->counts };
	d->paths = (struct out_writer){ .ops = &out_paths_ops, .fp = d->null, .m = w->m, .top = 1 };
	d->subs[0] = &d->prof;
	d->subs[1] = &d->paths;
	err = out_open_all(d->subs, 2);
	if (err) {
		fclose(d->null);
		free(d);
		return err;
	}
	w->priv = d;
	return 0;
}

static int dot_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	struct dot *d = w->priv;
	unsigned int i;
	int err;

	for (i = 0; i < 2; i++) {
		err = d->subs[i]->ops->step ? d->subs[i]->ops->step(d->subs[i], st, sp) : 0;
		if (err)
			return err;
	}
	return 0;
}

static int dot_stream_end(struct out_writer *w, const struct out_stream *st)
{
	struct dot *d = w->priv;
	unsigned int i;
	int err;

	for (i = 0; i < 2; i++) {
		err = d->subs[i]->ops->stream_end ? d->subs[i]->ops->stream_end(d->subs[i], st) : 0;
		if (err)
			return err;
	}
	return 0;
}

/* The block holding the instruction at addr, or UINT32_MAX. */
static uint32_t block_at(const struct pr_func *f, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < f->cfg.ninsns; i++)
		if (f->cfg.insns[i].addr == addr)
			return f->cfg.insns[i].block;
	return UINT32_MAX;
}

/* Per block, what its probe sites do (DOT_* mask), from the plan in trace.bin. */
static void probe_marks(const struct out_writer *w, const struct pr_func *f, uint8_t *mark)
{
	struct plan_view pv;
	uint32_t t, s, k;

	if (!w->tf)
		return;
	for (t = 0; t < w->tf->nfuncs && w->tf->funcs[t].func_id != f->func_id; t++)
		;
	if (t == w->tf->nfuncs)
		return;
	memset(&pv, 0, sizeof(pv));
	if (plan_parse(w->tf->funcs[t].plan, w->tf->funcs[t].plan_len, &pv, NULL, 0)) {
		plan_view_free(&pv);
		return;
	}
	for (s = 0; s < pv.hdr.nr_sites; s++) {
		const struct pt_site *site = &pv.sites[s];
		uint64_t addr = (site->region == PT_REGION_COLD ? pv.hdr.cold_addr : pv.hdr.addr) +
				site->offset;
		uint32_t b = block_at(f, addr);

		if (b >= f->cfg.nblocks)
			continue;
		for (k = site->first_action; k < site->first_action + site->nr_actions; k++) {
			switch (pv.actions[k].op) {
			case PT_OP_ENTER:
				mark[b] |= DOT_ENTER;
				break;
			case PT_OP_EMIT:
				mark[b] |= DOT_EMIT;
				break;
			case PT_OP_COUNT:
				mark[b] |= DOT_COUNT;
				break;
			default:
				mark[b] |= DOT_PATH;
				break;
			}
		}
	}
	plan_view_free(&pv);
}

/* Share of max on a log scale, 0..1 (0 for a count of 0). */
static double shade(uint64_t n, uint64_t max)
{
	return n && max ? log1p((double)n) / log1p((double)max) : 0.0;
}

static const char *mark_text(uint8_t m, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", m & DOT_ENTER ? " enter" : "", m & DOT_EMIT ? " witness" : "",
		 m & DOT_PATH ? " path" : "", m & DOT_COUNT ? " count" : "");
	return buf;
}

/* The counts of function i: regenerated, or an edges-mode function's counters. */
static void counts_of(const struct out_writer *w, const struct dot *d, uint32_t i,
		      const uint64_t **edge, const uint64_t **block, uint64_t *activations)
{
	const struct pr_func *f = &w->m->funcs[i];
	uint32_t e;

	*edge = out_profile_edges(&d->prof, i);
	*block = out_profile_blocks(&d->prof, i);
	if (f->mode == PT_MODE_EDGES && w->counts && i < w->counts->nfuncs &&
	    !w->counts->f[i].status) {
		*edge = w->counts->f[i].edge;
		*block = w->counts->f[i].block;
	}
	*activations = 0;
	for (e = 0; *edge && e < f->cfg.nedges; e++)
		if (f->cfg.edges[e].dst >= f->cfg.nblocks)
			*activations += (*edge)[e];
}

static void draw_function(struct out_writer *w, const struct dot *d, uint32_t i)
{
	const struct pr_func *f = &w->m->funcs[i];
	const uint64_t *edge, *block;
	uint64_t acts, hot_count, bmax = 0, emax = 0;
	uint32_t *hot = malloc(((size_t)f->cfg.nblocks + 2) * sizeof(*hot));
	uint8_t *on_hot = calloc((size_t)f->cfg.nblocks + 1, 1);
	uint8_t *mark = calloc((size_t)f->cfg.nblocks + 1, 1);
	uint32_t b, e, k;
	int nhot = 0;
	char name[192], marks[64];

	counts_of(w, d, i, &edge, &block, &acts);
	if (!hot || !on_hot || !mark || !edge || !block)
		goto out;
	nhot = out_paths_hottest(&d->paths, i, hot, f->cfg.nblocks + 1, &hot_count);
	for (k = 0; nhot > 0 && k < (uint32_t)nhot; k++)
		if (hot[k] < f->cfg.nblocks)
			on_hot[hot[k]] = 1;
	probe_marks(w, f, mark);
	for (b = 0; b < f->cfg.nblocks; b++)
		bmax = block[b] > bmax ? block[b] : bmax;
	for (e = 0; e < f->cfg.nedges; e++)
		emax = edge[e] > emax ? edge[e] : emax;
	fprintf(w->fp, "\tsubgraph cluster_%u {\n\t\tlabel=\"%s: %" PRIu64 " returns", i, f->name,
		acts);
	if (nhot > 0)
		fprintf(w->fp, ", hottest path %" PRIu64 "x", hot_count);
	fprintf(w->fp, "\";\n");
	for (b = 0; b < f->cfg.nblocks; b++) {
		double s = shade(block[b], bmax);

		fprintf(w->fp, "\t\tf%u_b%u [label=\"%s\\n%" PRIu64 "%s%s\"", i, b,
			pr_block_name(f, b, name, sizeof(name)), block[b], mark[b] ? "\\nprobe:" : "",
			mark[b] ? mark_text(mark[b], marks, sizeof(marks)) : "");
		if (block[b])
			fprintf(w->fp, ", fillcolor=\"0.000 %.3f 1.000\"", 0.85 * s);
		else
			fprintf(w->fp, ", fillcolor=white, fontcolor=gray50, style=\"rounded,dashed\"");
		if (mark[b])
			fprintf(w->fp, ", peripheries=2");
		if (on_hot[b])
			fprintf(w->fp, ", color=red, penwidth=2");
		fprintf(w->fp, "];\n");
	}
	fprintf(w->fp, "\t\tf%u_exit [label=\"EXIT\", shape=oval, fillcolor=white];\n", i);
	for (e = 0; e < f->cfg.nedges; e++) {
		const struct cfg_edge *ce = &f->cfg.edges[e];
		int hot_edge = 0;

		/* on the hottest path: its blocks follow each other along this edge */
		for (k = 0; nhot > 1 && k + 1 < (uint32_t)nhot && !hot_edge; k++)
			hot_edge = hot[k] == ce->src && hot[k + 1] == ce->dst;
		fprintf(w->fp, "\t\tf%u_b%u -> ", i, ce->src);
		if (ce->dst >= f->cfg.nblocks)
			fprintf(w->fp, "f%u_exit", i);
		else
			fprintf(w->fp, "f%u_b%u", i, ce->dst);
		fprintf(w->fp, " [label=\"%" PRIu64 "\", tooltip=\"%s\"", edge[e],
			cfg_edge_kind_name(ce->kind));
		if (!edge[e])
			fprintf(w->fp, ", style=dashed, color=gray70");
		else
			fprintf(w->fp, ", penwidth=%.2f", 1.0 + 3.0 * shade(edge[e], emax) + hot_edge);
		if (hot_edge)
			fprintf(w->fp, ", color=red");
		fprintf(w->fp, "];\n");
	}
	fprintf(w->fp, "\t}\n");
out:
	free(hot);
	free(on_hot);
	free(mark);
}

static int dot_close(struct out_writer *w)
{
	struct dot *d = w->priv;
	uint32_t i, drawn = 0;
	int err;

	if (!d)
		return 0;
	fprintf(w->fp, "digraph pathtrace {\n"
		"\tgraph [fontname=\"Helvetica\", labelloc=t, label=\"%s: blocks and edges by "
		"executions (darker: more); red: each function's hottest path; double border: "
		"probe sites\"];\n"
		"\tnode [shape=box, style=\"rounded,filled\", fontname=\"Courier\", fontsize=10];\n"
		"\tedge [fontname=\"Helvetica\", fontsize=9];\n",
		w->trace_name ? w->trace_name : "trace");
	for (i = 0; i < w->m->nfuncs; i++) {
		const uint64_t *edge, *block;
		uint64_t acts;
		uint32_t b, ran = 0;

		if (w->func && strcmp(w->m->funcs[i].name, w->func))
			continue;
		counts_of(w, d, i, &edge, &block, &acts);
		for (b = 0; block && b < w->m->funcs[i].cfg.nblocks; b++)
			ran |= block[b] != 0;
		if (!ran && !w->func)
			continue;	/* every executed function, or the one asked for */
		draw_function(w, d, i);
		drawn++;
	}
	fprintf(w->fp, "}\n");
	err = out_close_all(d->subs, 2);
	fclose(d->null);
	free(d);
	w->priv = NULL;
	if (!err && !drawn)
		fprintf(stderr, "pathregen: --dot: no function %s\n",
			w->func ? "by that name ran" : "ran");
	return err ?: (ferror(w->fp) ? -PT_EIO : 0);
}

const struct out_writer_ops out_dot_ops = {
	.name = "dot",
	.open = dot_open,
	.step = dot_step,
	.stream_end = dot_stream_end,
	.close = dot_close,
};
