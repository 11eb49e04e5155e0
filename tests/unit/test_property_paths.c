// SPDX-License-Identifier: GPL-2.0
/*
 * Property test of path mode against the simulator (tests/oracle/sim.h):
 * random programs (several functions, loops, irreducible gotos, calls and
 * recursion, untraced functions calling traced ones), random executions,
 * path numbers emitted as the kernel would under docs/runtime.md (one
 * per-CPU register, reset by every path end; owner switches at random
 * points move a non-zero register out as a PARTIAL marker), regenerated
 * by the engine with the path decoder, which must give the truth exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/pathnum.h>
#include <pathtrace/ppp.h>
#include "sim.h"

#include "decode_paths.h"
#include "sim_check.h"
#include "unit.h"

#define NPROGRAMS 6000	/* over 10,000 numbered CFGs */
#define RUNS_PER_PROGRAM 4

struct path_emitter {
	const struct sim_program *p;
	struct pathnum **pn;	/* per function index */
	uint64_t reg;		/* the CPU's path register */
	uint64_t rng;
	uint64_t partials;
	uint32_t bad;		/* register rules broken */
	/* PPP's second register (pathnum_second), as a path profile keeps it */
	struct ppp **pp;	/* per function index, or NULL */
	uint64_t full;		/* the path register without owner switches */
	uint64_t reg2;		/* the PPP register */
	uint64_t ppp_ends, ppp_interesting;
	uint32_t ppp_bad;	/* path ends PPP classified wrong */
};

/* An owner switch, now and then: the register leaves as a partial sum. */
static void maybe_switch(struct path_emitter *pe, struct sim_stream *s)
{
	if (sim_below(&pe->rng, 6))
		return;
	if (pe->reg) {
		sim_stream_marker(s, REGEN_M_PARTIAL, 0, 0, pe->reg);
		pe->partials++;
	}
	pe->reg = 0;
}

/*
 * A path end under PPP: the PPP register must hold an interesting path's
 * id exactly when the path is interesting (what the kernel's dense array
 * counts), and never pass another path for one.
 */
static void ppp_end(struct path_emitter *pe, const struct ppp *pp, uint64_t bl, uint64_t id)
{
	int64_t want = -1;
	uint32_t i;

	for (i = 0; i < pp->n; i++)
		if (pp->bl[i] == bl)
			want = i;
	if (ppp_classify(pp, (int64_t)id, bl) != want) {
		if (getenv("PT_DEBUG"))
			fprintf(stderr, "PPP: path %llu ended with id %lld\n",
				(unsigned long long)bl, (long long)id);
		pe->ppp_bad++;
	}
	pe->ppp_ends++;
	pe->ppp_interesting += want >= 0;
}

static void run_actions(struct path_emitter *pe, const struct pathnum *p, const struct ppp *pp,
			uint32_t d, struct sim_stream *s)
{
	if (d == GRAPH_NONE)
		return;
	if (p->act[d] & PATHNUM_ACT_ADD) {
		maybe_switch(pe, s);
		pe->reg += p->add[d];
		pe->full += p->add[d];
		if (p->inc2)
			pe->reg2 += p->add2[d];
	}
	if (p->act[d] & PATHNUM_ACT_EMIT) {
		maybe_switch(pe, s);
		sim_stream_emit(s, p->width, pe->reg + p->emit[d]);
		if (pp)
			ppp_end(pe, pp, pe->full + p->emit[d], pe->reg2 + p->emit2[d]);
		pe->reg = pe->full = pe->reg2 = 0;
	}
	if (p->act[d] & PATHNUM_ACT_SET) {
		pe->reg = pe->full = p->set[d];	/* same probe as the EMIT: no switch between */
		if (p->inc2)
			pe->reg2 = p->set2[d];
	}
}

static void pe_edge(void *ctx, const struct sim_func *f, uint32_t e, uint64_t *state,
		    struct sim_stream *s)
{
	struct path_emitter *pe = ctx;
	const struct pathnum *p = pe->pn[f - pe->p->funcs];

