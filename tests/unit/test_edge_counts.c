// SPDX-License-Identifier: GPL-2.0
/*
 * Edges mode: random programs of the simulator (tests/oracle/sim.h)
 * lowered to real x86 code through cfg_build, planned in PT_MODE_EDGES by
 * plan_build, random executions (calls included) by its executor (the
 * truth: edge counts and block events), and the COUNTERS records the module would write for them:
 * each chord's count split at random over two CPUs and several records
 * (each record holds the counts since the previous one of its CPU). The
 * counts edge_counts_build recovers from the records and the plan blobs,
 * and the --edges / --blocks writers print, must equal the truth for every
 * edge and block; no ENTER record (the plan counts activations), or, for
 * plans with an ENTER at the entry, an ENTER record per activation. Then what
 * must be refused: an entry count that differs from the activations, a
 * malformed record, a count on a tree edge.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "edge_counts.h"
#include "out.h"
#include "pathtrace_abi.h"
#include "sim.h"
#include "fake_recs.h"
#include "unit.h"

#define MAX_E 4096

struct fake {
	struct tracefile tf;
	struct tr_records rs;
	uint64_t **truth_edge;	/* per function index (traced ones) */
	uint64_t **truth_block;
	uint64_t *activations;
};

/*
 * An edges plan whose ENTER records count the activations: ENTER instead
 * of the COUNT first at the entry, nr_counters = nedges (in place).
 */
static void make_entered_plan(const struct sim_func *f)
{
	struct pt_plan *h = f->plan_blob;
	struct pt_action *a = (struct pt_action *)((uint8_t *)f->plan_blob + h->size +
						   (size_t)h->nr_sites * h->site_size);

	CU_ASSERT_FATAL(a->op == PT_OP_COUNT && a->arg == f->cfg.nedges);
	a->op = PT_OP_ENTER;
	a->arg = 0;
	h->nr_counters = f->cfg.nedges;
}

/*
 * entered: an ENTER record per activation and COUNTERS of nedges words
 * (the plan blob then has nr_counters = nedges and an ENTER:
 * make_entered_plan).
 */
static void make(struct fake *fk, const struct sim_program *p, uint64_t *rng, int entered)
{
	struct sim_truth t;
	uint32_t i, e, k;

	memset(fk, 0, sizeof(*fk));
	fk->tf.funcs = calloc(p->nfuncs, sizeof(*fk->tf.funcs));
	fk->truth_edge = calloc(p->nfuncs, sizeof(*fk->truth_edge));
	fk->truth_block = calloc(p->nfuncs, sizeof(*fk->truth_block));
	fk->activations = calloc(p->nfuncs, sizeof(*fk->activations));
	CU_ASSERT_FATAL(fk->tf.funcs && fk->truth_edge && fk->truth_block && fk->activations);
	/* executions from random roots, traced or not: nested calls count too */
	CU_ASSERT_FATAL(sim_truth_init(&t, p) == 0);
	for (k = sim_below(rng, 60); k > 0; k--) {
		struct sim_run_opts o = { .root = sim_below(rng, p->nfuncs), .max_depth = 6,
					  .max_steps = 40 };

		CU_ASSERT_FATAL(sim_exec(p, &o, rng, NULL, &t) == 0);
	}
	for (i = 0; i < p->nfuncs; i++) {
		const struct sim_func *f = &p->funcs[i];
		struct tf_function *fn;
		uint64_t left[MAX_E], enter[1] = { 0xffffffff81000000ull };
		uint32_t a, r, nrec;

		if (!f->traced)
			continue;	/* not in the trace */
		CU_ASSERT_FATAL(f->cfg.nedges + 1 < MAX_E);
		fn = &fk->tf.funcs[fk->tf.nfuncs++];
		fn->func_id = f->func_id;
		fn->addr = f->addr;
		fn->len = f->len;
		fn->name = f->name;
		fn->name_len = (uint32_t)strlen(f->name);
		fn->code = f->code;
		fn->cfg = f->cfg_blob;
		fn->cfg_len = f->cfg_len;
		fn->plan = f->plan_blob;
		fn->plan_len = (uint32_t)f->plan_len;
		fk->truth_edge[i] = calloc(f->cfg.nedges + 1, sizeof(uint64_t));
		fk->truth_block[i] = calloc(f->cfg.nblocks + 1, sizeof(uint64_t));
		CU_ASSERT_FATAL(fk->truth_edge[i] && fk->truth_block[i]);
		memcpy(fk->truth_edge[i], t.edge_count[i], f->cfg.nedges * sizeof(uint64_t));
		for (k = 0; k < t.nev; k++)
			if (t.ev[k].type == REGEN_EV_BLOCK && t.ev[k].func == f->func_id)
				fk->truth_block[i][t.ev[k].block]++;
		fk->activations[i] = t.activations[i];
		/* the plan counts activations (counter nedges): no ENTER record */
		CU_ASSERT_FATAL(f->plan.hdr.nr_counters == f->cfg.nedges + 1);
		if (entered)
			make_entered_plan(f);
		for (a = 0; entered && a < t.activations[i]; a++)
			fake_rec_add(&fk->rs, PT_REC_ENTER, a % 2, f->func_id, enter, 1);
		/* the module counts chords only (the planner's own tree here) */
		for (e = 0; e < f->cfg.nedges; e++)
			left[e] = f->plan.in_tree[e] ? 0 : fk->truth_edge[i][e];
		left[f->cfg.nedges] = entered ? 0 : t.activations[i];
		nrec = 1 + sim_below(rng, 4);
		for (r = 0; r < nrec; r++) {
			uint64_t body[MAX_E];

			for (e = 0; e <= f->cfg.nedges; e++) {
				body[e] = r + 1 == nrec ? left[e] :
					  sim_rand(rng) % (left[e] + 1);
				left[e] -= body[e];
			}
			fake_rec_add(&fk->rs, PT_REC_COUNTERS, r % 2, f->func_id, body,
				(uint16_t)(f->cfg.nedges + !entered));
		}
	}
	sim_truth_free(&t, p);
}

