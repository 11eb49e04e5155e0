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
	/* what its records hold, counted as they are cut (assemble sizes the stream by them) */
	uint64_t nbits, nmarkers, nenters;
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
	int any_cpu;		/* a MISSED interval: interrupt owners of every CPU */
};

/* A LOSS(MISSED) record of the module's, with its interval (body words 2, 3). */
static int missed_with_interval(const struct tr_rec *r)
{
	return r->type == PT_REC_LOSS && r->arg == PT_LOSS_MISSED && !r->synthetic &&
	       r->nwords * 8u >= sizeof(struct pt_rec_loss);
}

/* A loss to be marked between an owner's segments j-1 and j (j = nsegs: at the end). */
struct boundary_loss {
	uint32_t kind;
	uint32_t cpu;
	uint64_t count;
	int set;
	int cut;		/* a loss other than MISSED: it may cut an activation */
};

/* A FORK record: its fork (regen_streams.forks) and where it sits. */
struct fork_rec {
	size_t at;		/* index in the CPU-ordered index array */
};

struct builder {
	const struct tr_records *rs;
	struct fork_rec *fork_at;	/* per fork of out->forks, ascending */
	size_t *order;		/* record indices, by (cpu, recording order) */
	struct segment *segs;
	size_t nsegs, capsegs;
	struct loss_event *losses;
	size_t nlosses, caplosses;
};

/* A run of consecutive records of one CPU (records come page by page). */
struct run {
	uint32_t cpu;
	size_t first, n;
};

