// SPDX-License-Identifier: GPL-2.0
/*
 * Ring-buffer pages built in the kernel's encoding (rbpage.c) and decoded
 * through libtraceevent's kbuffer (pages.c): records, timestamps, missed
 * events, and corrupt pages that must become counted losses, never crashes.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "rbpage.h"
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

/* An ENTER_S as the module writes it: a 4-byte event, its arg alone. */
static void add_enter_s(struct rbpage *pg, uint64_t ts, uint32_t arg)
{
	CU_ASSERT_EQUAL_FATAL(rbpage_add(pg, ts, &arg, sizeof(arg)), 0);
}

static void test_records_and_timestamps(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint64_t owner[2] = { PT_OWNER(PT_OWNER_TASK, 42), 123456789 };
	uint64_t bits1 = 0x2d, ret = 0xffffffff81234567ull;
	uint64_t big[20];	/* 1280 bits: 168-byte record, a type_len 0 event */
	uint64_t loss[2] = { 7, 3 };
	uint32_t i;

	for (i = 0; i < 20; i++)
		big[i] = 0x0123456789abcdefull * (i + 1);
	rbpage_init(&pg, page, PS, 1000);
	add(&pg, 1000, PT_REC_OWNER, 0, owner, 2);
	add(&pg, 1005, PT_REC_BITS, 6, &bits1, 1);
	add(&pg, 1005 + (1ull << 30), PT_REC_ENTER, 9, &ret, 1);	/* needs TIME_EXTEND */
	add(&pg, 1ull << 40, PT_REC_BITS, 1280, big, 20);
	add(&pg, (1ull << 40) + 1, PT_REC_LOSS, PT_LOSS_MISSED, loss, 2);
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
	CU_ASSERT_EQUAL(rs.recs[2].arg, 9);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[2])[0], ret);
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

/*
 * ENTER_AT and ENTER_S read as ENTERs with their full return address and
 * pending bits; an ENTER_S names the return address its CPU's slot got from
 * the last ENTER_AT there, on that CPU only, and forgets it at a
 * LOSS(OVERRUN) of that CPU (the module's slots empty at a refused write);
 * one from a caller outside the traced code has none.
 */
static void test_short_enters(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint32_t lo = 0x81234567u, lo2 = 0x8100aaa0u, slot = PT_ENTER_S_SLOT(lo);
	uint64_t at = (uint64_t)lo | 5ull << 32, at2 = lo2, loss[4] = { 3, 0, 0, 0 };
	uint64_t ret = 0xffffffff00000000ull | lo;

	CU_ASSERT_NOT_EQUAL_FATAL(slot, PT_ENTER_S_SLOT(lo2));
	rbpage_init(&pg, page, PS, 10);
	add(&pg, 10, PT_REC_ENTER_AT, 7, &at, 1);		/* fills the slot */
	add_enter_s(&pg, 11, PT_ENTER_S_ARG(9, 0, 300, slot));
	add(&pg, 12, PT_REC_ENTER_AT, 7, &at2, 1);		/* another slot */
	add_enter_s(&pg, 13, PT_ENTER_S_ARG(9, 0, 0, slot));
	add(&pg, 14, PT_REC_LOSS, PT_LOSS_OVERRUN, loss, 4);
	add_enter_s(&pg, 15, PT_ENTER_S_ARG(9, 0, 1, slot));	/* forgotten */
	add(&pg, 16, PT_REC_ENTER_AT, 7, &at, 1);
	add_enter_s(&pg, 17, PT_ENTER_S_ARG(11, 1, 2, 0));	/* untraced caller */
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 1, page, PS), 0);
	/* the same slot on another CPU was never filled */
	rbpage_init(&pg, page, PS, 20);
	add_enter_s(&pg, 20, PT_ENTER_S_ARG(9, 0, 0, slot));
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 0, page, PS), 0);
	CU_ASSERT_EQUAL_FATAL(rs.n, 9);
	CU_ASSERT_EQUAL(rs.bad_records, 0);
	CU_ASSERT_EQUAL(rs.recs[0].type, PT_REC_ENTER);
	CU_ASSERT_EQUAL(rs.recs[0].arg, 7);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[0])[0], ret);
	CU_ASSERT_EQUAL(rs.recs[0].pending, 5);
	CU_ASSERT_EQUAL(rs.recs[1].type, PT_REC_ENTER);
	CU_ASSERT_EQUAL(rs.recs[1].arg, 9);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[1])[0], ret);
	CU_ASSERT_EQUAL(rs.recs[1].pending, 300);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[3])[0], ret);
	CU_ASSERT_EQUAL(rs.recs[4].type, PT_REC_LOSS);
	CU_ASSERT_EQUAL(rs.recs[5].type, PT_REC_ENTER);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[5])[0], 0);	/* not known: never guessed */
	CU_ASSERT_EQUAL(rs.recs[5].pending, 1);
	/* outside the traced code: no return address, whatever the slots hold */
	CU_ASSERT_EQUAL(rs.recs[7].arg, 11);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[7])[0], 0);
	CU_ASSERT_EQUAL(rs.recs[7].pending, 2);
	CU_ASSERT_EQUAL(rs.recs[8].cpu, 0);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[8])[0], 0);
	tr_records_free(&rs);
}

/* A BITS_ENTERS record's ENTER codes, written by the rules of pathtrace_abi.h. */
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

