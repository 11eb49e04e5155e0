// SPDX-License-Identifier: GPL-2.0
/*
 * The regeneration engine on hand-made streams: ENTER attribution at call
 * vertices (docs/runtime.md), gaps and resync, return-address checks,
 * truncation, the callback's stop, the bit reader, and the Fig. 14 graph
 * traced with witnesses while B calls a traced function (Section 4.2),
 * tail calls (path_openat -> vfs_open -jmp-> do_dentry_open), an entry
 * witness: a call witnessed by its traced callee's ENTER (encoding.h), and
 * a return into a traced caller the stream does not hold.
 */
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>
#include "sim.h"
#include "pathtrace_abi.h"

#include "paper_graphs.h"
#include "regen.h"
#include "unit.h"

struct tfunc {
	struct graph g;
	struct encoding enc;
	uint64_t ret[8];
	uint32_t callee[8];
};

enum { ID_F = 1, ID_G = 2, ID_H = 3, ID_K = 4, ID_P14 = 5, ID_E = 6, NFUNC = 6 };

static struct tfunc tf[NFUNC];
static struct regen_func rf[NFUNC];
static struct regen_funcs fs = { .funcs = rf, .nfuncs = NFUNC };

static void setup(void)
{
	static const uint32_t one[][2] = { { 0, 1 } };
	static const uint32_t two[][2] = { { 0, 2 }, { 2, 1 } };
	static const uint32_t diamond[][2] = { { 0, 2 }, { 0, 3 }, { 2, 1 }, { 3, 1 } };
	static const uint32_t call0[3] = { GRAPH_V_CALL, 0, 0 };
	/* E: ENTRY branches to A (calls G directly) or B; both join at J */
	static const uint32_t armed[][2] = { { 0, 2 }, { 0, 3 }, { 2, 4 }, { 3, 4 }, { 4, 1 } };
	static const uint32_t call2[5] = { 0, 0, GRAPH_V_CALL, 0, 0 };
	static const uint8_t ewit2[5] = { 0, 0, 1, 0, 0 };
	static const uint64_t w14[F14_NE] = { 1, 1, 1, 1, 1, 1, 1 };
	uint32_t i, v;

	memset(tf, 0, sizeof(tf));
	pg_build(&tf[0].g, 3, two, 2, 0, 1, call0);	/* F: calls indirectly */
	pg_build(&tf[1].g, 2, one, 1, 0, 1, NULL);	/* G: a leaf, no bits */
	pg_build(&tf[2].g, 4, diamond, 4, 0, 1, NULL);	/* H: one predicate */
	pg_build(&tf[3].g, 3, two, 2, 0, 1, call0);	/* K: calls G directly */
	pg_fig14(&tf[4].g, GRAPH_V_CALL);		/* Fig. 14, B calls G */
	pg_build(&tf[5].g, 5, armed, 5, 0, 1, call2);	/* E: an entry witness at A */
	for (i = 0; i < NFUNC; i++) {
		struct encoding_opts eo = { .enter_witnessed = ewit2 };
		int err;

		for (v = 0; v < 8; v++)
			tf[i].callee[v] = UINT32_MAX;
		err = i == 4 ? encoding_witness(&tf[i].g, w14, &tf[i].enc) :
		      i == 5 ? encoding_witness_opts(&tf[i].g, NULL, &eo, &tf[i].enc) :
			       encoding_bits(&tf[i].g, &tf[i].enc);

		CU_ASSERT_FATAL(err == 0);
		rf[i] = (struct regen_func){
			.func_id = i + 1, .name = "t", .g = &tf[i].g, .call_ret_addr = tf[i].ret,
			.call_callee = tf[i].callee,
			.ops = i >= 4 ? &regen_decode_witness_ops : &regen_decode_bits_ops,
			.model = &tf[i].enc,
		};
	}
	tf[5].ret[2] = 0x2468;
	tf[5].callee[2] = ID_G;
	tf[3].ret[0] = 0x1234;
	tf[3].callee[0] = ID_G;
	tf[4].ret[F14_B] = 0x5678;
	tf[4].callee[F14_B] = ID_G;
}

static void teardown(void)
{
	uint32_t i;

	for (i = 0; i < NFUNC; i++) {
		encoding_free(&tf[i].enc);
		graph_free(&tf[i].g);
	}
}

struct ev {
	uint32_t type, func, block, depth;
	int reason;
};

struct got {
	struct ev ev[64];
	uint32_t n;
	int stop_at;
};

static int collect(void *ctx, const struct regen_event *e)
{
	struct got *g = ctx;

	if (g->n < 64)
		g->ev[g->n++] = (struct ev){ e->type, e->func, e->block, e->depth, e->reason };
	return g->stop_at && (int)g->n == g->stop_at ? 7 : 0;
}

