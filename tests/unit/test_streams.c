// SPDX-License-Identifier: GPL-2.0
/*
 * Per-owner stream assembly: records written into kernel-format pages per
 * CPU, decoded with kbuffer, cut into segments at OWNER records and joined
 * per owner by stamp. The oracle is the story each test writes: which
 * owner emitted which bits when, not the implementation's own output.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "rbpage.h"
#include "regen_trace.h"
#include "streams.h"
#include "tf_sample.h"
#include "unit.h"

#define PS 4096u
#define NCPU 2		/* the CPUs most tests record on */
#define MAXCPU 3	/* the CPUs a writer has pages for */
#define TASK(p) PT_OWNER(PT_OWNER_TASK, p)

/* A per-CPU page writer: records go to the CPU's current page. */
struct rec_writer {
	uint8_t pages[MAXCPU][16][PS];
	struct rbpage pg[MAXCPU];
	uint32_t npages[MAXCPU];
	uint64_t ts[MAXCPU];
};

static void rw_init(struct rec_writer *w)
{
	memset(w, 0, sizeof(*w));
}

static void rw_addv(struct rec_writer *w, uint32_t cpu, uint16_t type, uint32_t arg,
		    const uint64_t *body, uint32_t nw)
{
	uint8_t rec[40];
	uint32_t len = rbrec(rec, type, arg, body, nw);

	w->ts[cpu] += 10;
	if (!w->npages[cpu] || rbpage_add(&w->pg[cpu], w->ts[cpu], rec, len)) {
		CU_ASSERT_FATAL(w->npages[cpu] < 16);
		rbpage_init(&w->pg[cpu], w->pages[cpu][w->npages[cpu]++], PS, w->ts[cpu]);
		CU_ASSERT_EQUAL_FATAL(rbpage_add(&w->pg[cpu], w->ts[cpu], rec, len), 0);
	}
}

static void rw_add(struct rec_writer *w, uint32_t cpu, uint16_t type, uint32_t arg,
		   uint64_t w0, uint64_t w1, uint32_t nw)
{
	uint64_t body[2] = { w0, w1 };

	rw_addv(w, cpu, type, arg, body, nw);
}

/* A LOSS of kind with count and no interval (a pt_rec_loss: count, func_id 0, 0, 0). */
static void rw_add4(struct rec_writer *w, uint32_t cpu, uint16_t type, uint32_t kind,
		    uint64_t count)
{
	const uint64_t body[4] = { count };

	rw_addv(w, cpu, type, kind, body, 4);
}

static void owner(struct rec_writer *w, uint32_t cpu, uint64_t o, uint64_t stamp)
{
	rw_add(w, cpu, PT_REC_OWNER, 0, o, stamp, 2);
}

static void bits(struct rec_writer *w, uint32_t cpu, uint32_t n, uint64_t v)
{
	rw_add(w, cpu, PT_REC_BITS, n, v, 0, 1);
}

/* Whether marker i of s was recorded on cpu in a segment stamped stamp (regen_where). */
static int recorded(const struct regen_stream *s, uint32_t i, uint32_t cpu, uint64_t stamp)
{
	uint64_t st;
	uint32_t c;

	regen_where(s, i, &c, &st);
	return c == cpu && st == stamp;
}

/* Decodes CPU order[0]'s pages first, then order[1]'s: assembly must not depend on it. */
static void rw_decode(struct rec_writer *w, struct tr_records *rs, int cpu1_first)
{
	uint32_t k, c, p;

	memset(rs, 0, sizeof(*rs));
	for (k = 0; k < MAXCPU; k++) {
		c = cpu1_first ? MAXCPU - 1 - k : k;
		for (p = 0; p < w->npages[c]; p++)
			CU_ASSERT_EQUAL_FATAL(tr_decode_page(rs, c, w->pages[c][p], PS), 0);
	}
}

static uint64_t get_bits(const struct regen_stream *s, uint64_t pos, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	/* Bit by bit, independent of any bit reader. */
	for (i = 0; i < n; i++)
		v |= ((s->bits[(pos + i) / 64] >> ((pos + i) % 64)) & 1) << i;
	return v;
}

