// SPDX-License-Identifier: GPL-2.0
/*
 * out_perfetto - --format perfetto: the execution as Trace Event JSON, the
 * format the Perfetto UI (ui.perfetto.dev), chrome://tracing and speedscope
 * open:
 *
 *   {"displayTimeUnit": "ns", "traceEvents": [
 *   {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "pathtrace"}},
 *   {"ph": "M", "name": "thread_name", "pid": 1, "tid": T, "args": {"name": OWNER}},
 *   {"ph": "B", "name": FUNC, "pid": 1, "tid": T, "ts": US, "args": {...}},
 *   {"ph": "i", "s": "t", "name": BLOCK, "pid": 1, "tid": T, "ts": US},
 *   {"ph": "E", "name": FUNC, "pid": 1, "tid": T, "ts": US},
 *   ...]}
 *
 * one event a line. A track (tid = stream index + 1) per stream, that is
 * per task and interrupt context (pr_owner_name names it). One slice (B to
 * E) per activation, nested as the engine nests them: an activation entered
 * from untraced code that a traced one called sits inside its traced
 * caller's slice, with "caller": "untraced" in its args (its only args:
 * speedscope tells frames apart by name and args). With --blocks
 * every block is an instant event on its track. A gap ends every open
 * slice (its activations' ends are not known) and is an instant "gap"; a
 * stream that ends inside activations (TRUNCATED) ends them at its last
 * event, args "truncated": 1.
 *
 * Time. The trace has one stamp per segment (the markers' stamps, in ns);
 * the events and blocks (written or not) between two segment stamps are
 * spread evenly over the time between them, and those after a stream's
 * last stamp at the rate of the interval before (1 ns apart if none). A track's times only grow
 * (at least 1 ns from one event to the next, also where stamps of two
 * CPUs disagree), so the file's order is each track's order. ts is in
 * microseconds with three decimals: the nanosecond exactly.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "out.h"
#include "out_line.h"

/* An event waiting for its time: what the step said. */
struct pf_event {
	const struct pr_func *f;
	uint32_t type;
	uint32_t block;
	uint32_t depth;
	int reason;
	int via_untraced;
	uint64_t unit;			/* its place among the interval's events and blocks */
};

struct pf_stamp {
	uint64_t pos, stamp;
};

struct perfetto {
	int blocks;			/* --blocks: instant events */
	uint32_t tid;
	/* the stream's segment stamps where they change, by position */
	struct pf_stamp *cp;
	uint32_t ncp, ci;
	/* events since cp[ci] */
	struct pf_event *ev;
	size_t nev, capev;
	uint64_t units;			/* events and blocks (also those not written) since cp[ci] */
	double ns_per_event;		/* of the last interval with time in it */
	uint64_t last_ts;		/* ns, of the track's last event */
	int have_ts;
	/* open slices (their functions' names), outermost first */
	const char **open;
	uint32_t nopen, capopen;
	struct out_line line;		/* the event being written (out_line.h) */
};

/*
 * The start of an event line on track p->tid at ns (ph, pid, tid, ts in
 * microseconds with the nanoseconds as three decimals) in p->line, the
 * rest appended by the caller, which ends the line.
 */
static void head(FILE *fp, struct perfetto *p, const char *ph, uint64_t ns)
{
	struct out_line *l = &p->line;

	out_line_str(l, fp, ",\n{\"ph\": \"");
	out_line_str(l, fp, ph);
	out_line_str(l, fp, "\", \"pid\": 1, \"tid\": ");
	out_line_dec(l, fp, p->tid, 1);
	out_line_str(l, fp, ", \"ts\": ");
	out_line_dec(l, fp, ns / 1000, 1);
	out_line_put(l, fp, ".", 1);
	out_line_dec(l, fp, ns % 1000, 3);
}

/* The name of head's event, then rest, the line ended. */
static void tail(FILE *fp, struct perfetto *p, const char *name, const char *rest)
{
	out_line_str(&p->line, fp, ", \"name\": ");
	out_line_json_str(&p->line, fp, name);
	out_line_str(&p->line, fp, rest);
	out_line_end(&p->line, fp);
}