static void expect(struct sim_stream *s, const struct ev *want, uint32_t n)
{
	struct regen_stream rs;
	struct got got;
	uint32_t i;

	memset(&got, 0, sizeof(got));
	sim_stream_view(s, 1, &rs);
	CU_ASSERT_EQUAL_FATAL(regen_stream(&fs, &rs, collect, &got), 0);
	CU_ASSERT_EQUAL(got.n, n);
	for (i = 0; i < n && i < got.n; i++) {
		CU_ASSERT_EQUAL(got.ev[i].type, want[i].type);
		CU_ASSERT_EQUAL(got.ev[i].func, want[i].func);
		CU_ASSERT_EQUAL(got.ev[i].depth, want[i].depth);
		if (want[i].type == REGEN_EV_BLOCK || want[i].type == REGEN_EV_TRUNCATED)
			CU_ASSERT_EQUAL(got.ev[i].block, want[i].block);
		if (want[i].type == REGEN_EV_GAP || want[i].type == REGEN_EV_TRUNCATED)
			CU_ASSERT_EQUAL(got.ev[i].reason, want[i].reason);
	}
	sim_stream_free(s);
}

#define EN(f, d) { REGEN_EV_ENTER, f, 0, d, 0 }
#define BL(f, b, d) { REGEN_EV_BLOCK, f, b, d, 0 }
#define EX(f, d) { REGEN_EV_EXIT, f, 0, d, 0 }
#define GAP(f, d, r) { REGEN_EV_GAP, f, 0, d, r }
#define RS(f) { REGEN_EV_RESYNC, f, 0, 0, 0 }
#define TR(f, b, d) { REGEN_EV_TRUNCATED, f, b, d, -PT_ETRUNC }

/*
 * F is a call vertex, then one block, then EXIT: its separator bit
 * tells "F called G" (ENTER G before the bit) from "F returned, then its
 * untraced caller called G" (ENTER G after it).
 */
static void test_attribution(void)
{
	struct sim_stream s;
	const struct ev nested[] = { EN(ID_F, 0), BL(ID_F, 0, 0), EN(ID_G, 1), BL(ID_G, 0, 1),
				     EX(ID_G, 1), BL(ID_F, 2, 0), TR(ID_F, 2, 0) };
	const struct ev after[] = { EN(ID_F, 0), BL(ID_F, 0, 0), BL(ID_F, 2, 0), EX(ID_F, 0),
				    EN(ID_G, 0), BL(ID_G, 0, 0), TR(ID_G, 0, 0) };
	const struct ev two[] = { EN(ID_F, 0), BL(ID_F, 0, 0), EN(ID_G, 1), BL(ID_G, 0, 1),
				  EX(ID_G, 1), EN(ID_G, 1), BL(ID_G, 0, 1), EX(ID_G, 1),
				  BL(ID_F, 2, 0), TR(ID_F, 2, 0) };

	CU_ASSERT_EQUAL(tf[0].enc.edge_role[0], ENC_ROLE_SEPARATOR);
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_F, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x77);
	sim_stream_emit(&s, 1, 1);
	expect(&s, nested, 7);
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_F, 0, 0x99);
	sim_stream_emit(&s, 1, 1);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x77);
	expect(&s, after, 7);
	/* an untraced callee of F entered G twice: both are F's children */
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_F, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x77);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x77);
	sim_stream_emit(&s, 1, 1);
	expect(&s, two, 10);
}

/* A direct call must enter its callee once, from the right return address. */
static void test_direct_call_checks(void)
{
	struct sim_stream s;
	const struct ev good[] = { EN(ID_K, 0), BL(ID_K, 0, 0), EN(ID_G, 1), BL(ID_G, 0, 1),
				   EX(ID_G, 1), BL(ID_K, 2, 0), TR(ID_K, 2, 0) };
	const struct ev wrong_ret[] = { EN(ID_K, 0), BL(ID_K, 0, 0),
					GAP(ID_K, 0, -PT_EMISMATCH), RS(ID_G), EN(ID_G, 0),
					BL(ID_G, 0, 0), TR(ID_G, 0, 0) };
	/* after a gap the rest of the stream is skipped up to an ENTER: no second GAP */
	const struct ev missing[] = { EN(ID_K, 0), BL(ID_K, 0, 0), GAP(ID_K, 0, -PT_EMISMATCH) };

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_K, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x1234);
	sim_stream_emit(&s, 1, 1);
	expect(&s, good, 7);
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_K, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x4321);
	expect(&s, wrong_ret, 7);
	/* the callee's ENTER is missing (e.g. a missed probe): no guessing */
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_K, 0, 0x99);
	sim_stream_emit(&s, 1, 1);
	expect(&s, missing, 3);
}

