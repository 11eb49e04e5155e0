// SPDX-License-Identifier: GPL-2.0
/*
 * Path numbering: the lecture slides' and the 1996 paper's examples, back
 * edges, call cuts, overflow refusal, and on random graphs the run-time
 * oracle: replaying the planned actions along every path emits its number
 * exactly once.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/graph.h>
#include <pathtrace/pathnum.h>

#include "unit.h"

static void make_graph(struct graph *g, uint32_t nv, const uint32_t (*e)[2], uint32_t ne,
		       uint32_t entry, uint32_t exit, uint32_t calls_mask)
{
	uint32_t i;

	graph_init(g);
	for (i = 0; i < nv; i++)
		graph_add_vertex(g, (calls_mask >> i) & 1 ? GRAPH_V_CALL : 0);
	for (i = 0; i < ne; i++)
		CU_ASSERT_FATAL(graph_add_edge(g, e[i][0], e[i][1]) >= 0);
	CU_ASSERT_FATAL(graph_finish(g, entry, exit) == 0);
}

/*
 * Replays the run-time actions of every DAG path: the register starts at 0,
 * ADD adds, EMIT emits register + value and resets. Exactly one emission per
 * path, equal to its number, and the register is 0 afterwards.
 */
static int replay_all_paths(const struct pathnum *p)
{
	uint32_t *edges = malloc((p->dag.nv + 1) * sizeof(*edges));
	uint64_t id, limit = p->npaths < 5000 ? p->npaths : 5000;
	int bad = 0;

	for (id = 0; id < limit; id++) {
		int n = pathnum_decode(p, id, edges, p->dag.nv + 1), i, emits = 0;
		uint64_t r = 0, out = 0;

		if (n <= 0 || pathnum_value(p, edges, n) != id) {
			bad++;
			continue;
		}
		/* the back edge before a path that starts at w set its START increment */
		if (p->kind[edges[0]] == PATHNUM_START)
			r = p->inc[edges[0]];
		for (i = 0; i < n; i++) {
			uint32_t e = edges[i];

			/* after a call a path must start with the register at 0 */
			if (p->kind[e] == PATHNUM_START &&
			    (p->act[e] || (p->chord[e] && p->call_start[p->dag.edges[e].dst])))
				bad++;
			if (p->act[e] & PATHNUM_ACT_ADD)
				r += p->add[e];
			if (p->act[e] & PATHNUM_ACT_EMIT) {
				out = r + p->emit[e];
				r = 0;
				emits++;
			}
		}
		if (emits != 1 || out != id || r != 0)
			bad++;
	}
	free(edges);
	return bad;
}

/* Slides 14-17: P0 = 1,2,4,5,7 ... P3 = 1,3,4,6,7, numbered 0..3. */
static void test_slides_four_paths(void)
{
	static const uint32_t e[][2] = {
		{ 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 }, { 3, 4 }, { 3, 5 }, { 4, 6 }, { 5, 6 },
	};
	static const uint32_t want[4][4] = {
		{ 0, 1, 3, 4 }, { 0, 1, 3, 5 }, { 0, 2, 3, 4 }, { 0, 2, 3, 5 },
	};
	struct graph g;
	struct pathnum p;
	uint32_t blocks[8];
	uint64_t id;

	make_graph(&g, 7, e, 8, 0, 6, 0);
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, NULL, NULL), 0);
	CU_ASSERT_EQUAL(p.npaths, 4);
	CU_ASSERT_EQUAL(p.width, 2);
	/* Val: the slides' r += 1 on 4->6 and r = 2 on 1->3 */
	CU_ASSERT_EQUAL(p.val[p.cfg[1].dag], 2);
	CU_ASSERT_EQUAL(p.val[p.cfg[5].dag], 1);
	CU_ASSERT_EQUAL(p.val[p.cfg[0].dag] + p.val[p.cfg[2].dag] + p.val[p.cfg[3].dag] +
			p.val[p.cfg[4].dag] + p.val[p.cfg[6].dag] + p.val[p.cfg[7].dag], 0);
	for (id = 0; id < 4; id++) {
		CU_ASSERT_EQUAL(pathnum_blocks(&p, id, blocks, 8), 4);
		CU_ASSERT(!memcmp(blocks, want[id], sizeof(want[id])));
	}
	CU_ASSERT_EQUAL(pathnum_blocks(&p, 4, blocks, 8), -PT_EINVAL);
	CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
	pathnum_free(&p);
	graph_free(&g);
}

