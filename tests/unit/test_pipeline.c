// SPDX-License-Identifier: GPL-2.0
/*
 * pipeline: pathregen's pipeline as a library call (regen/pipeline.h).
 * The committed fixture recorded in the VM, step by step: nothing to tell,
 * its streams, and the text writer's output, which must be the fixture's
 * committed regeneration (tests/fixtures/trace-v2.0.txt). A
 * simulated verify-mode run (tests/oracle): the whole pipeline, quiet,
 * then the verify writer over every stream compares each regenerated
 * block with the every-block records of the run: no difference. A walk
 * of one stream calls its hooks once, and a hook stops the walk. A
 * truncated file is told and the prefix kept, or refused when quiet.
 * Streams walked on two threads (pr_walk.jobs) give every writer's output
 * byte for byte as one thread does, on simulated multi-owner runs of each
 * encoding.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "pipeline.h"
#include "regen_trace.h"
#include "unit.h"

static const char *fixture_path(const char *name)
{
	const char *dir = getenv("PT_FIXTURES");
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/fixtures", name);
	return path;
}

/* A whole file's text (NUL-terminated; free it), or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, n;
	FILE *m = open_memstream(&buf, &len);
	char chunk[4096];

	while (f && m && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	if (f)
		fclose(f);
	if (m)
		fclose(m);
	return f ? buf : (free(buf), NULL);
}

/* The problems told, "what: msg" a line. */
struct told {
	char text[2048];
	unsigned int n;
};

static void collect(void *ctx, const char *what, const char *msg)
{
	struct told *t = ctx;
	size_t len = strlen(t->text);

	snprintf(t->text + len, sizeof(t->text) - len, "%s: %s\n", what, msg);
	t->n++;
}

static void test_fixture_steps(void)
{
	struct told told = { .n = 0 };
	struct pr_trace t;
	struct out_writer w = { .ops = &out_text_ops };
	struct out_writer *ws[1] = { &w };
	char *buf = NULL, *want = slurp(fixture_path("trace-v2.0.txt"));
	size_t len = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	pr_trace_init(&t, collect, &told);
	CU_ASSERT_EQUAL_FATAL(pr_trace_read(&t, fixture_path("trace-v2.0.bin")), 0);
	CU_ASSERT_EQUAL(t.bad, 0);
	CU_ASSERT_EQUAL_FATAL(pr_trace_model(&t), 0);
	CU_ASSERT_EQUAL(t.m.nfuncs, 5);
	CU_ASSERT_EQUAL(t.err, 0);
	CU_ASSERT_EQUAL_FATAL(pr_trace_streams(&t), 0);
	CU_ASSERT_EQUAL(t.bad, 0);
	CU_ASSERT_EQUAL(told.n, 0);
	CU_ASSERT(t.ss.nstreams >= 2);

	w.m = &t.m;
	w.fp = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w.fp);
	CU_ASSERT_EQUAL_FATAL(out_open_all(ws, 1), 0);
	CU_ASSERT_EQUAL(pr_trace_walk(&t, ws, 1, NULL), 0);
	CU_ASSERT_EQUAL(out_close_all(ws, 1), 0);
	fclose(w.fp);
	CU_ASSERT_STRING_EQUAL(buf, want);
	free(buf);
	free(want);
	pr_trace_free(&t);
}

struct hooks {
	unsigned int begun, ended;
	uint32_t index;
	int stop;
};

static int hook_begin(void *ctx, const struct out_stream *st)
{
	struct hooks *h = ctx;

	h->begun++;
	h->index = st->index;
	return 0;
}

static int hook_end(void *ctx, const struct out_stream *st, int err)
{
	struct hooks *h = ctx;

	(void)st;
	h->ended++;
	return err ? err : h->stop;
}

