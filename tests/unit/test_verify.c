// SPDX-License-Identifier: GPL-2.0
/*
 * --verify: the regenerated blocks against the BLOCK markers of the same
 * stream. A known execution (the synthetic truth) is fed to the verifier
 * with markers made from that same truth: every block must compare equal;
 * then one marker is changed, one dropped, one added at the end, and a
 * gap is put in: each difference must stop it, naming the stream, the
 * function and the position; blocks lost in a gap are skipped, not
 * reported.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "regen_trace.h"
#include "unit.h"

/* BLOCK markers for every BLOCK event (positions: the event index). */
static struct regen_marker *markers_of(const struct regen_event *ev, uint64_t n, uint32_t *nm)
{
	struct regen_marker *m = calloc(n + 2, sizeof(*m));
	uint64_t i;

	*nm = 0;
	for (i = 0; m && i < n; i++) {
		if (ev[i].type != REGEN_EV_BLOCK)
			continue;
		m[*nm].pos = i;
		m[*nm].type = REGEN_M_BLOCK;
		m[*nm].func = ev[i].func;
		m[*nm].arg = ev[i].block;
		(*nm)++;
	}
	return m;
}

static int run_verify(const struct rt_case *c, const struct regen_event *ev, uint64_t n,
		      const struct regen_marker *mk, uint32_t nm, struct verify_result *vr)
{
	struct out_writer w = { .ops = &verify_ops, .priv = vr, .m = &c->m, .fp = stderr };
	struct out_writer *ws[1] = { &w };
	struct regen_stream s = { .owner = RT_TASK(0), .markers = mk, .nmarkers = nm };
	struct out_stream st = { .s = &s, .index = 0 };
	int err;

	if (out_open_all(ws, 1))
		return -PT_ENOMEM;
	err = out_walk_events(&c->m, &st, ev, n, ws, 1);
	out_close_all(ws, 1);
	return err;
}