/* LOSS: a gap, then the engine resyncs at the next ENTER. */
static void test_loss_and_resync(void)
{
	struct sim_stream s;
	const struct ev want[] = { EN(ID_H, 0), BL(ID_H, 0, 0), GAP(ID_H, 0, -PT_EKERNEL),
				   RS(ID_H), EN(ID_H, 0), BL(ID_H, 0, 0), BL(ID_H, 3, 0),
				   TR(ID_H, 3, 0) };

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_H, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_LOSS, 0, 1, 5);
	sim_stream_emit(&s, 1, 0);	/* garbage after the loss */
	sim_stream_emit(&s, 1, 1);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_H, 0, 0x99);
	sim_stream_emit(&s, 1, 1);	/* H takes 0->3 */
	expect(&s, want, 8);
}

/*
 * An outermost activation that returns into a traced call site (K's call
 * of G, 0x1234) returns into a caller the stream does not hold (entered
 * before tracing began, or lost): what follows is not contiguous with it,
 * even an ENTER at the same bit position. Returning to untraced code, it is.
 */
static void test_orphan_return(void)
{
	struct sim_stream s;
	const struct ev orphan[] = { EN(ID_G, 0), BL(ID_G, 0, 0), EX(ID_G, 0),
				     GAP(UINT32_MAX, 0, -PT_ENOENT), RS(ID_G), EN(ID_G, 0),
				     BL(ID_G, 0, 0), TR(ID_G, 0, 0) };
	const struct ev siblings[] = { EN(ID_G, 0), BL(ID_G, 0, 0), EX(ID_G, 0), EN(ID_G, 0),
				       BL(ID_G, 0, 0), TR(ID_G, 0, 0) };

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x1234);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x1234);
	expect(&s, orphan, 8);
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x1234);
	expect(&s, siblings, 6);
}

/*
 * HIDDEN (skipped probe hits: whole executions may be absent here): an
 * activation that ends without another bit ends before it, no gap; one
 * that reads on across it was cut.
 */
static void test_hidden(void)
{
	struct sim_stream s;
	const struct ev whole[] = { EN(ID_H, 0), BL(ID_H, 0, 0), BL(ID_H, 3, 0), EX(ID_H, 0),
				    EN(ID_H, 0), BL(ID_H, 0, 0), BL(ID_H, 2, 0), TR(ID_H, 2, 0) };
	const struct ev cut[] = { EN(ID_H, 0), BL(ID_H, 0, 0), GAP(ID_H, 0, -PT_EKERNEL),
				  RS(ID_H), EN(ID_H, 0), BL(ID_H, 0, 0), BL(ID_H, 3, 0),
				  TR(ID_H, 3, 0) };

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_H, 0, 0x99);
	sim_stream_emit(&s, 1, 1);	/* H takes 0->3, then returns without a bit */
	sim_stream_marker(&s, REGEN_M_HIDDEN, 0, PT_LOSS_MISSED, 4);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_H, 0, 0x99);
	sim_stream_emit(&s, 1, 0);
	expect(&s, whole, sizeof(whole) / sizeof(whole[0]));
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_H, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_HIDDEN, 0, PT_LOSS_MISSED, 4);
	sim_stream_emit(&s, 1, 0);	/* H's bit is after the marker: cut */
	sim_stream_marker(&s, REGEN_M_ENTER, ID_H, 0, 0x99);
	sim_stream_emit(&s, 1, 1);
	expect(&s, cut, sizeof(cut) / sizeof(cut[0]));
}

/*
 * Implicit entries: K's direct call to G is listed in G's plan, so G's
 * activation starts at K's call vertex with no ENTER marker; an ENTER
 * that is there anyway (the kernel wrote it) is taken as usual.
 */
static void test_implicit_entry(void)
{
	static const uint8_t imp[3] = { 1, 0, 0 };
	struct sim_stream s;
	const struct ev want[] = { EN(ID_K, 0), BL(ID_K, 0, 0), EN(ID_G, 1), BL(ID_G, 0, 1),
				   EX(ID_G, 1), BL(ID_K, 2, 0), TR(ID_K, 2, 0) };

	rf[3].call_implicit = imp;
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_K, 0, 0x99);
	sim_stream_emit(&s, 1, 1);	/* K's separator: G returned, K went on */
	expect(&s, want, sizeof(want) / sizeof(want[0]));
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_K, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x1234);	/* written anyway */
	sim_stream_emit(&s, 1, 1);
	expect(&s, want, sizeof(want) / sizeof(want[0]));
	rf[3].call_implicit = NULL;
	/* Without the plan's say-so, a missing ENTER is a mismatch. */
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_K, 0, 0x99);
	sim_stream_emit(&s, 1, 1);
	{
		const struct ev gap_want[] = { EN(ID_K, 0), BL(ID_K, 0, 0),
					       GAP(ID_K, 0, -PT_EMISMATCH) };

		expect(&s, gap_want, 3);
	}
}

/*
 * Running out of bits inside an activation is TRUNCATED, never EXIT; and
 * at the end of a stream nothing is walked that no bit or marker proves:
 * not a leaf's bit-free way to EXIT, not past a call that may still be
 * running (a task asleep in it when tracing stopped).
 */
