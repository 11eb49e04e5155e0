// SPDX-License-Identifier: GPL-2.0
/*
 * verify - --verify: in verify mode every block of a function whose plan
 * verifies (PT_PLAN_VERIFY: a verify site per block) also wrote BLOCK(func,
 * block) into the same stream, so the regenerated blocks of those
 * functions must equal the stream's BLOCK markers, one for one, in order.
 * Functions enabled without --verify wrote none: their regenerated blocks
 * are counted apart (no_plan), never compared. Every stream is checked to
 * its end: a difference is counted (the first VERIFY_SHOWN named by
 * stream, block index, function and position), and the comparison picks
 * up again at the next ENTER of the stream, the regenerated blocks up to
 * it counted as not compared (after_difference), the BLOCK markers before
 * it passed over.
 *
 * Gaps: records in a gap are lost for both. From a LOSS marker (or a gap)
 * on, nothing is compared until the engine resynchronizes; then the BLOCK
 * markers recorded before the ENTER it resumed at are skipped (counted),
 * as are the blocks it regenerated between the LOSS and its gap. A stream
 * that ends inside activations may have markers for blocks whose outgoing
 * edge was never traced: they are counted as unverified, not as
 * differences. A block with no verify
 * site (no instruction kprobes accept: a lone static-call site, a ud2)
 * records nothing: it is counted (no_site), not compared.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "out.h"
#include "pathtrace_abi.h"

struct verify {
	struct verify_result *res;
	int own_res;
	uint32_t next;		/* index of the next marker to look at in the stream */
	int truncated;
	int gapped;
	int lost;		/* a LOSS marker was passed: no comparison until the resync */
	/*
	 * Resynchronized in this stream: the activation resumed may have been
	 * a callee, and its caller's bits after it cannot be attributed (the
	 * engine's -PT_ENOENT gap): a consequence of the loss, not a difference.
	 */
	int resynced;
	int entered;		/* an ENTER was seen in this stream */
	/*
	 * A block differed: nothing is compared until an ENTER marker at or
	 * after next (the recorded and the regenerated execution meet there).
	 */
	int diverged;
	uint64_t equal;		/* blocks equal in this stream */
};

static int verify_open(struct out_writer *w)
{
	struct verify *v = calloc(1, sizeof(*v));

	if (!v)
		return -PT_ENOMEM;
	if (w->priv) {
		v->res = w->priv;
	} else {
		v->res = calloc(1, sizeof(*v->res));
		v->own_res = 1;
		if (!v->res) {
			free(v);
			return -PT_ENOMEM;
		}
	}
	memset(v->res, 0, sizeof(*v->res));
	w->priv = v;
	return 0;
}

static int verify_stream_begin(struct out_writer *w, const struct out_stream *st)
{
	struct verify *v = w->priv;

	(void)st;
	v->next = 0;
	v->truncated = 0;
	v->gapped = 0;
	v->lost = 0;
	v->resynced = 0;
	v->entered = 0;
	v->diverged = 0;
	v->equal = 0;
	return 0;
}

/*
 * The next BLOCK marker at or after v->next, or NULL. A LOSS marker on the
 * way sets v->lost and stops the scan just past it: BLOCK records may be
 * missing from there on, the engine's blocks up to its gap are not
 * comparable, and the scan must not run past the ENTER the engine will
 * resynchronize at.
 */
static const struct regen_marker *next_block(struct verify *v, const struct regen_stream *s)
{
	while (v->next < s->nmarkers && s->markers[v->next].type != REGEN_M_BLOCK) {
		if (s->markers[v->next++].type == REGEN_M_LOSS) {
			v->lost = 1;
			return NULL;
		}
	}
	return v->next < s->nmarkers ? &s->markers[v->next] : NULL;
}

/* Whether a LOSS marker not yet passed lies at or before bit pos. */
static int loss_up_to(const struct verify *v, const struct regen_stream *s, uint64_t pos)
{
	uint32_t i;

	for (i = v->next; i < s->nmarkers && s->markers[i].pos <= pos; i++)
		if (regen_marker_is_loss(&s->markers[i]))
			return 1;
	return 0;
}