static int push_open(struct perfetto *p, const char *name)
{
	if (p->nopen == p->capopen) {
		uint32_t cap = p->capopen ? 2 * p->capopen : 64;
		const char **n = realloc(p->open, cap * sizeof(*n));

		if (!n)
			return -PT_ENOMEM;
		p->open = n;
		p->capopen = cap;
	}
	p->open[p->nopen++] = name;
	return 0;
}

/* Ends open slices until depth are left. */
static void close_to(FILE *fp, struct perfetto *p, uint32_t depth, uint64_t ns, int truncated)
{
	while (p->nopen > depth) {
		head(fp, p, "E", ns);
		tail(fp, p, p->open[--p->nopen], truncated ? ", \"args\": {\"truncated\": 1}}" : "}");
	}
}

static int emit(FILE *fp, struct perfetto *p, const struct pf_event *e, uint64_t ns)
{
	char buf[192];

	switch (e->type) {
	case REGEN_EV_ENTER:
		close_to(fp, p, e->depth, ns, 0);
		head(fp, p, "B", ns);
		/*
		 * No args but the caller's kind: viewers such as speedscope
		 * tell frames apart by name and args, and a function is one
		 * frame at any depth on any CPU.
		 */
		tail(fp, p, e->f ? e->f->name : "(unknown)",
		     e->via_untraced ? ", \"args\": {\"caller\": \"untraced\"}}" : "}");
		return push_open(p, e->f ? e->f->name : "(unknown)");
	case REGEN_EV_BLOCK:
		if (!p->blocks)
			return 0;
		head(fp, p, "i", ns);
		out_line_str(&p->line, fp, ", \"s\": \"t\"");
		tail(fp, p, e->f ? pr_block_name(e->f, e->block, buf, sizeof(buf)) : "(unknown)", "}");
		return 0;
	case REGEN_EV_EXIT:
	case REGEN_EV_REPLACED:	/* ended by an execve, as a return for the viewer */
		close_to(fp, p, e->depth + 1, ns, 0);
		close_to(fp, p, e->depth, ns, 0);
		return 0;
	case REGEN_EV_GAP:
		close_to(fp, p, 0, ns, 0);
		head(fp, p, "i", ns);
		out_line_str(&p->line, fp, ", \"s\": \"t\", \"name\": \"gap\", \"args\": {\"reason\": ");
		out_line_json_str(&p->line, fp, pt_strerror(e->reason));
		out_line_str(&p->line, fp, "}}");
		out_line_end(&p->line, fp);
		return 0;
	case REGEN_EV_TRUNCATED:
		head(fp, p, "i", ns);
		out_line_str(&p->line, fp, ", \"s\": \"t\"");
		tail(fp, p, "truncated", "}");
		close_to(fp, p, 0, ns, 1);
		return 0;
	default:	/* RESYNC: the next ENTER says it */
		return 0;
	}
}

/* The events since cp[ci] over [from, to) ns; to <= from: at the last rate. */
static int flush(FILE *fp, struct perfetto *p, uint64_t from, uint64_t to)
{
	size_t k;
	double step = p->ns_per_event;
	int err = 0;

	if (to > from && p->units) {
		step = (double)(to - from) / (double)p->units;
		p->ns_per_event = step;
	}
	p->units = 0;
	for (k = 0; k < p->nev && !err; k++) {
		uint64_t ns = from + (uint64_t)(step * (double)p->ev[k].unit);

		if (p->have_ts && ns <= p->last_ts)
			ns = p->last_ts + 1;
		p->last_ts = ns;
		p->have_ts = 1;
		err = emit(fp, p, &p->ev[k], ns);
	}
	p->nev = 0;
	return err ? err : ferror(fp) ? -PT_EIO : 0;
}

static int perfetto_open(struct out_writer *w)
{
	struct perfetto *p = calloc(1, sizeof(*p));

	if (!p)
		return -PT_ENOMEM;
	p->blocks = w->perfetto_blocks;
	w->priv = p;
	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n"
	      "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, "
	      "\"args\": {\"name\": \"pathtrace\"}}", w->fp);
	return ferror(w->fp) ? -PT_EIO : 0;
}

