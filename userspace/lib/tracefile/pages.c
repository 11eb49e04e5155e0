// SPDX-License-Identifier: GPL-2.0
/*
 * pages - ring-buffer pages (as ring_buffer_read_page produced them) to
 * pathtrace records, read with libtraceevent's kbuffer. kbuffer trusts the
 * page's commit field, so the page is checked first and handed to kbuffer
 * in a zero-padded copy; every event it returns is checked to lie inside
 * the committed data.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/kbuffer.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

/* struct buffer_data_page on x86-64: u64 time_stamp, local_t commit (8 bytes). */
#define PAGE_HDR 16u
#define COMMIT_SIZE_MASK ((1ull << 27) - 1)	/* as kbuffer's COMMIT_MASK */
#define RB_MISSED_EVENTS (1ull << 31)
#define RB_MISSED_STORED (1ull << 30)
#define SLACK 64u	/* kbuffer may look a few bytes past an event header */

static int grow(struct tr_records *rs, size_t nwords)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 1024;
		struct tr_rec *g = realloc(rs->recs, cap * sizeof(*g));

		if (!g)
			return -PT_ENOMEM;
		rs->recs = g;
		rs->cap = cap;
	}
	if (rs->nwords + nwords > rs->capw) {
		size_t cap = rs->capw ? rs->capw * 2 : 4096;
		uint64_t *g;

		while (cap < rs->nwords + nwords)
			cap *= 2;
		g = realloc(rs->words, cap * sizeof(*g));
		if (!g)
			return -PT_ENOMEM;
		rs->words = g;
		rs->capw = cap;
	}
	return 0;
}

static int append(struct tr_records *rs, uint32_t cpu, uint64_t ts, const struct pt_rec *h,
		  const void *body, uint16_t nwords, int synthetic)
{
	struct tr_rec *r;

	if (grow(rs, nwords))
		return -PT_ENOMEM;
	r = &rs->recs[rs->n++];
	r->ts = ts;
	r->body = rs->nwords;
	r->cpu = cpu;
	r->arg = h->arg;
	r->type = h->type;
	r->len = h->len;
	r->nwords = nwords;
	r->synthetic = synthetic;
	r->pending = 0;
	if (nwords)
		memcpy(rs->words + rs->nwords, body, nwords * 8u);
	rs->nwords += nwords;
	if (cpu + 1 > rs->max_cpu)
		rs->max_cpu = cpu + 1;
	return 0;
}

static void forget_slots(struct tr_records *rs, uint32_t cpu);

/*
 * A loss the reader infers; consecutive CORRUPT losses on a CPU merge.
 * The ENTER_S slots of that CPU are forgotten: what was lost may have set
 * them.
 */
static int append_loss(struct tr_records *rs, uint32_t cpu, uint64_t ts, uint32_t kind,
		       uint64_t count)
{
	struct pt_rec h = { .type = PT_REC_LOSS, .len = 24, .arg = kind };
	struct pt_rec_loss l = { .count = count };
	uint64_t body[2];
	size_t i;

	forget_slots(rs, cpu);
	if (kind == TR_LOSS_CORRUPT) {
		for (i = rs->n; i-- > 0;) {
			struct tr_rec *r = &rs->recs[i];

			if (r->cpu != cpu)
				continue;
			if (r->synthetic && r->type == PT_REC_LOSS && r->arg == TR_LOSS_CORRUPT) {
				rs->words[r->body] += count;
				return 0;
			}
			break;
		}
	}
	memcpy(body, &l, sizeof(body));
	return append(rs, cpu, ts, &h, body, 2, 1);
}

/*
 * Body bytes each record type must have; -1: any multiple of 8; -2: unknown
 * type; -3: a bad arg; -4: 16 plus a multiple of 16; -5: a multiple of 4,
 * at least 4. LOSS bodies may also be PT_REC_LOSS_SIZE_V0 bytes
 * (before ABI 1.3: no interval).
 */
static int64_t body_size(uint16_t type, uint32_t arg)
{
	switch (type) {
	case PT_REC_OWNER:
		return sizeof(struct pt_rec_owner);
	case PT_REC_BITS:
		if (arg & PT_BITS_PARTIAL)
			return arg == PT_BITS_PARTIAL ? 8 : -3;
		return ((uint64_t)arg + 63) / 64 * 8;
	case PT_REC_ENTER:
		return sizeof(struct pt_rec_enter);
	case PT_REC_ENTER_AT:
		return sizeof(struct pt_rec_enter_at);
	case PT_REC_BLOCK:
		return sizeof(struct pt_rec_block);
	case PT_REC_LOSS:
		return arg >= PT_LOSS_OVERRUN && arg <= PT_LOSS_STATE ?
		       (int64_t)sizeof(struct pt_rec_loss) : -3;
	case PT_REC_COUNTERS:
		return -1;
	case PT_REC_PATHS:
		return -4;	/* lost, overflow, then (path, count) pairs */
	case PT_REC_ENTER_S:
		return 0;
	case PT_REC_BITS_ENTERS3:	/* no codes2 flag: its codes are of 1.13 */
	case PT_REC_BITS_ENTERS4:	/* ... or of 1.14 */
		if (arg & PT_BITS_ENTERS_CODES2)
			return -3;
		/* fall through */
	case PT_REC_BITS_ENTERS:
		return ((uint64_t)PT_BITS_ENTERS_NBITS(arg) + 63) / 64 * 8 +
		       ((uint64_t)PT_BITS_ENTERS_NEBITS(arg) + 63) / 64 * 8;
	case PT_REC_SEGMENT:	/* the head, then bits and codes packed */
		return 8 + ((uint64_t)PT_BITS_ENTERS_NBITS(arg) + PT_BITS_ENTERS_NEBITS(arg) + 63) /
			   64 * 8;
	case PT_REC_SEGMENT_CODED:	/* head, bits and codes in whole u32 */
		return ((uint64_t)PT_SEGC_HBITS(arg) + PT_SEGC_NBITS(arg) + PT_SEGC_NEBITS(arg) +
			31) / 32 * 4;
	case PT_REC_SEGMENTS:		/* the segments say their lengths */
	case PT_REC_SEGMENTS3:
	case PT_REC_SEGMENTS4:
		return arg ? -5 : -3;
	default:
		return -2;
	}
}

