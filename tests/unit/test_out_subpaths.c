// SPDX-License-Identifier: GPL-2.0
/*
 * --subpaths: online subpath profiling (OSP) of a known execution (the
 * synthetic truth, nested calls included) against the exact subpath
 * counts of the same execution (--exact). The hot list never holds more
 * subpaths than its memory; every subpath it reports as hot is a real one
 * (the exact counter has it); and the truly hottest subpaths (the exact
 * counter's top k, chosen without looking at the samples, so no winner's
 * curse) have sampled counts within the Chernoff bound the paper uses of
 * what sampling them should give: with mean m = exact / (tau * lengths),
 * |sampled - m| <= delta * m where delta = sqrt(3 ln(2k / eps) / m),
 * eps = 1e-6, so that a correct sampler fails the test a few times in a
 * million runs (at 1e-3, the paper's, it did once in 1,500 seeds).
 * (Checking the sample's own top k instead picks, among
 * thousands of rare subpaths, the ones sampled by luck.)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pathtrace_abi.h"
#include "regen_trace.h"
#include "unit.h"

#define TOP 10

static void check_seed(uint64_t seed, uint32_t memory, unsigned int *checked)
{
	struct rt_case c;
	struct out_writer wo = { .ops = &out_subpaths_ops, .sp_memory = memory, .sp_seed = seed | 1 };
	struct out_writer wx = { .ops = &out_subpaths_ops, .sp_exact = 1 };
	struct out_writer *ws[2] = { &wo, &wx };
	struct out_subpath top[TOP], xtop[TOP];
	char *txt = NULL;
	size_t len = 0;
	int n, nx, i, ok = 1;
	double scale = 0;

	if (rt_case_make(&c, seed, 4, PT_MODE_TRACE, PT_ENC_WITNESS, 0)) {
		CU_FAIL("synthetic run");
		return;
	}
	wo.m = wx.m = &c.m;
	wo.fp = wx.fp = open_memstream(&txt, &len);
	CU_ASSERT_EQUAL_FATAL(rt_feed_truth(&c, ws, 2), 0);
	CU_ASSERT(out_subpaths_entries(&wo) <= memory);
	n = out_subpaths_top(&wo, top, TOP);
	CU_ASSERT(n > 0);
	nx = out_subpaths_top(&wx, xtop, TOP);
	CU_ASSERT(nx > 0);
	for (i = 0; i < n; i++) {
		ok &= out_subpaths_count(&wx, top[i].id) > 0;	/* a real subpath */
		if (top[i].sampled)	/* a sample's weight: tau x lengths */
			scale = top[i].estimate / (double)top[i].sampled;
	}
	CU_ASSERT(ok);
	CU_ASSERT_FATAL(scale > 0);
	for (i = 0; i < nx; i++) {
		double m = (double)xtop[i].sampled / scale;	/* exact counter: its count */
		double delta = sqrt(3.0 * log(2.0 * TOP / 1e-6) / m);
		uint64_t sampled = out_subpaths_count(&wo, xtop[i].id);

		ok &= fabs((double)sampled - m) <= delta * m + 1.0;
		(*checked)++;
	}
	CU_ASSERT(ok);
	/*
	 * No estimate is far above the count of the truly hottest subpath:
	 * beyond 4 times it, plus 6 samples' weight (a rare subpath sampled
	 * 7 times by luck: Poisson tails below 1e-8 at any mean up to that).
	 */
	for (i = 0; i < n; i++)
		CU_ASSERT(top[i].estimate <= 4.0 * (double)xtop[0].sampled + 6.0 * scale);
	CU_ASSERT_EQUAL(out_close_all(ws, 2), 0);
	fclose(wo.fp);
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "# online subpath profile (OSP)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "# subpaths (exact)"));
	free(txt);
	rt_case_free(&c);
}

static void test_osp_within_bound(void)
{
	uint64_t seed = unit_seed();
	unsigned int i, checked = 0;

	for (i = 0; i < 6; i++)
		check_seed(seed * 11 + i, i % 2 ? 64 : 256, &checked);
	CU_ASSERT(checked >= 30);
}

UNIT_SUITE(out_subpaths,
	   { "OSP's hot subpaths are real and within the Chernoff bound of the exact counts",
	     test_osp_within_bound })
