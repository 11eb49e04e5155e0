// SPDX-License-Identifier: GPL-2.0
/*
 * The stream coder (trace-format/coder/coder.h), the module's own, round
 * tripped through the reader: random owners, ENTERs (every kind of caller,
 * ENTER_AT ids), bits and BLOCKs go into the coder, its records into
 * ring-buffer pages in the kernel's format (rbpage), and back out through
 * libtraceevent's kbuffer and the tracefile reader; what comes out must be
 * what went in, segment by segment, to the bit. With a sink that refuses
 * writes, every drop the coder counted must be said by a LOSS.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "coder/coder.h"
#include "coder/decode.h"
#include "rbpage.h"
#include "unit.h"

#define PAGE 4096u
#define MAX_PAGES 4096u
#define MAX_EVENTS 200000u
#define MAX_SEG_BITS 65536u
#define MAX_SEGS 4096u

/* One CPU's coder over pages of the kernel's format. */
struct sink {
	struct pt_coder c;
	uint8_t *pages;
	uint32_t npages;
	struct rbpage pg;
	uint8_t rec[PAGE];
	uint64_t ts;
	uint64_t *rng;
	uint32_t refuse_permille;
	int overflow;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint32_t below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(rnd(s) % n);
}

static struct sink *sink_of(struct pt_coder *c)
{
	return (struct sink *)c;	/* c is the first member */
}

static void next_page(struct sink *s)
{
	if (s->npages)
		rbpage_pad(&s->pg);
	if (s->npages == MAX_PAGES) {
		s->overflow = 1;
		return;
	}
	rbpage_init(&s->pg, s->pages + (size_t)s->npages++ * PAGE, PAGE, s->ts);
}

static void *sink_reserve(struct pt_coder *c, u16 type, unsigned int len)
{
	struct sink *s = sink_of(c);
	uint32_t need = (len > 112 ? 8 : 4) + ((len + 3) & ~3u);

	(void)type;
	if (s->refuse_permille && below(s->rng, 1000) < s->refuse_permille)
		return NULL;
	if (!s->npages || s->pg.tail + need > PAGE - 16)
		next_page(s);
	if (s->overflow)
		return NULL;
	/* as the kernel's: what its page has left after the event */
	c->page_left = PAGE - 16 - s->pg.tail - need;
	memset(s->rec, 0, sizeof(s->rec));
	return s->rec;
}

static void sink_commit(struct pt_coder *c, void *rec)
{
	struct sink *s = sink_of(c);
	struct pt_rec h;

	memcpy(&h, rec, sizeof(h));
	CU_ASSERT_EQUAL_FATAL(rbpage_add(&s->pg, ++s->ts, rec, h.len), 0);
}

static const struct pt_coder_sink page_sink = { sink_reserve, sink_commit };

enum ev_kind { EV_OWNER, EV_ENTER, EV_BLOCK };

struct ev {
	enum ev_kind kind;
	uint64_t a, b;		/* owner and stamp; func_id and ret_lo; func_id and block */
	uint32_t pos;		/* bit position in its segment */
};

/* What went in, or what came out: events, and each segment's bits. */
struct story {
	struct ev *ev;
	uint32_t nev;
	uint64_t *bits;		/* per segment, MAX_SEG_BITS */
	uint32_t *nbits;
	uint32_t nseg;
};

static void story_init(struct story *t)
{
	t->ev = calloc(MAX_EVENTS, sizeof(*t->ev));
	t->bits = calloc((size_t)MAX_SEGS * (MAX_SEG_BITS / 64), sizeof(uint64_t));
	t->nbits = calloc(MAX_SEGS, sizeof(uint32_t));
	t->nev = 0;
	t->nseg = 0;
	CU_ASSERT_FATAL(t->ev && t->bits && t->nbits);
}

static void story_free(struct story *t)
{
	free(t->ev);
	free(t->bits);
	free(t->nbits);
}

static void story_event(struct story *t, enum ev_kind k, uint64_t a, uint64_t b)
{
	CU_ASSERT_FATAL(t->nev < MAX_EVENTS && t->nseg > 0);
	t->ev[t->nev++] = (struct ev){ k, a, b, t->nbits[t->nseg - 1] };
}