static int perfetto_stream_begin(struct out_writer *w, const struct out_stream *st)
{
	struct perfetto *p = w->priv;
	const struct regen_stream *s = st->s;
	char own[48];
	uint32_t i;

	p->tid = st->index + 1;
	p->ncp = 0;
	p->ci = 0;
	p->nev = 0;
	p->units = 0;
	p->nopen = 0;
	p->have_ts = 0;
	p->ns_per_event = 1;
	free(p->cp);
	p->cp = calloc((size_t)s->nmarkers + 1, sizeof(*p->cp));
	if (!p->cp)
		return -PT_ENOMEM;
	for (i = 0; i < s->nwhere; i++) {
		const struct regen_where *wh = &s->where[i];

		if (wh->stamp && (!p->ncp || p->cp[p->ncp - 1].stamp != wh->stamp))
			p->cp[p->ncp++] = (struct pf_stamp){ s->markers[wh->first].pos, wh->stamp };
	}
	if (!p->ncp)
		p->cp[p->ncp++] = (struct pf_stamp){ 0, 0 };
	fprintf(w->fp, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": %u, "
		"\"args\": {\"name\": \"%s\"}}", p->tid, pr_owner_name(s->owner, own, sizeof(own)));
	fprintf(w->fp, ",\n{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": 1, "
		"\"tid\": %u, \"args\": {\"sort_index\": %u}}", p->tid, p->tid);
	return ferror(w->fp) ? -PT_EIO : 0;
}

static int perfetto_step(struct out_writer *w, const struct out_stream *st,
			 const struct out_step *sp)
{
	struct perfetto *p = w->priv;
	const struct regen_event *ev = sp->ev;
	const struct regen_marker *mk = ev->marker;
	struct pf_event *e;
	int err;

	(void)st;
	/* a later segment's stamp: what came before spreads up to it */
	while (p->ci + 1 < p->ncp && ev->pos >= p->cp[p->ci + 1].pos) {
		err = flush(w->fp, p, p->cp[p->ci].stamp, p->cp[p->ci + 1].stamp);
		if (err)
			return err;
		p->ci++;
	}
	/* a block not written still takes its share of the time */
	if (ev->type == REGEN_EV_BLOCK && !p->blocks) {
		p->units++;
		return 0;
	}
	if (p->nev == p->capev) {
		size_t cap = p->capev ? 2 * p->capev : 1024;
		struct pf_event *n = realloc(p->ev, cap * sizeof(*n));

		if (!n)
			return -PT_ENOMEM;
		p->ev = n;
		p->capev = cap;
	}
	e = &p->ev[p->nev++];
	memset(e, 0, sizeof(*e));
	e->f = sp->f;
	e->type = ev->type;
	e->block = ev->block;
	e->depth = ev->depth;
	e->reason = ev->reason;
	e->via_untraced = ev->type == REGEN_EV_ENTER && mk && mk->type == REGEN_M_ENTER &&
			  ev->depth > 0 && mk->arg == REGEN_ENTER_NESTED;
	e->unit = p->units++;
	return 0;
}

static int perfetto_stream_end(struct out_writer *w, const struct out_stream *st)
{
	struct perfetto *p = w->priv;
	int err;

	(void)st;
	err = flush(w->fp, p, p->cp[p->ci].stamp, 0);
	if (!err)
		close_to(w->fp, p, 0, p->last_ts + 1, 1);
	return err ? err : ferror(w->fp) ? -PT_EIO : 0;
}

static int perfetto_close(struct out_writer *w)
{
	struct perfetto *p = w->priv;

	if (p) {
		fputs("\n]}\n", w->fp);
		free(p->cp);
		free(p->ev);
		free(p->open);
		free(p);
	}
	w->priv = NULL;
	return fflush(w->fp) || ferror(w->fp) ? -PT_EIO : 0;
}

const struct out_writer_ops out_perfetto_ops = {
	.name = "perfetto",
	.open = perfetto_open,
	.stream_begin = perfetto_stream_begin,
	.step = perfetto_step,
	.stream_end = perfetto_stream_end,
	.close = perfetto_close,
};
