// SPDX-License-Identifier: GPL-2.0
/*
 * --edges, --blocks, --paths: profiles of a known execution (the simulated
 * truth, nested calls included) must equal the counts taken from the
 * truth itself: every edge traversal (into blocks and into EXIT) and
 * every block execution. Paths: each path number decodes (pathnum_blocks)
 * to an acyclic block sequence, and the path counts account for every
 * block execution exactly once (paths end at EXIT, at back edges and at
 * call vertices, so each executed block lies on exactly one path).
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/pathnum.h>
#include <pathtrace/tracefile.h>

#include "pathtrace_abi.h"
#include "regen_trace.h"
#include "fake_recs.h"
#include "unit.h"

static void check_seed(uint64_t seed)
{
	struct rt_case c;
	struct out_writer we = { .ops = &out_edges_ops }, wp = { .ops = &out_paths_ops, .top = 3 };
	struct out_writer *ws[2] = { &we, &wp };
	char *txt = NULL;
	size_t len = 0;
	uint32_t fi;
	uint64_t i;
	int ok_e = 1, ok_b = 1, ok_p = 1;

	CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, seed, 4, PT_MODE_PATHS, PT_ENC_PATH, 0), 0);
	we.m = wp.m = &c.m;
	we.fp = wp.fp = open_memstream(&txt, &len);
	CU_ASSERT_EQUAL_FATAL(rt_feed_truth(&c, ws, 2), 0);
	for (fi = 0; fi < c.m.nfuncs; fi++) {
		const struct pr_func *f = &c.m.funcs[fi];
		const uint64_t *ec = out_profile_edges(&we, fi), *bc = out_profile_blocks(&we, fi);
		uint64_t *te = calloc(f->cfg.nedges + 1, sizeof(*te));
		uint64_t *tb = calloc(f->cfg.nblocks + 1, sizeof(*tb));
		uint64_t on_paths = 0, all_blocks = 0;
		uint32_t stack[64], sp = 0, e, b;
		struct pathnum pn;

		/* Truth counts: block events' edges; at EXIT, the last block's exit edge. */
		for (i = 0; i < c.t.nev; i++) {
			const struct sim_event *t = &c.t.ev[i];

			if (t->type == REGEN_EV_ENTER) {
				if (sp < 64)
					stack[sp] = UINT32_MAX;
				sp++;
			}
			if (t->func != f->func_id) {
				if (t->type == REGEN_EV_EXIT)
					sp--;
				continue;
			}
			if (t->type == REGEN_EV_BLOCK) {
				tb[t->block]++;
				if (t->edge != UINT32_MAX)
					te[t->edge]++;
				if (sp && sp <= 64)
					stack[sp - 1] = t->block;
			} else if (t->type == REGEN_EV_EXIT) {
				if (sp && sp <= 64 && stack[sp - 1] != UINT32_MAX)
					te[f->exit_edge[stack[sp - 1]]]++;
				sp--;
			}
		}
		for (e = 0; e < f->cfg.nedges; e++)
			ok_e &= ec && ec[e] == te[e];
		for (b = 0; b < f->cfg.nblocks; b++) {
			ok_b &= bc && bc[b] == tb[b];
			all_blocks += tb[b];
		}
		/* Paths: every number decodes; counts x lengths = block executions. */
		if (pathnum_build(&pn, &f->g, NULL, NULL) == 0) {
			uint32_t *blk = malloc((f->g.nv + 1) * sizeof(*blk));
			uint64_t id;

			for (id = 0; id < pn.npaths && id < 100000; id++) {
				uint64_t cnt = out_paths_count(&wp, fi, id);
				int nb;

				if (!cnt)
					continue;
				nb = pathnum_blocks(&pn, id, blk, f->g.nv + 1);
				ok_p &= nb > 0;
				if (nb > 0)
					on_paths += cnt * (uint64_t)nb;
			}
			if (pn.npaths <= 100000)
				ok_p &= on_paths == all_blocks;
			free(blk);
		}
		pathnum_free(&pn);
		free(te);
		free(tb);
	}
	CU_ASSERT(ok_e);
	CU_ASSERT(ok_b);
	CU_ASSERT(ok_p);
	CU_ASSERT_EQUAL(out_close_all(ws, 2), 0);
	fclose(we.fp);
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "# edge profile"));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "# Ball-Larus path profile"));
	free(txt);
	rt_case_free(&c);
}

