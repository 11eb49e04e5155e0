// SPDX-License-Identifier: GPL-2.0
/*
 * Ring-buffer pages built in the kernel's encoding (rbpage.c) and decoded
 * through libtraceevent's kbuffer (pages.c): records, timestamps, the coded
 * records written bit by bit from pathtrace_abi.h (independently of the
 * coder, which tests/unit/test_coder.c round-trips), missed events, and
 * corrupt pages that must become counted losses, never crashes.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "rbpage.h"
#include "tf_sample.h"
#include "unit.h"

#define PS 4096u

static uint8_t page[PS];

static void add(struct rbpage *pg, uint64_t ts, uint16_t type, uint32_t arg,
		const uint64_t *body, uint32_t nwords)
{
	uint8_t rec[8 + 8 * 64];
	uint32_t len = rbrec(rec, type, arg, body, nwords);

	CU_ASSERT_EQUAL_FATAL(rbpage_add(pg, ts, rec, len), 0);
}

static void test_records_and_timestamps(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint64_t owner[2] = { PT_OWNER(PT_OWNER_TASK, 42), 123456789 };
	uint64_t bits1 = 0x2d, at = 0x81234567ull | 4ull << 32, ret = 0xffffffff81234567ull;
	uint64_t big[20];	/* 1280 bits: 168-byte record, a type_len 0 event */
	uint64_t loss[4] = { 7, 3, 100, 200 };
	uint32_t i;

	for (i = 0; i < 20; i++)
		big[i] = 0x0123456789abcdefull * (i + 1);
	rbpage_init(&pg, page, PS, 1000);
	add(&pg, 1000, PT_REC_OWNER, 0, owner, 2);
	add(&pg, 1005, PT_REC_BITS, 6, &bits1, 1);
	add(&pg, 1005 + (1ull << 30), PT_REC_ENTER_AT, 9, &at, 1);	/* needs TIME_EXTEND */
	add(&pg, 1ull << 40, PT_REC_BITS, 1280, big, 20);
	add(&pg, (1ull << 40) + 1, PT_REC_LOSS, PT_LOSS_MISSED, loss, 4);
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 3, page, PS), 0);
	CU_ASSERT_EQUAL_FATAL(rs.n, 5);
	CU_ASSERT_EQUAL(rs.bad_pages + rs.bad_events + rs.bad_records, 0);
	CU_ASSERT_EQUAL(rs.recs[0].type, PT_REC_OWNER);
	CU_ASSERT_EQUAL(rs.recs[0].ts, 1000);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[0])[0], owner[0]);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[0])[1], owner[1]);
	CU_ASSERT_EQUAL(rs.recs[1].type, PT_REC_BITS);
	CU_ASSERT_EQUAL(rs.recs[1].arg, 6);
	CU_ASSERT_EQUAL(rs.recs[1].ts, 1005);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[1])[0], 0x2d);
	CU_ASSERT_EQUAL(rs.recs[2].ts, 1005 + (1ull << 30));
	CU_ASSERT_EQUAL(rs.recs[2].type, PT_REC_ENTER);	/* with its full return address */
	CU_ASSERT_EQUAL(rs.recs[2].arg, 9);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[2])[0], ret);
	CU_ASSERT_EQUAL(rs.recs[2].pending, 4);
	CU_ASSERT_EQUAL(rs.recs[3].ts, 1ull << 40);
	CU_ASSERT_EQUAL(rs.recs[3].nwords, 20);
	CU_ASSERT_EQUAL(memcmp(tr_body(&rs, &rs.recs[3]), big, sizeof(big)), 0);
	CU_ASSERT_EQUAL(rs.recs[4].type, PT_REC_LOSS);
	CU_ASSERT_EQUAL(rs.recs[4].arg, PT_LOSS_MISSED);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[4])[0], 7);
	for (i = 0; i < rs.n; i++) {
		CU_ASSERT_EQUAL(rs.recs[i].cpu, 3);
		CU_ASSERT_EQUAL(rs.recs[i].synthetic, 0);
	}
	tr_records_free(&rs);
}

/* Coded bits (ENTER codes, segments), written by the rules of pathtrace_abi.h. */
struct ewriter {
	uint64_t w[8];
	uint32_t n;
};

static void eput(struct ewriter *e, uint64_t v, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++, e->n++)
		e->w[e->n / 64] |= ((v >> i) & 1) << (e->n % 64);
}

/* A record a test expects: its type, arg, first body words and pending bits; ANY: any. */
#define ANY (~0ull)
struct want_rec {
	uint16_t type;
	uint64_t arg, w0, w1, pending;
};

