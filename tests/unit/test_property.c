// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator property test: random programs (at least 10,000 CFGs),
 * random executions, both 1994 encodings. For every program:
 *  - the witness and bit encodings have the blocking property (no
 *    emission-free path from a predicate or call vertex to a call vertex
 *    or EXIT), and rebuilding them from their emissions alone gives the
 *    same decoder tables;
 *  - regen_stream(stream) == the executed blocks and edges, nested calls
 *    in order, including calls through untraced functions;
 *  - Eprof(Ecnt) recovers every edge count and Vprof(Ecnt) every vertex
 *    count from the counters alone, also for runs stopped early (Fig. 7);
 *  - a stopped run regenerates to a prefix of the truth and an end marker,
 *    never past it; a complete one to the truth, or to a prefix ending at
 *    the stream's last evidence (regen.h) and an end marker;
 *  - in witness mode, with some critical edges marked unobservable (as
 *    static-key sites are), no witness lands on one;
 *  - in witness mode, the witnesses dropped after the spanning tree
 *    leave a subset of its plan, refused only where it is;
 *  - in witness mode, every other pair of programs plans with entry
 *    witnesses (encoding.h: a direct call to a traced function is
 *    witnessed by its callee's ENTER) and is regenerated exactly the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/entry_witness.h>
#include <pathtrace/eprof.h>
#include <pathtrace/error.h>
#include "sim.h"
#include <pathtrace/weight.h>
#include <pathtrace_abi.h>

#include "sim_check.h"
#include "unit.h"

#define MIN_CFGS 10000u

struct stats {
	uint64_t cfgs, programs, executions, events, bits[2], stopped;
	/* coverage: what the random programs exercised */
	uint64_t irreducible, loops, calls, recursive, via_untraced, shared_pos;
	uint64_t tail_traced, tail_untraced;	/* tail calls run, by their target */
	uint64_t refused[2];	/* CFGs an encoding refused (encoding.h's timing rule) */
	uint64_t refused_plain[2];	/* the same without vertex emissions */
	uint64_t vertex_emits;
	uint64_t merged;	/* vertex witnesses standing in for blockers (cut_blockers) */
	uint64_t cut_changed;	/* encodings whose blockers the cut moved */
	/* witness mode with entry witnesses: programs, entry witnesses, witness bits */
	uint64_t entry_programs, entry_wits, entry_bits, entry_execs, plain_bits, plain_execs;
	/* the same with implicit entries: entered calls (encoding.h) */
	uint64_t implicit_programs, entered_calls, implicit_bits, implicit_execs;
	uint64_t implicit_enters;	/* activations the stream has no ENTER for */
	/* witness: critical edges marked unobservable (as static keys are) */
	uint64_t unobs_edges, unobs_refused;
	/* witnesses the spanning tree placed and the trace set kept without */
	uint64_t pruned, pruned_cfgs;
	/*
	 * ENTERs naming frames (PT_PLAN_FRAMED): programs, framed calls
	 * placed, witness bits and events of their executions; ENTERs that
	 * named a traced frame, and those the decoder walked to at a predicate
	 */
	uint64_t framed_programs, framed_calls, framed_bits, framed_execs, nested_enters;
	uint64_t frames_programs;	/* ENTERs naming frames, calls blocked (the engine checks) */
	uint64_t blocked_calls;		/* framed, implicit: calls to callees not closed, blocked */
};

/* Whether g minus its dominator back edges still has a cycle (Kahn). */
static int is_irreducible(const struct graph *g, const uint8_t *back)
{
	uint32_t *indeg = calloc(g->nv + 1, sizeof(*indeg)), *q = malloc((g->nv + 1) * 4);
	uint32_t qh = 0, qt = 0, v, k, e, done = 0;

	if (!indeg || !q) {
		free(indeg);
		free(q);
		return 0;
	}
	for (e = 0; e < g->ne; e++)
		if (!back[e])
			indeg[g->edges[e].dst]++;
	for (v = 0; v < g->nv; v++)
		if (!indeg[v])
			q[qt++] = v;
	while (qh < qt) {
		v = q[qh++];
		done++;
		for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
			e = g->out_edges[k];
			if (!back[e] && !--indeg[g->edges[e].dst])
				q[qt++] = g->edges[e].dst;
		}
	}
	free(indeg);
	free(q);
	return done != g->nv;
}