static void test_truncated(void)
{
	struct sim_stream s;
	const struct ev want[] = { EN(ID_H, 0), BL(ID_H, 0, 0),
				   TR(ID_H, 0, 0) };
	const struct ev leaf[] = { EN(ID_G, 0), BL(ID_G, 0, 0), TR(ID_G, 0, 0) };
	const struct ev in_call[] = { EN(ID_F, 0), BL(ID_F, 0, 0), TR(ID_F, 0, 0) };
	const struct ev callee_open[] = { EN(ID_K, 0), BL(ID_K, 0, 0), EN(ID_G, 1), BL(ID_G, 0, 1),
					  TR(ID_G, 0, 1) };
	const struct ev returned[] = { EN(ID_K, 0), BL(ID_K, 0, 0), EN(ID_G, 1), BL(ID_G, 0, 1),
				       EX(ID_G, 1), BL(ID_K, 2, 0), TR(ID_K, 2, 0) };

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_H, 0, 0x99);
	expect(&s, want, 3);
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x99);
	expect(&s, leaf, 3);
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_F, 0, 0x99);
	expect(&s, in_call, 3);
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_K, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x1234);
	expect(&s, callee_open, 5);
	/* K's separator proves G returned and K went on to block 2, no further */
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_K, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x1234);
	sim_stream_emit(&s, 1, 1);
	expect(&s, returned, 7);
}

/* Bits before the first ENTER belong to an activation not in the stream. */
static void test_leading_bits_and_stale_enter(void)
{
	struct sim_stream s;
	const struct ev lead[] = { GAP(UINT32_MAX, 0, -PT_ENOENT), RS(ID_G), EN(ID_G, 0),
				   BL(ID_G, 0, 0), TR(ID_G, 0, 0) };
	const struct ev stale[] = { EN(ID_H, 0), BL(ID_H, 0, 0), GAP(ID_H, 0, -PT_EFORMAT) };

	memset(&s, 0, sizeof(s));
	sim_stream_emit(&s, 3, 5);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x99);
	expect(&s, lead, 5);
	/* H has no call vertex, so an ENTER it reads past was never its child */
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_H, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x77);
	sim_stream_emit(&s, 1, 0);
	sim_stream_emit(&s, 1, 1);
	expect(&s, stale, 3);
}

/*
 * Fig. 14 with B calling G, witness encoded: the execution
 * P A C P B[G] A C P B[G] C EXIT, emitted edge by edge, comes back.
 */
static void test_fig14_multiprocedure(void)
{
	static const uint32_t path[] = { F14_PA, F14_AC, F14_CP, F14_PB, F14_BA, F14_AC,
					 F14_CP, F14_PB, F14_BC, F14_CEXIT };
	const struct ev want[] = {
		EN(ID_P14, 0), BL(ID_P14, F14_P, 0), BL(ID_P14, F14_A, 0), BL(ID_P14, F14_C, 0),
		BL(ID_P14, F14_P, 0), BL(ID_P14, F14_B, 0), EN(ID_G, 1), BL(ID_G, 0, 1),
		EX(ID_G, 1), BL(ID_P14, F14_A, 0), BL(ID_P14, F14_C, 0), BL(ID_P14, F14_P, 0),
		BL(ID_P14, F14_B, 0), EN(ID_G, 1), BL(ID_G, 0, 1), EX(ID_G, 1),
		BL(ID_P14, F14_C, 0), EX(ID_P14, 0),
	};
	const struct encoding *enc = &tf[4].enc;
	struct sim_stream s;
	uint32_t i;

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_P14, 0, 0x99);
	for (i = 0; i < sizeof(path) / sizeof(path[0]); i++) {
		uint32_t e = path[i];

		if (tf[4].g.edges[e].dst == F14_B) {
			sim_stream_emit(&s, enc->edge_nbits[e], enc->edge_value[e]);
			sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x5678);
			continue;
		}
		sim_stream_emit(&s, enc->edge_nbits[e], enc->edge_value[e]);
	}
	expect(&s, want, sizeof(want) / sizeof(want[0]));
}

/*
 * Fig. 14 streams cut after each emission of the execution above: the
 * blocks up to the target of the last emitting edge come back (witness
 * codes read ahead at predicates prove the way to their edge), then
 * TRUNCATED there; nothing after it. The expected events come from the
 * path, not from the decoder.
 */
