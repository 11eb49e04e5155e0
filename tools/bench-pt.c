// SPDX-License-Identifier: GPL-2.0
/*
 * bench-pt - Intel PT side by side: what Intel PT would have written for
 * the execution a trace.bin holds, encoded and decoded with the real libipt.
 *
 *   bench-pt TRACE.BIN [-v]     (BENCH_PT_DEBUG=1 in the environment: a
 *                                 differing segment's instructions, both sides)
 *
 * prints one line:
 *   pt_bytes= pt_bits_per_jcc= our_bytes= our_bits_per_jcc= libipt_blocks_per_s=
 *   regen_blocks_per_s= libipt_insns_per_s= regen_insns_per_s= libipt_s= regen_s=
 *   sequences_equal=yes|no (and segments=, instructions=, jcc=)
 *
 * The model. Each owner's stream (one task or interrupt context) is
 * regenerated and written as ChampSim records (pathregen's ChampSim writer: every
 * executed instruction of the traced functions, calls into untraced code
 * kept as calls with a synthetic return at the callee); that instruction
 * sequence is what PT would see with IP filtering to exactly the traced
 * functions' code (one filter range per function and cold part), one PT
 * buffer per stream, as if each ran alone on its CPU:
 *  - a conditional branch is a TNT bit; TNT-8 packets of up to 6 bits,
 *    flushed before every IP packet (as the hardware does);
 *  - a direct jump or call inside the ranges costs nothing; a ret whose
 *    target is the top of the return stack is a TNT bit (return
 *    compression, the stack as libipt's decoder keeps it: every decoded
 *    call pushes, 64 entries); any other indirect branch or ret is a TIP;
 *  - a branch out of the ranges is a TIP.PGD carrying its target; coming
 *    back into them is a TIP.PGE with the IP entered. A direct jump or
 *    call out of the ranges after which the records go on elsewhere in
 *    them (a `jmp __x86_return_thunk`, whose ret runs outside) is its PGD
 *    and the PGE where traced code resumes; a ret that lands on a traced
 *    function's entry went to untraced code first (no ret lands on an
 *    entry): PGD with the IP suppressed (the regenerator does not know an
 *    untraced caller's address), then the PGE. Any other ret to traced
 *    code that is not the stack's top is a TIP; had untraced code run in
 *    between, PT would have paid a PGD/PGE pair: the model errs in PT's
 *    favour;
 *  - IPs are compressed against the last IP (update-16/32/48, sext-48, as
 *    the hardware chooses the shortest that reproduces the IP);
 *  - PSB+ (PSB, MODE.Exec 64-bit, FUP when tracing is on, PSBEND) at the
 *    start and after every 4 KiB, and the last IP forgotten there;
 *  - no timing packets (no TSC, MTC, CYC), no PIP, no PAD.
 * Where the regenerated execution stops (the stream's end, a gap) the
 * buffer ends with FUP + TIP.PGD at the next IP, and a new buffer (a
 * "segment") starts at the next instruction: PT would have lost or
 * resynchronized there too, and the comparison stays exact.
 *
 * Each segment is then decoded with libipt's block decoder on an image
 * holding only the traced functions' code, loaded as ptxed loads raw code:
 * file sections of trace.bin (where each function's bytes lie in it)
 * through libipt's image section cache, one image for every segment's
 * decoder. The decoded instructions (blocks expanded with Zydis) must
 * equal the ChampSim records' instructions inside the ranges, one for one:
 * sequences_equal.
 *
 * Speed, both sides on this machine, on this file, best of five each,
 * the two sides' repetitions alternating (this host's vCPUs change rate
 * by the minute: docs/pathregen.md, "Two vCPUs, not two cores"):
 *   libipt_s   section cache and image set up, then every segment through
 *              a block decoder of its own (allocated, run, freed), with
 *              nothing done per block but counting;
 *   regen_s    a whole pathregen-style run on the file (read, pages,
 *              streams, model, engine over every stream), counting blocks.
 * libipt_insns_per_s and regen_insns_per_s divide the same execution's
 * instructions (instructions=, the traced functions' instructions both
 * sides recover; equal only when sequences_equal=yes, else libipt is not
 * timed and its keys are 0) by each side's time: one unit, one execution.
 * regen regenerates every stream whole; where the PT model cut a segment
 * (a gap) regen's time still covers what PT left out, which errs in
 * libipt's favour. libipt_blocks_per_s and regen_blocks_per_s are each
 * side's own blocks (libipt's run on across direct jumps and calls, so
 * they are fewer and not comparable) over the same times.
 * pt_bits_per_jcc and our_bits_per_jcc divide by the Jcc the ChampSim
 * records hold; our_bytes is trace.bin's page data.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "champsim_record.h"
#include "ipt/ipt.h"
#include "out.h"
#include "streams.h"
#include "pipeline.h"

#define PSB_PERIOD 4096u
#define RETSTACK 64

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The traced code: functions' ranges and bytes, and decoded instructions by address. */
struct range {
	uint64_t lo, hi;		/* [lo, hi) */
	const uint8_t *bytes;
};