static void story_bits(struct story *t, uint64_t v, uint32_t n)
{
	uint64_t *w = t->bits + (size_t)(t->nseg - 1) * (MAX_SEG_BITS / 64);
	uint32_t *nb = &t->nbits[t->nseg - 1], i;

	CU_ASSERT_FATAL(*nb + n <= MAX_SEG_BITS);
	for (i = 0; i < n; i++, (*nb)++)
		w[*nb / 64] |= ((v >> i) & 1) << (*nb % 64);
}

static void story_owner(struct story *t, uint64_t owner, uint64_t stamp)
{
	CU_ASSERT_FATAL(t->nseg < MAX_SEGS);
	t->nseg++;
	story_event(t, EV_OWNER, owner, stamp);
}

static const struct pt_coder_func *func(uint64_t *rng)
{
	static struct pt_coder_func f[24];
	uint32_t i = below(rng, 24);

	/* most in the ENTER codes' range, a few written as ENTER_AT */
	f[i].func_id = i < 21 ? i * 7 : PT_ENTERS_FUNC_MAX + i;
	return &f[i];
}

/* Random operations on one coder; what they should say, into t. */
static void drive(struct sink *s, struct pt_coder_func_cpu *fc, uint64_t *rng, uint32_t nops,
		  struct story *t)
{
	static const uint32_t rets[] = { 0x81000010, 0x81000abc, 0x8123f001, 0xa0000040,
					 0x81000011, 0xc0ffee01 };
	uint64_t clock = 1000;
	uint32_t i;

	for (i = 0; i < nops; i++) {
		uint32_t op = below(rng, 100);
		const struct pt_coder_func *f = func(rng);

		if (op < 6 || s->c.owner == PT_CODER_OWNER_NONE) {
			uint64_t owner = below(rng, 4) ? PT_OWNER(PT_OWNER_TASK, 100 + below(rng, 5)) :
					 PT_OWNER(PT_OWNER_SOFTIRQ, 0);

			clock += below(rng, 3) ? 1 + below(rng, 50) : 1ull << (20 + below(rng, 20));
			if (!pt_coder_owns(&s->c, owner, 0)) {
				pt_coder_open(&s->c, owner, 0, clock);
				story_owner(t, owner, clock);
			}
		} else if (op < 30) {
			uint32_t lo = below(rng, 3) ? rets[below(rng, 6)] : 0;

			pt_coder_enter(&s->c, f, fc, lo);
			story_event(t, EV_ENTER, f->func_id, lo);
		} else if (op < 38) {
			uint32_t block = below(rng, 1000);

			pt_coder_block(&s->c, f, fc, block);
			story_event(t, EV_BLOCK, f->func_id, block);
		} else {
			uint32_t n = below(rng, 4) ? 1 + below(rng, 6) : 1 + below(rng, 64);
			uint64_t v = rnd(rng);

			pt_coder_bits(&s->c, fc, v, n);
			story_bits(t, v, n);
		}
	}
	pt_coder_flush(&s->c);
}

/* The decoded records of cpu 0, as a story; the LOSS(OVERRUN) counts summed into *lost. */
static void read_back(const struct tr_records *rs, struct story *t, uint64_t *lost)
{
	size_t i;

	*lost = 0;
	for (i = 0; i < rs->n; i++) {
		const struct tr_rec *r = &rs->recs[i];
		const uint64_t *w = rs->words + r->body;
		uint32_t seg = t->nseg ? t->nbits[t->nseg - 1] : 0;

		switch (r->type) {
		case PT_REC_OWNER:
			story_owner(t, w[0], w[1]);
			break;
		case PT_REC_ENTER:
			t->ev[t->nev++] = (struct ev){ EV_ENTER, r->arg, (uint32_t)w[0],
						       seg + r->pending };
			break;
		case PT_REC_BLOCK:
			t->ev[t->nev++] = (struct ev){ EV_BLOCK, r->arg, (uint32_t)w[0],
						       seg + (uint32_t)(w[0] >> 32) };
			break;
		case PT_REC_BITS: {
			uint32_t n = r->arg, k;

			for (k = 0; k < n; k += 64)
				story_bits(t, w[k / 64], n - k < 64 ? n - k : 64);
			break;
		}
		case PT_REC_LOSS:
			*lost += w[0];
			break;
		default:
			CU_FAIL("a record the coder does not write");
		}
	}
}