/* kind 1 predicted, 2 untraced caller, 4 slot, 0 address; adv over the previous ENTER */
static void ecode(struct ewriter *e, uint32_t kind, uint32_t adv, uint32_t func, uint32_t extra)
{
	uint32_t q, k = 0, id = func + 1;

	eput(e, kind, kind == 1 ? 1 : kind == 2 ? 2 : 3);
	for (q = adv >> PT_ENTERS_RICE_K; q; q--)
		eput(e, 1, 1);
	eput(e, 0, 1);
	eput(e, adv, PT_ENTERS_RICE_K);
	if (kind != 1) {
		while (id >> (k + 1))
			k++;
		eput(e, 1ull << k, k + 1);
		eput(e, id, k);
	}
	if (kind == 4)
		eput(e, extra, 6);
	if (kind == 0)
		eput(e, extra, 32);
}

/*
 * BITS_ENTERS reads as its ENTERs in order (positions from the record's
 * first bit, functions given or predicted from the CPU's previous ENTER,
 * return addresses given or from their slot, which a given one fills),
 * then its bits as a BITS record; with no bits, as ENTERs alone. A code cut
 * off, or a prediction after a loss emptied the table, is a corrupt record:
 * a counted loss.
 */
static void test_bits_enters(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint32_t lo = 0x81234567u, slot = PT_ENTER_S_SLOT(lo);
	uint64_t ret = 0xffffffff00000000ull | lo, body[9] = { 0x5a5a };
	struct ewriter a = { { 0 }, 0 }, b = { { 0 }, 0 }, cut = { { 0 }, 0 }, pred = { { 0 }, 0 };

	ecode(&a, 2, 0, 11, 0);		/* untraced caller, at bit 0 */
	ecode(&a, 4, 3, 9, slot);	/* slot still empty here: unknown */
	ecode(&a, 0, 2, 7, lo);		/* fills the slot */
	ecode(&a, 4, 8, 9, slot);	/* at bit 13 */
	ecode(&b, 1, 40, 0, 0);		/* after 9 came 7: predicted 7, at bit 40 */
	ecode(&b, 2, 1, 300, 0);
	ecode(&cut, 0, 0, 5, lo);
	ecode(&pred, 1, 0, 0, 0);
	memcpy(body + 1, a.w, sizeof(a.w));
	rbpage_init(&pg, page, PS, 10);
	add(&pg, 10, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(13, a.n), body, 1 + (a.n + 63) / 64);
	add(&pg, 11, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, b.n), b.w, (b.n + 63) / 64);
	add(&pg, 12, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, cut.n - 8), cut.w,
	    (cut.n + 63) / 64);	/* its address cut off */
	add(&pg, 13, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, pred.n), pred.w, 1);
	add(&pg, 14, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(64, 70), body, 2);	/* short body */
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 1, page, PS), 0);
	CU_ASSERT_EQUAL_FATAL(rs.n, 8);
	CU_ASSERT_EQUAL(rs.recs[0].type, PT_REC_ENTER);
	CU_ASSERT_EQUAL(rs.recs[0].arg, 11);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[0])[0], 0);
	CU_ASSERT_EQUAL(rs.recs[0].pending, 0);
	CU_ASSERT_EQUAL(rs.recs[1].arg, 9);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[1])[0], 0);	/* never guessed */
	CU_ASSERT_EQUAL(rs.recs[1].pending, 3);
	CU_ASSERT_EQUAL(rs.recs[2].arg, 7);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[2])[0], ret);
	CU_ASSERT_EQUAL(rs.recs[2].pending, 5);
	CU_ASSERT_EQUAL(rs.recs[3].arg, 9);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[3])[0], ret);
	CU_ASSERT_EQUAL(rs.recs[3].pending, 13);
	CU_ASSERT_EQUAL(rs.recs[4].type, PT_REC_BITS);
	CU_ASSERT_EQUAL(rs.recs[4].arg, 13);
	CU_ASSERT_EQUAL(rs.recs[4].nwords, 1);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[4])[0], 0x5a5a & 0x1fff);	/* its 13 bits only */
	/* ENTERs alone: no BITS record */
	CU_ASSERT_EQUAL(rs.recs[5].type, PT_REC_ENTER);
	CU_ASSERT_EQUAL(rs.recs[5].arg, 7);
	CU_ASSERT_EQUAL(rs.recs[5].pending, 40);
	CU_ASSERT_EQUAL(rs.recs[6].arg, 300);
	CU_ASSERT_EQUAL(rs.recs[6].pending, 41);
	/* the cut code, the prediction with nothing to predict from, the short body: one loss */
	CU_ASSERT_EQUAL(rs.recs[7].type, PT_REC_LOSS);
	CU_ASSERT_EQUAL(rs.recs[7].arg, TR_LOSS_CORRUPT);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[7])[0], 3);
	CU_ASSERT_EQUAL(rs.bad_records, 3);
	tr_records_free(&rs);
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

/* An ABI 1.9 advance: 1 or 01 (the first or second its pair had), else 00 and Rice(4). */
static void eadv2(struct ewriter *e, int which, uint32_t adv)
{
	uint32_t q;

	if (which) {
		eput(e, which == 1 ? 1 : 2, which);
		return;
	}
	eput(e, 0, 2);
	for (q = adv >> PT_ENTERS_RICE_K2; q; q--)
		eput(e, 1, 1);
	eput(e, 0, 1);
	eput(e, adv, PT_ENTERS_RICE_K2);
}

/* An ABI 1.9 function after kind 01, 001 or 000: 1 (the candidate), else 0 and rank (15: id). */
static void efunc2(struct ewriter *e, int candidate, uint32_t rank, uint32_t func_id)
{
	eput(e, !!candidate, 1);
	if (candidate)
		return;
	eput(e, rank, 4);
	if (rank == PT_ENTERS_RECENT)
		egamma(e, func_id + 1);
}