/* Recursion, ENTERs through untraced code, sharing a position, tail calls. */
static void coverage(const struct sim_program *p, const struct sim_stream *s,
		     const struct sim_truth *t, struct stats *st)
{
	uint32_t i, j, stack[64], depth = 0;
	uint64_t enters = 0, markers = 0;

	for (i = 0; i < p->nfuncs; i++)
		for (j = 0; j < p->funcs[i].g.ne; j++) {
			uint32_t c = p->funcs[i].tail[j];

			if (c == SIM_CALL_NONE)
				continue;
			if (p->funcs[c].traced)
				st->tail_traced += t->edge_count[i][j];
			else
				st->tail_untraced += t->edge_count[i][j];
		}

	for (i = 0; i < s->nmarkers; i++) {
		uint64_t caller = (s->markers[i].value >> 32) - 1;

		if (caller < p->nfuncs && !p->funcs[caller].traced)
			st->via_untraced++;
		if (i && s->markers[i - 1].pos == s->markers[i].pos)
			st->shared_pos++;
		markers += s->markers[i].type == REGEN_M_ENTER;
	}
	for (i = 0; i < t->nev; i++) {
		if (t->ev[i].type == REGEN_EV_ENTER) {
			enters++;
			for (j = 0; j < depth; j++)
				if (stack[j] == t->ev[i].func)
					break;
			st->recursive += j < depth;
			if (depth < 64)
				stack[depth] = t->ev[i].func;
			depth++;
		} else if (t->ev[i].type == REGEN_EV_EXIT && depth) {
			depth--;
		}
	}
	st->implicit_enters += enters > markers ? enters - markers : 0;
}

static int same_tables(const struct encoding *a, const struct encoding *b)
{
	uint32_t n;

	if (a->nwit != b->nwit || a->npred != b->npred || a->width != b->width ||
	    memcmp(a->next, b->next, (size_t)a->npred * (a->nwit + 1) * sizeof(*a->next)) ||
	    memcmp(a->word_start, b->word_start, ((size_t)a->npred + 1) * sizeof(*a->word_start)))
		return 0;
	n = a->word_start[a->npred];
	return !memcmp(a->word_nbits, b->word_nbits, n) &&
	       !memcmp(a->word_value, b->word_value, n * sizeof(*a->word_value)) &&
	       !memcmp(a->word_code, b->word_code, n * sizeof(*a->word_code));
}

/* Every predicate's words fit the code tree (Kraft sum <= 1), none over 32 bits. */
static int rows_fit(const struct encoding *enc)
{
	uint32_t row, i;

	for (row = 0; row < enc->npred; row++) {
		double k = 0;

		for (i = enc->word_start[row]; i < enc->word_start[row + 1]; i++) {
			if (!enc->word_nbits[i] || enc->word_nbits[i] > 32)
				return 0;
			k += 1.0 / (double)(1ull << enc->word_nbits[i]);
		}
		if (k > 1.0)
			return 0;
	}
	return 1;
}