static void test_fig14_cut(void)
{
	static const uint32_t path[] = { F14_PA, F14_AC, F14_CP, F14_PB, F14_BA, F14_AC,
					 F14_CP, F14_PB, F14_BC, F14_CEXIT };
	const uint32_t np = sizeof(path) / sizeof(path[0]);
	const struct encoding *enc = &tf[4].enc;
	const struct graph *g = &tf[4].g;
	uint32_t cut, i, cuts = 0;

	for (cut = 0; cut < np; cut++) {
		struct ev want[64];
		struct sim_stream s;
		uint32_t n = 0;

		if (!enc->edge_nbits[path[cut]])
			continue;	/* streams end after an emission */
		cuts++;
		memset(&s, 0, sizeof(s));
		sim_stream_marker(&s, REGEN_M_ENTER, ID_P14, 0, 0x99);
		want[n++] = (struct ev)EN(ID_P14, 0);
		want[n++] = (struct ev)BL(ID_P14, F14_P, 0);
		for (i = 0; i <= cut; i++) {
			uint32_t e = path[i], d = g->edges[e].dst;

			sim_stream_emit(&s, enc->edge_nbits[e], enc->edge_value[e]);
			if (d == g->exit) {
				want[n++] = (struct ev)EX(ID_P14, 0);
				continue;
			}
			want[n++] = (struct ev)BL(ID_P14, d, 0);
			if (d == F14_B) {
				sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x5678);
				want[n++] = (struct ev)EN(ID_G, 1);
				want[n++] = (struct ev)BL(ID_G, 0, 1);
				if (i == cut) {
					want[n++] = (struct ev)TR(ID_G, 0, 1);
					break;
				}
				want[n++] = (struct ev)EX(ID_G, 1);
			}
			if (i == cut)
				want[n++] = (struct ev)TR(ID_P14, d, 0);
		}
		expect(&s, want, n);
	}
	CU_ASSERT(cuts >= 3);
}

/*
 * The before_call hook: a decoder whose function X (call vertex 0, then
 * block 2, then EXIT) emits 2 bits (value 2) before its call. The bits are
 * read before the callee's ENTER is looked for; an ENTER recorded before
 * those bits is a gap, not a child.
 */
static int pre_calls;

static void pre_begin(const struct regen_func *f, uint64_t *state)
{
	(void)f;
	state[0] = 0;
}

static int pre_before_call(const struct regen_func *f, uint64_t *state,
			   struct regen_bitreader *br, uint32_t v, int64_t *partial)
{
	uint64_t x;

	(void)f;
	(void)v;
	(void)partial;
	pre_calls++;
	x = regen_read_bits(br, 2);
	if (br->eof)
		return -PT_ETRUNC;
	state[0] = 1;
	return x == 2 ? 0 : -PT_EFORMAT;
}

static int64_t pre_next_edge(const struct regen_func *f, uint64_t *state,
			     struct regen_bitreader *br, uint32_t v, int64_t *partial)
{
	(void)br;
	(void)partial;
	if ((f->g->vflags[v] & GRAPH_V_CALL) && !state[0])
		return -PT_EFORMAT;	/* the hook did not run first */
	return f->g->out_edges[f->g->out_start[v]];
}

static void test_before_call(void)
{
	static const uint32_t two[][2] = { { 0, 2 }, { 2, 1 } };
	static const uint32_t call0[3] = { GRAPH_V_CALL, 0, 0 };
	static const struct regen_decoder_ops pre_ops = {
		.name = "pre", .begin = pre_begin, .next_edge = pre_next_edge,
		.before_call = pre_before_call,
	};
	enum { ID_X = 9 };
	const struct ev one_child[] = { EN(ID_X, 0), BL(ID_X, 0, 0), EN(ID_G, 1), BL(ID_G, 0, 1),
					TR(ID_G, 0, 1) };
	const struct ev early[] = { EN(ID_X, 0), BL(ID_X, 0, 0), GAP(ID_X, 0, -PT_EFORMAT) };
	const struct ev none[] = { EN(ID_X, 0), BL(ID_X, 0, 0), TR(ID_X, 0, 0) };
	struct regen_func all[NFUNC + 1];
	struct regen_funcs save = fs;
	struct graph gx;
	uint64_t ret[3] = { 0 };
	uint32_t callee[3] = { UINT32_MAX, UINT32_MAX, UINT32_MAX };
	struct sim_stream s;

	pg_build(&gx, 3, two, 2, 0, 1, call0);
	memcpy(all, rf, sizeof(rf));
	all[NFUNC] = (struct regen_func){ .func_id = ID_X, .name = "x", .g = &gx,
					  .call_ret_addr = ret, .call_callee = callee,
					  .ops = &pre_ops };
	fs = (struct regen_funcs){ .funcs = all, .nfuncs = NFUNC + 1 };
	/* X's 2 bits, two children, then (after X returned) G at top level */
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_X, 0, 0x99);
	sim_stream_emit(&s, 2, 2);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x77);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x77);
	sim_stream_emit(&s, 1, 1);	/* a bit of someone after X: proves X went on */
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x77);
	pre_calls = 0;
	/* G at top level then owns the bit: a gap (-PT_ENOENT) comes first */
	{
		const struct ev with_bit[] = { EN(ID_X, 0), BL(ID_X, 0, 0), EN(ID_G, 1),
					       BL(ID_G, 0, 1), EX(ID_G, 1), EN(ID_G, 1),
					       BL(ID_G, 0, 1), EX(ID_G, 1), BL(ID_X, 2, 0),
					       EX(ID_X, 0), GAP(UINT32_MAX, 0, -PT_ENOENT),
					       RS(ID_G), EN(ID_G, 0), BL(ID_G, 0, 0),
					       TR(ID_G, 0, 0) };

		expect(&s, with_bit, 15);
	}
	CU_ASSERT_EQUAL(pre_calls, 1);	/* once per visit, not after each child */
	/* without the trailing bit: X after its children is not proven */
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_X, 0, 0x99);
	sim_stream_emit(&s, 2, 2);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x77);
	expect(&s, one_child, 5);
	/* a child's ENTER before X's pre-call bits cannot be X's: a gap */
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_X, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x77);
	sim_stream_emit(&s, 2, 2);
	expect(&s, early, 3);
	/* the stream ends before the pre-call bits */
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_X, 0, 0x99);
	expect(&s, none, 3);
	fs = save;
	graph_free(&gx);
}