static void check_recs(const struct tr_records *rs, const struct want_rec *want, size_t n)
{
	size_t i;

	CU_ASSERT_EQUAL_FATAL(rs->n, n);
	for (i = 0; i < n; i++) {
		const struct tr_rec *r = &rs->recs[i];
		const uint64_t *w = tr_body(rs, r);

		CU_ASSERT_EQUAL(r->type, want[i].type);
		CU_ASSERT(want[i].arg == ANY || r->arg == want[i].arg);
		CU_ASSERT(want[i].w0 == ANY || (r->nwords > 0 && w[0] == want[i].w0));
		CU_ASSERT(want[i].w1 == ANY || (r->nwords > 1 && w[1] == want[i].w1));
		CU_ASSERT(want[i].pending == ANY || r->pending == want[i].pending);
	}
}

/* An Elias gamma code of v >= 1: k zeros, a one, the k low bits. */
static void egamma(struct ewriter *e, uint32_t v)
{
	uint32_t k = 0;

	while (v >> (k + 1))
		k++;
	eput(e, 1ull << k, k + 1);
	eput(e, v, k);
}

/*
 * A record whose body is the whole u32 the bitstring e takes, cut bytes
 * short (SEGMENTS).
 */
static void add_u32s(struct rbpage *pg, uint64_t ts, uint16_t type, uint32_t arg,
		     const struct ewriter *e, uint32_t cut)
{
	uint8_t rec[8 + sizeof(e->w)];
	struct pt_rec h = { .type = type, .arg = arg };
	uint32_t nbytes = (e->n + 31) / 32 * 4 - cut;

	h.len = (uint16_t)(8 + nbytes);
	memcpy(rec, &h, 8);
	memcpy(rec + 8, e->w, nbytes);
	CU_ASSERT_EQUAL_FATAL(rbpage_add(pg, ts, rec, h.len), 0);
}

/* An Exp-Golomb code of order k of v (PT_REC_SEGMENTS lengths): gamma of (v >> k) + 1, k bits. */
static void eexpg(struct ewriter *e, uint32_t v, uint32_t k)
{
	egamma(e, (v >> k) + 1);
	eput(e, v, k);
}

/*
 * A SEGMENTS segment's head and lengths: owner rank r (r < 0: the owner in
 * full), the stamp delta as Exp-Golomb(16), nbits and nebits.
 */
static void esegs_head(struct ewriter *e, int r, uint64_t owner, uint32_t delta, uint32_t nbits,
		       uint32_t nebits)
{
	if (r < 0) {
		eput(e, 3, 2);
		eput(e, PT_SEG_OWNER_CODE(owner), 32);
	} else {
		eput(e, (uint32_t)r, 2);
	}
	eexpg(e, delta, PT_SEG_DELTA_K);
	eexpg(e, nbits, PT_SEG_NBITS_K);
	eexpg(e, nebits, PT_SEG_NEBITS_K);
}

/* An ENTER from the candidates: 0, r zeros and a one (its rank r). */
static void ecand(struct ewriter *e, uint32_t r)
{
	eput(e, 0, 1 + r);
	eput(e, 1, 1);
}

/*
 * An ENTER not among the candidates: 0 and PT_ENTERS_CANDS
 * zeros, its caller (kind 2 untraced: 1; 4 slot: 01; 0 address: 00), its
 * function's recent rank (15: then its id), then slot or address.
 */
static void enew(struct ewriter *e, uint32_t kind, uint32_t rank, uint32_t func_id,
		  uint32_t extra)
{
	eput(e, 0, 1 + PT_ENTERS_CANDS);
	if (kind == 2)
		eput(e, 1, 1);
	else
		eput(e, kind == 4 ? 2 : 0, 2);
	eput(e, rank, 4);
	if (rank == PT_ENTERS_RECENT)
		egamma(e, func_id + 1);
	if (kind == 4)
		eput(e, extra, 6);
	else if (kind == 0)
		eput(e, extra, 32);
}

/* An advance: its rank r among y's (r zeros, a one), or r = 4: 4 zeros and Rice. */
static void eadv(struct ewriter *e, uint32_t r, uint32_t adv)
{
	uint32_t q;

	eput(e, 0, r);
	if (r < PT_ENTERS_ADVS) {
		eput(e, 1, 1);
		return;
	}
	for (q = adv >> PT_ENTERS_RICE_K; q; q--)
		eput(e, 1, 1);
	eput(e, 0, 1);
	eput(e, adv, PT_ENTERS_RICE_K);
}

/*
 * ENTER_AT reads as an ENTER with its full return address and pending bits,
 * and fills that address's slot on its CPU: a coded ENTER of a traced
 * caller then names it by slot. A loss empties the slots: the same code
 * after it names an empty slot (return address unknown, never guessed),
 * and another CPU's slots were never filled.
 */