static void test_sample_streams(void)
{
	struct tracefile tf;
	struct tr_records rs = { 0 };
	struct regen_streams ss;
	const struct regen_stream *t, *soft, *hard;
	size_t size;
	uint8_t *b = sample_bytes(&size);

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL_FATAL(tracefile_parse(b, size, &tf), 0);
	CU_ASSERT_EQUAL_FATAL(tr_decode_tracefile(&rs, &tf), 0);
	CU_ASSERT_EQUAL(rs.n, 12);
	CU_ASSERT_EQUAL_FATAL(regen_streams_build(&rs, &ss), 0);
	CU_ASSERT_EQUAL_FATAL(ss.nstreams, 3);
	CU_ASSERT_EQUAL(ss.unowned_records, 0);
	t = regen_streams_find(&ss, TASK(42));
	soft = regen_streams_find(&ss, PT_OWNER(PT_OWNER_SOFTIRQ, 1));
	hard = regen_streams_find(&ss, PT_OWNER(PT_OWNER_HARDIRQ, 0));
	CU_ASSERT_FATAL(t && soft && hard);
	/* Task 42: "1" on CPU 0, "01" flushed late on CPU 0, then "101" on CPU 1. */
	CU_ASSERT_EQUAL_FATAL(t->nbits, 6);
	CU_ASSERT_EQUAL(get_bits(t, 0, 6), 0x2d);
	CU_ASSERT_EQUAL_FATAL(t->nmarkers, 1);
	CU_ASSERT_EQUAL(t->markers[0].type, REGEN_M_ENTER);
	CU_ASSERT_EQUAL(t->markers[0].pos, 0);
	CU_ASSERT_EQUAL(t->markers[0].func, SAMPLE_FUNC_ID);
	CU_ASSERT_EQUAL(t->markers[0].value, 0xffffffff81001234ull);
	CU_ASSERT(recorded(t, 0, 0, 500));
	CU_ASSERT_EQUAL(hard->nbits, 1);
	CU_ASSERT_EQUAL(get_bits(hard, 0, 1), 0);
	/*
	 * Two hits skipped in (750, 850] hide whole interrupt executions: before
	 * the hardirq's segment (stamp 900), on either side of the softirq's
	 * (800); never in the task's stream.
	 */
	CU_ASSERT_EQUAL_FATAL(hard->nmarkers, 2);
	CU_ASSERT_EQUAL(hard->markers[0].type, REGEN_M_HIDDEN);
	CU_ASSERT_EQUAL(hard->markers[0].arg, PT_LOSS_MISSED);
	CU_ASSERT_EQUAL(hard->markers[0].value, 2);
	CU_ASSERT_EQUAL(hard->markers[1].type, REGEN_M_ENTER);
	CU_ASSERT_EQUAL(hard->markers[1].value, 0xffffffff81005678ull);
	CU_ASSERT_EQUAL(soft->nbits, 0);
	CU_ASSERT_EQUAL_FATAL(soft->nmarkers, 3);
	CU_ASSERT_EQUAL(soft->markers[0].type, REGEN_M_HIDDEN);
	CU_ASSERT_EQUAL(soft->markers[1].type, REGEN_M_PARTIAL);
	CU_ASSERT_EQUAL(soft->markers[1].value, 4);
	CU_ASSERT_EQUAL(soft->markers[2].type, REGEN_M_HIDDEN);
	CU_ASSERT_EQUAL(soft->markers[2].arg, PT_LOSS_MISSED);
	CU_ASSERT_EQUAL(soft->markers[2].value, 2);
	regen_streams_free(&ss);
	tr_records_free(&rs);
	tracefile_free(&tf);
	free(b);
}