struct insn {
	uint64_t ip;
	uint8_t len;
	uint8_t kind;			/* enum kind */
	uint64_t target;		/* direct branches */
};

enum kind { K_OTHER, K_JCC, K_JMP, K_CALL, K_JMP_IND, K_CALL_IND, K_RET, K_FAR };

struct code {
	struct range *r;
	size_t nr;
	uint64_t *entry;		/* the traced functions' entries, sorted */
	size_t nentry;
	struct insn *in;		/* sorted by ip, filled lazily */
	size_t nin, capin;
	ZydisDecoder dec;
};

static int by_lo(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static const struct range *in_ranges(const struct code *c, uint64_t ip)
{
	size_t lo = 0, hi = c->nr;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (c->r[m].hi <= ip)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < c->nr && c->r[lo].lo <= ip && ip < c->r[lo].hi ? &c->r[lo] : NULL;
}

static int by_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int is_entry(const struct code *c, uint64_t ip)
{
	return bsearch(&ip, c->entry, c->nentry, sizeof(*c->entry), by_addr) != NULL;
}

static int code_build(struct code *c, const struct pr_model *m)
{
	uint32_t i;

	c->r = calloc(2 * (size_t)m->nfuncs + 1, sizeof(*c->r));
	c->entry = calloc((size_t)m->nfuncs + 1, sizeof(*c->entry));
	if (!c->r || !c->entry)
		return -PT_ENOMEM;
	for (i = 0; i < m->nfuncs; i++) {
		const struct pr_func *f = &m->funcs[i];

		if (!f->code)
			continue;
		c->entry[c->nentry++] = f->addr;
		c->r[c->nr++] = (struct range){ f->addr, f->addr + f->len, f->code };
		if (f->cold_len)
			c->r[c->nr++] = (struct range){ f->cold_addr, f->cold_addr + f->cold_len,
							f->code + f->len };
	}
	qsort(c->r, c->nr, sizeof(*c->r), by_lo);
	qsort(c->entry, c->nentry, sizeof(*c->entry), by_addr);
	ZydisDecoderInit(&c->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	return 0;
}

/* The instruction at ip inside the ranges (decoded once), or NULL. */
static const struct insn *insn_at(struct code *c, uint64_t ip)
{
	const struct range *r = in_ranges(c, ip);
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct insn x = { .ip = ip };
	size_t lo = 0, hi = c->nin;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->in[mid].ip < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->nin && c->in[lo].ip == ip)
		return &c->in[lo];
	if (!r || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&c->dec, r->bytes + (ip - r->lo),
						       r->hi - ip, &zi, ops)))
		return NULL;
	x.len = zi.length;
	switch (zi.meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		x.kind = K_JCC;
		break;
	case ZYDIS_CATEGORY_UNCOND_BR:
		x.kind = ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE ? K_JMP : K_JMP_IND;
		break;
	case ZYDIS_CATEGORY_CALL:
		x.kind = ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE ? K_CALL : K_CALL_IND;
		break;
	case ZYDIS_CATEGORY_RET:
		x.kind = K_RET;
		break;
	case ZYDIS_CATEGORY_SYSTEM:
	case ZYDIS_CATEGORY_INTERRUPT:
		x.kind = zi.mnemonic == ZYDIS_MNEMONIC_UD2 || zi.mnemonic == ZYDIS_MNEMONIC_INT3 ||
			 zi.mnemonic == ZYDIS_MNEMONIC_IRETQ || zi.mnemonic == ZYDIS_MNEMONIC_SYSRET ?
			 K_FAR : K_OTHER;
		break;
	default:
		x.kind = K_OTHER;
	}
	if ((x.kind == K_JCC || x.kind == K_JMP || x.kind == K_CALL) &&
	    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, &ops[0], ip, &x.target)))
		x.kind = K_FAR;
	if (c->nin == c->capin) {
		size_t cap = c->capin ? 2 * c->capin : 4096;
		struct insn *n = realloc(c->in, cap * sizeof(*n));

		if (!n)
			return NULL;
		c->in = n;
		c->capin = cap;
	}
	memmove(c->in + lo + 1, c->in + lo, (c->nin - lo) * sizeof(*c->in));
	c->in[lo] = x;
	c->nin++;
	return &c->in[lo];
}

