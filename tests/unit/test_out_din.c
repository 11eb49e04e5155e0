// SPDX-License-Identifier: GPL-2.0
/*
 * --format din: a known execution (the synthetic run's truth, nested calls
 * included) through the din writer, read back by a reader written from
 * the din format's definition (one record per line: a label 0..4, white
 * space, a hex address without 0x; the rest of the line is ignored), must
 * give one instruction fetch (label 2) per executed instruction, at the
 * addresses of the blocks' instructions, in execution order, each followed
 * by a fetch at the start of every further cache line the instruction's
 * bytes reach (16-byte lines here, so that many do), then its data
 * references (labels 0 and 1) if any.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "regen_trace.h"
#include "unit.h"

struct din_rec {
	int label;
	uint64_t addr;
};

/* Strict din reader: returns the record count, or -(line number) of the first bad line. */
static int64_t din_read(const char *text, size_t len, struct din_rec *out, uint64_t max)
{
	uint64_t n = 0, line = 0;
	size_t i = 0;

	while (i < len) {
		uint64_t addr = 0;
		int digits = 0, label;

		line++;
		if (text[i] < '0' || text[i] > '4')
			return -(int64_t)line;
		label = text[i++] - '0';
		if (i >= len || (text[i] != ' ' && text[i] != '\t'))
			return -(int64_t)line;
		while (i < len && (text[i] == ' ' || text[i] == '\t'))
			i++;
		if (i + 1 < len && text[i] == '0' && (text[i + 1] == 'x' || text[i + 1] == 'X'))
			return -(int64_t)line;	/* din addresses carry no 0x */
		while (i < len && isxdigit((unsigned char)text[i])) {
			int c = tolower((unsigned char)text[i++]);

			if (digits++ == 16)
				return -(int64_t)line;
			addr = addr << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
		}
		if (!digits)
			return -(int64_t)line;
		if (i < len && text[i] != '\n' && text[i] != ' ' && text[i] != '\t')
			return -(int64_t)line;
		while (i < len && text[i] != '\n')	/* the rest of a line is ignored */
			i++;
		if (i == len)
			return -(int64_t)line;	/* every record ends with a newline */
		i++;
		if (n == max)
			return -(int64_t)line;
		out[n].label = label;
		out[n++].addr = addr;
	}
	return (int64_t)n;
}

static void test_reader_rejects(void)
{
	struct din_rec r[4];
	const char *ok = "2 ffffffff81000000\n0 10 comment\n";

	CU_ASSERT_EQUAL(din_read(ok, strlen(ok), r, 4), 2);
	CU_ASSERT_EQUAL(r[0].label, 2);
	CU_ASSERT_EQUAL(r[0].addr, 0xffffffff81000000ull);
	CU_ASSERT_EQUAL(r[1].addr, 0x10);
	CU_ASSERT(din_read("5 10\n", 5, r, 4) < 0);
	CU_ASSERT(din_read("2 0x10\n", 7, r, 4) < 0);
	CU_ASSERT(din_read("2 10", 4, r, 4) < 0);
	CU_ASSERT(din_read("2\n", 2, r, 4) < 0);
	CU_ASSERT(din_read("2 1g\n", 5, r, 4) < 0);
}

/* Checks one synthetic run; returns how many line crossings it saw. */
static uint64_t check_seed(uint64_t seed, uint16_t mode, uint16_t enc)
{
	struct rt_case c;
	struct out_writer w = { .ops = &out_din_ops, .line = 16 };
	char *text = NULL;
	size_t len = 0;
	uint64_t expect, i, k = 0, t, crossings = 0;
	struct din_rec *recs;
	int64_t n;
	int ok = 1;

	if (rt_case_make(&c, seed, 4, mode, enc, 0)) {
		CU_FAIL("synthetic run");
		return 0;
	}
	CU_ASSERT_EQUAL_FATAL(rt_truth_output(&c, &w, &text, &len), 0);
	expect = rt_truth_insns(&c);
	/* at most: every instruction crosses a line (< 16 bytes long), 4 data references each */
	recs = malloc((expect * 10 + 1) * sizeof(*recs));
	n = din_read(text, len, recs, expect * 10 + 1);
	CU_ASSERT(n >= (int64_t)expect);
	/* Execution order per task, tasks one after another (the writer's stream order). */
	for (t = 0; t < RT_NTASKS && n >= (int64_t)expect; t++) {
		for (i = 0; i < c.t.nev; i++) {
			const struct pr_func *f;
			const struct cfg_block *b;
			uint32_t j;

			if (c.t.ev[i].owner != RT_TASK(t) || c.t.ev[i].type != REGEN_EV_BLOCK)
				continue;
			f = pr_model_func(&c.m, c.t.ev[i].func);
			b = &f->cfg.blocks[c.t.ev[i].block];
			for (j = 0; j < b->ninsn && ok; j++) {
				const struct cfg_insn *in = &f->cfg.insns[b->first_insn + j];
				uint64_t line;

				ok &= k < (uint64_t)n && recs[k].label == 2 && recs[k].addr == in->addr;
				k++;
				for (line = (in->addr | 15) + 1; line < in->addr + in->len; line += 16) {
					ok &= k < (uint64_t)n && recs[k].label == 2 && recs[k].addr == line;
					k++;
					crossings++;
				}
				while (k < (uint64_t)n && recs[k].label < 2)
					k++;
			}
		}
	}
	CU_ASSERT(ok);
	CU_ASSERT_EQUAL(k, (uint64_t)n);
	CU_ASSERT(expect > 0);
	free(recs);
	free(text);
	rt_case_free(&c);
	return crossings;
}

static void test_fetches_match_execution(void)
{
	uint64_t seed = unit_seed(), crossings = 0;
	unsigned int i;

	for (i = 0; i < 6; i++)
		crossings += check_seed(seed * 13 + i, PT_MODE_TRACE, PT_ENC_WITNESS);
	CU_ASSERT(crossings > 0);	/* 16-byte lines: the extra fetches were exercised */
}

UNIT_SUITE(out_din,
	   { "strict din reader accepts and rejects by the format", test_reader_rejects },
	   { "one fetch per executed instruction, in order", test_fetches_match_execution })
