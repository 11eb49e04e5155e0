// SPDX-License-Identifier: GPL-2.0
/*
 * streams - per-owner stream assembly from decoded ring-buffer records
 * (docs/runtime.md; the rules are in streams.h and FORMAT.md).
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "streams.h"

#define STAMP_MIN 0
#define STAMP_MAX UINT64_MAX
#define MAX_STREAM_BITS (1ull << 40)

struct segment {
	uint64_t owner;
	uint64_t stamp;
	uint32_t cpu;
	uint32_t seq;		/* creation order: ties in stamp keep recording order */
	size_t first, end;	/* range in the CPU-ordered index array */
};

/* A loss that may have hidden other owners' segments (see streams.h). */
struct loss_event {
	uint32_t cpu;
	uint32_t kind;		/* enum pt_loss or TR_LOSS_CORRUPT */
	uint64_t count;
	uint64_t lo, hi;	/* stamps that bound the hidden interval (conservative, closed) */
	uint64_t open_owner;
	int has_open_owner;
	int hi_known;
};

/* A loss to be marked between an owner's segments j-1 and j (j = nsegs: at the end). */
struct boundary_loss {
	uint32_t kind;
	uint32_t cpu;
	uint64_t count;
	int set;
};

struct builder {
	const struct tr_records *rs;
	size_t *order;		/* record indices, by (cpu, recording order) */
	struct segment *segs;
	size_t nsegs, capsegs;
	struct loss_event *losses;
	size_t nlosses, caplosses;
};

static const struct tr_records *sort_rs;