	(void)state;
	/* A call vertex's end edge fired before its call (pe_vertex). */
	if (p->cfg[e].role != PATHNUM_ROLE_CALL &&
	    p->cfg[e].dag != p->call_end[f->g.edges[e].src])
		run_actions(pe, p, pe->pp[f - pe->p->funcs], p->cfg[e].dag, s);
}

/*
 * Arriving at a call vertex: its path end fires before the call (the plan
 * puts it on an instruction of the block, which ends with the call).
 */
static void pe_vertex(void *ctx, const struct sim_func *f, uint32_t v, uint64_t *state,
		      struct sim_stream *s)
{
	struct path_emitter *pe = ctx;
	const struct pathnum *p = pe->pn[f - pe->p->funcs];
	uint32_t d = p->call_end[v];

	if (!state[0]++ && pe->reg) {
		/* rule 3: an activation starts with the register at 0 */
		if (getenv("PT_DEBUG"))
			fprintf(stderr, "f%u entered with register %lld\n", f->func_id,
				(long long)pe->reg);
		pe->bad++;
	}
	if (d != GRAPH_NONE)
		run_actions(pe, p, pe->pp[f - pe->p->funcs], d, s);
	if ((f->g.vflags[v] & GRAPH_V_CALL) && pe->reg) {
		if (getenv("PT_DEBUG"))
			fprintf(stderr, "f%u calls at %u with register %lld\n", f->func_id, v,
				(long long)pe->reg);
		pe->bad++;
	}
}

/*
 * PPP on the same CFG: a random set of interesting paths gets unique ids,
 * and a profile counted by PPP ids equals the Ball-Larus one: every path
 * (up to 256 of them, each with a random count, as an execution would
 * give) is decoded to its DAG edges, its PPP id summed along them
 * (ppp_path_id, what the PPP register holds at the path's end) and
 * classified with its Ball-Larus number; the counts per interesting path
 * and in the bucket of the others must be the Ball-Larus counts exactly.
 */
static void check_ppp(const struct pathnum *pn, uint64_t *rng, uint32_t *sets, uint64_t *paths)
{
	uint64_t limit = pn->npaths < 64 ? pn->npaths : 64, I[64], id, all = pn->npaths;
	uint64_t bl_count[64] = { 0 }, ppp_count[64] = { 0 }, bl_other = 0, ppp_other = 0;
	uint32_t n = 0, i, j, edges[512];
	uint8_t interesting[256] = { 0 };
	struct ppp pp;

	for (id = 0; id < limit; id++)
		if (sim_below(rng, 2)) {
			interesting[id] = 1;
			I[n++] = id;
		}
	if (!n || ppp_build(&pp, pn, I, n))
		return;
	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			CU_ASSERT(pp.id[i] != pp.id[j]);
		CU_ASSERT_EQUAL(ppp_classify(&pp, pp.id[i], I[i]), i);
	}
	for (id = 0; id < all && id < 256; id++) {
		uint64_t count = 1 + sim_below(rng, 1000);
		int ne = pathnum_decode(pn, id, edges, 512);
		int64_t k;

		CU_ASSERT_FATAL(ne > 0);
		k = ppp_classify(&pp, ppp_path_id(&pp, edges, (uint32_t)ne), id);
		for (i = 0; interesting[id] && i < n && I[i] != id; i++)
			;
		if (interesting[id])
			bl_count[i] += count;
		else
			bl_other += count;
		if (k >= 0 && k < n)
			ppp_count[k] += count;
		else
			ppp_other += count;
		(*paths)++;
	}
	CU_ASSERT(memcmp(bl_count, ppp_count, sizeof(bl_count)) == 0);
	CU_ASSERT_EQUAL(bl_other, ppp_other);
	(*sets)++;
	ppp_free(&pp);
}

/*
 * Half of the numbered functions run with PPP's second register: random
 * interesting paths, numbered by ppp_build, moved onto the path register's
 * probes by pathnum_second (which also reshapes the path register's
 * actions; the regeneration checks that it still numbers right).
 */