int tr_check_record(const void *payload, size_t len)
{
	struct pt_rec h;
	int64_t want;

	if (len < sizeof(h))
		return -PT_EFORMAT;
	memcpy(&h, payload, sizeof(h));
	/*
	 * The event is rounded up to 4 bytes; the record is a multiple of 8
	 * (SEGMENT_CODED and SEGMENTS: 4).
	 */
	if (h.len < sizeof(h) ||
	    h.len % (h.type == PT_REC_SEGMENT_CODED || h.type == PT_REC_SEGMENTS ||
		     h.type == PT_REC_SEGMENTS3 || h.type == PT_REC_SEGMENTS4 ? 4 : 8) ||
	    h.len > len || len - h.len >= 8)
		return -PT_EFORMAT;
	want = body_size(h.type, h.arg);
	if (want == -2)
		return 0;	/* a newer minor version's record: skipped by the caller */
	if (h.type == PT_REC_LOSS && want >= 0 && h.len - sizeof(h) == PT_REC_LOSS_SIZE_V0)
		return 0;
	if (want == -3 || (want >= 0 && (uint64_t)want != h.len - sizeof(h)))
		return -PT_EFORMAT;
	if (want == -4 && (h.len - sizeof(h) < 16 || (h.len - sizeof(h)) % 16))
		return -PT_EFORMAT;
	if (want == -5 && (h.len - sizeof(h) < 4 || (h.len - sizeof(h)) % 4))
		return -PT_EFORMAT;
	return 0;
}

/* CPUs with ENTER state: x86-64's largest NR_CPUS (MAXSMP). */
#define ENTER_STATE_CPUS 8192u

/*
 * cpu's ENTER state (slots, predictions; ~40 KB), allocated at that CPU's
 * first record, so that memory follows the CPUs a file has pages of, not
 * the largest CPU number it names; NULL without memory or for a CPU no
 * kernel has (that CPU's ENTERs then read as unknown returns, and its
 * BITS_ENTERS and segments as corrupt).
 */
static struct tr_enter_state *enter_state(struct tr_records *rs, uint32_t cpu)
{
	if (cpu >= ENTER_STATE_CPUS)
		return NULL;
	if (cpu >= rs->enter_state_cpus) {
		uint32_t n = cpu + 1 > 2 * rs->enter_state_cpus ? cpu + 1 : 2 * rs->enter_state_cpus;
		struct tr_enter_state **t = realloc(rs->enter_state, n * sizeof(*t));

		if (!t)
			return NULL;
		memset(t + rs->enter_state_cpus, 0, (n - rs->enter_state_cpus) * sizeof(*t));
		rs->enter_state = t;
		rs->enter_state_cpus = n;
	}
	if (!rs->enter_state[cpu])
		rs->enter_state[cpu] = calloc(1, sizeof(*rs->enter_state[cpu]));
	return rs->enter_state[cpu];
}

/* Why a CPU has no ENTER state: a number no kernel has (a corrupt record), or no memory. */
static int no_enter_state(uint32_t cpu)
{
	return cpu >= ENTER_STATE_CPUS ? -PT_EFORMAT : -PT_ENOMEM;
}

static uint32_t *enter_slots(struct tr_records *rs, uint32_t cpu)
{
	struct tr_enter_state *st = enter_state(rs, cpu);

	return st ? st->rets : NULL;
}

/* What the module forgets when a write on cpu is refused: slots and predictions. */
static void forget_slots(struct tr_records *rs, uint32_t cpu)
{
	if (cpu < rs->enter_state_cpus && rs->enter_state[cpu])
		memset(rs->enter_state[cpu], 0, sizeof(*rs->enter_state[cpu]));
}

/* An ENTER (from ENTER_AT or ENTER_S) with its full return address and pending bits. */
static int append_enter(struct tr_records *rs, uint32_t cpu, uint64_t ts, struct pt_rec h,
			uint32_t func_id, uint32_t ret_lo, uint32_t pending)
{
	uint64_t ret = ret_lo ? 0xffffffff00000000ull | ret_lo : 0;
	int err;

	h.type = PT_REC_ENTER;
	h.len = sizeof(h) + sizeof(ret);
	h.arg = func_id;
	err = append(rs, cpu, ts, &h, &ret, 1, 0);
	if (!err)
		rs->recs[rs->n - 1].pending = pending;
	return err;
}

/*
 * ENTER_S: the return address the slot holds; an empty slot, or a caller
 * outside the traced code: not known (0).
 */
static int take_enter_s(struct tr_records *rs, uint32_t cpu, uint64_t ts, struct pt_rec h)
{
	uint32_t *slots = enter_slots(rs, cpu);

	return append_enter(rs, cpu, ts, h, PT_ENTER_S_FUNC(h.arg),
			    slots && !PT_ENTER_S_OUTSIDE(h.arg) ? slots[PT_ENTER_S_SLOT_OF(h.arg)] : 0,
			    PT_ENTER_S_PENDING(h.arg));
}