/* A task migrates mid-function; its old CPU flushes late. Order by stamp, either decode order. */
static void test_migration(void)
{
	static struct rec_writer w;
	int order;

	for (order = 0; order < 2; order++) {
		struct tr_records rs;
		struct regen_streams ss;
		const struct regen_stream *s;

		rw_init(&w);
		owner(&w, 1, TASK(5), 100);
		rw_add(&w, 1, PT_REC_ENTER_AT, 3, 0x81001000, 0, 1);
		bits(&w, 1, 40, 0xabcdef0123ull);
		owner(&w, 0, TASK(5), 200);	/* migrated to CPU 0 */
		bits(&w, 0, 30, 0x2aaaaaaa);
		owner(&w, 0, TASK(6), 300);
		bits(&w, 1, 7, 0x55);		/* CPU 1 flushes task 5's leftover bits */
		owner(&w, 1, TASK(6), 400);	/* task 6 migrates to CPU 1 */
		owner(&w, 0, TASK(5), 500);
		rw_add(&w, 0, PT_REC_BLOCK, 3, 9, 0, 1);
		bits(&w, 0, 64, ~0ull);
		rw_decode(&w, &rs, order);
		CU_ASSERT_EQUAL_FATAL(regen_streams_build(&rs, &ss), 0);
		CU_ASSERT_EQUAL(ss.nstreams, 2);
		s = regen_streams_find(&ss, TASK(5));
		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		CU_ASSERT_EQUAL_FATAL(s->nbits, 40 + 7 + 30 + 64);
		CU_ASSERT_EQUAL(get_bits(s, 0, 40), 0xabcdef0123ull);
		CU_ASSERT_EQUAL(get_bits(s, 40, 7), 0x55);
		CU_ASSERT_EQUAL(get_bits(s, 47, 30), 0x2aaaaaaa);
		CU_ASSERT_EQUAL(get_bits(s, 77, 64), ~0ull);
		CU_ASSERT_EQUAL_FATAL(s->nmarkers, 2);
		CU_ASSERT_EQUAL(s->markers[0].type, REGEN_M_ENTER);
		CU_ASSERT_EQUAL(s->markers[0].pos, 0);
		CU_ASSERT_EQUAL(s->markers[1].type, REGEN_M_BLOCK);
		CU_ASSERT_EQUAL(s->markers[1].pos, 77);
		CU_ASSERT_EQUAL(s->markers[1].arg, 9);
		CU_ASSERT(recorded(s, 0, 1, 100));
		CU_ASSERT(recorded(s, 1, 0, 500));
		s = regen_streams_find(&ss, TASK(6));
		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		CU_ASSERT_EQUAL(s->nbits, 0);
		regen_streams_free(&ss);
		tr_records_free(&rs);
	}
}

static int has_loss_at(const struct regen_stream *s, uint64_t pos)
{
	uint32_t i;

	for (i = 0; i < s->nmarkers; i++)
		if (regen_marker_is_loss(&s->markers[i]) && s->markers[i].pos == pos)
			return 1;
	return 0;
}

/* LOSS and HIDDEN markers. */
static uint32_t nloss(const struct regen_stream *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < s->nmarkers; i++)
		n += regen_marker_is_loss(&s->markers[i]);
	return n;
}

static uint32_t nhidden(const struct regen_stream *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < s->nmarkers; i++)
		n += s->markers[i].type == REGEN_M_HIDDEN;
	return n;
}

/*
 * CPU 0 overruns while task A runs (stamp 10) until task B's OWNER (30):
 * A gets the LOSS inline, the records after it are unowned, and every other
 * owner gets a gap where a segment of it could have been dropped.
 */