static void unmake(struct fake *fk, uint32_t nfuncs)
{
	uint32_t i;

	for (i = 0; i < nfuncs; i++) {
		free(fk->truth_edge[i]);
		free(fk->truth_block[i]);
	}
	free(fk->truth_edge);
	free(fk->truth_block);
	free(fk->activations);
	free(fk->tf.funcs);
	free(fk->rs.recs);
	free(fk->rs.words);
}

/* What the module's chord counters add up to: the chords' true counts. */
static uint64_t chord_sum(const struct sim_func *f, const uint64_t *truth)
{
	uint64_t s = 0;
	uint32_t e;

	for (e = 0; e < f->cfg.nedges; e++)
		s += f->plan.in_tree[e] ? 0 : truth[e];
	return s;
}

/* The --edges writer's text for function index i has "count  src -> dst" lines equal to want. */
static void check_writer(const struct pr_model *m, const struct edge_counts *ec, uint32_t i,
			 const uint64_t *want)
{
	struct out_writer w = { .ops = &out_edges_ops, .m = m, .counts = ec };
	struct out_writer *ws[1] = { &w };
	char *text = NULL, head[128], *at;
	size_t len = 0;
	uint32_t e;

	w.fp = open_memstream(&text, &len);
	CU_ASSERT_FATAL(w.fp != NULL);
	CU_ASSERT_EQUAL_FATAL(out_open_all(ws, 1), 0);
	CU_ASSERT_EQUAL(out_close_all(ws, 1), 0);
	fclose(w.fp);
	snprintf(head, sizeof(head), "%s (func %u): ", m->funcs[i].name, m->funcs[i].func_id);
	at = strstr(text, head);
	CU_ASSERT_FATAL(at != NULL);
	at = strchr(at, '\n');
	for (e = 0; at && e < m->funcs[i].cfg.nedges; e++) {
		unsigned long long v = ~0ull;

		CU_ASSERT(sscanf(at + 1, "%llu", &v) == 1);
		CU_ASSERT_EQUAL(v, want[e]);
		at = strchr(at + 1, '\n');
	}
	free(text);
}