/*
 * The decoder's image: the traced functions' bytes, nothing else, as file
 * sections of trace.bin (each function's main part and cold part where
 * their bytes lie in the file), the way ptxed loads raw code.
 */
static int sections_build(const struct tracefile *tf, struct ipt_section **out, size_t *n)
{
	struct ipt_section *s = calloc(2 * (size_t)tf->nfuncs + 1, sizeof(*s));
	uint32_t i;

	*n = 0;
	if (!s)
		return -PT_ENOMEM;
	for (i = 0; i < tf->nfuncs; i++) {
		const struct tf_function *fn = &tf->funcs[i];
		uint64_t off;

		if (!fn->code || !fn->len)
			continue;
		off = (uint64_t)(fn->code - tf->buf);
		s[(*n)++] = (struct ipt_section){ off, fn->len, fn->addr };
		if (fn->cold_len)
			s[(*n)++] = (struct ipt_section){ off + fn->len, fn->cold_len, fn->cold_addr };
	}
	*out = s;
	return 0;
}

/* ------------------------------------------------------------ encoding */

struct seg {
	uint8_t *buf;			/* PT bytes */
	size_t len, cap;
	uint64_t *want;			/* instructions PT must show, in order */
	size_t nwant, capwant;
};

struct enc {
	struct code *c;
	struct seg *segs;
	size_t nseg, capseg;
	uint8_t scratch[64];
	uint64_t last_ip;		/* 0 after PSB: nothing to compress against */
	int have_last;
	int enabled;
	uint64_t tnt;
	unsigned int ntnt;
	size_t since_psb;
	uint64_t ret[RETSTACK];
	unsigned int rtop, rcount;
	uint64_t jcc, bytes;
	int err;
};

