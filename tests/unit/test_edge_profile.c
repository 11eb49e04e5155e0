// SPDX-License-Identifier: GPL-2.0
/*
 * Edge profiles as planning weights (edge_profile.h): the text pathregen
 * --edges writes is read back and mapped onto a CFG edge by edge (same
 * blocks, same kinds); a function whose code changed or that the profile
 * lacks is not matched; a malformed file names its line.
 */
#include <stdio.h>
#include <string.h>

#include <pathtrace/edge_profile.h>
#include <pathtrace/error.h>
#include <pathtrace/weight.h>

#include "cfg_asm.h"
#include "unit.h"

static const char diamond[] =
	"\t.text\n\t.globl diamond\n\t.type diamond,@function\ndiamond:\n"
	"	call __fentry__\n"		/* 0 */
	"	test %edi,%edi\n"		/* 5 */
	"	je 1f\n"			/* 7 */
	"	mov $1,%eax\n"			/* 9 */
	"	jmp 2f\n"			/* e */
	"1:	mov $2,%eax\n"			/* 10 */
	"2:	jmp __x86_return_thunk\n"	/* 15: a return */
	"\t.size diamond, .-diamond\n";

/* Another diamond first: same name, one edge kind differs (not this code). */
static const char profile[] =
	"# edge profile: traversals per CFG edge, per function\n"
	"diamond (func 9): 4 activations\n"
	"           1  diamond+0x0 -> diamond+0x9 (fall)\n"
	"           3  diamond+0x0 -> diamond+0x10 (taken)\n"
	"           1  diamond+0x9 -> diamond+0x15 (fall)\n"
	"           3  diamond+0x10 -> diamond+0x15 (fall)\n"
	"           4  diamond+0x15 -> EXIT (exit)\n"
	"other (func 2): 0 activations (edges mode: counters not read)\n"
	"diamond (func 3): 10 activations\n"
	"           7  diamond+0x0 -> diamond+0x9 (fall)\n"
	"           3  diamond+0x0 -> diamond+0x10 (taken)\n"
	"           7  diamond+0x9 -> diamond+0x15 (jump)\n"
	"           3  diamond+0x10 -> diamond+0x15 (fall)\n"
	"          10  diamond+0x15 -> EXIT (exit)\n";

static int read_text(const char *text, struct edge_profile *p, uint32_t *line)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	int err;

	CU_ASSERT_FATAL(fp != NULL);
	err = edge_profile_read(fp, p, line);
	fclose(fp);
	return err;
}

static void test_weights(void)
{
	static const uint64_t want[] = { 7, 3, 7, 3, 10 };
	struct edge_profile p;
	struct cfg c;
	char other[sizeof(profile)] = "";
	uint64_t w[8];
	uint32_t e, line = 0;

	CU_ASSERT_EQUAL_FATAL(cfg_asm_build(diamond, "diamond", &c), 0);
	CU_ASSERT_EQUAL_FATAL(c.nedges, 5);
	CU_ASSERT_EQUAL_FATAL(read_text(profile, &p, &line), 0);
	CU_ASSERT_EQUAL(p.nfuncs, 3);
	CU_ASSERT_EQUAL(edge_profile_weights(&p, &c, w), 0);
	for (e = 0; e < 5; e++)
		CU_ASSERT_EQUAL(w[e], want[e] * WEIGHT_ONE);
	edge_profile_free(&p);
	/* only the other diamond (the profile up to the second heading): not this code */
	memcpy(other, profile, sizeof(other));
	*strstr(other, "diamond (func 3)") = 0;
	CU_ASSERT_EQUAL_FATAL(read_text(other, &p, &line), 0);
	CU_ASSERT_EQUAL(p.nfuncs, 2);
	CU_ASSERT_EQUAL(edge_profile_weights(&p, &c, w), -PT_ENOENT);
	edge_profile_free(&p);
	cfg_free(&c);
}

static void test_malformed(void)
{
	struct edge_profile p;
	uint32_t line = 0;

	CU_ASSERT_EQUAL(read_text("diamond (func 3): 1 activations\n"
				  "           1  diamond+0x0 -> diamond+0x9 (sideways)\n", &p, &line),
			-PT_EFORMAT);
	CU_ASSERT_EQUAL(line, 2);
	edge_profile_free(&p);
	CU_ASSERT_EQUAL(read_text("           1  f+0x0 -> EXIT (exit)\n", &p, &line), -PT_EFORMAT);
	CU_ASSERT_EQUAL(line, 1);	/* an edge before any function */
	edge_profile_free(&p);
	CU_ASSERT_EQUAL(read_text("f (func 1): 1 activations\n"
				  "           1  g+0x0 -> EXIT (exit)\n", &p, &line), -PT_EFORMAT);
	CU_ASSERT_EQUAL(line, 2);	/* another function's block */
	edge_profile_free(&p);
	CU_ASSERT_EQUAL(read_text("just text\n", &p, &line), -PT_EFORMAT);
	edge_profile_free(&p);
}

UNIT_SUITE(edge_profile,
	   { "a pathregen --edges profile as exact weights", test_weights },
	   { "malformed profiles name their line", test_malformed })