/* LSB-first reading of a BITS_ENTERS record's ENTER codes. */
struct ecode {
	const uint8_t *p;	/* the code words, 4-aligned at best: read bytewise */
	uint32_t n, pos;
	int bad;
};

static uint32_t ecode_bit(struct ecode *c)
{
	uint32_t b;

	if (c->pos >= c->n) {
		c->bad = 1;
		return 0;
	}
	b = (c->p[c->pos / 8] >> (c->pos % 8)) & 1;
	c->pos++;
	return b;
}

static uint32_t ecode_bits(struct ecode *c, unsigned int n)
{
	uint32_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v |= ecode_bit(c) << i;
	return v;
}

/* One ENTER of a BITS_ENTERS record, as its code says. */
struct ecode_enter {
	uint32_t func, ret_lo, pos;
	uint32_t kind_bits, func_bits, ret_bits, adv_bits;	/* ABI 1.9 codes: --stats */
};

/* The Elias gamma code of a func_id + 1 (pathtrace_abi.h): the func_id. */
static uint32_t ecode_func_id(struct ecode *c)
{
	uint32_t k = 0;

	while (!ecode_bit(c) && !c->bad && k < 31)
		k++;
	if (k >= 31)
		c->bad = 1;
	return (1u << k | ecode_bits(c, k)) - 1;
}

/* The slot a kind-4 ENTER names (its return address), or a kind-0 one's address (filling it). */
static void ecode_ret(struct ecode *c, struct tr_enter_state *st, uint32_t kind,
		      struct ecode_enter *e)
{
	e->ret_lo = 0;
	if (kind == 4)
		e->ret_lo = st->rets[ecode_bits(c, 6)];
	else if (kind == 0)
		e->ret_lo = ecode_bits(c, 32);
	if (kind == 0 && e->ret_lo && !c->bad)
		st->rets[PT_ENTER_S_SLOT(e->ret_lo)] = e->ret_lo;
}

/* The next code before ABI 1.9. Returns 0, or -PT_EFORMAT (cut off, predicted from nothing). */
static int ecode_v1(struct ecode *c, struct tr_enter_state *st, struct ecode_enter *e)
{
	uint32_t kind, q = 0;

	kind = ecode_bit(c) ? 1 : ecode_bit(c) ? 2 : ecode_bit(c) ? 4 : 0;
	while (ecode_bit(c) && !c->bad && q <= 0xffffu >> PT_ENTERS_RICE_K)
		q++;
	e->pos += q << PT_ENTERS_RICE_K | ecode_bits(c, PT_ENTERS_RICE_K);
	if (kind == 1) {
		if (!st->last_func)
			return -PT_EFORMAT;
		e->func = st->pred[st->last_func % PT_ENTERS_PRED];
	} else {
		e->func = ecode_func_id(c);
	}
	ecode_ret(c, st, kind, e);
	if (c->bad || e->pos > 0xffff)
		return -PT_EFORMAT;
	st->pred[st->last_func % PT_ENTERS_PRED] = e->func;
	st->last_func = e->func;
	return 0;
}

/*
 * v to the front of a list of n, as the module moves it (the recent
 * functions, the candidates of 1.13): the others keep their order, the
 * last drops out when v was not among them.
 */
static void move_front(uint32_t *a, uint32_t n, uint32_t v)
{
	uint32_t r;

	for (r = 0; r < n - 1 && a[r] != v; r++)
		;
	memmove(&a[1], &a[0], r * sizeof(a[0]));
	a[0] = v;
}

/* v to the front of a pair of candidates, as the module moves it. */
static void front2(uint32_t *c, uint32_t v)
{
	if (c[0] != v) {
		c[1] = c[0];
		c[0] = v;
	}
}

/* The Rice(PT_ENTERS_RICE_K2) code of an advance (ABI 1.9 and 1.13), + 1. */
static uint32_t ecode_rice_adv(struct ecode *c)
{
	uint32_t q = 0;

	while (ecode_bit(c) && !c->bad && q <= 0xffffu >> PT_ENTERS_RICE_K2)
		q++;
	return (q << PT_ENTERS_RICE_K2 | ecode_bits(c, PT_ENTERS_RICE_K2)) + 1;
}

/* The next code of ABI 1.9. Returns 0, or -PT_EFORMAT (cut off, an empty entry named). */
static int ecode_v2(struct ecode *c, struct tr_enter_state *st, struct ecode_enter *e)
{
	uint32_t *cand = st->pred2[PT_ENTERS_CTX(st->prev2, st->last2)], *advs;
	uint32_t kind, f, r, adv, at = c->pos;

	kind = ecode_bit(c) ? 1 : ecode_bit(c) ? 2 : ecode_bit(c) ? 4 : 0;
	e->kind_bits = c->pos - at;
	at = c->pos;
	if (kind == 1)
		f = cand[0];
	else if (ecode_bit(c))
		f = cand[kind == 2];	/* kind 1 would have named the first */
	else if ((r = ecode_bits(c, 4)) < PT_ENTERS_RECENT)
		f = st->recent[r];
	else
		f = ecode_func_id(c) + 1;
	if (c->bad || !f)
		return -PT_EFORMAT;
	e->func_bits = c->pos - at;
	at = c->pos;
	ecode_ret(c, st, kind, e);
	e->ret_bits = c->pos - at;
	at = c->pos;
	advs = st->adv[PT_ENTERS_CTX(st->last2, f)];
	adv = ecode_bit(c) ? advs[0] : ecode_bit(c) ? advs[1] : ecode_rice_adv(c);
	if (!adv)
		return -PT_EFORMAT;	/* an advance never seen */
	e->adv_bits = c->pos - at;
	e->pos += adv - 1;
	if (c->bad || e->pos > 0xffff)
		return -PT_EFORMAT;
	e->func = f - 1;
	front2(advs, adv);
	front2(cand, f);
	move_front(st->recent, PT_ENTERS_RECENT, f);
	st->prev2 = st->last2;
	st->last2 = f;
	return 0;
}

