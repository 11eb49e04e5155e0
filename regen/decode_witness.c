// SPDX-License-Identifier: GPL-2.0
/*
 * Witness decoder (1994 paper, Fig. 15), table-driven: the model is a
 * struct encoding; state[0] holds the pending witness code (0: none),
 * state[1] and state[2] the framed call last named (framed_call_of),
 * state[3] the run after the step last taken (lookup_step.run; 0: none).
 *
 * Fig. 15 reads the next witness ahead; in a multiprocedure stream the
 * bits after an activation's last witness belong to someone else, so a
 * witness is read only when needed: at a predicate with none pending, or
 * on a witnessed edge with none pending. The blocking property makes this
 * exact: from a predicate, every path meets one of this function's own
 * witnesses before a call or EXIT, so the code read is this activation's.
 * A vertex witness (encoding.h) is consumed on entering its vertex, after
 * the edge's own code. An entry witness is read from the ENTER marker that
 * waits at the current position (br->enter) when it names one of this
 * function's entry-witnessed calls: no bits were emitted since, so the
 * walk runs emission-free to that call; codes read from the bits are
 * never entry codes.
 *
 * At a predicate a code is read as a word of that predicate's row
 * (encoding.h: words are prefix-free within each row): the row's shortest
 * word's bits at once, then a bit at a time until the bits read are a
 * word. Where no predicate came since the last code, only one word can:
 * its bits are read and compared.
 *
 * With words by context (br's context) a word is read in the
 * row the module chose it from: after a witness, the row of the decoder's
 * next read (ctx_next), which for a predicate must be that predicate's.
 *
 * Framed calls (PT_PLAN_FRAMED, encoding.h): no bit blocks them, so an
 * ENTER at the current position may belong to a call ahead, reached
 * without emitting. Before reading at a predicate, an ENTER there that
 * names a framed call of this function (by its return address, or by its
 * frame) steers the walk to that call emission-free; the engine descends
 * there. The word read after such a callee may be in the row of a
 * predicate before the call (the caller's context outlived the callee,
 * PT_PLAN_CTX_RESTORE): it is read in that row, and the code must still
 * lie ahead.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>

#include "bitreader.h"

/* A row's lookup: entry v is the word the next width bits (value v) begin with. */
struct lookup_entry {
	uint32_t code;		/* 0: none (no word, or one longer than width) */
	uint8_t nbits;
};

struct lookup_row {
	const struct lookup_entry *ent;	/* 1 << width entries; NULL: no lookup */
	uint32_t width;
};

/*
 * An edge the walk may take and what traversing it takes (need): 0 when
 * it is plain (it emits nothing and leads to a vertex that emits nothing
 * and is no entry witness), else the one code it uses up, which must be
 * pending (it emits, or leads to a vertex that does, and nothing else is
 * read there), else NEED_READ; and the run that follows it (witness_run),
 * for the code it leaves pending where the step fixes it (the pending
 * code's step at a predicate, or a step that uses the code up; else
 * none pending): where it starts in regen_word_lookup.run_pool, or 0.
 */
struct lookup_step {
	uint32_t edge;
	uint32_t need;
	uint32_t run;
};

struct regen_word_lookup {
	struct lookup_row *pred;	/* npred: the predicates' rows */
	struct lookup_row *ctx;		/* nctx_rows: the context rows */
	struct lookup_entry *store;
	/*
	 * The walk's common cases in one or two loads (witness_next_edge):
	 * per vertex, its only out-edge, or (edge ne + its predicate row)
	 * the row's steps by pending code, or GRAPH_NONE (no out-edge, or a
	 * predicate without a row); per predicate row and code 0..nwit,
	 * encoding.next's edge (GRAPH_NONE: none) and its need.
	 */
	struct lookup_step *out;	/* nv */
	struct lookup_step *next;	/* npred * (nwit + 1) */
	/*
	 * The framed calls (encoding.call_framed), sorted by return address
	 * then vertex, and for each, which vertices reach it emission-free
	 * (reach_to): a bit per vertex, reach_words(g) words each.
	 */
	uint32_t nframed;
	uint64_t *framed_ret;
	uint32_t *framed_v;
	uint64_t *framed_reach;
	/*
	 * The walk's runs (witness_run), each: its length n, the vertex it
	 * starts at, the code pending there and after it, its n edges.
	 * run_pool[0] is the empty run.
	 */
	uint32_t *run_pool;
};

/* Words of one row: [first, end) of parallel arrays sorted by (nbits, value). */
struct row_words {
	uint32_t first, end;
	const uint8_t *nbits;
	const uint64_t *value;
	const uint32_t *code;
	const struct lookup_row *lk;	/* or NULL */
};

/* The row of a predicate's words (row-wide, FORMAT.md "Witness words"). */
static struct row_words pred_words(const struct regen_func *f, const struct encoding *enc,
				   uint32_t row)
{
	return (struct row_words){ enc->word_start[row], enc->word_start[row + 1],
				   enc->word_nbits, enc->word_value, enc->word_code,
				   f->lookup ? &f->lookup->pred[row] : NULL };
}

/* A context row's words (FORMAT.md "Witness words by context"). */
static struct row_words ctx_words(const struct regen_func *f, const struct encoding *enc,
				  uint32_t row)
{
	return (struct row_words){ enc->ctx_start[row], enc->ctx_start[row + 1],
				   enc->ctx_nbits, enc->ctx_value, enc->ctx_code,
				   f->lookup ? &f->lookup->ctx[row] : NULL };
}

