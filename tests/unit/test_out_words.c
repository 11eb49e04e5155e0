// SPDX-License-Identifier: GPL-2.0
/*
 * --words: the words pathregen counts while it regenerates must be the
 * simulated module's (every trace bit of a witness run is a word; the
 * words it wrote by context, sim_kmod_run.ctx_words, are the reads in a
 * context); the plans' words adapt (PT_PLAN_CTX_SWAP), so the forecast
 * for adapting words, worked out from each read's code and the rows'
 * fixed words, is exactly what the simulated module's words took; and no
 * figure goes below one bit a read or above what the words took where it
 * is a floor.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "regen_trace.h"
#include "unit.h"

/* key=value in the summary line of txt, or -1. */
static double field(const char *txt, const char *key)
{
	const char *line = strstr(txt, "\nfunctions="), *p;
	size_t n = strlen(key);
	double v;

	for (p = line ? strstr(line, key) : NULL; p; p = strstr(p + 1, key))
		if (p[-1] == ' ' && p[n] == '=' && sscanf(p + n + 1, "%lf", &v) == 1)
			return v;
	return -1.0;
}

/* --words [--replan how] on case c's trace.bin; its text (malloc'd). */
static char *words(const struct rt_case *c, int how)
{
	struct out_writer w = { .ops = &out_words_ops, .top = 3, .hits_replan = how };
	struct out_writer *ws[1] = { &w };
	struct rt_result res;
	char *txt = NULL;
	size_t len = 0;

	w.fp = open_memstream(&txt, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w.fp);
	CU_ASSERT_EQUAL(rt_regen(c->path, &res, ws, 1, NULL), 0);
	CU_ASSERT_EQUAL(res.gaps, 0);
	fclose(w.fp);
	rt_result_free(&res);
	CU_ASSERT_PTR_NOT_NULL_FATAL(txt);
	return txt;
}

static void test_words_are_the_modules(void)
{
	uint64_t seed, total = 0, ctx = 0, swapped = 0;

	for (seed = 1; seed <= 40; seed++) {
		struct rt_case c;
		char *txt, *heur, *prof;
		double reads, bits;

		CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, seed, 4, PT_MODE_TRACE, PT_ENC_WITNESS, 0), 0);
		txt = words(&c, OUT_REPLAN_NONE);
		heur = words(&c, OUT_REPLAN_HEURISTIC);
		prof = words(&c, OUT_REPLAN_PROFILE);
		reads = field(txt, "reads");
		bits = field(txt, "bits");
		if (bits != (double)c.r.bits || field(txt, "ctx_reads") != (double)c.r.ctx_words)
			fprintf(stderr, "seed %" PRIu64 ": module %" PRIu64 " bits, %" PRIu64
				" by context\n%s", seed, c.r.bits, c.r.ctx_words, txt);
		CU_ASSERT_EQUAL(bits, (double)c.r.bits);
		CU_ASSERT_EQUAL(field(txt, "ctx_reads"), (double)c.r.ctx_words);
		CU_ASSERT(reads >= field(txt, "ctx_reads"));
		CU_ASSERT(bits >= reads);	/* a word has a bit at least */
		CU_ASSERT(field(txt, "entropy_bits") >= 0 && field(txt, "entropy_bits") <= bits);
		if (field(txt, "adaptive_bits") != bits)
			fprintf(stderr, "seed %" PRIu64 ": adapting words forecast\n%s", seed, txt);
		CU_ASSERT_EQUAL(field(txt, "adaptive_bits"), bits);
		CU_ASSERT_EQUAL(field(txt, "replan_bits"), -1.0);
		/* the same reads in the other runs, the plans' words again by the heuristic */
		CU_ASSERT_EQUAL(field(heur, "bits"), bits);
		CU_ASSERT(field(heur, "replan_bits") >= reads);
		CU_ASSERT_EQUAL(field(prof, "reads"), reads);
		CU_ASSERT(field(prof, "replan_bits") >= reads);
		total += c.r.bits;
		ctx += c.r.ctx_words;
		swapped += c.r.ctx_swapped;
		free(txt);
		free(heur);
		free(prof);
		rt_case_free(&c);
	}
	CU_ASSERT(total > 0 && ctx > 0);	/* the cases read words, in contexts */
	CU_ASSERT(swapped > 0);			/* and adapting */
}

/* Bits and paths plans read no words by context: --words lists nothing. */
static void test_no_words(void)
{
	struct rt_case c;
	char *txt;

	CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, 7, 4, PT_MODE_PATHS, PT_ENC_PATH, 0), 0);
	txt = words(&c, OUT_REPLAN_NONE);
	CU_ASSERT_EQUAL(field(txt, "functions"), -1.0);	/* the line starts with it */
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "\nfunctions=0 reads=0 "));
	free(txt);
	rt_case_free(&c);
}

UNIT_SUITE(out_words,
	   { "words read equal the simulated module's, adapting as forecast",
	     test_words_are_the_modules },
	   { "no words by context, nothing counted", test_no_words })