static void test_enter_at(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint32_t lo = 0x81234567u, slot = PT_ENTER_SLOT(lo);
	uint64_t at = (uint64_t)lo | 5ull << 32, loss[4] = { 3, 0, 0, 0 };
	uint64_t ret = 0xffffffff00000000ull | lo;
	struct ewriter a = { { 0 }, 0 };
	const struct want_rec want[] = {
		{ PT_REC_ENTER, 7, ret, ANY, 5 },
		{ PT_REC_ENTER, 9, ret, ANY, 4 },	/* by slot */
		{ PT_REC_LOSS, PT_LOSS_OVERRUN, 3, ANY, ANY },
		{ PT_REC_ENTER, 9, 0, ANY, 4 },	/* the slot is empty now */
		{ PT_REC_ENTER, 9, 0, ANY, 4 },	/* cpu 0: never filled */
	};

	enew(&a, 4, 15, 9, slot);
	eadv(&a, PT_ENTERS_ADVS, 4);
	rbpage_init(&pg, page, PS, 10);
	add(&pg, 10, PT_REC_ENTER_AT, 7, &at, 1);
	add(&pg, 11, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, a.n), a.w, 1);
	add(&pg, 12, PT_REC_LOSS, PT_LOSS_OVERRUN, loss, 4);
	add(&pg, 13, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, a.n), a.w, 1);
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 1, page, PS), 0);
	rbpage_init(&pg, page, PS, 20);
	add(&pg, 20, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, a.n), a.w, 1);
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 0, page, PS), 0);
	check_recs(&rs, want, sizeof(want) / sizeof(want[0]));
	CU_ASSERT_EQUAL(rs.bad_records, 0);
	tr_records_free(&rs);
}

/*
 * SEGMENTS, written bit by bit from pathtrace_abi.h: segments back to back,
 * each its head (owner by rank as the segments before it in the same
 * record left them, or in full; Exp-Golomb(16) stamp delta), its
 * Exp-Golomb lengths (order 6 and 4), bits across a word boundary and
 * ENTER codes. A segment cut off
 * by the body loses it and the rest (one loss each), 32 bits or more after
 * the last segment or no segment at all make the record corrupt.
 */
static void test_segments(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	struct ewriter a = { { 0 }, 0 }, b = { { 0 }, 0 }, c = { { 0 }, 0 }, e = { { 0 }, 0 };
	struct ewriter en = { { 0 }, 0 };
	uint64_t own[2] = { PT_OWNER(PT_OWNER_TASK, 5), 1000 };
	const struct want_rec want[] = {
		{ PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_TASK, 5), 1000, ANY },
		{ PT_REC_OWNER, 3, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 71000, ANY },	/* in full */
		{ PT_REC_ENTER, 7, 0, ANY, 2 },
		{ PT_REC_BITS, 5, 0x15, ANY, ANY },
		{ PT_REC_OWNER, 3, PT_OWNER(PT_OWNER_TASK, 5), 71005, ANY },	/* rank 0 */
		{ PT_REC_BITS, 3, 5, ANY, ANY },
		{ PT_REC_OWNER, 3, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 371005, ANY },	/* rank 0 */
		{ PT_REC_BITS, 70, 0x0123456789abcdefull, 0x2a, ANY },
		{ PT_REC_OWNER, 3, PT_OWNER(PT_OWNER_TASK, 5), 371006, ANY },	/* 2nd record */
		{ PT_REC_BITS, 1, 1, ANY, ANY },
		{ PT_REC_LOSS, TR_LOSS_CORRUPT, 1, ANY, ANY },	/* one segment cut off */
		{ PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_TASK, 5), 1000, ANY },	/* a stamp again */
		{ PT_REC_OWNER, 3, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 1000, ANY },
		{ PT_REC_BITS, 2, 3, ANY, ANY },
		/* 40 bits after it, then no segments at all: two losses in a row, one marker */
		{ PT_REC_LOSS, TR_LOSS_CORRUPT, 2, ANY, ANY },
	};

	/* record 1: three segments */
	eput(&a, 3, 2);					/* the owner in full */
	eput(&a, PT_SEG_OWNER_CODE(PT_OWNER(PT_OWNER_SOFTIRQ, 1)), 32);
	egamma(&a, (70000 >> 16) + 1);			/* delta 70000 */
	eput(&a, 70000 & 0xffff, 16);
	eexpg(&a, 5, PT_SEG_NBITS_K);			/* nbits 5: "1", then 000101 */
	enew(&en, 2, 15, 7, 0);				/* an ENTER: untraced caller, func 7, */
	eadv(&en, PT_ENTERS_ADVS, 2);			/* at bit 2 */
	eexpg(&a, en.n, PT_SEG_NEBITS_K);
	eput(&a, 0x15, 5);
	eput(&a, en.w[0], en.n);
	esegs_head(&a, 0, 0, 5, 3, 0);			/* rank 0: task 5 */
	eput(&a, 5, 3);
	esegs_head(&a, 0, 0, 300000, 70, 0);		/* rank 0: softirq 1 again */
	eput(&a, 0x0123456789abcdefull, 64);
	eput(&a, 0x2a, 6);
	/* record 2: a segment, then one whose 100 bits the body does not hold */
	esegs_head(&b, 0, 0, 1, 1, 0);
	eput(&b, 1, 1);
	esegs_head(&b, 0, 0, 0, 100, 0);
	eput(&b, 0xff, 8);
	/* record 3 (the loss forgot stamp and owners): a segment, then 40 zero bits */
	esegs_head(&c, -1, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 0, 2, 0);
	eput(&c, 3, 2);
	eput(&c, 0, 40);
	eput(&e, 0, 32);
	rbpage_init(&pg, page, PS, 10);
	add(&pg, 10, PT_REC_OWNER, 0, own, 2);
	add_u32s(&pg, 11, PT_REC_SEGMENTS, 3, &a, 0);
	add_u32s(&pg, 12, PT_REC_SEGMENTS, 2, &b, 0);
	add(&pg, 13, PT_REC_OWNER, 0, own, 2);
	add_u32s(&pg, 13, PT_REC_SEGMENTS, 1, &c, 0);
	add_u32s(&pg, 14, PT_REC_SEGMENTS, 0, &e, 0);
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 3, page, PS), 0);
	check_recs(&rs, want, sizeof(want) / sizeof(want[0]));
	CU_ASSERT_EQUAL(rs.bad_records, 3);
	tr_records_free(&rs);
}