/*
 * Slides 19-30 / the 1996 paper's Figure 2: A..F with NumPaths 6,4,2,2,1,1
 * and non-zero Val 2, 2, 1 (slide 54). Out-edges are listed in the paper's
 * order (A->C before A->B, D->F before D->E), which gives its encoding
 * table: ACDF 0, ACDEF 1, ABCDF 2, ABCDEF 3, ABDF 4, ABDEF 5. Slide 55 asks
 * for paths 5 and 3.
 */
static void test_paper_six_paths(void)
{
	enum { A, B, C, D, E, F };
	static const uint32_t e[][2] = {
		{ A, C }, { A, B }, { B, C }, { B, D }, { C, D }, { D, F }, { D, E }, { E, F },
	};
	static const uint64_t np[6] = { 6, 4, 2, 2, 1, 1 };
	struct graph g;
	struct pathnum p;
	uint32_t blocks[8], v;

	make_graph(&g, 6, e, 8, A, F, 0);
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, NULL, NULL), 0);
	for (v = 0; v < 6; v++)
		CU_ASSERT_EQUAL(p.numpaths[v], np[v]);
	CU_ASSERT_EQUAL(p.val[p.cfg[1].dag], 2);	/* A->B */
	CU_ASSERT_EQUAL(p.val[p.cfg[3].dag], 2);	/* B->D */
	CU_ASSERT_EQUAL(p.val[p.cfg[6].dag], 1);	/* D->E */
	CU_ASSERT_EQUAL(pathnum_blocks(&p, 5, blocks, 8), 4);	/* ABDE(F) */
	CU_ASSERT(blocks[0] == A && blocks[1] == B && blocks[2] == D && blocks[3] == E);
	CU_ASSERT_EQUAL(pathnum_blocks(&p, 3, blocks, 8), 5);	/* ABCDE(F) */
	CU_ASSERT(blocks[0] == A && blocks[1] == B && blocks[2] == C && blocks[3] == D &&
		  blocks[4] == E);
	CU_ASSERT_EQUAL(pathnum_blocks(&p, 0, blocks, 8), 3);	/* ACD(F) */
	CU_ASSERT(blocks[0] == A && blocks[1] == C && blocks[2] == D);
	CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
	pathnum_free(&p);
	graph_free(&g);
}

/* A loop 1 <-> 2: the back edge 2->1 becomes 2->EXIT and ENTRY->1. */
static void test_back_edge(void)
{
	static const uint32_t e[][2] = { { 0, 1 }, { 1, 2 }, { 2, 1 }, { 2, 3 } };
	struct graph g;
	struct pathnum p;
	uint32_t blocks[8];
	uint32_t s;

	make_graph(&g, 4, e, 4, 0, 3, 0);
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, NULL, NULL), 0);
	CU_ASSERT_EQUAL(p.cfg[2].role, PATHNUM_ROLE_BACK);
	CU_ASSERT_EQUAL(p.kind[p.cfg[2].dag], PATHNUM_BACK_END);
	s = p.cfg[2].start;
	CU_ASSERT_FATAL(s != GRAPH_NONE);
	CU_ASSERT_EQUAL(p.kind[s], PATHNUM_START);
	CU_ASSERT_EQUAL(p.dag.edges[s].src, 0);
	CU_ASSERT_EQUAL(p.dag.edges[s].dst, 1);
	CU_ASSERT_EQUAL(p.chord[s], 0);
	CU_ASSERT_EQUAL(p.inc[s], 0);
	/* ENTRY..back edge, ENTRY..exit, 1..back edge, 1..exit */
	CU_ASSERT_EQUAL(p.npaths, 4);
	CU_ASSERT_EQUAL(p.width, 2);
	CU_ASSERT_EQUAL(pathnum_blocks(&p, p.val[s], blocks, 8), 2);
	CU_ASSERT(blocks[0] == 1 && blocks[1] == 2);
	CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
	pathnum_free(&p);
	graph_free(&g);
}