static void test_callback_stops(void)
{
	struct sim_stream s;
	struct regen_stream rs;
	struct got got;

	memset(&s, 0, sizeof(s));
	memset(&got, 0, sizeof(got));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x99);
	sim_stream_view(&s, 1, &rs);
	got.stop_at = 2;
	CU_ASSERT_EQUAL(regen_stream(&fs, &rs, collect, &got), 7);
	CU_ASSERT_EQUAL(got.n, 2);
	sim_stream_free(&s);
}

static void test_bitreader(void)
{
	const uint64_t w[2] = { 0xf000000000000001ull, 0x5ull };
	struct regen_bitreader br = { .bits = w, .nbits = 67 };

	CU_ASSERT_EQUAL(regen_read_bits(&br, 1), 1);
	CU_ASSERT_EQUAL(regen_read_bits(&br, 59), 0);
	CU_ASSERT_EQUAL(regen_read_bits(&br, 6), 0x1f);	/* 4 high bits, then 1 */
	CU_ASSERT_EQUAL(br.pos, 66);
	CU_ASSERT_EQUAL(regen_read_bits(&br, 2), 0);
	CU_ASSERT(br.eof);
	CU_ASSERT_EQUAL(br.pos, 66);
}


/*
 * Tail calls (regen.h, "Tail calls"), as in the VM: path_openat (P) calls
 * vfs_open (V) directly; V ends in `jmp do_dentry_open` (D), so D's ENTER
 * comes at the position where V's activation ended, with P's return
 * address. V and D: one predicate, 0->2->EXIT returns, 0->3->EXIT is the
 * tail call (edge 3). E: a leaf D may tail-call. P: calls, then one
 * separator bit.
 */