static int decode(struct sink *s, struct tr_records *rs)
{
	uint32_t p;
	int err = 0;

	memset(rs, 0, sizeof(*rs));
	if (s->npages)
		rbpage_pad(&s->pg);
	for (p = 0; p < s->npages && !err; p++)
		err = tr_decode_page(rs, 0, s->pages + (size_t)p * PAGE, PAGE);
	return err;
}

static void sink_init(struct sink *s, uint64_t *rng, uint32_t refuse)
{
	memset(s, 0, sizeof(*s));
	s->pages = calloc(MAX_PAGES, PAGE);
	CU_ASSERT_FATAL(s->pages != NULL);
	s->rng = rng;
	s->refuse_permille = refuse;
	s->c.sink = &page_sink;
	s->c.bits_words = 1 + below(rng, PT_CODER_BITS_WORDS);
	s->c.ebits_words = 4 + below(rng, PT_CODER_EBITS_WORDS - 3);
	s->c.page_size = PAGE;
	s->c.pack_max_bits = PT_CODER_PACK_MAX_BITS;
	pt_coder_reset(&s->c);
}

static int same_event(const struct ev *a, const struct ev *b)
{
	return a->kind == b->kind && a->a == b->a && a->b == b->b && a->pos == b->pos;
}

static void test_round_trip(void)
{
	uint64_t seed = unit_seed() * 2654435761u + 1, rng = seed, lost;
	struct pt_coder_func_cpu fc = { 0 };
	uint32_t run, i, runs = 40;
	uint64_t packs = 0, segs = 0, enters = 0;

	for (run = 0; run < runs; run++) {
		struct sink *s = malloc(sizeof(*s));
		struct story in, out;
		struct tr_records rs;

		CU_ASSERT_FATAL(s != NULL);
		sink_init(s, &rng, 0);
		story_init(&in);
		story_init(&out);
		drive(s, &fc, &rng, 2000 + below(&rng, 20000), &in);
		CU_ASSERT_FATAL(!s->overflow);
		CU_ASSERT_EQUAL(decode(s, &rs), 0);
		CU_ASSERT_EQUAL(rs.bad_records + rs.bad_events + rs.unknown_records, 0);
		read_back(&rs, &out, &lost);
		CU_ASSERT_EQUAL(lost, 0);
		CU_ASSERT_EQUAL(s->c.counts.dropped, 0);
		CU_ASSERT_EQUAL(out.nev, in.nev);
		CU_ASSERT_EQUAL(out.nseg, in.nseg);
		for (i = 0; i < in.nev && i < out.nev; i++)
			if (!same_event(&in.ev[i], &out.ev[i])) {
				fprintf(stderr, "\ncoder seed %#llx run %u: event %u: in %d %#llx %#llx @%u, out %d %#llx %#llx @%u\n",
					(unsigned long long)seed, run, i, in.ev[i].kind,
					(unsigned long long)in.ev[i].a, (unsigned long long)in.ev[i].b,
					in.ev[i].pos, out.ev[i].kind, (unsigned long long)out.ev[i].a,
					(unsigned long long)out.ev[i].b, out.ev[i].pos);
				CU_FAIL("decoded event differs");
				break;
			}
		for (i = 0; i < in.nseg && i < out.nseg; i++) {
			CU_ASSERT_EQUAL(out.nbits[i], in.nbits[i]);
			CU_ASSERT(!memcmp(out.bits + (size_t)i * (MAX_SEG_BITS / 64),
					  in.bits + (size_t)i * (MAX_SEG_BITS / 64),
					  (in.nbits[i] + 63) / 64 * 8));
		}
		packs += s->c.counts.packs_multi;
		segs += in.nseg;
		enters += rs.enter_codes;
		tr_records_free(&rs);
		story_free(&in);
		story_free(&out);
		free(s->pages);
		free(s);
	}
	printf("\ncoder: %u runs, %llu segments, %llu ENTER codes, %llu SEGMENTS of several, seed %#llx ",
	       runs, (unsigned long long)segs, (unsigned long long)enters,
	       (unsigned long long)packs, (unsigned long long)seed);
	/* the paths this test is for: packed segments and coded ENTERs */
	CU_ASSERT(packs > 0 && enters > 0);
}

/* The ENTERs and BLOCKs of a story. */
static uint32_t markers(const struct story *t)
{
	uint32_t i, n = 0;

	for (i = 0; i < t->nev; i++)
		n += t->ev[i].kind != EV_OWNER;
	return n;
}

