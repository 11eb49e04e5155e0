// SPDX-License-Identifier: GPL-2.0
/*
 * What a forked child inherits (regen/forks.c, the engine's fork markers;
 * docs/user.md, "The fork point"): on hand-made parent and child streams,
 * the child regenerated inside the user activation open at the fork (a
 * kernel activation under the inherited call included), a fork under a
 * kernel activation, a fork in a gap (the child inherits nothing: its bits
 * are a gap), and a child walked before anything is resolved. And what an
 * execve ends (the engine's exec markers; docs/user.md, "The exec
 * point"): the user activations open at it, the task's own or inherited at
 * a fork, replaced, the new image's at top level; under the execve's
 * kernel activation, which goes on and returns first; after a gap; by a
 * thread that took the stream's pid.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>
#include "sim.h"
#include "pathtrace_abi.h"

#include "paper_graphs.h"
#include "streams.h"
#include "unit.h"

/*
 * U: a user function whose entry is a call vertex to untraced code (the
 * fork() call), then a separator bit, one block and EXIT; K: a kernel leaf.
 */
enum { ID_U = 1, ID_K = 2, NFUNC = 2 };

#define PARENT PT_OWNER(PT_OWNER_TASK, 100)
#define CHILD PT_OWNER(PT_OWNER_TASK, 101)

static struct graph g[NFUNC];
static struct encoding enc[NFUNC];
static uint64_t ret[NFUNC][4];
static uint32_t callee[NFUNC][4];
static struct regen_func rf[NFUNC];
static const struct regen_funcs fs = { .funcs = rf, .nfuncs = NFUNC };

static void setup(void)
{
	static const uint32_t one[][2] = { { 0, 1 } };
	static const uint32_t two[][2] = { { 0, 2 }, { 2, 1 } };
	static const uint32_t call0[3] = { GRAPH_V_CALL, 0, 0 };
	uint32_t i;

	pg_build(&g[0], 3, two, 2, 0, 1, call0);
	pg_build(&g[1], 2, one, 1, 0, 1, NULL);
	for (i = 0; i < NFUNC; i++) {
		CU_ASSERT_FATAL(encoding_bits(&g[i], &enc[i]) == 0);
		memset(callee[i], 0xff, sizeof(callee[i]));
		memset(ret[i], 0, sizeof(ret[i]));
		rf[i] = (struct regen_func){
			.func_id = i + 1, .name = i ? "k" : "u", .g = &g[i], .call_ret_addr = ret[i],
			.call_callee = callee[i], .ops = &regen_decode_bits_ops, .model = &enc[i],
			.user = !i,
		};
	}
}

static void teardown(void)
{
	uint32_t i;

	for (i = 0; i < NFUNC; i++) {
		encoding_free(&enc[i]);
		graph_free(&g[i]);
	}
}

struct ev {
	uint32_t type, func, block, depth;
	int reason;
	uint32_t nframes;
	int inherited;		/* an ENTER whose marker is a REGEN_M_FORKED */
	int exec_marker;	/* the event's marker is a REGEN_M_EXEC */
};

struct got {
	struct ev ev[32];
	uint32_t n;
};

static int collect(void *ctx, const struct regen_event *e)
{
	struct got *g = ctx;

	if (g->n < 32)
		g->ev[g->n++] = (struct ev){ e->type, e->func, e->block, e->depth, e->reason,
					     e->nframes,
					     e->marker && e->marker->type == REGEN_M_FORKED,
					     e->marker && e->marker->type == REGEN_M_EXEC };
	return 0;
}

static void expect(const struct regen_stream *s, const struct ev *want, uint32_t n)
{
	struct got got;
	uint32_t i;

	memset(&got, 0, sizeof(got));
	CU_ASSERT_EQUAL_FATAL(regen_stream(&fs, s, collect, &got), 0);
	CU_ASSERT_EQUAL(got.n, n);
	for (i = 0; i < n && i < got.n; i++) {
		CU_ASSERT_EQUAL(got.ev[i].type, want[i].type);
		CU_ASSERT_EQUAL(got.ev[i].func, want[i].func);
		CU_ASSERT_EQUAL(got.ev[i].depth, want[i].depth);
		CU_ASSERT_EQUAL(got.ev[i].inherited, want[i].inherited);
		if (want[i].type == REGEN_EV_BLOCK || want[i].type == REGEN_EV_TRUNCATED)
			CU_ASSERT_EQUAL(got.ev[i].block, want[i].block);
		if (want[i].type == REGEN_EV_GAP || want[i].type == REGEN_EV_FORK ||
		    want[i].type == REGEN_EV_EXEC || want[i].type == REGEN_EV_REPLACED)
			CU_ASSERT_EQUAL(got.ev[i].reason, want[i].reason);
		if (want[i].type == REGEN_EV_FORK || want[i].type == REGEN_EV_EXEC)
			CU_ASSERT_EQUAL(got.ev[i].nframes, want[i].nframes);
		if (want[i].type == REGEN_EV_EXEC || want[i].type == REGEN_EV_REPLACED)
			CU_ASSERT(got.ev[i].exec_marker);
	}
}