/*
 * ENTER codes (PT_REC_BITS_ENTERS, PT_REC_SEGMENTS), written bit by bit
 * from pathtrace_abi.h for one function entered again and again from
 * untraced code: new items by id or recent rank, items from the candidates
 * that followed the last three functions, the one bit that repeats item
 * and advance, four advances per (prev, last, function) named by rank, the
 * one used moving to the front and the last dropping out when a new one
 * comes. Tables carry into SEGMENTS; after a loss an advance ranked among
 * none is a corrupt record.
 */
static void test_enter_codes(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint64_t loss[4] = { 1, 0, 0, 0 }, own[2] = { PT_OWNER(PT_OWNER_TASK, 5), 1000 };
	struct ewriter a = { { 0 }, 0 }, sg = { { 0 }, 0 }, en = { { 0 }, 0 };
	struct ewriter bad = { { 0 }, 0 };
	const struct want_rec want[] = {
		{ PT_REC_ENTER, 9, 0, ANY, 3 },
		{ PT_REC_ENTER, 9, 0, ANY, 8 },
		{ PT_REC_ENTER, 9, 0, ANY, 14 },
		{ PT_REC_ENTER, 9, 0, ANY, 20 },	/* rank 0 */
		{ PT_REC_ENTER, 9, 0, ANY, 29 },	/* new advances: 10, 7 */
		{ PT_REC_ENTER, 9, 0, ANY, 31 },	/* 3, 10, 7 */
		{ PT_REC_ENTER, 9, 0, ANY, 32 },	/* 2, 3, 10, 7 */
		{ PT_REC_ENTER, 9, 0, ANY, 38 },	/* rank 3: 7, 2, 3, 10 */
		{ PT_REC_ENTER, 9, 0, ANY, 40 },	/* rank 2: 3, 7, 2, 10 */
		{ PT_REC_ENTER, 9, 0, ANY, 46 },	/* rank 1: 7, 3, 2, 10 */
		{ PT_REC_ENTER, 9, 0, ANY, 52 },	/* repeated */
		{ PT_REC_ENTER, 9, 0, ANY, 61 },	/* rank 3: 10, 7, 3, 2 */
		{ PT_REC_ENTER, 9, 0, ANY, 65 },	/* new: 5, 10, 7, 3 (2 drops out) */
		{ PT_REC_ENTER, 9, 0, ANY, 66 },	/* 2 again: new */
		{ PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_TASK, 5), 1000, ANY },
		{ PT_REC_OWNER, 3, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 1010, ANY },	/* SEGMENTS */
		{ PT_REC_ENTER, 9, 0, ANY, 4 },		/* the tables carried: rank 1 */
		{ PT_REC_BITS, 2, 3, ANY, ANY },
		{ PT_REC_LOSS, PT_LOSS_OVERRUN, ANY, ANY, ANY },
		{ PT_REC_LOSS, TR_LOSS_CORRUPT, 1, ANY, ANY },	/* rank 1 of none */
	};

	/* U10 each time; (pprev, prev, last) picks the candidates, (prev, last, 10) y */
	enew(&a, 2, 15, 9, 0);		/* (0, 0, 0) */
	eadv(&a, 4, 3);
	enew(&a, 2, 0, 9, 0);		/* (0, 0, 10) */
	eadv(&a, 4, 5);
	enew(&a, 2, 0, 9, 0);		/* (0, 10, 10); y (10, 10, 10) learns 7 */
	eadv(&a, 4, 6);
	enew(&a, 2, 0, 9, 0);		/* (10, 10, 10) has no candidate yet */
	eadv(&a, 0, 6);
	ecand(&a, 0);			/* U10, but not with advance 6 */
	eadv(&a, 4, 9);
	ecand(&a, 0);
	eadv(&a, 4, 2);
	ecand(&a, 0);
	eadv(&a, 4, 1);
	ecand(&a, 0);
	eadv(&a, 3, 0);		/* 6 */
	ecand(&a, 0);
	eadv(&a, 2, 0);		/* 2 */
	ecand(&a, 0);
	eadv(&a, 1, 0);		/* 6 */
	eput(&a, 1, 1);			/* U10 with 6 again */
	ecand(&a, 0);
	eadv(&a, 3, 0);		/* 9 */
	ecand(&a, 0);
	eadv(&a, 4, 4);
	ecand(&a, 0);
	eadv(&a, 4, 1);
	/* a SEGMENTS of one segment: softirq 1 in full, 10 ns on, 2 bits, an ENTER */
	ecand(&en, 0);
	eadv(&en, 1, 0);		/* 2, 5, 10, 7: 5 - 1 = 4 */
	esegs_head(&sg, -1, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 10, 2, en.n);
	eput(&sg, 3, 2);
	eput(&sg, en.w[0], en.n);
	enew(&bad, 2, 15, 9, 0);
	eadv(&bad, 1, 0);
	CU_ASSERT_FATAL(a.n <= 64 * 4 && en.n <= 64);
	rbpage_init(&pg, page, PS, 10);
	add(&pg, 10, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, a.n), a.w, (a.n + 63) / 64);
	add(&pg, 17, PT_REC_OWNER, 0, own, 2);
	add_u32s(&pg, 18, PT_REC_SEGMENTS, 1, &sg, 0);
	add(&pg, 19, PT_REC_LOSS, PT_LOSS_OVERRUN, loss, 4);
	add(&pg, 20, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, bad.n), bad.w, 1);
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 3, page, PS), 0);
	check_recs(&rs, want, sizeof(want) / sizeof(want[0]));
	CU_ASSERT_EQUAL(rs.bad_records, 1);
	tr_records_free(&rs);
}

