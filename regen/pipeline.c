// SPDX-License-Identifier: GPL-2.0
/* pipeline - pathregen's pipeline as a library call (pipeline.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <pathtrace/error.h>

#include "pipeline.h"

static void tell(struct pr_trace *t, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A problem for t's diag callback (nothing when quiet). */
static void tell(struct pr_trace *t, const char *what, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!t->diag)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	t->diag(t->diag_ctx, what, msg);
}

/* A problem that leaves the rest usable: the trace is bad, err its first cause. */
static void mark_bad(struct pr_trace *t, int err)
{
	t->bad = 1;
	if (!t->err)
		t->err = err;
}

void pr_trace_init(struct pr_trace *t, pr_diag_fn diag, void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->diag = diag;
	t->diag_ctx = ctx;
}

/* What the CHECKSUM sections (format 2.1) found. */
static void report_integrity(struct pr_trace *t, const char *path)
{
	const struct tracefile *tf = &t->tf;

	if (tf->corrupt_pages)
		tell(t, path, "%u pages fail their checksum (the first at offset %" PRIu64
		     "): each is a gap in its CPU's streams", tf->corrupt_pages, tf->corrupt_offset);
	if (tf->corrupt_sections)
		tell(t, path, "%u sections or their checksums are corrupt (the first at offset %"
		     PRIu64 "): skipped", tf->corrupt_sections, tf->corrupt_offset);
	if (tf->unchecked_sections)
		tell(t, path, "%u sections have no checksum though the file is format %u.%u: read "
		     "unverified", tf->unchecked_sections, tf->major, tf->minor);
	if (tf->corrupt_pages || tf->corrupt_sections || tf->unchecked_sections)
		mark_bad(t, -PT_EFORMAT);
}

/* After tracefile_read or tracefile_parse of path (its result err): told and marked. */
static int read_done(struct pr_trace *t, const char *path, int err)
{
	if (err == -PT_EIO) {
		int saved = errno;

		tell(t, path, "%s", strerror(saved));
		errno = saved;
		mark_bad(t, err);
		return err;
	}
	if (err == -PT_ENOMEM)
		return err;
	if (err && !t->tf.size) {
		tell(t, path, "empty file: not a trace.bin");
		mark_bad(t, err);
	} else if (err) {
		/* what is regenerated: nothing before the first FUNCTION or page */
		const char *then = !t->tf.nfuncs && !t->tf.npages ? ": nothing to regenerate" :
				   err == -PT_ETRUNC ? "; regenerating every whole page before it" :
				   "; regenerating what came before";

		tell(t, path, "%s at offset %" PRIu64 " (%s)%s",
		     t->tf.err_msg[0] ? t->tf.err_msg : pt_strerror(err), t->tf.err_off,
		     pt_strerror(err), then);
		mark_bad(t, err);
	}
	report_integrity(t, path);
	return 0;
}

int pr_trace_read(struct pr_trace *t, const char *path)
{
	return read_done(t, path, tracefile_read(path, &t->tf));
}

int pr_trace_parse(struct pr_trace *t, const char *name, const void *data, size_t size)
{
	return read_done(t, name, tracefile_parse(data, size, &t->tf));
}

/* Says why a function is not regenerated (pr_model_load's report). */
static void report_func(void *ctx, const struct tf_function *fn, const struct pr_func *f, int err)
{
	struct pr_trace *t = ctx;
	char what[PT_NAME_MAX + 32];

	snprintf(what, sizeof(what), "function %.*s (id %u)",
		 (int)(fn->name_len < PT_NAME_MAX ? fn->name_len : PT_NAME_MAX), fn->name,
		 fn->func_id);
	if (!f)
		tell(t, what, "unusable CFG or plan: %s", pt_strerror(err));
	else if (err == -PT_ENOTSUP)
		tell(t, what, "no decoder for mode %u encoding %u: not regenerated", f->mode,
		     f->encoding);
	else if (err == -PT_EREFUSED)
		tell(t, what, "not regenerated: %s", f->refusal[0] ? f->refusal :
		     "its plan's emissions cannot be decoded exactly");
	else
		tell(t, what, "cannot build its decoder from its plan: %s", pt_strerror(err));
}

int pr_trace_model(struct pr_trace *t)
{
	int n = pr_model_load(&t->tf, &t->m, report_func, t);

	if (n > 0)
		t->bad = 1;
	if (n == -PT_ENOMEM)
		return n;
	if (n < 0) {
		tell(t, "functions", "%s", n == -PT_EFORMAT ? "two functions share a func_id" :
		     pt_strerror(n));
		mark_bad(t, n);
		return n;
	}
	return 0;
}

