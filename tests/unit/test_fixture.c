// SPDX-License-Identifier: GPL-2.0
/*
 * The committed traces in tests/fixtures. trace-v2.0.bin, recorded in the
 * VM by tests/fixtures/record.sh (the test module's functions in witness
 * plans with --verify, on both CPUs), must keep reading cleanly, verifying
 * with 0 differences and regenerating to trace-v2.0.txt in every later
 * version of the reader. trace-v1.0.bin, of format 1, must be refused with
 * a message that names what reads it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "streams.h"
#include "unit.h"

static const char *fixture_path(const char *name)
{
	const char *dir = getenv("PT_FIXTURES");
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/fixtures", name);
	return path;
}


/* Runs pathregen ARGS with stdout into out; its exit status, or -1. */
static int pathregen(const char *args, const char *out)
{
	char prog[512], cmd[2048];
	int st;

	if (!unit_sibling_prog("pathregen", prog, sizeof(prog)))
		return -1;
	snprintf(cmd, sizeof(cmd), "timeout -s KILL 60 %s %s > %s 2>/dev/null", prog, args, out);
	st = system(cmd);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

/* Whether files a and b hold the same bytes. */
static int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int ca, cb, same = fa && fb;

	while (same) {
		ca = fgetc(fa);
		cb = fgetc(fb);
		same = ca == cb;
		if (ca == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

static int contains(const char *path, const char *s)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, s) != NULL;
	if (f)
		fclose(f);
	return found;
}

static void test_fixture_regenerates(void)
{
	struct tracefile tf;
	struct tr_records rs = { 0 };
	struct regen_streams ss;
	char out[] = "/tmp/pt-fixture-XXXXXX", args[1024];
	uint32_t i, blocks = 0, enters = 0;
	int fd;

	CU_ASSERT_EQUAL_FATAL(tracefile_read(fixture_path("trace-v2.0.bin"), &tf), 0);
	CU_ASSERT_EQUAL(tf.major, 2);
	CU_ASSERT_EQUAL(tf.nr_cpus, 2);
	CU_ASSERT_STRING_EQUAL(tf.release, "6.1.0-56-amd64");
	CU_ASSERT_EQUAL(tf.nfuncs, 5);
	for (i = 0; i < tf.nfuncs; i++)
		CU_ASSERT(tf.funcs[i].cfg_len > 0 && tf.funcs[i].plan_len > 0);
	CU_ASSERT_EQUAL_FATAL(tr_decode_tracefile(&rs, &tf), 0);
	CU_ASSERT_EQUAL(rs.bad_pages + rs.bad_events + rs.bad_records + rs.unknown_records, 0);
	for (i = 0; i < rs.n; i++) {
		blocks += rs.recs[i].type == PT_REC_BLOCK;
		enters += rs.recs[i].type == PT_REC_ENTER;
	}
	CU_ASSERT_EQUAL(blocks, 180);
	CU_ASSERT(enters > 0 && rs.enter_codes > 0);
	CU_ASSERT_EQUAL_FATAL(regen_streams_build(&rs, &ss), 0);
	CU_ASSERT(ss.nstreams >= 2);
	CU_ASSERT_EQUAL(ss.unowned_records, 0);
	regen_streams_free(&ss);
	tr_records_free(&rs);
	tracefile_free(&tf);

	fd = mkstemp(out);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	snprintf(args, sizeof(args), "--verify %s", fixture_path("trace-v2.0.bin"));
	CU_ASSERT_EQUAL(pathregen(args, out), 0);
	CU_ASSERT(contains(out, "180 blocks equal"));
	CU_ASSERT(contains(out, " 0 differences"));
	CU_ASSERT_EQUAL(pathregen(fixture_path("trace-v2.0.bin"), out), 0);
	CU_ASSERT(same_file(out, fixture_path("trace-v2.0.txt")));
	unlink(out);
}

static void test_other_major_refused(void)
{
	struct tracefile tf;

	CU_ASSERT_EQUAL(tracefile_read(fixture_path("trace-v1.0.bin"), &tf), -PT_EVERSION);
	CU_ASSERT_PTR_NOT_NULL(strstr(tf.err_msg, "format 1.0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(tf.err_msg, "commit 42e015a"));
	tracefile_free(&tf);
}

UNIT_SUITE(fixture,
	   { "trace-v2.0.bin reads, verifies and regenerates as recorded", test_fixture_regenerates },
	   { "trace-v1.0.bin (format 1): refused, naming what reads it", test_other_major_refused })
