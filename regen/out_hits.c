// SPDX-License-Identifier: GPL-2.0
/*
 * out_hits - --hits: where the probes fired, and what placement alone could
 * reach. A probe fires whenever its instruction runs, whatever its actions
 * do, so each plan site's hits are the regenerated count of the block that
 * holds it (edges-mode functions: their counted profile). Beside them, per
 * function, chord_bound.h: the hits of witnesses on the chords of the
 * spanning tree best for these very counts, with the plan's ENTER probes
 * added. A plan above the bound pays for blocking at calls and for sites
 * chosen by cost; a bound above a target says no spanning tree reaches it
 * with these probes. --inline-sites counts sites as an inline copy runs
 * them instead (docs/inline.md, "Placement for copies": a site whose
 * actions all apply on one edge of its Jcc runs with that edge only, no
 * site is a probe), the bound with PLAN_COSTS_EDGES, and replans for copies.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/chord_bound.h>
#include <pathtrace/error.h>
#include <pathtrace/kprobe_boost.h>
#include <pathtrace/plan.h>
#include <pathtrace/probesite.h>
#include <pathtrace/tracefile.h>

#include "edge_counts.h"
#include "insn_mem.h"
#include "out.h"
#include "pathtrace_abi.h"

/*
 * Why a site is not jump-optimized: probesite_window_why's reasons, then a
 * branch site (an int3 at the Jcc, to see its direction) and a site whose
 * window holds another probe.
 */
#define WHY_BRANCH PROBESITE_WHY_NR
#define WHY_SPACING (PROBESITE_WHY_NR + 1)
#define WHY_NR (PROBESITE_WHY_NR + 2)

/* One function's figures. */
struct hits_func {
	uint32_t index;		/* in the model */
	uint32_t sites;
	uint32_t opt_sites;	/* of them jump-optimizable (what status counts as optimized) */
	uint64_t blocks;	/* executed blocks */
	uint64_t hits, enter, branch, optimizable;
	uint32_t why_sites[WHY_NR];	/* the sites not jump-optimizable, by why */
	uint64_t why_hits[WHY_NR];
	struct chord_bound cb;
	int bound_ok;
};

static int hits_open(struct out_writer *w)
{
	struct out_counts *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return -PT_ENOMEM;
	err = out_counts_open(h, w);
	if (err) {
		free(h);
		return err;
	}
	w->priv = h;
	return 0;
}

static int hits_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	return out_counts_step(w->priv, st, sp);
}

static int hits_stream_end(struct out_writer *w, const struct out_stream *st)
{
	return out_counts_stream_end(w->priv, st);
}

/*
 * Site at insn i of c hit n times: counted, and when it is no
 * jump-optimized probe, why (i UINT32_MAX, not in the CFG: as at its end).
 */
static void add_site(struct hits_func *hf, const struct cfg *c, uint32_t i, uint64_t n, int enter,
		     int branch, int optimizable)
{
	enum probesite_why why = PROBESITE_WHY_SHORT;
	uint32_t k;

	hf->sites++;
	hf->opt_sites += optimizable != 0;
	hf->hits += n;
	if (enter)
		hf->enter += n;
	if (branch)
		hf->branch += n;
	if (optimizable) {
		hf->optimizable += n;
		return;
	}
	if (branch)
		k = WHY_BRANCH;
	else if (i < c->ninsns && probesite_window_why(c, i, &why))
		k = WHY_SPACING;
	else
		k = why;
	hf->why_sites[k]++;
	hf->why_hits[k] += n;
}

/*
 * How often a site in block b of c runs: the block's count, or with
 * --inline-sites for a site whose actions all apply on one edge of its
 * Jcc (when, plan_site_edge) that edge's.
 */
static uint64_t site_runs(const struct out_writer *w, const struct cfg *c, const uint64_t *edge,
			  const uint64_t *block, uint32_t b, uint8_t when)
{
	const struct cfg_block *bl;
	uint32_t k;

	if (b >= c->nblocks)
		return 0;
	bl = &c->blocks[b];
	if (!w->hits_inline_sites || when == PT_WHEN_ALWAYS)
		return block[b];
	for (k = bl->first_succ; k < bl->first_succ + bl->nsucc; k++)
		if (c->edges[k].kind == (when == PT_WHEN_TAKEN ? CFG_E_TAKEN : CFG_E_FALL))
			return edge[k];
	return block[b];
}

