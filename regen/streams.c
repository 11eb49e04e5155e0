// SPDX-License-Identifier: GPL-2.0
/*
 * streams - per-owner stream assembly from decoded ring-buffer records
 * (docs/runtime.md; the rules are in streams.h and FORMAT.md).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <pathtrace/error.h>
#include <pathtrace/prefault.h>

#include "streams.h"

#define STAMP_MIN 0
#define STAMP_MAX UINT64_MAX
#define MAX_STREAM_BITS (1ull << 40)
/* Markers of a store copied into a stream before their memory is released. */
#define CHUNK_MARKERS 16384u
/*
 * The pages an array is appended to are made present ahead of the appends
 * (pt_prefault; docs/pathregen.md, "Pages made present before they are
 * written"), an eighth of what it holds at a time and at least this many
 * bytes, within its capacity: what is made present stays resident whether
 * written or not.
 */
#define READY_RUN (64u << 10)
/* Fewer bytes are left to fault in: a few faults cost no more than the call. */
#define READY_MIN (16u << 10)

/*
 * A segment: an owner's stretch on one CPU, from its OWNER record to the
 * CPU's next OWNER or a loss that ends it. Its bits, markers and resets are
 * cut into its (owner, CPU) store as its records arrive, positions counted
 * in that store.
 */
struct segment {
	uint64_t owner;
	uint64_t stamp;
	uint64_t bit0, bit1;	/* its bits in the store */
	uint32_t cpu;
	uint32_t seq;		/* creation order: ties in stamp keep recording order */
	uint32_t store;		/* its (owner, CPU) store */
	/*
	 * Its markers there, and its resets after the one at its start (r0 -
	 * 1): a store holds fewer than 2^32 of each (more would overflow its
	 * stream).
	 */
	uint32_t m0, m1;
	uint32_t r0, r1;
};

/* A page holds whole segments: a merge moves pages of them (segs_move_in). */
_Static_assert((sizeof(struct segment) & (sizeof(struct segment) - 1)) == 0,
	       "a segment's size divides a page's");

/* Slots [at, at + n) of a builder's segs that hold no segment. */
struct seg_gap {
	size_t at, n;
};

/* One owner's segments in order: segs[ix[0]], segs[ix[1]], ... */
struct seg_view {
	const struct segment *segs;
	const uint32_t *ix;
};

#define SEG(v, j) ((v).segs[(v).ix[j]])

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

/*
 * A LOSS record's kind (enum pt_loss, TR_LOSS_CORRUPT), as a marker's arg
 * holds it: one no marker can hold is no known kind, corrupt or unknown.
 */
static uint32_t loss_kind(const struct tr_rec *r)
{
	return r->arg < REGEN_MARKER_ARG_LIMIT ? r->arg : TR_LOSS_CORRUPT;
}

/* A loss to be marked between an owner's segments j-1 and j (j = nsegs: at the end). */
struct boundary_loss {
	uint32_t kind;
	uint32_t cpu;
	uint64_t count;
	int set;
	int cut;		/* a loss other than MISSED: it may cut an activation */
};


/* What one owner recorded on one CPU, its segments one after another. */
struct store {
	uint64_t owner;
	uint32_t cpu;
	uint64_t *bits;		/* capw words, zero beyond nbits */
	uint64_t nbits;
	size_t capw;
	struct regen_marker *markers;
	size_t nmarkers, capm, readym;	/* ready*: made present (reserve) */
	uint64_t *resets;
	size_t nresets, capr, readyr;
	uint32_t *left;		/* per CHUNK_MARKERS markers: not yet copied (copies only) */
};

/* A CPU as the cutter stands on it. */
struct cpu_cut {
	uint32_t cpu;
	int open;		/* segment seg is open */
	size_t seg;
	uint32_t enters;	/* its ENTERs so far (adapting words forget at some) */
	size_t first_pending;	/* its losses from here may wait for hi */
	int unowned_run;
};

struct regen_streams_builder {
	/*
	 * In creation order, whole pages of their own (segs_grow): a merge
	 * moves another builder's pages in after them, past a gap that ends
	 * their last page (gaps: slots that hold no segment).
	 */
	struct segment *segs;
	size_t nsegs, capsegs, readysegs;
	struct seg_gap *gaps;
	size_t ngaps, capgaps;
	int segs_moved;			/* pages moved in: segs is several mappings */
	uint32_t *order;		/* segs by owner (group_segments), then stamp (sort_runs) */
	size_t *first;			/* per owner: its first in order; [nowners]: all (no gap) */
	size_t nowners;
	struct loss_event *losses;
	size_t nlosses, caplosses;
	struct store *stores;
	uint32_t nstores, capstores;
	uint32_t *store_hash;	/* store index + 1, open addressing by (owner, CPU) */
	uint32_t hash_cap;
	struct cpu_cut *cpus;
	uint32_t ncpus, capcpus, last_cpu;
	struct regen_fork *forks;
	uint32_t *fork_cpu;	/* per fork: its CPU */
	uint32_t nforks, capforks;
	uint64_t unowned_records, unowned_bits, counters_records, loss_records;
	int err;		/* the first error: the rest is not cut */
	unsigned int jobs;	/* threads assembling the streams at the end */
};

/* The pages of [p, p + n) made present (pt_prefault), if n is worth a call. */
static void prefault(void *p, size_t n)
{
	if (n >= READY_MIN)
		pt_prefault(p, n);
}

/*
 * The elements after the used ones of p (cap of size bytes) made present
 * (prefault) before they are written, a run of an eighth of the used ones,
 * at least READY_RUN bytes. Returns the elements present from now.
 */
static size_t ready_ahead(void *p, size_t cap, size_t used, size_t size)
{
	size_t run = used / 8 > READY_RUN / size ? used / 8 : READY_RUN / size;
	size_t ready = cap - used < run ? cap : used + run;

	prefault((char *)p + used * size, (ready - used) * size);
	return ready;
}

/*
 * Room for n more of size bytes in *p (cap in elements). With ready (the
 * elements of *p known to be present), the pages of the ones after the
 * used ones are made present before they are written, a run at a time
 * (ready_ahead). Returns 0 or -PT_ENOMEM.
 */
static int reserve(void **p, size_t *cap, size_t *ready, size_t used, size_t n, size_t size)
{
	size_t want = used + n, c = *cap ? *cap : 16;
	void *g;

	if (want <= *cap && (!ready || want <= *ready))
		return 0;
	if (want > *cap) {
		while (c < want)
			c *= 2;
		g = realloc(*p, c * size);
		if (!g)
			return -PT_ENOMEM;
		*p = g;
		*cap = c;
		if (ready)
			*ready = used;	/* the used ones were copied or moved */
	}
	if (ready)
		*ready = ready_ahead(*p, *cap, used, size);
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
 * b->order: b->segs by owner, each owner's in creation order from
 * b->first[owner] (owners by number, through a hash table: few distinct);
 * sort_runs then puts each owner's in order (assemble_stream, on the
 * thread that assembles it). Returns 0 or -PT_ENOMEM.
 */
