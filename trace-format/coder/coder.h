/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coder.h - the stream coder: what one CPU writes into its ring buffer.
 *
 * One implementation, built into pathtrace.ko (kmod/ringbuf.c gives it the
 * kernel's ring buffer) and into the test oracle (tests/oracle/sim_kmod.c
 * gives it a simulated one), so the property and round-trip tests run the
 * module's own coder. userspace/lib/tracefile/pages.c is its inverse.
 *
 * A CPU's coder keeps the open segment (its owner, the bits and ENTER codes
 * not yet written), the segments packed into the next SEGMENTS record, the
 * ENTER code tables, the witness-word context and the path register
 * (trace-format/FORMAT.md; docs/runtime.md "Owners, segments, streams"). Records
 * go to the sink its user provides (struct pt_coder_sink); a sink that
 * refuses one makes the coder count a drop and forget what the reader
 * forgets at the LOSS(OVERRUN) that the next written record follows.
 *
 * Callers hold off everything else that writes with the same coder (in the
 * module: interrupts off on its CPU).
 */
#ifndef PATHTRACE_CODER_H
#define PATHTRACE_CODER_H

#include "coder_port.h"
#include "pathtrace_abi.h"

#define PT_CODER_OWNER_NONE	(~0ull)

/* Pending bits: at most this many words wait for their record (2048 bits). */
#define PT_CODER_BITS_WORDS	32
/* ENTER codes that wait for their record, at most (2048 bits). */
#define PT_CODER_EBITS_WORDS	32
/*
 * The longest ENTER code: repeat bit, escape, caller, rank and gamma of
 * 2^20, ret_lo, Rice(4) of 2047.
 */
#define PT_CODER_ENTER_CODE_MAX	232
/* A SEGMENTS record holds at most this many bits. */
#define PT_CODER_PACK_MAX_BITS	(3584 * 8)
/* A segment's longest head (2 + 32 + 49 bits) and two lengths; then its bits and codes. */
#define PT_CODER_SEG_HEAD_MAX_BITS	(83 + 2 * 21)
#define PT_CODER_SEG_MAX_BITS \
	(PT_CODER_SEG_HEAD_MAX_BITS + 64 * (PT_CODER_BITS_WORDS + PT_CODER_EBITS_WORDS))
#define PT_CODER_PACK_WORDS \
	DIV_ROUND_UP(PT_CODER_PACK_MAX_BITS + PT_CODER_SEG_MAX_BITS, 64)

/* A context row's last code, while gen is the CPU's swap generation. */
struct pt_ctx_last {
	u64 gen;
	u32 code;
	u32 pad;
};

/*
 * What the coder reads of a function's plan: its id, flags and the tables
 * of its words (arrays of the plan blob, elements of the given sizes:
 * pathtrace_abi.h's growth rule). ctx_top: per row below nr_ctx_rows the
 * code that trades words (PT_PLAN_CTX_SWAP; pt_coder_ctx_tops), or NULL.
 * ctx_first: where each row's words begin (pt_coder_ctx_first), so a word
 * is looked for among its row's few only; NULL: among them all.
 */
struct pt_coder_func {
	u32 func_id;
	u32 flags;			/* PT_PLAN_CTX_RESTORE, PT_PLAN_CTX_SWAP */
	const u32 *ctx_next;		/* nr_ctx_codes rows */
	const struct pt_ctx_word *ctx_words;	/* sorted by (row, code) */
	u32 nr_ctx_codes, nr_ctx_words, ctx_word_size;
	u32 nr_ctx_rows;
	const u32 *ctx_top;
	const u32 *ctx_top_word;	/* ... and the index of its word, or NULL */
	const u32 *ctx_first;	/* nr_ctx_rows + 1: row r's words from ctx_first[r], or NULL */
	const struct pt_path_code *path_codes;	/* sorted by path */
	const struct pt_path_range *path_ranges;	/* sorted by lo */
	u32 nr_path_codes, path_code_size, nr_path_ranges, path_range_size;
};

/* A function's state on one CPU. */
struct pt_coder_func_cpu {
	u64 bytes;		/* statistics: bytes of its records */
	u64 dropped;		/* its records the sink refused */
	/* PT_PLAN_CTX_RESTORE: its context row here, while ctx_gen is the CPU's */
	u64 ctx_gen;
	u32 ctx_row;
	/* PT_PLAN_CTX_SWAP: nr_ctx_rows of them (generation 0: none remembered) */
	struct pt_ctx_last *ctx_last;
};