static void test_simulated_verify(void)
{
	struct rt_case c;
	struct pr_trace t;
	struct verify_result vr = { 0 };
	struct out_writer ver = { .ops = &verify_ops, .priv = &vr, .fp = stderr };
	struct out_writer *ws[1] = { &ver };
	struct hooks h = { 0 };
	struct pr_walk one = { .one_stream = 1, .begin = hook_begin, .end = hook_end, .ctx = &h };
	uint64_t markers = 0;
	uint32_t i, k;

	CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, unit_seed() * 13 + 5, 3, PT_MODE_TRACE,
					   PT_ENC_WITNESS, PT_PLAN_VERIFY), 0);
	CU_ASSERT_EQUAL_FATAL(pr_trace_load(c.path, &t, 1), 0);
	CU_ASSERT_EQUAL(t.bad, 0);
	CU_ASSERT(t.ss.nstreams > 0);
	for (i = 0; i < t.ss.nstreams; i++)
		for (k = 0; k < t.ss.streams[i].nmarkers; k++)
			markers += t.ss.streams[i].markers[k].type == REGEN_M_BLOCK;
	CU_ASSERT(markers > 0);

	ver.m = &t.m;
	CU_ASSERT_EQUAL_FATAL(out_open_all(ws, 1), 0);
	CU_ASSERT_EQUAL(pr_trace_walk(&t, ws, 1, NULL), 0);
	CU_ASSERT_EQUAL(out_close_all(ws, 1), 0);
	CU_ASSERT_EQUAL(vr.differences, 0);
	CU_ASSERT(vr.compared > 0);
	CU_ASSERT_EQUAL(vr.compared + vr.unverified + vr.skipped, markers);
	CU_ASSERT_EQUAL(t.bad, 0);

	/* one stream: its hooks once; a hook's non-zero stops the walk and is returned */
	one.stream = t.ss.nstreams - 1;
	memset(&vr, 0, sizeof(vr));
	CU_ASSERT_EQUAL_FATAL(out_open_all(ws, 1), 0);
	CU_ASSERT_EQUAL(pr_trace_walk(&t, ws, 1, &one), 0);
	CU_ASSERT_EQUAL(h.begun, 1);
	CU_ASSERT_EQUAL(h.ended, 1);
	CU_ASSERT_EQUAL(h.index, t.ss.nstreams - 1);
	one.one_stream = 0;
	h.stop = 7;
	h.begun = h.ended = 0;
	CU_ASSERT_EQUAL(pr_trace_walk(&t, ws, 1, &one), 7);
	CU_ASSERT_EQUAL(h.begun, 1);
	CU_ASSERT_EQUAL(h.ended, 1);
	CU_ASSERT_EQUAL(out_close_all(ws, 1), 0);
	CU_ASSERT_EQUAL(vr.differences, 0);
	pr_trace_free(&t);
	rt_case_free(&c);
}