/* A call vertex ends a path; the next starts after it. */
static void test_call_cut(void)
{
	static const uint32_t e[][2] = { { 0, 1 }, { 1, 2 }, { 1, 4 }, { 2, 3 }, { 3, 4 } };
	static const uint32_t e1[][2] = { { 0, 1 } };
	struct graph g;
	struct pathnum p;

	make_graph(&g, 5, e, 5, 0, 4, 1u << 1);
	CU_ASSERT_EQUAL(pathnum_build(&p, &g, NULL, NULL), -PT_ENOTSUP);
	graph_free(&g);

	/* 0 -> 1(call) -> 2 -> 3 -> EXIT and 0 -> 2 */
	{
		static const uint32_t e2[][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 }, { 2, 3 }, { 3, 4 } };

		make_graph(&g, 5, e2, 5, 0, 4, 1u << 1);
		CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, NULL, NULL), 0);
		CU_ASSERT_EQUAL(p.cfg[2].role, PATHNUM_ROLE_CALL);
		CU_ASSERT(p.call_end[1] != GRAPH_NONE);
		CU_ASSERT_EQUAL(p.kind[p.call_end[1]], PATHNUM_CALL_END);
		/* 0-1|call, 0-2-3-EXIT, start 2-3-EXIT */
		CU_ASSERT_EQUAL(p.npaths, 3);
		CU_ASSERT_EQUAL(p.width, 2);
		CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
		pathnum_free(&p);
		graph_free(&g);
	}
	/* The entry block calls and returns: no place after the call. */
	make_graph(&g, 2, e1, 1, 0, 1, 1u << 0);
	CU_ASSERT_EQUAL(pathnum_build(&p, &g, NULL, NULL), -PT_ENOTSUP);
	graph_free(&g);
	/* A call vertex returning straight to EXIT: no bit after its call. */
	{
		static const uint32_t e3[][2] = { { 0, 1 }, { 1, 2 } };

		make_graph(&g, 3, e3, 2, 0, 2, 1u << 1);
	}
	CU_ASSERT_EQUAL(pathnum_build(&p, &g, NULL, NULL), -PT_ENOTSUP);
	CU_ASSERT(strstr(p.reason, "straight to EXIT") != NULL);
	graph_free(&g);
	/* ENTRY calls, then a loop at 1: the START edge of 1 is set by the
	 * back edge (it cannot be forced next to the forced ENTRY->1). */
	{
		static const uint32_t e4[][2] = { { 0, 1 }, { 1, 2 }, { 2, 1 }, { 2, 3 } };
		static const uint64_t c4[4] = { 0, 0, 100, 100 };
		uint32_t st;

		make_graph(&g, 4, e4, 4, 0, 3, 1u << 0);
		CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, c4, NULL), 0);
		st = p.cfg[2].start;
		CU_ASSERT_FATAL(st != GRAPH_NONE);
		CU_ASSERT(p.chord[st]);
		CU_ASSERT(!p.chord[p.cfg[0].dag]);
		if (p.inc[st]) {
			CU_ASSERT(p.act[p.cfg[2].dag] & PATHNUM_ACT_SET);
			CU_ASSERT_EQUAL(p.set[p.cfg[2].dag], p.inc[st]);
		}
		CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
		pathnum_free(&p);
		graph_free(&g);
	}
	/* One path through ENTRY's (uncut) call: still one bit (runtime.md). */
	{
		static const uint32_t e3[][2] = { { 0, 1 }, { 1, 2 } };

		make_graph(&g, 3, e3, 2, 0, 2, 1u << 0);
	}
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, NULL, NULL), 0);
	CU_ASSERT_EQUAL(p.npaths, 1);
	CU_ASSERT_EQUAL(p.width, 1);
	pathnum_free(&p);
	graph_free(&g);
	/* One path, no call: zero bits. */
	make_graph(&g, 2, e1, 1, 0, 1, 0);
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, NULL, NULL), 0);
	CU_ASSERT_EQUAL(p.width, 0);
	pathnum_free(&p);
	graph_free(&g);
}

/* A chain of n diamonds has 2^n paths. */
static int diamonds(struct graph *g, unsigned int n, struct pathnum *p)
{
	uint32_t i;
	int err;

	graph_init(g);
	for (i = 0; i < 3 * n + 1; i++)
		graph_add_vertex(g, 0);
	for (i = 0; i < n; i++) {
		graph_add_edge(g, 3 * i, 3 * i + 1);
		graph_add_edge(g, 3 * i, 3 * i + 2);
		graph_add_edge(g, 3 * i + 1, 3 * i + 3);
		graph_add_edge(g, 3 * i + 2, 3 * i + 3);
	}
	graph_finish(g, 0, 3 * n);
	err = pathnum_build(p, g, NULL, NULL);
	return err;
}