/*
 * A new item of ABI 1.13 (after the escape): caller, function, slot or
 * address. Returns it, 0 when it names an empty rank (c->bad when cut off).
 */
static uint32_t ecode_item3(struct ecode *c, struct tr_enter_state *st, struct ecode_enter *e)
{
	uint32_t r, f, slot = 0, at = c->pos, traced, kind;

	traced = !ecode_bit(c);
	kind = traced ? (ecode_bit(c) ? 4 : 0) : 2;
	e->kind_bits += c->pos - at;
	at = c->pos;
	r = ecode_bits(c, 4);
	f = r < PT_ENTERS_RECENT ? st->recent3[r] : ecode_func_id(c) + 1;
	e->func_bits = c->pos - at;
	at = c->pos;
	if (f >= 1u << 20)
		c->bad = 1;
	if (kind == 4) {
		slot = ecode_bits(c, 6);
	} else if (kind == 0) {
		e->ret_lo = ecode_bits(c, 32);
		slot = PT_ENTER_S_SLOT(e->ret_lo);
		if (e->ret_lo && !c->bad)
			st->rets[slot] = e->ret_lo;
	}
	e->ret_bits = c->pos - at;
	return f ? PT_ENTERS3_ITEM(f, traced, slot) : 0;
}

/* An advance (+ 1) of ABI 1.14: by its rank among y's, or Rice. */
static uint32_t ecode_adv4(struct ecode *c, const uint32_t *advs)
{
	unsigned int r;

	for (r = 0; r < PT_ENTERS4_ADVS; r++)
		if (ecode_bit(c))
			return advs[r];
	return ecode_rice_adv(c);
}

/*
 * The next code of ABI 1.13, or with four advances of 1.14 (advs4).
 * Returns 0, or -PT_EFORMAT (cut off, an empty entry named).
 */
static int ecode_v3(struct ecode *c, struct tr_enter_state *st, struct ecode_enter *e, int advs4)
{
	uint32_t x = PT_ENTERS3_CTX(st->pprev3, st->prev3, st->last3), *cand = st->cand3[x];
	uint32_t item, f, adv, r, at = c->pos, *advs;

	e->ret_lo = 0;
	e->kind_bits = e->func_bits = e->ret_bits = e->adv_bits = 0;
	if (ecode_bit(c)) {
		item = cand[0];
		adv = st->cand3_adv[x];
		e->kind_bits = 1;
	} else {
		for (r = 0; r < PT_ENTERS3_CANDS && !ecode_bit(c); r++)
			;
		e->kind_bits = c->pos - at;
		item = r < PT_ENTERS3_CANDS ? cand[r] : ecode_item3(c, st, e);
		if (c->bad || !item)
			return -PT_EFORMAT;
		at = c->pos;
		advs = st->adv3[PT_ENTERS3_CTX(st->prev3, st->last3, PT_ENTERS3_ITEM_FUNC(item))];
		if (advs4)
			adv = ecode_adv4(c, advs);
		else
			adv = ecode_bit(c) ? advs[0] : ecode_bit(c) ? advs[1] : ecode_rice_adv(c);
		e->adv_bits = c->pos - at;
	}
	if (c->bad || !item || !adv)
		return -PT_EFORMAT;	/* cut off, or an empty candidate or advance */
	f = PT_ENTERS3_ITEM_FUNC(item);
	if (PT_ENTERS3_ITEM_TRACED(item) && !e->ret_lo)
		e->ret_lo = st->rets[PT_ENTERS3_ITEM_SLOT(item)];
	e->pos += adv - 1;
	if (e->pos > 0xffff)
		return -PT_EFORMAT;
	e->func = f - 1;
	move_front(cand, PT_ENTERS3_CANDS, item);
	st->cand3_adv[x] = adv;
	if (advs4)
		move_front(st->adv3[PT_ENTERS3_CTX(st->prev3, st->last3, f)], PT_ENTERS4_ADVS, adv);
	else
		front2(st->adv3[PT_ENTERS3_CTX(st->prev3, st->last3, f)], adv);
	move_front(st->recent3, PT_ENTERS_RECENT, f);
	st->pprev3 = st->prev3;
	st->prev3 = st->last3;
	st->last3 = f;
	return 0;
}

/* n <= 64 bits of the bitstring p (nbytes long) from bit off, LSB first; zero past its end. */
static uint64_t bits_from(const uint8_t *p, uint64_t nbytes, uint64_t off, unsigned int n)
{
	unsigned int shift = off % 8, i;
	uint64_t v = 0;

	/* the 9 bytes that hold 64 bits from any bit offset */
	for (i = 0; i < 9 && off / 8 + i < nbytes; i++) {
		uint64_t byte = p[off / 8 + i];

		if (!i)
			v = byte >> shift;
		else if (8 * i - shift < 64)
			v |= byte << (8 * i - shift);
	}
	return n < 64 ? v & ((1ull << n) - 1) : v;
}