/* What the coder did, for tests and statistics. */
struct pt_coder_counts {
	u64 bits;		/* bits emitted (witness words, path numbers, bits) */
	u64 records;		/* records written (segments packed count one each) */
	u64 dropped;		/* records refused */
	u64 packs_multi;	/* SEGMENTS records of more than one segment */
	u64 packed_dropped;	/* segments refused with the SEGMENTS record */
	u64 ctx_words;		/* witness words written by context */
	u64 ctx_swapped;	/* ... as another code's word (adapting words) */
	u64 ctx_restored;	/* ... in the row its function had before a callee ran */
	u64 enter_resets;	/* ENTERs after a segment's first that reset the rows */
	u64 path_words;		/* path numbers written as their word */
	u64 path_escapes;	/* ... as their range's escape and the number */
};

/* The recent functions' hints: a slot for each of 64 hashes of a function. */
#define PT_RECENT_HINTS		64
#define PT_RECENT_HINT(f)	((u32)((u32)(f) * 0x9e3779b1u) >> 26)
/* The head of their list, where it begins and ends. */
#define PT_RECENT_HEAD		PT_ENTERS_RECENT

/*
 * What the writer and the reader of a CPU's stream both keep to code
 * ENTERs (pathtrace_abi.h, "ENTER codes"): return address slots, the last
 * three functions entered (func_id + 1, 0 none), the recent functions, and
 * the candidates and advances by context. Emptied at START and at every
 * refused write (the reader: at every LOSS).
 */
struct pt_enter_tables {
	u32 rets[PT_ENTER_SLOTS];
	u32 last;				/* the last ENTER's function */
	/*
	 * The contexts of the last three ENTERs' functions, kept as they are
	 * learned (pt_enters_x, pt_enters_y), each xor its value for the
	 * zeros a forgotten table holds.
	 */
	u32 x_kept;				/* PT_ENTERS_CTX(pprev, prev, last) */
	u32 mix_kept;				/* PT_ENTERS_MIX(prev, last) */
	/*
	 * The recent functions (pathtrace_abi.h's list, most recent first):
	 * each slot's function, and the slots linked in that order through
	 * next and prev, from and back to PT_RECENT_HEAD, so that an ENTER
	 * moves its function to the front by relinking its slot instead of
	 * shifting those before it. hint[h] is the slot where the last
	 * function with hash h went. Not linked: forgotten, every slot 0.
	 */
	u32 recent[PT_ENTERS_RECENT];
	u8 recent_next[PT_ENTERS_RECENT + 1];
	u8 recent_prev[PT_ENTERS_RECENT + 1];
	u8 recent_hint[PT_RECENT_HINTS];
	bool recent_linked;
	u32 cand[PT_ENTERS_CTXS][PT_ENTERS_CANDS];	/* items, most recent first */
	u16 cand_adv[PT_ENTERS_CTXS];		/* the advance + 1 of the most recent */
	u16 adv[PT_ENTERS_CTXS][PT_ENTERS_ADVS];	/* advances + 1, most recent first */
};

/* ... and to frame packed segments (pathtrace_abi.h PT_REC_SEGMENTS). */
struct pt_seg_tables {
	u64 stamp;		/* of the last OWNER or segment */
	bool stamp_known;	/* ... and the other side has it too (no loss since) */
	u64 owners[PT_SEG_OWNERS];	/* recent segment owners, most recent first */
};

/* Empties the tables (a LOSS). */
void pt_enters_forget(struct pt_enter_tables *t);
/* enters.c: the recent functions' rare paths */
void pt_recent_link(struct pt_enter_tables *t);
unsigned int pt_recent_find(const struct pt_enter_tables *t, u32 f);
unsigned int pt_recent_rank(const struct pt_enter_tables *t, u32 f);
u32 pt_recent_at(const struct pt_enter_tables *t, unsigned int r);
void pt_segs_forget(struct pt_seg_tables *t);

/*
 * v to the front of the array a of n entries (the others keep their order,
 * the last drops out when v was not there): in one pass, each entry moved
 * down one until the one that held v.
 */
#define PT_TO_FRONT(a, n, v)						\
	do {								\
		typeof((a)[0]) pt_v = (v), pt_moved = pt_v, pt_held;	\
		unsigned int pt_r;					\
									\
		for (pt_r = 0; pt_r < (n); pt_r++) {			\
			pt_held = (a)[pt_r];				\
			(a)[pt_r] = pt_moved;				\
			if (pt_held == pt_v)				\
				break;					\
			pt_moved = pt_held;				\
		}							\
	} while (0)

#define PT_ENTERS_X0	PT_ENTERS_CTX(0, 0, 0)
#define PT_ENTERS_MIX0	PT_ENTERS_MIX(0, 0)

/* The candidates' context x: PT_ENTERS_CTX(pprev, prev, last). */
static inline u32 pt_enters_x(const struct pt_enter_tables *t)
{
	return t->x_kept ^ PT_ENTERS_X0;
}

/* Function f's advances' context y: PT_ENTERS_CTX(prev, last, f). */
static inline u32 pt_enters_y(const struct pt_enter_tables *t, u32 f)
{
	return PT_ENTERS_MIX(t->mix_kept ^ PT_ENTERS_MIX0, f);
}