static void test_overflow_refused(void)
{
	struct graph g;
	struct pathnum p;

	CU_ASSERT_EQUAL(diamonds(&g, 63, &p), 0);
	CU_ASSERT_EQUAL(p.npaths, 1ull << 63);
	CU_ASSERT_EQUAL(p.width, 63);
	CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
	pathnum_free(&p);
	graph_free(&g);
	CU_ASSERT_EQUAL(diamonds(&g, 64, &p), -PT_EOVERFLOW);
	CU_ASSERT(strstr(p.reason, "never wrapped") != NULL);
	graph_free(&g);
	CU_ASSERT_EQUAL(diamonds(&g, 80, &p), -PT_EOVERFLOW);
	graph_free(&g);
}

/* The slides' chords: cheap 1->3 and 4->6 become chords with r += 2, r += 1. */
static void test_increments_follow_cost(void)
{
	static const uint32_t e[][2] = {
		{ 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 }, { 3, 4 }, { 3, 5 }, { 4, 6 }, { 5, 6 },
	};
	static const uint64_t cost[8] = { 100, 1, 100, 100, 100, 1, 0, 0 };
	struct graph g;
	struct pathnum p;
	uint32_t e13, e46;

	make_graph(&g, 7, e, 8, 0, 6, 0);
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, cost, NULL), 0);
	e13 = p.cfg[1].dag;
	e46 = p.cfg[5].dag;
	CU_ASSERT(p.chord[e13]);
	CU_ASSERT_EQUAL(p.inc[e13], 2);
	CU_ASSERT_EQUAL(p.act[e13], PATHNUM_ACT_ADD);
	/* 4->6 is the tree edge that reaches 6; the end 6->7 carries + 1 */
	CU_ASSERT(!p.chord[e46]);
	CU_ASSERT_EQUAL(p.emit[p.cfg[7].dag], 1);
	CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
	pathnum_free(&p);
	graph_free(&g);
}

/* Count at the last chord: the end EMIT moves onto the chords into v. */
static void test_emit_at_last_chord(void)
{
	/* 0 -> {1, 2} -> 3 -> EXIT(4); 3's only out-edge is the end. */
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 }, { 3, 4 } };
	static const uint64_t cost[5] = { 100, 100, 1, 1, 0 };
	struct graph g;
	struct pathnum p;
	uint32_t d13, d23, d34;

	make_graph(&g, 5, e, 5, 0, 4, 0);
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, cost, NULL), 0);
	d13 = p.cfg[2].dag;
	d23 = p.cfg[3].dag;
	d34 = p.cfg[4].dag;
	/* one of 1->3, 2->3 is a chord with an increment; it cannot carry
	 * the EMIT alone because the other reaches 3 without a probe */
	CU_ASSERT(p.act[d34] & PATHNUM_ACT_EMIT);
	CU_ASSERT(!(p.act[d13] & PATHNUM_ACT_EMIT) && !(p.act[d23] & PATHNUM_ACT_EMIT));
	CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
	pathnum_free(&p);
	graph_free(&g);

	/* 0 -> {1 -> 3, 2 -> 3'}: both predecessors of the ends are chords */
	{
		static const uint32_t e2[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 4 },
						  { 3, 5 }, { 4, 5 }, { 0, 3 } };
		static const uint64_t c2[7] = { 100, 100, 1, 1, 0, 0, 1 };

		make_graph(&g, 6, e2, 7, 0, 5, 0);
		CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, c2, NULL), 0);
		CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
		/* 3 is entered by 1->3 and 0->3: if both carry increments the end
		 * 3->5 has no action left */
		if ((p.act[p.cfg[2].dag] | p.act[p.cfg[6].dag]) == PATHNUM_ACT_EMIT &&
		    (p.act[p.cfg[2].dag] & p.act[p.cfg[6].dag]))
			CU_ASSERT_EQUAL(p.act[p.cfg[4].dag], 0);
		pathnum_free(&p);
		graph_free(&g);
	}
}