#define EN(f, d) { REGEN_EV_ENTER, f, 0, d, 0, 0, 0, 0 }
#define IN(f, d) { REGEN_EV_ENTER, f, 0, d, 0, 0, 1, 0 }
#define BL(f, b, d) { REGEN_EV_BLOCK, f, b, d, 0, 0, 0, 0 }
#define EX(f, d) { REGEN_EV_EXIT, f, 0, d, 0, 0, 0, 0 }
#define GAP(d, r) { REGEN_EV_GAP, UINT32_MAX, 0, d, r, 0, 0, 0 }
#define FK(f, d, r, n) { REGEN_EV_FORK, f, 0, d, r, n, 0, 0 }
#define TR(f, b, d) { REGEN_EV_TRUNCATED, f, b, d, -PT_ETRUNC, 0, 0, 0 }
#define XC(f, d, r, n) { REGEN_EV_EXEC, f, 0, d, r, n, 0, 1 }
#define RP(f, d) { REGEN_EV_REPLACED, f, 0, d, 0, 0, 0, 1 }
#define RS(f) { REGEN_EV_RESYNC, f, 0, 0, 0, 0, 0, 0 }

/* A parent's and its child's streams, sharing one fork (index 0). */
struct pair {
	struct sim_stream ps, cs;
	struct regen_stream st[2];
	struct regen_fork fork;
	struct regen_streams ss;
};

static void pair_view(struct pair *p)
{
	sim_stream_view(&p->ps, PARENT, &p->st[0]);
	sim_stream_view(&p->cs, CHILD, &p->st[1]);
	p->fork = (struct regen_fork){ .parent = PARENT, .child = CHILD, .parent_stream = 0 };
	p->st[0].forks = p->st[1].forks = &p->fork;
	p->st[0].nforks = p->st[1].nforks = 1;
	memset(&p->ss, 0, sizeof(p->ss));
	p->ss.streams = p->st;
	p->ss.nstreams = 2;
	p->ss.forks = &p->fork;
	p->ss.nforks = 1;
}

/*
 * The parent forks here, then each stream holds a separator bit (the
 * child's from its start); resolved.
 */
static void fork_then_bit(struct pair *p)
{
	sim_stream_marker(&p->ps, REGEN_M_FORK, 0, 0, CHILD);
	sim_stream_emit(&p->ps, 1, 1);
	sim_stream_marker(&p->cs, REGEN_M_FORKED, 0, 0, PARENT);
	sim_stream_emit(&p->cs, 1, 1);
	pair_view(p);
	CU_ASSERT_EQUAL(regen_forks_resolve(&fs, &p->ss), 0);
}

/* The parent enters U and forks at its call vertex; the child's stream begins at the fork. */
static void fork_in_u(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	sim_stream_marker(&p->ps, REGEN_M_ENTER, ID_U, 0, 0);
	sim_stream_marker(&p->ps, REGEN_M_FORK, 0, 0, CHILD);
	sim_stream_emit(&p->ps, 1, 1);
	sim_stream_marker(&p->cs, REGEN_M_FORKED, 0, 0, PARENT);
}

static void pair_free(struct pair *p)
{
	free(p->fork.frames);
	sim_stream_free(&p->ps);
	sim_stream_free(&p->cs);
}

/*
 * U forks at its call vertex; parent and child each read the separator
 * bit after the call returns. The child, walked after the parent's fork is
 * resolved, is U's activation from there: its kernel activation under the
 * inherited call (K, from ret_from_fork) is U's callee, and no gap.
 * Walked before (nothing resolved), K is an activation of its own and the
 * bit after it a gap.
 */