/*
 * f (not 0) moves to the front of the recent functions, and the last
 * drops out when f was not there: the slot the hint names when it holds f,
 * else the one pt_recent_find finds, relinked at the head. Inline in
 * writer and reader.
 */
static inline void pt_recent_learn(struct pt_enter_tables *t, u32 f)
{
	u8 *next = t->recent_next, *prev = t->recent_prev;
	u8 *hint = &t->recent_hint[PT_RECENT_HINT(f)];
	unsigned int i;

	if (unlikely(!t->recent_linked))
		pt_recent_link(t);
	i = *hint;
	if (t->recent[i] != f) {
		i = pt_recent_find(t, f);
		t->recent[i] = f;
		*hint = (u8)i;
	}
	if (next[PT_RECENT_HEAD] == i)
		return;
	next[prev[i]] = next[i];
	prev[next[i]] = prev[i];
	next[i] = next[PT_RECENT_HEAD];
	prev[i] = PT_RECENT_HEAD;
	prev[next[PT_RECENT_HEAD]] = (u8)i;
	next[PT_RECENT_HEAD] = (u8)i;
}

/*
 * The tables learn an ENTER of item (PT_ENTERS_ITEM) whose advance was
 * adv1 - 1, as writer and reader both do after its code (inline in both).
 */
static inline void pt_enters_learn(struct pt_enter_tables *t, u32 item, u32 adv1)
{
	u32 f = PT_ENTERS_ITEM_FUNC(item);
	u32 x = pt_enters_x(t), y = pt_enters_y(t, f);
	u32 *cand = t->cand[x];
	u16 *advs = t->adv[y];

	PT_TO_FRONT(cand, PT_ENTERS_CANDS, item);
	t->cand_adv[x] = adv1;
	PT_TO_FRONT(advs, PT_ENTERS_ADVS, adv1);
	pt_recent_learn(t, f);
	/* (prev, last, f) is the next x; (last, f) the next y's mix */
	t->x_kept = y ^ PT_ENTERS_X0;
	t->mix_kept = PT_ENTERS_MIX(t->last, f) ^ PT_ENTERS_MIX0;
	t->last = f;
}

/* A segment of owner stamped stamp was written (or read). */
void pt_segs_learn(struct pt_seg_tables *t, u64 owner, u64 stamp);

struct pt_coder;

/*
 * Where a coder's records go, provided by its user (the user's own state
 * around the coder is container_of(c)). reserve returns room for a record
 * of len bytes (type says which, for a sink that must never refuse some)
 * and sets c->page_left, or returns NULL when full; commit makes the
 * record filled there visible.
 */
struct pt_coder_sink {
	void *(*reserve)(struct pt_coder *c, u16 type, unsigned int len);
	void (*commit)(struct pt_coder *c, void *rec);
};

struct pt_coder {
	/* Set by the user before pt_coder_reset, kept by it. */
	const struct pt_coder_sink *sink;
	u32 cpu;		/* OWNER records' arg */
	u32 bits_words;		/* 1..PT_CODER_BITS_WORDS: pending bits written at */
	u32 ebits_words;	/* 1..PT_CODER_EBITS_WORDS: ENTER codes kept */
	u32 page_size;		/* the sink's pages (a record never spans two) */
	u32 pack_max_bits;	/* <= PT_CODER_PACK_MAX_BITS */
	/* Set by the sink at each reserve: bytes of its page after the record, 0 unknown. */
	u32 page_left;

	u64 owner;		/* owner of the open segment, PT_CODER_OWNER_NONE if none */
	u64 owner_gen;		/* a task owner's migrations when it opened */
	u64 owner_stamp;	/* when the open segment opened */
	bool owner_open;	/* its OWNER is not written yet */
	bool seg_bits;		/* a bits record of the open segment was written */
	u64 words[PT_CODER_BITS_WORDS];	/* pending bits, LSB first: full words, */
	u32 nwords;			/* then nbits (< 64) of the next one */
	u32 nbits;
	u64 path;		/* path register */
	u64 dropped;		/* records refused since the last LOSS(OVERRUN) */
	struct pt_coder_counts counts;

	/* ENTER codes (pathtrace_abi.h PT_ENTERS*) */
	struct pt_enter_tables enters;
	u64 ebits[PT_CODER_EBITS_WORDS];	/* pending ENTER codes */
	u32 nebits;
	u32 epos;		/* position of the last pending ENTER */

	/* Segments: stamps count from the last one written, owners by rank */
	struct pt_seg_tables segs;
	u32 nsegs;		/* segments opened, for PT_SEG_FULL_EVERY */
	u64 pack[PT_CODER_PACK_WORDS];	/* segments not yet written, */
	u32 pack_bits;			/* zero above their pack_bits bits */
	u32 npack;
	u32 pack_room;		/* page bytes the pack may take */