static int group_segments(struct regen_streams_builder *b)
{
	size_t n = b->nsegs, cap = 16, i, g = 0, nown = 0;
	struct owner_slot *slots;
	struct owner_rank *ranks = NULL;
	uint32_t *sid = NULL, *rank = NULL, *idx = NULL;
	size_t *start = NULL;
	int err = -PT_ENOMEM;

	if (n < 2) {
		b->order = calloc(n + 1, sizeof(*b->order));
		b->first = calloc(2, sizeof(*b->first));
		b->nowners = n;
		if (b->first)
			b->first[1] = n;
		return b->order && b->first ? 0 : -PT_ENOMEM;
	}
	/* every owner has a store: they bound the owners */
	while (cap < 2 * (size_t)b->nstores)
		cap *= 2;
	slots = calloc(cap, sizeof(*slots));
	sid = malloc(n * sizeof(*sid));
	idx = malloc(n * sizeof(*idx));
	if (!slots || !sid || !idx)
		goto out;
	prefault(sid, n * sizeof(*sid));
	prefault(idx, n * sizeof(*idx));
	for (i = 0; i < n; i++) {
		uint64_t o;
		size_t h;

		if (g < b->ngaps && i == b->gaps[g].at) {
			/* no segment: in no owner's order */
			for (; i < b->gaps[g].at + b->gaps[g].n; i++)
				sid[i] = UINT32_MAX;
			i--;
			g++;
			continue;
		}
		o = b->segs[i].owner;
		h = (size_t)((o * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
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
		if (sid[i] != UINT32_MAX)
			start[rank[sid[i]] + 1]++;
	for (i = 0; i < nown; i++)
		start[i + 1] += start[i];
	/* Scatter in creation order: each owner's segments stay in (CPU, position) order. */
	for (i = 0; i < n; i++)
		if (sid[i] != UINT32_MAX)
			idx[start[rank[sid[i]]]++] = i;
	for (i = nown; i > 0; i--)
		start[i] = start[i - 1];
	start[0] = 0;
	/* the order, not the segments, moves: they are read through it */
	b->order = idx;
	b->first = start;
	b->nowners = nown;
	idx = NULL;
	start = NULL;
	err = 0;
out:
	free(slots);
	free(ranks);
	free(sid);
	free(rank);
	free(start);
	free(idx);
	return err;
}

/* The whole pages that n segments take. */
static size_t segs_bytes(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (n * sizeof(struct segment) + page - 1) / page * page;
}

/*
 * Room for want segments in b->segs: a mapping of its own, grown by
 * mremap (no copy), or, once pages were moved in (several mappings, which
 * mremap cannot take together), copied into a new one. Returns 0 or
 * -PT_ENOMEM.
 */
static int segs_grow(struct regen_streams_builder *b, size_t want)
{
	size_t cap = b->capsegs ? b->capsegs : 64, old = segs_bytes(b->capsegs), bytes;
	void *p;

	if (want <= b->capsegs)
		return 0;
	while (cap < want)
		cap *= 2;
	bytes = segs_bytes(cap);
	if (b->segs && !b->segs_moved) {
		p = mremap(b->segs, old, bytes, MREMAP_MAYMOVE);
	} else {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED && b->segs) {
			prefault(p, b->nsegs * sizeof(*b->segs));
			memcpy(p, b->segs, b->nsegs * sizeof(*b->segs));
			munmap(b->segs, old);
			b->segs_moved = 0;
		}
	}
	if (p == MAP_FAILED)
		return -PT_ENOMEM;
	b->segs = p;
	b->capsegs = bytes / sizeof(*b->segs);
	return 0;
}

static struct segment *new_segment(struct regen_streams_builder *b)
{
	if (segs_grow(b, b->nsegs + 1))
		return NULL;
	if (b->nsegs >= b->readysegs)
		b->readysegs = ready_ahead(b->segs, b->capsegs, b->nsegs, sizeof(*b->segs));
	return &b->segs[b->nsegs++];
}

static struct loss_event *new_loss(struct regen_streams_builder *b)
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

/*
 * Marks, in one owner's segments [s, s + n), the boundaries where a loss
 * event may hide a segment: a hidden segment's stamp lies strictly between
 * lo (the segment open at the loss) and hi (the next OWNER on that CPU), so
 * boundary j (between segments j-1 and j; j = 0 before the first, j = n
 * after the last) is hit when stamp[j-1] < hi and stamp[j] > lo.
 */
static void mark_boundaries(struct seg_view s, size_t n, const struct loss_event *le,
			    uint64_t owner, struct boundary_loss *bl)
{
	size_t lo = 0, hi = n, j;

	if (le->has_open_owner || le->any_cpu) {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (SEG(s, mid).stamp > le->lo)
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
		if (j > 0 && le->hi_known && SEG(s, j - 1).stamp >= le->hi)
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

static void marker_at(struct regen_marker *m, uint64_t pos, uint32_t type)
{
	memset(m, 0, sizeof(*m));
	m->pos = pos;
	m->type = type;
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
			     struct seg_view s, size_t n, struct child_start *cs)
{
	uint64_t owner = SEG(s, 0).owner;
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

			if (SEG(s, mid).stamp > out->forks[byc[lo]].stamp)
				z = mid;
			else
				a = mid + 1;
		}
		if (a < n)
			cs[k++] = (struct child_start){ a, byc[lo] };
	}
	return k;
}


static size_t store_hash(uint64_t owner, uint32_t cpu, uint32_t cap)
{
	return (size_t)(((owner ^ ((uint64_t)cpu << 48)) * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* b's table of stores, of room for twice n of them. Returns 0 or -PT_ENOMEM. */
static int store_table(struct regen_streams_builder *b, size_t n)
{
	uint32_t ncap = b->hash_cap ? b->hash_cap : 64, *t;
	size_t h, i;

	while (ncap < 2 * n)
		ncap *= 2;
	t = calloc(ncap, sizeof(*t));
	if (!t)
		return -PT_ENOMEM;
	for (i = 0; i < b->nstores; i++) {
		h = store_hash(b->stores[i].owner, b->stores[i].cpu, ncap);
		while (t[h])
			h = (h + 1) & (ncap - 1);
		t[h] = (uint32_t)i + 1;
	}
	free(b->store_hash);
	b->store_hash = t;
	b->hash_cap = ncap;
	return 0;
}

/* The store of (owner, cpu), made at its first segment; UINT32_MAX without memory. */
static uint32_t store_of(struct regen_streams_builder *b, uint64_t owner, uint32_t cpu)
{
	struct store *st;
	size_t h, cap;

	if (2 * (b->nstores + 1) > b->hash_cap && store_table(b, b->nstores + 1))
		return UINT32_MAX;
	h = store_hash(owner, cpu, b->hash_cap);
	for (; b->store_hash[h]; h = (h + 1) & (b->hash_cap - 1)) {
		st = &b->stores[b->store_hash[h] - 1];
		if (st->owner == owner && st->cpu == cpu)
			return b->store_hash[h] - 1;
	}
	cap = b->capstores;
	if (b->nstores == UINT32_MAX - 1 ||
	    reserve((void **)&b->stores, &cap, NULL, b->nstores, 1, sizeof(*b->stores)))
		return UINT32_MAX;
	b->capstores = (uint32_t)cap;
	st = &b->stores[b->nstores];
	memset(st, 0, sizeof(*st));
	st->owner = owner;
	st->cpu = cpu;
	/* never NULL: a stream of no bits, markers or resets still points somewhere */
	st->bits = calloc(2, sizeof(*st->bits));
	st->capw = 2;
	st->markers = malloc(sizeof(*st->markers));
	st->capm = 1;
	st->resets = malloc(4 * sizeof(*st->resets));
	st->capr = 4;
	if (!st->bits || !st->markers || !st->resets) {
		free(st->bits);
		free(st->markers);
		free(st->resets);
		return UINT32_MAX;
	}
	b->store_hash[h] = b->nstores + 1;
	return b->nstores++;
}

/* Where the cutter stands on cpu; NULL without memory. */
static struct cpu_cut *cpu_cut(struct regen_streams_builder *b, uint32_t cpu)
{
	size_t cap = b->capcpus;
	uint32_t i;

	if (b->last_cpu < b->ncpus && b->cpus[b->last_cpu].cpu == cpu)
		return &b->cpus[b->last_cpu];
	for (i = 0; i < b->ncpus; i++)
		if (b->cpus[i].cpu == cpu) {
			b->last_cpu = i;
			return &b->cpus[i];
		}
	if (reserve((void **)&b->cpus, &cap, NULL, b->ncpus, 1, sizeof(*b->cpus)))
		return NULL;
	b->capcpus = (uint32_t)cap;
	memset(&b->cpus[b->ncpus], 0, sizeof(b->cpus[0]));
	b->cpus[b->ncpus].cpu = cpu;
	b->last_cpu = b->ncpus;
	return &b->cpus[b->ncpus++];
}

/*
 * A marker of sg at pos in its store: a zeroed slot to fill, or NULL
 * without memory. Where it was recorded is sg's (struct regen_where).
 */
static struct regen_marker *new_marker(struct regen_streams_builder *b, const struct segment *sg,
				       uint64_t pos, uint32_t type)
{
	struct store *st = &b->stores[sg->store];
	struct regen_marker *m;

	if (reserve((void **)&st->markers, &st->capm, &st->readym, st->nmarkers, 1,
		    sizeof(*st->markers)))
		return NULL;
	m = &st->markers[st->nmarkers++];
	marker_at(m, pos, type);
	return m;
}

static int new_reset(struct store *st, uint64_t pos)
{
	if (reserve((void **)&st->resets, &st->capr, &st->readyr, st->nresets, 1,
		    sizeof(*st->resets)))
		return -PT_ENOMEM;
	st->resets[st->nresets++] = pos;
	return 0;
}

/* nbits bits of src appended to st's bits. */
static int add_bits(struct store *st, const uint64_t *src, uint32_t nbits)
{
	size_t need = (st->nbits + nbits) / 64 + 2, old = st->capw;

	if (reserve((void **)&st->bits, &st->capw, NULL, need, 0, sizeof(*st->bits)))
		return -PT_ENOMEM;
	/* zeroed whole: present in one call, not a fault a page */
	prefault(st->bits + old, (st->capw - old) * sizeof(*st->bits));
	memset(st->bits + old, 0, (st->capw - old) * sizeof(*st->bits));
	put_bits(st->bits, st->nbits, src, nbits);
	st->nbits += nbits;
	return 0;
}

/* A FORK record (body: child, stamp) of parent's open segment on cpu. */
static int new_fork(struct regen_streams_builder *b, uint64_t parent, uint32_t cpu,
		    const uint64_t *body)
{
	struct regen_fork *f;

	/* a FORK marker's arg is the fork's index */
	if (b->nforks >= REGEN_MARKER_ARG_LIMIT - 1)
		return -PT_EOVERFLOW;
	if (b->nforks == b->capforks) {
		uint32_t cap = b->capforks ? b->capforks * 2 : 16;
		struct regen_fork *g = realloc(b->forks, cap * sizeof(*g));
		uint32_t *h = realloc(b->fork_cpu, cap * sizeof(*h));

		if (g)
			b->forks = g;
		if (h)
			b->fork_cpu = h;
		if (!g || !h)
			return -PT_ENOMEM;
		b->capforks = cap;
	}
	f = &b->forks[b->nforks];
	memset(f, 0, sizeof(*f));
	f->parent = parent;
	f->child = body[0];
	f->stamp = body[1];
	f->parent_stream = UINT32_MAX;
	b->fork_cpu[b->nforks++] = cpu;
	return 0;
}

/*
 * Segment seg is over: its markers and resets placed in bit order
 * (place_pending, place_resets), its bits end where its store's do.
 */
static void close_segment(struct regen_streams_builder *b, size_t seg)
{
	struct segment *sg = &b->segs[seg];
	struct store *st = &b->stores[sg->store];

	st->nmarkers = place_pending(st->markers + sg->m0, st->markers + st->nmarkers, st->nbits) -
		       st->markers;
	st->nresets = place_resets(st->resets, sg->r0, st->nresets, st->nbits);
	sg->m1 = (uint32_t)st->nmarkers;
	sg->r1 = (uint32_t)st->nresets;
	sg->bit1 = st->nbits;
}

/* cpu's OWNER record (body: owner, stamp) opens a segment. */
static int open_segment(struct regen_streams_builder *b, struct cpu_cut *c, const uint64_t *body)
{
	uint32_t si = store_of(b, body[0], c->cpu);
	struct segment *sg;
	struct store *st;

	if (si == UINT32_MAX || !new_segment(b))
		return -PT_ENOMEM;
	st = &b->stores[si];
	if (b->nsegs > UINT32_MAX || st->nresets >= UINT32_MAX)
		return -PT_EOVERFLOW;
	if (new_reset(st, st->nbits))	/* adapting words forget */
		return -PT_ENOMEM;
	sg = &b->segs[b->nsegs - 1];
	memset(sg, 0, sizeof(*sg));
	sg->owner = body[0];
	sg->stamp = body[1];
	sg->cpu = c->cpu;
	sg->seq = (uint32_t)(b->nsegs - 1);
	sg->store = si;
	sg->bit0 = sg->bit1 = st->nbits;
	sg->m0 = sg->m1 = (uint32_t)st->nmarkers;
	sg->r0 = sg->r1 = (uint32_t)st->nresets;
	c->open = 1;
	c->enters = 0;
	c->seg = b->nsegs - 1;
	return 0;
}

/* Record r (body body) of the open segment sg of c into its store. */
static int cut_record(struct regen_streams_builder *b, struct cpu_cut *c, struct segment *sg,
		      const struct tr_rec *r, const uint64_t *body)
{
	struct store *st = &b->stores[sg->store];
	uint64_t pos = st->nbits;
	struct regen_marker *m = NULL;

	/* a store of 2^32 markers or resets is a stream that has too many */
	if (st->nmarkers >= UINT32_MAX || st->nresets >= UINT32_MAX)
		return -PT_EOVERFLOW;
	switch (r->type) {
	case PT_REC_BITS:
		if (r->arg != PT_BITS_PARTIAL)
			return add_bits(st, body, r->arg);
		m = new_marker(b, sg, pos, REGEN_M_PARTIAL);
		if (m)
			m->value = body[0];
		break;
	case PT_REC_ENTER:
		/* pending: its place among bits its segment writes later */
		m = new_marker(b, sg, pos + r->pending, REGEN_M_ENTER);
		if (!m)
			break;
		m->func = r->arg;
		enter_value(m, body[0]);
		/* adapting words forget at the first, then every PT_CTX_SWAP_ENTERS-th */
		if (c->enters++ % PT_CTX_SWAP_ENTERS == 0)
			return new_reset(st, pos + r->pending);
		break;
	case PT_REC_BLOCK:
		/* no function has 2^24 blocks: a record that says so is no block's */
		if ((uint32_t)body[0] >= REGEN_MARKER_ARG_LIMIT)
			return -PT_EFORMAT;
		m = new_marker(b, sg, pos + r->pending, REGEN_M_BLOCK);
		if (m) {
			m->func = r->arg;
			m->arg = (uint32_t)body[0];
		}
		break;
	case PT_REC_FORK:
		m = new_marker(b, sg, pos + r->pending, REGEN_M_FORK);
		if (m) {
			m->arg = b->nforks - 1;	/* the fork just made of it */
			m->value = body[0];
		}
		break;
	case PT_REC_EXEC:
		m = new_marker(b, sg, pos + r->pending, REGEN_M_EXEC);
		if (m)
			m->value = body[0];
		break;
	case PT_REC_LOSS:
		if (missed_with_interval(r))
			return 0;	/* not this owner's: boundaries only */
		m = new_marker(b, sg, pos, REGEN_M_LOSS);
		if (m) {
			m->arg = loss_kind(r);
			m->func = (uint32_t)body[1];
			m->value = body[0];
		}
		break;
	default:
		return 0;
	}
	return m ? 0 : -PT_ENOMEM;
}

/* One record, after every earlier record of its CPU. */
static int take(struct regen_streams_builder *b, const struct tr_records *rs, const struct tr_rec *r)
{
	const uint64_t *body = tr_body(rs, r);
	struct cpu_cut *c = cpu_cut(b, r->cpu);
	struct segment *open;
	struct loss_event *le;
	uint32_t cpu = r->cpu;
	size_t k;
	int err;

	if (!c)
		return -PT_ENOMEM;
	if (r->type == PT_REC_OWNER) {
		if (c->open)
			close_segment(b, c->seg);
		for (k = c->first_pending; k < b->nlosses; k++)
			if (b->losses[k].cpu == cpu && !b->losses[k].hi_known) {
				b->losses[k].hi = body[1];
				b->losses[k].hi_known = 1;
			}
		c->first_pending = b->nlosses;
		c->unowned_run = 0;
		return open_segment(b, c, body);
	}
	if (r->type == PT_REC_COUNTERS || r->type == PT_REC_PATHS) {
		/* profiles' records: counted, not part of a stream */
		b->counters_records++;
		return 0;
	}
	open = c->open ? &b->segs[c->seg] : NULL;
	if (r->type == PT_REC_FORK && open) {
		err = new_fork(b, open->owner, cpu, body);
		if (err)
			return err;
	}
	if (r->type == PT_REC_LOSS)
		b->loss_records++;
	if (!open) {
		/* A MISSED interval is nobody's, wherever it sits. */
		b->unowned_records += !missed_with_interval(r);
		if (r->type == PT_REC_BITS && r->arg != PT_BITS_PARTIAL)
			b->unowned_bits += r->arg;
		/* A run of unowned records is itself a loss of unknown owner. */
		if (!c->unowned_run && r->type != PT_REC_LOSS) {
			le = new_loss(b);
			if (!le)
				return -PT_ENOMEM;
			le->cpu = cpu;
			le->kind = TR_LOSS_CORRUPT;
			le->count = 1;
			le->lo = STAMP_MIN;
			le->hi = STAMP_MAX;
		}
		c->unowned_run |= !missed_with_interval(r);
		if (r->type != PT_REC_LOSS)
			return 0;
	} else {
		err = cut_record(b, c, open, r, body);
		if (err)
			return err;
	}
	if (r->type != PT_REC_LOSS || r->arg == PT_LOSS_STATE)
		return 0;
	le = new_loss(b);
	if (!le)
		return -PT_ENOMEM;
	le->cpu = cpu;
	if (missed_with_interval(r)) {
		/*
		 * Whole interrupt executions of (since, until] on any CPU may
		 * be absent; where the record sits says nothing
		 * (pathtrace_abi.h, pt_rec_loss).
		 */
		le->kind = PT_LOSS_MISSED;
		le->count = body[0];
		le->lo = body[2];
		le->hi = body[3];
		le->hi_known = 1;
		le->any_cpu = 1;
		return 0;
	}
	/* OVERRUN, MISSED or CORRUPT: other owners may have lost segments. */
	le->kind = loss_kind(r);
	le->count = body[0];
	le->lo = open ? open->stamp : STAMP_MIN;
	le->hi = STAMP_MAX;
	le->has_open_owner = open != NULL;
	le->open_owner = open ? open->owner : 0;
	if (r->arg != PT_LOSS_MISSED) {
		/* Records up to the next OWNER cannot be attributed. */
		if (open)
			close_segment(b, c->seg);
		c->open = 0;
		c->unowned_run = 1;
	}
	return 0;
}

int regen_streams_begin(struct regen_streams_builder **b, unsigned int jobs)
{
	*b = calloc(1, sizeof(**b));
	if (!*b)
		return -PT_ENOMEM;
	(*b)->jobs = jobs;
	return 0;
}

int regen_streams_add(struct regen_streams_builder *b, const struct tr_records *rs, size_t first,
		      size_t n)
{
	size_t i;

	for (i = first; !b->err && i < first + n; i++)
		b->err = take(b, rs, &rs->recs[i]);
	return b->err;
}

/* n bits of src from bit spos to dst from bit dpos (dst zero there; src one word beyond). */
static void copy_bits(uint64_t *dst, uint64_t dpos, const uint64_t *src, uint64_t spos, uint64_t n)
{
	uint64_t done, v;

	for (done = 0; done < n; done += 64) {
		uint64_t p = spos + done;
		uint32_t sh = p % 64;

		v = src[p / 64] >> sh;
		if (sh)
			v |= src[p / 64 + 1] << (64 - sh);
		put_bits(dst, dpos + done, &v, n - done < 64 ? (uint32_t)(n - done) : 64);
	}
}

static void store_free(struct store *st)
{
	free(st->bits);
	free(st->markers);
	free(st->resets);
	free(st->left);
	memset(st, 0, sizeof(*st));	/* nothing of it is read again */
}

/*
 * Markers [m0, m1) of st are in their stream now: each CHUNK_MARKERS of
 * them all copied leave resident memory (the whole pages among them; their
 * bytes are never read again, and free comes after). Only memory: without
 * room to count, nothing is released.
 */
static void copied(struct store *st, size_t m0, size_t m1)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;
	size_t c, n = st->nmarkers / CHUNK_MARKERS + 1, end;

	if (!st->left) {
		st->left = malloc(n * sizeof(*st->left));
		if (!st->left)
			return;
		for (c = 0; c < n; c++)
			st->left[c] = (uint32_t)(st->nmarkers - c * CHUNK_MARKERS < CHUNK_MARKERS ?
						 st->nmarkers - c * CHUNK_MARKERS : CHUNK_MARKERS);
	}
	for (; m0 < m1; m0 = end) {
		c = m0 / CHUNK_MARKERS;
		end = (c + 1) * CHUNK_MARKERS < m1 ? (c + 1) * CHUNK_MARKERS : m1;
		st->left[c] -= (uint32_t)(end - m0);
		if (st->left[c] || page & (page - 1))
			continue;
		lo = ((uintptr_t)(st->markers + c * CHUNK_MARKERS) + page - 1) & ~(page - 1);
		/* the chunk's own markers only: the last may be short */
		hi = (uintptr_t)(st->markers + ((c + 1) * CHUNK_MARKERS < st->nmarkers ?
						(c + 1) * CHUNK_MARKERS : st->nmarkers)) & ~(page - 1);
		if (hi > lo)
			madvise((void *)lo, hi - lo, MADV_DONTNEED);
	}
}

/*
 * The store of the owner's (own[0, nown)) whose marker array its stream's
 * can be, merged into from the end (place_markers): the one with most
 * markers, when its segments come in the stream [s, s + n) in the order
 * they have in it, so that each of its markers only moves up. Else NULL.
 */
static struct store *merge_into(struct regen_streams_builder *b, struct seg_view s, size_t n,
				const uint32_t *own, uint32_t nown)
{
	struct store *d = &b->stores[own[0]];
	uint32_t c, end = 0;
	size_t j;

	for (c = 1; c < nown; c++)
		if (b->stores[own[c]].nmarkers > d->nmarkers)
			d = &b->stores[own[c]];
	if (!d->nmarkers)
		return NULL;
	for (j = 0; j < n; j++) {
		if (&b->stores[SEG(s, j).store] != d || SEG(s, j).m1 == SEG(s, j).m0)
			continue;
		if (SEG(s, j).m0 < end)
			return NULL;
		end = SEG(s, j).m1;
	}
	return d;
}

/*
 * The stream's nmarkers markers into m, from the last to the first: each
 * segment's (its stores' positions moved to the stream's, seg_starts), a
 * forked child's start before them and a loss at a boundary before that,
 * as assemble lays them out; end is the stream's last position. When m is
 * the array of store into (merge_into), its own markers move up within it
 * before anything is written where they were.
 */
static void place_markers(struct regen_streams_builder *b, const struct regen_streams *out,
			  struct seg_view s, size_t n, const struct boundary_loss *bl,
			  const struct child_start *cs, uint32_t ncs, const uint64_t *seg_starts,
			  uint64_t end, const struct store *into, struct regen_marker *m,
			  size_t nmarkers)
{
	size_t j = n + 1, k = nmarkers, i, len;
	uint32_t c = ncs;

	while (j--) {
		uint64_t pos = j < n ? seg_starts[j] : end;

		if (j < n) {
			struct store *from = &b->stores[SEG(s, j).store];

			len = SEG(s, j).m1 - SEG(s, j).m0;
			k -= len;
			memmove(m + k, from->markers + SEG(s, j).m0, len * sizeof(*m));
			for (i = k; i < k + len; i++)
				m[i].pos += pos - SEG(s, j).bit0;
			if (from != into)
				copied(from, SEG(s, j).m0, SEG(s, j).m1);
			/* a forked child's stream begins (docs/user.md, "Fork, exec and signals") */
			for (; c > 0 && cs[c - 1].seg == j; c--) {
				marker_at(&m[--k], pos, REGEN_M_FORKED);
				m[k].arg = cs[c - 1].fork;
				m[k].value = out->forks[cs[c - 1].fork].parent;
			}
		}
		if (bl && bl[j].set)
			boundary_marker(&m[--k], pos, &bl[j]);
	}
}

/*
 * One owner's stream from its segments [s, s + n) (sorted), the losses at
 * their boundaries bl (NULL: none) and the forked children's starts cs: its own store's
 * arrays when it has one store, in order, and nothing to insert; else a
 * copy in order (the markers merged into one store's array when
 * merge_into finds one, fewer pages written fresh), and its stores
 * (own[0, nown): every one of the owner's) freed. Its sizes are its
 * stores': a store holds its owner's segments on
 * one CPU one after another, each segment's bits, markers and resets (its
 * first one at its start) and nothing else.
 */
static int assemble(struct regen_streams_builder *b, const struct regen_streams *out,
		    struct seg_view s, size_t n, const struct boundary_loss *bl,
		    const struct child_start *cs, uint32_t ncs, const uint32_t *own, uint32_t nown,
		    struct regen_stream *st, uint64_t **bits_out, struct regen_marker **markers_out,
		    uint64_t **segs_out, uint64_t **resets_out, struct regen_where **where_out)
{
	uint64_t nbits = 0, nmarkers = ncs, nresets = 0, pos = 0, *bits, *seg_starts, *resets;
	struct store *one = &b->stores[own[0]], *into;
	struct regen_marker *m;
	struct regen_where *where;
	size_t j, k, nr = 0, mi = 0;
	uint32_t c = 0, nw = 0;
	int in_place = !ncs && nown == 1;

	for (j = 0; bl && j <= n; j++) {
		nmarkers += bl[j].set;
		in_place &= !bl[j].set;
	}
	for (c = 0; c < nown; c++) {
		nbits += b->stores[own[c]].nbits;
		nmarkers += b->stores[own[c]].nmarkers;
		nresets += b->stores[own[c]].nresets;
	}
	c = 0;
	/* one store: the stream when its segments are in recording order */
	for (j = 1; in_place && j < n; j++)
		in_place = SEG(s, j).seq > SEG(s, j - 1).seq;
	if (nbits > MAX_STREAM_BITS || nmarkers > UINT32_MAX || nresets > UINT32_MAX)
		return -PT_EOVERFLOW;
	seg_starts = calloc(n + 1, sizeof(*seg_starts));
	*segs_out = seg_starts;
	/* a run a segment, and one a loss between two */
	where = calloc(2 * n + 1, sizeof(*where));
	*where_out = where;
	if (!seg_starts || !where)
		return -PT_ENOMEM;
	/* each written whole (where: a run a segment at most, as a rule) */
	prefault(seg_starts, (n + 1) * sizeof(*seg_starts));
	prefault(where, (n + 1) * sizeof(*where));
	st->owner = SEG(s, 0).owner;
	st->where = where;
	st->seg_starts = seg_starts;
	st->nseg_starts = (uint32_t)n;
	st->forks = out->forks;
	st->nforks = out->nforks;
	st->nbits = nbits;
	st->nmarkers = (uint32_t)nmarkers;
	st->nresets = (uint32_t)nresets;
	if (in_place) {
		/* the store is the stream: its positions are the stream's */
		for (j = 0; j < n; j++) {
			seg_starts[j] = SEG(s, j).bit0;
			if (SEG(s, j).m1 > SEG(s, j).m0)
				where[nw++] = (struct regen_where){ SEG(s, j).m0, SEG(s, j).cpu,
								    SEG(s, j).stamp };
		}
		st->nwhere = nw;
		st->bits = *bits_out = one->bits;
		st->markers = *markers_out = one->markers;
		st->resets = *resets_out = one->resets;
		one->bits = NULL;
		one->markers = NULL;
		one->resets = NULL;
		return 0;
	}
	bits = calloc(nbits / 64 + 1, sizeof(*bits));
	resets = calloc(nresets + 1, sizeof(*resets));
	*bits_out = bits;
	*resets_out = resets;
	if (!bits || !resets)
		return -PT_ENOMEM;
	prefault(bits, (nbits / 64 + 1) * sizeof(*bits));
	prefault(resets, (nresets + 1) * sizeof(*resets));
	into = merge_into(b, s, n, own, nown);
	if (into && into->capm < nmarkers) {
		m = realloc(into->markers, nmarkers * sizeof(*m));
		if (!m)
			return -PT_ENOMEM;
		into->markers = m;
		into->capm = nmarkers;
	}
	m = into ? into->markers : calloc(nmarkers ? nmarkers : 1, sizeof(*m));
	*markers_out = m;
	if (!m)
		return -PT_ENOMEM;
	/* written whole; into's own markers are present (their moves read them) */
	if (into)
		prefault(m + into->nmarkers, (nmarkers - into->nmarkers) * sizeof(*m));
	else
		prefault(m, nmarkers * sizeof(*m));
	st->bits = bits;
	st->markers = m;
	st->resets = resets;
	/* bits, resets and where each run of markers begins; the markers after */
	for (j = 0; j <= n; j++) {
		const struct store *from;

		if (bl && bl[j].set)
			where[nw++] = (struct regen_where){ (uint32_t)mi++, bl[j].cpu, 0 };
		if (j == n)
			break;
		if ((c < ncs && cs[c].seg == j) || SEG(s, j).m1 > SEG(s, j).m0)
			where[nw++] = (struct regen_where){ (uint32_t)mi, SEG(s, j).cpu,
							    SEG(s, j).stamp };
		for (; c < ncs && cs[c].seg == j; c++)
			mi++;
		from = &b->stores[SEG(s, j).store];
		seg_starts[j] = pos;	/* witness words by context end here */
		resets[nr++] = pos;	/* and adapting words forget */
		for (k = SEG(s, j).r0; k < SEG(s, j).r1; k++)
			resets[nr++] = from->resets[k] - SEG(s, j).bit0 + pos;
		mi += SEG(s, j).m1 - SEG(s, j).m0;
		copy_bits(bits, pos, from->bits, SEG(s, j).bit0, SEG(s, j).bit1 - SEG(s, j).bit0);
		pos += SEG(s, j).bit1 - SEG(s, j).bit0;
	}
	place_markers(b, out, s, n, bl, cs, ncs, seg_starts, pos, into, m, nmarkers);
	if (into)
		into->markers = NULL;	/* the stream's now */
	st->nwhere = nw;
	/* what this owner recorded is in its stream now */
	for (c = 0; c < nown; c++)
		store_free(&b->stores[own[c]]);
	return 0;
}

/* Each CPU's forks in recording order, CPU by CPU (FORK markers renumbered). */
static int order_forks(struct regen_streams_builder *b)
{
	uint32_t *to, *from, f, i, k, n = b->nforks;
	struct regen_fork *sorted;
	size_t j;

	for (f = 1; f < n; f++)
		if (b->fork_cpu[f] < b->fork_cpu[f - 1])
			break;
	if (f >= n)
		return 0;
	to = malloc(n * sizeof(*to));
	from = malloc(n * sizeof(*from));
	sorted = malloc(n * sizeof(*sorted));
	if (!to || !from || !sorted) {
		free(to);
		free(from);
		free(sorted);
		return -PT_ENOMEM;
	}
	for (f = 0; f < n; f++)
		from[f] = f;
	/* stable: insertion by CPU keeps each CPU's recording order (forks are few) */
	for (f = 1; f < n; f++) {
		uint32_t t = from[f];

		for (k = f; k > 0 && b->fork_cpu[from[k - 1]] > b->fork_cpu[t]; k--)
			from[k] = from[k - 1];
		from[k] = t;
	}
	for (f = 0; f < n; f++) {
		sorted[f] = b->forks[from[f]];
		to[from[f]] = f;
	}
	for (i = 0; i < b->nstores; i++)
		for (j = 0; j < b->stores[i].nmarkers; j++)
			if (b->stores[i].markers[j].type == REGEN_M_FORK)
				b->stores[i].markers[j].arg = to[b->stores[i].markers[j].arg];
	free(b->forks);
	b->forks = sorted;
	free(to);
	free(from);
	return 0;
}

/* Each CPU's losses in recording order, CPU by CPU (which shows at a boundary). */
static void order_losses(struct regen_streams_builder *b)
{
	size_t i, k;

	for (i = 1; i < b->nlosses; i++) {
		struct loss_event t = b->losses[i];

		for (k = i; k > 0 && b->losses[k - 1].cpu > t.cpu; k--)
			b->losses[k] = b->losses[k - 1];
		b->losses[k] = t;
	}
}

static void builder_free(struct regen_streams_builder *b)
{
	uint32_t i;

	for (i = 0; i < b->nstores; i++)
		store_free(&b->stores[i]);
	free(b->stores);
	free(b->store_hash);
	free(b->cpus);
	if (b->segs)
		munmap(b->segs, segs_bytes(b->capsegs));
	free(b->gaps);
	free(b->order);
	free(b->first);
	free(b->losses);
	free(b->forks);
	free(b->fork_cpu);
	free(b);
}

/*
 * n bytes from src to dst, a MiB at a time, each MiB's whole pages of src
 * leaving resident memory once copied (src is never read again and is
 * freed after), so that a large array moved is not held twice.
 */
static void move_out(void *dst, void *src, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;
	size_t done, step;

	for (done = 0; done < n; done += step) {
		step = n - done < (1u << 20) ? n - done : (1u << 20);
		memcpy((char *)dst + done, (char *)src + done, step);
		if (page & (page - 1))
			continue;
		lo = ((uintptr_t)src + done + page - 1) & ~(page - 1);
		hi = ((uintptr_t)src + done + step) & ~(page - 1);
		if (hi > lo)
			madvise((void *)lo, hi - lo, MADV_DONTNEED);
	}
}

/*
 * from's segments into into's slots from first (a page's first, within
 * into's room) on: their pages moved there (mremap), or, where they cannot
 * be, copied. Fails only when a failed move left a hole in into's room that
 * cannot be mapped again; nothing of from's has moved then, and its
 * segments stay its own. Returns 0 or -PT_ENOMEM.
 */
static int segs_move_in(struct regen_streams_builder *into, size_t first,
			struct regen_streams_builder *from)
{
	size_t used = segs_bytes(from->nsegs), all = segs_bytes(from->capsegs);
	struct segment *to = into->segs + first;

	if (!from->nsegs)
		return 0;
	if (!from->segs_moved &&
	    mremap(from->segs, used, used, MREMAP_MAYMOVE | MREMAP_FIXED, to) == (void *)to) {
		if (all > used)
			munmap((char *)from->segs + used, all - used);
		from->segs = NULL;
		from->capsegs = 0;
		into->segs_moved = 1;
		return 0;
	}
	/* a failed move may have unmapped where it was to go */
	if (mmap(to, used, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
	    (void *)to)
		return -PT_ENOMEM;
	into->segs_moved = 1;
	prefault(to, from->nsegs * sizeof(*to));
	move_out(to, from->segs, from->nsegs * sizeof(*to));
	return 0;
}

int regen_streams_merge(struct regen_streams_builder *into, struct regen_streams_builder *from)
{
	size_t segs = into->nsegs, losses = into->nlosses, per_page, first, cap, i, j;
	uint32_t stores = into->nstores, forks = into->nforks, k;
	int err = into->err ? into->err : from->err;

	for (i = 0; i < from->ncpus && !err; i++)
		for (j = 0; j < into->ncpus; j++)
			if (from->cpus[i].cpu == into->cpus[j].cpu)
				err = -PT_EINVAL;
	/* from's segments from a page's first slot: the pages move, not the segments */
	per_page = segs_bytes(1) / sizeof(*into->segs);
	first = from->nsegs ? (segs + per_page - 1) / per_page * per_page : segs;
	if (!err && ((uint64_t)first + from->nsegs > UINT32_MAX ||
		     (uint64_t)stores + from->nstores >= UINT32_MAX ||
		     (uint64_t)forks + from->nforks >= REGEN_MARKER_ARG_LIMIT))
		err = -PT_EOVERFLOW;
	if (err)
		goto out;
	err = -PT_ENOMEM;
	if (segs_grow(into, first + from->nsegs))
		goto out;
	if (reserve((void **)&into->gaps, &into->capgaps, NULL, into->ngaps, from->ngaps + 1,
		    sizeof(*into->gaps)))
		goto out;
	cap = into->caplosses;
	if (reserve((void **)&into->losses, &cap, NULL, losses, from->nlosses, sizeof(*into->losses)))
		goto out;
	into->caplosses = cap;
	cap = into->capstores;
	if (reserve((void **)&into->stores, &cap, NULL, stores, from->nstores, sizeof(*into->stores)))
		goto out;
	into->capstores = (uint32_t)cap;
	cap = into->capforks;
	if (reserve((void **)&into->forks, &cap, NULL, forks, from->nforks, sizeof(*into->forks)))
		goto out;
	cap = into->capforks;
	if (reserve((void **)&into->fork_cpu, &cap, NULL, forks, from->nforks, sizeof(*into->fork_cpu)))
		goto out;
	into->capforks = (uint32_t)cap;
	cap = into->capcpus;
	if (reserve((void **)&into->cpus, &cap, NULL, into->ncpus, from->ncpus, sizeof(*into->cpus)))
		goto out;
	into->capcpus = (uint32_t)cap;
	/*
	 * from's segments numbered after into's where they are: pages just
	 * moved cost a fault each to write. On failure from goes anyway.
	 */
	for (i = 0; i < from->nsegs; i++) {
		from->segs[i].seq += (uint32_t)first;
		from->segs[i].store += stores;
	}
	if (segs_move_in(into, first, from))
		goto out;
	/* the stores' table before they move: nothing fails after it */
	into->nstores += from->nstores;
	memcpy(into->stores + stores, from->stores, from->nstores * sizeof(*from->stores));
	if (store_table(into, into->nstores)) {
		into->nstores = stores;
		goto out;
	}
	from->nstores = 0;	/* into's now */
	/* from's parts numbered after into's */
	for (k = stores; forks && k < into->nstores; k++)
		for (j = 0; j < into->stores[k].nmarkers; j++)
			if (into->stores[k].markers[j].type == REGEN_M_FORK)
				into->stores[k].markers[j].arg += forks;
	if (first > segs)
		into->gaps[into->ngaps++] = (struct seg_gap){ segs, first - segs };
	for (i = 0; i < from->ngaps; i++)
		into->gaps[into->ngaps++] = (struct seg_gap){ from->gaps[i].at + first,
							      from->gaps[i].n };
	into->nsegs = first + from->nsegs;
	into->readysegs = into->nsegs;
	memcpy(into->losses + losses, from->losses, from->nlosses * sizeof(*from->losses));
	into->nlosses += from->nlosses;
	if (from->nforks) {
		memcpy(into->forks + forks, from->forks, from->nforks * sizeof(*from->forks));
		memcpy(into->fork_cpu + forks, from->fork_cpu, from->nforks * sizeof(*from->fork_cpu));
	}
	into->nforks += from->nforks;
	for (i = 0; i < from->ncpus; i++) {
		struct cpu_cut *c = &into->cpus[into->ncpus++];

		*c = from->cpus[i];
		c->seg += first;
		c->first_pending += losses;
	}
	into->unowned_records += from->unowned_records;
	into->unowned_bits += from->unowned_bits;
	into->counters_records += from->counters_records;
	into->loss_records += from->loss_records;
	builder_free(from);
	return 0;
out:
	if (!into->err)
		into->err = err;
	builder_free(from);
	return err;
}

/* The owners' streams being assembled, by one thread or several. */
struct assembly {
	struct regen_streams_builder *b;
	struct regen_streams *out;
	const uint32_t *byc;		/* forks by child (child_starts) */
	const size_t *first;		/* per stream: its first segment; [nstreams]: nsegs */
	uint32_t *stores;		/* the stores by owner: stream k's from store_first[k] */
	uint32_t *store_first;		/* [nstreams]: nstores */
	size_t most;			/* segments of the stream that has most */
	uint32_t next;			/* streams taken (atomic) */
	int *err;			/* per stream */
};

/*
 * Stream k: its segments in order (by stamp, then CPU, then recording
 * order: sort_runs), its boundaries' losses, its forked starts, then
 * assemble.
 */
static int assemble_stream(struct assembly *a, uint32_t k, struct boundary_loss *bl,
			   struct child_start *cs, uint32_t *tmp)
{
	struct regen_streams_builder *b = a->b;
	struct regen_streams *out = a->out;
	struct seg_view s = { b->segs, b->order + a->first[k] };
	size_t n = a->first[k + 1] - a->first[k], l;
	uint32_t ncs;
	int hit = 0;

	sort_runs(b->segs, b->order + a->first[k], tmp, n);
	for (l = 0; l < b->nlosses; l++)
		if (affects(&b->losses[l], SEG(s, 0).owner)) {
			/* bl is touched only for a stream a loss may touch */
			if (!hit)
				memset(bl, 0, (n + 1) * sizeof(*bl));
			hit = 1;
			mark_boundaries(s, n, &b->losses[l], SEG(s, 0).owner, bl);
		}
	ncs = child_starts(out, a->byc, s, n, cs);
	return assemble(b, out, s, n, hit ? bl : NULL, cs, ncs, a->stores + a->store_first[k],
			a->store_first[k + 1] - a->store_first[k], &out->streams[k],
			&out->bits_store[k], &out->marker_store[k], &out->seg_store[k],
			&out->reset_store[k], &out->where_store[k]);
}

static void *assembler(void *arg)
{
	struct assembly *a = arg;
	struct boundary_loss *bl = calloc(a->most + 1, sizeof(*bl));
	struct child_start *cs = malloc((a->out->nforks ? a->out->nforks : 1) * sizeof(*cs));
	uint32_t *tmp = malloc((a->most + 1) * sizeof(*tmp)), k;

	while ((k = __atomic_fetch_add(&a->next, 1, __ATOMIC_RELAXED)) < a->out->nstreams) {
		a->err[k] = bl && cs && tmp ? assemble_stream(a, k, bl, cs, tmp) : -PT_ENOMEM;
		if (a->err[k])
			break;	/* the others finish theirs; the first failure is returned */
	}
	free(bl);
	free(cs);
	free(tmp);
	return NULL;
}

/* The streams (out->nstreams, one per owner) on jobs threads. Returns 0 or the first stream's error. */
static int assemble_all(struct assembly *a, unsigned int jobs)
{
	pthread_t *th = NULL;
	unsigned int t, started = 0;
	uint32_t k, total = a->out->nstreams;

	if (jobs > a->out->nstreams)
		jobs = a->out->nstreams;
	if (jobs > 1)
		th = calloc(jobs - 1, sizeof(*th));
	for (t = 0; th && t + 1 < jobs; t++)
		if (!pthread_create(&th[started], NULL, assembler, a))
			started++;
	assembler(a);
	for (t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	free(th);
	/*
	 * Streams are taken in order, so any not taken come after one that
	 * failed: as one thread would have, keep the streams up to the first
	 * failure and free those after it.
	 */
	for (k = 0; k < total && !a->err[k]; k++)
		;
	if (k == total)
		return 0;
	a->out->nstreams = k + 1;
	for (k++; k < total; k++) {
		free(a->out->bits_store[k]);
		free(a->out->marker_store[k]);
		free(a->out->seg_store[k]);
		free(a->out->reset_store[k]);
		free(a->out->where_store[k]);
		a->out->bits_store[k] = NULL;
		a->out->marker_store[k] = NULL;
		a->out->seg_store[k] = NULL;
		a->out->reset_store[k] = NULL;
		a->out->where_store[k] = NULL;
	}
	return a->err[a->out->nstreams - 1];
}

static int by_store_owner(const void *x, const void *y, void *stores)
{
	const struct store *st = stores;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;

	if (st[i].owner != st[j].owner)
		return st[i].owner < st[j].owner ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* a->stores and a->store_first: each stream's stores (every owner has one). Returns 0 or -PT_ENOMEM. */
static int stores_by_owner(struct assembly *a)
{
	struct regen_streams_builder *b = a->b;
	uint32_t i, k, n = b->nstores;

	a->stores = malloc((n + 1) * sizeof(*a->stores));
	a->store_first = malloc((a->out->nstreams + 1) * sizeof(*a->store_first));
	if (!a->stores || !a->store_first)
		return -PT_ENOMEM;
	for (i = 0; i < n; i++)
		a->stores[i] = i;
	qsort_r(a->stores, n, sizeof(*a->stores), by_store_owner, b->stores);
	/* the streams and the stores both by owner */
	for (i = 0, k = 0; k < a->out->nstreams; k++) {
		uint64_t owner = b->segs[b->order[a->first[k]]].owner;

		while (i < n && b->stores[a->stores[i]].owner < owner)
			i++;
		a->store_first[k] = i;
	}
	a->store_first[a->out->nstreams] = n;
	return 0;
}

int regen_streams_finish(struct regen_streams_builder *b, struct regen_streams *out)
{
	struct assembly a = { .b = b, .out = out };
	uint32_t *byc = NULL, f;
	size_t i, nstreams = 0;
	int err = b->err;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < b->ncpus; i++)
		if (b->cpus[i].open)
			close_segment(b, b->cpus[i].seg);
	out->unowned_records = b->unowned_records;
	out->unowned_bits = b->unowned_bits;
	out->counters_records = b->counters_records;
	out->loss_records = b->loss_records;
	if (!err)
		err = order_forks(b);
	out->forks = b->forks;
	out->nforks = out->capforks = b->nforks;
	b->forks = NULL;
	if (err)
		goto out;
	order_losses(b);
	err = group_segments(b);
	if (err)
		goto out;
	nstreams = b->nowners;
	if (nstreams > UINT32_MAX - 1) {
		err = -PT_EOVERFLOW;
		goto out;
	}
	out->streams = calloc(nstreams ? nstreams : 1, sizeof(*out->streams));
	out->bits_store = calloc(nstreams ? nstreams : 1, sizeof(*out->bits_store));
	out->marker_store = calloc(nstreams ? nstreams : 1, sizeof(*out->marker_store));
	out->seg_store = calloc(nstreams ? nstreams : 1, sizeof(*out->seg_store));
	out->reset_store = calloc(nstreams ? nstreams : 1, sizeof(*out->reset_store));
	out->where_store = calloc(nstreams ? nstreams : 1, sizeof(*out->where_store));
	a.first = b->first;
	a.err = calloc(nstreams + 1, sizeof(*a.err));
	byc = malloc((out->nforks ? out->nforks : 1) * sizeof(*byc));
	if (!out->streams || !out->bits_store || !out->marker_store || !out->seg_store ||
	    !out->reset_store || !out->where_store || !a.first || !a.err || !byc) {
		err = -PT_ENOMEM;
		goto out;
	}
	out->nstreams = (uint32_t)nstreams;
	for (i = 0; i < out->nstreams; i++)
		if (a.first[i + 1] - a.first[i] > a.most)
			a.most = a.first[i + 1] - a.first[i];
	for (f = 0; f < out->nforks; f++)
		byc[f] = f;
	qsort_r(byc, out->nforks, sizeof(*byc), by_child, out->forks);
	a.byc = byc;
	err = stores_by_owner(&a);
	if (err)
		goto out;
	err = assemble_all(&a, b->jobs);
	if (err)
		goto out;
	/* which stream each fork's parent is */
	for (f = 0; f < out->nforks; f++) {
		const struct regen_stream *ps = regen_streams_find(out, out->forks[f].parent);

		out->forks[f].parent_stream = ps ? (uint32_t)(ps - out->streams) : UINT32_MAX;
	}
out:
	free(byc);
	free(a.err);
	free(a.stores);
	free(a.store_first);
	builder_free(b);
	return err;
}

void regen_streams_abort(struct regen_streams_builder *b)
{
	if (b)
		builder_free(b);
}

int regen_streams_build(const struct tr_records *rs, struct regen_streams *out)
{
	struct regen_streams_builder *b;
	int err = regen_streams_begin(&b, 1);

	if (err) {
		memset(out, 0, sizeof(*out));
		return err;
	}
	regen_streams_add(b, rs, 0, rs->n);
	return regen_streams_finish(b, out);
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
		if (s->where_store)
			free(s->where_store[i]);
	}
	free(s->bits_store);
	free(s->marker_store);
	free(s->seg_store);
	free(s->reset_store);
	free(s->where_store);
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

void regen_where(const struct regen_stream *s, uint32_t i, uint32_t *cpu, uint64_t *stamp)
{
	uint32_t lo = 0, hi = s->nwhere;

	*cpu = 0;
	*stamp = 0;
	if (i == REGEN_WHERE_NONE || i >= s->nmarkers)
		return;
	/* the last run whose first is at or before i */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->where[mid].first <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		*cpu = s->where[lo - 1].cpu;
		*stamp = s->where[lo - 1].stamp;
	}
}