static void test_overrun_gaps(void)
{
	static struct rec_writer w;
	struct tr_records rs;
	struct regen_streams ss;
	const struct regen_stream *a, *b, *c, *d;

	rw_init(&w);
	owner(&w, 1, TASK(2), 1);	/* B on CPU 1, before */
	bits(&w, 1, 3, 0x7);
	owner(&w, 1, TASK(1), 5);	/* A on CPU 1 */
	bits(&w, 1, 2, 0x1);
	owner(&w, 1, TASK(4), 6);	/* D, only before the loss */
	bits(&w, 1, 4, 0xf);
	owner(&w, 0, TASK(1), 10);	/* A moves to CPU 0 */
	bits(&w, 0, 4, 0x9);
	rw_add4(&w, 0, PT_REC_LOSS, PT_LOSS_OVERRUN, 5);
	bits(&w, 0, 6, 0x3f);		/* whose? unknown: unowned */
	owner(&w, 0, TASK(2), 30);	/* B */
	bits(&w, 0, 1, 1);
	owner(&w, 1, TASK(1), 40);	/* A again */
	bits(&w, 1, 2, 0x2);
	owner(&w, 1, TASK(3), 50);	/* C, only after */
	bits(&w, 1, 5, 0x1f);
	owner(&w, 1, TASK(3), 60);
	bits(&w, 1, 1, 0);
	rw_decode(&w, &rs, 0);
	CU_ASSERT_EQUAL_FATAL(regen_streams_build(&rs, &ss), 0);
	CU_ASSERT_EQUAL(ss.unowned_records, 1);
	CU_ASSERT_EQUAL(ss.unowned_bits, 6);
	a = regen_streams_find(&ss, TASK(1));
	b = regen_streams_find(&ss, TASK(2));
	c = regen_streams_find(&ss, TASK(3));
	d = regen_streams_find(&ss, TASK(4));
	CU_ASSERT_FATAL(a && b && c && d);
	/* A: "01" + "1001" + LOSS + "01". */
	CU_ASSERT_EQUAL_FATAL(a->nbits, 8);
	CU_ASSERT_EQUAL(get_bits(a, 0, 8), 0x1 | 0x9 << 2 | 0x2 << 6);
	CU_ASSERT_EQUAL(nloss(a), 1);
	CU_ASSERT(has_loss_at(a, 6));
	CU_ASSERT_EQUAL_FATAL(a->nmarkers, 1);
	CU_ASSERT(recorded(a, 0, 0, 10));	/* in its segment on CPU 0 */
	/* B: a segment of it may hide between its stamps 1 and 30, none after 30. */
	CU_ASSERT_EQUAL(b->nbits, 4);
	CU_ASSERT_EQUAL(nloss(b), 1);
	CU_ASSERT(has_loss_at(b, 3));
	/* C starts after the loss: it may have started inside it. */
	CU_ASSERT_EQUAL(nloss(c), 1);
	CU_ASSERT(has_loss_at(c, 0));
	CU_ASSERT_EQUAL(c->markers[0].arg, PT_LOSS_OVERRUN);
	CU_ASSERT_EQUAL(c->markers[0].value, 5);
	CU_ASSERT(recorded(c, 0, 0, 0));	/* between segments: CPU 0's loss, no stamp */
	/* D ended before: it may have continued inside it (gap at its end). */
	CU_ASSERT_EQUAL(nloss(d), 1);
	CU_ASSERT(has_loss_at(d, 4));
	regen_streams_free(&ss);
	tr_records_free(&rs);
}

/*
 * Where each marker was recorded, a run of them at a time: an owner's
 * segments on one CPU in order (its store is its stream), one with no
 * marker between; then the same with a segment on another CPU between
 * (a copy in order).
 */
static void test_where(void)
{
	static struct rec_writer w;
	int other;

	for (other = 0; other < 2; other++) {
		struct tr_records rs;
		struct regen_streams ss;
		const struct regen_stream *s;

		rw_init(&w);
		owner(&w, 0, TASK(7), 100);
		rw_add(&w, 0, PT_REC_ENTER_AT, 3, 0x81001000, 0, 1);
		bits(&w, 0, 3, 0x5);
		rw_add(&w, 0, PT_REC_BLOCK, 3, 2, 0, 1);
		owner(&w, 0, TASK(7), 200);	/* no marker */
		bits(&w, 0, 2, 0x1);
		if (other) {
			owner(&w, 1, TASK(7), 250);
			rw_add(&w, 1, PT_REC_BLOCK, 3, 4, 0, 1);
		}
		owner(&w, 0, TASK(7), 300);
		rw_add(&w, 0, PT_REC_BLOCK, 3, 5, 0, 1);
		rw_add(&w, 0, PT_REC_BLOCK, 3, 6, 0, 1);
		rw_decode(&w, &rs, 0);
		CU_ASSERT_EQUAL_FATAL(regen_streams_build(&rs, &ss), 0);
		s = regen_streams_find(&ss, TASK(7));
		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		CU_ASSERT_EQUAL_FATAL(s->nmarkers, 4u + other);
		CU_ASSERT(recorded(s, 0, 0, 100));
		CU_ASSERT(recorded(s, 1, 0, 100));
		if (other)
			CU_ASSERT(recorded(s, 2, 1, 250));
		CU_ASSERT(recorded(s, 2 + other, 0, 300));
		CU_ASSERT(recorded(s, 3 + other, 0, 300));
		CU_ASSERT_EQUAL(s->markers[3 + other].arg, 6);
		/* no marker: nowhere */
		CU_ASSERT(recorded(s, REGEN_WHERE_NONE, 0, 0));
		CU_ASSERT(recorded(s, s->nmarkers, 0, 0));
		regen_streams_free(&ss);
		tr_records_free(&rs);
	}
}

