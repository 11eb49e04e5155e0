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
 * Streams loaded and walked on two to four threads (pr_trace.jobs,
 * pr_walk.jobs: each CPU's pages decoded by one thread) give every
 * writer's output byte for byte as one thread does, on simulated
 * multi-owner runs of each encoding and of two and four CPUs, and the same
 * output and diagnostics on flipped bits and cut files.
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
#include "tf_sample.h"
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
	CU_ASSERT_EQUAL_FATAL(pr_trace_load(c.path, &t, 1, 1), 0);
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
	CU_ASSERT(pr_trace_load(path, &t, 1, 1) < 0);
	pr_trace_free(&t);
	/* step by step: told, marked bad, what came before kept */
	pr_trace_init(&t, collect, &told);
	CU_ASSERT_EQUAL(pr_trace_read(&t, path), 0);
	CU_ASSERT_EQUAL(t.bad, 1);
	CU_ASSERT(t.err < 0);
	CU_ASSERT_EQUAL(told.n, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(told.text, "regenerating every whole page before it"));
	CU_ASSERT_EQUAL(pr_trace_model(&t), 0);
	CU_ASSERT_EQUAL(pr_trace_streams(&t), 0);
	pr_trace_free(&t);
	unlink(path);
	/* empty, /dev/null, random bytes, a header alone: said, nothing claimed regenerated */
	{
		static const struct {
			const char *bytes;
			size_t n;
			const char *says;
		} cases[] = {
			{ "", 0, "empty file: not a trace.bin" },
			{ "\x93\x11\xfe\x02 random bytes, not a trace", 30, "not a trace.bin" },
			{ "PTTR", 4, "file header: 4 bytes" },
		};
		unsigned int k;

		for (k = 0; k < 3; k++) {
			memset(&told, 0, sizeof(told));
			pr_trace_init(&t, collect, &told);
			CU_ASSERT_EQUAL(pr_trace_parse(&t, "x", cases[k].bytes, cases[k].n), 0);
			CU_ASSERT(t.bad);
			CU_ASSERT_EQUAL(told.n, 1);
			CU_ASSERT_PTR_NOT_NULL(strstr(told.text, cases[k].says));
			CU_ASSERT_PTR_NULL(strstr(told.text, "regenerating"));
			pr_trace_free(&t);
		}
		memset(&told, 0, sizeof(told));
		pr_trace_init(&t, collect, &told);
		CU_ASSERT_EQUAL(pr_trace_read(&t, "/dev/null"), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(told.text, "empty file"));
		pr_trace_free(&t);
	}
	/* a file that is not there: -PT_EIO, told */
	memset(&told, 0, sizeof(told));
	pr_trace_init(&t, collect, &told);
	CU_ASSERT_EQUAL(pr_trace_read(&t, "/nonexistent/trace.bin"), -PT_EIO);
	CU_ASSERT_EQUAL(told.n, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(told.text, "/nonexistent/trace.bin: No such file"));
	pr_trace_free(&t);
}

/* pathregen's text output of a trace in memory, and whether it told something and would exit 1. */
struct regen_mem {
	char *text;
	size_t len;
	unsigned int told;
	char said[2048];	/* what was told */
	int bad;
	uint64_t cpus;		/* bit c: CPU c has records */
	uint32_t pages;		/* pages read */
};

/* As pathregen -j jobs (pages and streams on jobs threads) regenerates b. */
static void regen_mem_jobs(const uint8_t *b, size_t n, unsigned int jobs, struct regen_mem *o)
{
	struct told told = { .n = 0 };
	struct out_writer w = { .ops = &out_text_ops };
	struct out_writer *ws[1] = { &w };
	struct tr_records all = { 0 };
	struct pr_trace t;
	size_t i;

	memset(o, 0, sizeof(*o));
	pr_trace_init(&t, collect, &told);
	t.jobs = jobs;
	w.fp = open_memstream(&o->text, &o->len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w.fp);
	/* pathregen's load and regenerate, quiet but for what is told */
	if (!pr_trace_parse(&t, "trace", b, n) && !pr_trace_model(&t) && !pr_trace_streams(&t)) {
		w.m = &t.m;
		if (!out_open_all(ws, 1)) {
			pr_trace_walk(&t, ws, 1, NULL);
			if (out_close_all(ws, 1))
				t.bad = 1;
		}
	}
	fclose(w.fp);
	/* the pipeline keeps no records it cut into streams: the CPUs' from the pages again */
	if (!tr_decode_tracefile(&all, &t.tf))
		for (i = 0; i < all.n; i++)
			o->cpus |= 1ull << (all.recs[i].cpu & 63);
	tr_records_free(&all);
	o->pages = t.rs.pages;
	o->told = told.n;
	memcpy(o->said, told.text, sizeof(o->said));
	o->bad = t.bad;
	pr_trace_free(&t);
}