/* Width of the lookup of words [first, end) (sorted by nbits), or 0 for none. */
static uint32_t lookup_width(const uint8_t *nbits, uint32_t first, uint32_t end)
{
	if (first == end || nbits[end - 1] > REGEN_LOOKUP_BITS)
		return 0;
	return nbits[end - 1] ? nbits[end - 1] : 1;
}

/* Row [first, end)'s lookup at *at (its entries zeroed); *at moves past it. */
static void lookup_fill(struct lookup_row *lr, const uint8_t *nbits, const uint64_t *value,
			const uint32_t *code, uint32_t first, uint32_t end, struct lookup_entry **at)
{
	uint32_t width = lookup_width(nbits, first, end), i;
	uint64_t hi;

	lr->width = width;
	lr->ent = width ? *at : NULL;
	if (!width)
		return;
	/* prefix-free words: each value of width bits begins with one word at most */
	for (i = first; i < end; i++)
		for (hi = 0; hi < 1ull << (width - nbits[i]); hi++)
			(*at)[value[i] | hi << nbits[i]] = (struct lookup_entry){ code[i], nbits[i] };
	*at += 1ull << width;
}

/* Whether traversing e emits, or enters a vertex that does (or whose ENTER comes first). */
static int emits_on(const struct encoding *enc, const struct graph *g, uint32_t e)
{
	uint32_t d = g->edges[e].dst;

	return enc->edge_nbits[e] || (enc->vertex_nbits && enc->vertex_nbits[d]) ||
	       (enc->enter_code && enc->enter_code[d]) ||
	       (enc->call_entered && enc->call_entered[d]);
}

/* A framed call's reach (regen_word_lookup.framed_reach): its words, and x's bit in it. */
static size_t reach_words(const struct graph *g)
{
	return ((size_t)g->nv + 63) / 64;
}

static int reach_has(const uint64_t *reach, uint32_t x)
{
	return reach[x >> 6] >> (x & 63) & 1;
}

static void reach_add(uint64_t *reach, uint32_t x)
{
	reach[x >> 6] |= 1ull << (x & 63);
}

/*
 * Sets x's bit in reach for each vertex x from which framed call w is
 * reached emission-free (w too): a walk that reads nothing gets there.
 * stack: nv entries.
 */
static void reach_to(const struct encoding *enc, const struct graph *g, uint32_t w,
		     uint64_t *reach, uint32_t *stack)
{
	uint32_t sp = 0, j;

	memset(reach, 0, reach_words(g) * sizeof(*reach));
	reach_add(reach, w);
	stack[sp++] = w;
	while (sp) {
		uint32_t x = stack[--sp];

		for (j = g->in_start[x]; j < g->in_start[x + 1]; j++) {
			uint32_t e = g->in_edges[j], u = g->edges[e].src;

			if (!reach_has(reach, u) && u != g->exit && !emits_on(enc, g, e)) {
				reach_add(reach, u);
				stack[sp++] = u;
			}
		}
	}
}