/*
 * ENTER codes are read against per-CPU state, which exists for CPU numbers
 * a kernel can have (below 8192): on CPU 8191 a BITS_ENTERS reads as its
 * ENTER, on CPU 9000 it is a corrupt record (a counted loss), not a
 * failure for want of memory.
 */
static void test_enter_codes_cpu_range(void)
{
	struct ewriter a = { { 0 }, 0 };
	struct rbpage pg;
	uint32_t cpu;

	enew(&a, 2, 15, 11, 0);
	eadv(&a, PT_ENTERS_ADVS, 3);
	for (cpu = 8191; cpu <= 9000; cpu += 809) {
		struct tr_records rs = { 0 };

		rbpage_init(&pg, page, PS, 10);
		add(&pg, 10, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, a.n), a.w, 1);
		rbpage_pad(&pg);
		CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, cpu, page, PS), 0);
		CU_ASSERT_EQUAL_FATAL(rs.n, 1);
		CU_ASSERT_EQUAL(rs.recs[0].type, cpu < 8192 ? PT_REC_ENTER : PT_REC_LOSS);
		CU_ASSERT_EQUAL(rs.recs[0].arg, cpu < 8192 ? 11 : TR_LOSS_CORRUPT);
		CU_ASSERT_EQUAL(rs.bad_records, cpu < 8192 ? 0 : 1);
		tr_records_free(&rs);
	}
}