static int mismatch(struct out_writer *w, const struct out_stream *st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int mismatch(struct out_writer *w, const struct out_stream *st, const char *fmt, ...)
{
	struct verify *v = w->priv;
	char own[48], what[200];
	va_list ap;

	v->res->differences++;
	if (v->res->shown >= VERIFY_SHOWN)
		return 0;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(v->res->detail[v->res->shown++], sizeof(v->res->detail[0]), "stream %u (%s): %s",
		 st->index, pr_owner_name(st->s->owner, own, sizeof(own)), what);
	return 0;
}

/* The index of the stream's BLOCK marker at i among its BLOCK markers (for a report). */
static uint32_t block_index(const struct regen_stream *s, uint32_t i)
{
	uint32_t j, n = 0;

	for (j = 0; j < i && j < s->nmarkers; j++)
		n += s->markers[j].type == REGEN_M_BLOCK;
	return n;
}

/* The index of ev's marker in stream s, or UINT32_MAX when it is not one of s's. */
static uint32_t marker_index(const struct regen_stream *s, const struct regen_marker *m)
{
	if (!m || m < s->markers || m >= s->markers + s->nmarkers)
		return UINT32_MAX;
	return (uint32_t)(m - s->markers);
}

/* The CPU marker m of s was recorded on. */
static uint32_t marker_cpu(const struct regen_stream *s, const struct regen_marker *m)
{
	uint64_t stamp;
	uint32_t cpu;

	regen_where(s, marker_index(s, m), &cpu, &stamp);
	return cpu;
}

static int verify_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	struct verify *v = w->priv;
	const struct regen_event *ev = sp->ev;
	const struct regen_marker *mk;
	char a[192], b[192];
	uint32_t from;

	switch (ev->type) {
	case REGEN_EV_BLOCK:
		/* Its plan has no verify sites (enabled without --verify): it recorded nothing. */
		if (sp->f && !(sp->f->plan_flags & PT_PLAN_VERIFY)) {
			v->res->no_plan++;
			return 0;
		}
		/* No instruction of it could be probed: it recorded nothing. */
		if (sp->f && sp->f->verify_block && ev->block < sp->f->cfg.nblocks &&
		    !sp->f->verify_block[ev->block]) {
			v->res->no_site++;
			return 0;
		}
		/*
		 * next_block may meet a LOSS marker on its way: then this
		 * block's record was lost, and nothing is comparable until
		 * the engine resynchronizes.
		 */
		from = v->next;
		mk = v->lost ? NULL : next_block(v, st->s);
		if (v->lost) {
			v->res->skipped++;
			return 0;
		}
		if (v->diverged) {
			v->res->after_difference++;
			v->next = from;
			return 0;
		}
		if (!mk || mk->func != ev->func || mk->arg != ev->block) {
			/*
			 * A difference. The scan for mk may have passed ENTER
			 * markers (records the regenerated execution has not
			 * reached): the comparison picks up again at one of
			 * them, so it goes back to where it started.
			 */
			uint32_t at = block_index(st->s, v->next);

			v->diverged = 1;
			v->next = from;
			if (!mk)
				return mismatch(w, st, "block %" PRIu32 ": regenerated %s at bit %" PRIu64
						" but no BLOCK record is left", at,
						pr_block_name(sp->f, ev->block, a, sizeof(a)), ev->pos);
			return mismatch(w, st, "block %" PRIu32 ": regenerated %s at bit %" PRIu64
					", recorded %s at bit %" PRIu64 " (cpu %u)", at,
					pr_block_name(sp->f, ev->block, a, sizeof(a)), ev->pos,
					pr_block_name(pr_model_func(w->m, mk->func), mk->arg, b,
						      sizeof(b)), mk->pos, marker_cpu(st->s, mk));
		}
		v->res->compared++;
		v->equal++;
		v->next++;
		return 0;
	case REGEN_EV_ENTER: {
		uint32_t to = marker_index(st->s, ev->marker);

		v->entered = 1;
		/*
		 * After a difference, the first ENTER marker not yet passed
		 * is where both executions meet again: the BLOCK markers
		 * before it were the difference's.
		 */
		if (v->diverged && !v->lost && to != UINT32_MAX && to >= v->next) {
			v->next = to;
			v->diverged = 0;
		}
		/*
		 * After a resync the activation resumed at may have been a
		 * callee: when it returns, its lost caller runs on and records
		 * BLOCKs (without bits) up to the next top-level ENTER. They
		 * are the gap's, like the caller's bits of the -PT_ENOENT gap.
		 */
		if (v->resynced && !v->lost && !ev->depth && to != UINT32_MAX)
			for (; v->next < to; v->next++)
				v->res->skipped += st->s->markers[v->next].type == REGEN_M_BLOCK;
		return 0;
	}
	case REGEN_EV_RESYNC:
		/* Markers before the ENTER the engine resumed at belong to the gap. */
		if (ev->marker && ev->marker >= st->s->markers &&
		    ev->marker < st->s->markers + st->s->nmarkers) {
			uint32_t to = (uint32_t)(ev->marker - st->s->markers);

			for (; v->next < to; v->next++)
				v->res->skipped += st->s->markers[v->next].type == REGEN_M_BLOCK;
		}
		v->lost = 0;
		v->diverged = 0;
		v->resynced = 1;
		return 0;
	case REGEN_EV_GAP:
		/*
		 * A loss explains a gap (also when the engine read across one
		 * before noticing it); bits that do not decode are a difference.
		 */
		/*
		 * Bits before a stream's first ENTER are an activation that was
		 * already running when tracing started: not regenerable, so its
		 * BLOCK records are skipped up to the resync, like a loss's.
		 */
		/*
		 * An outermost activation that returned into a traced caller
		 * the stream does not hold (the gap names its ENTER): that
		 * caller began before tracing did or was lost, and runs on
		 * unseen, so its BLOCKs up to the resync are skipped too.
		 */
		if ((!ev->marker || !regen_marker_is_loss(ev->marker)) && !v->lost &&
		    !loss_up_to(v, st->s, ev->pos) &&
		    !((v->resynced || !v->entered) && ev->reason == -PT_ENOENT && !ev->marker) &&
		    !(ev->reason == -PT_ENOENT && ev->marker && ev->marker->type == REGEN_M_ENTER))
			mismatch(w, st, "regeneration stopped at bit %" PRIu64 " in %s after %" PRIu64
				 " equal blocks: %s", ev->pos, sp->f ? sp->f->name : "?", v->equal,
				 pt_strerror(ev->reason));
		/* either way nothing is comparable until the engine resynchronizes */
		v->gapped = 1;
		v->lost = 1;
		return 0;
	case REGEN_EV_TRUNCATED:
		v->truncated = 1;
		return 0;
	default:
		return 0;
	}
}