/*
 * ENTER codes of ABI 1.9 (PT_BITS_ENTERS_CODES2), written bit by bit from
 * pathtrace_abi.h: functions by id (rank 15, gamma of func_id + 1) or by
 * rank among the recent ones, predicted from the last two ENTERs, advances
 * repeated from the same pair of functions; the tables carry over from
 * record to record, are emptied by a loss, and an empty entry named makes
 * the record corrupt. A record without the flag still reads as before 1.9.
 */
static void test_bits_enters_codes2(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint32_t lo = 0x8abcdef0u, slot = PT_ENTER_S_SLOT(lo);
	uint64_t ret = 0xffffffff00000000ull | lo, loss[2] = { 2, 0 }, body[5] = { 0x15 };
	struct ewriter a = { { 0 }, 0 }, b = { { 0 }, 0 }, p1 = { { 0 }, 0 }, r0 = { { 0 }, 0 };
	struct ewriter a1 = { { 0 }, 0 }, v1 = { { 0 }, 0 };
	const uint32_t c2 = PT_BITS_ENTERS_CODES2;
	const struct want_rec want[] = {
		{ PT_REC_ENTER, 11, 0, ANY, 3 },	/* by id */
		{ PT_REC_ENTER, 9, 0, ANY, 23 },
		{ PT_REC_ENTER, 11, ret, ANY, 23 },	/* by rank, its address given */
		{ PT_REC_ENTER, 11, ret, ANY, 25 },	/* its slot */
		{ PT_REC_ENTER, 9, 0, ANY, 20 },	/* the next record: its advance repeated */
		{ PT_REC_ENTER, 11, 0, ANY, 20 },	/* predicted */
		{ PT_REC_ENTER, 4, 0, ANY, 21 },
		{ PT_REC_ENTER, 9, 0, ANY, 21 },
		{ PT_REC_ENTER, 11, 0, ANY, 21 },
		{ PT_REC_ENTER, 11, 0, ANY, 26 },	/* its context's second candidate */
		{ PT_REC_ENTER, 11, 0, ANY, 28 },	/* its pair's second advance */
		{ PT_REC_BITS, 5, 0x15, ANY, ANY },
		{ PT_REC_LOSS, PT_LOSS_OVERRUN, ANY, ANY, ANY },
		/* predicted, ranked and repeated from tables the loss emptied: one loss of 3 */
		{ PT_REC_LOSS, TR_LOSS_CORRUPT, 3, ANY, ANY },
		{ PT_REC_ENTER, 4, ANY, ANY, 7 },	/* codes before 1.9 */
	};

	/* functions as func_id + 1 in the comments: (prev, last) picks the candidates */
	eput(&a, 2, 2);			/* 01: untraced caller */
	efunc2(&a, 0, 15, 11);		/* not among the recent: its id */
	eadv2(&a, 0, 3);		/* at bit 3 */
	eput(&a, 2, 2);
	efunc2(&a, 0, 15, 9);
	eadv2(&a, 0, 20);		/* Rice(4) of 20: 1 0 0100, at bit 23 */
	eput(&a, 0, 3);			/* 000: address given; (12, 10) has no candidate */
	efunc2(&a, 0, 1, 11);		/* rank 1: func 11 */
	eput(&a, lo, 32);
	eadv2(&a, 0, 0);		/* at bit 23 */
	eput(&a, 4, 3);			/* 001: its slot */
	efunc2(&a, 0, 0, 11);		/* rank 0: func 11 again */
	eput(&a, slot, 6);
	eadv2(&a, 0, 2);		/* at bit 25; after 12 came 12 with 2 */
	/* the next record: positions from 0 again, the tables kept */
	eput(&b, 2, 2);
	efunc2(&b, 0, 1, 9);		/* recent: 12, 10: rank 1 is func 9 */
	eadv2(&b, 1, 0);		/* after 12, 10 came 20 bits on: at bit 20 */
	eput(&b, 1, 1);			/* after (12, 10) came 12: predicted */
	eadv2(&b, 1, 0);		/* after 10, 12 came at once: still bit 20 */
	eput(&b, 2, 2);			/* (10, 12): candidates 12, none */
	efunc2(&b, 0, 15, 4);
	eadv2(&b, 0, 1);		/* at bit 21; (10, 12) now has 5, 12 */
	eput(&b, 2, 2);
	efunc2(&b, 0, 2, 9);		/* recent: 5, 12, 10 */
	eadv2(&b, 0, 0);
	eput(&b, 2, 2);
	efunc2(&b, 0, 2, 11);		/* recent: 10, 5, 12 */
	eadv2(&b, 1, 0);		/* after 10, 12 came at once */
	eput(&b, 2, 2);			/* (10, 12) again: not the first candidate, 5, */
	efunc2(&b, 1, 0, 11);		/* the second: 12 */
	eadv2(&b, 0, 5);		/* at bit 26; after 12, 12 came with 2 and now 5 */
	eput(&b, 2, 2);			/* (12, 12): candidates 10, none */
	efunc2(&b, 0, 0, 11);
	eadv2(&b, 2, 0);		/* 2 again: the second advance, at bit 28 */
	eput(&p1, 1, 1);		/* predicted, with the tables empty */
	eput(&r0, 2, 2);
	efunc2(&r0, 0, 0, 0);		/* rank 0 of no recent function */
	eput(&a1, 2, 2);
	efunc2(&a1, 0, 15, 4);
	eadv2(&a1, 2, 0);		/* an advance never seen */
	ecode(&v1, 2, 7, 4, 0);		/* before 1.9 */
	memcpy(body + 1, b.w, (b.n + 63) / 64 * 8);
	rbpage_init(&pg, page, PS, 10);
	add(&pg, 10, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, a.n) | c2, a.w, (a.n + 63) / 64);
	add(&pg, 11, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(5, b.n) | c2, body, 1 + (b.n + 63) / 64);
	add(&pg, 12, PT_REC_LOSS, PT_LOSS_OVERRUN, loss, 2);
	add(&pg, 13, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, p1.n) | c2, p1.w, 1);
	add(&pg, 14, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, r0.n) | c2, r0.w, 1);
	add(&pg, 15, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, a1.n) | c2, a1.w, 1);
	add(&pg, 16, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, v1.n), v1.w, 1);
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 1, page, PS), 0);
	check_recs(&rs, want, sizeof(want) / sizeof(want[0]));
	CU_ASSERT_EQUAL(rs.bad_records, 3);
	tr_records_free(&rs);
}