/* A sink that refuses writes: every drop is located by a LOSS, nothing unreadable. */
static void test_refusals_said(void)
{
	uint64_t seed = unit_seed() * 40503u + 7, rng = seed, lost, dropped = 0;
	struct pt_coder_func_cpu fc = { 0 };
	uint32_t run;

	for (run = 0; run < 40; run++) {
		struct sink *s = malloc(sizeof(*s));
		struct story in, out;
		struct tr_records rs;

		CU_ASSERT_FATAL(s != NULL);
		sink_init(s, &rng, 1 + below(&rng, 30));
		story_init(&in);
		story_init(&out);
		drive(s, &fc, &rng, 1000 + below(&rng, 10000), &in);
		/* the stop's flush once the reader made room */
		s->refuse_permille = 0;
		pt_coder_flush(&s->c);
		CU_ASSERT_EQUAL(decode(s, &rs), 0);
		CU_ASSERT_EQUAL(rs.bad_records + rs.bad_events + rs.unknown_records, 0);
		read_back(&rs, &out, &lost);
		if (lost != s->c.counts.dropped)
			fprintf(stderr, "\ncoder refusals seed %#llx run %u: %llu dropped, %llu said\n",
				(unsigned long long)seed, run,
				(unsigned long long)s->c.counts.dropped, (unsigned long long)lost);
		CU_ASSERT_EQUAL(lost, s->c.counts.dropped);
		/* what a drop took is gone, never made up (segments reopen: owners not counted) */
		CU_ASSERT(markers(&out) <= markers(&in));
		dropped += s->c.counts.dropped;
		tr_records_free(&rs);
		story_free(&in);
		story_free(&out);
		free(s->pages);
		free(s);
	}
	CU_ASSERT(dropped > 0);
}

#define CTX_ROWS 12
#define CTX_CODES 9

/* A random table of context words: some rows with none, each (row, code) at most once. */
static uint32_t ctx_table(uint64_t *rng, struct pt_ctx_word *w, uint32_t *next)
{
	uint32_t row, code, n = 0;

	for (row = 0; row < CTX_ROWS; row++)
		for (code = 1; code < CTX_CODES; code++)
			if (row % 5 != 3 && below(rng, 3))
				w[n++] = (struct pt_ctx_word){ .row = row, .code = code,
							       .nbits = 1 + below(rng, 9) };
	for (code = 0; code < n; code++)
		w[code].value = below(rng, 1u << w[code].nbits);
	for (code = 0; code < CTX_CODES; code++)
		next[code] = below(rng, 8) ? below(rng, CTX_ROWS + 2) : PT_CTX_NONE;
	return n;
}

/*
 * The rows' index (pt_coder_ctx_first) and top words (pt_coder_ctx_tops)
 * are where the search finds them; and a coder given both writes the bits
 * a coder without them writes, adapting words included.
 */