static void test_counters_round_trip(void)
{
	uint64_t seed = unit_seed(), rng = seed ? seed : 1;
	uint32_t prog, i, funcs = 0, chords = 0;
	uint64_t edges = 0, activations = 0;

	for (prog = 0; prog < 60; prog++) {
		int entered = prog % 3 == 2;	/* every third: activations counted by ENTERs */
		struct sim_gen_opts go = { .nfuncs = 1 + sim_below(&rng, 4), .max_stmts = 10 };
		struct sim_lower_opts lo = { .mode = PT_MODE_EDGES };
		struct sim_program p;
		struct pr_model m;
		struct edge_counts ec;
		struct fake fk;

		for (;;) {	/* some function traced, else there is nothing to count */
			CU_ASSERT_EQUAL_FATAL(sim_generate_lowered(&p, &rng, &go, &lo), 0);
			for (i = 0; i < p.nfuncs && !p.funcs[i].traced; i++)
				;
			if (i < p.nfuncs)
				break;
			sim_free(&p);
		}
		make(&fk, &p, &rng, entered);
		CU_ASSERT_EQUAL_FATAL(pr_model_load(&fk.tf, &m, NULL, NULL), 0);
		CU_ASSERT_EQUAL_FATAL(edge_counts_build(&m, &fk.tf, &fk.rs, &ec), 0);
		CU_ASSERT_EQUAL(ec.stray, 0);
		for (i = 0; i < p.nfuncs; i++) {
			const struct pr_func *f;
			const struct edge_counts_func *ef;

			if (!p.funcs[i].traced)
				continue;
			f = pr_model_func(&m, p.funcs[i].func_id);
			ef = &ec.f[f->index];
			activations += fk.activations[i];

			CU_ASSERT_EQUAL(ef->status, 0);
			CU_ASSERT_EQUAL(ef->activations, fk.activations[i]);
			CU_ASSERT_EQUAL(ef->enters, fk.activations[i]);
			CU_ASSERT_EQUAL(ef->increments, chord_sum(&p.funcs[i], fk.truth_edge[i]) +
					(entered ? 0 : fk.activations[i]));
			CU_ASSERT(memcmp(ef->edge, fk.truth_edge[i],
					 f->cfg.nedges * sizeof(uint64_t)) == 0);
			CU_ASSERT(memcmp(ef->block, fk.truth_block[i],
					 f->cfg.nblocks * sizeof(uint64_t)) == 0);
			check_writer(&m, &ec, f->index, fk.truth_edge[i]);
			funcs++;
			chords += ef->chords;
			edges += f->cfg.nedges;
		}
		edge_counts_free(&ec);

		/*
		 * One entry not counted, an activation open at start: an ENTER
		 * record missing, or the activation counter one short.
		 */
		for (i = 0; i < fk.rs.n; i++) {
			struct tr_rec *r = &fk.rs.recs[i];

			if (entered && r->type == PT_REC_ENTER) {
				r->type = PT_REC_BITS;
				break;
			}
			if (!entered && r->type == PT_REC_COUNTERS && fk.rs.words[r->body + r->nwords - 1]) {
				fk.rs.words[r->body + r->nwords - 1]--;
				break;
			}
		}
		CU_ASSERT_EQUAL_FATAL(edge_counts_build(&m, &fk.tf, &fk.rs, &ec), 0);
		if (i < fk.rs.n) {
			const struct pr_func *f = pr_model_func(&m, fk.rs.recs[i].arg);

			CU_ASSERT_EQUAL(ec.f[f->index].status, -PT_ETRUNC);
		}
		edge_counts_free(&ec);

		/* a COUNTERS record of the wrong size */
		for (i = 0; i < fk.rs.n; i++)
			if (fk.rs.recs[i].type == PT_REC_COUNTERS) {
				fk.rs.recs[i].nwords--;
				break;
			}
		CU_ASSERT_EQUAL_FATAL(edge_counts_build(&m, &fk.tf, &fk.rs, &ec), 0);
		CU_ASSERT_EQUAL(ec.f[pr_model_func(&m, fk.rs.recs[i].arg)->index].status,
				-PT_EFORMAT);
		edge_counts_free(&ec);
		pr_model_free(&m);
		unmake(&fk, p.nfuncs);
		sim_free(&p);
	}
	printf("[edge counts: %u functions, %llu edges, %u chord counters, %llu activations, seed %llu] ",
	       funcs, (unsigned long long)edges, chords, (unsigned long long)activations,
	       (unsigned long long)seed);
	CU_ASSERT(funcs > 40 && chords > 0 && activations > 0);
}

/* A count on an edge the plan does not count (a tree edge) is no count: refused. */
static void test_count_on_tree_edge(void)
{
	struct sim_gen_opts go = { .nfuncs = 1, .max_stmts = 8 };
	struct sim_lower_opts lo = { .mode = PT_MODE_EDGES };
	uint64_t rng = 7, sum[MAX_E] = { 0 }, out[MAX_E], act;
	struct sim_program p;
	struct plan_view pv;
	struct pr_model m;
	struct fake fk;
	uint32_t e, chords;

	CU_ASSERT_EQUAL_FATAL(sim_generate_lowered(&p, &rng, &go, &lo), 0);
	make(&fk, &p, &rng, 0);
	CU_ASSERT_EQUAL_FATAL(pr_model_load(&fk.tf, &m, NULL, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(plan_parse(p.funcs[0].plan_blob, p.funcs[0].plan_len, &pv, NULL, 0),
			      0);
	for (e = 0; e < p.funcs[0].cfg.nedges && !p.funcs[0].plan.in_tree[e]; e++)
		;
	CU_ASSERT_FATAL(e < p.funcs[0].cfg.nedges);
	sum[e] = 1;
	CU_ASSERT_EQUAL(edge_counts_func(&m.funcs[0].g, &pv, sum, out, &act, &chords),
			-PT_EFORMAT);
	sum[e] = 0;
	CU_ASSERT_EQUAL(edge_counts_func(&m.funcs[0].g, &pv, sum, out, &act, &chords), 0);
	CU_ASSERT_EQUAL(act, 0);
	pv.hdr.mode = PT_MODE_TRACE;
	CU_ASSERT_EQUAL(edge_counts_func(&m.funcs[0].g, &pv, sum, out, &act, &chords),
			-PT_EFORMAT);
	plan_view_free(&pv);
	pr_model_free(&m);
	unmake(&fk, p.nfuncs);
	sim_free(&p);
}

UNIT_SUITE(edge_counts,
	   { "COUNTERS records over CPUs give every edge and block count", test_counters_round_trip },
	   { "a count on a tree edge or a non-edges plan is refused", test_count_on_tree_edge })