static void test_truncated(void)
{
	struct told told = { .n = 0 };
	struct pr_trace t;
	char path[] = "/tmp/pt-pipeline-XXXXXX";
	FILE *in = fopen(fixture_path("trace-v2.0.bin"), "rb"), *out;
	char buf[4096 + 512];
	size_t n;
	int fd = mkstemp(path);

	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_FATAL(fd >= 0);
	n = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	CU_ASSERT_FATAL(n == sizeof(buf));
	out = fdopen(fd, "wb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	fwrite(buf, 1, n, out);
	fclose(out);

	/* quiet and whole: refused with the file's error */
	CU_ASSERT(pr_trace_load(path, &t, 1) < 0);
	pr_trace_free(&t);
	/* step by step: told, marked bad, what came before kept */
	pr_trace_init(&t, collect, &told);
	CU_ASSERT_EQUAL(pr_trace_read(&t, path), 0);
	CU_ASSERT_EQUAL(t.bad, 1);
	CU_ASSERT(t.err < 0);
	CU_ASSERT_EQUAL(told.n, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(told.text, "regenerating what came before"));
	CU_ASSERT_EQUAL(pr_trace_model(&t), 0);
	CU_ASSERT_EQUAL(pr_trace_streams(&t), 0);
	pr_trace_free(&t);
	unlink(path);
	/* a file that is not there: -PT_EIO, told */
	memset(&told, 0, sizeof(told));
	pr_trace_init(&t, collect, &told);
	CU_ASSERT_EQUAL(pr_trace_read(&t, "/nonexistent/trace.bin"), -PT_EIO);
	CU_ASSERT_EQUAL(told.n, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(told.text, "/nonexistent/trace.bin: No such file"));
	pr_trace_free(&t);
}

/*
 * What writer ops writes over every stream of the trace at path with jobs
 * threads (malloc'd, NUL-terminated): loaded afresh, as --words counts in
 * the model.
 */
static char *walk_output(const char *path, const struct out_writer_ops *ops, unsigned int jobs)
{
	struct pr_trace tr, *t = &tr;
	struct verify_result vr = { 0 };
	struct out_writer w = { .ops = ops, .top = 10, .sp_memory = 2048, .sp_max_len = 64,
				.trace_name = "trace.bin" };
	struct out_writer *ws[1] = { &w };
	struct pr_walk pw = { .jobs = jobs };
	char *buf = NULL;
	size_t len = 0;

	CU_ASSERT_EQUAL_FATAL(pr_trace_load(path, t, 1), 0);
	CU_ASSERT_FATAL(t->ss.nstreams >= 2);	/* 3 tasks */
	w.m = &t->m;
	w.records = &t->rs;
	if (ops == &verify_ops)
		w.priv = &vr;
	w.fp = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w.fp);
	CU_ASSERT_EQUAL_FATAL(out_open_all(ws, 1), 0);
	CU_ASSERT_EQUAL(pr_trace_walk(t, ws, 1, &pw), 0);
	CU_ASSERT_EQUAL(out_close_all(ws, 1), 0);
	if (ops == &verify_ops)
		fprintf(w.fp, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", vr.compared, vr.no_plan,
			vr.differences);
	fclose(w.fp);
	pr_trace_free(t);
	return buf;
}

static void test_jobs_same_output(void)
{
	static const struct out_writer_ops *const writers[] = {
		&out_text_ops, &out_stats_ops, &out_edges_ops, &out_blocks_ops, &out_paths_ops,
		&out_json_ops, &out_perfetto_ops, &out_subpaths_ops, &out_words_ops, &verify_ops,
	};
	static const struct { uint16_t mode, enc; uint32_t flags; } cases[] = {
		{ PT_MODE_TRACE, PT_ENC_WITNESS, PT_PLAN_VERIFY },
		{ PT_MODE_TRACE, PT_ENC_WITNESS, 0 },
		{ PT_MODE_TRACE, PT_ENC_BITS, 0 },
		{ PT_MODE_PATHS, PT_ENC_PATH, 0 },
	};
	unsigned int i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_case c;

		CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, unit_seed() * 31 + i, 4, cases[i].mode,
						   cases[i].enc, cases[i].flags), 0);
		for (k = 0; k < sizeof(writers) / sizeof(writers[0]); k++) {
			char *one = walk_output(c.path, writers[k], 1);
			char *two = walk_output(c.path, writers[k], 2);

			CU_ASSERT_PTR_NOT_NULL_FATAL(one);
			CU_ASSERT_PTR_NOT_NULL_FATAL(two);
			CU_ASSERT(strlen(one) > 0);
			if (strcmp(one, two))
				fprintf(stderr, "\n%s, case %u: -j 2 differs\n", writers[k]->name, i);
			CU_ASSERT_STRING_EQUAL(one, two);
			free(one);
			free(two);
		}
		rt_case_free(&c);
	}
}

UNIT_SUITE(pipeline,
	   { "the fixture step by step: told, streams, text output", test_fixture_steps },
	   { "a simulated verify-mode run: every block equal to its record; hooks",
	     test_simulated_verify },
	   { "a truncated file: told and kept, or refused when quiet", test_truncated },
	   { "two threads: every writer's output as one thread's", test_jobs_same_output })