/*
 * A record whose body is the whole u32 the bitstring e takes, cut bytes
 * short (SEGMENT_CODED, SEGMENTS).
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

/* A SEGMENT_CODED record: arg from its parts. */
static void add_segc(struct rbpage *pg, uint64_t ts, const struct ewriter *e, uint32_t nbits,
		     uint32_t nebits, uint32_t hbits, uint32_t cut)
{
	add_u32s(pg, ts, PT_REC_SEGMENT_CODED, PT_SEGC_ARG(nbits, nebits, hbits), e, cut);
}

/*
 * SEGMENT_CODED (ABI 1.9), written bit by bit from pathtrace_abi.h: an
 * owner given in full or by rank among the CPU's recent segment owners
 * (OWNER records count), the Exp-Golomb(16) stamp delta, bits at odd
 * offsets and ENTER codes after them, in a body of whole u32. A rank
 * naming no owner, or a body its arg does not fit, is a corrupt record.
 */
static void test_segment_coded(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	struct ewriter a = { { 0 }, 0 }, b = { { 0 }, 0 }, c = { { 0 }, 0 }, d = { { 0 }, 0 };
	uint64_t own[2] = { PT_OWNER(PT_OWNER_TASK, 5), 1000 };
	const struct want_rec want[] = {
		{ PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_TASK, 5), 1000, ANY },
		{ PT_REC_OWNER, 3, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 71000, ANY },	/* in full */
		{ PT_REC_ENTER, 7, 0, ANY, 2 },
		{ PT_REC_BITS, 5, 0x15, ANY, ANY },		/* nothing of the codes */
		{ PT_REC_OWNER, 3, PT_OWNER(PT_OWNER_TASK, 5), 71005, ANY },	/* by rank */
		{ PT_REC_BITS, 3, 5, ANY, ANY },
		{ PT_REC_LOSS, TR_LOSS_CORRUPT, ANY, ANY, ANY },	/* no 3rd owner */
		{ PT_REC_OWNER, 0, ANY, ANY, ANY },
		{ PT_REC_LOSS, TR_LOSS_CORRUPT, ANY, ANY, ANY },	/* short body */
	};
	uint32_t ha, hb;

	eput(&a, 3, 2);					/* the owner in full */
	eput(&a, (uint32_t)PT_SEG_HEAD(PT_OWNER(PT_OWNER_SOFTIRQ, 1), 0), 32);
	eput(&a, 2, 2);					/* gamma of 70000 >> 16 plus 1: 0 1 */
	eput(&a, 0, 1);					/* ... its low bit */
	eput(&a, 70000 & 0xffff, 16);
	ha = a.n;
	eput(&a, 0x15, 5);				/* 5 bits */
	eput(&a, 2, 2);					/* an ENTER: untraced caller, */
	efunc2(&a, 0, 15, 7);				/* func 7 */
	eadv2(&a, 0, 2);				/* at bit 2 */
	eput(&b, 0, 2);					/* rank 0: the 2nd most recent, task 5 */
	eput(&b, 1, 1);
	eput(&b, 5, 16);				/* delta 5 */
	hb = b.n;
	eput(&b, 5, 3);
	eput(&c, 1, 2);					/* rank 1: the 3rd, which there is not */
	eput(&c, 1, 1);
	eput(&c, 0, 16);
	eput(&d, 0, 2);
	eput(&d, 1, 1);
	eput(&d, 0, 16);
	eput(&d, 0, 40);
	rbpage_init(&pg, page, PS, 10);
	add(&pg, 10, PT_REC_OWNER, 0, own, 2);
	add_segc(&pg, 11, &a, 5, a.n - ha - 5, ha, 0);
	add_segc(&pg, 12, &b, 3, 0, hb, 0);
	add_segc(&pg, 13, &c, 0, 0, c.n, 0);
	add(&pg, 14, PT_REC_OWNER, 0, own, 2);
	add_segc(&pg, 15, &d, 40, 0, 19, 4);		/* a body short of its arg */
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 3, page, PS), 0);
	check_recs(&rs, want, sizeof(want) / sizeof(want[0]));
	CU_ASSERT_EQUAL(rs.bad_records, 2);
	tr_records_free(&rs);
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
		eput(e, (uint32_t)PT_SEG_HEAD(owner, 0), 32);
	} else {
		eput(e, (uint32_t)r, 2);
	}
	eexpg(e, delta, PT_SEGC_DELTA_K);
	eexpg(e, nbits, PT_SEGS_NBITS_K);
	eexpg(e, nebits, PT_SEGS_NEBITS_K);
}

