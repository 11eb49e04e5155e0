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

#include "coder/decode.h"

/* struct buffer_data_page on x86-64: u64 time_stamp, local_t commit (8 bytes). */
#define PAGE_HDR 16u
#define COMMIT_SIZE_MASK ((1ull << 27) - 1)	/* as kbuffer's COMMIT_MASK */
#define RB_MISSED_EVENTS (1ull << 31)
#define RB_MISSED_STORED (1ull << 30)
#define SLACK 64u	/* kbuffer may look a few bytes past an event header */

static int grow(struct tr_records *rs, size_t nrecs, size_t nwords)
{
	if (rs->n + nrecs > rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 1024;
		struct tr_rec *g;

		while (cap < rs->n + nrecs)
			cap *= 2;
		g = realloc(rs->recs, cap * sizeof(*g));

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

/*
 * Room for cpu in rs->cpu_last. A CPU no kernel has (a corrupt page
 * tr_decode_page was given) is not tracked: its records read as corrupt.
 */
static int grow_cpus(struct tr_records *rs, uint32_t cpu)
{
	uint32_t n;
	size_t *g;

	if (cpu < rs->cpu_last_n || cpu >= TR_CPUS_MAX)
		return 0;
	n = cpu + 1 > 2 * rs->cpu_last_n ? cpu + 1 : 2 * rs->cpu_last_n;
	g = realloc(rs->cpu_last, n * sizeof(*g));
	if (!g)
		return -PT_ENOMEM;
	memset(g + rs->cpu_last_n, 0, (n - rs->cpu_last_n) * sizeof(*g));
	rs->cpu_last = g;
	rs->cpu_last_n = n;
	return 0;
}

/* cpu's last record, NULL if it has none. */
static struct tr_rec *cpu_last(const struct tr_records *rs, uint32_t cpu)
{
	if (cpu >= rs->cpu_last_n || !rs->cpu_last[cpu])
		return NULL;
	return &rs->recs[rs->cpu_last[cpu] - 1];
}

/* A record appended where grow_cpus and grow made room for it. */
static inline void put_record(struct tr_records *rs, uint32_t cpu, uint64_t ts,
			      const struct pt_rec *h, const void *body, uint16_t nwords,
			      int synthetic)
{
	struct tr_rec *r;

	if (cpu < rs->cpu_last_n)
		rs->cpu_last[cpu] = rs->n + 1;
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
}

static int append(struct tr_records *rs, uint32_t cpu, uint64_t ts, const struct pt_rec *h,
		  const void *body, uint16_t nwords, int synthetic)
{
	int err;

	err = grow_cpus(rs, cpu);
	if (err)
		return err;
	if (grow(rs, 1, nwords))
		return -PT_ENOMEM;
	put_record(rs, cpu, ts, h, body, nwords, synthetic);
	return 0;
}

static void forget_tables(struct tr_records *rs, uint32_t cpu);

/*
 * A loss the reader infers; consecutive CORRUPT losses on a CPU merge.
 * The CPU's coding tables are forgotten: what was lost may have set them.
 */
static int append_loss(struct tr_records *rs, uint32_t cpu, uint64_t ts, uint32_t kind,
		       uint64_t count)
{
	struct pt_rec h = { .type = PT_REC_LOSS, .len = 24, .arg = kind };
	struct pt_rec_loss l = { .count = count };
	struct tr_rec *r = cpu_last(rs, cpu);
	uint64_t body[2];

	forget_tables(rs, cpu);
	if (kind == TR_LOSS_CORRUPT && r && r->synthetic && r->type == PT_REC_LOSS &&
	    r->arg == TR_LOSS_CORRUPT) {
		rs->words[r->body] += count;
		return 0;
	}
	memcpy(body, &l, sizeof(body));
	return append(rs, cpu, ts, &h, body, 2, 1);
}

/*
 * Body bytes each record type must have; -1: any multiple of 8; -2: unknown
 * type; -3: a bad arg; -4: 16 plus a multiple of 16; -5: a multiple of 4,
 * at least 4.
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
	case PT_REC_ENTER_AT:
		return sizeof(struct pt_rec_enter_at);
	case PT_REC_BLOCK:
		return sizeof(struct pt_rec_block);
	case PT_REC_FORK:
		return arg ? -3 : (int64_t)sizeof(struct pt_rec_fork);
	case PT_REC_EXEC:
		return arg ? -3 : (int64_t)sizeof(struct pt_rec_exec);
	case PT_REC_LOSS:
		return arg >= PT_LOSS_OVERRUN && arg <= PT_LOSS_STATE ?
		       (int64_t)sizeof(struct pt_rec_loss) : -3;
	case PT_REC_COUNTERS:
		return -1;
	case PT_REC_PATHS:
		return -4;	/* lost, overflow, then (path, count) pairs */
	case PT_REC_BITS_ENTERS:
		if (arg & 0x8000u)
			return -3;
		return ((uint64_t)PT_BITS_ENTERS_NBITS(arg) + 63) / 64 * 8 +
		       ((uint64_t)PT_BITS_ENTERS_NEBITS(arg) + 63) / 64 * 8;
	case PT_REC_SEGMENTS:		/* the segments say their lengths */
		return arg ? -5 : -3;
	default:		/* PT_REC_ENTER too: never in a ring buffer */
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
	/* The event is rounded up to 4 bytes; the record is a multiple of 8 (SEGMENTS: 4). */
	if (h.len < sizeof(h) || h.len % (h.type == PT_REC_SEGMENTS ? 4 : 8) ||
	    h.len > len || len - h.len >= 8)
		return -PT_EFORMAT;
	want = body_size(h.type, h.arg);
	if (want == -2)
		return 0;	/* a newer minor version's record: skipped by the caller */
	if (want == -3 || (want >= 0 && (uint64_t)want != h.len - sizeof(h)))
		return -PT_EFORMAT;
	if (want == -4 && (h.len - sizeof(h) < 16 || (h.len - sizeof(h)) % 16))
		return -PT_EFORMAT;
	if (want == -5 && (h.len - sizeof(h) < 4 || (h.len - sizeof(h)) % 4))
		return -PT_EFORMAT;
	return 0;
}

/* What the reader keeps of a CPU to read its coded records: as the module's coder. */
struct tr_cpu_tables {
	struct pt_enter_tables enters;
	struct pt_seg_tables segs;
};

/*
 * cpu's tables (~40 KB), allocated at that CPU's first record, so that
 * memory follows the CPUs a file has pages of, not the largest CPU number
 * it names; NULL without memory or for a CPU no kernel has (that CPU's
 * coded records then read as corrupt).
 */
static struct tr_cpu_tables *cpu_tables(struct tr_records *rs, uint32_t cpu)
{
	if (cpu >= TR_CPUS_MAX)
		return NULL;
	if (cpu >= rs->cpu_tables_n) {
		uint32_t n = cpu + 1 > 2 * rs->cpu_tables_n ? cpu + 1 : 2 * rs->cpu_tables_n;
		struct tr_cpu_tables **t = realloc(rs->cpu_tables, n * sizeof(*t));

		if (!t)
			return NULL;
		memset(t + rs->cpu_tables_n, 0, (n - rs->cpu_tables_n) * sizeof(*t));
		rs->cpu_tables = t;
		rs->cpu_tables_n = n;
	}
	if (!rs->cpu_tables[cpu])
		rs->cpu_tables[cpu] = calloc(1, sizeof(*rs->cpu_tables[cpu]));
	return rs->cpu_tables[cpu];
}

/* Why a CPU has no tables: a number no kernel has (a corrupt record), or no memory. */
static int no_tables(uint32_t cpu)
{
	return cpu >= TR_CPUS_MAX ? -PT_EFORMAT : -PT_ENOMEM;
}

/* What the module forgets when a write on cpu is refused, as the reader does at a loss. */
static void forget_tables(struct tr_records *rs, uint32_t cpu)
{
	if (cpu < rs->cpu_tables_n && rs->cpu_tables[cpu]) {
		pt_enters_forget(&rs->cpu_tables[cpu]->enters);
		pt_segs_forget(&rs->cpu_tables[cpu]->segs);
	}
}

/*
 * An ENTER (coded, or ENTER_AT) with its full return address and pending
 * bits, where grow_cpus and grow made room for it.
 */
static inline void put_enter(struct tr_records *rs, uint32_t cpu, uint64_t ts, uint32_t func_id,
			     uint32_t ret_lo, uint32_t pending)
{
	uint64_t ret = ret_lo ? 0xffffffff00000000ull | ret_lo : 0;
	struct pt_rec h = { .type = PT_REC_ENTER, .len = sizeof(h) + sizeof(ret), .arg = func_id };

	put_record(rs, cpu, ts, &h, &ret, 1, 0);
	rs->recs[rs->n - 1].pending = pending;
}

/* The same, room made. Returns 0 or -PT_ENOMEM. */
static int append_enter(struct tr_records *rs, uint32_t cpu, uint64_t ts, uint32_t func_id,
			uint32_t ret_lo, uint32_t pending)
{
	int err = grow_cpus(rs, cpu);

	if (!err && grow(rs, 1, 1))
		err = -PT_ENOMEM;
	if (!err)
		put_enter(rs, cpu, ts, func_id, ret_lo, pending);
	return err;
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
 * c reads the nbits bits at p from pos on, a record's body in rs->scratch
 * (tr_decode_page reads every record there): its codes may be read 8 bytes
 * at a time up to their last bit, since the scratch page goes on past it.
 */
static void body_reader(struct pt_bitreader *c, const struct tr_records *rs, const uint8_t *p,
			uint32_t pos, uint32_t nbits)
{
	const uint8_t *end = rs->scratch + rs->scratch_size;
	uint64_t avail = p >= rs->scratch && p <= end ? (uint64_t)(end - p) : 0;

	pt_br_init(c, p, nbits, pos, avail < UINT32_MAX ? (uint32_t)avail : UINT32_MAX);
}

/*
 * A record's ENTERs (pathtrace_abi.h "ENTER codes") as the ENTER records
 * they stand for, then its bits as a BITS record. The nbits bits start at
 * bit bits_at of the bitstring p, the nebits codes at codes_at; the record
 * was checked, so p (nbytes) holds them. A code cut off by the end, or one
 * that names an empty entry, is -PT_EFORMAT.
 */
static int take_bits_enters(struct tr_records *rs, uint32_t cpu, uint64_t ts, const uint8_t *p,
			    uint64_t nbytes, uint32_t bits_at, uint32_t nbits, uint32_t codes_at,
			    uint32_t nebits)
{
	struct pt_bitreader c;
	struct tr_cpu_tables *t = cpu_tables(rs, cpu);
	struct pt_enter_read e = { 0 };
	int err = 0;

	if (!t)
		return no_tables(cpu);
	body_reader(&c, rs, p, codes_at, codes_at + nebits);
	/* room for the most ENTERs the codes can hold, one a bit */
	err = grow_cpus(rs, cpu);
	if (!err && grow(rs, nebits, nebits))
		err = -PT_ENOMEM;
	while (!err && c.pos < c.n) {
		if (!pt_decode_enter(&c, &t->enters, &e))
			return -PT_EFORMAT;
		rs->enter_codes++;
		rs->enter_kind_bits += e.kind_bits;
		rs->enter_func_bits += e.func_bits;
		rs->enter_ret_bits += e.ret_bits;
		rs->enter_adv_bits += e.adv_bits;
		put_enter(rs, cpu, ts, e.func_id, e.ret_lo, e.pos);
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

/* A segment's OWNER: its stamp the CPU's previous one plus delta. */
static int seg_open(struct tr_records *rs, uint32_t cpu, uint64_t ts, struct tr_cpu_tables *t,
		    uint64_t owner, uint64_t delta)
{
	struct pt_rec o = {
		.type = PT_REC_OWNER, .len = sizeof(o) + sizeof(struct pt_rec_owner), .arg = cpu,
	};
	struct pt_rec_owner ob = { .owner = owner, .stamp = t->segs.stamp + delta };

	pt_segs_learn(&t->segs, ob.owner, ob.stamp);
	return append(rs, cpu, ts, &o, &ob, sizeof(ob) / 8, 0);
}

/*
 * SEGMENTS: each segment as its OWNER and BITS_ENTERS. Returns 0,
 * -PT_ENOMEM, or -PT_EFORMAT at the first segment that cannot be read (no
 * stamp to add to, a bad head, length or code, a body too short) or for
 * anything but fewer than 32 zero bits after the last; *taken says how many
 * were taken before.
 */
static int take_segments(struct tr_records *rs, uint32_t cpu, uint64_t ts, struct pt_rec h,
			 const uint8_t *body, uint32_t *taken)
{
	struct tr_cpu_tables *t = cpu_tables(rs, cpu);
	uint64_t nbytes = h.len - sizeof(h);
	struct pt_bitreader c;
	uint32_t i, nbits, nebits, at;
	struct pt_seg_head sh;
	int err;

	*taken = 0;
	if (!t)
		return no_tables(cpu);
	body_reader(&c, rs, body, 0, (uint32_t)nbytes * 8);
	for (i = 0; i < h.arg; i++) {
		if (!t->segs.stamp_known || !pt_decode_seg_head(&c, &t->segs, &sh))
			return -PT_EFORMAT;
		rs->seg_coded++;
		rs->seg_owner_bits += sh.owner_bits;
		rs->seg_delta_bits += sh.delta_bits;
		at = c.pos;
		nbits = pt_br_expgolomb(&c, PT_SEG_NBITS_K, PT_SEG_LEN_MAX);
		nebits = pt_br_expgolomb(&c, PT_SEG_NEBITS_K, PT_SEG_LEN_MAX);
		rs->seg_len_bits += c.pos - at;
		if (c.bad || c.n - c.pos < nbits + nebits)
			return -PT_EFORMAT;
		err = seg_open(rs, cpu, ts, t, sh.owner, sh.delta);
		if (!err)
			err = take_bits_enters(rs, cpu, ts, body, nbytes, c.pos, nbits,
					       c.pos + nbits, nebits);
		if (err)
			return err;
		c.pos += nbits + nebits;
		rs->enter_bytes += (nebits + 7) / 8;
		++*taken;
	}
	return c.n - c.pos >= 32 || bits_from(body, nbytes, c.pos, c.n - c.pos) ? -PT_EFORMAT : 0;
}

/* A record the reader could not read: one loss where it stood. */
static int corrupt(struct tr_records *rs, uint32_t cpu, uint64_t ts, uint64_t count)
{
	rs->bad_records++;
	return append_loss(rs, cpu, ts, TR_LOSS_CORRUPT, count);
}

static int take_record(struct tr_records *rs, uint32_t cpu, uint64_t ts, const uint8_t *data,
		       uint32_t size)
{
	struct pt_rec h;
	int err;

	if (tr_check_record(data, size))
		return corrupt(rs, cpu, ts, 1);
	memcpy(&h, data, sizeof(h));
	rs->record_bytes += h.len;
	rs->records_read++;
	rs->header_bytes += sizeof(h);
	if (h.type == PT_REC_ENTER_AT)
		rs->enter_bytes += h.len - sizeof(h);
	if (h.type == PT_REC_BITS_ENTERS)
		rs->enter_bytes += (PT_BITS_ENTERS_NEBITS(h.arg) + 63) / 64 * 8;
	if (body_size(h.type, h.arg) == -2) {
		rs->unknown_records++;
		return 0;
	}
	if (h.type == PT_REC_ENTER_AT) {
		struct tr_cpu_tables *t = cpu_tables(rs, cpu);
		struct pt_rec_enter_at e;

		/* Read as the ENTER it stands for, with its full return address. */
		memcpy(&e, data + sizeof(h), sizeof(e));
		if (t && e.ret_lo)
			t->enters.rets[PT_ENTER_SLOT(e.ret_lo)] = e.ret_lo;
		return append_enter(rs, cpu, ts, h.arg, e.ret_lo, e.pending);
	}
	if (h.type == PT_REC_SEGMENTS) {
		uint32_t taken;

		err = take_segments(rs, cpu, ts, h, data + sizeof(h), &taken);
		/* the segments not taken; one when all were and the end is wrong */
		if (err == -PT_EFORMAT)
			return corrupt(rs, cpu, ts, taken < h.arg ? h.arg - taken : 1);
		return err;
	}
	if (h.type == PT_REC_OWNER) {
		struct tr_cpu_tables *t = cpu_tables(rs, cpu);
		struct pt_rec_owner o;

		memcpy(&o, data + sizeof(h), sizeof(o));
		if (t)
			pt_segs_learn(&t->segs, o.owner, o.stamp);
	}
	if (h.type == PT_REC_BITS_ENTERS) {
		uint32_t nbits = PT_BITS_ENTERS_NBITS(h.arg);

		err = take_bits_enters(rs, cpu, ts, data + sizeof(h), h.len - sizeof(h), 0, nbits,
				       (nbits + 63) / 64 * 64, PT_BITS_ENTERS_NEBITS(h.arg));
		return err == -PT_EFORMAT ? corrupt(rs, cpu, ts, 1) : err;
	}
	if (h.type == PT_REC_LOSS && h.arg == PT_LOSS_OVERRUN)
		forget_tables(rs, cpu);
	if (h.type == PT_REC_FORK || h.type == PT_REC_EXEC) {
		/* both bodies end in u32 pending, u32 reserved (zero) */
		uint32_t tail[2];

		memcpy(tail, data + h.len - sizeof(tail), sizeof(tail));
		if (tail[1])
			return corrupt(rs, cpu, ts, 1);
		err = append(rs, cpu, ts, &h, data + sizeof(h), (h.len - sizeof(h)) / 8, 0);
		if (!err)
			rs->recs[rs->n - 1].pending = tail[0];
		return err;
	}
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

/*
 * The stamp of cpu's last record (0: none), where a gap with no stamp of
 * its own goes; *any (if not NULL) says whether cpu has a record.
 */
static uint64_t last_ts(const struct tr_records *rs, uint32_t cpu, int *any)
{
	const struct tr_rec *r = cpu_last(rs, cpu);

	if (any)
		*any = r != NULL;
	return r ? r->ts : 0;
}

int tr_records_copy(struct tr_records *dst, const struct tr_records *src, const struct tr_rec *r)
{
	struct tr_rec *c;

	if (grow(dst, 1, r->nwords))
		return -PT_ENOMEM;
	c = &dst->recs[dst->n++];
	*c = *r;
	c->body = dst->nwords;
	if (r->nwords)
		memcpy(dst->words + dst->nwords, tr_body(src, r), r->nwords * 8u);
	dst->nwords += r->nwords;
	if (r->cpu + 1 > dst->max_cpu)
		dst->max_cpu = r->cpu + 1;
	return 0;
}

/* Records decoded before the window goes to tr_decode_tracefile_each's take (window 0). */
#define WINDOW_RECORDS 8192u
/* Page bytes read before they are released (tracefile_release). */
#define RELEASE_BYTES (1u << 20)

static int by_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Hands rs's records to take, but each CPU's last (a later loss may merge
 * into it, and its stamp stands for the CPU's), which stay as the window's
 * first records, bodies and all. Returns 0, take's error, -PT_ENOMEM.
 */
static int hand_over(struct tr_records *rs, tr_take_fn take, void *ctx)
{
	size_t *keep, nkeep = 0, i, from = 0, nw = 0;
	uint64_t *words;
	uint32_t c;
	int err = 0;

	keep = malloc((rs->cpu_last_n + 1) * sizeof(*keep));
	if (!keep)
		return -PT_ENOMEM;
	for (c = 0; c < rs->cpu_last_n; c++)
		if (rs->cpu_last[c])
			keep[nkeep++] = rs->cpu_last[c] - 1;
	qsort(keep, nkeep, sizeof(*keep), by_index);
	for (i = 0; i <= nkeep && !err; i++) {
		size_t to = i < nkeep ? keep[i] : rs->n;

		if (to > from)
			err = take(ctx, rs, from, to - from);
		from = to + 1;
	}
	for (i = 0; i < nkeep; i++)
		nw += rs->recs[keep[i]].nwords;
	words = malloc((nw ? nw : 1) * sizeof(*words));
	if (!err && !words)
		err = -PT_ENOMEM;
	if (err) {
		free(keep);
		free(words);
		return err;
	}
	nw = 0;
	for (i = 0; i < nkeep; i++) {
		struct tr_rec *r = &rs->recs[keep[i]];

		memcpy(words + nw, tr_body(rs, r), r->nwords * 8u);
		r->body = nw;
		nw += r->nwords;
		rs->recs[i] = *r;
		rs->cpu_last[r->cpu] = i + 1;
	}
	memcpy(rs->words, words, nw * 8u);
	rs->n = nkeep;
	rs->nwords = nw;
	free(keep);
	free(words);
	return 0;
}

int tr_decode_tracefile_cpus(struct tr_records *rs, const struct tracefile *tf, const uint8_t *cpus,
			     uint32_t ncpus, size_t window, tr_take_fn take, void *ctx)
{
	uint32_t i, p, cpu;
	int err;

	for (i = 0; i < tf->npages; i++) {
		const struct tf_pages *s = &tf->pages[i];
		const uint8_t *done = s->data;	/* pages before it are read */

		if (cpus && (s->cpu >= ncpus || !cpus[s->cpu]))
			continue;	/* another thread's */

		/* a trimmed page holds what the decoder reads of it: header, data, count */
		for (p = 0; p < s->nr_pages; p++) {
			const struct tf_page *pg = &s->page[p];

			/* read: a mapped file's pages may leave memory, a MiB at a time */
			if (pg->data - done >= RELEASE_BYTES) {
				tracefile_release(tf, done, pg->data - done);
				done = pg->data;
			}

			if (pg->bad) {
				/* its bytes are not what was recorded, its stamp neither */
				rs->pages++;
				rs->sum_pages++;
				err = append_loss(rs, s->cpu, last_ts(rs, s->cpu, NULL), TR_LOSS_CORRUPT, 1);
			} else {
				err = tr_decode_page(rs, s->cpu, pg->data, s->page_size);
			}
			if (!err && take && rs->n >= (window ? window : WINDOW_RECORDS))
				err = hand_over(rs, take, ctx);
			if (err)
				return err;
		}
		rs->stored_bytes += s->bytes;
		tracefile_release(tf, done, s->data + s->bytes - done);
	}
	if (!tf->complete) {
		/* cut short: whatever each CPU recorded after its last page here is lost */
		for (cpu = 0; cpu < rs->max_cpu; cpu++) {
			int any;
			uint64_t ts = last_ts(rs, cpu, &any);

			if (any) {
				err = append_loss(rs, cpu, ts, TR_LOSS_CORRUPT, 1);
				if (err)
					return err;
				rs->cut_cpus++;
			}
		}
	}
	if (!take || !rs->n)
		return 0;
	err = take(ctx, rs, 0, rs->n);
	if (err)
		return err;
	rs->n = 0;
	rs->nwords = 0;
	if (rs->cpu_last)
		memset(rs->cpu_last, 0, rs->cpu_last_n * sizeof(*rs->cpu_last));
	return 0;
}

int tr_decode_tracefile_each(struct tr_records *rs, const struct tracefile *tf, size_t window,
			     tr_take_fn take, void *ctx)
{
	return tr_decode_tracefile_cpus(rs, tf, NULL, 0, window, take, ctx);
}

void tr_records_add_counts(struct tr_records *dst, const struct tr_records *src)
{
	if (src->max_cpu > dst->max_cpu)
		dst->max_cpu = src->max_cpu;
	dst->pages += src->pages;
	dst->bad_pages += src->bad_pages;
	dst->bad_events += src->bad_events;
	dst->bad_records += src->bad_records;
	dst->unknown_records += src->unknown_records;
	dst->missed_pages += src->missed_pages;
	dst->sum_pages += src->sum_pages;
	dst->cut_cpus += src->cut_cpus;
	dst->page_bytes += src->page_bytes;
	dst->stored_bytes += src->stored_bytes;
	dst->committed_bytes += src->committed_bytes;
	dst->record_bytes += src->record_bytes;
	dst->records_read += src->records_read;
	dst->header_bytes += src->header_bytes;
	dst->enter_bytes += src->enter_bytes;
	dst->seg_coded += src->seg_coded;
	dst->seg_owner_bits += src->seg_owner_bits;
	dst->seg_delta_bits += src->seg_delta_bits;
	dst->seg_len_bits += src->seg_len_bits;
	dst->enter_codes += src->enter_codes;
	dst->enter_kind_bits += src->enter_kind_bits;
	dst->enter_func_bits += src->enter_func_bits;
	dst->enter_ret_bits += src->enter_ret_bits;
	dst->enter_adv_bits += src->enter_adv_bits;
}

int tr_decode_tracefile(struct tr_records *rs, const struct tracefile *tf)
{
	return tr_decode_tracefile_each(rs, tf, 0, NULL, NULL);
}

void tr_records_free(struct tr_records *rs)
{
	uint32_t i;

	if (rs->kb)
		kbuffer_free(rs->kb);
	free(rs->scratch);
	free(rs->recs);
	free(rs->words);
	for (i = 0; i < rs->cpu_tables_n; i++)
		free(rs->cpu_tables[i]);
	free(rs->cpu_tables);
	free(rs->cpu_last);
	memset(rs, 0, sizeof(*rs));
}