/*
 * A path profile counted in the kernel (PT_PLAN_PROFILE): the regenerated
 * profile of a known execution, split into PATHS records over two CPUs as
 * the module writes them, read back by --paths with no execution at all,
 * must give every path the same count; lost and overflow are summed and a
 * number beyond the function's paths is set apart, never counted.
 */
static void check_kernel_counts(uint64_t seed)
{
	struct rt_case c;
	struct out_writer wp = { .ops = &out_paths_ops, .top = 3 };
	struct out_writer wk = { .ops = &out_paths_ops, .top = 3 };
	struct out_writer *ws[1] = { &wp }, *wks[1] = { &wk };
	struct tr_records rs = { 0 };
	char *txt = NULL, *ktxt = NULL;
	size_t len = 0, klen = 0;
	uint32_t fi;
	int ok = 1;

	CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, seed, 4, PT_MODE_PATHS, PT_ENC_PATH, 0), 0);
	wp.m = wk.m = &c.m;
	wp.fp = open_memstream(&txt, &len);
	CU_ASSERT_EQUAL_FATAL(rt_feed_truth(&c, ws, 1), 0);
	for (fi = 0; fi < c.m.nfuncs; fi++) {
		struct pathnum pn;
		uint64_t id, body[2 + 2 * 8], n = 0, rec = 0;

		if (pathnum_build(&pn, &c.m.funcs[fi].g, NULL, NULL))
			continue;
		body[0] = 1;	/* lost: one, in the first record */
		body[1] = 2;	/* overflow: two */
		for (id = 0; id < pn.npaths && id < 100000; id++) {
			uint64_t cnt = out_paths_count(&wp, fi, id);

			if (!cnt)
				continue;
			/* half on each CPU, as two CPUs' flushes would say */
			body[2 + 2 * n] = id;
			body[3 + 2 * n] = cnt / 2;
			n++;
			if (cnt - cnt / 2) {
				uint64_t b2[4] = { 0, 0, id, cnt - cnt / 2 };

				fake_rec_add(&rs, PT_REC_PATHS, 1, c.m.funcs[fi].func_id, b2, 4);
			}
			if (n == 8) {
				fake_rec_add(&rs, PT_REC_PATHS, 0, c.m.funcs[fi].func_id, body, 2 + 2 * 8);
				body[0] = body[1] = 0;
				n = 0;
				rec++;
			}
		}
		body[2 + 2 * n] = pn.npaths;	/* no such path */
		body[3 + 2 * n] = 5;
		fake_rec_add(&rs, PT_REC_PATHS, 0, c.m.funcs[fi].func_id, body, (uint16_t)(2 + 2 * (n + 1)));
		c.m.funcs[fi].plan_flags |= PT_PLAN_PROFILE;
		pathnum_free(&pn);
	}
	wk.records = &rs;
	wk.fp = open_memstream(&ktxt, &klen);
	CU_ASSERT_EQUAL_FATAL(out_open_all(wks, 1), 0);
	for (fi = 0; fi < c.m.nfuncs; fi++) {
		struct pathnum pn;
		uint64_t id;

		if (pathnum_build(&pn, &c.m.funcs[fi].g, NULL, NULL))
			continue;
		for (id = 0; id < pn.npaths && id < 100000; id++)
			ok &= out_paths_count(&wk, fi, id) == out_paths_count(&wp, fi, id);
		pathnum_free(&pn);
	}
	CU_ASSERT(ok);
	CU_ASSERT_EQUAL(out_close_all(wks, 1), 0);
	CU_ASSERT_EQUAL(out_close_all(ws, 1), 0);
	fclose(wk.fp);
	fclose(wp.fp);
	CU_ASSERT_PTR_NOT_NULL(strstr(ktxt, "counted in the kernel: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(ktxt, "; 1 path ends lost to a context switch mid-path, 2 to a "
				     "full table, 5 beyond the numbering)"));
	free(txt);
	free(ktxt);
	free(rs.recs);
	free(rs.words);
	rt_case_free(&c);
}