/* Framed call vertices by return address (arg: call_ret_addr), then vertex. */
static int by_ret(const void *a, const void *b, void *arg)
{
	const uint64_t *ret = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (ret[x] != ret[y])
		return ret[x] < ret[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * l's framed-call tables for g under enc, whose call vertices return to
 * ret (NULL: none). Returns 0 or -PT_ENOMEM.
 */
static int framed_build(struct regen_word_lookup *l, const struct graph *g,
			const struct encoding *enc, const uint64_t *ret)
{
	uint32_t *stack, v, n = 0, i;

	for (v = 0; enc->call_framed && ret && v < g->nv; v++)
		n += enc->call_framed[v] && ret[v];
	if (!n)
		return 0;
	l->framed_v = malloc(n * sizeof(*l->framed_v));
	l->framed_ret = malloc(n * sizeof(*l->framed_ret));
	l->framed_reach = malloc(n * reach_words(g) * sizeof(*l->framed_reach));
	stack = malloc(((size_t)g->nv + 1) * sizeof(*stack));
	if (!l->framed_v || !l->framed_ret || !l->framed_reach || !stack) {
		free(stack);
		return -PT_ENOMEM;
	}
	for (v = 0; v < g->nv; v++)
		if (enc->call_framed[v] && ret[v])
			l->framed_v[l->nframed++] = v;
	qsort_r(l->framed_v, n, sizeof(*l->framed_v), by_ret, (void *)ret);
	for (i = 0; i < n; i++) {
		l->framed_ret[i] = ret[l->framed_v[i]];
		reach_to(enc, g, l->framed_v[i], l->framed_reach + i * reach_words(g), stack);
	}
	free(stack);
	return 0;
}

/* regen_word_lookup.need: more than using up a pending code (witness_next_edge reads). */
#define NEED_READ UINT32_MAX

/* What traversing e takes: regen_word_lookup.need. */
static uint32_t edge_need(const struct graph *g, const struct encoding *enc, uint32_t e)
{
	uint32_t d = g->edges[e].dst, c = NEED_READ;
	int at_d = enc->vertex_nbits && enc->vertex_nbits[d];

	if (enc->edge_nbits[e] && !at_d)
		c = enc->edge_code[e];
	else if (!enc->edge_nbits[e] && at_d)
		c = enc->vertex_code[d];
	else if (!enc->edge_nbits[e] && !(enc->enter_code && enc->enter_code[d]))
		return 0;
	return c ? c : NEED_READ;
}

/* The step over edge e (GRAPH_NONE: none). */
static struct lookup_step step_over(const struct graph *g, const struct encoding *enc, uint32_t e)
{
	return (struct lookup_step){ e, e == GRAPH_NONE ? NEED_READ : edge_need(g, enc, e), 0 };
}

/* l->out and l->next for g under enc. Returns 0 or -PT_ENOMEM. */
static int fast_build(struct regen_word_lookup *l, const struct graph *g,
		      const struct encoding *enc)
{
	size_t n = (size_t)enc->npred * (enc->nwit + 1), i;
	uint32_t v;

	l->out = malloc(((size_t)g->nv + 1) * sizeof(*l->out));
	l->next = malloc((n + 1) * sizeof(*l->next));
	if (!l->out || !l->next)
		return -PT_ENOMEM;
	for (v = 0; v < g->nv; v++) {
		uint32_t deg = g->out_start[v + 1] - g->out_start[v];

		l->out[v] = step_over(g, enc, GRAPH_NONE);
		if (deg == 1)
			l->out[v] = step_over(g, enc, g->out_edges[g->out_start[v]]);
		else if (deg >= 2 && enc->pred_row[v] != GRAPH_NONE)
			l->out[v] = (struct lookup_step){ g->ne + enc->pred_row[v], NEED_READ, 0 };
	}
	for (i = 0; i < n; i++)
		l->next[i] = step_over(g, enc, enc->next[i]);
	return 0;
}

/*
 * Lookup step st with the pending code: its edge when it reads nothing,
 * keeping the code (st->need 0) or using it up (st->need the code), else
 * GRAPH_NONE (the edge emits something the code does not account for).
 */
static inline uint32_t take_step(const struct lookup_step *st, uint64_t code, uint64_t *state)
{
	if (!st->need) {
		state[0] = code;
		state[3] = st->run;
		return st->edge;
	}
	if (st->need == code) {
		state[0] = 0;
		state[3] = st->run;
		return st->edge;
	}
	return GRAPH_NONE;
}

/*
 * The lookup step of the walk's common case at v with code pending: v's
 * only out-edge, or at a predicate the pending code's edge.
 */
static inline const struct lookup_step *common_step(const struct regen_word_lookup *l,
						    const struct graph *g,
						    const struct encoding *enc, uint32_t v,
						    uint64_t code)
{
	const struct lookup_step *st = &l->out[v];

	if (st->edge >= g->ne && st->edge != GRAPH_NONE && code && code <= enc->nwit)
		st = &l->next[(size_t)(st->edge - g->ne) * (enc->nwit + 1) + code];
	return st;
}

/* Functions with more vertices times codes (nwit + 1) than this get no runs. */
#define RUN_TABLE_MAX (1u << 20)

/*
 * The edges the common case takes from v with *code pending into edges
 * (at most nv), up to EXIT, a call vertex, or a vertex where it does not
 * apply (a read, a check); none from a call vertex. *code becomes the
 * code pending after them. Returns their number.
 */
static uint32_t run_walk(const struct regen_word_lookup *l, const struct graph *g,
			 const struct encoding *enc, uint32_t v, uint64_t *code, uint32_t *edges)
{
	uint64_t state[REGEN_STATE_WORDS] = { *code };
	uint32_t n = 0, e;

	if (g->vflags[v] & GRAPH_V_CALL)
		return 0;
	while (n < g->nv) {
		e = take_step(common_step(l, g, enc, v, state[0]), state[0], state);
		if (e == GRAPH_NONE)
			break;
		edges[n++] = e;
		v = g->edges[e].dst;
		if (v == g->exit || (g->vflags[v] & GRAPH_V_CALL))
			break;
	}
	*code = state[0];
	return n;
}

/* The runs being built (runs_build): at[v * (nwit + 1) + code], the pool and its size. */
struct runs {
	uint32_t *at;
	uint32_t *pool;
	size_t used, cap;
	uint32_t *edges;	/* nv */
};

/*
 * The run from v with code pending, added to the pool the first time:
 * where it starts there, 0 for none; *err -PT_ENOMEM when out of memory.
 */
static uint32_t run_of(struct runs *r, const struct regen_word_lookup *l, const struct graph *g,
		       const struct encoding *enc, uint32_t v, uint64_t code, int *err)
{
	size_t key = (size_t)v * (enc->nwit + 1) + code, k;
	uint64_t after = code;
	uint32_t n;

	if (r->at[key] != UINT32_MAX)
		return r->at[key];
	r->at[key] = 0;
	n = run_walk(l, g, enc, v, &after, r->edges);
	if (!n || r->used + 4 + n > UINT32_MAX)
		return 0;
	if (r->used + 4 + n > r->cap) {
		uint32_t *pool;

		while (r->used + 4 + n > r->cap)
			r->cap *= 2;
		pool = realloc(r->pool, r->cap * sizeof(*pool));
		if (!pool) {
			*err = -PT_ENOMEM;
			return 0;
		}
		r->pool = pool;
	}
	r->at[key] = (uint32_t)r->used;
	r->pool[r->used++] = n;
	r->pool[r->used++] = v;
	r->pool[r->used++] = (uint32_t)code;
	r->pool[r->used++] = (uint32_t)after;
	for (k = 0; k < n; k++)
		r->pool[r->used++] = r->edges[k];
	return r->at[key];
}

/*
 * The runs after l's steps (lookup_step.run) for g under enc, after
 * fast_build. Returns 0 or -PT_ENOMEM.
 */
static int runs_build(struct regen_word_lookup *l, const struct graph *g,
		      const struct encoding *enc)
{
	size_t nkeys = (size_t)g->nv * (enc->nwit + 1), i;
	struct runs r = { .cap = 1024, .used = 1 };
	uint32_t v, w = enc->nwit + 1;
	int err = 0;

	r.pool = calloc(r.cap, sizeof(*r.pool));
	l->run_pool = r.pool;
	if (!r.pool)
		return -PT_ENOMEM;
	if (nkeys > RUN_TABLE_MAX)
		return 0;
	r.at = malloc(nkeys * sizeof(*r.at));
	r.edges = malloc(((size_t)g->nv + 1) * sizeof(*r.edges));
	if (!r.at || !r.edges) {
		free(r.at);
		free(r.edges);
		return -PT_ENOMEM;
	}
	memset(r.at, 0xff, nkeys * sizeof(*r.at));
	/* a vertex's only edge: none pending after it (it used the code up, or held none) */
	for (v = 0; v < g->nv && !err; v++)
		if (l->out[v].edge < g->ne)
			l->out[v].run = run_of(&r, l, g, enc, g->edges[l->out[v].edge].dst, 0, &err);
	/* the pending code's step at a predicate: the code stays, or it is used up */
	for (i = 0; i < (size_t)enc->npred * w && !err; i++) {
		struct lookup_step *st = &l->next[i];

		if (st->edge != GRAPH_NONE && (!st->need || st->need == i % w))
			st->run = run_of(&r, l, g, enc, g->edges[st->edge].dst,
					 st->need ? 0 : i % w, &err);
	}
	l->run_pool = r.pool;
	free(r.at);
	free(r.edges);
	return err;
}

int regen_word_lookup_build(const struct graph *g, const struct encoding *enc,
			    const uint64_t *call_ret_addr, struct regen_word_lookup **out)
{
	struct regen_word_lookup *l = calloc(1, sizeof(*l));
	uint32_t nctx = enc->ctx_start ? enc->nctx_rows : 0, r;
	struct lookup_entry *at;
	size_t n = 0;

	*out = l;
	if (!l)
		return -PT_ENOMEM;
	if (fast_build(l, g, enc) || framed_build(l, g, enc, call_ret_addr) ||
	    runs_build(l, g, enc))
		return -PT_ENOMEM;
	for (r = 0; r < enc->npred + nctx; r++) {
		uint32_t width = r < enc->npred ?
				 lookup_width(enc->word_nbits, enc->word_start[r], enc->word_start[r + 1]) :
				 lookup_width(enc->ctx_nbits, enc->ctx_start[r - enc->npred],
					      enc->ctx_start[r - enc->npred + 1]);

		n += width ? (size_t)1 << width : 0;
	}
	l->pred = calloc(enc->npred + 1, sizeof(*l->pred));
	l->ctx = calloc(nctx + 1, sizeof(*l->ctx));
	l->store = calloc(n + 1, sizeof(*l->store));
	if (!l->pred || !l->ctx || !l->store)
		return -PT_ENOMEM;
	at = l->store;
	for (r = 0; r < enc->npred; r++)
		lookup_fill(&l->pred[r], enc->word_nbits, enc->word_value, enc->word_code,
			    enc->word_start[r], enc->word_start[r + 1], &at);
	for (r = 0; r < nctx; r++)
		lookup_fill(&l->ctx[r], enc->ctx_nbits, enc->ctx_value, enc->ctx_code,
			    enc->ctx_start[r], enc->ctx_start[r + 1], &at);
	return 0;
}

void regen_word_lookup_free(struct regen_word_lookup *l)
{
	if (!l)
		return;
	free(l->pred);
	free(l->ctx);
	free(l->store);
	free(l->out);
	free(l->next);
	free(l->framed_v);
	free(l->framed_ret);
	free(l->framed_reach);
	free(l->run_pool);
	free(l);
}

/* The code of the row's word of n bits with value v, or 0. */
static uint32_t word_code(const struct row_words *rw, unsigned int n, uint64_t v)
{
	uint32_t lo = rw->first, hi = rw->end;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rw->nbits[mid] < n || (rw->nbits[mid] == n && rw->value[mid] < v))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rw->end && rw->nbits[lo] == n && rw->value[lo] == v ? rw->code[lo] : 0;
}

/*
 * The row's lookup entry of the next bits (its code 0: no word of at most
 * its width there), or NULL when there is none (no lookup, fewer bits
 * left than its width). Reads nothing.
 */
static inline const struct lookup_entry *lookup_peek(const struct regen_bitreader *br,
						     const struct lookup_row *lk)
{
	uint64_t w = br->pos >> 6, off = br->pos & 63, v;

	if (!lk->ent || br->pos > br->nbits || br->nbits - br->pos < lk->width)
		return NULL;
	v = br->bits[w] >> off;
	if (off + lk->width > 64)
		v |= br->bits[w + 1] << (64 - off);
	return &lk->ent[v & ((1ull << lk->width) - 1)];
}

/*
 * The code of the word the next bits begin with, by the row's lookup lk, or
 * 0 when it cannot tell (no lookup, fewer bits left than its width, or no
 * word of at most its width there): read_code then reads word by word.
 */
static inline uint32_t lookup_code(struct regen_bitreader *br, const struct lookup_row *lk)
{
	const struct lookup_entry *e = lookup_peek(br, lk);

	if (!e)
		return 0;
	br->pos += e->nbits;	/* 0 where no word is */
	return e->code;
}

/* The next code read word by word with a row's words: 1..nemit, or 0 (no word; eof at the end). */
static inline uint64_t read_words(struct regen_bitreader *br, const struct row_words *rw)
{
	unsigned int n, width;
	uint32_t c;
	uint64_t v;

	if (rw->first == rw->end)
		return 0;
	n = rw->nbits[rw->first];
	width = rw->nbits[rw->end - 1];
	v = br_read(br, n);
	while (!br->eof) {
		c = word_code(rw, n, v);
		if (c)
			return c;
		if (n >= width)
			return 0;
		v |= br_read(br, 1) << n++;
	}
	return 0;
}

/* The next code read from the bits with a row's words: its lookup first, then word by word. */
static inline uint64_t read_code(struct regen_bitreader *br, const struct row_words *rw)
{
	uint32_t c = rw->lk && rw->first != rw->end ? lookup_code(br, rw->lk) : 0;

	return c ? c : read_words(br, rw);
}

/* Reads the one word that can come here (no predicate since the last): its code, or 0. */
static uint64_t read_word(struct regen_bitreader *br, unsigned int nbits, uint64_t value,
			  uint32_t code)
{
	uint64_t v = br_read(br, nbits);

	return !br->eof && v == value ? code : 0;
}

/* The context row f's next word is written in (its plan has context words), or ENC_CTX_NONE. */
static inline uint32_t ctx_row(const struct regen_func *f, const struct encoding *enc,
				const struct regen_bitreader *br)
{
	uint32_t row;

	if (!enc->ctx_next)
		return ENC_CTX_NONE;
	row = br_ctx_row_of(f, br);
	return row == REGEN_CTX_ENTRY ? enc->ctx_next[0] : row;
}

/*
 * Adapting words (PT_PLAN_CTX_SWAP; pathtrace_abi.h): the member whose word
 * x's word trades with in a row whose top (shortest word) is top and whose
 * state is l, for a read that began at bit from: l's last member and the
 * top trade while no reset came since l's word ended. Either way round:
 * the word written for a member, or the member a word read stands for.
 */
static inline uint32_t swap_peer(const struct regen_ctx_last *l, const struct regen_bitreader *br,
			  uint32_t top, uint32_t x, uint64_t from)
{
	if (l->walk != br->walk || from >= l->limit || l->code == top)
		return x;
	return x == top ? l->code : x == l->code ? top : x;
}

/* The row remembers member x, read (or written) just before br->pos. */
static inline void swap_remember(struct regen_ctx_last *l, struct regen_bitreader *br, uint32_t x)
{
	l->code = x;
	l->limit = br_reset_limit(br, br->pos);
	l->walk = br->walk;
}

/* Context row row's adapting state, or NULL where its words do not adapt. */
static inline struct regen_ctx_last *swap_row(const struct regen_func *f,
					      const struct encoding *enc, uint32_t row)
{
	if (!f->ctx_swap || row >= enc->nctx_rows ||
	    enc->ctx_start[row] == enc->ctx_start[row + 1])
		return NULL;
	return &f->ctx_swap->row[row];
}

/* The code the member c read in context row row stands for (read from bit from). */
static inline uint64_t swap_code(const struct regen_func *f, const struct encoding *enc,
			  struct regen_bitreader *br, uint32_t row, uint64_t c, uint64_t from)
{
	struct regen_ctx_last *l = swap_row(f, enc, row);
	uint32_t code;

	if (!l)
		return c;
	/* sorted by (nbits, value): the first is the top */
	code = swap_peer(l, br, enc->ctx_code[enc->ctx_start[row]], (uint32_t)c, from);
	swap_remember(l, br, code);
	return code;
}

/*
 * --words: one more read of code in context row row, begun at bit from;
 * and the bits of the word it would take if the words adapted
 * (regen_word_reads.swap_bits), by word index on the fixed words.
 */
static inline void count_ctx(const struct regen_func *f, const struct encoding *enc,
		      struct regen_bitreader *br, uint32_t row, uint64_t code, uint64_t from)
{
	struct regen_word_reads *wr = f->word_reads;
	uint32_t i, top;

	if (!wr || row >= enc->nctx_rows)
		return;
	top = enc->ctx_start[row];	/* sorted by (nbits, value): the shortest */
	for (i = top; i < enc->ctx_start[row + 1] && enc->ctx_code[i] != code; i++)
		;
	if (i == enc->ctx_start[row + 1])
		return;
	wr->ctx[i]++;
	wr->ctx_bits += br->pos - from;	/* its own word's, or (adapting) another's */
	wr->swap_bits += enc->ctx_nbits[swap_peer(&wr->last[row], br, top, i, from)];
	swap_remember(&wr->last[row], br, i);
}

/* --words: one more read with no context, of the bits since from. */
static void count_plain(const struct regen_func *f, const struct regen_bitreader *br,
			uint64_t from)
{
	if (f->word_reads) {
		f->word_reads->plain++;
		f->word_reads->plain_bits += br->pos - from;
	}
}

/* --words: one more read of code in context row row (ENC_CTX_NONE: none), begun at bit from. */
static void count_word(const struct regen_func *f, const struct encoding *enc,
		       struct regen_bitreader *br, uint32_t row, uint64_t code, uint64_t from)
{
	if (row != ENC_CTX_NONE)
		count_ctx(f, enc, br, row, code, from);
	else
		count_plain(f, br, from);
}

/* After a word of code read from the bits: the module's context is the code's next row. */
static inline void ctx_after(const struct regen_func *f, const struct encoding *enc,
		      struct regen_bitreader *br, uint64_t code)
{
	if (enc->ctx_next && code && code <= enc->nemit) {
		br_ctx_set(br, f->func_id, enc->ctx_next[code], br->pos);
		regen_ctx_save(f, br);
	}
}

/*
 * Whether the context (row crow, not ENC_CTX_NONE) says the next word is
 * read in another row than row. A framed function's walk to a named call
 * reads nothing at the predicates it passes, so a predicate's row may
 * still hold the context: the word is read in it.
 */
static inline int ctx_elsewhere(const struct regen_func *f, const struct encoding *enc,
				uint32_t crow, uint32_t row)
{
	return crow != row && !(f->framed && crow < enc->npred);
}

/*
 * A word of code read from bit from, in context row row (ENC_CTX_NONE:
 * none): counted for --words, and the module's context after it.
 */
static inline void word_taken(const struct regen_func *f, const struct encoding *enc,
			      struct regen_bitreader *br, uint32_t row, uint64_t code,
			      uint64_t from)
{
	if (f->word_reads)
		count_word(f, enc, br, row, code, from);
	ctx_after(f, enc, br, code);
}

/*
 * The forced word of code (no predicate since the last read): in its own
 * context row when the context holds (or a framed function's predicate
 * row: ctx_elsewhere), else the word the emission has.
 */
static uint64_t read_forced(const struct regen_func *f, const struct encoding *enc,
			    struct regen_bitreader *br, unsigned int nbits, uint64_t value,
			    uint32_t code)
{
	uint32_t row = ctx_row(f, enc, br);
	uint64_t got, from = br->pos;

	if (row != ENC_CTX_NONE) {
		struct row_words rw;

		if (ctx_elsewhere(f, enc, row, enc->npred + code - 1))
			return 0;	/* the context says another witness comes */
		rw = ctx_words(f, enc, row);
		got = read_code(br, &rw);
		if (got)
			got = swap_code(f, enc, br, row, got, from);
	} else {
		got = read_word(br, nbits, value, code);
	}
	if (got == code)
		word_taken(f, enc, br, row, code, from);
	return got;
}

static void witness_begin(const struct regen_func *f, uint64_t *state)
{
	(void)f;
	state[0] = 0;
	state[3] = 0;
}

/* The next code at predicate row: an entry witness's ENTER, else the bits (0 at EOF). */
static inline uint64_t next_code(const struct regen_func *f, const struct encoding *enc,
			  struct regen_bitreader *br, uint32_t row, int *bad)
{
	const struct lookup_row *lk = NULL;
	struct row_words rw;
	uint32_t crow;
	uint64_t code, from;

	if (br->enter && enc->enter_code && br->enter->arg == REGEN_ENTER_RET) {
		uint32_t v = br_call_vertex(br, f, br->enter->func, br->enter->value);

		if (v != GRAPH_NONE && enc->enter_code[v])
			return enc->enter_code[v];
	}
	crow = ctx_row(f, enc, br);
	/* the context says the next read is not at this predicate (framed: or before it) */
	if (crow != ENC_CTX_NONE && ctx_elsewhere(f, enc, crow, row)) {
		*bad = 1;
		return 0;
	}
	/* the row's lookup first: the row's words only when it cannot tell */
	if (f->lookup)
		lk = crow != ENC_CTX_NONE ? &f->lookup->ctx[crow] : &f->lookup->pred[row];
	from = br->pos;
	code = lk ? lookup_code(br, lk) : 0;
	if (!code) {
		rw = crow != ENC_CTX_NONE ? ctx_words(f, enc, crow) : pred_words(f, enc, row);
		code = read_words(br, &rw);
	}
	if (code && crow != ENC_CTX_NONE)
		code = swap_code(f, enc, br, crow, code, from);
	*bad = code == 0 || code > enc->nemit;
	if (!*bad)
		word_taken(f, enc, br, crow, code, from);
	return code;
}

/*
 * The framed call an ENTER names (its return address, or its frame: the
 * innermost traced one): its index in f's framed tables, or -1.
 */
static int32_t framed_call(const struct regen_func *f, const struct encoding *enc,
			   const struct regen_marker *m)
{
	const struct regen_word_lookup *l = f->lookup;
	uint32_t lo = 0, hi = l->nframed;

	if (!enc->call_framed || !m->value ||
	    (m->arg != REGEN_ENTER_RET && m->arg != REGEN_ENTER_NESTED))
		return -1;
	while (lo < hi) {	/* the first of equal return addresses */
		uint32_t mid = lo + (hi - lo) / 2;

		if (l->framed_ret[mid] < m->value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->nframed && l->framed_ret[lo] == m->value ? (int32_t)lo : -1;
}

/*
 * framed_call of m, remembered in state[1] and state[2] (bit 63 set, then
 * m's arg, then the index) for the ENTER's value and arg, all it depends
 * on: the walk toward a named call asks at each predicate on its way.
 */
static int32_t framed_call_of(const struct regen_func *f, const struct encoding *enc,
			      uint64_t *state, const struct regen_marker *m)
{
	uint64_t key = 1ull << 63 | (uint64_t)(m->arg & 0x7fffffffu) << 32;

	if (state[1] != m->value || (state[2] & ~0xffffffffull) != key) {
		state[1] = m->value;
		state[2] = key | (uint32_t)framed_call(f, enc, m);
	}
	return (int32_t)(uint32_t)state[2];
}

/*
 * v's out-edge on the emission-free walk from v to framed call i, or
 * GRAPH_NONE. Unique when there is one: Trace(Ewit) allows no two
 * emission-free paths between two vertices.
 */
static uint32_t toward(const struct regen_func *f, const struct encoding *enc, uint32_t v,
		       int32_t i)
{
	const struct graph *g = f->g;
	const uint64_t *reach = f->lookup->framed_reach + (size_t)i * reach_words(g);
	uint32_t k;

	for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
		uint32_t e = g->out_edges[k];

		if (!emits_on(enc, g, e) && reach_has(reach, g->edges[e].dst))
			return e;
	}
	return GRAPH_NONE;
}

static int64_t witness_next_edge(const struct regen_func *f, uint64_t *state,
				 struct regen_bitreader *br, uint32_t v, int64_t *partial)
{
	const struct encoding *enc = f->model;
	const struct graph *g = f->g;
	uint32_t first = g->out_start[v], deg = g->out_start[v + 1] - first, e;
	uint64_t code = state[0];

	(void)partial;
	/*
	 * The common cases by the lookup's tables: the only out-edge, or the
	 * pending code's at a predicate, when that edge reads nothing: it is
	 * plain (the code stays pending) or it uses up the pending code.
	 * Otherwise as below.
	 */
	if (f->lookup) {
		e = take_step(common_step(f->lookup, g, enc, v, code), code, state);
		if (e != GRAPH_NONE)
			return e;
	}
	if (deg == 0)
		return -PT_EFORMAT;	/* a dead end that is not EXIT */
	if (deg >= 2 && !code && f->framed && br->enter) {
		int32_t i;

		if (!f->lookup)
			return -PT_EINVAL;	/* regen_func.lookup */
		i = framed_call_of(f, enc, state, br->enter);
		if (i >= 0) {
			e = toward(f, enc, v, i);
			if (e == GRAPH_NONE)
				return -PT_EMISMATCH;	/* that call is not just ahead */
			state[0] = 0;
			return e;
		}
	}
	if (deg >= 2) {
		int bad = 0;
		size_t i;

		if (!code) {
			code = next_code(f, enc, br, enc->pred_row[v], &bad);
			if (br->eof)
				return -PT_ETRUNC;
		}
		if (bad || code == 0 || code > enc->nwit)
			return -PT_EFORMAT;
		i = (size_t)enc->pred_row[v] * (enc->nwit + 1) + code;
		/* the code just read, by the lookup's steps as a pending one above */
		e = f->lookup ? take_step(&f->lookup->next[i], code, state) : GRAPH_NONE;
		if (e != GRAPH_NONE)
			return e;
		e = enc->next[i];
		if (e == GRAPH_NONE)
			return -PT_EFORMAT;	/* that witness is not ahead of v */
	} else {
		e = g->out_edges[first];
	}
	if (enc->edge_nbits[e]) {
		if (!code) {
			code = read_forced(f, enc, br, enc->edge_nbits[e], enc->edge_value[e],
					   enc->edge_code[e]);
			if (br->eof)
				return -PT_ETRUNC;
		}
		if (code != enc->edge_code[e])
			return -PT_EFORMAT;
		code = 0;
	}
	v = g->edges[e].dst;
	if (enc->vertex_nbits && enc->vertex_nbits[v]) {
		if (!code) {
			code = read_forced(f, enc, br, enc->vertex_nbits[v], enc->vertex_value[v],
					   enc->vertex_code[v]);
			if (br->eof)
				return -PT_ETRUNC;
		}
		if (code != enc->vertex_code[v])
			return -PT_EFORMAT;
		code = 0;
	} else if (enc->enter_code && enc->enter_code[v]) {
		/* reached with its own code pending, or with none needed */
		if (code && code != enc->enter_code[v])
			return -PT_EFORMAT;
		code = 0;
	}
	state[0] = code;
	return e;
}

int regen_witness_free_edges(const struct graph *g, const struct encoding *enc, uint32_t **out)
{
	uint32_t *fe = malloc(((size_t)g->nv + 1) * sizeof(*fe)), v;

	*out = fe;
	if (!fe)
		return -PT_ENOMEM;
	for (v = 0; v < g->nv; v++) {
		uint32_t e = g->out_edges[g->out_start[v]], d;

		fe[v] = GRAPH_NONE;
		/* witness_next_edge at a vertex of one out-edge that reads and checks nothing */
		if (g->out_start[v + 1] - g->out_start[v] != 1 || v == g->exit || enc->edge_nbits[e])
			continue;
		d = g->edges[e].dst;
		if ((enc->vertex_nbits && enc->vertex_nbits[d]) || (enc->enter_code && enc->enter_code[d]))
			continue;
		fe[v] = g->vflags[v] & GRAPH_V_CALL ? e | REGEN_FREE_CALL : e;
	}
	return 0;
}

/*
 * The run after the step last taken (state[3]) when it starts at v with the
 * code pending: its run_pool entry; else NULL.
 */
static inline const uint32_t *run_at(const struct regen_word_lookup *l, const uint64_t *state,
				     uint32_t v)
{
	const uint32_t *run = &l->run_pool[state[3]];

	return run[0] && run[1] == v && run[2] == state[0] ? run : NULL;
}

/* state after run: the code it leaves pending, no run after it. */
static inline void run_taken(uint64_t *state, const uint32_t *run)
{
	state[0] = run[3];
	state[3] = 0;
}

/* The common case's edges from v one after another (regen_decoder_ops.run): run_at's. */
static uint32_t witness_run(const struct regen_func *f, uint64_t *state, uint32_t v,
			    const uint32_t **edges)
{
	const uint32_t *run = f->lookup ? run_at(f->lookup, state, v) : NULL;

	if (!run)
		return 0;
	run_taken(state, run);
	*edges = run + 4;
	return run[0];
}

/*
 * next_code's read at predicate row with no ENTER waiting, by the row's
 * lookup, when the word ends at or before bit limit and the
 * code's step reads nothing more: that step, the code read as next_code
 * reads it (the context, the adapting words, --words) and *code. Else
 * NULL, nothing read.
 */
static inline const struct lookup_step *read_step(const struct regen_func *f,
						  const struct encoding *enc,
						  struct regen_bitreader *br, uint32_t row,
						  uint64_t limit, uint64_t *code)
{
	const struct regen_word_lookup *l = f->lookup;
	const struct lookup_entry *ent;
	const struct lookup_step *st;
	struct regen_ctx_last *last = NULL;
	uint32_t crow = ctx_row(f, enc, br);
	uint64_t from = br->pos, c;

	if (crow != ENC_CTX_NONE && ctx_elsewhere(f, enc, crow, row))
		return NULL;
	ent = lookup_peek(br, crow != ENC_CTX_NONE ? &l->ctx[crow] : &l->pred[row]);
	if (!ent || !ent->code || from + ent->nbits > limit)
		return NULL;
	c = ent->code;
	if (crow != ENC_CTX_NONE && (last = swap_row(f, enc, crow)))
		c = swap_peer(last, br, enc->ctx_code[enc->ctx_start[crow]], (uint32_t)c, from);
	if (!c || c > enc->nemit)
		return NULL;
	st = &l->next[(size_t)row * (enc->nwit + 1) + c];
	if (st->need && st->need != c)
		return NULL;
	br->pos += ent->nbits;
	if (last)
		swap_remember(last, br, (uint32_t)c);
	word_taken(f, enc, br, crow, c, from);
	*code = c;
	return st;
}

/*
 * The walk goes on by edge e: w's vertex its end, and that block's event
 * at bit position pos unless it is EXIT. Returns the callback's value.
 */
static inline int walk_edge(struct regen_walk *w, const struct graph *g, uint32_t e,
			    uint64_t pos)
{
	w->v = g->edges[e].dst;
	w->last_edge = e;
	if (w->v == g->exit)
		return 0;
	w->blk->block = w->v;
	w->blk->edge = e;
	w->blk->pos = pos;
	return w->fn(w->ctx, w->blk);
}

/* Whether a walk stops at v: EXIT or a call vertex, the engine's. */
static inline int walk_stops(const struct graph *g, uint32_t v)
{
	return v == g->exit || (g->vflags[v] & GRAPH_V_CALL);
}

/*
 * regen_decoder_ops.walk: from w->v, the runs and, between them, the
 * common case's steps and the words read at predicates by lookup
 * (read_step).
 */
static uint32_t witness_walk(const struct regen_func *f, uint64_t *state,
			     struct regen_bitreader *br, struct regen_walk *w, int *rc)
{
	const struct regen_word_lookup *l = f->lookup;
	const struct encoding *enc = f->model;
	const struct graph *g = f->g;
	const struct lookup_step *st;
	const uint32_t *run;
	uint32_t n = 0, k, e;
	uint64_t code;

	*rc = 0;
	if (!l || br->enter)
		return 0;
	for (;;) {
		if (state[3] && (run = run_at(l, state, w->v))) {
			run_taken(state, run);
			for (k = 0; k < run[0]; k++) {
				n++;
				*rc = walk_edge(w, g, run[4 + k], br->pos);
				if (*rc)
					return n;
			}
			if (walk_stops(g, w->v))
				break;
		}
		code = state[0];
		st = common_step(l, g, enc, w->v, code);
		e = take_step(st, code, state);
		if (e == GRAPH_NONE) {
			/* a predicate of a row with no code pending: its word */
			if (code || st->edge < g->ne || st->edge == GRAPH_NONE)
				break;
			st = read_step(f, enc, br, st->edge - g->ne, w->limit, &code);
			if (!st)
				break;
			e = take_step(st, code, state);
		}
		n++;
		*rc = walk_edge(w, g, e, br->pos);
		if (*rc || walk_stops(g, w->v) || br->pos == w->limit)
			break;
	}
	return n;
}

/* A code read at a predicate and not yet reached: the path to its edge ran. */
static int witness_pending(const struct regen_func *f, const uint64_t *state)
{
	(void)f;
	return state[0] != 0;
}

const struct regen_decoder_ops regen_decode_witness_ops = {
	.name = "witness",
	.begin = witness_begin,
	.next_edge = witness_next_edge,
	.pending = witness_pending,
	.run = witness_run,
	.walk = witness_walk,
};