/* The insn of c at addr, or UINT32_MAX. */
static uint32_t insn_at(const struct cfg *c, uint64_t addr)
{
	uint32_t b = cfg_block_at(c, addr), i;

	for (i = 0; b < c->nblocks && i < c->blocks[b].ninsn; i++)
		if (c->insns[c->blocks[b].first_insn + i].addr == addr)
			return c->blocks[b].first_insn + i;
	return UINT32_MAX;
}

/*
 * --replan: the sites of a plan of f's own mode (a paths plan for a paths
 * function, else a trace plan of its encoding) made now from f's recorded
 * CFG, by the heuristic or by these counts, every call quiet with
 * hits_calls_quiet, a witness plan's calls framed with hits_calls_framed,
 * and their hits on this execution. Returns 0;
 * -PT_ENOENT when plan_build refuses (said on stderr); -PT_ENOMEM.
 */
static int replan_hits(const struct out_writer *w, const struct pr_func *f,
		       const uint64_t *edge, const uint64_t *block, struct hits_func *hf)
{
	int paths = f->mode == PT_MODE_PATHS;
	struct plan_opts po = { .mode = paths ? PT_MODE_PATHS : PT_MODE_TRACE,
				.func_id = f->func_id,
				.weight = w->hits_replan == OUT_REPLAN_PROFILE ? edge : NULL,
				.costs = w->hits_inline_sites ? PLAN_COSTS_EDGES : PLAN_COSTS_KPROBES };
	struct cfg c = f->cfg;
	struct cfg_block *bl = malloc(((size_t)f->cfg.nblocks + 1) * sizeof(*bl));
	struct cfg_insn *in = malloc(((size_t)f->cfg.ninsns + 1) * sizeof(*in));
	struct plan pl;
	uint32_t b, s, i;
	int err;

	if (!bl || !in) {
		free(bl);
		free(in);
		return -PT_ENOMEM;
	}
	memcpy(bl, f->cfg.blocks, (size_t)f->cfg.nblocks * sizeof(*bl));
	memcpy(in, f->cfg.insns, (size_t)f->cfg.ninsns * sizeof(*in));
	/* today's CFG recovery: what the kernel will not copy (kprobe_boost.h) */
	for (i = 0; i < f->cfg.ninsns; i++) {
		const uint8_t *bytes = insn_bytes(f, &in[i]);

		if (!bytes || (in[i].flags & CFG_IF_STATIC_CALL))
			continue;
		in[i].flags &= ~CFG_IF_OPTPROBE_UNSAFE;
		if (kprobe_window_unsafe(&in[i], bytes, in[i].len))
			in[i].flags |= CFG_IF_OPTPROBE_UNSAFE;
	}
	c.insns = in;
	for (b = 0; w->hits_calls_quiet && b < f->cfg.nblocks; b++)
		if (bl[b].flags & CFG_BF_CALL)
			bl[b].flags = (bl[b].flags & ~CFG_BF_CALL) | CFG_BF_QUIET_CALL;
	c.blocks = bl;
	if (!paths) {
		po.trace.encoding = f->encoding == PT_ENC_BITS ? PT_ENC_BITS : PT_ENC_WITNESS;
		/* the calls as the trace's plans may take them */
		po.trace.enter_witnessed = f->call_kind;
	}
	if (w->hits_calls_framed && !paths && po.trace.encoding == PT_ENC_WITNESS)
		po.flags |= PT_PLAN_FRAMED;
	memset(&pl, 0, sizeof(pl));
	err = plan_build(&c, &po, &pl);
	if (err && err != -PT_ENOMEM) {
		fprintf(stderr, "pathregen: --replan: %s: %s\n", f->name, pl.reason);
		err = -PT_ENOENT;
	}
	for (s = 0; !err && s < pl.hdr.nr_sites; s++) {
		i = pl.site_insn[s];
		add_site(hf, &c, i, site_runs(w, &c, edge, block, f->cfg.insns[i].block,
					      plan_site_edge(&pl.sites[s], pl.actions)),
			 i == 0, !w->hits_inline_sites && pl.sites[s].cond != PT_COND_NONE,
			 w->hits_inline_sites || (pl.sites[s].flags & PT_SITE_OPTIMIZABLE));
	}
	plan_free(&pl);
	free(bl);
	free(in);
	return err;
}