static void test_kernel_path_counts(void)
{
	uint64_t seed = unit_seed();
	unsigned int i;

	for (i = 0; i < 4; i++)
		check_kernel_counts(seed * 7 + 3 + i);
}

static void test_profiles_equal_truth(void)
{
	uint64_t seed = unit_seed();
	unsigned int i;

	for (i = 0; i < 6; i++)
		check_seed(seed * 23 + i);
}

/*
 * --path-seqs on synthetic paths runs: every stream of n completed paths
 * holds n - L + 1 runs of L consecutive ones (none across streams), so the
 * runs of each length add up to that over the streams.
 */
static void test_path_seqs(void)
{
	uint64_t seed, t, nev, runs = 0;

	for (seed = 11; seed < 41; seed++) {
		struct out_writer wa = { .ops = &out_paths_ops, .path_seqs = 1 };
		struct out_writer *wsa[1] = { &wa };
		uint64_t want[9] = { 0 };
		char *txt = NULL;
		size_t len = 0;
		struct rt_case c;
		uint32_t l;

		CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, seed, 4, PT_MODE_PATHS, PT_ENC_PATH, 0), 0);
		wa.m = &c.m;
		wa.fp = open_memstream(&txt, &len);
		CU_ASSERT_EQUAL_FATAL(out_open_all(wsa, 1), 0);
		for (t = 0; t < RT_NTASKS; t++) {
			struct out_writer w1 = { .ops = &out_paths_ops, .m = &c.m, .fp = wa.fp };
			struct out_writer *ws1[1] = { &w1 };
			struct regen_stream s = { .owner = RT_TASK(t) };
			struct out_stream st = { .s = &s, .index = (uint32_t)t };
			struct regen_event *ev = rt_truth_events(&c.t, RT_TASK(t), &nev);
			uint64_t n;

			CU_ASSERT_FATAL(ev != NULL);
			CU_ASSERT_EQUAL_FATAL(out_open_all(ws1, 1), 0);
			CU_ASSERT_EQUAL(out_walk_events(&c.m, &st, ev, nev, ws1, 1), 0);
			CU_ASSERT_EQUAL(out_walk_events(&c.m, &st, ev, nev, wsa, 1), 0);
			n = out_paths_completed(&w1);
			for (l = 2; l <= 8; l *= 2)
				want[l] += n >= l ? n - l + 1 : 0;
			CU_ASSERT_EQUAL(out_close_all(ws1, 1), 0);
			free(ev);
		}
		for (l = 2; l <= 8; l *= 2) {
			CU_ASSERT_EQUAL(out_paths_seq_total(&wa, l), want[l]);
			runs += want[l];
		}
		CU_ASSERT_EQUAL(out_close_all(wsa, 1), 0);
		fclose(wa.fp);
		CU_ASSERT_PTR_NOT_NULL(strstr(txt, "# path-end sequences (exact)"));
		free(txt);
		rt_case_free(&c);
	}
	fprintf(stderr, "[path-seqs: %llu runs] ", (unsigned long long)runs);
	CU_ASSERT(runs > 1000);
}

UNIT_SUITE(out_profile,
	   { "edge, block and path profiles equal the truth's counts", test_profiles_equal_truth },
	   { "a path profile counted in the kernel reads as the regenerated one",
	     test_kernel_path_counts },
	   { "--path-seqs: runs of 2, 4, 8 path ends per stream", test_path_seqs })