static void test_tail_calls(void)
{
	enum { TP = 11, TV = 12, TD = 13, TE = 14, TG = 15 };
	static const uint32_t one[][2] = { { 0, 1 } };
	static const uint32_t two[][2] = { { 0, 2 }, { 2, 1 } };
	static const uint32_t diamond[][2] = { { 0, 2 }, { 0, 3 }, { 2, 1 }, { 3, 1 } };
	static const uint32_t call0[3] = { GRAPH_V_CALL, 0, 0 };
	const uint64_t R = 0xffffffff81234b7dull;	/* path_openat+0xb7d */
	struct graph g[5];
	struct encoding enc[5];
	struct regen_func trf[5];
	struct regen_funcs tfs = { .funcs = trf, .nfuncs = 5 };
	uint64_t pret[3] = { R, 0, 0 };
	uint32_t pcallee[3] = { TV, UINT32_MAX, UINT32_MAX };
	uint32_t vtail[4] = { REGEN_TAIL_NONE, REGEN_TAIL_NONE, REGEN_TAIL_NONE, TD };
	uint32_t dtail[4] = { REGEN_TAIL_NONE, REGEN_TAIL_NONE, REGEN_TAIL_NONE, TE };
	struct regen_funcs saved = fs;
	struct sim_stream s;
	uint32_t i;
	/* V returns through its tail call into D, D returns: both P's callees */
	const struct ev tail[] = { EN(TP, 0), BL(TP, 0, 0), EN(TV, 1), BL(TV, 0, 1), BL(TV, 3, 1),
				   EX(TV, 1), EN(TD, 1), BL(TD, 0, 1), BL(TD, 2, 1), EX(TD, 1),
				   BL(TP, 2, 0), TR(TP, 2, 0) };
	/* chained: V -jmp-> D -jmp-> E */
	const struct ev chain[] = { EN(TP, 0), BL(TP, 0, 0), EN(TV, 1), BL(TV, 0, 1), BL(TV, 3, 1),
				    EX(TV, 1), EN(TD, 1), BL(TD, 0, 1), BL(TD, 3, 1), EX(TD, 1),
				    EN(TE, 1), BL(TE, 0, 1), EX(TE, 1), BL(TP, 2, 0),
				    TR(TP, 2, 0) };
	/* D's ENTER with another return address: not guessed to be P's */
	const struct ev wrong_ret[] = { EN(TP, 0), BL(TP, 0, 0), EN(TV, 1), BL(TV, 0, 1),
					BL(TV, 3, 1), EX(TV, 1), GAP(TP, 0, -PT_EMISMATCH),
					RS(TD), EN(TD, 0), BL(TD, 0, 0), BL(TD, 2, 0), EX(TD, 0),
					GAP(UINT32_MAX, 0, -PT_ENOENT) };
	/* the tail call's traced target did not enter: no guessing either */
	const struct ev missing[] = { EN(TP, 0), BL(TP, 0, 0), EN(TV, 1), BL(TV, 0, 1),
				      BL(TV, 3, 1), EX(TV, 1), GAP(TP, 0, -PT_EMISMATCH) };
	/*
	 * V returned (0->2): a second ENTER at that position is not P's call;
	 * P's bit read past it is a gap (which consumes that ENTER).
	 */
	const struct ev no_tail[] = { EN(TP, 0), BL(TP, 0, 0), EN(TV, 1), BL(TV, 0, 1),
				      BL(TV, 2, 1), EX(TV, 1), GAP(TP, 0, -PT_EFORMAT) };
	/*
	 * V tail-calls untraced code, which calls G (its own return address)
	 * and then tail-calls D (P's return address): all P's callees.
	 */
	const struct ev other[] = { EN(TP, 0), BL(TP, 0, 0), EN(TV, 1), BL(TV, 0, 1), BL(TV, 3, 1),
				    EX(TV, 1), EN(TG, 1), BL(TG, 0, 1), EX(TG, 1), EN(TD, 1),
				    BL(TD, 0, 1), BL(TD, 2, 1), EX(TD, 1), BL(TP, 2, 0),
				    TR(TP, 2, 0) };
	/* P's direct callee is untraced and tail-calls D: D is P's callee */
	const struct ev untraced[] = { EN(TP, 0), BL(TP, 0, 0), EN(TD, 1), BL(TD, 0, 1),
				       BL(TD, 2, 1), EX(TD, 1), BL(TP, 2, 0), TR(TP, 2, 0) };

	pg_build(&g[0], 3, two, 2, 0, 1, call0);
	pg_build(&g[1], 4, diamond, 4, 0, 1, NULL);
	pg_build(&g[2], 4, diamond, 4, 0, 1, NULL);
	pg_build(&g[3], 2, one, 1, 0, 1, NULL);
	pg_build(&g[4], 2, one, 1, 0, 1, NULL);
	for (i = 0; i < 5; i++) {
		CU_ASSERT_FATAL(encoding_bits(&g[i], &enc[i]) == 0);
		trf[i] = (struct regen_func){
			.func_id = TP + i, .name = "t", .g = &g[i], .ops = &regen_decode_bits_ops,
			.model = &enc[i],
		};
	}
	trf[0].call_ret_addr = pret;
	trf[0].call_callee = pcallee;
	trf[1].tail_callee = vtail;
	trf[2].tail_callee = dtail;
	fs = tfs;	/* expect() regenerates fs */

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, TP, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, TV, 0, R);
	sim_stream_emit(&s, 1, 1);	/* V: 0->3, the jmp */
	sim_stream_marker(&s, REGEN_M_ENTER, TD, 0, R);
	sim_stream_emit(&s, 1, 0);	/* D: 0->2, returns to P */
	sim_stream_emit(&s, 1, 1);	/* P's separator */
	expect(&s, tail, 12);

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, TP, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, TV, 0, R);
	sim_stream_emit(&s, 1, 1);
	sim_stream_marker(&s, REGEN_M_ENTER, TD, 0, R);
	sim_stream_emit(&s, 1, 1);	/* D: 0->3, jmp E */
	sim_stream_marker(&s, REGEN_M_ENTER, TE, 0, R);
	sim_stream_emit(&s, 1, 1);
	expect(&s, chain, 15);

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, TP, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, TV, 0, R);
	sim_stream_emit(&s, 1, 1);
	sim_stream_marker(&s, REGEN_M_ENTER, TD, 0, 0x4444);
	sim_stream_emit(&s, 1, 0);
	sim_stream_emit(&s, 1, 1);
	expect(&s, wrong_ret, 13);

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, TP, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, TV, 0, R);
	sim_stream_emit(&s, 1, 1);
	sim_stream_emit(&s, 1, 1);
	expect(&s, missing, 7);

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, TP, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, TV, 0, R);
	sim_stream_emit(&s, 1, 0);	/* V: 0->2, a plain return */
	sim_stream_marker(&s, REGEN_M_ENTER, TD, 0, R);
	sim_stream_emit(&s, 1, 0);
	sim_stream_emit(&s, 1, 1);
	expect(&s, no_tail, 7);

	vtail[3] = REGEN_TAIL_OTHER;
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, TP, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, TV, 0, R);
	sim_stream_emit(&s, 1, 1);
	sim_stream_marker(&s, REGEN_M_ENTER, TG, 0, 0x4444);
	sim_stream_marker(&s, REGEN_M_ENTER, TD, 0, R);
	sim_stream_emit(&s, 1, 0);
	sim_stream_emit(&s, 1, 1);
	expect(&s, other, 15);

	pcallee[0] = UINT32_MAX;
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, TP, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, TD, 0, R);
	sim_stream_emit(&s, 1, 0);
	sim_stream_emit(&s, 1, 1);
	expect(&s, untraced, 8);

	fs = saved;
	for (i = 0; i < 5; i++) {
		encoding_free(&enc[i]);
		graph_free(&g[i]);
	}
}