/*
 * Function i's figures into *hf. Returns 0; -PT_ENOENT when it has no plan
 * or no counts; -PT_ENOMEM.
 */
static int func_hits(const struct out_writer *w, const struct out_counts *h, uint32_t i,
		     struct hits_func *hf)
{
	const struct pr_func *f = &w->m->funcs[i];
	const struct tf_function *fn = w->tf ? tracefile_func(w->tf, f->func_id) : NULL;
	const uint64_t *edge = out_profile_edges(&h->prof, i), *block = out_profile_blocks(&h->prof, i);
	struct plan_view pv;
	uint32_t s, k, b;
	int err;

	memset(hf, 0, sizeof(*hf));
	hf->index = i;
	if (f->mode == PT_MODE_EDGES && w->counts && i < w->counts->nfuncs &&
	    !w->counts->f[i].status) {
		edge = w->counts->f[i].edge;
		block = w->counts->f[i].block;
	}
	if (!fn || !edge || !block)
		return -PT_ENOENT;
	for (b = 0; b < f->cfg.nblocks; b++)
		hf->blocks += block[b];
	if (w->hits_replan) {
		err = replan_hits(w, f, edge, block, hf);
		if (err)
			return err;
	} else {
		memset(&pv, 0, sizeof(pv));
		err = plan_parse(fn->plan, fn->plan_len, &pv, NULL, 0);
		if (err) {
			plan_view_free(&pv);
			return err == -PT_ENOMEM ? err : -PT_ENOENT;
		}
		for (s = 0; s < pv.hdr.nr_sites; s++) {
			const struct pt_site *site = &pv.sites[s];
			uint64_t addr = (site->region == PT_REGION_COLD ? pv.hdr.cold_addr :
					 pv.hdr.addr) + site->offset;
			int enter = 0;

			for (k = site->first_action; k < site->first_action + site->nr_actions; k++)
				enter |= k < pv.hdr.nr_actions && pv.actions[k].op == PT_OP_ENTER;
			b = cfg_block_at(&f->cfg, addr);
			add_site(hf, &f->cfg, insn_at(&f->cfg, addr),
				 site_runs(w, &f->cfg, edge, block, b, plan_site_edge(site, pv.actions)),
				 enter, !w->hits_inline_sites && site->cond != PT_COND_NONE,
				 w->hits_inline_sites || (site->flags & PT_SITE_OPTIMIZABLE));
		}
		plan_view_free(&pv);
	}
	err = chord_bound(&f->cfg, &f->g, edge, block,
			  w->hits_inline_sites ? PLAN_COSTS_EDGES : PLAN_COSTS_KPROBES, &hf->cb);
	if (err == -PT_ENOMEM)
		return err;
	hf->bound_ok = !err;
	return 0;
}

static double per(uint64_t n, uint64_t d)
{
	return d ? (double)n / (double)d : 0.0;
}