static void test_verify(void)
{
	struct rt_case c;
	struct verify_result vr;
	struct regen_event *ev, *ev2;
	struct regen_marker *mk;
	uint64_t n, blocks = 0, i, gap_at = 0;
	uint32_t nm, k, mid;

	/* A random run long enough to mutate: try tasks, then other seeds. */
	for (k = 0, ev = NULL; k < 64 && blocks < 4; k++) {
		uint32_t task;

		CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, unit_seed() * 7 + 1 + k, 3, PT_MODE_TRACE,
						   PT_ENC_WITNESS, PT_PLAN_VERIFY), 0);
		for (task = 0; task < 3 && blocks < 4; task++) {
			free(ev);
			ev = rt_truth_events(&c.t, RT_TASK(task), &n);
			CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
			for (i = 0, blocks = 0; i < n; i++)
				blocks += ev[i].type == REGEN_EV_BLOCK;
		}
		if (blocks < 4)
			rt_case_free(&c);
	}
	CU_ASSERT_FATAL(blocks >= 4);
	mk = markers_of(ev, n, &nm);
	CU_ASSERT_EQUAL_FATAL(nm, blocks);

	/* Equal. */
	CU_ASSERT_EQUAL(run_verify(&c, ev, n, mk, nm, &vr), 0);
	CU_ASSERT_EQUAL(vr.mismatch, 0);
	CU_ASSERT_EQUAL(vr.compared, blocks);

	/*
	 * A block with no verify site (no instruction kprobes accept, e.g. a
	 * lone static-call site) records nothing: its regenerated executions
	 * are counted, not compared, and the other blocks still must match.
	 */
	{
		struct pr_func *f = (struct pr_func *)pr_model_func(&c.m, mk[0].func);
		uint32_t b = mk[0].arg, nm2 = 0, dropped = 0, j;
		struct regen_marker *mk2 = calloc(nm + 1, sizeof(*mk2));

		CU_ASSERT_PTR_NOT_NULL_FATAL(mk2);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f->verify_block);
		for (j = 0; j < f->cfg.nblocks; j++)	/* synthetic code: every block probeable */
			CU_ASSERT_EQUAL(f->verify_block[j], 1);
		for (j = 0; j < nm; j++) {
			if (mk[j].func == f->func_id && mk[j].arg == b)
				dropped++;
			else
				mk2[nm2++] = mk[j];
		}
		/* unmarked, the missing records are differences */
		CU_ASSERT_EQUAL(run_verify(&c, ev, n, mk2, nm2, &vr), -PT_EMISMATCH);
		f->verify_block[b] = 0;
		CU_ASSERT_EQUAL(run_verify(&c, ev, n, mk2, nm2, &vr), 0);
		CU_ASSERT_EQUAL(vr.mismatch, 0);
		CU_ASSERT_EQUAL(vr.no_site, dropped);
		CU_ASSERT_EQUAL(vr.compared, blocks - dropped);
		f->verify_block[b] = 1;
		free(mk2);
	}

	/* One block recorded differently. */
	mid = nm / 2;
	mk[mid].arg ^= 1;
	CU_ASSERT_EQUAL(run_verify(&c, ev, n, mk, nm, &vr), -PT_EMISMATCH);
	CU_ASSERT_EQUAL(vr.mismatch, 1);
	CU_ASSERT_EQUAL(vr.compared, mid);
	CU_ASSERT_PTR_NOT_NULL(strstr(vr.detail, "stream 0 (task/100)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(vr.detail, pr_model_func(&c.m, mk[mid].func)->name));
	mk[mid].arg ^= 1;

	/* One record missing: the last one. */
	CU_ASSERT_EQUAL(run_verify(&c, ev, n, mk, nm - 1, &vr), -PT_EMISMATCH);
	CU_ASSERT_EQUAL(vr.compared, nm - 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(vr.detail, "no BLOCK record is left"));

	/* One record too many. */
	mk[nm] = mk[nm - 1];
	CU_ASSERT_EQUAL(run_verify(&c, ev, n, mk, nm + 1, &vr), -PT_EMISMATCH);
	CU_ASSERT_PTR_NOT_NULL(strstr(vr.detail, "left after"));

	/*
	 * A loss: the execution from the second ENTER on is lost, then the
	 * engine resyncs there. Markers of the gap are skipped, not reported.
	 */
	for (i = 1, k = 0; i < n; i++)
		if (ev[i].type == REGEN_EV_ENTER && ev[i].depth == 0) {
			gap_at = i;
			break;
		}
	if (gap_at) {
		struct regen_marker *mk2 = calloc(nm + 2, sizeof(*mk2));
		uint32_t nm2 = 0, before = 0, skipped = 0;
		uint64_t n2 = 0, j;

		ev2 = calloc(n + 4, sizeof(*ev2));
		/* Stream: markers of blocks before the loss, LOSS, the blocks lost, ENTER, the rest. */
		for (j = 0; j < n; j++) {
			if (ev[j].type == REGEN_EV_BLOCK && j < gap_at / 2)
				before++;
		}
		for (j = 0; j < nm && mk[j].pos < gap_at / 2; j++)
			mk2[nm2++] = mk[j];
		mk2[nm2++] = (struct regen_marker){ .pos = gap_at / 2, .type = REGEN_M_LOSS,
						    .arg = PT_LOSS_OVERRUN, .value = 3 };
		for (; j < nm && mk[j].pos < gap_at; j++, skipped++)
			mk2[nm2++] = mk[j];
		mk2[nm2] = (struct regen_marker){ .pos = gap_at, .type = REGEN_M_ENTER,
						  .func = ev[gap_at].func };
		k = nm2++;
		for (; j < nm; j++)
			mk2[nm2++] = mk[j];
		/* Events: blocks before the loss, GAP, RESYNC at the ENTER marker, the rest. */
		for (j = 0; j < gap_at / 2; j++)
			ev2[n2++] = ev[j];
		ev2[n2++] = (struct regen_event){ .type = REGEN_EV_GAP, .func = UINT32_MAX,
						  .reason = -PT_EKERNEL, .marker = &mk2[k - skipped - 1] };
		ev2[n2++] = (struct regen_event){ .type = REGEN_EV_RESYNC, .func = ev[gap_at].func,
						  .marker = &mk2[k] };
		for (j = gap_at; j < n; j++)
			ev2[n2++] = ev[j];
		CU_ASSERT_EQUAL(mk2[k - skipped - 1].type, REGEN_M_LOSS);
		CU_ASSERT_EQUAL(run_verify(&c, ev2, n2, mk2, nm2, &vr), 0);
		CU_ASSERT_EQUAL(vr.mismatch, 0);
		CU_ASSERT_EQUAL(vr.skipped, skipped);
		CU_ASSERT_EQUAL(vr.compared, nm - skipped);
		free(mk2);
		free(ev2);
	}
	free(mk);
	free(ev);
	rt_case_free(&c);
}

UNIT_SUITE(verify,
	   { "equal, changed, missing, extra, and gapped blocks", test_verify })