	/* Witness words by context: the function and row of the next word */
	u32 ctx_func;
	u32 ctx_row;		/* PT_CTX_NONE: no context */
	u64 ctx_gen;		/* the functions' own rows (PT_PLAN_CTX_RESTORE) of this hold */
	u64 swap_gen;		/* rows' last codes of this generation hold */
	u32 swap_enters;	/* ENTERs written since a switch or a refused write */
};

/* Fresh state: no owner, nothing pending or remembered (the settings stay). */
void pt_coder_reset(struct pt_coder *c);

/* Whether the open segment is owner's (gen: a task's migrations). */
static inline bool pt_coder_owns(const struct pt_coder *c, u64 owner, u64 gen)
{
	return owner == c->owner && gen == c->owner_gen;
}

/*
 * Closes the open segment (its pending bits, path register and OWNER) and
 * opens owner's, stamped stamp; its OWNER goes with its first record.
 */
void pt_coder_open(struct pt_coder *c, u64 owner, u64 gen, u64 stamp);

/*
 * Writes everything kept back (bits, path register, the open segment's
 * OWNER, packed segments, pending drops): at stop, a CPU going offline.
 */
void pt_coder_flush(struct pt_coder *c);

/*
 * Writes one record of len bytes of body (COUNTERS, PATHS, LOSS(MISSED)):
 * after the pending LOSS and the open segment's OWNER. Returns false if the
 * sink refused it (counted as a drop of fc's).
 */
bool pt_coder_write(struct pt_coder *c, struct pt_coder_func_cpu *fc, u16 type,
		    u32 arg, const void *body, unsigned int len);

/* Drops that happened outside the coder (an NMI while its user was busy): as refused writes. */
void pt_coder_forget(struct pt_coder *c);

/*
 * ENTER of f. ret_lo: a traced caller's return address (low half), or for an
 * untraced caller 0 or the traced frame it runs under (PT_ENTER_FRAME).
 */
void pt_coder_enter(struct pt_coder *c, const struct pt_coder_func *f,
		    struct pt_coder_func_cpu *fc, u32 ret_lo);

/* After an ENTER of f, written or implicit: f's first word's context. */
void pt_coder_ctx_enter(struct pt_coder *c, const struct pt_coder_func *f,
			struct pt_coder_func_cpu *fc);

/* A verify record: f's block executed here (after the pending ENTERs). */
void pt_coder_block(struct pt_coder *c, const struct pt_coder_func *f,
		    struct pt_coder_func_cpu *fc, u32 block);

/*
 * FORK (pathtrace_abi.h struct pt_rec_fork): the open segment's task forked
 * child (its owner) at stamp, here in its bits (after the pending ENTERs).
 * A refused write is a drop like any other.
 */
void pt_coder_fork(struct pt_coder *c, u64 child, u64 stamp);

/*
 * EXEC (pathtrace_abi.h struct pt_rec_exec): the open segment's task, once
 * old_owner, completed an execve here in its bits (after the pending
 * ENTERs). A refused write is a drop like any other.
 */
void pt_coder_exec(struct pt_coder *c, u64 old_owner);

/* Appends the low n bits of v (n <= 64). */
void pt_coder_bits(struct pt_coder *c, struct pt_coder_func_cpu *fc, u64 v, unsigned int n);

/*
 * EMIT: a witness's word: code (0: none) in f's context row when it has
 * one, else value's low nbits.
 */
void pt_coder_word(struct pt_coder *c, const struct pt_coder_func *f,
		   struct pt_coder_func_cpu *fc, u32 code, u32 value, unsigned int nbits);

/* PATH_EMIT: the low n bits of register + v, as its word where f codes path numbers. */
void pt_coder_path_emit(struct pt_coder *c, const struct pt_coder_func *f,
			struct pt_coder_func_cpu *fc, u64 v, unsigned int n);

static inline void pt_coder_path_add(struct pt_coder *c, u64 v)
{
	c->path += v;
}

static inline void pt_coder_path_set(struct pt_coder *c, u64 v)
{
	c->path = v;
}

/*
 * The rows of f's context words (the last word's row + 1), and per row the
 * code of its word of the fewest bits, of those the lowest value, into
 * top[rows], and that word's index into top_word[rows] unless it is NULL
 * (PT_PLAN_CTX_SWAP). A row without words is left as it was.
 */
u32 pt_coder_ctx_rows(const struct pt_coder_func *f);
void pt_coder_ctx_tops(const struct pt_coder_func *f, u32 *top, u32 *top_word);

/* Where each of the rows' words begins, into first[rows + 1] (the last: nr_ctx_words). */
void pt_coder_ctx_first(const struct pt_coder_func *f, u32 *first);

#endif
