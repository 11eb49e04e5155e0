// SPDX-License-Identifier: GPL-2.0
/*
 * --hits: the probe hits pathregen works out from the regenerated block
 * counts and the plans' sites must equal the handler runs the simulated
 * module counted at those sites (sim_kmod_run.site_hits), in every mode
 * that has sites; and the bound never exceeds what a spanning tree of the
 * plan's own could reach with these counts (checked where it is exact: it
 * is at least the ENTER probes' hits). With --inline-sites they must equal
 * the calls the sites of an inline copy would make (sim_kmod_run.
 * inline_site_hits: a site whose actions apply on one edge runs with it),
 * and the bound for code on edges is no more than the bound for kprobes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "pathtrace_abi.h"
#include "regen_trace.h"
#include "unit.h"

/* Where key=... starts a word of txt (the summary line), or NULL; *vp: its value. */
static const char *value_of(const char *txt, const char *key)
{
	size_t n = strlen(key);
	const char *p;

	for (p = strstr(txt, key); p; p = strstr(p + 1, key))
		if ((p == txt || p[-1] == ' ' || p[-1] == '\n') && p[n] == '=')
			return p + n + 1;
	return NULL;
}

static uint64_t field(const char *txt, const char *key)
{
	const char *p = value_of(txt, key);
	unsigned long long v;

	return p && sscanf(p, "%llu", &v) == 1 ? v : UINT64_MAX;
}

static double field_f(const char *txt, const char *key)
{
	const char *p = value_of(txt, key);
	double v;

	return p && sscanf(p, "%lf", &v) == 1 ? v : -1.0;
}

/*
 * The "not jump-optimizable, by why" rows of txt: their sites summed, or
 * UINT64_MAX when the table is missing. Each row ends in sites, hits.
 */
static uint64_t why_sites(const char *txt)
{
	const char *p = strstr(txt, "sites not jump-optimizable, by why");
	uint64_t sum = 0;

	if (!p)
		return UINT64_MAX;
	for (p = strchr(p, '\n'); p && p[1] == ' ' && p[2] == ' '; p = strchr(p + 1, '\n')) {
		const char *end = strchr(p + 1, '\n'), *q;
		unsigned long long sites, hits;

		if (!end)
			return UINT64_MAX;
		/* back over "sites hits" */
		for (q = end; q > p && q[-1] != ' '; q--)
			;
		while (q > p && q[-1] == ' ')
			q--;
		while (q > p && q[-1] != ' ')
			q--;
		if (sscanf(q, "%llu %llu", &sites, &hits) != 2)
			return UINT64_MAX;
		sum += sites;
	}
	return sum;
}

static double check(uint64_t seed, uint16_t mode, uint16_t encoding, int inline_sites)
{
	struct rt_case c;
	struct tracefile tf;
	struct out_writer w = { .ops = &out_hits_ops, .top = 2, .hits_inline_sites = inline_sites };
	uint64_t want;
	double bound;
	struct out_writer *ws[1] = { &w };
	char *txt = NULL;
	size_t len = 0;

	CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, seed, 4, mode, encoding, 0), 0);
	memset(&tf, 0, sizeof(tf));
	CU_ASSERT_EQUAL_FATAL(tracefile_read(c.path, &tf), 0);
	w.m = &c.m;
	w.tf = &tf;
	w.fp = open_memstream(&txt, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w.fp);
	CU_ASSERT_EQUAL(rt_feed_truth(&c, ws, 1), 0);
	CU_ASSERT_EQUAL(w.ops->close(&w), 0);
	fclose(w.fp);
	CU_ASSERT_PTR_NOT_NULL_FATAL(txt);
	want = inline_sites ? c.r.inline_site_hits : c.r.site_hits;
	if (field(txt, "hits") != want)
		fprintf(stderr, "seed %" PRIu64 " mode %u inline %d: --hits %" PRIu64 ", the module %"
			PRIu64 "\n%s", seed, mode, inline_sites, field(txt, "hits"), want, txt);
	CU_ASSERT_EQUAL(field(txt, "hits"), want);
	CU_ASSERT(want > 0 && want <= c.r.site_hits);
	CU_ASSERT(field(txt, "functions") >= 1 && field(txt, "functions") <= c.m.nfuncs);
	/* the bound keeps the ENTER probes and never goes negative */
	if (mode == PT_MODE_TRACE)
		CU_ASSERT(field_f(txt, "bound_per_block") >= field_f(txt, "enter_per_block"));
	CU_ASSERT(field_f(txt, "bound_per_block") >= 0.0);
	/* every site is jump-optimizable or has a why (an inline copy's: no probe, no why) */
	CU_ASSERT_EQUAL(why_sites(txt) + field(txt, "sites_optimizable"), field(txt, "sites"));
	bound = field_f(txt, "bound_per_block");
	free(txt);
	tracefile_free(&tf);
	rt_case_free(&c);
	return bound;
}

static void test_hits_equal_the_modules(void)
{
	static const uint16_t modes[3][2] = {
		{ PT_MODE_TRACE, PT_ENC_WITNESS }, { PT_MODE_TRACE, PT_ENC_BITS },
		{ PT_MODE_PATHS, PT_ENC_PATH },
	};
	uint64_t seed;
	uint32_t m;

	for (seed = 1; seed <= 40; seed++) {
		for (m = 0; m < 3; m++) {
			double kprobes = check(seed + 1000 * m, modes[m][0], modes[m][1], 0);
			double copies = check(seed + 1000 * m, modes[m][0], modes[m][1], 1);

			/* every tree's chords cost no more on their edges than at probes */
			CU_ASSERT(copies <= kprobes + 1e-9);
		}
	}
}

UNIT_SUITE(out_hits,
	   { "hits per plan site equal the simulated module's handler runs, and an inline "
	     "copy's calls", test_hits_equal_the_modules })