static struct ppp *add_ppp(struct pathnum *pn, uint64_t *rng)
{
	uint64_t I[64], id, limit = pn->npaths < 64 ? pn->npaths : 64;
	struct ppp *pp = calloc(1, sizeof(*pp));
	uint32_t n = 0;

	CU_ASSERT_FATAL(pp != NULL);
	for (id = 0; id < limit; id++)
		if (sim_below(rng, 3))
			I[n++] = id;
	if (!n || ppp_build(pp, pn, I, n)) {
		free(pp);
		return NULL;
	}
	CU_ASSERT_FATAL(pathnum_second(pn, (const uint64_t *)pp->inc) == 0);
	CU_ASSERT_EQUAL(pathnum_second(pn, (const uint64_t *)pp->inc), -PT_EINVAL);
	return pp;
}

static void test_paths_regenerate(void)
{
	uint64_t seed = unit_seed(), rng = seed ? seed : 1;
	uint32_t prog, i, run, cfgs = 0, runs = 0, refused = 0, failures = 0;
	uint64_t events = 0, partials = 0;
	uint32_t ppp_sets = 0, ppp_funcs = 0, ppp_bad = 0;
	uint64_t ppp_paths = 0, ppp_ends = 0, ppp_interesting = 0;

	for (prog = 0; prog < NPROGRAMS && failures < 3; prog++) {
		struct sim_program p;
		struct pathnum **pn;
		struct regen_func *arr = NULL;
		struct regen_funcs fs;
		struct ppp **pps;
		int skip = 0;

		CU_ASSERT_FATAL(sim_generate(&p, &rng, 1 + sim_below(&rng, 4),
					     2 + sim_below(&rng, 14)) == 0);
		pn = calloc(p.nfuncs, sizeof(*pn));
		pps = calloc(p.nfuncs, sizeof(*pps));
		CU_ASSERT_FATAL(pn != NULL && pps != NULL);
		for (i = 0; i < p.nfuncs && !skip; i++) {
			uint64_t *cost = malloc((p.funcs[i].g.ne + 1) * sizeof(*cost));
			uint32_t e;
			int err;

			if (!p.funcs[i].traced) {
				free(cost);
				continue;
			}
			for (e = 0; e < p.funcs[i].g.ne; e++)
				cost[e] = sim_below(&rng, 100);
			pn[i] = calloc(1, sizeof(**pn));
			err = pathnum_build(pn[i], &p.funcs[i].g, cost, NULL);
			free(cost);
			if (err) {
				if (getenv("PT_DEBUG"))
					fprintf(stderr, "refused: %s\n", pn[i]->reason);
				/* only the documented refusals */
				CU_ASSERT(err == -PT_ENOTSUP || err == -PT_EOVERFLOW);
				free(pn[i]);
				pn[i] = NULL;
				skip = 1;
				refused++;
				continue;
			}
			cfgs++;
			check_ppp(pn[i], &rng, &ppp_sets, &ppp_paths);
			if (sim_below(&rng, 2) && (pps[i] = add_ppp(pn[i], &rng)))
				ppp_funcs++;
		}
		if (!skip)
			CU_ASSERT_FATAL(simc_funcs(&p, &regen_decode_paths_ops,
						   (const void *const *)pn, &arr, &fs) == 0);
		for (run = 0; !skip && run < RUNS_PER_PROGRAM; run++) {
			struct path_emitter pe = { &p, pn, 0, rng ^ run, 0, 0, pps, 0, 0, 0, 0, 0 };
			struct sim_emitter em = { &pe, pe_vertex, pe_edge };
			struct sim_run_opts o = { .max_depth = 6, .max_steps = 400 };
			struct sim_stream s;
			struct sim_truth t;
			char msg[256];
			uint32_t nev = 0;
			int rc;

			memset(&s, 0, sizeof(s));
			CU_ASSERT_FATAL(sim_truth_init(&t, &p) == 0);
			o.root = sim_below(&rng, p.nfuncs);
			CU_ASSERT_FATAL(sim_run(&p, &o, &rng, &em, &s, &t) == 0);
			/* rule 3: the register is 0 whenever no path is open */
			CU_ASSERT_EQUAL(pe.reg, 0);
			CU_ASSERT_EQUAL(pe.reg2, 0);
			CU_ASSERT_EQUAL(pe.bad, 0);
			CU_ASSERT_EQUAL(pe.ppp_bad, 0);
			ppp_bad += pe.ppp_bad;
			ppp_ends += pe.ppp_ends;
			ppp_interesting += pe.ppp_interesting;
			rc = simc_compare(&fs, &s, &t, 0, msg, sizeof(msg), &nev);
			CU_ASSERT_EQUAL(rc, 0);
			if (rc) {
				fprintf(stderr, "\nprogram %u run %u (seed %llu): %s\n", prog, run,
					(unsigned long long)seed, msg);
				if (getenv("PT_DEBUG"))
					for (i = 0; i < s.nmarkers; i++)
						fprintf(stderr, " m%u pos %llu type %u func %u value %lld\n", i,
							(unsigned long long)s.markers[i].pos, s.markers[i].type,
							s.markers[i].func, (long long)s.markers[i].value);
				if (getenv("PT_DEBUG"))
					for (i = 0; i < p.nfuncs; i++) {
						uint32_t e;

						if (!pn[i])
							continue;
						fprintf(stderr, "f%u entry %u exit %u calls:", p.funcs[i].func_id,
							p.funcs[i].g.entry, p.funcs[i].g.exit);
						for (e = 0; e < p.funcs[i].g.nv; e++)
							if (p.funcs[i].g.vflags[e] & GRAPH_V_CALL)
								fprintf(stderr, " %u", e);
						fprintf(stderr, "\n");
						for (e = 0; e < pn[i]->dag.ne; e++)
							fprintf(stderr, "  d%u %u->%u kind %u orig %u val %llu act %u add %llu emit %llu\n",
								e, pn[i]->dag.edges[e].src, pn[i]->dag.edges[e].dst,
								pn[i]->kind[e], pn[i]->orig[e],
								(unsigned long long)pn[i]->val[e], pn[i]->act[e],
								(unsigned long long)pn[i]->add[e],
								(unsigned long long)pn[i]->emit[e]);
					}
				failures++;
			}
			events += nev;
			partials += pe.partials;
			runs++;
			sim_stream_free(&s);
			sim_truth_free(&t, &p);
		}
		free(arr);
		for (i = 0; i < p.nfuncs; i++) {
			if (pn[i]) {
				pathnum_free(pn[i]);
				free(pn[i]);
			}
			if (pps[i]) {
				ppp_free(pps[i]);
				free(pps[i]);
			}
		}
		free(pn);
		free(pps);
		sim_free(&p);
	}
	CU_ASSERT(cfgs >= 10000);
	/* the second register ran, on thousands of functions, and ended paths of both kinds */
	CU_ASSERT(ppp_funcs >= 1000);
	CU_ASSERT(ppp_interesting > 0 && ppp_interesting < ppp_ends);
	fprintf(stderr, "\n[property paths: %u CFGs, %u executions, %llu events regenerated, "
		"%llu partial sums, %u PPP sets unique and counting as Ball-Larus over %llu paths, "
		"PPP register on %u functions: %llu path ends (%llu interesting), %u misclassified, "
		"%u programs refused, seed %llu] ",
		cfgs, runs, (unsigned long long)events, (unsigned long long)partials, ppp_sets,
		(unsigned long long)ppp_paths, ppp_funcs, (unsigned long long)ppp_ends,
		(unsigned long long)ppp_interesting, ppp_bad, refused, (unsigned long long)seed);
}

UNIT_SUITE(property_paths,
	   { "path mode: regenerated == executed", test_paths_regenerate })