/*
 * A record's ENTERs (pathtrace_abi.h codes of ABI 1.5, 1.9, 1.13 or 1.14: codes 1 to 4), as the
 * ENTER_S and ENTER_AT records they stand for, then its bits as a BITS
 * record. The nbits bits start at bit bits_at of the bitstring p, the
 * nebits codes at codes_at; the record was checked, so p (nbytes) holds
 * them. A code cut off by the end, or one that names an empty prediction,
 * is -PT_EFORMAT.
 */
static int take_bits_enters(struct tr_records *rs, uint32_t cpu, uint64_t ts, const uint8_t *p,
			    uint64_t nbytes, uint32_t bits_at, uint32_t nbits, uint32_t codes_at,
			    uint32_t nebits, int codes)
{
	struct ecode c = { p, codes_at + nebits, codes_at, 0 };
	struct tr_enter_state *st = enter_state(rs, cpu);
	struct ecode_enter e = { 0 };
	int err = 0;

	if (!st)
		return no_enter_state(cpu);
	while (!err && c.pos < c.n) {
		struct pt_rec r = { .type = PT_REC_ENTER_S };

		err = codes >= 3 ? ecode_v3(&c, st, &e, codes == 4) :
		      codes == 2 ? ecode_v2(&c, st, &e) : ecode_v1(&c, st, &e);
		if (!err && codes >= 2) {
			rs->enter_codes++;
			rs->enter_kind_bits += e.kind_bits;
			rs->enter_func_bits += e.func_bits;
			rs->enter_ret_bits += e.ret_bits;
			rs->enter_adv_bits += e.adv_bits;
		}
		if (!err)
			err = append_enter(rs, cpu, ts, r, e.func, e.ret_lo, e.pos);
	}
	if (!err && nbits) {
		uint32_t nw = (nbits + 63) / 64, i;
		struct pt_rec b = { .type = PT_REC_BITS, .len = sizeof(b) + nw * 8, .arg = nbits };
		uint64_t w[PT_BITS_ENTERS_NBITS(~0u) / 64 + 1];

		if (nw > sizeof(w) / sizeof(w[0]))
			return -PT_EFORMAT;
		for (i = 0; i < nw; i++)
			w[i] = bits_from(p, nbytes, bits_at + 64ull * i,
					 nbits - 64 * i < 64 ? nbits - 64 * i : 64);
		err = append(rs, cpu, ts, &b, w, nw, 0);
	}
	return err;
}

/*
 * A SEGMENT_CODED's head (pathtrace_abi.h): its owner (by rank among the
 * CPU's recent segment owners, or in full) and stamp delta. Returns 0, or
 * -PT_EFORMAT when it names an owner the reader has not got, is cut off by
 * hbits, or its delta does not fit 32 bits.
 */
/*
 * An Exp-Golomb code of order k (pathtrace_abi.h: SEGMENT_CODED's delta,
 * SEGMENTS' lengths) of at most max; c->bad when larger or cut off.
 */
static uint32_t ecode_expgolomb(struct ecode *c, unsigned int k, uint32_t max)
{
	uint32_t top = 0;
	uint64_t q, v;

	while (!ecode_bit(c) && !c->bad && top < 20)
		top++;
	if (top >= 20) {
		c->bad = 1;
		return 0;
	}
	q = (1ull << top | ecode_bits(c, top)) - 1;
	v = q << k | ecode_bits(c, k);
	if (v > max)
		c->bad = 1;
	return (uint32_t)v;
}

static int segc_head_read(struct ecode *c, const struct tr_enter_state *st, uint64_t *owner,
			  uint64_t *delta, struct tr_records *rs)
{
	uint32_t r = ecode_bits(c, 2), at = c->pos - 2;

	if (r < 3) {
		*owner = st->seg_owners[r + 1];
		if (!*owner)
			return -PT_EFORMAT;
	} else {
		uint32_t head = ecode_bits(c, 32);	/* PT_SEG_OWNER reads it twice */

		*owner = PT_SEG_OWNER(head);
	}
	rs->seg_coded++;
	rs->seg_owner_bits += c->pos - at;
	at = c->pos;
	*delta = ecode_expgolomb(c, PT_SEGC_DELTA_K, UINT32_MAX);
	rs->seg_delta_bits += c->pos - at;
	return c->bad ? -PT_EFORMAT : 0;
}

/* A SEGMENT_CODED's head, which must end exactly at c->n (its hbits). */
static int segc_head(struct ecode *c, const struct tr_enter_state *st, uint64_t *owner,
		     uint64_t *delta, struct tr_records *rs)
{
	int err = segc_head_read(c, st, owner, delta, rs);

	return err ? err : c->pos != c->n ? -PT_EFORMAT : 0;
}

/* owner to the front of cpu's recent segment owners, as the module moves it. */
static void seg_owner_front(struct tr_enter_state *st, uint64_t owner)
{
	uint32_t r;

	for (r = 0; r < PT_SEGC_OWNERS - 1 && st->seg_owners[r] != owner; r++)
		;
	memmove(&st->seg_owners[1], &st->seg_owners[0], r * sizeof(st->seg_owners[0]));
	st->seg_owners[0] = owner;
}

/* A segment's OWNER: its stamp the CPU's previous one plus delta. */
static int seg_open(struct tr_records *rs, uint32_t cpu, uint64_t ts, struct tr_enter_state *st,
		    uint64_t owner, uint64_t delta)
{
	struct pt_rec o = {
		.type = PT_REC_OWNER, .len = sizeof(o) + sizeof(struct pt_rec_owner), .arg = cpu,
	};
	struct pt_rec_owner ob = { .owner = owner, .stamp = st->stamp + delta };

	st->stamp = ob.stamp;
	seg_owner_front(st, ob.owner);
	return append(rs, cpu, ts, &o, &ob, sizeof(ob) / 8, 0);
}

