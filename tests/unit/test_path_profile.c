// SPDX-License-Identifier: GPL-2.0
/*
 * Path profiles as PPP's interesting paths (path_profile.h): the text
 * pathregen --paths writes, read back in order, hottest first.
 */
#include <stdio.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/path_profile.h>

#include "unit.h"

static const char profile[] =
	"# Ball-Larus path profile: hottest paths per function\n"
	"vfs_read (func 3): 120 paths executed, 3 distinct of 96 possible (7-bit numbers)\n"
	"         100  path 17: vfs_read+0x0 vfs_read+0x2f vfs_read+0x51\n"
	"          15  path 3: vfs_read+0x0 vfs_read+0x1c\n"
	"           5  path 95: vfs_read+0x0 vfs_read.cold+0x4\n"
	"odd (func 4): paths not numbered: too many paths\n"
	"ksys_read (func 5): 9 paths executed, 1 distinct of 4 possible (2-bit numbers) "
	"(counted in the kernel: 2 PATHS records; 0 path ends lost)\n"
	"           9  path 0: ksys_read+0x0\n"
	"# 3 paths cut by a gap or the end of a stream: not counted\n";

static int read_text(const char *text, struct path_profile *p, uint32_t *line)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	int err;

	CU_ASSERT_FATAL(fp != NULL);
	err = path_profile_read(fp, p, line);
	fclose(fp);
	return err;
}

static void test_read(void)
{
	const struct path_profile_func *f;
	struct path_profile p;
	uint32_t line;

	CU_ASSERT_EQUAL_FATAL(read_text(profile, &p, &line), 0);
	CU_ASSERT_EQUAL(p.nfuncs, 3);
	f = path_profile_find(&p, "vfs_read");
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_EQUAL(f->npaths, 3);
	CU_ASSERT(f->paths[0] == 17 && f->paths[1] == 3 && f->paths[2] == 95);
	CU_ASSERT(f->counts[0] == 100 && f->counts[2] == 5);
	f = path_profile_find(&p, "odd");
	CU_ASSERT(f != NULL && f->npaths == 0);
	f = path_profile_find(&p, "ksys_read");
	CU_ASSERT(f != NULL && f->npaths == 1 && f->paths[0] == 0 && f->counts[0] == 9);
	CU_ASSERT_PTR_NULL(path_profile_find(&p, "vfs_write"));
	path_profile_free(&p);
}

static void test_errors(void)
{
	static const struct {
		const char *text;
		uint32_t line;
	} bad[] = {
		{ "           9  path 0: f+0x0\n", 1 },		/* before any heading */
		{ "f (func 1): 1 paths\n   x  path 0: f+0x0\n", 2 },
		{ "f (func 1): 1 paths\n   9  path q: f+0x0\n", 2 },
		{ "f (func 1): 1 paths\n   9 path 0: f+0x0\n", 2 },
		{ "no heading here\n", 1 },
		{ "(func 1): 1 paths\n", 1 },
	};
	struct path_profile p;
	uint32_t i, line;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(read_text(bad[i].text, &p, &line), -PT_EFORMAT);
		CU_ASSERT_EQUAL(line, bad[i].line);
		path_profile_free(&p);
	}
}

UNIT_SUITE(path_profile,
	   { "pathregen --paths read back, hottest first", test_read },
	   { "malformed lines: where", test_errors })
