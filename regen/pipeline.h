/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pipeline - pathregen's pipeline as a library call: trace.bin read, its
 * functions' model (CFG, plan, decoder: model.h), its pages as records,
 * the owners' streams (streams.h), then the engine and the writers over
 * every stream (out.h). pathregen runs it step by step with its reporting;
 * the benchmarks and the tests run it whole and quiet (pr_trace_load).
 *
 * Problems that leave the rest usable (a truncated file, an unusable
 * function, corrupt pages, losses no LOSS record places) are told to the
 * diag callback and mark the trace bad (pathregen's exit status 1); the
 * steps go on with what was valid. A step's negative return is fatal.
 */
#ifndef PATHTRACE_REGEN_PIPELINE_H
#define PATHTRACE_REGEN_PIPELINE_H

#include <pathtrace/tracefile.h>

#include "model.h"
#include "out.h"
#include "streams.h"

/* A problem: what it is about (a file, "pages", a function) and the message. */
typedef void (*pr_diag_fn)(void *ctx, const char *what, const char *msg);

struct pr_trace {
	struct tracefile tf;
	struct tr_records rs;
	struct regen_streams ss;
	struct pr_model m;		/* zero until pr_trace_model */
	uint64_t located_dropped, located_missed;	/* the LOSS records' counts */
	pr_diag_fn diag;		/* NULL: quiet */
	void *diag_ctx;
	int bad;			/* a problem was told: the input or a function is bad */
	int err;			/* the first problem's PT_E* of the file, pages or model, or 0 */
	int forks_resolved;		/* regen_forks_resolve ran (pr_trace_walk) */
	/*
	 * Threads pr_trace_streams may use (0, 1: the caller's alone): the
	 * CPUs with pages shared out among up to jobs of them, each decoding
	 * its CPUs' pages and cutting their records into a stream builder of
	 * its own (a CPU's pages in order, by one thread), the builders then
	 * merged; a thread to spare per CPU (one CPU and -j 2) cuts while
	 * another decodes. Then all assemble the owners' streams. The streams,
	 * the records kept and the counts are the same for any.
	 */
	unsigned int jobs;
	size_t window;			/* records decoded before they are cut (0: 8192) */
};

/* Zeroes t and sets its diag callback (NULL: quiet). */
void pr_trace_init(struct pr_trace *t, pr_diag_fn diag, void *ctx);

/*
 * Reads trace.bin at path. A malformed or truncated file is told and
 * marked bad; what came before the problem is kept. Returns 0; -PT_EIO
 * (told, errno set) when it cannot be read; -PT_ENOMEM.
 */
int pr_trace_read(struct pr_trace *t, const char *path);

/* As pr_trace_read, of size bytes at data (copied) named name in what is told. */
int pr_trace_parse(struct pr_trace *t, const char *name, const void *data, size_t size);

/*
 * Every function's model (pr_model_load); an unusable function is told,
 * marked bad and left out or kept without a decoder. Returns 0;
 * -PT_EFORMAT (told) for two functions with one func_id; -PT_ENOMEM.
 */
int pr_trace_model(struct pr_trace *t);

/*
 * The pages as records and the records as per-owner streams; what the
 * reader skipped (corrupt pages, bad records, records of no owner) and
 * losses no LOSS record locates are told and marked bad, unknown record
 * types told. Returns 0; the stream builder's error (told); -PT_ENOMEM.
 */
int pr_trace_streams(struct pr_trace *t);

/*
 * The three steps, quiet: reads path into t; model: also every function's
 * model; jobs: t->jobs. Returns 0; the first problem of the file or the pages (-PT_EIO
 * with errno, -PT_EFORMAT, -PT_ETRUNC, -PT_EVERSION), the stream builder's
 * error, -PT_ENOMEM; -PT_EFORMAT when the model cannot be loaded (a
 * function left out is no error here). Free t with pr_trace_free either way.
 */
int pr_trace_load(const char *path, struct pr_trace *t, int model, unsigned int jobs);

/* Stream i as the writers see it (out_stream: its first marker's CPU and stamp). */
struct out_stream pr_trace_stream(const struct pr_trace *t, uint32_t i);

/* Which streams pr_trace_walk walks, and what runs around each. */
struct pr_walk {
	int one_stream;			/* only stream number stream */
	uint32_t stream;
	/*
	 * Before stream st (e.g. a file of its own for a writer): non-zero
	 * stops the walk, returned by pr_trace_walk. May be NULL.
	 */
	int (*begin)(void *ctx, const struct out_stream *st);
	/* After it, with the walk's result: non-zero stops the walk, returned. May be NULL. */
	int (*end)(void *ctx, const struct out_stream *st, int err);
	void *ctx;
	/*
	 * Threads regenerating streams at once (0, 1: the caller's alone).
	 * Used when every writer can merge (out_writer_ops.merge) and there
	 * is neither one_stream nor begin/end: each stream goes to parts of
	 * the writers, written and merged in stream order, so the output is
	 * the one thread's byte for byte.
	 */
	unsigned int jobs;
	/*
	 * With jobs: the parts' output held in memory while they wait for
	 * their turn, in all (0: PR_WALK_HELD, 64 MiB); a part that would go
	 * beyond it writes to a temporary file of its own instead (tmpfile(3),
	 * in $TMPDIR). spilled, if not NULL, counts the parts that did.
	 */
	size_t held;
	size_t *spilled;
	size_t window;			/* records decoded before they are cut (0: 8192) */
};

#define PR_WALK_HELD (64u << 20)

/*
 * The engine over every stream (w NULL: all, nothing around them; first,
 * once, what forked children inherit: regen_forks_resolve), each
 * step to the writers ws[0..n), which the caller opened. A stream the
 * engine or a writer fails is told (by its owner) and marked bad, and the
 * walk goes on, but for -PT_ENOMEM and -PT_EIO. Returns 0;
 * -PT_EMISMATCH when a writer (verify) stopped it; -PT_ENOMEM, -PT_EIO;
 * what begin or end returned.
 */
int pr_trace_walk(struct pr_trace *t, struct out_writer *const *ws, unsigned int n,
		  const struct pr_walk *w);

void pr_trace_free(struct pr_trace *t);

#endif