static void test_inherit(void)
{
	const struct ev parent[] = { EN(ID_U, 0), BL(ID_U, 0, 0), FK(ID_U, 0, 0, 1),
				     BL(ID_U, 2, 0), TR(ID_U, 2, 0) };
	const struct ev child[] = { IN(ID_U, 0), EN(ID_K, 1), BL(ID_K, 0, 1), EX(ID_K, 1),
				    BL(ID_U, 2, 0), TR(ID_U, 2, 0) };
	/* unresolved: K at the top, the separator bit nobody's */
	const struct ev unresolved[] = { EN(ID_K, 0), BL(ID_K, 0, 0), EX(ID_K, 0),
					 GAP(0, -PT_ENOENT) };
	struct pair p;

	fork_in_u(&p);
	sim_stream_marker(&p.cs, REGEN_M_ENTER, ID_K, 0, 0);
	sim_stream_emit(&p.cs, 1, 1);
	pair_view(&p);
	expect(&p.st[1], unresolved, 4);
	CU_ASSERT_EQUAL(regen_forks_resolve(&fs, &p.ss), 0);
	CU_ASSERT(p.fork.known);
	CU_ASSERT_EQUAL_FATAL(p.fork.nframes, 1);
	CU_ASSERT_EQUAL(p.fork.frames[0].func, ID_U);
	CU_ASSERT_EQUAL(p.fork.frames[0].v, 0);
	expect(&p.st[0], parent, 5);
	expect(&p.st[1], child, 6);
	pair_free(&p);
}

/* A fork made under a kernel activation: the user one is inherited, not the kernel's. */
static void test_under_kernel(void)
{
	const struct ev parent[] = { EN(ID_U, 0), BL(ID_U, 0, 0), EN(ID_K, 1), BL(ID_K, 0, 1),
				     FK(ID_U, 0, 0, 1), EX(ID_K, 1), BL(ID_U, 2, 0),
				     TR(ID_U, 2, 0) };
	const struct ev child[] = { IN(ID_U, 0), BL(ID_U, 2, 0), TR(ID_U, 2, 0) };
	struct pair p;

	memset(&p, 0, sizeof(p));
	sim_stream_marker(&p.ps, REGEN_M_ENTER, ID_U, 0, 0);
	sim_stream_marker(&p.ps, REGEN_M_ENTER, ID_K, 0, 0);
	fork_then_bit(&p);
	CU_ASSERT(p.fork.known);
	CU_ASSERT_EQUAL(p.fork.nframes, 1);
	expect(&p.st[0], parent, 8);
	expect(&p.st[1], child, 3);
	pair_free(&p);
}

/* A fork in a gap (a loss before it): the child inherits nothing; its bits are a gap. */
static void test_unknown(void)
{
	const struct ev parent[] = { GAP(0, -PT_EKERNEL), FK(UINT32_MAX, 0, -PT_ENOENT, 0) };
	const struct ev child[] = { GAP(0, -PT_ENOENT) };
	struct pair p;

	memset(&p, 0, sizeof(p));
	sim_stream_marker(&p.ps, REGEN_M_LOSS, 0, PT_LOSS_OVERRUN, 1);
	fork_then_bit(&p);
	CU_ASSERT(!p.fork.known);
	expect(&p.st[0], parent, 2);
	expect(&p.st[1], child, 1);
	pair_free(&p);

	pair_free(&p);
}

/*
 * The new image's run after an execve in the stream: U entered at the
 * exec's position (its entry the call vertex, as the old image's stood),
 * then its separator bit.
 */
static void new_image(struct sim_stream *s)
{
	sim_stream_marker(s, REGEN_M_ENTER, ID_U, 0, 0);
	sim_stream_emit(s, 1, 1);
}

/*
 * Then an EXEC by old_owner and the new image in ss, a stream of PARENT,
 * whose events are want[0..n).
 */
static void expect_exec(struct sim_stream *ss, uint64_t old_owner, const struct ev *want,
			uint32_t n)
{
	struct regen_stream st;

	sim_stream_marker(ss, REGEN_M_EXEC, 0, 0, old_owner);
	new_image(ss);
	sim_stream_view(ss, PARENT, &st);
	expect(&st, want, n);
	sim_stream_free(ss);
}

/*
 * U execs at its call vertex: it ends there, replaced, and the new image's
 * U starts at top level. Without the EXEC (the stream before it was
 * written) the new image's U was read as a callee of the old one's call.
 */