static void test_missed_events(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint64_t owner[2] = { PT_OWNER(PT_OWNER_IDLE, 0), 5 };

	rbpage_init(&pg, page, PS, 50);
	add(&pg, 60, PT_REC_OWNER, 0, owner, 2);
	rbpage_set_missed(&pg, 17);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 0, page, PS), 0);
	CU_ASSERT_EQUAL_FATAL(rs.n, 2);
	CU_ASSERT_EQUAL(rs.recs[0].type, PT_REC_LOSS);
	CU_ASSERT_EQUAL(rs.recs[0].arg, PT_LOSS_OVERRUN);
	CU_ASSERT_EQUAL(rs.recs[0].synthetic, 1);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[0])[0], 17);
	CU_ASSERT_EQUAL(rs.recs[1].type, PT_REC_OWNER);
	CU_ASSERT_EQUAL(rs.missed_pages, 1);

	/* Not stored (no room on the page): the count is unknown, 0. */
	rbpage_init(&pg, page, PS, 50);
	add(&pg, 60, PT_REC_OWNER, 0, owner, 2);
	rbpage_set_missed(&pg, -1);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 0, page, PS), 0);
	CU_ASSERT_EQUAL_FATAL(rs.n, 4);
	CU_ASSERT_EQUAL(rs.recs[2].arg, PT_LOSS_OVERRUN);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[2])[0], 0);
	CU_ASSERT_EQUAL(rs.missed_pages, 2);
	tr_records_free(&rs);
}

static void test_corrupt_commit(void)
{
	struct tr_records rs = { 0 };
	uint64_t commits[] = { PS, PS - 15, 1ull << 29, (1ull << 30) | 8, 1ull << 40 };
	unsigned int i;

	for (i = 0; i < sizeof(commits) / sizeof(commits[0]); i++) {
		memset(page, 0x41, PS);
		memcpy(page + 8, &commits[i], 8);
		CU_ASSERT_EQUAL(tr_decode_page(&rs, 1, page, PS), 0);
	}
	/* Merged into one CORRUPT loss per run of bad input, each page counted. */
	CU_ASSERT_EQUAL(rs.bad_pages, 5);
	CU_ASSERT_EQUAL_FATAL(rs.n, 1);
	CU_ASSERT_EQUAL(rs.recs[0].arg, TR_LOSS_CORRUPT);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[0])[0], 5);
	CU_ASSERT_EQUAL(tr_decode_page(&rs, 1, page, 16), -PT_EINVAL);
	tr_records_free(&rs);
}

static void test_event_beyond_commit(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint64_t owner[2] = { PT_OWNER(PT_OWNER_TASK, 7), 1 };
	uint32_t hdr = 0, len = 4000;

	rbpage_init(&pg, page, PS, 0);
	add(&pg, 1, PT_REC_OWNER, 0, owner, 2);
	/* A type_len 0 event claiming 4000 bytes where 8 are committed. */
	memcpy(page + 16 + pg.tail, &hdr, 4);
	memcpy(page + 16 + pg.tail + 4, &len, 4);
	pg.tail += 8;
	{
		uint64_t c = pg.tail;

		memcpy(page + 8, &c, 8);
	}
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 0, page, PS), 0);
	CU_ASSERT_EQUAL_FATAL(rs.n, 2);
	CU_ASSERT_EQUAL(rs.recs[0].type, PT_REC_OWNER);
	CU_ASSERT_EQUAL(rs.recs[1].type, PT_REC_LOSS);
	CU_ASSERT_EQUAL(rs.recs[1].arg, TR_LOSS_CORRUPT);
	CU_ASSERT_EQUAL(rs.bad_events, 1);
	tr_records_free(&rs);
}

static void test_bad_records(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint64_t owner[2] = { PT_OWNER(PT_OWNER_TASK, 7), 1 }, w[3] = { 1, 2, 3 };
	uint8_t rec[64];
	struct pt_rec h;

	rbpage_init(&pg, page, PS, 0);
	add(&pg, 1, PT_REC_OWNER, 0, owner, 2);
	add(&pg, 2, PT_REC_BITS, 65, w, 1);		/* 65 bits need 2 words */
	add(&pg, 3, PT_REC_ENTER_AT, 1, w, 2);		/* ENTER_AT body is one word */
	add(&pg, 4, PT_REC_LOSS, 9, w, 2);		/* no such loss kind */
	add(&pg, 5, PT_REC_BITS, 0x80000001u, w, 1);	/* PARTIAL with other bits */
	h = (struct pt_rec){ .type = PT_REC_BITS, .len = 12, .arg = 3 };	/* len not 8-aligned */
	memcpy(rec, &h, 8);
	CU_ASSERT_EQUAL_FATAL(rbpage_add(&pg, 6, rec, 16), 0);
	h = (struct pt_rec){ .type = PT_REC_BITS, .len = 24, .arg = 3 };	/* len > event */
	memcpy(rec, &h, 8);
	CU_ASSERT_EQUAL_FATAL(rbpage_add(&pg, 7, rec, 16), 0);
	add(&pg, 8, 77, 0, w, 3);			/* unknown type: skipped */
	add(&pg, 9, PT_REC_BITS, 3, w, 1);		/* good again */
	add(&pg, 10, PT_REC_BITS, PT_BITS_PARTIAL, w + 2, 1);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 0, page, PS), 0);
	CU_ASSERT_EQUAL(rs.bad_records, 6);
	CU_ASSERT_EQUAL(rs.unknown_records, 1);
	CU_ASSERT_EQUAL_FATAL(rs.n, 4);
	CU_ASSERT_EQUAL(rs.recs[0].type, PT_REC_OWNER);
	CU_ASSERT_EQUAL(rs.recs[1].arg, TR_LOSS_CORRUPT);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[1])[0], 6);
	CU_ASSERT_EQUAL(rs.recs[2].type, PT_REC_BITS);
	CU_ASSERT_EQUAL(rs.recs[2].arg, 3);
	CU_ASSERT_EQUAL(rs.recs[3].arg, PT_BITS_PARTIAL);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[3])[0], 3);
	tr_records_free(&rs);
}