/* Which functions are closed (entry_witness.h), from the simulator's tail calls. */
static void closed_funcs(const struct sim_program *p, uint8_t *closed)
{
	uint32_t start[9], to[512], n = 0, i, e;

	for (i = 0; i < p->nfuncs; i++) {
		const struct sim_func *f = &p->funcs[i];

		start[i] = n;
		for (e = 0; e < f->g.ne && n < 512; e++) {
			if (f->tail_id[e] == REGEN_TAIL_NONE)
				continue;
			to[n++] = f->tail_id[e] == REGEN_TAIL_OTHER ? ENTRY_TAIL_OPEN :
				  f->tail_id[e] - p->funcs[0].func_id;
		}
	}
	start[p->nfuncs] = n;
	CU_ASSERT_FATAL(n < 512 && entry_closed(p->nfuncs, start, to, closed) == 0);
}

/* Eprof and Vprof of function fi against the truth; 0 or a message. */
static int check_profiles(const struct sim_program *p, uint32_t fi, const uint64_t *weight,
			  const struct sim_truth *t, char *msg, size_t len)
{
	const struct graph *g = &p->funcs[fi].g;
	struct counters ce, cv;
	uint64_t *cnt = calloc(g->ne + 1, sizeof(*cnt)), *edges = calloc(g->ne + 1, 8);
	uint64_t *vert = calloc(g->nv + 1, 8), act = 0;
	uint32_t e, v, k;
	int rc = -1;

	if (!cnt || !edges || !vert || eprof_place(g, weight, &ce))
		goto out;
	if (vprof_place(g, weight, &cv)) {
		counters_free(&ce);
		goto out;
	}
	for (k = 0; k < ce.ncounters; k++)
		cnt[k] = t->edge_count[fi][ce.edge[k]];
	if (eprof_counts(g, &ce, cnt, t->early_exit[fi], edges, &act)) {
		snprintf(msg, len, "f%u: eprof_counts refused true counts", fi);
		goto free;
	}
	for (e = 0; e < g->ne; e++) {
		if (edges[e] != t->edge_count[fi][e]) {
			snprintf(msg, len, "f%u: edge %u count %llu, true %llu", fi, e,
				 (unsigned long long)edges[e],
				 (unsigned long long)t->edge_count[fi][e]);
			goto free;
		}
	}
	if (act != t->activations[fi]) {
		snprintf(msg, len, "f%u: %llu activations, true %llu", fi,
			 (unsigned long long)act, (unsigned long long)t->activations[fi]);
		goto free;
	}
	for (k = 0; k < cv.ncounters; k++)
		cnt[k] = t->edge_count[fi][cv.edge[k]];
	if (vprof_counts(g, &cv, cnt, t->early_exit[fi], vert)) {
		snprintf(msg, len, "f%u: vprof_counts refused true counts", fi);
		goto free;
	}
	for (v = 0; v < g->nv; v++) {
		uint64_t truth = v == g->entry ? t->activations[fi] : 0;

		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++)
			truth += t->edge_count[fi][g->in_edges[k]];
		if (vert[v] != truth) {
			snprintf(msg, len, "f%u: vertex %u count %llu, true %llu (%u of %u counters)",
				 fi, v, (unsigned long long)vert[v], (unsigned long long)truth,
				 cv.ncounters, ce.ncounters);
			goto free;
		}
	}
	rc = 0;
free:
	counters_free(&ce);
	counters_free(&cv);
out:
	free(cnt);
	free(edges);
	free(vert);
	return rc;
}

/*
 * The witnesses dropped after the spanning tree (witness_prune.c): the
 * plan keeps a subset of the tree's, and is refused only where the tree's
 * is (a pruned set that broke Trace(Ewit) would be refused by
 * enc_finish_witness and planned again without vertex witnesses: not a
 * subset then).
 */
static void check_pruned(const struct graph *g, const uint64_t *weight,
			 const struct encoding_opts *eo, int err, const struct encoding *enc,
			 struct stats *st)
{
	struct encoding_opts to = *eo;
	struct encoding t;
	uint32_t e, v;
	int terr;