/* Records before a CPU's first OWNER: counted, and a gap for the others. */
static void test_unowned_prefix(void)
{
	static struct rec_writer w;
	struct tr_records rs;
	struct regen_streams ss;
	const struct regen_stream *a, *irq0, *irq1;

	rw_init(&w);
	owner(&w, 1, PT_OWNER(PT_OWNER_HARDIRQ, 0), 2);
	bits(&w, 1, 1, 1);
	owner(&w, 1, PT_OWNER(PT_OWNER_HARDIRQ, 1), 3);
	bits(&w, 1, 1, 1);
	bits(&w, 0, 9, 0x1ff);		/* CPU 0 starts without an OWNER */
	owner(&w, 0, TASK(1), 20);
	owner(&w, 1, PT_OWNER(PT_OWNER_HARDIRQ, 0), 25);
	owner(&w, 1, PT_OWNER(PT_OWNER_HARDIRQ, 1), 26);
	rw_decode(&w, &rs, 0);
	CU_ASSERT_EQUAL_FATAL(regen_streams_build(&rs, &ss), 0);
	CU_ASSERT_EQUAL(ss.unowned_records, 1);
	CU_ASSERT_EQUAL(ss.unowned_bits, 9);
	a = regen_streams_find(&ss, TASK(1));
	irq0 = regen_streams_find(&ss, PT_OWNER(PT_OWNER_HARDIRQ, 0));
	irq1 = regen_streams_find(&ss, PT_OWNER(PT_OWNER_HARDIRQ, 1));
	CU_ASSERT_FATAL(a && irq0 && irq1);
	/* A: its stream may have begun in CPU 0's unowned prefix. */
	CU_ASSERT_EQUAL_FATAL(nloss(a), 1);
	CU_ASSERT_EQUAL(a->markers[0].arg, TR_LOSS_CORRUPT);
	/* HARDIRQ/0 (CPU 0's): gapped by the prefix, before stamp 20, around its first segment. */
	CU_ASSERT(has_loss_at(irq0, 0));
	CU_ASSERT(has_loss_at(irq0, 1));
	CU_ASSERT_EQUAL(nloss(irq0), 2);
	/* HARDIRQ/1 never runs on CPU 0: untouched. */
	CU_ASSERT_EQUAL(nloss(irq1), 0);
	regen_streams_free(&ss);
	tr_records_free(&rs);
}

/*
 * LOSS(MISSED) with its interval: no marker where it sits (the
 * task whose segment holds it lost nothing); every CPU's interrupt owners
 * are marked at the boundaries that fall inside (since, until].
 */
static void test_missed_interval(void)
{
	static struct rec_writer w;
	struct tr_records rs;
	struct regen_streams ss;
	const struct regen_stream *t1, *t2, *irq0, *irq1;
	const uint64_t missed[4] = { 3, 4, 25, 35 };	/* count, func_id, since, until */

	rw_init(&w);
	owner(&w, 0, PT_OWNER(PT_OWNER_HARDIRQ, 0), 10);
	bits(&w, 0, 1, 1);
	owner(&w, 0, TASK(1), 20);
	bits(&w, 0, 2, 3);
	owner(&w, 0, PT_OWNER(PT_OWNER_HARDIRQ, 0), 30);
	bits(&w, 0, 1, 0);
	owner(&w, 0, TASK(1), 40);
	rw_addv(&w, 0, PT_REC_LOSS, PT_LOSS_MISSED, missed, 4);
	bits(&w, 0, 1, 1);
	owner(&w, 1, PT_OWNER(PT_OWNER_HARDIRQ, 1), 5);
	bits(&w, 1, 1, 1);
	owner(&w, 1, TASK(2), 27);
	bits(&w, 1, 1, 1);
	owner(&w, 1, PT_OWNER(PT_OWNER_HARDIRQ, 1), 50);
	bits(&w, 1, 1, 1);
	rw_decode(&w, &rs, 0);
	CU_ASSERT_EQUAL_FATAL(regen_streams_build(&rs, &ss), 0);
	t1 = regen_streams_find(&ss, TASK(1));
	t2 = regen_streams_find(&ss, TASK(2));
	irq0 = regen_streams_find(&ss, PT_OWNER(PT_OWNER_HARDIRQ, 0));
	irq1 = regen_streams_find(&ss, PT_OWNER(PT_OWNER_HARDIRQ, 1));
	CU_ASSERT_FATAL(t1 && t2 && irq0 && irq1);
	CU_ASSERT_EQUAL(t1->nbits, 3);
	CU_ASSERT_EQUAL(nloss(t1), 0);
	CU_ASSERT_EQUAL(nloss(t2), 0);
	/* CPU 0's hardirq: between its segments (10, 30) and after the last (30 < 35). */
	CU_ASSERT_EQUAL(nloss(irq0), 2);
	CU_ASSERT_EQUAL(nhidden(irq0), 2);	/* whole executions: nothing is cut */
	CU_ASSERT(has_loss_at(irq0, 1));
	CU_ASSERT(has_loss_at(irq0, 2));
	/* CPU 1's: only between 5 and 50; not before 5 (5 <= since) nor after 50. */
	CU_ASSERT_EQUAL(nloss(irq1), 1);
	CU_ASSERT(has_loss_at(irq1, 1));
	regen_streams_free(&ss);
	tr_records_free(&rs);
}