static int by_cpu_then_position(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * Record indices grouped by CPU, each CPU's in recording order: sorts the
 * runs of equal CPU (about one per page), not the records. Returns 0 or
 * -PT_ENOMEM.
 */
static int order_by_cpu(const struct tr_records *rs, size_t *order)
{
	struct run *runs = NULL;
	size_t nruns = 0, cap = 0, i, k, o = 0;

	for (i = 0; i < rs->n; i++) {
		if (nruns && runs[nruns - 1].cpu == rs->recs[i].cpu) {
			runs[nruns - 1].n++;
			continue;
		}
		if (nruns == cap) {
			struct run *g;

			cap = cap ? cap * 2 : 64;
			g = realloc(runs, cap * sizeof(*g));
			if (!g) {
				free(runs);
				return -PT_ENOMEM;
			}
			runs = g;
		}
		runs[nruns++] = (struct run){ .cpu = rs->recs[i].cpu, .first = i, .n = 1 };
	}
	if (nruns > 1)
		qsort(runs, nruns, sizeof(*runs), by_cpu_then_position);
	for (k = 0; k < nruns; k++)
		for (i = 0; i < runs[k].n; i++)
			order[o++] = runs[k].first + i;
	free(runs);
	return 0;
}

/* Within one owner: by stamp, then CPU, then recording order. */
static int seg_before(const struct segment *x, const struct segment *y)
{
	if (x->stamp != y->stamp)
		return x->stamp < y->stamp;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu;
	return x->seq < y->seq;
}

/*
 * Stable natural merge sort of idx[0, n) by seg_before. An owner's
 * segments arrive as one stamp-sorted run per CPU, so this is a few O(n)
 * passes where a general sort would be O(n log n).
 */
static void sort_runs(const struct segment *segs, uint32_t *idx, uint32_t *tmp, size_t n)
{
	for (;;) {
		size_t i = 0, merges = 0;

		while (i < n) {
			size_t mid = i + 1, end, l, r, o = i;

			while (mid < n && !seg_before(&segs[idx[mid]], &segs[idx[mid - 1]]))
				mid++;
			end = mid;
			if (end < n)
				for (end = mid + 1; end < n && !seg_before(&segs[idx[end]], &segs[idx[end - 1]]);)
					end++;
			for (l = i, r = mid; l < mid || r < end;)
				tmp[o++] = r >= end || (l < mid && !seg_before(&segs[idx[r]], &segs[idx[l]])) ?
					   idx[l++] : idx[r++];
			merges++;
			i = end;
		}
		memcpy(idx, tmp, n * sizeof(*idx));
		if (merges <= 1)
			return;
	}
}

struct owner_slot {
	uint64_t owner;
	uint32_t id;		/* in first-seen order */
	uint32_t used;
};

struct owner_rank {
	uint64_t owner;
	uint32_t id;
};

static int by_owner(const void *a, const void *b)
{
	const struct owner_rank *x = a, *y = b;

	return x->owner < y->owner ? -1 : x->owner > y->owner;
}

/*
 * Sorts b->segs by (owner, stamp, CPU, recording order): owners through a
 * hash table (few distinct), each owner's segments by sort_runs. Returns 0
 * or -PT_ENOMEM.
 */
static int sort_segments(struct builder *b)
{
	size_t n = b->nsegs, cap = 16, i, nown = 0;
	struct owner_slot *slots;
	struct owner_rank *ranks = NULL;
	uint32_t *sid = NULL, *rank = NULL, *start = NULL, *idx = NULL, *tmp = NULL;
	struct segment *sorted = NULL;
	int err = -PT_ENOMEM;

	if (n < 2)
		return 0;
	while (cap < 2 * n)
		cap *= 2;
	slots = calloc(cap, sizeof(*slots));
	sid = malloc(n * sizeof(*sid));
	idx = malloc(n * sizeof(*idx));
	tmp = malloc(n * sizeof(*tmp));
	sorted = malloc(n * sizeof(*sorted));
	if (!slots || !sid || !idx || !tmp || !sorted)
		goto out;
	for (i = 0; i < n; i++) {
		uint64_t o = b->segs[i].owner;
		size_t h = (size_t)((o * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);

		while (slots[h].used && slots[h].owner != o)
			h = (h + 1) & (cap - 1);
		if (!slots[h].used) {
			slots[h].used = 1;
			slots[h].owner = o;
			slots[h].id = nown++;
		}
		sid[i] = slots[h].id;
	}
	ranks = malloc(nown * sizeof(*ranks));
	rank = malloc(nown * sizeof(*rank));
	start = calloc(nown + 1, sizeof(*start));
	if (!ranks || !rank || !start)
		goto out;
	for (i = 0; i < cap; i++)
		if (slots[i].used)
			ranks[slots[i].id] = (struct owner_rank){ slots[i].owner, slots[i].id };
	qsort(ranks, nown, sizeof(*ranks), by_owner);
	for (i = 0; i < nown; i++)
		rank[ranks[i].id] = i;
	for (i = 0; i < n; i++)
		start[rank[sid[i]] + 1]++;
	for (i = 0; i < nown; i++)
		start[i + 1] += start[i];
	/* Scatter in creation order: each owner's segments stay in (CPU, position) order. */
	for (i = 0; i < n; i++)
		idx[start[rank[sid[i]]]++] = i;
	for (i = nown; i > 0; i--)
		start[i] = start[i - 1];
	start[0] = 0;
	for (i = 0; i < nown; i++)
		sort_runs(b->segs, idx + start[i], tmp + start[i], start[i + 1] - start[i]);
	for (i = 0; i < n; i++)
		sorted[i] = b->segs[idx[i]];
	free(b->segs);
	b->segs = sorted;
	b->capsegs = n;
	sorted = NULL;
	err = 0;
out:
	free(slots);
	free(ranks);
	free(sid);
	free(rank);
	free(start);
	free(idx);
	free(tmp);
	free(sorted);
	return err;
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

/* Record r joins segment sg: its bits, or a marker (profiles' records are neither). */
static void seg_count(struct segment *sg, const struct tr_rec *r)
{
	if (r->type == PT_REC_BITS && r->arg != PT_BITS_PARTIAL)
		sg->nbits += r->arg;
	else if (r->type != PT_REC_COUNTERS && r->type != PT_REC_PATHS)
		sg->nmarkers++;
	sg->nenters += r->type == PT_REC_ENTER;
}

/* A FORK record (body: child, stamp) of parent's segment at index at. */
static int new_fork(struct builder *b, struct regen_streams *out, uint64_t parent,
		    const uint64_t *body, size_t at)
{
	struct regen_fork *f;

	if (out->nforks == UINT32_MAX)
		return -PT_EOVERFLOW;
	if (out->nforks == out->capforks) {
		uint32_t cap = out->capforks ? out->capforks * 2 : 16;
		struct regen_fork *g = realloc(out->forks, cap * sizeof(*g));
		struct fork_rec *h = realloc(b->fork_at, cap * sizeof(*h));

		if (g)
			out->forks = g;
		if (h)
			b->fork_at = h;
		if (!g || !h)
			return -PT_ENOMEM;
		out->capforks = cap;
	}
	f = &out->forks[out->nforks];
	memset(f, 0, sizeof(*f));
	f->parent = parent;
	f->child = body[0];
	f->stamp = body[1];
	f->parent_stream = UINT32_MAX;
	b->fork_at[out->nforks++].at = at;
	return 0;
}

/* The fork of the FORK record at index at (b->fork_at ascends). */
static uint32_t fork_of(const struct builder *b, const struct regen_streams *out, size_t at)
{
	uint32_t lo = 0, hi = out->nforks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (b->fork_at[mid].at < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Pass 1: cut every CPU's records into segments and collect loss events and forks. */
static int cut_segments(struct builder *b, struct regen_streams *out)
{
	const struct tr_records *rs = b->rs;
	size_t i = 0;
	int err;

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
				open->nbits = open->nmarkers = open->nenters = 0;
				unowned_run = 0;
				continue;
			}
			if (r->type == PT_REC_COUNTERS || r->type == PT_REC_PATHS) {
				/* profiles' records: counted, not part of a stream */
				out->counters_records++;
				if (open)
					open->end = i + 1;
				continue;
			}
			if (r->type == PT_REC_FORK && open) {
				err = new_fork(b, out, open->owner, body, i);
				if (err)
					return err;
			}
			if (r->type == PT_REC_LOSS)
				out->loss_records++;
			if (!open) {
				/* A MISSED interval is nobody's, wherever it sits. */
				out->unowned_records += !missed_with_interval(r);
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
				unowned_run |= !missed_with_interval(r);
				if (r->type != PT_REC_LOSS)
					continue;
			} else {
				open->end = i + 1;
				seg_count(open, r);
			}
			if (r->type != PT_REC_LOSS || r->arg == PT_LOSS_STATE)
				continue;
			if (missed_with_interval(r)) {
				/*
				 * Whole interrupt executions of (since, until] on
				 * any CPU may be absent; where the record sits
				 * says nothing (pathtrace_abi.h, pt_rec_loss).
				 */
				le = new_loss(b);
				if (!le)
					return -PT_ENOMEM;
				le->cpu = cpu;
				le->kind = PT_LOSS_MISSED;
				le->count = body[0];
				le->lo = body[2];
				le->hi = body[3];
				le->hi_known = 1;
				le->any_cpu = 1;
				continue;
			}
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
			    uint64_t owner, struct boundary_loss *bl)
{
	size_t lo = 0, hi = n, j;

	if (le->has_open_owner || le->any_cpu) {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (s[mid].stamp > le->lo)
				hi = mid;
			else
				lo = mid + 1;
		}
		/*
		 * The owner whose segment was open at the loss has the LOSS
		 * record inline at that segment's end, which covers the
		 * boundary right after it; its later boundaries up to hi can
		 * still hide a dropped segment of its own (it may have run
		 * elsewhere in between), so they are marked like anyone's.
		 */
		if (le->has_open_owner && le->open_owner == owner)
			lo++;
	}
	for (j = lo; j <= n; j++) {
		if (j > 0 && le->hi_known && s[j - 1].stamp >= le->hi)
			break;
		/* The kind shown is one that cuts, if any does. */
		if (!bl[j].set || (le->kind != PT_LOSS_MISSED && !bl[j].cut)) {
			bl[j].set = 1;
			bl[j].kind = le->kind;
			bl[j].cpu = le->cpu;
		}
		bl[j].count += le->count;
		bl[j].cut |= le->kind != PT_LOSS_MISSED;
	}
}

static int affects(const struct loss_event *le, uint64_t owner)
{
	if (le->kind == PT_LOSS_MISSED)
		return is_interrupt_owner_of(owner, le->any_cpu ? PT_OWNER_ID(owner) : le->cpu);
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

/*
 * An ENTER's return address as the module wrote it (its low half; the top
 * half all ones): the return address, or a frame: the innermost traced
 * frame, or a walk that failed (pathtrace_abi.h PT_ENTER_FRAME).
 */
static void enter_value(struct regen_marker *m, uint64_t ret)
{
	uint32_t lo = (uint32_t)ret;

	if (ret >> 32 != 0xffffffffu || !PT_ENTER_IS_FRAME(lo)) {
		m->value = ret;
		return;
	}
	if (lo == PT_ENTER_FRAME_UNKNOWN) {
		m->arg = REGEN_ENTER_FRAME_UNKNOWN;
	} else {
		m->arg = REGEN_ENTER_NESTED;
		m->value = ret | 0x80000000u;
	}
}

static void boundary_marker(struct regen_marker *m, uint64_t pos, const struct boundary_loss *bl)
{
	memset(m, 0, sizeof(*m));
	m->pos = pos;
	/* Skipped hits hide whole executions of interrupt owners only (missed.c). */
	m->type = bl->cut ? REGEN_M_LOSS : REGEN_M_HIDDEN;
	m->arg = bl->cut ? bl->kind : PT_LOSS_MISSED;
	m->cpu = bl->cpu;
	m->value = bl->count;
}

/*
 * A segment's markers in bit order; returns their new end. Those placed by
 * pending bits may lie beyond what the segment wrote: a drop cut the bits
 * short, and a LOSS follows (in the segment or at the owner's next
 * boundary). Such an ENTER or BLOCK happened inside the lost bits: its
 * activation's bits are gone, so it can neither be placed among the bits
 * that remain nor start a regeneration after the gap. It is dropped, as
 * part of the loss. Insertion sort: the markers are in order but for
 * pending ones.
 */
static struct regen_marker *place_pending(struct regen_marker *first, struct regen_marker *end,
					  uint64_t seg_end)
{
	struct regen_marker *p, *q, t;

	for (p = q = first; p < end; p++)
		if (p->pos <= seg_end)
			*q++ = *p;
	end = q;
	for (p = first + 1; p < end; p++) {
		if (p->pos >= p[-1].pos)
			continue;
		t = *p;
		for (q = p; q > first && q[-1].pos > t.pos; q--)
			*q = q[-1];
		*q = t;
	}
	return end;
}

/*
 * A segment's resets [first, end) in place, as place_pending places its
 * ENTERs: one beyond the bits it wrote fell in the lost bits (a LOSS
 * forgets after it anyway), and pending ones come in order but for
 * pending. Returns the new end.
 */
static size_t place_resets(uint64_t *r, size_t first, size_t end, uint64_t seg_end)
{
	size_t i, k, n = first;
	uint64_t t;

	for (i = first; i < end; i++)
		if (r[i] <= seg_end)
			r[n++] = r[i];
	for (i = first + 1; i < n; i++) {
		t = r[i];
		for (k = i; k > first && r[k - 1] > t; k--)
			r[k] = r[k - 1];
		r[k] = t;
	}
	return n;
}

/* Where a forked child's stream begins: before its segment seg, of fork fork. */
struct child_start {
	size_t seg;
	uint32_t fork;
};

static int by_child(const void *a, const void *b, void *forks)
{
	const struct regen_fork *f = forks;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (f[x].child != f[y].child)
		return f[x].child < f[y].child ? -1 : 1;
	if (f[x].stamp != f[y].stamp)
		return f[x].stamp < f[y].stamp ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * The forks whose child is owner (byc: every fork's index sorted by child,
 * then stamp) into cs: each begins the child's stream at its first segment
 * [s, s + n) stamped after the fork (the child runs only after its FORK
 * record is written); one with no such segment recorded nothing of the
 * child. Returns how many.
 */
static uint32_t child_starts(const struct regen_streams *out, const uint32_t *byc,
			     const struct segment *s, size_t n, struct child_start *cs)
{
	uint64_t owner = s[0].owner;
	uint32_t lo = 0, hi = out->nforks, k = 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (out->forks[byc[mid]].child < owner)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < out->nforks && out->forks[byc[lo]].child == owner; lo++) {
		size_t a = 0, z = n;

		while (a < z) {
			size_t mid = a + (z - a) / 2;

			if (s[mid].stamp > out->forks[byc[lo]].stamp)
				z = mid;
			else
				a = mid + 1;
		}
		if (a < n)
			cs[k++] = (struct child_start){ a, byc[lo] };
	}
	return k;
}

/* Pass 3: one owner's bitstring and markers from its segments [s, s + n). */
static int assemble(struct builder *b, const struct regen_streams *out, const struct segment *s,
		    size_t n, const struct boundary_loss *bl, const struct child_start *cs,
		    uint32_t ncs, struct regen_stream *st, uint64_t **bits_out,
		    struct regen_marker **markers_out, uint64_t **segs_out, uint64_t **resets_out)
{
	uint64_t *seg_starts, *resets;
	const struct tr_records *rs = b->rs;
	uint64_t nbits = 0, nmarkers = 0, nenters = 0, pos = 0;
	struct regen_marker *m, *seg_m;
	uint64_t *bits;
	size_t j, i, nresets = 0, seg_resets;
	uint32_t enters, c = 0;

	nmarkers += ncs;
	for (j = 0; j <= n; j++) {
		nmarkers += bl[j].set;
		if (j == n)
			break;
		nbits += s[j].nbits;
		nmarkers += s[j].nmarkers;
		nenters += s[j].nenters;
	}
	if (nbits > MAX_STREAM_BITS || nmarkers > UINT32_MAX || n + nenters > UINT32_MAX)
		return -PT_EOVERFLOW;
	bits = calloc(nbits / 64 + 1, sizeof(*bits));
	m = calloc(nmarkers ? nmarkers : 1, sizeof(*m));
	seg_starts = calloc(n + 1, sizeof(*seg_starts));
	resets = calloc(2 * n + nenters / PT_CTX_SWAP_ENTERS + 1, sizeof(*resets));
	*bits_out = bits;
	*markers_out = m;
	*segs_out = seg_starts;
	*resets_out = resets;
	if (!bits || !m || !seg_starts || !resets)
		return -PT_ENOMEM;
	st->owner = s[0].owner;
	st->bits = bits;
	st->markers = m;
	st->seg_starts = seg_starts;
	st->nseg_starts = (uint32_t)n;
	st->resets = resets;
	st->forks = out->forks;
	st->nforks = out->nforks;
	for (j = 0; j <= n; j++) {
		if (bl[j].set)
			boundary_marker(m++, pos, &bl[j]);
		if (j == n)
			break;
		/* a forked child's stream begins (docs/user.md, "Fork, exec and signals") */
		for (; c < ncs && cs[c].seg == j; c++) {
			marker_at(m, pos, REGEN_M_FORKED, &s[j]);
			m->arg = cs[c].fork;
			m++->value = out->forks[cs[c].fork].parent;
		}
		seg_starts[j] = pos;	/* witness words by context end here */
		resets[nresets++] = pos;	/* and adapting words forget */
		seg_resets = nresets;
		enters = 0;
		seg_m = m;
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
				/* pending: its place among bits its segment writes later */
				marker_at(m, pos + r->pending, REGEN_M_ENTER, &s[j]);
				m->func = r->arg;
				enter_value(m++, body[0]);
				/* adapting words forget at the first, then every PT_CTX_SWAP_ENTERS-th */
				if (enters++ % PT_CTX_SWAP_ENTERS == 0)
					resets[nresets++] = pos + r->pending;
				break;
			case PT_REC_BLOCK:
				marker_at(m, pos + r->pending, REGEN_M_BLOCK, &s[j]);
				m->func = r->arg;
				m++->arg = (uint32_t)body[0];
				break;
			case PT_REC_FORK:
				marker_at(m, pos + r->pending, REGEN_M_FORK, &s[j]);
				m->arg = fork_of(b, out, i);
				m++->value = body[0];
				break;
			case PT_REC_EXEC:
				marker_at(m, pos + r->pending, REGEN_M_EXEC, &s[j]);
				m++->value = body[0];
				break;
			case PT_REC_LOSS:
				if (missed_with_interval(r))
					break;	/* not this owner's: boundaries only */
				marker_at(m, pos, REGEN_M_LOSS, &s[j]);
				m->arg = r->arg;
				m->func = (uint32_t)body[1];
				m++->value = body[0];
				break;
			default:
				break;
			}
		}
		m = place_pending(seg_m, m, pos);
		nresets = place_resets(resets, seg_resets, nresets, pos);
	}
	st->nbits = pos;
	st->nmarkers = m - *markers_out;
	st->nresets = (uint32_t)nresets;
	return 0;
}

int regen_streams_build(const struct tr_records *rs, struct regen_streams *out)
{
	struct builder b = { .rs = rs };
	struct boundary_loss *bl = NULL;
	struct child_start *cs = NULL;
	uint32_t *byc = NULL, f;
	size_t i, j, nstreams = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (rs->n) {
		b.order = malloc(rs->n * sizeof(*b.order));
		if (!b.order)
			return -PT_ENOMEM;
	}
	err = order_by_cpu(rs, b.order);
	if (!err)
		err = cut_segments(&b, out);
	if (err)
		goto out;
	err = sort_segments(&b);
	if (err)
		goto out;
	for (i = 0; i < b.nsegs; i++)
		if (i == 0 || b.segs[i].owner != b.segs[i - 1].owner)
			nstreams++;
	out->streams = calloc(nstreams ? nstreams : 1, sizeof(*out->streams));
	out->bits_store = calloc(nstreams ? nstreams : 1, sizeof(*out->bits_store));
	out->marker_store = calloc(nstreams ? nstreams : 1, sizeof(*out->marker_store));
	out->seg_store = calloc(nstreams ? nstreams : 1, sizeof(*out->seg_store));
	out->reset_store = calloc(nstreams ? nstreams : 1, sizeof(*out->reset_store));
	bl = calloc(b.nsegs + 1, sizeof(*bl));
	byc = malloc((out->nforks ? out->nforks : 1) * sizeof(*byc));
	cs = malloc((out->nforks ? out->nforks : 1) * sizeof(*cs));
	if (!out->streams || !out->bits_store || !out->marker_store || !out->seg_store ||
	    !out->reset_store || !bl || !byc || !cs) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (f = 0; f < out->nforks; f++)
		byc[f] = f;
	qsort_r(byc, out->nforks, sizeof(*byc), by_child, out->forks);
	for (i = 0; i < b.nsegs; i = j) {
		size_t n, k;
		uint32_t ncs;

		for (j = i; j < b.nsegs && b.segs[j].owner == b.segs[i].owner; j++)
			;
		n = j - i;
		memset(bl, 0, (n + 1) * sizeof(*bl));
		for (k = 0; k < b.nlosses; k++)
			if (affects(&b.losses[k], b.segs[i].owner))
				mark_boundaries(&b.segs[i], n, &b.losses[k], b.segs[i].owner, bl);
		ncs = child_starts(out, byc, &b.segs[i], n, cs);
		err = assemble(&b, out, &b.segs[i], n, bl, cs, ncs, &out->streams[out->nstreams],
			       &out->bits_store[out->nstreams], &out->marker_store[out->nstreams],
			       &out->seg_store[out->nstreams], &out->reset_store[out->nstreams]);
		out->nstreams++;
		if (err)
			goto out;
	}
	/* which stream each fork's parent is */
	for (f = 0; f < out->nforks; f++) {
		const struct regen_stream *ps = regen_streams_find(out, out->forks[f].parent);

		out->forks[f].parent_stream = ps ? (uint32_t)(ps - out->streams) : UINT32_MAX;
	}
out:
	free(byc);
	free(cs);
	free(b.fork_at);
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
		if (s->seg_store)
			free(s->seg_store[i]);
		if (s->reset_store)
			free(s->reset_store[i]);
	}
	free(s->bits_store);
	free(s->marker_store);
	free(s->seg_store);
	free(s->reset_store);
	free(s->streams);
	for (i = 0; i < s->nforks; i++)
		free(s->forks[i].frames);
	free(s->forks);
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