/*
 * SEGMENTS (ABI 1.10), written bit by bit from pathtrace_abi.h: segments
 * back to back, each a SEGMENT_CODED head (owners ranked as the segments
 * before them in the same record left them), its Exp-Golomb lengths (order
 * 6 and 4), bits across a word boundary and ENTER codes. A segment cut off
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
	eput(&a, (uint32_t)PT_SEG_HEAD(PT_OWNER(PT_OWNER_SOFTIRQ, 1), 0), 32);
	egamma(&a, (70000 >> 16) + 1);			/* delta 70000 */
	eput(&a, 70000 & 0xffff, 16);
	eexpg(&a, 5, PT_SEGS_NBITS_K);			/* nbits 5: "1", then 000101 */
	eput(&en, 2, 2);				/* an ENTER: untraced caller, */
	efunc2(&en, 0, 15, 7);				/* func 7, */
	eadv2(&en, 0, 2);				/* at bit 2 */
	eexpg(&a, en.n, PT_SEGS_NEBITS_K);
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

/* An ABI 1.13 ENTER from the candidates: 0, r zeros and a one (its rank r). */
static void ecand3(struct ewriter *e, uint32_t r)
{
	eput(e, 0, 1 + r);
	eput(e, 1, 1);
}

/*
 * An ABI 1.13 ENTER not among the candidates: 0 and PT_ENTERS3_CANDS
 * zeros, its caller (kind 2 untraced: 1; 4 slot: 01; 0 address: 00), its
 * function's recent rank (15: then its id), then slot or address.
 */
static void enew3(struct ewriter *e, uint32_t kind, uint32_t rank, uint32_t func_id,
		  uint32_t extra)
{
	eput(e, 0, 1 + PT_ENTERS3_CANDS);
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

/*
 * ENTER codes of ABI 1.13 (PT_REC_BITS_ENTERS3, PT_REC_SEGMENTS3), written
 * bit by bit from pathtrace_abi.h: new items by id or recent rank with
 * their caller, slot or address; items from the candidates that followed
 * the last three functions, by rank (a traced one naming its address by
 * slot); the one bit that repeats item and advance; advances from the
 * pair the function had after the last two. Tables carry over from record
 * to record and into segments, a loss empties them, and naming an empty
 * candidate or advance, or a BITS_ENTERS3 flagged with 1.9's codes, is a
 * corrupt record.
 */
static void test_enters3(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint32_t lo = 0x8abcdef0u, slot = PT_ENTER_S_SLOT(lo);
	uint64_t ret = 0xffffffff00000000ull | lo, loss[2] = { 2, 0 }, body[5] = { 0x15 };
	uint64_t own[2] = { PT_OWNER(PT_OWNER_TASK, 5), 1000 };
	struct ewriter a = { { 0 }, 0 }, b = { { 0 }, 0 }, p1 = { { 0 }, 0 }, r0 = { { 0 }, 0 };
	struct ewriter a1 = { { 0 }, 0 }, sg = { { 0 }, 0 }, en = { { 0 }, 0 };
	const struct want_rec want[] = {
		{ PT_REC_ENTER, 11, 0, ANY, 3 },	/* new, by id */
		{ PT_REC_ENTER, 9, 0, ANY, 23 },
		{ PT_REC_ENTER, 11, ret, ANY, 23 },	/* new, by rank, its address given */
		{ PT_REC_ENTER, 11, ret, ANY, 25 },	/* new, its slot */
		{ PT_REC_ENTER, 9, 0, ANY, 20 },	/* the next record */
		{ PT_REC_ENTER, 11, ret, ANY, 20 },	/* its first advance */
		{ PT_REC_ENTER, 11, ret, ANY, 22 },	/* repeated */
		{ PT_REC_ENTER, 9, 0, ANY, 23 },	/* candidate 0, a new advance */
		{ PT_REC_ENTER, 4, 0, ANY, 23 },
		{ PT_REC_ENTER, 11, ret, ANY, 23 },
		{ PT_REC_ENTER, 11, ret, ANY, 24 },
		{ PT_REC_ENTER, 9, 0, ANY, 44 },	/* its pair's second advance */
		{ PT_REC_ENTER, 11, ret, ANY, 44 },	/* candidate 1, by slot */
		{ PT_REC_BITS, 5, 0x15, ANY, ANY },
		{ PT_REC_LOSS, PT_LOSS_OVERRUN, ANY, ANY, ANY },
		/* repeated, ranked, an advance from emptied tables; a 1.9 flag: one loss of 4 */
		{ PT_REC_LOSS, TR_LOSS_CORRUPT, 4, ANY, ANY },
		{ PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_TASK, 5), 1000, ANY },
		{ PT_REC_OWNER, 3, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 1010, ANY },	/* SEGMENTS3 */
		{ PT_REC_ENTER, 7, 0, ANY, 1 },
		{ PT_REC_BITS, 2, 3, ANY, ANY },
	};

	/* functions as func_id + 1; (pprev, prev, last) picks the candidates */
	enew3(&a, 2, 15, 11, 0);	/* (0, 0, 0) */
	eadv2(&a, 0, 3);		/* at bit 3 */
	enew3(&a, 2, 15, 9, 0);		/* (0, 0, 12) */
	eadv2(&a, 0, 20);		/* at bit 23 */
	enew3(&a, 0, 1, 11, lo);	/* (0, 12, 10); recent 10, 12 */
	eadv2(&a, 0, 0);
	enew3(&a, 4, 0, 11, slot);	/* (12, 10, 12): T12 with 2 */
	eadv2(&a, 0, 2);		/* at bit 25 */
	/* the next record: positions from 0 again, the tables kept */
	enew3(&b, 2, 1, 9, 0);		/* (10, 12, 12); recent 12, 10 */
	eadv2(&b, 0, 20);		/* at bit 20 */
	enew3(&b, 4, 1, 11, slot);	/* (12, 12, 10) */
	eadv2(&b, 1, 0);		/* after (12, 10), 12 came at once */
	eput(&b, 1, 1);			/* (12, 10, 12): T12 with 2 again */
	ecand3(&b, 0);			/* (10, 12, 12): U10, but not with 20 */
	eadv2(&b, 0, 1);		/* at bit 23; (12, 12) then 10: 2, 21 */
	enew3(&b, 2, 15, 4, 0);		/* (12, 12, 10): U5, T12 */
	eadv2(&b, 0, 0);
	enew3(&b, 4, 2, 11, slot);	/* (12, 10, 5); recent 5, 10, 12 */
	eadv2(&b, 0, 0);
	enew3(&b, 4, 0, 11, slot);	/* (10, 5, 12) */
	eadv2(&b, 0, 1);		/* at bit 24 */
	enew3(&b, 2, 2, 9, 0);		/* (5, 12, 12); recent 12, 5, 10 */
	eadv2(&b, 2, 0);		/* 20: (12, 12) then 10 had 2, 21: at bit 44 */
	ecand3(&b, 1);			/* (12, 12, 10): U5, T12: T12 */
	eadv2(&b, 1, 0);		/* (12, 10) then 12: at once */
	eput(&p1, 1, 1);		/* repeated, with the tables empty */
	ecand3(&r0, 0);			/* candidate 0 of none */
	enew3(&a1, 2, 15, 4, 0);
	eadv2(&a1, 1, 0);		/* an advance never seen */
	/* a SEGMENTS3 of one segment: softirq 1 in full, 10 ns on, 2 bits, an ENTER */
	enew3(&en, 2, 15, 7, 0);
	eadv2(&en, 0, 1);
	esegs_head(&sg, -1, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 10, 2, en.n);
	eput(&sg, 3, 2);
	CU_ASSERT_FATAL(en.n <= 64 && b.n <= 64 * (sizeof(body) / 8 - 1));
	eput(&sg, en.w[0], en.n);
	memcpy(body + 1, b.w, (b.n + 63) / 64 * 8);
	rbpage_init(&pg, page, PS, 10);
	add(&pg, 10, PT_REC_BITS_ENTERS3, PT_BITS_ENTERS_ARG(0, a.n), a.w, (a.n + 63) / 64);
	add(&pg, 11, PT_REC_BITS_ENTERS3, PT_BITS_ENTERS_ARG(5, b.n), body, 1 + (b.n + 63) / 64);
	add(&pg, 12, PT_REC_LOSS, PT_LOSS_OVERRUN, loss, 2);
	add(&pg, 13, PT_REC_BITS_ENTERS3, PT_BITS_ENTERS_ARG(0, p1.n), p1.w, 1);
	add(&pg, 14, PT_REC_BITS_ENTERS3, PT_BITS_ENTERS_ARG(0, r0.n), r0.w, 1);
	add(&pg, 15, PT_REC_BITS_ENTERS3, PT_BITS_ENTERS_ARG(0, a1.n), a1.w, 1);
	add(&pg, 16, PT_REC_BITS_ENTERS3, PT_BITS_ENTERS_ARG(0, a1.n) | PT_BITS_ENTERS_CODES2,
	    a1.w, 1);
	add(&pg, 17, PT_REC_OWNER, 0, own, 2);
	add_u32s(&pg, 18, PT_REC_SEGMENTS3, 1, &sg, 0);
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 3, page, PS), 0);
	check_recs(&rs, want, sizeof(want) / sizeof(want[0]));
	CU_ASSERT_EQUAL(rs.bad_records, 4);
	tr_records_free(&rs);
}