/*
 * SEGMENT (ABI 1.7) and SEGMENT_CODED (ABI 1.9): the segment's OWNER (its
 * stamp the CPU's previous one plus the delta), then its bits and ENTERs.
 * Returns 0, -PT_EFORMAT (no stamp to add to, a bad head or code), or
 * -PT_ENOMEM.
 */
static int take_segment(struct tr_records *rs, uint32_t cpu, uint64_t ts, struct pt_rec h,
			const uint8_t *body)
{
	struct tr_enter_state *st = enter_state(rs, cpu);
	uint64_t nbytes = h.len - sizeof(h), head, delta, owner;
	int err;

	if (!st)
		return no_enter_state(cpu);
	if (!st->stamp_known)		/* no stamp to add the delta to */
		return -PT_EFORMAT;
	if (h.type == PT_REC_SEGMENT) {
		memcpy(&head, body, sizeof(head));
		owner = PT_SEG_OWNER(head);
		delta = PT_SEG_DELTA(head);
	} else {
		struct ecode c = { body, PT_SEGC_HBITS(h.arg), 0, 0 };

		err = segc_head(&c, st, &owner, &delta, rs);
		if (err)
			return err;
	}
	err = seg_open(rs, cpu, ts, st, owner, delta);
	if (err)
		return err;
	if (h.type == PT_REC_SEGMENT)
		return take_bits_enters(rs, cpu, ts, body + 8, nbytes - 8, 0,
					PT_BITS_ENTERS_NBITS(h.arg), PT_BITS_ENTERS_NBITS(h.arg),
					PT_BITS_ENTERS_NEBITS(h.arg),
					h.arg & PT_BITS_ENTERS_CODES2 ? 2 : 1);
	return take_bits_enters(rs, cpu, ts, body, nbytes, PT_SEGC_HBITS(h.arg),
				PT_SEGC_NBITS(h.arg), PT_SEGC_HBITS(h.arg) + PT_SEGC_NBITS(h.arg),
				PT_SEGC_NEBITS(h.arg), 2);
}

/*
 * SEGMENTS (ABI 1.10): each segment as a SEGMENT_CODED. Returns 0,
 * -PT_ENOMEM, or -PT_EFORMAT at the first segment that cannot be read (no
 * stamp to add to, a bad head, length or code, a body too short) or for
 * anything but fewer than 32 zero bits after the last; *taken says how many
 * were taken before.
 */
static int take_segments(struct tr_records *rs, uint32_t cpu, uint64_t ts, struct pt_rec h,
			 const uint8_t *body, uint32_t *taken)
{
	struct tr_enter_state *st = enter_state(rs, cpu);
	uint64_t nbytes = h.len - sizeof(h), owner, delta;
	struct ecode c = { body, (uint32_t)nbytes * 8, 0, 0 };
	uint32_t i, nbits, nebits, at;
	int err;

	*taken = 0;
	if (!st)
		return no_enter_state(cpu);
	for (i = 0; i < h.arg; i++) {
		if (!st->stamp_known)
			return -PT_EFORMAT;
		err = segc_head_read(&c, st, &owner, &delta, rs);
		if (err)
			return err;
		at = c.pos;
		nbits = ecode_expgolomb(&c, PT_SEGS_NBITS_K, PT_SEGS_LEN_MAX);
		nebits = ecode_expgolomb(&c, PT_SEGS_NEBITS_K, PT_SEGS_LEN_MAX);
		rs->seg_len_bits += c.pos - at;
		if (c.bad || c.n - c.pos < nbits + nebits)
			return -PT_EFORMAT;
		err = seg_open(rs, cpu, ts, st, owner, delta);
		if (!err)
			err = take_bits_enters(rs, cpu, ts, body, nbytes, c.pos, nbits,
					       c.pos + nbits, nebits,
					       h.type == PT_REC_SEGMENTS4 ? 4 :
					       h.type == PT_REC_SEGMENTS3 ? 3 : 2);
		if (err)
			return err;
		c.pos += nbits + nebits;
		rs->enter_bytes += (nebits + 7) / 8;
		++*taken;
	}
	return c.n - c.pos >= 32 || bits_from(body, nbytes, c.pos, c.n - c.pos) ? -PT_EFORMAT : 0;
}