/*
 * E = ENTRY ? A[call G] : B, then J, EXIT. With A an entry witness, one
 * code remains (on ENTRY->B, blocking EXIT); without, three (blockers of
 * A, of EXIT after A's call, of EXIT via B). The way through A costs no
 * bit: the ENTER of G with A's return address is the witness.
 */
static void test_entry_witness(void)
{
	const struct encoding *enc = &tf[5].enc;
	const struct graph *g = &tf[5].g;
	struct encoding strict;
	struct sim_stream s;
	const struct ev via_a[] = { EN(ID_E, 0), BL(ID_E, 0, 0), BL(ID_E, 2, 0), EN(ID_G, 1),
				    BL(ID_G, 0, 1), EX(ID_G, 1), BL(ID_E, 4, 0), EX(ID_E, 0),
				    EN(ID_G, 0), BL(ID_G, 0, 0), TR(ID_G, 0, 0) };
	const struct ev via_b[] = { EN(ID_E, 0), BL(ID_E, 0, 0), BL(ID_E, 3, 0), BL(ID_E, 4, 0),
				    EX(ID_E, 0), EN(ID_G, 0), BL(ID_G, 0, 0), TR(ID_G, 0, 0) };
	/* G's ENTER lost: nothing says which way E went */
	const struct ev lost[] = { EN(ID_E, 0), BL(ID_E, 0, 0), TR(ID_E, 0, 0) };
	/* an ENTER of G from elsewhere (another return address) is no witness: E's code read past it */
	const struct ev other[] = { EN(ID_E, 0), BL(ID_E, 0, 0), GAP(ID_E, 0, -PT_EFORMAT) };

	CU_ASSERT_EQUAL(enc->nemit, 1);
	CU_ASSERT_EQUAL(enc->nwit, 2);
	CU_ASSERT_EQUAL(enc->edge_nbits[1], 1);	/* ENTRY->B */
	CU_ASSERT_EQUAL(enc->enter_code[2], 2);
	CU_ASSERT_EQUAL(enc->wit_vertex[2], 2);
	CU_ASSERT_EQUAL(enc->next[(size_t)enc->pred_row[0] * 3 + 2], 0);	/* toward A */
	/* the ENTER is what makes it exact: without it the emissions break blocking */
	CU_ASSERT_EQUAL(encoding_check_blocking_v(g, enc->edge_nbits, NULL, NULL), -PT_EINVAL);
	CU_ASSERT_FATAL(encoding_witness(g, NULL, &strict) == 0);
	CU_ASSERT_EQUAL(strict.nemit, 3);
	encoding_free(&strict);

	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_E, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x2468);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x55);	/* E's caller calls G next */
	expect(&s, via_a, sizeof(via_a) / sizeof(via_a[0]));
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_E, 0, 0x99);
	sim_stream_emit(&s, enc->edge_nbits[1], enc->edge_value[1]);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x55);
	expect(&s, via_b, sizeof(via_b) / sizeof(via_b[0]));
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_E, 0, 0x99);
	expect(&s, lost, sizeof(lost) / sizeof(lost[0]));
	memset(&s, 0, sizeof(s));
	sim_stream_marker(&s, REGEN_M_ENTER, ID_E, 0, 0x99);
	sim_stream_marker(&s, REGEN_M_ENTER, ID_G, 0, 0x55);
	sim_stream_emit(&s, enc->edge_nbits[1], enc->edge_value[1]);	/* read past G's ENTER */
	expect(&s, other, sizeof(other) / sizeof(other[0]));
}

static void test_all(void)
{
	setup();
	test_attribution();
	test_direct_call_checks();
	test_loss_and_resync();
	test_orphan_return();
	test_hidden();
	test_implicit_entry();
	test_truncated();
	test_leading_bits_and_stale_enter();
	test_fig14_multiprocedure();
	test_fig14_cut();
	test_before_call();
	test_callback_stops();
	test_tail_calls();
	test_entry_witness();
	teardown();
}

UNIT_SUITE(regen_engine,
	   { "attribution, checks, gaps, truncation, Fig. 14 multiprocedure", test_all },
	   { "bit reader", test_bitreader })