/* An ABI 1.14 advance: its rank r among y's (r zeros, a one), or r = 4: 4 zeros and Rice. */
static void eadv4(struct ewriter *e, uint32_t r, uint32_t adv)
{
	uint32_t q;

	eput(e, 0, r);
	if (r < PT_ENTERS4_ADVS) {
		eput(e, 1, 1);
		return;
	}
	for (q = adv >> PT_ENTERS_RICE_K2; q; q--)
		eput(e, 1, 1);
	eput(e, 0, 1);
	eput(e, adv, PT_ENTERS_RICE_K2);
}

/*
 * ENTER codes of ABI 1.14 (PT_REC_BITS_ENTERS4, PT_REC_SEGMENTS4): those
 * of 1.13 with four advances per (prev, last, function), named by rank,
 * the one used moving to the front and the last dropping out when a new
 * one comes; written bit by bit from pathtrace_abi.h for one function
 * entered again and again from untraced code. Tables carry into a
 * SEGMENTS4; after a loss an advance ranked among none is a corrupt record.
 */
static void test_enters4(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	uint64_t loss[2] = { 1, 0 }, own[2] = { PT_OWNER(PT_OWNER_TASK, 5), 1000 };
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
		{ PT_REC_OWNER, 3, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 1010, ANY },	/* SEGMENTS4 */
		{ PT_REC_ENTER, 9, 0, ANY, 4 },		/* the tables carried: rank 1 */
		{ PT_REC_BITS, 2, 3, ANY, ANY },
		{ PT_REC_LOSS, PT_LOSS_OVERRUN, ANY, ANY, ANY },
		{ PT_REC_LOSS, TR_LOSS_CORRUPT, 1, ANY, ANY },	/* rank 1 of none */
	};

	/* U10 each time; (pprev, prev, last) picks the candidates, (prev, last, 10) y */
	enew3(&a, 2, 15, 9, 0);		/* (0, 0, 0) */
	eadv4(&a, 4, 3);
	enew3(&a, 2, 0, 9, 0);		/* (0, 0, 10) */
	eadv4(&a, 4, 5);
	enew3(&a, 2, 0, 9, 0);		/* (0, 10, 10); y (10, 10, 10) learns 7 */
	eadv4(&a, 4, 6);
	enew3(&a, 2, 0, 9, 0);		/* (10, 10, 10) has no candidate yet */
	eadv4(&a, 0, 6);
	ecand3(&a, 0);			/* U10, but not with advance 6 */
	eadv4(&a, 4, 9);
	ecand3(&a, 0);
	eadv4(&a, 4, 2);
	ecand3(&a, 0);
	eadv4(&a, 4, 1);
	ecand3(&a, 0);
	eadv4(&a, 3, 0);		/* 6 */
	ecand3(&a, 0);
	eadv4(&a, 2, 0);		/* 2 */
	ecand3(&a, 0);
	eadv4(&a, 1, 0);		/* 6 */
	eput(&a, 1, 1);			/* U10 with 6 again */
	ecand3(&a, 0);
	eadv4(&a, 3, 0);		/* 9 */
	ecand3(&a, 0);
	eadv4(&a, 4, 4);
	ecand3(&a, 0);
	eadv4(&a, 4, 1);
	/* a SEGMENTS4 of one segment: softirq 1 in full, 10 ns on, 2 bits, an ENTER */
	ecand3(&en, 0);
	eadv4(&en, 1, 0);		/* 2, 5, 10, 7: 5 - 1 = 4 */
	esegs_head(&sg, -1, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 10, 2, en.n);
	eput(&sg, 3, 2);
	eput(&sg, en.w[0], en.n);
	enew3(&bad, 2, 15, 9, 0);
	eadv4(&bad, 1, 0);
	CU_ASSERT_FATAL(a.n <= 64 * 4 && en.n <= 64);
	rbpage_init(&pg, page, PS, 10);
	add(&pg, 10, PT_REC_BITS_ENTERS4, PT_BITS_ENTERS_ARG(0, a.n), a.w, (a.n + 63) / 64);
	add(&pg, 17, PT_REC_OWNER, 0, own, 2);
	add_u32s(&pg, 18, PT_REC_SEGMENTS4, 1, &sg, 0);
	add(&pg, 19, PT_REC_LOSS, PT_LOSS_OVERRUN, loss, 2);
	add(&pg, 20, PT_REC_BITS_ENTERS4, PT_BITS_ENTERS_ARG(0, bad.n), bad.w, 1);
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 3, page, PS), 0);
	check_recs(&rs, want, sizeof(want) / sizeof(want[0]));
	CU_ASSERT_EQUAL(rs.bad_records, 1);
	tr_records_free(&rs);
}