static void regen_mem(const uint8_t *b, size_t n, struct regen_mem *o)
{
	regen_mem_jobs(b, n, 1, o);
}

/* Whether two regenerations said the same and wrote the same. */
static int same_regen(const struct regen_mem *a, const struct regen_mem *b)
{
	return a->len == b->len && !memcmp(a->text, b->text, a->len) && a->told == b->told &&
	       a->bad == b->bad && a->pages == b->pages && !strcmp(a->said, b->said);
}

/*
 * b regenerated on 2 to 4 threads (jobs, by k) as on one (one): the same
 * output and the same told, whatever the threads' timing. Returns whether.
 */
static int same_any_jobs(const uint8_t *b, size_t n, const struct regen_mem *one, unsigned int k)
{
	struct regen_mem more;
	int same;

	regen_mem_jobs(b, n, 2 + k % 3, &more);
	same = same_regen(one, &more);
	if (!same)
		fprintf(stderr, "\n-j %u differs from -j 1 (told: %s)\n", 2 + k % 3, more.said);
	free(more.text);
	return same;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Flips random bits of b, one at a time: pathregen's output stays the
 * same, or it says something and exits 1; on 2 to 4 threads as on one
 * (*jobs_differ counts those that are not). Returns the silent changes.
 */
static unsigned int flip_bits(const uint8_t *b, size_t n, unsigned int flips, uint64_t *rng,
			      unsigned int *noticed, int quiet, unsigned int *jobs_differ)
{
	struct regen_mem base, got;
	uint8_t *c = malloc(n);
	unsigned int k, silent = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	memcpy(c, b, n);
	regen_mem(b, n, &base);
	CU_ASSERT_EQUAL(base.told, 0);
	CU_ASSERT_EQUAL(base.bad, 0);
	CU_ASSERT(base.len > 0);
	for (k = 0; k < flips; k++) {
		uint64_t bit = xorshift(rng) % (n * 8);

		c[bit / 8] ^= 1u << (bit % 8);
		regen_mem(c, n, &got);
		if (jobs_differ && k % 4 == 0)
			*jobs_differ += !same_any_jobs(c, n, &got, k / 4);
		if (got.told && got.bad)
			++*noticed;
		else if (got.len != base.len || memcmp(got.text, base.text, base.len)) {
			if (silent++ < 5 && !quiet)
				fprintf(stderr, "\nflip of bit %llu (byte %llu of %zu) changed the output silently\n",
					(unsigned long long)bit % 8, (unsigned long long)bit / 8, n);
		}
		c[bit / 8] ^= 1u << (bit % 8);
		free(got.text);
	}
	free(base.text);
	free(c);
	return silent;
}

/* The committed fixture written again with checksums (format 2.1): it regenerates the same. */
static uint8_t *fixture_summed(size_t *n)
{
	struct tracefile tf;
	struct regen_mem r;
	char *want = slurp(fixture_path("trace-v2.0.txt"));
	uint8_t *b;

	CU_ASSERT_EQUAL_FATAL(tracefile_read(fixture_path("trace-v2.0.bin"), &tf), 0);
	b = tf_rewrite(&tf, tf.size, 0, n);
	tracefile_free(&tf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	regen_mem(b, *n, &r);
	CU_ASSERT_EQUAL(r.told, 0);
	CU_ASSERT_STRING_EQUAL(r.text, want);
	free(r.text);
	free(want);
	return b;
}

/*
 * A simulated run of cpus CPUs (tests/oracle; tasks migrate, interrupts
 * run), activations per task, as trace.bin in memory.
 */
static uint8_t *simulated_runs(uint64_t *rng, uint16_t mode, uint16_t encoding,
			       uint32_t activations, uint32_t cpus, size_t *n)
{
	struct sim_gen_opts go = { .nfuncs = 4, .max_stmts = 6, .closed = 1 };
	struct sim_lower_opts lo = { .mode = mode, .encoding = encoding };
	struct sim_kmod_opts ko = { .nr_cpus = cpus, .ntasks = 3, .activations = activations,
				    .max_steps = 80, .migrate_pct = 20, .irq_pct = 10 };
	struct rt_run x;
	uint8_t *b;
	FILE *f;
	long len;

	CU_ASSERT_EQUAL_FATAL(rt_run_make(&x, rng, &go, &lo, &ko), 0);
	f = fopen(x.path, "rb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	b = malloc(len);
	CU_ASSERT_EQUAL_FATAL(fread(b, 1, len, f), (size_t)len);
	fclose(f);
	rt_run_free(&x);
	*n = len;
	return b;
}

/* A simulated trace of 40 activations (simulated_runs). */
static uint8_t *simulated(uint64_t *rng, uint16_t mode, uint16_t encoding, size_t *n)
{
	return simulated_runs(rng, mode, encoding, 40, 2, n);
}

/*
 * Issue 39: no bit flip of a real trace (the VM fixture with checksums)
 * or of simulated ones changes pathregen's output silently: 10,000 flips.
 * A quarter of them regenerated on 2 to 4 threads too: the same output
 * and the same told (corrupt pages, bad records) as on one.
 */
static void test_bit_flips(void)
{
	static const uint16_t modes[][2] = {
		{ PT_MODE_TRACE, PT_ENC_WITNESS }, { PT_MODE_PATHS, PT_ENC_WITNESS },
		{ PT_MODE_TRACE, PT_ENC_BITS },
	};
	uint64_t rng = unit_seed() * 2654435761u + 1;
	unsigned int silent = 0, noticed = 0, stripped = 0, jobs_differ = 0, i;
	size_t n;
	uint8_t *b = fixture_summed(&n);

	silent += flip_bits(b, n, 4000, &rng, &noticed, 0, &jobs_differ);
	/* the oracle has teeth: without its checksums (2.0) some flips pass silently */
	n = tf_strip_checksums(b, n);
	CU_ASSERT(flip_bits(b, n, 1000, &rng, &stripped, 1, NULL) > 0);
	free(b);
	for (i = 0; i < 3; i++) {
		b = simulated(&rng, modes[i][0], modes[i][1], &n);
		silent += flip_bits(b, n, 2000, &rng, &noticed, 0, &jobs_differ);
		free(b);
	}
	CU_ASSERT_EQUAL(silent, 0);
	CU_ASSERT(noticed > 1000);	/* most flips land in page bytes and are told */
	CU_ASSERT_EQUAL(jobs_differ, 0);
}

/*
 * Cut at random offsets, a trace regenerates exactly what the whole trace
 * regenerates from its pages before the cut, each CPU's records then
 * ending in a gap (tf_rewrite: that prefix, a page failing its sum per
 * CPU); told, exit 1; on 2 to 4 threads the same as on one.
 */
static void cut_at_random(const uint8_t *b, size_t n, unsigned int cuts, uint64_t *rng)
{
	struct tracefile full;
	unsigned int k;

	CU_ASSERT_EQUAL_FATAL(tracefile_parse(b, n, &full), 0);
	for (k = 0; k < cuts; k++) {
		size_t cut = xorshift(rng) % n, rn;
		struct regen_mem got, want;
		uint8_t *ref;

		regen_mem(b, cut, &got);
		CU_ASSERT(got.told > 0 && got.bad);
		CU_ASSERT(same_any_jobs(b, cut, &got, k));
		ref = tf_rewrite(&full, cut, got.cpus, &rn);
		CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
		regen_mem(ref, rn, &want);
		CU_ASSERT_EQUAL(got.pages + __builtin_popcountll(got.cpus), want.pages);
		CU_ASSERT(got.len == want.len && !memcmp(got.text, want.text, got.len));
		free(ref);
		free(got.text);
		free(want.text);
	}
	tracefile_free(&full);
}

static void test_truncations(void)
{
	uint64_t rng = unit_seed() * 0x9e3779b97f4a7c15ull + 3;
	size_t n;
	uint8_t *b = fixture_summed(&n);

	cut_at_random(b, n, 300, &rng);
	free(b);
	b = simulated(&rng, PT_MODE_TRACE, PT_ENC_WITNESS, &n);
	cut_at_random(b, n, 300, &rng);
	free(b);
}

/*
 * What writer ops writes over every stream of the trace at path with jobs
 * threads, the parts holding at most held bytes in memory (struct
 * pr_walk.held) (malloc'd, NUL-terminated): loaded afresh, as --words
 * counts in the model.
 */
static char *walk_output(const char *path, const struct out_writer_ops *ops, unsigned int jobs,
			 size_t held, size_t *spilled)
{
	struct pr_trace tr, *t = &tr;
	struct verify_result vr = { 0 };
	struct out_writer w = { .ops = ops, .top = 10, .sp_memory = 2048, .sp_max_len = 64,
				.trace_name = "trace.bin" };
	struct out_writer *ws[1] = { &w };
	struct pr_walk pw = { .jobs = jobs, .held = held, .spilled = spilled };
	char *buf = NULL;
	size_t len = 0;

	CU_ASSERT_EQUAL_FATAL(pr_trace_load(path, t, 1, jobs), 0);
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

static const struct out_writer_ops *const writers[] = {
	&out_text_ops, &out_stats_ops, &out_edges_ops, &out_blocks_ops, &out_paths_ops,
	&out_json_ops, &out_perfetto_ops, &out_subpaths_ops, &out_words_ops, &verify_ops,
};

/*
 * Every writer's output of the trace at path on 1 and on jobs threads: the
 * same, with the parts' output in memory (none in a file) and with a
 * byte's room in memory (the text's parts in temporary files: struct
 * pr_walk.held).
 */
static void same_output(const char *path, unsigned int jobs, const char *what)
{
	unsigned int k, h;

	for (k = 0; k < sizeof(writers) / sizeof(writers[0]); k++) {
		char *one = walk_output(path, writers[k], 1, 0, NULL);

		CU_ASSERT_PTR_NOT_NULL_FATAL(one);
		CU_ASSERT(strlen(one) > 0);
		for (h = 0; h < 2; h++) {
			size_t spilled = 0;
			char *more = walk_output(path, writers[k], jobs, h, &spilled);

			if (!h)
				CU_ASSERT_EQUAL(spilled, 0);
			if (h && writers[k] == &out_text_ops)
				CU_ASSERT(spilled > 0);

			CU_ASSERT_PTR_NOT_NULL_FATAL(more);
			if (strcmp(one, more))
				fprintf(stderr, "\n%s, %s: -j %u%s differs\n", writers[k]->name, what,
					jobs, h ? ", parts in files" : "");
			CU_ASSERT_STRING_EQUAL(one, more);
			free(more);
		}
		free(one);
	}
}

static void test_jobs_same_output(void)
{
	static const struct { uint16_t mode, enc; uint32_t flags; } cases[] = {
		{ PT_MODE_TRACE, PT_ENC_WITNESS, PT_PLAN_VERIFY },
		{ PT_MODE_TRACE, PT_ENC_WITNESS, 0 },
		{ PT_MODE_TRACE, PT_ENC_BITS, 0 },
		{ PT_MODE_PATHS, PT_ENC_PATH, 0 },
	};
	uint64_t rng = unit_seed() * 0x2545f4914f6cdd1dull + 5;
	unsigned int i;
	char what[32];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_case c;

		CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, unit_seed() * 31 + i, 4, cases[i].mode,
						   cases[i].enc, cases[i].flags), 0);
		snprintf(what, sizeof(what), "case %u", i);
		same_output(c.path, 2, what);
		rt_case_free(&c);
	}
	/* recordings of 2 and 4 CPUs, tasks migrating: each CPU's pages on a thread */
	for (i = 0; i < 3; i++) {
		char path[] = "/tmp/pt-pipeline-XXXXXX";
		int fd = mkstemp(path);
		size_t n;
		uint8_t *b = simulated_runs(&rng, PT_MODE_TRACE, i == 2 ? PT_ENC_BITS : PT_ENC_WITNESS,
					    300, 2 + 2 * (i > 0), &n);
		FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;

		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		CU_ASSERT_EQUAL(fwrite(b, 1, n, f), n);
		fclose(f);
		snprintf(what, sizeof(what), "%u CPUs", 2 + 2 * (i > 0));
		same_output(path, 2 + i, what);
		unlink(path);
		free(b);
	}
}

/* Whether the pipeline's records (t: kept ones) count what the decoder's (rs) do. */
static int same_counts(const struct tr_records *t, const struct tr_records *rs)
{
	return t->max_cpu == rs->max_cpu && t->pages == rs->pages &&
	       t->bad_pages == rs->bad_pages && t->bad_events == rs->bad_events &&
	       t->bad_records == rs->bad_records && t->unknown_records == rs->unknown_records &&
	       t->missed_pages == rs->missed_pages && t->sum_pages == rs->sum_pages &&
	       t->cut_cpus == rs->cut_cpus && t->page_bytes == rs->page_bytes &&
	       t->stored_bytes == rs->stored_bytes && t->committed_bytes == rs->committed_bytes &&
	       t->record_bytes == rs->record_bytes && t->records_read == rs->records_read &&
	       t->header_bytes == rs->header_bytes && t->enter_bytes == rs->enter_bytes &&
	       t->seg_coded == rs->seg_coded && t->seg_owner_bits == rs->seg_owner_bits &&
	       t->seg_delta_bits == rs->seg_delta_bits && t->seg_len_bits == rs->seg_len_bits &&
	       t->enter_codes == rs->enter_codes && t->enter_kind_bits == rs->enter_kind_bits &&
	       t->enter_func_bits == rs->enter_func_bits &&
	       t->enter_ret_bits == rs->enter_ret_bits && t->enter_adv_bits == rs->enter_adv_bits;
}

/*
 * The streams of b (n bytes) cut a few records at a time, on one to four
 * threads (more threads than CPUs, fewer, as many), against those of every
 * record decoded first (regen_streams_build); the records' counts as the
 * decoder's, the kept records as one thread's. Returns whether all are the
 * same.
 */
static int windows_same(const uint8_t *b, size_t n)
{
	static const size_t windows[] = { 1, 2, 7, 100, 0 };
	struct tracefile tf;
	struct tr_records rs = { 0 }, kept = { 0 };
	struct regen_streams want;
	unsigned int w, jobs;
	size_t i;
	int same = 1;

	tracefile_parse(b, n, &tf);
	CU_ASSERT_EQUAL_FATAL(tr_decode_tracefile(&rs, &tf), 0);
	CU_ASSERT_EQUAL_FATAL(regen_streams_build(&rs, &want), 0);
	for (w = 0; w < sizeof(windows) / sizeof(windows[0]); w++)
		for (jobs = 1; jobs <= 4; jobs++) {
			struct pr_trace t;

			pr_trace_init(&t, NULL, NULL);
			t.jobs = jobs;
			t.window = windows[w];
			CU_ASSERT_EQUAL_FATAL(pr_trace_parse(&t, "trace", b, n), 0);
			pr_trace_streams(&t);
			if (!rt_same_streams(&want, &t.ss)) {
				fprintf(stderr, "\nwindow %zu, %u threads: other streams\n", windows[w],
					jobs);
				same = 0;
			}
			/* what the profiles read is kept, their counts too */
			CU_ASSERT(same_counts(&t.rs, &rs));
			if (!w && jobs == 1)
				for (i = 0; i < t.rs.n; i++)
					CU_ASSERT_EQUAL(tr_records_copy(&kept, &t.rs, &t.rs.recs[i]), 0);
			CU_ASSERT_EQUAL(t.rs.n, kept.n);
			CU_ASSERT_EQUAL(t.rs.nwords, kept.nwords);
			for (i = 0; i < t.rs.n && i < kept.n; i++)
				CU_ASSERT(t.rs.recs[i].cpu == kept.recs[i].cpu &&
					  t.rs.recs[i].type == kept.recs[i].type &&
					  t.rs.recs[i].arg == kept.recs[i].arg &&
					  t.rs.recs[i].body == kept.recs[i].body &&
					  t.rs.recs[i].ts == kept.recs[i].ts);
			if (t.rs.nwords == kept.nwords && t.rs.nwords)
				CU_ASSERT(!memcmp(t.rs.words, kept.words, 8 * kept.nwords));
			pr_trace_free(&t);
		}
	regen_streams_free(&want);
	tr_records_free(&kept);
	tr_records_free(&rs);
	tracefile_free(&tf);
	return same;
}

/*
 * Two, then three pages in a row of one CPU corrupt (their losses merge
 * into one, across windows too), at random places: windows_same. Returns
 * whether all are.
 */
static int adjacent_pages_same(uint8_t *b, size_t n, uint64_t *rng)
{
	struct tracefile tf;
	size_t *at = NULL, nat = 0;
	unsigned int k, j, run, same = 1, tried = 0;
	uint32_t i, p, cpu;

	CU_ASSERT_EQUAL_FATAL(tracefile_parse(b, n, &tf), 0);
	for (i = 0; i < tf.npages; i++)
		nat += tf.pages[i].nr_pages;
	at = malloc((nat + 1) * sizeof(*at));
	CU_ASSERT_PTR_NOT_NULL_FATAL(at);
	for (k = 0; k < 8; k++) {
		/* one CPU's pages in file order (its sections may be apart) */
		cpu = xorshift(rng) % 2;
		nat = 0;
		for (i = 0; i < tf.npages; i++)
			for (p = 0; tf.pages[i].cpu == cpu && p < tf.pages[i].nr_pages; p++)
				at[nat++] = (size_t)(tf.pages[i].page[p].data - tf.buf) + 20;
		for (run = 2; run <= 3 && nat >= run; run++) {
			size_t first = xorshift(rng) % (nat - run + 1);

			/* a byte of each page's data: it fails its checksum */
			for (j = 0; j < run; j++)
				b[at[first + j]] ^= 0x5a;
			same &= windows_same(b, n);
			tried++;
			for (j = 0; j < run; j++)
				b[at[first + j]] ^= 0x5a;
		}
	}
	free(at);
	tracefile_free(&tf);
	CU_ASSERT(tried > 0);
	return same;
}

/*
 * The pages decoded a window at a time (tr_decode_tracefile_each) and cut
 * as they come (regen_streams_add); with -j 2 and more each CPU's pages
 * decoded and cut by one of the threads, the threads' builders merged, or
 * (a thread to spare) relayed to a cutting thread: the same streams as
 * every record decoded, then cut, for windows of one record up, on
 * simulated traces of two and four CPUs (tasks migrating), whole, with
 * bits flipped (corrupt pages and records: losses, merged ones too) and
 * cut short.
 */
static void test_windows(void)
{
	static const uint16_t modes[3][2] = {
		{ PT_MODE_TRACE, PT_ENC_WITNESS }, { PT_MODE_TRACE, PT_ENC_BITS },
		{ PT_MODE_PATHS, PT_ENC_PATH },
	};
	uint64_t rng = unit_seed() * 0x9e3779b97f4a7c15ull + 11;
	unsigned int i, k, differ = 0;

	for (i = 0; i < 3; i++) {
		size_t n;
		/* enough activations for several pages per CPU */
		uint8_t *b = simulated_runs(&rng, modes[i][0], modes[i][1], 1500, 2 + 2 * (i == 1), &n);

		differ += !windows_same(b, n);
		for (k = 0; k < 20; k++) {
			uint64_t bit = xorshift(&rng) % (n * 8);

			b[bit / 8] ^= 1u << (bit % 8);
			differ += !windows_same(b, n);
			b[bit / 8] ^= 1u << (bit % 8);
			differ += !windows_same(b, xorshift(&rng) % n);
		}
		differ += !adjacent_pages_same(b, n, &rng);
		free(b);
	}
	CU_ASSERT_EQUAL(differ, 0);
}

UNIT_SUITE(pipeline,
	   { "the fixture step by step: told, streams, text output", test_fixture_steps },
	   { "a simulated verify-mode run: every block equal to its record; hooks",
	     test_simulated_verify },
	   { "a truncated file: told and kept, or refused when quiet", test_truncated },
	   { "10,000 bit flips of real and simulated traces: none changes the output silently",
	     test_bit_flips },
	   { "cut at random: every whole page before the cut regenerates, then a gap",
	     test_truncations },
	   { "two to four threads: every writer's output as one thread's", test_jobs_same_output },
	   { "pages decoded and cut a window at a time, on one to four threads: the same streams",
	     test_windows })