static int verify_stream_end(struct out_writer *w, const struct out_stream *st)
{
	struct verify *v = w->priv;
	const struct regen_marker *mk;
	uint64_t left = 0;
	int gapped = v->gapped;
	uint32_t i;
	char a[192];

	for (i = v->next; i < st->s->nmarkers; i++) {
		left += st->s->markers[i].type == REGEN_M_BLOCK;
		gapped |= st->s->markers[i].type == REGEN_M_LOSS;
	}
	/* the markers of a difference the stream ended in are that difference's */
	if (!left || v->diverged)
		return 0;
	if (v->truncated || gapped) {
		v->res->unverified += left;
		return 0;
	}
	mk = next_block(v, st->s);
	return mismatch(w, st, "block %" PRIu32 ": %" PRIu64 " BLOCK records left after the"
			" regenerated execution ended, the first %s at bit %" PRIu64 " (cpu %u)",
			block_index(st->s, v->next), left,
			pr_block_name(pr_model_func(w->m, mk->func), mk->arg, a, sizeof(a)), mk->pos,
			marker_cpu(st->s, mk));
}

static int verify_close(struct out_writer *w)
{
	struct verify *v = w->priv;

	if (v && v->own_res)
		free(v->res);
	free(v);
	w->priv = NULL;
	return 0;
}

const struct out_writer_ops verify_ops = {
	.name = "verify",
	.open = verify_open,
	.stream_begin = verify_stream_begin,
	.step = verify_step,
	.stream_end = verify_stream_end,
	.close = verify_close,
};