static void test_ctx_index(void)
{
	uint64_t rng = unit_seed() * 2654435761u + 11, words = 0, swapped = 0;
	uint32_t trial;

	for (trial = 0; trial < 400; trial++) {
		struct pt_ctx_word w[CTX_ROWS * CTX_CODES];
		struct pt_ctx_last last[2][CTX_ROWS + 1];
		uint32_t next[CTX_CODES], first[CTX_ROWS + 1], top[CTX_ROWS], top_word[CTX_ROWS];
		struct pt_coder_func f = { .func_id = 7, .flags = PT_PLAN_CTX_SWAP, .ctx_next = next,
					   .ctx_words = w, .nr_ctx_codes = CTX_CODES,
					   .ctx_word_size = sizeof(w[0]) };
		struct pt_coder_func indexed;
		struct pt_coder_func_cpu fc[2] = { { .ctx_last = last[0] }, { .ctx_last = last[1] } };
		struct pt_coder c[2];
		uint32_t i, r, k;

		f.nr_ctx_words = ctx_table(&rng, w, next);
		if (!f.nr_ctx_words)
			continue;
		f.nr_ctx_rows = pt_coder_ctx_rows(&f);
		memset(top, 0, sizeof(top));
		pt_coder_ctx_first(&f, first);
		pt_coder_ctx_tops(&f, top, top_word);
		for (r = 0; r < f.nr_ctx_rows; r++) {
			CU_ASSERT(first[r] <= first[r + 1]);
			for (i = first[r]; i < first[r + 1]; i++)
				CU_ASSERT_EQUAL(w[i].row, r);
			CU_ASSERT((first[r] == first[r + 1]) == !top[r]);
			if (top[r]) {
				CU_ASSERT_EQUAL(w[top_word[r]].row, r);
				CU_ASSERT_EQUAL(w[top_word[r]].code, top[r]);
			}
		}
		CU_ASSERT_EQUAL(first[f.nr_ctx_rows], f.nr_ctx_words);
		f.ctx_top = top;
		indexed = f;
		indexed.ctx_first = first;
		indexed.ctx_top_word = top_word;
		memset(last, 0, sizeof(last));
		memset(c, 0, sizeof(c));
		for (k = 0; k < 2; k++) {
			c[k].bits_words = PT_CODER_BITS_WORDS;
			pt_coder_reset(&c[k]);
			c[k].ctx_func = f.func_id;
			c[k].ctx_row = 0;
		}
		/* at most 60 words of at most 9 bits: no flush, no sink */
		for (i = 0; i < 60; i++) {
			uint32_t code = below(&rng, CTX_CODES);

			/* a new generation of the rows' last codes, as an ENTER's every 256th */
			if (!below(&rng, 16))
				for (k = 0; k < 2; k++)
					c[k].swap_gen++;
			pt_coder_word(&c[0], &f, &fc[0], code, i, 5);
			pt_coder_word(&c[1], &indexed, &fc[1], code, i, 5);
		}
		CU_ASSERT_EQUAL(c[0].nwords, c[1].nwords);
		CU_ASSERT_EQUAL(c[0].nbits, c[1].nbits);
		CU_ASSERT(!memcmp(c[0].words, c[1].words, sizeof(c[0].words)));
		CU_ASSERT(!memcmp(&c[0].counts, &c[1].counts, sizeof(c[0].counts)));
		CU_ASSERT_EQUAL(c[0].ctx_row, c[1].ctx_row);
		words += c[0].counts.ctx_words;
		swapped += c[0].counts.ctx_swapped;
	}
	CU_ASSERT(words > 1000);
	CU_ASSERT(swapped > 100);
}

/*
 * The ENTER tables keep the contexts x and y's mix as they learn: after any
 * run of ENTERs, with forgotten tables (a LOSS) and a cleared one among
 * them, they equal the hashes of the last three functions the format
 * names (pathtrace_abi.h PT_ENTERS_CTX), zeros before the first.
 */
static void test_enter_contexts_kept(void)
{
	struct pt_enter_tables *t = calloc(1, sizeof(*t));
	uint32_t last3[3] = { 0, 0, 0 };	/* pprev, prev, last */
	uint64_t rng = 0x5eed0e47e75ull;
	uint32_t i;

	CU_ASSERT_FATAL(t != NULL);
	for (i = 0; i < 20000; i++) {
		uint32_t f = 1 + below(&rng, below(&rng, 8) ? 12 : PT_ENTERS_FUNC_MAX);
		uint32_t g = 1 + below(&rng, 40);

		CU_ASSERT_EQUAL(pt_enters_x(t), PT_ENTERS_CTX(last3[0], last3[1], last3[2]));
		CU_ASSERT_EQUAL(pt_enters_y(t, g), PT_ENTERS_CTX(last3[1], last3[2], g));
		if (!below(&rng, 500)) {
			pt_enters_forget(t);
			memset(last3, 0, sizeof(last3));
			continue;
		}
		pt_enters_learn(t, PT_ENTERS_ITEM(f, below(&rng, 2), below(&rng, PT_ENTER_SLOTS)),
				1 + below(&rng, 100));
		last3[0] = last3[1];
		last3[1] = last3[2];
		last3[2] = f;
		CU_ASSERT_EQUAL(t->last, f);
	}
	free(t);
}

/*
 * The recent functions kept linked are the move-to-front list the format
 * names (pathtrace_abi.h, "ENTER codes"): after every ENTER, with a few
 * functions and with many, through forgotten tables, each function's rank
 * and the function at each rank are the list's.
 */