/*
 * The end's own probe costs more than one on the tree edge into its source:
 * the EMIT moves onto both in-edges (the chord's ADD and the tree edge's
 * new probe) and the end keeps no action; a cheap end stays where it is.
 */
static void test_emit_before_expensive_end(void)
{
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 }, { 3, 4 } };
	static const uint64_t cost[5] = { 100, 100, 1, 1, 50 }, cheap[5] = { 100, 100, 5, 5, 4 };
	struct graph g;
	struct pathnum p;

	make_graph(&g, 5, e, 5, 0, 4, 0);
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, cost, NULL), 0);
	CU_ASSERT_EQUAL(p.act[p.cfg[2].dag], PATHNUM_ACT_EMIT);
	CU_ASSERT_EQUAL(p.act[p.cfg[3].dag], PATHNUM_ACT_EMIT);
	CU_ASSERT_EQUAL(p.act[p.cfg[4].dag], 0);
	CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
	pathnum_free(&p);
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&p, &g, cheap, NULL), 0);
	CU_ASSERT_EQUAL(p.act[p.cfg[4].dag], PATHNUM_ACT_EMIT);
	CU_ASSERT(!(p.act[p.cfg[2].dag] & PATHNUM_ACT_EMIT) &&
		  !(p.act[p.cfg[3].dag] & PATHNUM_ACT_EMIT));
	CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
	pathnum_free(&p);
	graph_free(&g);
}

/* Random graphs (reducible or not, loops, calls): the run-time replay. */
static void test_random_graphs(void)
{
	unsigned int seed = (unsigned int)unit_seed(), t, ok = 0, refused = 0;

	srand(seed);
	for (t = 0; t < 2000; t++) {
		struct graph g;
		struct pathnum p;
		uint32_t nv = 2 + rand() % 14, v, i, ne;
		uint64_t *cost, call_cost[16];
		int err;

		graph_init(&g);
		for (v = 0; v < nv; v++)
			graph_add_vertex(&g, v && v + 1 < nv && rand() % 5 == 0 ? GRAPH_V_CALL : 0);
		for (v = 0; v + 1 < nv; v++) {
			uint32_t k = 1 + rand() % 2;

			/* a call returns to a block, never straight to EXIT */
			if ((g.vflags[v] & GRAPH_V_CALL) && v + 2 < nv)
				graph_add_edge(&g, v, v + 1 + rand() % (nv - v - 2));
			else
				graph_add_edge(&g, v, v + 1 + rand() % (nv - v - 1));
			for (i = 1; i < k && !(g.vflags[v] & GRAPH_V_CALL); i++)
				graph_add_edge(&g, v, rand() % (nv - 1) == 0 ? nv - 1 :
					       (uint32_t)rand() % nv == 0 ? 0 : 1 + rand() % (nv - 1));
		}
		graph_finish(&g, 0, nv - 1);
		ne = g.ne;
		cost = malloc((ne + 1) * sizeof(*cost));
		for (i = 0; i < ne; i++)
			cost[i] = rand() % 50;
		for (v = 0; v < nv; v++)
			call_cost[v] = rand() % 50;
		err = pathnum_build(&p, &g, cost, t % 2 ? call_cost : NULL);
		if (err) {
			if (err != -PT_ENOTSUP)
				fprintf(stderr, "err %d: %s\n", err, p.reason);
			CU_ASSERT(err == -PT_ENOTSUP);
			refused++;
		} else {
			CU_ASSERT_EQUAL(replay_all_paths(&p), 0);
			ok++;
			pathnum_free(&p);
		}
		free(cost);
		graph_free(&g);
	}
	CU_ASSERT(ok > 1000);
	fprintf(stderr, "[pathnum: %u random graphs numbered, %u refused, seed %u] ", ok,
		refused, seed);
}

UNIT_SUITE(pathnum,
	   { "slides: four paths 0..3", test_slides_four_paths },
	   { "1996 paper: six paths, decode 5 and 3", test_paper_six_paths },
	   { "back edge -> ENTRY->h and u->EXIT", test_back_edge },
	   { "call vertices cut paths", test_call_cut },
	   { "NumPaths overflow refused", test_overflow_refused },
	   { "increments follow probe cost", test_increments_follow_cost },
	   { "emit at the last chord", test_emit_at_last_chord },
	   { "emit before an expensive end", test_emit_before_expensive_end },
	   { "random graphs: replay emits every number", test_random_graphs })