/*
 * ENTER codes are read against per-CPU state, which exists for CPU numbers
 * a kernel can have (below 8192): on CPU 8191 a BITS_ENTERS3 reads as its
 * ENTER, on CPU 9000 it is a corrupt record (a counted loss), not a
 * failure for want of memory.
 */
static void test_enters3_cpu_range(void)
{
	struct ewriter a = { { 0 }, 0 };
	struct rbpage pg;
	uint32_t cpu;

	enew3(&a, 2, 15, 11, 0);
	eadv2(&a, 0, 3);
	for (cpu = 8191; cpu <= 9000; cpu += 809) {
		struct tr_records rs = { 0 };

		rbpage_init(&pg, page, PS, 10);
		add(&pg, 10, PT_REC_BITS_ENTERS3, PT_BITS_ENTERS_ARG(0, a.n), a.w, 1);
		rbpage_pad(&pg);
		CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, cpu, page, PS), 0);
		CU_ASSERT_EQUAL_FATAL(rs.n, 1);
		CU_ASSERT_EQUAL(rs.recs[0].type, cpu < 8192 ? PT_REC_ENTER : PT_REC_LOSS);
		CU_ASSERT_EQUAL(rs.recs[0].arg, cpu < 8192 ? 11 : TR_LOSS_CORRUPT);
		CU_ASSERT_EQUAL(rs.bad_records, cpu < 8192 ? 0 : 1);
		tr_records_free(&rs);
	}
}

/* A SEGMENT body (pathtrace_abi.h): head, then nbits of bits and the codes right after. */
static uint32_t seg_body(uint64_t *body, uint64_t owner, uint32_t delta, uint64_t bits,
			 uint32_t nbits, const struct ewriter *e)
{
	uint32_t i, n = nbits + (e ? e->n : 0);

	memset(body, 0, 8 * (1 + (n + 63) / 64));
	body[0] = PT_SEG_HEAD(owner, delta);
	body[1] = bits;
	for (i = 0; e && i < e->n; i++)
		body[1 + (nbits + i) / 64] |= ((e->w[i / 64] >> (i % 64)) & 1) << ((nbits + i) % 64);
	return 1 + (n + 63) / 64;
}

/*
 * SEGMENT (ABI 1.7) reads as its OWNER (arg: the page's CPU; stamp: the
 * previous OWNER's plus the delta) and then as the BITS_ENTERS its arg
 * makes of the packed bits and codes (the bits masked to nbits). A body the
 * arg does not fit, or a SEGMENT after a loss made the reader forget the
 * stamp, is a corrupt record: a loss, and no half-read OWNER.
 */