static int take_record(struct tr_records *rs, uint32_t cpu, uint64_t ts, const uint8_t *data,
		       uint32_t size)
{
	struct pt_rec h;
	int err;

	if (size == sizeof(uint32_t)) {
		/* the one record without a pt_rec header: ENTER_S, its arg alone */
		memset(&h, 0, sizeof(h));
		memcpy(&h.arg, data, sizeof(h.arg));
		rs->record_bytes += size;
		rs->records_read++;
		rs->enter_bytes += size;
		return take_enter_s(rs, cpu, ts, h);
	}
	if (tr_check_record(data, size)) {
		rs->bad_records++;
		return append_loss(rs, cpu, ts, TR_LOSS_CORRUPT, 1);
	}
	memcpy(&h, data, sizeof(h));
	rs->record_bytes += h.len;
	rs->records_read++;
	rs->header_bytes += sizeof(h);
	if (h.type == PT_REC_ENTER || h.type == PT_REC_ENTER_AT)
		rs->enter_bytes += h.len - sizeof(h);
	if (h.type == PT_REC_BITS_ENTERS || h.type == PT_REC_BITS_ENTERS3 ||
	    h.type == PT_REC_BITS_ENTERS4 || h.type == PT_REC_SEGMENT)
		rs->enter_bytes += (PT_BITS_ENTERS_NEBITS(h.arg) + 63) / 64 * 8;
	if (h.type == PT_REC_SEGMENT_CODED)
		rs->enter_bytes += (PT_SEGC_NEBITS(h.arg) + 7) / 8;
	if (body_size(h.type, h.arg) == -2) {
		rs->unknown_records++;
		return 0;
	}
	if (h.type == PT_REC_ENTER_AT) {
		struct pt_rec_enter_at e;
		uint32_t *slots = enter_slots(rs, cpu);

		/* Read as the ENTER it stands for, with its full return address. */
		memcpy(&e, data + sizeof(h), sizeof(e));
		if (slots && e.ret_lo)
			slots[PT_ENTER_S_SLOT(e.ret_lo)] = e.ret_lo;
		return append_enter(rs, cpu, ts, h, h.arg, e.ret_lo, e.pending);
	}
	if (h.type == PT_REC_ENTER_S)
		return take_enter_s(rs, cpu, ts, h);
	if (h.type == PT_REC_SEGMENTS || h.type == PT_REC_SEGMENTS3 ||
	    h.type == PT_REC_SEGMENTS4) {
		uint32_t taken;

		err = take_segments(rs, cpu, ts, h, data + sizeof(h), &taken);
		if (err == -PT_EFORMAT) {
			rs->bad_records++;
			/* the segments not taken; one when all were and the end is wrong */
			return append_loss(rs, cpu, ts, TR_LOSS_CORRUPT,
					   taken < h.arg ? h.arg - taken : 1);
		}
		return err;
	}
	if (h.type == PT_REC_SEGMENT || h.type == PT_REC_SEGMENT_CODED) {
		err = take_segment(rs, cpu, ts, h, data + sizeof(h));
		if (err == -PT_EFORMAT) {
			rs->bad_records++;
			return append_loss(rs, cpu, ts, TR_LOSS_CORRUPT, 1);
		}
		return err;
	}
	if (h.type == PT_REC_OWNER) {
		struct tr_enter_state *st = enter_state(rs, cpu);

		if (st) {
			uint64_t owner;

			memcpy(&owner, data + sizeof(h) + offsetof(struct pt_rec_owner, owner),
			       sizeof(owner));
			memcpy(&st->stamp, data + sizeof(h) + offsetof(struct pt_rec_owner, stamp),
			       sizeof(st->stamp));
			st->stamp_known = 1;
			seg_owner_front(st, owner);
		}
	}
	if (h.type == PT_REC_BITS_ENTERS || h.type == PT_REC_BITS_ENTERS3 ||
	    h.type == PT_REC_BITS_ENTERS4) {
		uint32_t nbits = PT_BITS_ENTERS_NBITS(h.arg);

		err = take_bits_enters(rs, cpu, ts, data + sizeof(h), h.len - sizeof(h), 0, nbits,
				       (nbits + 63) / 64 * 64, PT_BITS_ENTERS_NEBITS(h.arg),
				       h.type == PT_REC_BITS_ENTERS4 ? 4 :
				       h.type == PT_REC_BITS_ENTERS3 ? 3 :
				       h.arg & PT_BITS_ENTERS_CODES2 ? 2 : 1);
		if (err == -PT_EFORMAT) {
			rs->bad_records++;
			return append_loss(rs, cpu, ts, TR_LOSS_CORRUPT, 1);
		}
		return err;
	}
	if (h.type == PT_REC_LOSS && h.arg == PT_LOSS_OVERRUN)
		forget_slots(rs, cpu);
	/* The body is 4-aligned in the page; append copies it into aligned words. */
	err = append(rs, cpu, ts, &h, data + sizeof(h), (h.len - sizeof(h)) / 8, 0);
	if (!err && h.type == PT_REC_BLOCK)
		rs->recs[rs->n - 1].pending = (uint32_t)(rs->words[rs->recs[rs->n - 1].body] >> 32);
	return err;
}

/* Event header type_len values of the kernel ring buffer (ring_buffer.h). */
#define RB_TYPE_DATA_MAX 28	/* 1..28: 4 * type_len data bytes follow */
#define RB_TYPE_PADDING 29
#define RB_TYPE_TIME_EXTEND 30
#define RB_TYPE_TIME_STAMP 31

/*
 * The end of the longest run of event headers from off that each move
 * forward and stay inside the committed bytes [off, end): end itself when
 * all do. kbuffer trusts these lengths: a padding or long event whose
 * length field reads as negative sends its internal loop backwards forever
 * (found by check-fuzz). This only checks the lengths as the kernel writes
 * them; kbuffer still does the reading.
 */
static uint64_t page_sane_prefix(const uint8_t *p, uint64_t off, uint64_t end)
{
	while (off < end) {
		uint64_t left = end - off, step;
		uint32_t h, a0 = 0, type;

		if (left < 4)
			return off;
		memcpy(&h, p + off, 4);
		type = h & 31;
		if (type == 0 || type == RB_TYPE_PADDING) {
			if (left < 8)	/* only a tail null padding event may be this short */
				return type == RB_TYPE_PADDING && !(h >> 5) ? end : off;
			memcpy(&a0, p + off + 4, 4);
		}
		if (type == 0) {
			/* array[0] counts itself and the data, rounded to 4 by readers */
			if (a0 < 4 || a0 > left - 4)
				return off;
			step = 4 + (((uint64_t)a0 + 3) & ~3ull);
		} else if (type == RB_TYPE_PADDING) {
			if (a0 > left - 4)
				return off;
			step = 4 + (uint64_t)a0;
			if (step < 8)
				step = 8;
		} else if (type == RB_TYPE_TIME_EXTEND || type == RB_TYPE_TIME_STAMP) {
			step = 8;
		} else {
			step = 4 + 4 * (uint64_t)type;	/* 1 .. RB_TYPE_DATA_MAX */
		}
		if (step > left)
			return off;
		off += step;
	}
	return end;
}