static void test_exec_own(void)
{
	const struct ev want[] = { EN(ID_U, 0), BL(ID_U, 0, 0), XC(ID_U, 0, 0, 1), RP(ID_U, 0),
				   EN(ID_U, 0), BL(ID_U, 0, 0), BL(ID_U, 2, 0), TR(ID_U, 2, 0) };
	const struct ev unmarked[] = { EN(ID_U, 0), BL(ID_U, 0, 0), EN(ID_U, 1), BL(ID_U, 0, 1),
				       BL(ID_U, 2, 1), TR(ID_U, 2, 1) };
	struct sim_stream ss, plain;
	struct regen_stream st;

	memset(&ss, 0, sizeof(ss));
	memset(&plain, 0, sizeof(plain));
	sim_stream_marker(&ss, REGEN_M_ENTER, ID_U, 0, 0);
	expect_exec(&ss, PARENT, want, 8);
	sim_stream_marker(&plain, REGEN_M_ENTER, ID_U, 0, 0);
	new_image(&plain);
	sim_stream_view(&plain, PARENT, &st);
	expect(&st, unmarked, 6);
	sim_stream_free(&plain);
}

/*
 * The child execs inside the U it inherited at the fork (t-user-fork's
 * ut_spawn): the inherited activation is replaced, the new image's U is at
 * top level, and kernel activations the execve runs after the exec point
 * (K) are at top level too.
 */
static void test_exec_inherited(void)
{
	const struct ev child[] = { IN(ID_U, 0), XC(ID_U, 0, 0, 1), RP(ID_U, 0), EN(ID_K, 0),
				    BL(ID_K, 0, 0), EX(ID_K, 0), EN(ID_U, 0), BL(ID_U, 0, 0),
				    BL(ID_U, 2, 0), TR(ID_U, 2, 0) };
	struct pair p;

	fork_in_u(&p);
	sim_stream_marker(&p.cs, REGEN_M_EXEC, 0, 0, CHILD);
	sim_stream_marker(&p.cs, REGEN_M_ENTER, ID_K, 0, 0);
	new_image(&p.cs);
	pair_view(&p);
	CU_ASSERT_EQUAL(regen_forks_resolve(&fs, &p.ss), 0);
	CU_ASSERT_EQUAL(p.fork.nframes, 1);
	expect(&p.st[1], child, 10);
	pair_free(&p);
}

/*
 * The exec inside a kernel activation of the execve (K traced): K stays
 * open and returns, and only then does U end, replaced; the new image's U
 * at top level.
 */
static void test_exec_under_kernel(void)
{
	const struct ev want[] = { EN(ID_U, 0), BL(ID_U, 0, 0), EN(ID_K, 1), BL(ID_K, 0, 1),
				   XC(ID_U, 0, 0, 1), EX(ID_K, 1), RP(ID_U, 0), EN(ID_U, 0),
				   BL(ID_U, 0, 0), BL(ID_U, 2, 0), TR(ID_U, 2, 0) };
	struct sim_stream ss;

	memset(&ss, 0, sizeof(ss));
	sim_stream_marker(&ss, REGEN_M_ENTER, ID_U, 0, 0);
	sim_stream_marker(&ss, REGEN_M_ENTER, ID_K, 0, 0);
	expect_exec(&ss, PARENT, want, 11);
}

/*
 * An exec after a gap: what it ended is not known; an exec by a thread that
 * took the stream's pid: the activation open (the group leader's, which
 * the exec ended) is truncated, not replaced.
 */
static void test_exec_unknown(void)
{
	const struct ev gapped[] = { GAP(0, -PT_EKERNEL), XC(UINT32_MAX, 0, -PT_ENOENT, 0),
				     RS(ID_U), EN(ID_U, 0), BL(ID_U, 0, 0), BL(ID_U, 2, 0),
				     TR(ID_U, 2, 0) };
	const struct ev other[] = { EN(ID_U, 0), BL(ID_U, 0, 0), TR(ID_U, 0, 0),
				    XC(UINT32_MAX, 0, 0, 0), EN(ID_U, 0), BL(ID_U, 0, 0),
				    BL(ID_U, 2, 0), TR(ID_U, 2, 0) };
	struct sim_stream a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	sim_stream_marker(&a, REGEN_M_LOSS, 0, PT_LOSS_OVERRUN, 1);
	expect_exec(&a, PARENT, gapped, 7);
	sim_stream_marker(&b, REGEN_M_ENTER, ID_U, 0, 0);
	expect_exec(&b, CHILD, other, 8);
}

static void test_all(void)
{
	setup();
	test_inherit();
	test_under_kernel();
	test_unknown();
	teardown();
}

static void test_all_exec(void)
{
	setup();
	test_exec_own();
	test_exec_inherited();
	test_exec_under_kernel();
	test_exec_unknown();
	teardown();
}

UNIT_SUITE(forks,
	   { "a child inside the activations open at its fork; a fork in a gap", test_all },
	   { "an execve replaces the user activations open at it; kernel ones go on",
	     test_all_exec })