static void test_segment(void)
{
	struct tr_records rs = { 0 };
	struct rbpage pg;
	struct ewriter a = { { 0 }, 0 };
	uint64_t own[2] = { PT_OWNER(PT_OWNER_TASK, 5), 4000 }, seg[12], loss[2] = { 3, 0 };
	uint32_t nw;

	ecode(&a, 2, 5, 12, 0);
	ecode(&a, 2, 1500, 12, 0);	/* 2048-bit records: a long advance */
	rbpage_init(&pg, page, PS, 10);
	add(&pg, 10, PT_REC_OWNER, 0, own, 2);
	nw = seg_body(seg, PT_OWNER(PT_OWNER_TASK, 77), 242, 0x1abc, 13, &a);
	add(&pg, 11, PT_REC_SEGMENT, PT_BITS_ENTERS_ARG(13, a.n), seg, nw);
	nw = seg_body(seg, PT_OWNER(PT_OWNER_HARDIRQ, 2), 101, 3, 2, NULL);
	add(&pg, 12, PT_REC_SEGMENT, PT_BITS_ENTERS_ARG(2, 0), seg, nw);
	add(&pg, 13, PT_REC_SEGMENT, PT_BITS_ENTERS_ARG(65, 0), seg, nw);	/* short body */
	add(&pg, 14, PT_REC_LOSS, PT_LOSS_OVERRUN, loss, 2);
	add(&pg, 15, PT_REC_SEGMENT, PT_BITS_ENTERS_ARG(2, 0), seg, nw);	/* no stamp */
	rbpage_pad(&pg);
	CU_ASSERT_EQUAL_FATAL(tr_decode_page(&rs, 2, page, PS), 0);
	CU_ASSERT_EQUAL_FATAL(rs.n, 10);
	CU_ASSERT_EQUAL(rs.recs[1].type, PT_REC_OWNER);
	CU_ASSERT_EQUAL(rs.recs[1].arg, 2);
	CU_ASSERT_EQUAL(rs.recs[1].ts, 11);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[1])[0], PT_OWNER(PT_OWNER_TASK, 77));
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[1])[1], 4242);
	CU_ASSERT_EQUAL(rs.recs[2].type, PT_REC_ENTER);
	CU_ASSERT_EQUAL(rs.recs[2].arg, 12);
	CU_ASSERT_EQUAL(rs.recs[2].pending, 5);
	CU_ASSERT_EQUAL(rs.recs[3].type, PT_REC_ENTER);
	CU_ASSERT_EQUAL(rs.recs[3].arg, 12);
	CU_ASSERT_EQUAL(rs.recs[3].pending, 1505);
	CU_ASSERT_EQUAL(rs.recs[4].type, PT_REC_BITS);
	CU_ASSERT_EQUAL(rs.recs[4].arg, 13);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[4])[0], 0x1abc);	/* no code bits above 13 */
	CU_ASSERT_EQUAL(rs.recs[5].type, PT_REC_OWNER);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[5])[0], PT_OWNER(PT_OWNER_HARDIRQ, 2));
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[5])[1], 4343);
	CU_ASSERT_EQUAL(rs.recs[6].type, PT_REC_BITS);
	CU_ASSERT_EQUAL(rs.recs[6].arg, 2);
	CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[6])[0], 3);
	CU_ASSERT_EQUAL(rs.recs[7].type, PT_REC_LOSS);
	CU_ASSERT_EQUAL(rs.recs[7].arg, TR_LOSS_CORRUPT);
	CU_ASSERT_EQUAL(rs.recs[8].arg, PT_LOSS_OVERRUN);
	CU_ASSERT_EQUAL(rs.recs[9].type, PT_REC_LOSS);
	CU_ASSERT_EQUAL(rs.recs[9].arg, TR_LOSS_CORRUPT);
	CU_ASSERT_EQUAL(rs.bad_records, 2);
	tr_records_free(&rs);
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
	add(&pg, 3, PT_REC_ENTER, 1, w, 2);		/* ENTER body is one word */
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

UNIT_SUITE(pages,
	   { "records and timestamps (TIME_EXTEND, type_len 0, padding)", test_records_and_timestamps },
	   { "ENTER_AT and ENTER_S: return addresses by slot, per CPU, forgotten at a loss",
	     test_short_enters },
	   { "BITS_ENTERS: ENTER codes in order, slots, predictions, then the bits; corrupt lost",
	     test_bits_enters },
	   { "BITS_ENTERS of ABI 1.9: functions ranked or predicted from two, advances repeated; emptied at a loss",
	     test_bits_enters_codes2 },
	   { "SEGMENT: its OWNER (stamp by delta), its ENTERs and bits packed; no stamp or a short body a loss",
	     test_segment },
	   { "SEGMENT_CODED: owner by rank or in full, Exp-Golomb delta, bits and codes after; a bad rank a loss",
	     test_segment_coded },
	   { "SEGMENTS: segments back to back with Exp-Golomb lengths; a cut-off segment, a bad end, none at all a loss",
	     test_segments },
	   { "ENTER codes of ABI 1.13: candidates after three functions, repeats, slots; emptied at a loss",
	     test_enters3 },
	   { "ENTER codes of ABI 1.14: four advances by rank, carried into SEGMENTS4, none after a loss",
	     test_enters4 },
	   { "ENTER codes on a CPU number no kernel has: a corrupt record, no state allocated",
	     test_enters3_cpu_range },
	   { "missed-events flags become LOSS(OVERRUN)", test_missed_events },
	   { "impossible commit: counted loss, no crash", test_corrupt_commit },
	   { "event beyond commit: prefix kept, loss", test_event_beyond_commit },
	   { "invalid records: loss, unknown types skipped", test_bad_records },
	   { "random pages round trip", test_random_pages },
	   { "length fields that read as negative: cut, no hang", test_backward_lengths })