	to.flags |= ENC_F_TREE_ONLY;
	terr = encoding_witness_opts(g, weight, &to, &t);
	CU_ASSERT_FATAL(terr == 0 || terr == -PT_EREFUSED);
	if (terr) {
		CU_ASSERT(err != 0);
		return;
	}
	CU_ASSERT(err == 0);
	for (e = 0; !err && e < g->ne; e++)
		CU_ASSERT(!enc->edge_nbits[e] || t.edge_nbits[e]);
	for (v = 0; !err && enc->vertex_nbits && v < g->nv; v++)
		CU_ASSERT(!enc->vertex_nbits[v] || (t.vertex_nbits && t.vertex_nbits[v]));
	if (!err) {
		CU_ASSERT(enc->nwit <= t.nwit);
		st->pruned += t.nwit - enc->nwit;
		st->pruned_cfgs += enc->nwit < t.nwit;
	}
	encoding_free(&t);
}

static void one_program(uint64_t *rng, struct stats *st)
{
	struct sim_program p;
	struct encoding wit[8], bits[8], rebuilt;
	uint64_t *weight[8] = { NULL };
	uint32_t nfuncs = 1 + sim_below(rng, 5), i, mode, run;
	int refused[2] = { 0, 0 }, entry, implicit, framed;
	uint8_t closed[8];
	char msg[256];
	int ok = 1;

	CU_ASSERT_FATAL(sim_generate(&p, rng, nfuncs, 24) == 0);
	st->programs++;
	st->cfgs += nfuncs;
	entry = (st->programs & 2) != 0;
	/* half of those: implicit entries, the calls entered without an ENTER */
	implicit = entry && (st->programs & 4) != 0;
	st->entry_programs += entry && !implicit;
	st->implicit_programs += implicit;
	/*
	 * Half the programs: ENTERs name their frames; half of those plan the
	 * other calls framed (witness mode), the rest keep them blocked, and
	 * the engine checks the frames against where it stands.
	 */
	p.frames = (st->programs & 8) != 0;
	framed = p.frames && (st->programs & 16) != 0;
	st->framed_programs += framed;
	st->frames_programs += p.frames && !framed;
	closed_funcs(&p, closed);
	memset(wit, 0, sizeof(wit));
	memset(bits, 0, sizeof(bits));
	for (i = 0; i < nfuncs; i++) {
		const struct graph *g = &p.funcs[i].g;
		uint32_t bad = GRAPH_NONE, e, v;
		int err;
		uint8_t *back = malloc(g->ne + 1), unobs[256];
		uint64_t vcost_buf[256], *vcost;
		uint8_t *ewit = calloc(g->nv + 1, 1);

		CU_ASSERT_FATAL(ewit != NULL);
		for (v = 0; entry && v < g->nv; v++)
			if ((g->vflags[v] & GRAPH_V_CALL) && p.funcs[i].callee_id[v] != UINT32_MAX &&
			    closed[p.funcs[i].callee_id[v] - p.funcs[0].func_id])
				ewit[v] = implicit ? ENC_CALL_ENTERED : ENC_CALL_WITNESS;
		/*
		 * framed: calls named by frames; with implicit entries, a direct
		 * call to a traced callee that is not closed writes no ENTER
		 * either (enable lists every direct call): blocked
		 */
		for (v = 0; framed && v < g->nv; v++)
			if ((g->vflags[v] & GRAPH_V_CALL) && ewit[v] == ENC_CALL_LOUD)
				ewit[v] = implicit && p.funcs[i].callee_id[v] != UINT32_MAX ?
					  ENC_CALL_BLOCKED : ENC_CALL_FRAMED;
		if (implicit) {
			p.funcs[i].implicit = calloc(g->nv + 1, 1);
			CU_ASSERT_FATAL(p.funcs[i].implicit != NULL);
			for (v = 0; v < g->nv; v++) {
				p.funcs[i].implicit[v] = ewit[v] == ENC_CALL_ENTERED ||
							 ewit[v] == ENC_CALL_BLOCKED;
				st->blocked_calls += ewit[v] == ENC_CALL_BLOCKED;
			}
		}

		CU_ASSERT_FATAL(back && weight_loops(g, back, NULL) == 0);
		st->irreducible += is_irreducible(g, back);
		for (e = 0; e < g->ne; e++)
			st->loops += back[e];
		for (v = 0; v < g->nv; v++)
			st->calls += (g->vflags[v] & GRAPH_V_CALL) != 0;
		free(back);
		weight[i] = malloc((g->ne + 1) * sizeof(uint64_t));
		CU_ASSERT_FATAL(weight[i] != NULL);
		CU_ASSERT_FATAL(weight_heuristic(g, weight[i]) == 0);
		/*
		 * Half the programs: vertex witnesses priced (an optimized probe
		 * or an int3 on every entry of the vertex), so that call
		 * vertices take one instead of their blockers where that is
		 * cheaper (witness.c, cut_blockers).
		 */
		vcost = NULL;
		if (st->programs % 4 >= 2) {
			vcost = vcost_buf;
			for (v = 0; v < g->nv && v < sizeof(vcost_buf) / sizeof(vcost_buf[0]); v++) {
				uint32_t k;

				vcost[v] = 0;
				for (k = g->in_start[v]; k < g->in_start[v + 1]; k++)
					vcost[v] += weight[i][g->in_edges[k]];
				/* at half, once or ten times the vertex's frequency */
				k = (uint32_t)sim_below(rng, 3);
				vcost[v] = k == 0 ? vcost[v] / 2 : k == 1 ? vcost[v] : vcost[v] * 10;
				if (v == g->entry || v == g->exit)
					vcost[v] = UINT64_MAX;
			}
			if (g->nv > sizeof(vcost_buf) / sizeof(vcost_buf[0]))
				vcost = NULL;
		}
		/*
		 * Witness mode, every other program: some critical edges out of
		 * non-call predicates into blocks (not EXIT) cannot be observed
		 * (static-key sites do this); no witness may land on them.
		 */
		memset(unobs, 0, sizeof(unobs));
		for (e = 0; e < g->ne && e < sizeof(unobs) && (st->programs & 1); e++) {
			uint32_t src = g->edges[e].src, dst = g->edges[e].dst;

			unobs[e] = graph_out_degree(g, src) >= 2 && graph_in_degree(g, dst) >= 2 &&
				   dst != g->exit && !(g->vflags[src] & GRAPH_V_CALL) &&
				   sim_below(rng, 3) == 0;
			st->unobs_edges += unobs[e];
		}
		for (mode = 0; mode < 2; mode++) {
			struct encoding *enc = mode ? &bits[i] : &wit[i], plain;
			/* bits: entered calls only */
			const uint8_t *ew = !mode || implicit ? ewit : NULL;
			/* a third of the programs: witness codes shaped by (skewed) weights */
			const uint64_t *cwt = st->programs % 3 == 1 ? weight[i] : NULL;
			struct encoding_opts eo = { ENC_F_VERTEX_EMIT, unobs, NULL, 0, ew, cwt, 0, NULL,
						    mode ? NULL : vcost };
			struct encoding_opts po = { 0, unobs, NULL, 0, ew, cwt, 0, NULL, NULL };
			int perr;

			/* with vertex emissions (what is regenerated below) */
			err = mode ? encoding_bits_flags(g, ENC_F_VERTEX_EMIT, enc) :
				     encoding_witness_opts(g, weight[i], &eo, enc);
			CU_ASSERT_FATAL(err == 0 || err == -PT_EREFUSED);
			if (!mode)
				check_pruned(g, weight[i], &eo, err, enc, st);
			if (!mode && err) {
				/* refused because of the unobservable edges alone? */
				struct encoding x;

				struct encoding_opts xo = { ENC_F_VERTEX_EMIT, NULL, NULL, 0, ew, cwt, 0, NULL,
							    vcost };

				if (!encoding_witness_opts(g, weight[i], &xo, &x)) {
					st->unobs_refused++;
					encoding_free(&x);
				}
				CU_ASSERT(eo.why != NULL);
			}
			for (e = 0; !mode && !err && e < g->ne && e < sizeof(unobs); e++)
				CU_ASSERT(!unobs[e] || !enc->edge_nbits[e]);
			/* without: the same emissions, or refused where vertices were needed */
			perr = mode ? encoding_bits(g, &plain) :
				      encoding_witness_opts(g, weight[i], &po, &plain);
			CU_ASSERT_FATAL(perr == 0 || perr == -PT_EREFUSED);
			if (!perr) {
				/*
				 * Priced vertex witnesses may stand in for blockers
				 * (cut_blockers); never refused where plain succeeds.
				 */
				CU_ASSERT(!err);
				if (mode || !vcost)
					CU_ASSERT(!err && !memcmp(plain.edge_nbits, enc->edge_nbits, g->ne) &&
						  !memcmp(plain.edge_value, enc->edge_value, g->ne * 8));
				for (v = 0; !mode && !err && vcost && v < g->nv; v++)
					st->merged += enc->vertex_nbits && enc->vertex_nbits[v] &&
						      (!plain.vertex_nbits || !plain.vertex_nbits[v]);
				st->cut_changed += !mode && !err && vcost &&
						   memcmp(plain.edge_nbits, enc->edge_nbits, g->ne);
				encoding_free(&plain);
			}
			st->refused_plain[mode] += perr != 0;
			if (err) {
				refused[mode] |= p.funcs[i].traced;
				st->refused[mode]++;
				continue;
			}
			/* the blocking property, checked on the emissions alone */
			CU_ASSERT(encoding_check_blocking_ve(g, enc->edge_nbits, enc->vertex_nbits,
							     ew, &bad) == 0);
			for (v = 0; v < g->nv; v++) {
				st->vertex_emits += enc->vertex_nbits[v] != 0;
				st->entry_wits += enc->enter_code && enc->enter_code[v];
				st->entered_calls += enc->call_entered && enc->call_entered[v];
				st->framed_calls += !mode && enc->call_framed && enc->call_framed[v];
			}
			CU_ASSERT_FATAL(encoding_from_emissions_ve(g, mode ? PT_ENC_BITS : PT_ENC_WITNESS,
								   enc->edge_nbits, enc->edge_value,
								   enc->vertex_nbits, enc->vertex_value,
								   ew, 0, &rebuilt) == 0);
			if (!mode)
				CU_ASSERT(same_tables(enc, &rebuilt) && rows_fit(enc));
			encoding_free(&rebuilt);
		}
		free(ewit);
	}
	for (mode = 0; mode < 2 && ok; mode++) {
		struct regen_func *arr;
		struct regen_funcs fs;

		for (i = 0; i < nfuncs; i++) {
			p.funcs[i].enc = mode ? bits[i] : wit[i];
			p.funcs[i].framed = framed && !mode;	/* bits: every call blocked */
		}
		CU_ASSERT_FATAL(simc_funcs(&p, mode ? &regen_decode_bits_ops :
						      &regen_decode_witness_ops, NULL, &arr, &fs) == 0);
		/* a refused traced function: nothing to trace; profiles are still checked */
		for (run = 0; run < 3 && ok && (mode == 0 || !refused[mode]); run++) {
			struct sim_emitter em = { NULL, NULL, sim_emit_encoding };
			struct sim_run_opts o = {
				.root = sim_below(rng, nfuncs),
				.max_depth = 6,
				.max_steps = 400,
				.stop_after = run == 2 ? 1 + sim_below(rng, 120) : 0,
			};
			struct sim_stream s;
			struct sim_truth t;
			uint32_t nev = 0, tops = 1 + (run == 1 ? sim_below(rng, 3) : 0), k;

			memset(&s, 0, sizeof(s));
			CU_ASSERT_FATAL(sim_truth_init(&t, &p) == 0);
			/* run 1: several top-level executions in one stream */
			for (k = 0; k < tops && !t.stopped; k++) {
				CU_ASSERT_FATAL(sim_run(&p, &o, rng, &em, &s, &t) == 0);
				o.root = sim_below(rng, nfuncs);
			}
			if (!refused[mode] &&
			    simc_compare(&fs, &s, &t, t.stopped ? SIMC_TRUNCATED : 0, msg,
					 sizeof(msg), &nev)) {
				fprintf(stderr, "\nproperty: %s mode, program %llu: %s\n",
					mode ? "bits" : "witness", (unsigned long long)st->programs,
					msg);
				ok = 0;
			}
			for (i = 0; i < nfuncs && ok && mode == 0; i++) {
				if (check_profiles(&p, i, weight[i], &t, msg, sizeof(msg))) {
					fprintf(stderr, "\nproperty: program %llu: %s\n",
						(unsigned long long)st->programs, msg);
					ok = 0;
				}
			}
			if (mode == 0)
				coverage(&p, &s, &t, st);
			st->executions += !refused[mode];
			st->events += nev;
			st->bits[mode] += s.nbits;
			for (k = 0; mode == 0 && !refused[0] && framed && k < s.nmarkers; k++)
				st->nested_enters += s.markers[k].type == REGEN_M_ENTER &&
						     s.markers[k].arg == REGEN_ENTER_NESTED;
			if (mode == 0 && !refused[0]) {
				if (framed) {
					st->framed_bits += s.nbits;
					st->framed_execs += nev;
				}
				if (implicit) {
					st->implicit_bits += s.nbits;
					st->implicit_execs += nev;
				} else if (entry) {
					st->entry_bits += s.nbits;
					st->entry_execs += nev;
				} else {
					st->plain_bits += s.nbits;
					st->plain_execs += nev;
				}
			}
			st->stopped += t.stopped;
			sim_truth_free(&t, &p);
			sim_stream_free(&s);
		}
		simc_funcs_free(arr, fs.nfuncs);
	}
	CU_ASSERT(ok);
	for (i = 0; i < nfuncs; i++) {
		memset(&p.funcs[i].enc, 0, sizeof(p.funcs[i].enc));
		encoding_free(&wit[i]);
		encoding_free(&bits[i]);
		free(weight[i]);
	}
	sim_free(&p);
}

