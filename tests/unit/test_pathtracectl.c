// SPDX-License-Identifier: GPL-2.0
/*
 * The pathtracectl program's command line (built next to unit-tests; no
 * module needed): every command's -h/--help exits 0 with its usage on
 * stdout, naming every option its parser takes (--list-options, the same
 * table) as pathtracectl --help's synopsis does; --version; an unknown
 * option is called unknown and a missing value missing, each on one line
 * with the hint, exit 2; cfg and plan take globs (an object assembled
 * here: two functions of three match).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfg_asm.h"
#include "unit.h"

static char prog[4200];

/* Runs pathtracectl ARGS; *out gets stdout, *err stderr (malloc'd). Returns its exit status. */
static int run(const char *args, char **out, char **err)
{
	char cmd[8192], path[2][64] = { "/tmp/pt-ctl-out-XXXXXX", "/tmp/pt-ctl-err-XXXXXX" };
	char **dst[2] = { out, err };
	int st, k;

	for (k = 0; k < 2; k++)
		close(mkstemp(path[k]));
	snprintf(cmd, sizeof(cmd), "timeout -s KILL 30 %s %s > %s 2> %s", prog, args, path[0],
		 path[1]);
	st = system(cmd);
	for (k = 0; k < 2; k++) {
		FILE *f = fopen(path[k], "r");
		size_t n = 0;
		char *buf = NULL;
		FILE *m = open_memstream(&buf, &n);
		int c;

		while (f && (c = fgetc(f)) != EOF)
			fputc(c, m);
		if (f)
			fclose(f);
		fclose(m);
		*dst[k] = buf;
		unlink(path[k]);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static unsigned int lines(const char *s)
{
	unsigned int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_help_everywhere(void)
{
	char *out, *err, *cmds, *opts, *all, *c, *o, args[256];

	if (!unit_sibling_prog("pathtracectl", prog, sizeof(prog))) {
		CU_FAIL("pathtracectl is not built beside unit-tests");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(run("--list-commands", &cmds, &err), 0);
	CU_ASSERT(lines(cmds) >= 10);
	free(err);
	CU_ASSERT_EQUAL(run("--help", &all, &err), 0);
	free(err);
	for (c = strtok(cmds, "\n"); c; c = strtok(NULL, "\n")) {
		char *save = NULL;

		snprintf(args, sizeof(args), "%s --help", c);
		CU_ASSERT_EQUAL(run(args, &out, &err), 0);
		CU_ASSERT_EQUAL(err[0], 0);
		CU_ASSERT(!strncmp(out, "usage: pathtracectl ", 20));
		snprintf(args, sizeof(args), "%s -h", c);
		free(err);
		CU_ASSERT_EQUAL(run(args, &opts, &err), 0);
		CU_ASSERT_STRING_EQUAL(opts, out);
		free(opts);
		free(err);
		/* every option the parser takes is in the command's usage and the synopsis */
		snprintf(args, sizeof(args), "%s --list-options", c);
		CU_ASSERT_EQUAL(run(args, &opts, &err), 0);
		free(err);
		for (o = strtok_r(opts, "\n", &save); o; o = strtok_r(NULL, "\n", &save)) {
			CU_ASSERT_PTR_NOT_NULL(strstr(out, o));
			CU_ASSERT(!strcmp(o, "--help") || strstr(all, o));
		}
		free(opts);
		free(out);
		/* an unknown option: said so, one line, exit 2 */
		snprintf(args, sizeof(args), "%s --bogus", c);
		CU_ASSERT_EQUAL(run(args, &out, &err), 2);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown option '--bogus'"));
		CU_ASSERT_EQUAL(lines(err), 1);
		free(out);
		free(err);
	}
	free(cmds);
	free(all);
	CU_ASSERT_EQUAL(run("enable --mode", &out, &err), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--mode needs a value"));
	CU_ASSERT_EQUAL(lines(err), 1);
	free(out);
	free(err);
	CU_ASSERT_EQUAL(run("enable --mode=sideways f", &out, &err), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--mode trace|paths|path-profile|edges, not sideways"));
	free(out);
	free(err);
	CU_ASSERT_EQUAL(run("--version", &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "trace.bin format"));
	free(out);
	free(err);
}

static void test_globs(void)
{
	char *out, *err, args[512];

	if (!unit_sibling_prog("pathtracectl", prog, sizeof(prog))) {
		CU_FAIL("pathtracectl is not built beside unit-tests");
		return;
	}
	elfobj_close(cfg_asm_object("globs",
		"	.text\n	.type get_one,@function\nget_one:	call __fentry__\n	ret\n"
		"	.size get_one, .-get_one\n"
		"	.type get_two,@function\nget_two:	call __fentry__\n	test %edi,%edi\n"
		"	je 1f\n	call get_one\n1:	ret\n	.size get_two, .-get_two\n"
		"	.type put,@function\nput:	call __fentry__\n	ret\n	.size put, .-put\n"));
	snprintf(args, sizeof(args), "cfg 'get_*' --elf %s/globs.o", cfg_asm_dir());
	CU_ASSERT_EQUAL(run(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "get_one:"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "get_two:"));
	CU_ASSERT_PTR_NULL(strstr(out, "put:"));
	free(out);
	free(err);
	/* plan takes enable's --mode set, path-profile included */
	snprintf(args, sizeof(args), "plan 'get_[t]*' --mode path-profile --elf %s/globs.o",
		 cfg_asm_dir());
	CU_ASSERT_EQUAL(run(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "get_two"));
	CU_ASSERT_PTR_NULL(strstr(out, "get_one:"));
	free(out);
	free(err);
	snprintf(args, sizeof(args), "cfg 'nothing*' --elf %s/globs.o", cfg_asm_dir());
	CU_ASSERT_EQUAL(run(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "matches"));
	free(out);
	free(err);
	CU_ASSERT_EQUAL(run("cfg f --elf /nonexistent.ko", &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file or directory"));
	free(out);
	free(err);
}

UNIT_SUITE(pathtracectl,
	   { "--help on every command, from the parser's table; unknown options; --version",
	     test_help_everywhere },
	   { "cfg and plan take globs; plan takes --mode path-profile", test_globs })