static int put(struct enc *e, const void *p, size_t n)
{
	struct seg *s = &e->segs[e->nseg - 1];

	if (s->len + n > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 65536;
		uint8_t *b;

		while (cap < s->len + n)
			cap *= 2;
		b = realloc(s->buf, cap);
		if (!b)
			return -PT_ENOMEM;
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	e->bytes += n;
	e->since_psb += n;
	return 0;
}

/* A packet's bytes (n < 0: libipt's error) into the current segment. */
static void emit(struct enc *e, const uint8_t *p, int n)
{
	if (e->err)
		return;
	if (n < 0) {
		fprintf(stderr, "bench-pt: libipt encoder: %s\n", ipt_errstr(n));
		e->err = -PT_EINVAL;
		return;
	}
	e->err = put(e, p, (size_t)n);
}

static void flush_tnt(struct enc *e)
{
	uint8_t b[32];

	if (!e->ntnt)
		return;
	emit(e, b, ipt_tnt8(b, e->tnt, e->ntnt));
	e->tnt = 0;
	e->ntnt = 0;
}

static void tnt_bit(struct enc *e, int taken)
{
	e->tnt = e->tnt << 1 | (taken ? 1 : 0);	/* the first bit ends up most significant */
	if (++e->ntnt == 6)
		flush_tnt(e);
}

/* The shortest IP compression that reproduces ip from the last IP. */
static void ip_packet(struct enc *e, enum ipt_ip_packet type, uint64_t ip, int suppressed)
{
	uint64_t x = e->last_ip ^ ip;
	enum ipt_ipc ipc;
	uint8_t b[32];

	flush_tnt(e);
	if (suppressed)
		ipc = IPT_SUPPRESSED;
	else if (e->have_last && !(x >> 16))
		ipc = IPT_UPDATE_16;
	else if (e->have_last && !(x >> 32))
		ipc = IPT_UPDATE_32;
	else if (((int64_t)(ip << 16) >> 16) == (int64_t)ip)
		ipc = IPT_SEXT_48;
	else if (e->have_last && !(x >> 48))
		ipc = IPT_UPDATE_48;
	else
		ipc = IPT_FULL;
	if (!suppressed) {
		e->last_ip = ip;
		e->have_last = 1;
	}
	emit(e, b, ipt_ip(b, type, ipc, ip));
}

static void psb_plus(struct enc *e, uint64_t ip)
{
	uint8_t b[32];

	flush_tnt(e);
	emit(e, b, ipt_psb(b));
	e->have_last = 0;
	e->last_ip = 0;
	emit(e, b, ipt_mode_exec64(b));
	if (e->enabled)
		ip_packet(e, IPT_FUP, ip, 0);
	emit(e, b, ipt_psbend(b));
	e->since_psb = 0;
}

static int new_segment(struct enc *e)
{
	if (e->nseg == e->capseg) {
		size_t cap = e->capseg ? 2 * e->capseg : 64;
		struct seg *s = realloc(e->segs, cap * sizeof(*s));

		if (!s)
			return -PT_ENOMEM;
		e->segs = s;
		e->capseg = cap;
	}
	memset(&e->segs[e->nseg++], 0, sizeof(*e->segs));
	e->enabled = 0;
	e->ntnt = 0;
	e->tnt = 0;
	e->rcount = 0;
	psb_plus(e, 0);
	return e->err;
}

static int want(struct enc *e, uint64_t ip)
{
	struct seg *s = &e->segs[e->nseg - 1];

	if (s->nwant == s->capwant) {
		size_t cap = s->capwant ? 2 * s->capwant : 4096;
		uint64_t *w = realloc(s->want, cap * sizeof(*w));

		if (!w)
			return -PT_ENOMEM;
		s->want = w;
		s->capwant = cap;
	}
	s->want[s->nwant++] = ip;
	return 0;
}

static void push_ret(struct enc *e, uint64_t ret)
{
	e->rtop = (e->rtop + 1) % RETSTACK;
	e->ret[e->rtop] = ret;
	if (e->rcount < RETSTACK)
		e->rcount++;
}

/* Tracing stops at ip (the next instruction not executed): FUP + TIP.PGD. */
static void stop_at(struct enc *e, uint64_t ip)
{
	if (!e->enabled)
		return;
	ip_packet(e, IPT_FUP, ip, 0);
	ip_packet(e, IPT_TIP_PGD, 0, 1);
	e->enabled = 0;
}

/*
 * One instruction executed at ip, the next one at next (0: none). Returns
 * 1 when the execution does not go on from here (a new segment follows).
 */
static int step(struct enc *e, uint64_t ip, uint64_t next)
{
	const struct insn *x = insn_at(e->c, ip);
	uint64_t fall;
	int next_in = next && in_ranges(e->c, next);

	if (!x) {		/* untraced code: tracing is off there */
		if (e->enabled)
			return 1;	/* left the ranges without a branch: cannot happen */
		if (next_in) {
			if (e->since_psb >= PSB_PERIOD)
				psb_plus(e, 0);
			ip_packet(e, IPT_TIP_PGE, next, 0);
			e->enabled = 1;
		}
		return 0;
	}
	if (!e->enabled)
		return 1;		/* inside the ranges without a PGE: a cut */
	fall = ip + x->len;
	if (!next)
		return 1;
	switch (x->kind) {
	case K_JCC:
		if (next != fall && next != x->target)
			return 1;
		e->jcc++;
		if (want(e, ip))
			return -1;
		if (next == x->target && !next_in) {
			tnt_bit(e, 1);	/* a conditional tail call or return: the bit, then out */
			ip_packet(e, IPT_TIP_PGD, next, 0);
			e->enabled = 0;
			return 0;
		}
		tnt_bit(e, next == x->target);
		return 0;
	case K_JMP:
	case K_CALL:
		if (next == x->target)
			break;
		if (in_ranges(e->c, x->target))
			return 1;
		/*
		 * Out of the ranges, and untraced code ran before the next
		 * traced instruction (a return thunk's ret, a callee the
		 * records leave out): the jump's PGD, then the PGE back.
		 */
		if (want(e, ip))
			return -1;
		if (x->kind == K_CALL)
			push_ret(e, fall);
		ip_packet(e, IPT_TIP_PGD, x->target, 0);
		e->enabled = 0;
		if (next_in) {
			ip_packet(e, IPT_TIP_PGE, next, 0);
			e->enabled = 1;
		}
		return 0;
	case K_FAR:
		return 1;
	case K_OTHER:
		if (next != fall)
			return 1;
		break;
	default:
		break;
	}
	if (want(e, ip))
		return -1;
	if (x->kind == K_CALL || x->kind == K_CALL_IND)
		push_ret(e, fall);
	if (x->kind == K_OTHER || ((x->kind == K_JMP || x->kind == K_CALL) && next_in))
		return 0;
	if (!next_in) {		/* out of the ranges: the branch's target */
		ip_packet(e, IPT_TIP_PGD, next, 0);
		e->enabled = 0;
		return 0;
	}
	if (x->kind == K_RET && e->rcount && e->ret[e->rtop] == next) {
		e->rtop = (e->rtop + RETSTACK - 1) % RETSTACK;
		e->rcount--;
		tnt_bit(e, 1);	/* return compression */
		return 0;
	}
	if (x->kind == K_RET && is_entry(e->c, next)) {
		/*
		 * No ret lands on a function's entry: this one returned to
		 * untraced code (its address unknown, so not in the packet),
		 * which then entered the next activation.
		 */
		ip_packet(e, IPT_TIP_PGD, 0, 1);
		ip_packet(e, IPT_TIP_PGE, next, 0);
		return 0;
	}
	ip_packet(e, IPT_TIP, next, 0);
	return 0;
}

/*
 * One stream's ChampSim records, n of them at p, into segments. The
 * execution goes on from record i to record i + 1 unless step says no.
 */
static int encode_stream(struct enc *e, const uint8_t *p, size_t n)
{
	size_t i;
	int r;

	if (!n)
		return 0;
	if (new_segment(e))
		return e->err;
	for (i = 0; i < n && !e->err; i++) {
		struct cs_record a, b;
		uint64_t next = 0;

		cs_record_decode(p + i * CS_RECORD_SIZE, &a);
		if (i + 1 < n) {
			cs_record_decode(p + (i + 1) * CS_RECORD_SIZE, &b);
			next = b.ip;
		}
		if (i == 0 && in_ranges(e->c, a.ip)) {
			ip_packet(e, IPT_TIP_PGE, a.ip, 0);
			e->enabled = 1;
		}
		if (e->enabled && e->since_psb >= PSB_PERIOD)
			psb_plus(e, a.ip);
		r = step(e, a.ip, next);
		if (r < 0)
			return -PT_ENOMEM;
		if (r == 0)
			continue;
		/*
		 * The execution stops here: a gap, the stream's end, or a
		 * branch whose outcome is not known. The instruction counts only
		 * when its successor is sure (a plain one); tracing stops at the
		 * next one PT would run.
		 */
		if (e->enabled) {
			const struct insn *x = insn_at(e->c, a.ip);

			if (x && x->kind == K_OTHER) {
				if (want(e, a.ip))
					return -PT_ENOMEM;
				stop_at(e, a.ip + x->len);
			} else {
				stop_at(e, a.ip);
			}
		}
		flush_tnt(e);
		if (i + 1 < n && new_segment(e))
			return e->err;
		if (i + 1 < n && in_ranges(e->c, next)) {
			ip_packet(e, IPT_TIP_PGE, next, 0);
			e->enabled = 1;
		}
	}
	flush_tnt(e);
	return e->err;
}

/* ------------------------------------------------------------ decoding */

struct decoded {
	uint64_t blocks, insns;
	uint64_t got_ip, want_ip;
	struct blk *bv;
	size_t nb, cap;
};

struct blk {
	uint64_t ip;
	uint32_t ninsn;
};

static int keep_block(uint64_t ip, uint32_t ninsn, void *ctx)
{
	struct decoded *d = ctx;

	if (d->nb == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 4096;
		struct blk *n = realloc(d->bv, cap * sizeof(*n));

		if (!n)
			return -PT_ENOMEM;
		d->bv = n;
		d->cap = cap;
	}
	d->bv[d->nb++] = (struct blk){ ip, ninsn };
	return 0;
}

/* The decoded blocks, instruction by instruction, against what the segment wants. */
static int compare(struct enc *e, const struct seg *s, struct decoded *d)
{
	size_t k = 0, b;

	for (b = 0; b < d->nb; b++) {
		uint64_t ip = d->bv[b].ip;
		uint32_t j;

		for (j = 0; j < d->bv[b].ninsn; j++) {
			const struct insn *x = insn_at(e->c, ip);

			if (k >= s->nwant || s->want[k] != ip) {
				d->got_ip = ip;
				d->want_ip = k < s->nwant ? s->want[k] : 0;
				return 1;
			}
			k++;
			d->insns++;
			if (!x)
				return 1;
			/* a block goes on across direct jumps and calls */
			ip = x->kind == K_JMP || x->kind == K_CALL ? x->target : ip + x->len;
		}
	}
	if (k != s->nwant) {
		d->got_ip = 0;
		d->want_ip = s->want[k];
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------ regen */

struct counting {
	uint64_t blocks;
};

static int count_blocks(void *ctx, const struct regen_event *ev)
{
	struct counting *c = ctx;

	c->blocks += ev->type == REGEN_EV_BLOCK;
	return 0;
}

/* Each stream's ChampSim records in memory, then encoded as Intel PT (pr_trace_walk's hooks). */
struct records_to_pt {
	struct enc *e;
	struct out_writer *cs;
	FILE *null;
	char *buf;
	size_t len;
};

static int records_open(void *ctx, const struct out_stream *st)
{
	struct records_to_pt *rp = ctx;
	FILE *mem;

	(void)st;
	rp->buf = NULL;
	rp->len = 0;
	mem = open_memstream(&rp->buf, &rp->len);
	if (!mem)
		return -PT_ENOMEM;
	rp->cs->fp = mem;
	return 0;
}

static int records_encode(void *ctx, const struct out_stream *st, int err)
{
	struct records_to_pt *rp = ctx;

	(void)st;
	fclose(rp->cs->fp);
	rp->cs->fp = rp->null;
	if (!err)
		err = encode_stream(rp->e, (const uint8_t *)rp->buf, rp->len / CS_RECORD_SIZE);
	free(rp->buf);
	rp->buf = NULL;
	return err;
}

#define REPS 5

struct timing {
	double seconds;			/* best of REPS */
	uint64_t blocks, insns;
};

/* t seconds of one repetition into tm, the best so far (tm->seconds 0: none yet). */
static void best_of(struct timing *tm, double t)
{
	if (!tm->seconds || t < tm->seconds)
		tm->seconds = t;
}

/*
 * One whole pathregen-style run without output (read, pages, streams,
 * model, engine over every stream) into tm (best_of). Returns 0 or PT_E*.
 */
static int regen_once(const char *path, struct timing *tm)
{
	struct pr_trace l;
	struct counting cnt = { 0 };
	double t = now();
	uint32_t i;
	int err;

	err = pr_trace_load(path, &l, 1, 1);
	for (i = 0; !err && i < l.ss.nstreams; i++)
		regen_stream(&l.m.fs, &l.ss.streams[i], count_blocks, &cnt);
	t = now() - t;
	pr_trace_free(&l);
	if (err)
		return err;
	best_of(tm, t);
	tm->blocks = cnt.blocks;
	return 0;
}

/*
 * libipt on every segment as ptxed would run it, decoder setup included
 * (the section cache and image built from trace.bin, a block decoder per
 * segment), into tm (best_of; blocks and instructions as decoded).
 * Returns 0 or libipt's error.
 */
static int libipt_once(const char *path, const struct ipt_section *sec, size_t nsec,
		       const struct enc *e, struct timing *tm)
{
	struct ipt_image *img;
	uint64_t blocks = 0, insns = 0;
	double t = now();
	size_t si;
	int st = ipt_image_open(&img, path, sec, nsec);

	for (si = 0; !st && si < e->nseg; si++)
		st = ipt_decode(e->segs[si].buf, e->segs[si].len, img, NULL, NULL, &blocks, &insns);
	ipt_image_close(img);
	t = now() - t;
	if (st)
		return st;
	best_of(tm, t);
	tm->blocks = blocks;
	tm->insns = insns;
	return 0;
}

static double per_s(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : 0.0;
}

int main(int argc, char **argv)
{
	struct pr_trace l;
	struct code c;
	struct enc e;
	struct out_writer cs = { .ops = &out_champsim_ops };
	struct out_writer *ws[1] = { &cs };
	struct decoded d = { 0 };
	size_t si;
	uint64_t page_bytes = 0;
	const char *path = NULL;
	struct ipt_section *sec = NULL;
	struct ipt_image *img = NULL;
	struct timing rt = { 0 }, lt = { 0 };
	size_t nsec = 0;
	int verbose = 0, i, err, equal = 1, failed_decode = 0, status = 1;
	uint32_t k;
	FILE *null = NULL;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return puts("usage: bench-pt TRACE.BIN [-v]"), 0;
		if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!path && argv[i][0] != '-')
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path) {
		fprintf(stderr, "usage: bench-pt TRACE.BIN [-v]\n");
		return 2;
	}
	memset(&c, 0, sizeof(c));
	memset(&e, 0, sizeof(e));
	err = pr_trace_load(path, &l, 1, 1);
	if (!err)
		err = code_build(&c, &l.m);
	if (!err)
		err = sections_build(&l.tf, &sec, &nsec);
	if (err) {
		fprintf(stderr, "bench-pt: %s: %s\n", path,
			err == -PT_EIO ? strerror(errno) : pt_strerror(err));
		goto out;
	}
	for (k = 0; k < l.tf.npages; k++)
		page_bytes += l.tf.pages[k].bytes;
	e.c = &c;
	cs.m = &l.m;
	null = fopen("/dev/null", "w");
	if (!null) {
		fprintf(stderr, "bench-pt: /dev/null: %s\n", strerror(errno));
		goto out;
	}
	cs.fp = null;
	err = out_open_all(ws, 1);
	if (!err) {
		struct records_to_pt rp = { .e = &e, .cs = &cs, .null = null };
		struct pr_walk w = { .begin = records_open, .end = records_encode, .ctx = &rp };

		err = pr_trace_walk(&l, ws, 1, &w);
	}
	cs.fp = null;
	{
		/* the ChampSim writer's summary is pathregen's business: -v shows it */
		int saved = verbose ? -1 : dup(2);

		if (saved >= 0)
			dup2(fileno(null), 2);
		out_close_all(ws, 1);
		if (saved >= 0) {
			dup2(saved, 2);
			close(saved);
		}
	}
	if (err) {
		fprintf(stderr, "bench-pt: %s: modelling: %s\n", path, pt_strerror(err));
		goto out;
	}
	err = ipt_image_open(&img, path, sec, nsec);
	if (err) {
		fprintf(stderr, "bench-pt: %s: libipt image: %s\n", path, ipt_errstr(err));
		goto out;
	}
	for (si = 0; si < e.nseg; si++) {
		const struct seg *s = &e.segs[si];
		uint64_t insns = 0;
		int st;

		d.nb = 0;
		st = ipt_decode(s->buf, s->len, img, keep_block, &d, &d.blocks, &insns);
		if (st) {
			failed_decode++;
			if (equal || verbose)
				fprintf(stderr, "bench-pt: segment %zu: libipt: %s\n", si,
					st < 0 ? ipt_errstr(st) : pt_strerror(st));
			equal = 0;
			continue;
		}
		if (compare(&e, s, &d)) {
			if (getenv("BENCH_PT_DEBUG")) {
				size_t q;

				for (q = 0; q < s->nwant; q++)
					fprintf(stderr, "  want %#" PRIx64 " kind %d\n", s->want[q],
						insn_at(&c, s->want[q]) ? insn_at(&c, s->want[q])->kind : -1);
				for (q = 0; q < d.nb; q++)
					fprintf(stderr, "  got block %#" PRIx64 " x%u\n", d.bv[q].ip,
						d.bv[q].ninsn);
			}
			if (equal || verbose)
				fprintf(stderr, "bench-pt: segment %zu: decoded 0x%" PRIx64
					", the execution had 0x%" PRIx64 "\n", si, d.got_ip,
					d.want_ip);
			equal = 0;
		}
	}
	/* one repetition of each side after the other: both see the host's rates of the moment */
	for (i = 0; i < REPS; i++) {
		if (equal) {
			err = libipt_once(path, sec, nsec, &e, &lt);
			if (err) {
				fprintf(stderr, "bench-pt: %s: libipt: %s\n", path, ipt_errstr(err));
				goto out;
			}
		}
		err = regen_once(path, &rt);
		if (err) {
			fprintf(stderr, "bench-pt: %s: %s\n", path, pt_strerror(err));
			goto out;
		}
	}
	/*
	 * The same execution in one unit: the instructions of the traced
	 * functions both sides recover (equal when sequences_equal=yes), over
	 * each side's best time. A decoder that failed is not timed (0).
	 */
	printf("pt_bytes=%" PRIu64 " pt_bits_per_jcc=%.2f our_bytes=%" PRIu64
	       " our_bits_per_jcc=%.2f libipt_blocks_per_s=%.0f regen_blocks_per_s=%.0f"
	       " libipt_insns_per_s=%.0f regen_insns_per_s=%.0f libipt_s=%.9f regen_s=%.9f"
	       " sequences_equal=%s segments=%zu instructions=%" PRIu64 " jcc=%" PRIu64 "\n",
	       e.bytes, e.jcc ? 8.0 * (double)e.bytes / (double)e.jcc : 0.0, page_bytes,
	       e.jcc ? 8.0 * (double)page_bytes / (double)e.jcc : 0.0,
	       per_s(lt.blocks, lt.seconds), per_s(rt.blocks, rt.seconds),
	       per_s(lt.insns, lt.seconds), per_s(d.insns, rt.seconds), lt.seconds, rt.seconds,
	       equal ? "yes" : "no", e.nseg, d.insns, e.jcc);
	if (verbose)
		fprintf(stderr, "bench-pt: %d of %zu segments did not decode\n", failed_decode,
			e.nseg);
	status = equal ? 0 : 1;
out:
	if (null)
		fclose(null);
	free(d.bv);
	for (si = 0; si < e.nseg; si++) {
		free(e.segs[si].buf);
		free(e.segs[si].want);
	}
	free(e.segs);
	ipt_image_close(img);
	free(sec);
	free(c.r);
	free(c.entry);
	free(c.in);
	pr_trace_free(&l);
	return status;
}