/*
 * Property: random owners hopping between CPUs, with OWNER stamps either
 * increasing or in random order; each stream must be its segments' bits in
 * stamp order (the test sorts its own list of segments by stamp).
 */
struct tseg {
	uint64_t stamp;
	uint32_t nbits[8];
	uint64_t v[8];
	uint32_t n;
	uint32_t block[8];	/* BLOCK records after bits: their func, unique */
	uint64_t at[8];		/* and the segment's bits before each */
	uint32_t nblocks;
	uint64_t seg_bits;
};

static void test_random_streams(void)
{
	static struct rec_writer w;
	static struct tseg segs[4][64];
	unsigned int seed = unit_seed();
	unsigned int round;

	for (round = 0; round < 100; round++) {
		uint32_t nseg[4] = { 0 };
		int on[NCPU] = { -1, -1 }, cur[NCPU] = { -1, -1 };
		struct tr_records rs;
		struct regen_streams ss;
		unsigned int step, o;
		uint64_t stamp = 1;
		uint32_t nblocks = 0;

		rw_init(&w);
		for (step = 0; step < 80; step++) {
			uint32_t cpu = rand_r(&seed) % NCPU;
			uint32_t n = rand_r(&seed) % 64 + 1;
			uint64_t v = ((uint64_t)rand_r(&seed) << 32) ^ rand_r(&seed);
			struct tseg *sg;

			o = rand_r(&seed) % 4;
			if (on[cpu] != (int)o) {
				uint64_t st;

				if (nseg[o] == 64)
					continue;
				/* An owner runs on one CPU at a time: evict it elsewhere. */
				if (on[!cpu] == (int)o)
					on[!cpu] = -1;
				/* Odd rounds: stamps in random order (unique: step in the low bits). */
				st = round & 1 ? ((uint64_t)(rand_r(&seed) % 1000) << 8 | step) : stamp++;
				owner(&w, cpu, TASK(o + 1), st);
				on[cpu] = o;
				cur[cpu] = nseg[o];
				segs[o][nseg[o]++] = (struct tseg){ .stamp = st };
			}
			sg = &segs[o][cur[cpu]];
			if (sg->n == 8)
				continue;
			bits(&w, cpu, n, v);
			sg->nbits[sg->n] = n;
			sg->v[sg->n++] = n < 64 ? v & ((1ull << n) - 1) : v;
			sg->seg_bits += n;
			/* a marker now and then, so that segments of both CPUs carry some */
			if (rand_r(&seed) % 2 && sg->nblocks < 8) {
				rw_add(&w, cpu, PT_REC_BLOCK, ++nblocks, 0, 0, 1);
				sg->block[sg->nblocks] = nblocks;
				sg->at[sg->nblocks++] = sg->seg_bits;
			}
		}
		rw_decode(&w, &rs, round & 2);
		CU_ASSERT_EQUAL_FATAL(regen_streams_build(&rs, &ss), 0);
		for (o = 0; o < 4; o++) {
			const struct regen_stream *s = regen_streams_find(&ss, TASK(o + 1));
			uint64_t pos = 0;
			uint32_t k, j, m, i;

			if (!nseg[o]) {
				CU_ASSERT_PTR_NULL(s);
				continue;
			}
			CU_ASSERT_PTR_NOT_NULL_FATAL(s);
			/* Insertion sort of the test's own segments by stamp. */
			for (k = 1; k < nseg[o]; k++)
				for (j = k; j > 0 && segs[o][j].stamp < segs[o][j - 1].stamp; j--) {
					struct tseg t = segs[o][j];

					segs[o][j] = segs[o][j - 1];
					segs[o][j - 1] = t;
				}
			/* the markers in the segments' order, at the stream's positions */
			for (k = 0, i = 0; k < nseg[o]; k++) {
				for (m = 0; m < segs[o][k].nblocks; m++, i++) {
					CU_ASSERT_FATAL(i < s->nmarkers);
					CU_ASSERT_EQUAL(s->markers[i].type, REGEN_M_BLOCK);
					CU_ASSERT_EQUAL(s->markers[i].func, segs[o][k].block[m]);
					CU_ASSERT_EQUAL(s->markers[i].pos, pos + segs[o][k].at[m]);
				}
				for (m = 0; m < segs[o][k].n; m++) {
					CU_ASSERT_FATAL(pos + segs[o][k].nbits[m] <= s->nbits);
					CU_ASSERT_EQUAL(get_bits(s, pos, segs[o][k].nbits[m]), segs[o][k].v[m]);
					pos += segs[o][k].nbits[m];
				}
			}
			CU_ASSERT_EQUAL(s->nmarkers, i);
			CU_ASSERT_EQUAL(s->nbits, pos);
			CU_ASSERT_EQUAL(nloss(s), 0);
		}
		regen_streams_free(&ss);
		tr_records_free(&rs);
	}
}