static int by_hits(const void *a, const void *b)
{
	const struct hits_func *x = a, *y = b;

	if (x->hits != y->hits)
		return x->hits < y->hits ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int hits_close(struct out_writer *w)
{
	struct out_counts *h = w->priv;
	struct hits_func *hf = calloc(w->m->nfuncs + 1, sizeof(*hf)), t = { 0 };
	uint64_t bound = 0, bound_branch = 0, bound_opt = 0;
	uint32_t i, k, n = 0, shown;
	int err = hf ? 0 : -PT_ENOMEM, cerr;

	for (i = 0; !err && i < w->m->nfuncs; i++) {
		err = func_hits(w, h, i, &hf[n]);
		if (err == -PT_ENOENT) {
			err = 0;
			continue;
		}
		if (err)
			break;
		t.blocks += hf[n].blocks;
		t.hits += hf[n].hits;
		t.enter += hf[n].enter;
		t.branch += hf[n].branch;
		t.optimizable += hf[n].optimizable;
		t.sites += hf[n].sites;
		t.opt_sites += hf[n].opt_sites;
		for (k = 0; k < WHY_NR; k++) {
			t.why_sites[k] += hf[n].why_sites[k];
			t.why_hits[k] += hf[n].why_hits[k];
		}
		if (hf[n].bound_ok) {
			bound += hf[n].enter + hf[n].cb.hits;
			bound_branch += hf[n].cb.branch_hits;
			bound_opt += hf[n].cb.optimizable_hits;
		} else {
			bound += hf[n].hits;	/* no bound: the plan's own */
		}
		n++;
	}
	if (!err) {
		qsort(hf, n, sizeof(*hf), by_hits);
		if (w->hits_inline_sites)
			fprintf(w->fp, "site hits as inline copies run them: each site as often as "
				"its block runs, or the one edge its actions apply on; bound: the "
				"plan's ENTER sites plus the chords of the spanning tree best for "
				"these counts, each run with its edge\n");
		else
			fprintf(w->fp, "probe hits: each plan site fires as often as its block runs; "
				"bound: the plan's ENTER probes plus the chords of the spanning tree "
				"best for these counts\n");
		fprintf(w->fp, "%-32s %6s %12s %10s %7s %7s %7s %7s\n", "function", "sites",
			"blocks", "hits", "/block", "int3-jcc", "opt%", "bound");
		shown = w->top && w->top < n ? w->top : n;
		for (i = 0; i < shown; i++) {
			const struct pr_func *f = &w->m->funcs[hf[i].index];

			fprintf(w->fp, "%-32.32s %6u %12" PRIu64 " %10" PRIu64 " %7.3f %7.1f%% %6.1f%% ",
				f->name, hf[i].sites, hf[i].blocks, hf[i].hits,
				per(hf[i].hits, hf[i].blocks), 100 * per(hf[i].branch, hf[i].hits),
				100 * per(hf[i].optimizable, hf[i].hits));
			if (hf[i].bound_ok)
				fprintf(w->fp, "%7.3f\n",
					per(hf[i].enter + hf[i].cb.hits, hf[i].blocks));
			else
				fprintf(w->fp, "%7s\n", "-");
		}
		if (shown < n)
			fprintf(w->fp, "(%u more functions; --top N)\n", n - shown);
		fprintf(w->fp, "%-48s %6s %12s\n", "sites not jump-optimizable, by why", "sites",
			"hits");
		for (k = 1; k < WHY_NR; k++) {
			if (!t.why_sites[k])
				continue;
			fprintf(w->fp, "  %-46s %6u %12" PRIu64 "\n",
				k == WHY_BRANCH ? "a branch site (an int3 at the Jcc)" :
				k == WHY_SPACING ? "another probe in its window" :
				probesite_why_name(k), t.why_sites[k], t.why_hits[k]);
		}
		fprintf(w->fp, "functions=%u sites=%u blocks=%" PRIu64 " hits=%" PRIu64
			" hits_per_block=%.3f enter_per_block=%.3f int3_jcc_pct=%.1f"
			" optimizable_pct=%.1f bound_per_block=%.3f bound_int3_jcc_pct=%.1f"
			" bound_optimizable_pct=%.1f sites_optimizable=%u sites_optimizable_pct=%.1f\n",
			n, t.sites, t.blocks, t.hits, per(t.hits, t.blocks), per(t.enter, t.blocks),
			100 * per(t.branch, t.hits), 100 * per(t.optimizable, t.hits),
			per(bound, t.blocks), 100 * per(bound_branch, bound),
			100 * per(bound_opt, bound), t.opt_sites, 100 * per(t.opt_sites, t.sites));
	}
	free(hf);
	cerr = out_counts_close(h);
	err = err ? err : cerr;
	free(h);
	w->priv = NULL;
	return err ? err : (ferror(w->fp) ? -PT_EIO : 0);
}

const struct out_writer_ops out_hits_ops = {
	.name = "hits",
	.open = hits_open,
	.step = hits_step,
	.stream_end = hits_stream_end,
	.close = hits_close,
};