int tr_decode_page(struct tr_records *rs, uint32_t cpu, const void *page, uint32_t page_size)
{
	struct kbuffer *kb;
	uint8_t *copy;
	uint64_t page_ts, commit, size, sane, missed_stored = 0;
	unsigned long long ts;
	uint32_t guard = 0;
	void *data;
	int err = 0;

	if (page_size < 2 * PAGE_HDR || page_size > (1u << 20))
		return -PT_EINVAL;
	rs->pages++;
	memcpy(&page_ts, page, 8);
	ts = page_ts;	/* the loss stamp when no event precedes a cut */
	memcpy(&commit, (const uint8_t *)page + 8, 8);
	size = commit & COMMIT_SIZE_MASK;
	if (PAGE_HDR + size <= page_size) {
		rs->page_bytes += page_size;
		rs->committed_bytes += size;
	}
	if (!tf_page_data_end(page, page_size)) {
		rs->bad_pages++;
		if (PAGE_HDR + size > page_size)
			rs->page_bytes += page_size;
		return append_loss(rs, cpu, page_ts, TR_LOSS_CORRUPT, 1);
	}
	if (commit & RB_MISSED_STORED)
		memcpy(&missed_stored, (const uint8_t *)page + PAGE_HDR + size, 8);
	if (rs->scratch_size < page_size + SLACK) {
		free(rs->scratch);
		rs->scratch = malloc(page_size + SLACK);
		rs->scratch_size = rs->scratch ? page_size + SLACK : 0;
	}
	if (!rs->kb)
		rs->kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	if (!rs->scratch || !rs->kb)
		return -PT_ENOMEM;
	copy = rs->scratch;
	kb = rs->kb;
	memset(copy + PAGE_HDR + size, 0, rs->scratch_size - PAGE_HDR - size);
	/* Only the committed bytes: whatever follows them on the page is stale. */
	memcpy(copy, page, PAGE_HDR + size);
	memcpy(copy + 8, &commit, 8);
	if (commit & RB_MISSED_STORED)
		memcpy(copy + PAGE_HDR + size, &missed_stored, 8);
	/* Events after a malformed header are cut off (a loss, below). */
	sane = page_sane_prefix(copy, PAGE_HDR, PAGE_HDR + size);
	if (sane < PAGE_HDR + size) {
		uint64_t cut = (commit & ~COMMIT_SIZE_MASK) | (sane - PAGE_HDR);

		memset(copy + sane, 0, PAGE_HDR + size - sane);
		memcpy(copy + 8, &cut, 8);
	}
	if (kbuffer_load_subbuffer(kb, copy) < 0) {
		rs->bad_pages++;
		return append_loss(rs, cpu, page_ts, TR_LOSS_CORRUPT, 1);
	}
	if (commit & RB_MISSED_EVENTS) {
		rs->missed_pages++;
		/* kbuffer_missed_events: the stored count, or -1 when not stored. */
		err = append_loss(rs, cpu, page_ts, PT_LOSS_OVERRUN,
				  (commit & RB_MISSED_STORED) ? missed_stored : 0);
		if (err)
			return err;
	}
	for (data = kbuffer_read_event(kb, &ts); data; data = kbuffer_next_event(kb, &ts)) {
		uint64_t off = (uint8_t *)data - copy;
		int esize = kbuffer_event_size(kb);

		/* Each event takes at least 4 bytes: more events than that is a loop. */
		if (++guard > page_size / 4 || esize < 0 || off < PAGE_HDR ||
		    off + (uint64_t)esize > PAGE_HDR + size) {
			rs->bad_events++;
			err = append_loss(rs, cpu, ts, TR_LOSS_CORRUPT, 1);
			return err;
		}
		err = take_record(rs, cpu, ts, data, esize);
		if (err)
			break;
	}
	if (!err && sane < PAGE_HDR + size) {
		rs->bad_events++;
		err = append_loss(rs, cpu, ts, TR_LOSS_CORRUPT, 1);
	}
	return err;
}

int tr_decode_tracefile(struct tr_records *rs, const struct tracefile *tf)
{
	uint32_t i, p;
	int err;

	for (i = 0; i < tf->npages; i++) {
		const struct tf_pages *s = &tf->pages[i];
		const uint8_t *page = s->data;

		/* a trimmed page holds what the decoder reads of it: header, data, count */
		for (p = 0; p < s->nr_pages; p++, page = tf_page_next(s, page)) {
			err = tr_decode_page(rs, s->cpu, page, s->page_size);
			if (err)
				return err;
		}
		rs->stored_bytes += s->bytes;
	}
	return 0;
}

void tr_records_free(struct tr_records *rs)
{
	uint32_t i;

	if (rs->kb)
		kbuffer_free(rs->kb);
	free(rs->scratch);
	free(rs->recs);
	free(rs->words);
	for (i = 0; i < rs->enter_state_cpus; i++)
		free(rs->enter_state[i]);
	free(rs->enter_state);
	memset(rs, 0, sizeof(*rs));
}