/*
 * One random record on one of ncpu CPUs, of one of four owners: an OWNER
 * (the next stamp), BITS, an ENTER, a BLOCK, or, with forks_losses, a
 * FORK or a LOSS (else BITS in their place).
 */
static void random_record(struct rec_writer *w, unsigned int *seed, uint32_t ncpu,
			  uint64_t *stamp, int forks_losses)
{
	uint32_t cpu = rand_r(seed) % ncpu, o = rand_r(seed) % 4, what = rand_r(seed) % 16;
	uint64_t v = ((uint64_t)rand_r(seed) << 32) ^ rand_r(seed);
	uint64_t fork[3] = { TASK(o + 1), *stamp, 0 };

	if (what < 3)
		owner(w, cpu, TASK(o + 1), (*stamp)++);
	else if (what < 10 || (what != 14 && what >= 12 && !forks_losses))
		bits(w, cpu, rand_r(seed) % 64 + 1, v);
	else if (what < 12)
		rw_add(w, cpu, PT_REC_ENTER_AT, o + 3, 0x81001000 + 16 * o, 0, 1);
	else if (what < 14)
		rw_addv(w, cpu, PT_REC_FORK, 0, fork, 3);
	else if (what < 15)
		rw_add(w, cpu, PT_REC_BLOCK, o + 3, v & 0xffff, 0, 1);
	else
		rw_add4(w, cpu, PT_REC_LOSS, PT_LOSS_OVERRUN, v % 9 + 1);
}

/*
 * A random trace of steps records (random_record) decoded into rs, its
 * CPUs' pages in order or, with cpu1_first, the last CPU's first; and the
 * streams one builder of every record makes of it in want.
 */
static void random_trace(struct rec_writer *w, unsigned int *seed, uint32_t ncpu,
			 unsigned int steps, int forks_losses, int cpu1_first, struct tr_records *rs,
			 struct regen_streams *want)
{
	uint64_t stamp = 1;
	unsigned int step;

	rw_init(w);
	for (step = 0; step < steps; step++)
		random_record(w, seed, ncpu, &stamp, forks_losses);
	rw_decode(w, rs, cpu1_first);
	CU_ASSERT_EQUAL_FATAL(regen_streams_build(rs, want), 0);
}

/*
 * Each CPU's records cut by a builder of its own, then merged (either
 * into the other), as pathregen's threads do: the streams one builder of
 * every record makes, on random owners with ENTERs, FORKs (renumbered in
 * the merge) and losses on both CPUs, a CPU's last records cut after the
 * merge. Two builders given the same CPU's records are refused.
 */