static void test_recent_is_move_to_front(void)
{
	struct pt_enter_tables *t = calloc(1, sizeof(*t));
	uint32_t list[PT_ENTERS_RECENT] = { 0 }, r;
	uint64_t rng = 0x7ecea7ull;
	uint32_t i, f;

	CU_ASSERT_FATAL(t != NULL);
	for (i = 0; i < 60000; i++) {
		if (!below(&rng, 3000)) {
			pt_enters_forget(t);
			memset(list, 0, sizeof(list));
			CU_ASSERT_EQUAL(pt_recent_at(t, below(&rng, PT_ENTERS_RECENT)), 0);
			CU_ASSERT_EQUAL(pt_recent_rank(t, 1 + below(&rng, 400)), PT_ENTERS_RECENT);
		}
		f = 1 + below(&rng, below(&rng, 4) ? 18 : 400);
		pt_recent_learn(t, f);
		PT_TO_FRONT(list, PT_ENTERS_RECENT, f);
		for (r = 0; r < PT_ENTERS_RECENT; r++) {
			CU_ASSERT_EQUAL(pt_recent_at(t, r), list[r]);
			if (list[r])
				CU_ASSERT_EQUAL(pt_recent_rank(t, list[r]), r);
		}
		CU_ASSERT_EQUAL(pt_recent_rank(t, 401 + below(&rng, 10)), PT_ENTERS_RECENT);
	}
	free(t);
}

/* Bit i of the LSB-first bitstring p. */
static unsigned int bit_at(const uint8_t *p, uint32_t i)
{
	return p[i / 8] >> (i % 8) & 1;
}

/*
 * The reader's codes are its n bits' alone: over random bitstrings, a
 * reader whose bytes end with the bits, right before a page that cannot be
 * read (a load past them faults), and one that may read on into random
 * bytes after them (where codes are read 8 bytes at a time up to the last
 * bit) read the same values, to the same positions, bad at the same read;
 * and each value of pt_br_bits is the bits there, or 0 and bad when they
 * run past the end.
 */
static void test_bits_read_up_to_their_end(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t rng = 0xb17ead;
	uint32_t round, op;

	CU_ASSERT_FATAL(map != MAP_FAILED);
	CU_ASSERT_FATAL(!mprotect(map + page, page, PROT_NONE));
	for (round = 0; round < 4000; round++) {
		uint32_t n = below(&rng, 400), nbytes = (n + 7) / 8, i;
		uint8_t *exact = map + page - nbytes, *more = malloc(nbytes + 16);
		struct pt_bitreader a, b;

		CU_ASSERT_FATAL(more != NULL);
		for (i = 0; i < nbytes + 16; i++)
			more[i] = (uint8_t)rnd(&rng);
		/* the n bits' zeros run long now and then */
		for (i = 0; i < nbytes; i++)
			if (!below(&rng, 4))
				more[i] = 0;
		memcpy(exact, more, nbytes);
		pt_br_init(&a, exact, n, 0, nbytes);
		pt_br_init(&b, more, n, 0, nbytes + 16);
		for (op = 0; op < 64 && !a.bad; op++) {
			uint32_t at = a.pos, va, vb, want = 0, k;

			if (below(&rng, 2)) {
				k = below(&rng, 33);
				va = pt_br_bits(&a, k);
				vb = pt_br_bits(&b, k);
				for (i = 0; at + k <= n && i < k; i++)
					want |= bit_at(exact, at + i) << i;
				CU_ASSERT_EQUAL(a.bad, at + k > n);
				CU_ASSERT_EQUAL(va, want);
			} else {
				uint32_t max = below(&rng, 2) ? UINT32_MAX : below(&rng, 64);

				k = below(&rng, 6);
				va = pt_br_expgolomb(&a, k, max);
				vb = pt_br_expgolomb(&b, k, max);
			}
			CU_ASSERT_EQUAL(va, vb);
			CU_ASSERT_EQUAL(a.pos, b.pos);
			CU_ASSERT_EQUAL(a.bad, b.bad);
			CU_ASSERT(a.pos <= n);
		}
		free(more);
	}
	munmap(map, 2 * page);
}

UNIT_SUITE(coder,
	   { "records decode to what went in, to the bit", test_round_trip },
	   { "every refused write is said by a LOSS", test_refusals_said },
	   { "context words by the rows' index and top words, as by the search", test_ctx_index },
	   { "the recent functions linked are the move-to-front list", test_recent_is_move_to_front },
	   { "ENTER contexts kept as learned are the last three functions' hashes",
	     test_enter_contexts_kept },
	   { "codes are read up to the bits' end, whatever follows them",
	     test_bits_read_up_to_their_end })