static void test_random_programs(void)
{
	uint64_t rng = unit_seed() * 0x9e3779b97f4a7c15ull + 1;
	struct stats st;

	memset(&st, 0, sizeof(st));
	while (st.cfgs < MIN_CFGS && !CU_get_number_of_failures())
		one_program(&rng, &st);
	printf("\nproperty: %llu CFGs in %llu programs, %llu executions regenerated and checked (%llu stopped early), "
	       "%llu events, %llu witness bits, %llu predicate bits, seed %lu\n",
	       (unsigned long long)st.cfgs, (unsigned long long)st.programs,
	       (unsigned long long)st.executions, (unsigned long long)st.stopped,
	       (unsigned long long)st.events, (unsigned long long)st.bits[0],
	       (unsigned long long)st.bits[1], unit_seed());
	printf("property: refused by the timing rule: %llu CFGs (witness), %llu (bits); "
	       "without vertex emissions %llu and %llu; %llu vertex emissions placed\n",
	       (unsigned long long)st.refused[0], (unsigned long long)st.refused[1],
	       (unsigned long long)st.refused_plain[0], (unsigned long long)st.refused_plain[1],
	       (unsigned long long)st.vertex_emits);
	printf("property: blockers by a minimum cut: %llu encodings changed, %llu vertex "
	       "witnesses stood in for the blockers of a call vertex\n",
	       (unsigned long long)st.cut_changed, (unsigned long long)st.merged);
	CU_ASSERT(st.merged > 0 && st.cut_changed > 0);
	printf("property: %llu critical edges marked unobservable (witness mode), no witness on "
	       "any; %llu CFGs refused because of them\n", (unsigned long long)st.unobs_edges,
	       (unsigned long long)st.unobs_refused);
	/* bits refuses more: gotos out of call vertices make call+predicate vertices */
	CU_ASSERT((st.refused[0] - st.unobs_refused) * 20 < st.cfgs && st.refused[1] * 8 < st.cfgs);
	CU_ASSERT(st.unobs_edges > 0 && st.unobs_refused * 10 < st.cfgs);
	printf("property: %llu witnesses of the spanning tree dropped in %llu CFGs "
	       "(witness_prune.c), every plan a subset of the tree's\n",
	       (unsigned long long)st.pruned, (unsigned long long)st.pruned_cfgs);
	CU_ASSERT(st.pruned > 0);
	printf("property: entry witnesses: %llu programs planned with them, %llu placed; "
	       "witness bits per regenerated event %.3f with, %.3f without\n",
	       (unsigned long long)st.entry_programs, (unsigned long long)st.entry_wits,
	       st.entry_execs ? (double)st.entry_bits / (double)st.entry_execs : 0.0,
	       st.plain_execs ? (double)st.plain_bits / (double)st.plain_execs : 0.0);
	CU_ASSERT(st.entry_programs * 5 > st.programs && st.entry_wits > 0);
	printf("property: implicit entries: %llu programs planned with entered calls, %llu "
	       "placed, %llu activations without an ENTER; witness bits per regenerated "
	       "event %.3f\n",
	       (unsigned long long)st.implicit_programs, (unsigned long long)st.entered_calls,
	       (unsigned long long)st.implicit_enters,
	       st.implicit_execs ? (double)st.implicit_bits / (double)st.implicit_execs : 0.0);
	CU_ASSERT(st.implicit_programs * 5 > st.programs && st.entered_calls > 0 &&
		  st.implicit_enters > 0);
	printf("property: framed calls: %llu programs planned with them, %llu placed, %llu "
	       "ENTERs named a traced frame, %llu implicit calls to callees not closed kept "
	       "blocked; witness bits per regenerated event %.3f; %llu programs named frames "
	       "with their calls blocked\n",
	       (unsigned long long)st.framed_programs, (unsigned long long)st.framed_calls,
	       (unsigned long long)st.nested_enters, (unsigned long long)st.blocked_calls,
	       st.framed_execs ? (double)st.framed_bits / (double)st.framed_execs : 0.0,
	       (unsigned long long)st.frames_programs);
	CU_ASSERT(st.framed_programs * 8 > st.programs && st.framed_calls > 0 &&
		  st.nested_enters > 0 && st.blocked_calls > 0 &&
		  st.frames_programs * 8 > st.programs);
	printf("property: coverage: %llu irreducible CFGs, %llu back edges, %llu call vertices, "
	       "%llu recursive activations, %llu ENTERs through untraced code, "
	       "%llu ENTERs sharing a bit position, tail calls to %llu traced and %llu untraced "
	       "functions\n",
	       (unsigned long long)st.irreducible, (unsigned long long)st.loops,
	       (unsigned long long)st.calls, (unsigned long long)st.recursive,
	       (unsigned long long)st.via_untraced, (unsigned long long)st.shared_pos,
	       (unsigned long long)st.tail_traced, (unsigned long long)st.tail_untraced);
	CU_ASSERT(st.irreducible && st.loops && st.recursive && st.via_untraced && st.shared_pos);
	CU_ASSERT(st.tail_traced && st.tail_untraced);
	CU_ASSERT(st.cfgs >= MIN_CFGS);
}

UNIT_SUITE(property,
	   { "random programs: encode, regenerate, profile", test_random_programs })