/* What the page decoder and the stream builder had to skip. */
static void report_records(struct pr_trace *t)
{
	const struct tr_records *rs = &t->rs;
	const struct regen_streams *ss = &t->ss;

	if (rs->bad_pages || rs->bad_events || rs->bad_records) {
		tell(t, "pages", "%" PRIu64 " corrupt pages, %" PRIu64 " bad events, %" PRIu64
		     " bad records skipped (marked as gaps)", rs->bad_pages, rs->bad_events,
		     rs->bad_records);
		t->bad = 1;
	}
	if (rs->unknown_records)
		tell(t, "pages", "%" PRIu64 " records of unknown types skipped (newer format)",
		     rs->unknown_records);
	if (ss->unowned_records)
		tell(t, "streams", "%" PRIu64 " records (%" PRIu64 " bits) belong to no owner: not regenerated",
		     ss->unowned_records, ss->unowned_bits);
}

/*
 * The LOSS section counts every record a full ring buffer refused and every
 * probe hit the kernel skipped; LOSS records place them in the streams. A
 * count the records do not account for was lost somewhere unknown: say so.
 */
static void report_unlocated_losses(struct pr_trace *t)
{
	const struct tr_records *rs = &t->rs;
	uint64_t dropped = 0, missed = 0;
	size_t i;

	if (!t->tf.has_loss)
		return;
	for (i = 0; i < rs->n; i++) {
		const struct tr_rec *r = &rs->recs[i];

		if (r->type != PT_REC_LOSS || r->synthetic || !r->nwords)
			continue;
		if (r->arg == PT_LOSS_OVERRUN)
			dropped += tr_body(rs, r)[0];
		else if (r->arg == PT_LOSS_MISSED)
			missed += tr_body(rs, r)[0];
	}
	t->located_dropped = dropped;
	t->located_missed = missed;
	if (t->tf.dropped > dropped) {
		tell(t, "losses", "%" PRIu64 " records refused by full ring buffers, only %" PRIu64
		     " of them located by LOSS records: streams may miss records without a marked gap",
		     t->tf.dropped, dropped);
		t->bad = 1;
	}
	if (t->tf.missed > missed) {
		tell(t, "losses", "%" PRIu64 " probe hits skipped by the kernel, only %" PRIu64
		     " of them located by LOSS records", t->tf.missed, missed);
		t->bad = 1;
	}
}

int pr_trace_streams(struct pr_trace *t)
{
	int err = tr_decode_tracefile(&t->rs, &t->tf);

	if (err == -PT_ENOMEM)
		return err;
	if (err) {
		tell(t, "pages", "%s", pt_strerror(err));
		mark_bad(t, err);
	}
	err = regen_streams_build(&t->rs, &t->ss);
	if (err == -PT_ENOMEM)
		return err;
	if (err) {
		tell(t, "streams", "%s", pt_strerror(err));
		mark_bad(t, err);
		return err;
	}
	report_records(t);
	report_unlocated_losses(t);
	return 0;
}

int pr_trace_load(const char *path, struct pr_trace *t, int model)
{
	int err;

	pr_trace_init(t, NULL, NULL);
	err = pr_trace_read(t, path);
	if (!err && !t->err)
		err = pr_trace_streams(t);
	if (!err && !t->err && model && pr_trace_model(t))
		return -PT_EFORMAT;
	return err ? err : t->err;
}

struct out_stream pr_trace_stream(const struct pr_trace *t, uint32_t i)
{
	struct out_stream st = { .s = &t->ss.streams[i], .index = i, .cpu = UINT32_MAX };

	if (st.s->nmarkers) {
		st.cpu = st.s->markers[0].cpu;
		st.stamp = st.s->markers[0].stamp;
	}
	return st;
}

int pr_trace_walk(struct pr_trace *t, struct out_writer *const *ws, unsigned int n,
		  const struct pr_walk *w)
{
	static const struct pr_walk all;
	uint32_t i;
	int err, stop;

	if (!w)
		w = &all;
	for (i = 0; i < t->ss.nstreams; i++) {
		struct out_stream st;

		if (w->one_stream && i != w->stream)
			continue;
		st = pr_trace_stream(t, i);
		if (w->begin) {
			stop = w->begin(w->ctx, &st);
			if (stop)
				return stop;
		}
		err = out_walk_stream(&t->m, &st, ws, n);
		if (w->end) {
			stop = w->end(w->ctx, &st, err);
			if (stop)
				return stop;
		}
		if (err) {
			char own[48];

			tell(t, pr_owner_name(st.s->owner, own, sizeof(own)), "%s", pt_strerror(err));
			t->bad = 1;
			if (err == -PT_ENOMEM || err == -PT_EIO)
				return err;
		}
	}
	return 0;
}

void pr_trace_free(struct pr_trace *t)
{
	regen_streams_free(&t->ss);
	tr_records_free(&t->rs);
	pr_model_free(&t->m);
	tracefile_free(&t->tf);
}