/* Property: random records with random time deltas decode to exactly what was written. */
static void test_random_pages(void)
{
	unsigned int seed = unit_seed();
	unsigned int round;

	for (round = 0; round < 200; round++) {
		struct tr_records rs = { 0 };
		struct rbpage pg;
		uint64_t want_ts[512], want_w[512][40];
		uint32_t want_arg[512], want_n[512], n = 0, i;
		uint64_t ts = (uint64_t)rand_r(&seed) << 20;

		rbpage_init(&pg, page, PS, ts);
		for (;;) {
			uint8_t rec[8 + 8 * 40];
			uint32_t nw = rand_r(&seed) % 40 + 1, len;
			uint32_t nbits = (nw - 1) * 64 + rand_r(&seed) % 64 + 1;

			ts += rand_r(&seed) % 3 ? (uint64_t)(rand_r(&seed) % 100) :
			      (uint64_t)rand_r(&seed) << 8;
			for (i = 0; i < nw; i++)
				want_w[n][i] = ((uint64_t)rand_r(&seed) << 33) ^
					       rand_r(&seed);
			len = rbrec(rec, PT_REC_BITS, nbits, want_w[n], nw);
			if (n == 512 || rbpage_add(&pg, ts, rec, len))
				break;
			want_ts[n] = ts;
			want_arg[n] = nbits;
			want_n[n++] = nw;
		}
		if (round & 1)
			rbpage_pad(&pg);
		CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, round, page, PS), 0);
		CU_ASSERT_EQUAL_FATAL(rs.n, n);
		for (i = 0; i < n; i++) {
			CU_ASSERT_EQUAL(rs.recs[i].ts, want_ts[i]);
			CU_ASSERT_EQUAL(rs.recs[i].arg, want_arg[i]);
			CU_ASSERT_EQUAL_FATAL(rs.recs[i].nwords, want_n[i]);
			CU_ASSERT_EQUAL(memcmp(tr_body(&rs, &rs.recs[i]), want_w[i], 8 * want_n[i]), 0);
		}
		tr_records_free(&rs);
	}
}

/*
 * Length fields that read as negative: kbuffer would walk backwards forever
 * (a check-fuzz hang). The page is cut before them, the prefix kept.
 */
static void test_backward_lengths(void)
{
	static const uint32_t bad[][2] = {
		{ 29 | (1u << 5), 0xfffffff0u },	/* padding, delta 1 */
		{ 29, 0xfffffffcu },			/* padding, delta 0 */
		{ 0, 0 },				/* type_len 0 with array[0] < 4 */
		{ 0, 0x80000000u },			/* type_len 0, huge */
	};
	uint64_t owner[2] = { PT_OWNER(PT_OWNER_TASK, 7), 1 };
	uint32_t k;

	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct tr_records rs = { 0 };
		struct rbpage pg;
		uint64_t c;

		rbpage_init(&pg, page, PS, 0);
		add(&pg, 1, PT_REC_OWNER, 0, owner, 2);
		memcpy(page + 16 + pg.tail, bad[k], 8);
		pg.tail += 64;	/* committed bytes run on past the bad header */
		c = pg.tail;
		memcpy(page + 8, &c, 8);
		CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 0, page, PS), 0);
		CU_ASSERT_EQUAL(rs.n, 2);
		CU_ASSERT_EQUAL(rs.recs[0].type, PT_REC_OWNER);
		CU_ASSERT_EQUAL(rs.recs[1].type, PT_REC_LOSS);
		CU_ASSERT_EQUAL(rs.bad_events, 1);
		tr_records_free(&rs);
	}
}

