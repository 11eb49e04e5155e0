// SPDX-License-Identifier: GPL-2.0
/* pipeline - pathregen's pipeline as a library call (pipeline.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
 * probe hit the kernel skipped; LOSS records (located: their counts) place
 * them in the streams. A count the records do not account for was lost
 * somewhere unknown: say so.
 */
static void report_unlocated_losses(struct pr_trace *t, uint64_t dropped, uint64_t missed)
{
	if (!t->tf.has_loss)
		return;
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

/*
 * The records as they are decoded, a window at a time: cut into the
 * streams (b), and the few the profiles read kept (kept: COUNTERS, PATHS,
 * and the ENTERs of edges-mode functions, whose counts they are).
 */
struct cut {
	struct regen_streams_builder *b;
	struct tr_records kept;
	uint32_t *edges;		/* func_ids of edges-mode plans */
	uint32_t nedges;
	uint64_t dropped, missed;	/* what LOSS records located */
	int err;			/* the builder's: it stopped the decoding */
};

/* The func_ids whose plans are edges mode (edge_counts.h: their ENTERs count activations). */
static int edges_funcs(struct cut *c, const struct tracefile *tf)
{
	uint32_t i;
	uint16_t mode;

	c->edges = malloc((tf->nfuncs + 1) * sizeof(*c->edges));
	if (!c->edges)
		return -PT_ENOMEM;
	for (i = 0; i < tf->nfuncs; i++) {
		const struct tf_function *fn = &tf->funcs[i];

		if (fn->plan_len < offsetof(struct pt_plan, mode) + sizeof(mode))
			continue;
		memcpy(&mode, fn->plan + offsetof(struct pt_plan, mode), sizeof(mode));
		if (mode == PT_MODE_EDGES)
			c->edges[c->nedges++] = fn->func_id;
	}
	return 0;
}

static int kept(const struct cut *c, const struct tr_rec *r)
{
	uint32_t i;

	if (r->type == PT_REC_COUNTERS || r->type == PT_REC_PATHS)
		return 1;
	for (i = 0; r->type == PT_REC_ENTER && i < c->nedges; i++)
		if (c->edges[i] == r->arg)
			return 1;
	return 0;
}

static int cut_window(void *ctx, const struct tr_records *rs, size_t first, size_t n)
{
	struct cut *c = ctx;
	size_t i;
	int err;

	for (i = first; i < first + n; i++) {
		const struct tr_rec *r = &rs->recs[i];

		if (r->type == PT_REC_LOSS && !r->synthetic && r->nwords) {
			if (r->arg == PT_LOSS_OVERRUN)
				c->dropped += tr_body(rs, r)[0];
			else if (r->arg == PT_LOSS_MISSED)
				c->missed += tr_body(rs, r)[0];
		}
		if (kept(c, r) && tr_records_copy(&c->kept, rs, r))
			return -PT_ENOMEM;
	}
	err = regen_streams_add(c->b, rs, first, n);
	if (err)
		c->err = err;
	return err;
}

/*
 * With two threads or more the windows go from the decoding thread (the
 * caller's) to a cutting thread through two buffers, so that decoding one
 * window and cutting the one before run at once.
 */
struct relay {
	struct cut *c;
	struct tr_records win[2];	/* recs, words, n, nwords: a window's copy */
	int full[2];
	unsigned int head, tail;	/* the next to fill, the next to cut */
	int done;			/* no more windows */
	int err;			/* the cutter's: it stopped */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* tr_take_fn of the decoding thread: a copy of the window for the cutter. */
static int relay_window(void *ctx, const struct tr_records *rs, size_t first, size_t n)
{
	struct relay *r = ctx;
	struct tr_records *w;
	uint64_t lo, hi;
	size_t i;
	int err;

	pthread_mutex_lock(&r->mu);
	while (r->full[r->head] && !r->err)
		pthread_cond_wait(&r->cv, &r->mu);
	err = r->err;
	pthread_mutex_unlock(&r->mu);
	if (err)
		return err;
	w = &r->win[r->head];
	/* a range's bodies lie in order (those of records kept back among them) */
	lo = rs->recs[first].body;
	hi = rs->recs[first + n - 1].body + rs->recs[first + n - 1].nwords;
	w->n = 0;
	w->nwords = 0;
	if (n > w->cap) {
		free(w->recs);
		w->recs = malloc(n * sizeof(*w->recs));
		w->cap = w->recs ? n : 0;
	}
	if (hi - lo > w->capw) {
		free(w->words);
		w->words = malloc((hi - lo) * sizeof(*w->words));
		w->capw = w->words ? hi - lo : 0;
	}
	if (!w->recs || (hi > lo && !w->words))
		return -PT_ENOMEM;
	memcpy(w->recs, rs->recs + first, n * sizeof(*w->recs));
	for (i = 0; i < n; i++)
		w->recs[i].body -= lo;
	if (hi > lo)
		memcpy(w->words, rs->words + lo, (hi - lo) * sizeof(*w->words));
	w->n = n;
	w->nwords = hi - lo;
	pthread_mutex_lock(&r->mu);
	r->full[r->head] = 1;
	r->head ^= 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* The cutting thread: each window in turn into the streams. */
static void *relay_cut(void *arg)
{
	struct relay *r = arg;
	int err = 0;

	for (;;) {
		pthread_mutex_lock(&r->mu);
		while (!r->full[r->tail] && !r->done)
			pthread_cond_wait(&r->cv, &r->mu);
		if (!r->full[r->tail]) {
			pthread_mutex_unlock(&r->mu);
			return NULL;
		}
		pthread_mutex_unlock(&r->mu);
		err = cut_window(r->c, &r->win[r->tail], 0, r->win[r->tail].n);
		pthread_mutex_lock(&r->mu);
		r->full[r->tail] = 0;
		r->tail ^= 1;
		if (err)
			r->err = err;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (err)
			return NULL;
	}
}

/*
 * A thread's share of the pages: its CPUs' (every CPU's when it is the
 * only one), decoded in file order with decoding state of its own (rs)
 * and cut into a stream builder of its own (c), which pr_trace_streams
 * merges; the windows relayed to a cutting thread of its own when there
 * are threads to spare.
 */
struct lane {
	const struct pr_trace *t;
	uint8_t *cpus;			/* cpus[c]: CPU c is this lane's (NULL: every CPU) */
	uint32_t ncpus;
	struct tr_records *rs;		/* the first lane's is t->rs */
	struct tr_records own;
	struct cut c;
	int relay;
	int err;			/* the decoder's or its cutter's */
	int started;			/* on a thread of its own (th) */
	pthread_t th;
};

/* l's pages decoded into l->c: on this thread alone, or relayed to a cutting thread. */
static int lane_decode(struct lane *l)
{
	const struct pr_trace *t = l->t;
	struct relay r = { .c = &l->c };
	pthread_t th;
	int err;

	if (!l->relay)
		return tr_decode_tracefile_cpus(l->rs, &t->tf, l->cpus, l->ncpus, t->window,
						cut_window, &l->c);
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	if (pthread_create(&th, NULL, relay_cut, &r)) {
		err = tr_decode_tracefile_cpus(l->rs, &t->tf, l->cpus, l->ncpus, t->window,
					       cut_window, &l->c);
	} else {
		err = tr_decode_tracefile_cpus(l->rs, &t->tf, l->cpus, l->ncpus, t->window,
					       relay_window, &r);
		pthread_mutex_lock(&r.mu);
		r.done = 1;
		pthread_cond_broadcast(&r.cv);
		pthread_mutex_unlock(&r.mu);
		pthread_join(th, NULL);
		/* the cutter's error first: the decoder may have stopped on it */
		if (r.err)
			err = r.err;
	}
	pthread_mutex_destroy(&r.mu);
	pthread_cond_destroy(&r.cv);
	free(r.win[0].recs);
	free(r.win[0].words);
	free(r.win[1].recs);
	free(r.win[1].words);
	return err;
}

static void *lane_run(void *arg)
{
	struct lane *l = arg;

	l->err = lane_decode(l);
	return NULL;
}

/*
 * How many lanes the pages go to (at most jobs, at most one per CPU with
 * pages) and which CPUs each decodes: the CPUs by their bytes, largest
 * first, each to the lane with fewest bytes so far. Each lane's cpus set
 * (but for one lane alone: every CPU). Returns how many, or 0 without
 * memory.
 */
static unsigned int plan_lanes(const struct tracefile *tf, unsigned int jobs, struct lane *lanes)
{
	uint64_t *bytes, *load;
	uint32_t ncpus = 0, present = 0, c, best, i;
	unsigned int n, k, low;

	for (i = 0; i < tf->npages; i++)
		if (tf->pages[i].cpu + 1 > ncpus)
			ncpus = tf->pages[i].cpu + 1;
	bytes = calloc(ncpus + 1, sizeof(*bytes));
	load = calloc(jobs + 1, sizeof(*load));
	if (!bytes || !load) {
		free(bytes);
		free(load);
		return 0;
	}
	/* a section of no pages still makes its CPU one to decode */
	for (i = 0; i < tf->npages; i++)
		bytes[tf->pages[i].cpu] += tf->pages[i].bytes + 1;
	for (c = 0; c < ncpus; c++)
		present += bytes[c] > 0;
	n = jobs < present ? jobs : present;
	if (n < 2)
		n = 1;	/* every CPU (or none) on one lane: cpus NULL */
	for (k = 0; n > 1 && k < n; k++) {
		lanes[k].ncpus = ncpus;
		lanes[k].cpus = calloc(ncpus, 1);
		if (!lanes[k].cpus)
			n = 0;
	}
	while (n > 1) {
		for (best = 0, c = 1; c < ncpus; c++)
			if (bytes[c] > bytes[best])
				best = c;
		if (!bytes[best])
			break;
		for (low = 0, k = 1; k < n; k++)
			if (load[k] < load[low])
				low = k;
		lanes[low].cpus[best] = 1;
		load[low] += bytes[best];
		bytes[best] = 0;
	}
	free(bytes);
	free(load);
	return n;
}

/* qsort_r order of indexes of recs: by CPU, then (one CPU's) by index. */
static int by_cpu(const void *a, const void *b, void *recs)
{
	const struct tr_rec *r = recs;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (r[x].cpu != r[y].cpu)
		return r[x].cpu < r[y].cpu ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * The records the lanes kept, into kept: each CPU's in recording order,
 * CPU by CPU, whatever lane decoded it. Returns 0 or -PT_ENOMEM.
 */
static int kept_by_cpu(struct lane *lanes, unsigned int n, struct tr_records *kept)
{
	struct tr_records all = { .n = 0 };
	size_t *ix, i;
	unsigned int k;
	int err = 0;

	memset(kept, 0, sizeof(*kept));
	for (k = 0; k < n && !err; k++)
		for (i = 0; i < lanes[k].c.kept.n && !err; i++)
			err = tr_records_copy(&all, &lanes[k].c.kept, &lanes[k].c.kept.recs[i]);
	ix = malloc((all.n + 1) * sizeof(*ix));
	if (!ix)
		err = -PT_ENOMEM;
	for (i = 0; !err && i < all.n; i++)
		ix[i] = i;
	if (!err)
		qsort_r(ix, all.n, sizeof(*ix), by_cpu, all.recs);
	for (i = 0; !err && i < all.n; i++)
		err = tr_records_copy(kept, &all, &all.recs[ix[i]]);
	free(ix);
	free(all.recs);
	free(all.words);
	return err;
}

/*
 * The pages decoded and cut into c on the lanes, each CPU's pages by one,
 * their builders merged into c's and their counts summed into t->rs.
 * Returns 0, -PT_ENOMEM, the decoder's error (a lane's, the first), or
 * the builder's (c->err, as the lane that met it).
 */
static int decode(struct pr_trace *t, struct cut *c)
{
	unsigned int jobs = t->jobs ? t->jobs : 1, n, k;
	struct lane *lanes = calloc(jobs, sizeof(*lanes));
	int err = 0;

	n = lanes ? plan_lanes(&t->tf, jobs, lanes) : 0;
	for (k = 0; k < n; k++) {
		struct lane *l = &lanes[k];

		l->t = t;
		l->rs = k ? &l->own : &t->rs;
		l->c.edges = c->edges;
		l->c.nedges = c->nedges;
		/* a cutting thread each, when there are threads for it */
		l->relay = jobs >= 2 * n;
		if (k)
			l->err = regen_streams_begin(&l->c.b, 1);
		else
			l->c.b = c->b;
	}
	for (k = 1; k < n; k++)
		if (!lanes[k].err && lanes[k].c.b)
			lanes[k].started = !pthread_create(&lanes[k].th, NULL, lane_run, &lanes[k]);
	if (n)
		lanes[0].err = lane_decode(&lanes[0]);
	for (k = 1; k < n; k++) {
		if (lanes[k].started)
			pthread_join(lanes[k].th, NULL);
		else if (!lanes[k].err)
			lanes[k].err = lane_decode(&lanes[k]);
	}
	if (!n)
		err = -PT_ENOMEM;
	for (k = 0; k < n; k++) {
		struct lane *l = &lanes[k];

		c->dropped += l->c.dropped;
		c->missed += l->c.missed;
		if (!c->err)
			c->err = l->c.err;
		if (!err || l->err == -PT_ENOMEM)
			err = l->err;
		if (k) {
			tr_records_add_counts(&t->rs, &l->own);
			tr_records_free(&l->own);
			/* the builder's error (c->err) stays in c's builder */
			if (l->c.b && regen_streams_merge(c->b, l->c.b) == -PT_ENOMEM)
				err = -PT_ENOMEM;
		}
	}
	/* what the lanes kept before an error too: the streams before it are used */
	if (err != -PT_ENOMEM && kept_by_cpu(lanes, n, &c->kept))
		err = -PT_ENOMEM;
	for (k = 0; lanes && k < jobs; k++) {
		free(lanes[k].c.kept.recs);
		free(lanes[k].c.kept.words);
		free(lanes[k].cpus);
	}
	free(lanes);
	return err;
}

int pr_trace_streams(struct pr_trace *t)
{
	struct cut c = { .err = 0 };
	int err = regen_streams_begin(&c.b, t->jobs);

	if (err)
		return err;
	err = edges_funcs(&c, &t->tf);
	if (!err)
		err = decode(t, &c);
	/* the records left are those kept: the window's arrays are freed */
	free(t->rs.recs);
	free(t->rs.words);
	t->rs.recs = c.kept.recs;
	t->rs.n = c.kept.n;
	t->rs.cap = c.kept.cap;
	t->rs.words = c.kept.words;
	t->rs.nwords = c.kept.nwords;
	t->rs.capw = c.kept.capw;
	free(c.edges);
	if (err == -PT_ENOMEM) {
		regen_streams_abort(c.b);
		return err;
	}
	if (err && !c.err) {
		tell(t, "pages", "%s", pt_strerror(err));
		mark_bad(t, err);
	}
	err = regen_streams_finish(c.b, &t->ss);
	if (err == -PT_ENOMEM)
		return err;
	if (err) {
		tell(t, "streams", "%s", pt_strerror(err));
		mark_bad(t, err);
		return err;
	}
	report_records(t);
	report_unlocated_losses(t, c.dropped, c.missed);
	return 0;
}

int pr_trace_load(const char *path, struct pr_trace *t, int model, unsigned int jobs)
{
	int err;

	pr_trace_init(t, NULL, NULL);
	t->jobs = jobs;
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

	if (st.s->nmarkers)
		regen_where(st.s, 0, &st.cpu, &st.stamp);
	return st;
}

/* A stream's walk is done: tell it (by its owner) and mark the trace bad. Returns non-zero to stop. */
static int walked(struct pr_trace *t, const struct out_stream *st, int err)
{
	char own[48];

	if (!err)
		return 0;
	tell(t, pr_owner_name(st->s->owner, own, sizeof(own)), "%s", pt_strerror(err));
	t->bad = 1;
	return err == -PT_ENOMEM || err == -PT_EIO;
}

/*
 * What a part writes, while it waits for its turn: in memory as long as
 * the pool's parts hold less than its limit in all, then in a temporary
 * file of its own (struct pr_walk.held).
 */
struct held {
	struct pool *p;
	char *buf;
	size_t len, cap;
	FILE *file;			/* once it went beyond the limit */
};

/* One stream's parts of the writers (out_writer_ops.merge), filled by a worker. */
struct part {
	struct out_writer *w;		/* n parts */
	struct held *out;		/* what each part wrote */
	int opened;			/* parts [0, opened) were opened */
	int err;
	int done;
};

struct pool {
	struct pr_trace *t;
	struct out_writer *const *ws;
	unsigned int n;
	size_t held, limit;		/* the parts' bytes in memory (atomic); their limit */
	size_t spilled;			/* parts that wrote to a file (atomic) */
	struct part *parts;		/* per stream */
	uint32_t next;			/* streams taken */
	int stop;			/* the merging thread gave up: take no more */
	unsigned int live;		/* workers still walking */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* Whether h may keep n more bytes in memory (counted in the pool's if so). */
static int held_room(struct held *h, size_t n)
{
	size_t was = __atomic_fetch_add(&h->p->held, n, __ATOMIC_RELAXED);

	if (was + n <= h->p->limit && was + n >= was)
		return 1;
	__atomic_fetch_sub(&h->p->held, n, __ATOMIC_RELAXED);
	return 0;
}

/* h's memory given back: its bytes no longer counted. */
static void held_free(struct held *h)
{
	if (h->len)
		__atomic_fetch_sub(&h->p->held, h->len, __ATOMIC_RELAXED);
	free(h->buf);
	h->buf = NULL;
	h->len = h->cap = 0;
}

/* A part's write (fopencookie): to memory while there is room, else to its file. */
static ssize_t held_write(void *cookie, const char *data, size_t n)
{
	struct held *h = cookie;

	if (!h->file && held_room(h, n)) {
		if (h->len + n > h->cap) {
			size_t cap = h->cap ? h->cap : 4096;
			char *b;

			while (cap < h->len + n)
				cap *= 2;
			b = realloc(h->buf, cap);
			if (!b) {
				__atomic_fetch_sub(&h->p->held, n, __ATOMIC_RELAXED);
				errno = ENOMEM;
				return -1;
			}
			h->buf = b;
			h->cap = cap;
		}
		memcpy(h->buf + h->len, data, n);
		h->len += n;
		return (ssize_t)n;
	}
	if (!h->file) {
		h->file = tmpfile();
		if (!h->file || (h->len && fwrite(h->buf, 1, h->len, h->file) != h->len))
			return -1;
		__atomic_fetch_add(&h->p->spilled, 1, __ATOMIC_RELAXED);
		held_free(h);
	}
	return fwrite(data, 1, n, h->file) == n ? (ssize_t)n : -1;
}

/* What h holds, written to fp. Returns 0 or -PT_EIO. */
static int held_out(struct held *h, FILE *fp)
{
	char chunk[65536];
	size_t got;

	if (!h->file)
		return h->len && fwrite(h->buf, 1, h->len, fp) != h->len ? -PT_EIO : 0;
	if (fflush(h->file) || fseek(h->file, 0, SEEK_SET))
		return -PT_EIO;
	while ((got = fread(chunk, 1, sizeof(chunk), h->file)))
		if (fwrite(chunk, 1, got, fp) != got)
			return -PT_EIO;
	return ferror(h->file) ? -PT_EIO : 0;
}

/* Walks stream i into its parts (each writer's copy, its output held: struct held). */
static void walk_part(struct pool *p, const struct regen_funcs *fs, uint32_t i)
{
	static const cookie_io_functions_t io = { .write = held_write };
	struct part *pt = &p->parts[i];
	struct out_writer **pw = calloc(p->n + 1, sizeof(*pw));
	struct out_stream st = pr_trace_stream(p->t, i);
	unsigned int k;
	int err = 0;

	pt->w = calloc(p->n + 1, sizeof(*pt->w));
	pt->out = calloc(p->n + 1, sizeof(*pt->out));
	if (!pw || !pt->w || !pt->out)
		err = -PT_ENOMEM;
	for (k = 0; k < p->n && !err; k++) {
		pt->out[k].p = p;
		pt->w[k] = *p->ws[k];
		pt->w[k].priv = NULL;
		pt->w[k].fp = fopencookie(&pt->out[k], "w", io);
		if (!pt->w[k].fp) {
			err = -PT_ENOMEM;
			break;
		}
		pt->opened++;
		err = pt->w[k].ops->open ? pt->w[k].ops->open(&pt->w[k]) : 0;
		pw[k] = &pt->w[k];
	}
	if (!err)
		err = out_walk_stream_fs(&p->t->m, fs, &st, pw, p->n);
	for (k = 0; k < (unsigned int)pt->opened; k++)
		if (fclose(pt->w[k].fp) && !err)
			err = errno == ENOMEM ? -PT_ENOMEM : -PT_EIO;
	free(pw);
	pthread_mutex_lock(&p->mu);
	pt->err = err;
	pt->done = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct regen_funcs fs;
	uint32_t i;

	/* without a copy the others take the streams (or the merging thread) */
	if (!pr_model_engine_copy(&p->t->m, &fs))
		while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED) &&
		       (i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->t->ss.nstreams)
			walk_part(p, &fs, i);
	pr_model_engine_free(&fs);
	pthread_mutex_lock(&p->mu);
	p->live--;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Part k of stream i into writer k: its file, then its counts; or (merge 0) only freed. */
static int take_part(struct pool *p, struct part *pt, int merge)
{
	unsigned int k;
	int err = pt->err;

	for (k = 0; pt->w && pt->out && k < p->n; k++) {
		struct out_writer *w = p->ws[k];

		if (merge && !err && k < (unsigned int)pt->opened)
			err = held_out(&pt->out[k], w->fp);
		if (k < (unsigned int)pt->opened && pt->w[k].priv) {
			int ret;

			if (merge && !err) {
				ret = w->ops->merge(w, &pt->w[k]);
			} else {
				FILE *null = fopen("/dev/null", "w");

				pt->w[k].fp = null;	/* a summary nobody reads */
				ret = null && pt->w[k].ops->close ? pt->w[k].ops->close(&pt->w[k]) : 0;
				if (null)
					fclose(null);
			}
			if (!err)
				err = ret;
		}
		held_free(&pt->out[k]);
		if (pt->out[k].file)
			fclose(pt->out[k].file);
	}
	free(pt->w);
	free(pt->out);
	pt->w = NULL;
	pt->out = NULL;
	return err;
}

/* pr_trace_walk over jobs threads (struct pr_walk.jobs); this thread merges. */
static int walk_parallel(struct pr_trace *t, struct out_writer *const *ws, unsigned int n,
			 const struct pr_walk *w)
{
	struct pool p = { .t = t, .ws = ws, .n = n, .limit = w->held ? w->held : PR_WALK_HELD };
	unsigned int jobs = w->jobs;
	pthread_t *th = calloc(jobs, sizeof(*th));
	unsigned int k, started = 0;
	uint32_t i;
	int ret = 0;

	p.parts = calloc(t->ss.nstreams, sizeof(*p.parts));
	if (!th || !p.parts) {
		free(th);
		free(p.parts);
		return -PT_ENOMEM;
	}
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	p.live = jobs;
	for (k = 0; k < jobs; k++)
		if (!pthread_create(&th[started], NULL, worker, &p))
			started++;
	pthread_mutex_lock(&p.mu);
	p.live -= jobs - started;
	pthread_mutex_unlock(&p.mu);
	for (i = 0; i < t->ss.nstreams; i++) {
		struct out_stream st = pr_trace_stream(t, i);
		int err, live;

		pthread_mutex_lock(&p.mu);
		while (!p.parts[i].done && p.live)
			pthread_cond_wait(&p.cv, &p.mu);
		live = p.live;
		pthread_mutex_unlock(&p.mu);
		if (p.parts[i].done)
			err = take_part(&p, &p.parts[i], 1);
		else if (!live)	/* no worker left: this thread walks the rest */
			err = out_walk_stream(&t->m, &st, ws, n);
		else
			err = -PT_ENOMEM;
		if (walked(t, &st, err)) {
			ret = err;
			__atomic_store_n(&p.stop, 1, __ATOMIC_RELAXED);
			i++;
			break;
		}
	}
	for (k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	/* streams walked after the one that stopped it: freed, not written */
	for (; i < t->ss.nstreams; i++)
		if (p.parts[i].done)
			take_part(&p, &p.parts[i], 0);
	pthread_mutex_destroy(&p.mu);
	pthread_cond_destroy(&p.cv);
	free(p.parts);
	free(th);
	if (w->spilled)
		*w->spilled += p.spilled;
	return ret;
}

/* Whether w lets pr_trace_walk run its streams on jobs threads. */
static int parallel_walk(const struct pr_trace *t, struct out_writer *const *ws, unsigned int n,
			 const struct pr_walk *w)
{
	unsigned int k;

	if (w->jobs < 2 || w->one_stream || w->begin || w->end || t->ss.nstreams < 2)
		return 0;
	for (k = 0; k < n; k++)
		if (!ws[k]->ops->merge)
			return 0;
	return 1;
}

/*
 * Once per trace, before any stream is walked: what forked children
 * inherit (regen_forks_resolve), on the model's engine copy (the walk's
 * statistics stay the output walk's). Returns 0 or -PT_ENOMEM.
 */
static int resolve_forks(struct pr_trace *t)
{
	struct regen_funcs fs;
	int err;

	if (t->forks_resolved || !t->ss.nforks)
		return 0;
	t->forks_resolved = 1;
	err = pr_model_engine_copy(&t->m, &fs);
	if (!err)
		err = regen_forks_resolve(&fs, &t->ss);
	pr_model_engine_free(&fs);
	return err;
}

int pr_trace_walk(struct pr_trace *t, struct out_writer *const *ws, unsigned int n,
		  const struct pr_walk *w)
{
	static const struct pr_walk all;
	uint32_t i;
	int err, stop;

	if (!w)
		w = &all;
	err = resolve_forks(t);
	if (err)
		return err;
	if (parallel_walk(t, ws, n, w))
		return walk_parallel(t, ws, n, w);
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
		if (walked(t, &st, err))
			return err;
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