static int by_cpu(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint32_t cx = sort_rs->recs[x].cpu, cy = sort_rs->recs[y].cpu;

	if (cx != cy)
		return cx < cy ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int by_owner_stamp(const void *a, const void *b)
{
	const struct segment *x = a, *y = b;

	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	if (x->stamp != y->stamp)
		return x->stamp < y->stamp ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct segment *new_segment(struct builder *b)
{
	if (b->nsegs == b->capsegs) {
		size_t cap = b->capsegs ? b->capsegs * 2 : 64;
		struct segment *g = realloc(b->segs, cap * sizeof(*g));

		if (!g)
			return NULL;
		b->segs = g;
		b->capsegs = cap;
	}
	return &b->segs[b->nsegs++];
}

static struct loss_event *new_loss(struct builder *b)
{
	if (b->nlosses == b->caplosses) {
		size_t cap = b->caplosses ? b->caplosses * 2 : 16;
		struct loss_event *g = realloc(b->losses, cap * sizeof(*g));

		if (!g)
			return NULL;
		b->losses = g;
		b->caplosses = cap;
	}
	memset(&b->losses[b->nlosses], 0, sizeof(b->losses[0]));
	return &b->losses[b->nlosses++];
}

static int is_interrupt_owner_of(uint64_t owner, uint32_t cpu)
{
	uint32_t kind = PT_OWNER_KIND(owner);

	return (kind == PT_OWNER_SOFTIRQ || kind == PT_OWNER_HARDIRQ || kind == PT_OWNER_NMI) &&
	       PT_OWNER_ID(owner) == cpu;
}

/* Pass 1: cut every CPU's records into segments and collect loss events. */
static int cut_segments(struct builder *b, struct regen_streams *out)
{
	const struct tr_records *rs = b->rs;
	size_t i = 0;

	while (i < rs->n) {
		uint32_t cpu = rs->recs[b->order[i]].cpu;
		struct segment *open = NULL;
		size_t first_pending = b->nlosses;	/* losses on this CPU waiting for hi */
		int unowned_run = 0;

		for (; i < rs->n && rs->recs[b->order[i]].cpu == cpu; i++) {
			const struct tr_rec *r = &rs->recs[b->order[i]];
			const uint64_t *body = tr_body(rs, r);
			struct loss_event *le;
			size_t k;

			if (r->type == PT_REC_OWNER) {
				if (open)
					open->end = i;
				for (k = first_pending; k < b->nlosses; k++)
					if (b->losses[k].cpu == cpu && !b->losses[k].hi_known) {
						b->losses[k].hi = body[1];
						b->losses[k].hi_known = 1;
					}
				first_pending = b->nlosses;
				open = new_segment(b);
				if (!open)
					return -PT_ENOMEM;
				open->owner = body[0];
				open->stamp = body[1];
				open->cpu = cpu;
				open->seq = b->nsegs - 1;
				open->first = i + 1;
				open->end = i + 1;
				unowned_run = 0;
				continue;
			}
			if (r->type == PT_REC_COUNTERS) {
				out->counters_records++;
				if (open)
					open->end = i + 1;
				continue;
			}
			if (r->type == PT_REC_LOSS)
				out->loss_records++;
			if (!open) {
				out->unowned_records++;
				if (r->type == PT_REC_BITS && r->arg != PT_BITS_PARTIAL)
					out->unowned_bits += r->arg;
				/* A run of unowned records is itself a loss of unknown owner. */
				if (!unowned_run && r->type != PT_REC_LOSS) {
					le = new_loss(b);
					if (!le)
						return -PT_ENOMEM;
					le->cpu = cpu;
					le->kind = TR_LOSS_CORRUPT;
					le->count = 1;
					le->lo = STAMP_MIN;
					le->hi = STAMP_MAX;
				}
				unowned_run = 1;
				if (r->type != PT_REC_LOSS)
					continue;
			} else {
				open->end = i + 1;
			}
			if (r->type != PT_REC_LOSS || r->arg == PT_LOSS_STATE)
				continue;
			/* OVERRUN, MISSED or CORRUPT: other owners may have lost segments. */
			le = new_loss(b);
			if (!le)
				return -PT_ENOMEM;
			le->cpu = cpu;
			le->kind = r->arg;
			le->count = body[0];
			le->lo = open ? open->stamp : STAMP_MIN;
			le->hi = STAMP_MAX;
			le->has_open_owner = open != NULL;
			le->open_owner = open ? open->owner : 0;
			if (r->arg != PT_LOSS_MISSED) {
				/* Records up to the next OWNER cannot be attributed. */
				open = NULL;
				unowned_run = 1;
			}
		}
	}
	return 0;
}

/*
 * Marks, in one owner's segments [s, s + n), the boundaries where a loss
 * event may hide a segment: a hidden segment's stamp lies strictly between
 * lo (the segment open at the loss) and hi (the next OWNER on that CPU), so
 * boundary j (between segments j-1 and j; j = 0 before the first, j = n
 * after the last) is hit when stamp[j-1] < hi and stamp[j] > lo.
 */
static void mark_boundaries(const struct segment *s, size_t n, const struct loss_event *le,
			    struct boundary_loss *bl)
{
	size_t lo = 0, hi = n, j;

	if (le->has_open_owner) {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (s[mid].stamp > le->lo)
				hi = mid;
			else
				lo = mid + 1;
		}
	}
	for (j = lo; j <= n; j++) {
		if (j > 0 && le->hi_known && s[j - 1].stamp >= le->hi)
			break;
		if (!bl[j].set) {
			bl[j].set = 1;
			bl[j].kind = le->kind;
			bl[j].cpu = le->cpu;
		}
		bl[j].count += le->count;
	}
}

static int affects(const struct loss_event *le, uint64_t owner)
{
	if (le->has_open_owner && le->open_owner == owner)
		return 0;	/* its own stream has the LOSS record inline */
	if (le->kind == PT_LOSS_MISSED)
		return is_interrupt_owner_of(owner, le->cpu);
	/* Idle and interrupt owners are per CPU: a loss elsewhere hides none of theirs. */
	return PT_OWNER_KIND(owner) == PT_OWNER_TASK || PT_OWNER_ID(owner) == le->cpu;
}

static void put_bits(uint64_t *words, uint64_t pos, const uint64_t *src, uint32_t nbits)
{
	uint32_t done = 0;

	while (done < nbits) {
		uint32_t take = nbits - done < 64 ? nbits - done : 64;
		uint64_t v = src[done / 64];
		uint64_t p = pos + done;
		uint32_t sh = p % 64;

		if (take < 64)
			v &= (1ull << take) - 1;
		words[p / 64] |= v << sh;
		if (sh && sh + take > 64)
			words[p / 64 + 1] |= v >> (64 - sh);
		done += take;
	}
}

static void marker_at(struct regen_marker *m, uint64_t pos, uint32_t type, const struct segment *sg)
{
	memset(m, 0, sizeof(*m));
	m->pos = pos;
	m->type = type;
	m->cpu = sg ? sg->cpu : 0;
	m->stamp = sg ? sg->stamp : 0;
}

static void boundary_marker(struct regen_marker *m, uint64_t pos, const struct boundary_loss *bl)
{
	memset(m, 0, sizeof(*m));
	m->pos = pos;
	m->type = REGEN_M_LOSS;
	m->arg = bl->kind;
	m->cpu = bl->cpu;
	m->value = bl->count;
}

/* Pass 3: one owner's bitstring and markers from its segments [s, s + n). */
static int assemble(struct builder *b, const struct segment *s, size_t n,
		    const struct boundary_loss *bl, struct regen_stream *st,
		    uint64_t **bits_out, struct regen_marker **markers_out)
{
	const struct tr_records *rs = b->rs;
	uint64_t nbits = 0, nmarkers = 0, pos = 0;
	struct regen_marker *m;
	uint64_t *bits;
	size_t j, i;

	for (j = 0; j <= n; j++) {
		nmarkers += bl[j].set;
		if (j == n)
			break;
		for (i = s[j].first; i < s[j].end; i++) {
			const struct tr_rec *r = &rs->recs[b->order[i]];

			if (r->type == PT_REC_BITS && r->arg != PT_BITS_PARTIAL)
				nbits += r->arg;
			else if (r->type != PT_REC_COUNTERS)
				nmarkers++;
		}
	}
	if (nbits > MAX_STREAM_BITS || nmarkers > UINT32_MAX)
		return -PT_EOVERFLOW;
	bits = calloc(nbits / 64 + 1, sizeof(*bits));
	m = calloc(nmarkers ? nmarkers : 1, sizeof(*m));
	*bits_out = bits;
	*markers_out = m;
	if (!bits || !m)
		return -PT_ENOMEM;
	st->owner = s[0].owner;
	st->bits = bits;
	st->markers = m;
	for (j = 0; j <= n; j++) {
		if (bl[j].set)
			boundary_marker(m++, pos, &bl[j]);
		if (j == n)
			break;
		for (i = s[j].first; i < s[j].end; i++) {
			const struct tr_rec *r = &rs->recs[b->order[i]];
			const uint64_t *body = tr_body(rs, r);

			switch (r->type) {
			case PT_REC_BITS:
				if (r->arg == PT_BITS_PARTIAL) {
					marker_at(m, pos, REGEN_M_PARTIAL, &s[j]);
					m++->value = body[0];
				} else {
					put_bits(bits, pos, body, r->arg);
					pos += r->arg;
				}
				break;
			case PT_REC_ENTER:
				marker_at(m, pos, REGEN_M_ENTER, &s[j]);
				m->func = r->arg;
				m++->value = body[0];
				break;
			case PT_REC_BLOCK:
				marker_at(m, pos, REGEN_M_BLOCK, &s[j]);
				m->func = r->arg;
				m++->arg = (uint32_t)body[0];
				break;
			case PT_REC_LOSS:
				marker_at(m, pos, REGEN_M_LOSS, &s[j]);
				m->arg = r->arg;
				m->func = (uint32_t)body[1];
				m++->value = body[0];
				break;
			default:
				break;
			}
		}
	}
	st->nbits = pos;
	st->nmarkers = m - *markers_out;
	return 0;
}

int regen_streams_build(const struct tr_records *rs, struct regen_streams *out)
{
	struct builder b = { .rs = rs };
	struct boundary_loss *bl = NULL;
	size_t i, j, nstreams = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (rs->n) {
		b.order = malloc(rs->n * sizeof(*b.order));
		if (!b.order)
			return -PT_ENOMEM;
	}
	for (i = 0; i < rs->n; i++)
		b.order[i] = i;
	/* qsort is not reentrant-safe with a context; the builder is single-threaded. */
	sort_rs = rs;
	if (rs->n)
		qsort(b.order, rs->n, sizeof(*b.order), by_cpu);
	err = cut_segments(&b, out);
	if (err)
		goto out;
	if (b.nsegs)
		qsort(b.segs, b.nsegs, sizeof(*b.segs), by_owner_stamp);
	for (i = 0; i < b.nsegs; i++)
		if (i == 0 || b.segs[i].owner != b.segs[i - 1].owner)
			nstreams++;
	out->streams = calloc(nstreams ? nstreams : 1, sizeof(*out->streams));
	out->bits_store = calloc(nstreams ? nstreams : 1, sizeof(*out->bits_store));
	out->marker_store = calloc(nstreams ? nstreams : 1, sizeof(*out->marker_store));
	bl = calloc(b.nsegs + 1, sizeof(*bl));
	if (!out->streams || !out->bits_store || !out->marker_store || !bl) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < b.nsegs; i = j) {
		size_t n, k;

		for (j = i; j < b.nsegs && b.segs[j].owner == b.segs[i].owner; j++)
			;
		n = j - i;
		memset(bl, 0, (n + 1) * sizeof(*bl));
		for (k = 0; k < b.nlosses; k++)
			if (affects(&b.losses[k], b.segs[i].owner))
				mark_boundaries(&b.segs[i], n, &b.losses[k], bl);
		err = assemble(&b, &b.segs[i], n, bl, &out->streams[out->nstreams],
			       &out->bits_store[out->nstreams], &out->marker_store[out->nstreams]);
		out->nstreams++;
		if (err)
			goto out;
	}
out:
	free(bl);
	free(b.order);
	free(b.segs);
	free(b.losses);
	return err;
}

void regen_streams_free(struct regen_streams *s)
{
	uint32_t i;

	for (i = 0; i < s->nstreams; i++) {
		if (s->bits_store)
			free(s->bits_store[i]);
		if (s->marker_store)
			free(s->marker_store[i]);
	}
	free(s->bits_store);
	free(s->marker_store);
	free(s->streams);
	memset(s, 0, sizeof(*s));
}

const struct regen_stream *regen_streams_find(const struct regen_streams *s, uint64_t owner)
{
	uint32_t lo = 0, hi = s->nstreams;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->streams[mid].owner == owner)
			return &s->streams[mid];
		if (s->streams[mid].owner < owner)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