/* Whether a's records of cpu are b's (all its records), in order. */
static int same_cpu_records(const struct tr_records *a, const struct tr_records *b, uint32_t cpu)
{
	size_t i, j = 0;

	for (i = 0; i < a->n; i++) {
		const struct tr_rec *x = &a->recs[i], *y = &b->recs[j];

		if (x->cpu != cpu)
			continue;
		if (j == b->n || y->cpu != cpu || x->type != y->type || x->arg != y->arg ||
		    x->ts != y->ts || x->nwords != y->nwords || x->pending != y->pending ||
		    x->synthetic != y->synthetic ||
		    memcmp(tr_body(a, x), tr_body(b, y), 8u * x->nwords))
			return 0;
		j++;
	}
	return j == b->n;
}

/*
 * Each CPU's sections decoded alone (tr_decode_tracefile_cpus, as one of
 * several threads does; the sample's CPU 0 has two sections around CPU
 * 1's): that CPU's records of the whole file's decoding, in order, and the
 * counts summed (tr_records_add_counts) the whole's; whole and cut at
 * every few bytes (each CPU's records then end in a loss).
 */
static void test_decode_cpus(void)
{
	size_t size, cut;
	uint8_t *b = sample_bytes(&size);
	unsigned int tried = 0, cut_short = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	for (cut = size; cut > 64; cut = cut > 37 ? cut - 37 : 0) {
		struct tr_records all = { 0 }, part[2] = { { 0 } }, sum = { 0 };
		struct tracefile tf;
		uint8_t cpus[2];
		uint32_t c;

		tracefile_parse(b, cut, &tf);
		if (!tf.npages) {
			tracefile_free(&tf);
			break;
		}
		CU_ASSERT_EQUAL_FATAL(tr_decode_tracefile(&all, &tf), 0);
		for (c = 0; c < 2; c++) {
			cpus[c] = 1;
			cpus[!c] = 0;
			CU_ASSERT_EQUAL_FATAL(tr_decode_tracefile_cpus(&part[c], &tf, cpus, 2, 0, NULL,
								       NULL), 0);
			CU_ASSERT(same_cpu_records(&all, &part[c], c));
			tr_records_add_counts(&sum, &part[c]);
		}
		CU_ASSERT_EQUAL(sum.n, 0);	/* counts only */
		CU_ASSERT_EQUAL(part[0].n + part[1].n, all.n);
		CU_ASSERT_EQUAL(sum.max_cpu, all.max_cpu);
		CU_ASSERT_EQUAL(sum.pages, all.pages);
		CU_ASSERT_EQUAL(sum.cut_cpus, all.cut_cpus);
		CU_ASSERT_EQUAL(sum.page_bytes, all.page_bytes);
		CU_ASSERT_EQUAL(sum.stored_bytes, all.stored_bytes);
		CU_ASSERT_EQUAL(sum.committed_bytes, all.committed_bytes);
		CU_ASSERT_EQUAL(sum.record_bytes, all.record_bytes);
		CU_ASSERT_EQUAL(sum.records_read, all.records_read);
		CU_ASSERT_EQUAL(sum.enter_bytes, all.enter_bytes);
		CU_ASSERT_EQUAL(sum.bad_records + sum.bad_pages + sum.bad_events,
				all.bad_records + all.bad_pages + all.bad_events);
		cut_short += !tf.complete && all.cut_cpus == 2;
		tried++;
		tr_records_free(&all);
		tr_records_free(&part[0]);
		tr_records_free(&part[1]);
		tracefile_free(&tf);
	}
	CU_ASSERT(tried > 10);
	CU_ASSERT(cut_short > 0);
	free(b);
}

UNIT_SUITE(pages,
	   { "records and timestamps (TIME_EXTEND, type_len 0, padding)", test_records_and_timestamps },
	   { "ENTER_AT: its return address fills its slot, which a coded ENTER names; forgotten at a loss",
	     test_enter_at },
	   { "SEGMENTS: segments back to back with Exp-Golomb lengths; a cut-off segment, a bad end, none at all a loss",
	     test_segments },
	   { "ENTER codes: candidates after three functions, advances by rank, carried into SEGMENTS, none after a loss",
	     test_enter_codes },
	   { "ENTER codes on a CPU number no kernel has: a corrupt record, no state allocated",
	     test_enter_codes_cpu_range },
	   { "missed-events flags become LOSS(OVERRUN)", test_missed_events },
	   { "impossible commit: counted loss, no crash", test_corrupt_commit },
	   { "event beyond commit: prefix kept, loss", test_event_beyond_commit },
	   { "invalid records: loss, unknown types skipped", test_bad_records },
	   { "random pages round trip", test_random_pages },
	   { "length fields that read as negative: cut, no hang", test_backward_lengths },
	   { "each CPU's sections decoded alone: its records of the whole, the counts summed",
	     test_decode_cpus })