static void test_merge(void)
{
	static struct rec_writer w;
	unsigned int seed = unit_seed() * 7 + 1, round, forks = 0;

	for (round = 0; round < 60; round++) {
		struct regen_streams_builder *b[NCPU];
		struct tr_records rs;
		struct regen_streams want, got;
		size_t i;

		random_trace(&w, &seed, NCPU, 120, 1, round & 2, &rs, &want);
		CU_ASSERT_EQUAL_FATAL(regen_streams_begin(&b[0], 1), 0);
		CU_ASSERT_EQUAL_FATAL(regen_streams_begin(&b[1], 2), 0);
		/* CPU 1's second half after the merge: the merged builder goes on with it */
		for (i = 0; i < rs.n; i++)
			if (rs.recs[i].cpu == 0 || i < rs.n / 2)
				CU_ASSERT_EQUAL(regen_streams_add(b[rs.recs[i].cpu], &rs, i, 1), 0);
		CU_ASSERT_EQUAL(regen_streams_merge(b[round & 1], b[!(round & 1)]), 0);
		for (i = rs.n / 2; i < rs.n; i++)
			if (rs.recs[i].cpu == 1)
				CU_ASSERT_EQUAL(regen_streams_add(b[round & 1], &rs, i, 1), 0);
		CU_ASSERT_EQUAL_FATAL(regen_streams_finish(b[round & 1], &got), 0);
		CU_ASSERT(rt_same_streams(&want, &got));
		forks += want.nforks;
		regen_streams_free(&want);
		regen_streams_free(&got);
		/* CPU 0's records given to both: refused, and the builder keeps the error */
		CU_ASSERT_EQUAL_FATAL(regen_streams_begin(&b[0], 1), 0);
		CU_ASSERT_EQUAL_FATAL(regen_streams_begin(&b[1], 1), 0);
		for (i = 0; i < rs.n; i++)
			if (rs.recs[i].cpu == 0) {
				regen_streams_add(b[0], &rs, i, 1);
				regen_streams_add(b[1], &rs, i, 1);
			}
		CU_ASSERT_EQUAL(regen_streams_merge(b[0], b[1]), -PT_EINVAL);
		CU_ASSERT_EQUAL(regen_streams_finish(b[0], &got), -PT_EINVAL);
		regen_streams_free(&got);
		tr_records_free(&rs);
	}
	CU_ASSERT(forks > 60);	/* the renumbering was tried */
}

/*
 * Three CPUs' builders merged one after another, as pathregen's threads
 * do with three CPUs' pages: 2 into 1 and then 1 into 0 (pages moved in,
 * then a builder with pages moved in merged: its pages copied, its gap
 * moved along), or 1 into 0 and then 2 into 0 (the merged builder grown
 * by a copy, then pages moved in again). The streams one builder of every
 * record makes, in both orders.
 */
static void test_merge_chain(void)
{
	static struct rec_writer w;
	unsigned int seed = unit_seed() * 11 + 3, round;
	struct regen_streams_builder *b[3];
	struct regen_streams want, got;
	struct tr_records rs;
	size_t i;

	for (round = 0; round < 40; round++) {
		random_trace(&w, &seed, 3, 700, 0, 0, &rs, &want);
		for (i = 0; i < 3; i++)
			CU_ASSERT_EQUAL_FATAL(regen_streams_begin(&b[i], 1), 0);
		for (i = 0; i < rs.n; i++)
			CU_ASSERT_EQUAL(regen_streams_add(b[rs.recs[i].cpu], &rs, i, 1), 0);
		if (round & 1) {
			CU_ASSERT_EQUAL(regen_streams_merge(b[1], b[2]), 0);
			CU_ASSERT_EQUAL(regen_streams_merge(b[0], b[1]), 0);
		} else {
			CU_ASSERT_EQUAL(regen_streams_merge(b[0], b[1]), 0);
			CU_ASSERT_EQUAL(regen_streams_merge(b[0], b[2]), 0);
		}
		CU_ASSERT_EQUAL_FATAL(regen_streams_finish(b[0], &got), 0);
		CU_ASSERT(rt_same_streams(&want, &got));
		CU_ASSERT(want.nstreams == 4);
		regen_streams_free(&want);
		regen_streams_free(&got);
		tr_records_free(&rs);
	}
}

UNIT_SUITE(streams,
	   { "sample trace: three owners", test_sample_streams },
	   { "migration mid-function, late flush, decode order", test_migration },
	   { "where each marker was recorded", test_where },
	   { "overrun gaps in every stream that may have lost a segment", test_overrun_gaps },
	   { "unowned prefix: counted, a gap for the others", test_unowned_prefix },
	   { "missed probe hits with their interval", test_missed_interval },
	   { "random owners across CPUs, stamps in or out of order: bits and markers",
	     test_random_streams },
	   { "three CPUs' builders merged in a chain, either order", test_merge_chain },
	   { "each CPU cut by a builder of its own, merged: as one builder", test_merge })
