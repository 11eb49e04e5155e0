/* SPDX-License-Identifier: GPL-2.0 */
/*
 * regen - the regeneration engine: one owner's stream in, the complete
 * execution out (every block of every traced activation, nested calls in
 * execution order), as events.
 *
 * docs/runtime.md gives the stream model this reads:
 *  - a bitstring (BITS records concatenated, LSB first);
 *  - markers at bit positions: ENTER, BLOCK (verify mode), LOSS, PARTIAL.
 * Who fills a regen_stream: the trace.bin reader (per-owner stream assembly)
 * or the simulator (tests). Who consumes the events: pathregen's writers,
 * the verifier and the property tests.
 *
 * Per function, a decoder (one per encoding) turns bits into edges:
 * decode_witness.c (1994 witness codes, Fig. 15), decode_bits.c (Section
 * 6.2 bit tracing), decode_paths.c (1996 path numbers). The engine owns the
 * call stack, the ENTER attribution rule and gap handling.
 */
#ifndef PATHTRACE_REGEN_H
#define PATHTRACE_REGEN_H

#include <stdint.h>

#include <pathtrace/graph.h>

/* A decoder's per-activation state (struct regen_decoder_ops), in words. */
#define REGEN_STATE_WORDS 4

enum regen_marker_type {
	REGEN_M_ENTER = 1,	/* func, value = return address */
	REGEN_M_BLOCK = 2,	/* func, arg = block (verify mode) */
	REGEN_M_LOSS = 3,	/* arg = enum pt_loss, value = count */
	REGEN_M_PARTIAL = 4,	/* value = partial path-register sum */
	/*
	 * Between two executions, whole executions of this owner may be
	 * absent (skipped probe hits, arg PT_LOSS_MISSED, value = count):
	 * none of its activations was open there, so one still open at this
	 * point must end without reading further bits, or it was cut.
	 */
	REGEN_M_HIDDEN = 5,
	/*
	 * The owner forked here (a FORK record): arg = the fork's index in
	 * regen_stream.forks, value = the child's owner. The parent's user
	 * activations open here continue in the child (docs/user.md, "Fork,
	 * exec and signals").
	 */
	REGEN_M_FORK = 6,
	/*
	 * A forked child's stream begins here (its first segment after the
	 * fork): arg = the fork's index, value = the parent's owner.
	 */
	REGEN_M_FORKED = 7,
	/*
	 * The owner completed an execve here (an EXEC record): value = its
	 * owner before (another than the stream's when a thread other than
	 * the group leader exec'd and took its pid). The old image's user
	 * activations end here, the kernel ones of the execve go on
	 * (docs/user.md, "Fork, exec and signals").
	 */
	REGEN_M_EXEC = 8,
};

/*
 * An ENTER marker's arg: what its value is (PT_PLAN_FRAMED,
 * pathtrace_abi.h PT_ENTER_FRAME). The module names a frame only for an
 * ENTER whose caller is not traced, while a framed plan is installed; one
 * with no traced frame below it is an untraced caller's (REGEN_ENTER_RET,
 * value 0), which at a framed call therefore means none.
 */
enum regen_enter_kind {
	REGEN_ENTER_RET = 0,		/* value: its return address (0: untraced caller) */
	REGEN_ENTER_NESTED = 1,		/* value: the innermost traced frame's return address */
	REGEN_ENTER_FRAME_UNKNOWN = 3,	/* the module's stack walk failed (value 0) */
};

/*
 * A stream holds one marker per ENTER, so a marker is kept to 24 bytes:
 * where it was recorded (its CPU and its segment's stamp, for reports) is
 * its stream's, a run of markers at a time (struct regen_where).
 */
struct regen_marker {
	uint64_t pos;		/* bit position: bits emitted before it */
	uint64_t value;
	uint32_t func;		/* func_id */
	uint32_t arg : 24;	/* below REGEN_MARKER_ARG_LIMIT */
	uint32_t type : 8;	/* enum regen_marker_type */
};

#define REGEN_MARKER_ARG_LIMIT (1u << 24)

_Static_assert(sizeof(struct regen_marker) == 24, "a marker is 24 bytes");

/*
 * Where a run of a stream's markers was recorded: markers first.. up to
 * the next run's first, on cpu, in a segment stamped stamp (0: unknown, as
 * for a loss at a boundary between segments).
 */
struct regen_where {
	uint32_t first;
	uint32_t cpu;
	uint64_t stamp;
};

/* No marker: regen_where's i, regen_event.where. */
#define REGEN_WHERE_NONE UINT32_MAX

/* A LOSS or HIDDEN marker: something the trace says it does not hold. */
static inline int regen_marker_is_loss(const struct regen_marker *m)
{
	return m->type == REGEN_M_LOSS || m->type == REGEN_M_HIDDEN;
}

/*
 * An activation a forked child inherits: a user activation of the parent
 * open at the fork, as the parent's walk stood there (the innermost at its
 * call vertex, the one whose call made the fork).
 */
struct regen_inherited {
	uint32_t func;		/* func_id */
	uint32_t v, last_edge, entered;
	uint32_t tail, tail_kind;
	uint64_t tail_ret, ret;
	uint32_t kind;
	int open;
	uint64_t state[REGEN_STATE_WORDS];
};

/*
 * A fork (REGEN_M_FORK in the parent's stream, REGEN_M_FORKED in the
 * child's). known: the parent's walk reached the fork point with its user
 * activations regenerated (frames[0..nframes), outermost first, none when
 * it stood outside any): the child resumes them; else the child's bits
 * before its first ENTER are a gap, as for a stream whose start is unseen.
 * Set by regen_forks_resolve.
 */
struct regen_fork {
	uint64_t parent, child;	/* owners */
	uint64_t stamp;		/* when (mono ns, as segment stamps) */
	uint32_t parent_stream;	/* index in regen_streams, or UINT32_MAX */
	int known;
	uint32_t nframes;
	struct regen_inherited *frames;
};

struct regen_stream {
	uint64_t owner;		/* PT_OWNER(...) */
	const uint64_t *bits;	/* nbits bits, LSB first in each word */
	uint64_t nbits;
	const struct regen_marker *markers;	/* sorted by pos, stable */
	uint32_t nmarkers;
	/*
	 * Where the owner's segments start (bit positions, ascending; NULL:
	 * one segment). Witness words by context hold only within a segment:
	 * the module forgets its context at an owner switch.
	 */
	const uint64_t *seg_starts;
	uint32_t nseg_starts;
	/*
	 * Where adapting words (PT_PLAN_CTX_SWAP) forget: the segment starts
	 * and the place of a segment's first ENTER and every
	 * PT_CTX_SWAP_ENTERS-th after it, ascending.
	 */
	const uint64_t *resets;
	uint32_t nresets;
	/* Every stream's forks (REGEN_M_FORK and REGEN_M_FORKED markers' arg), or NULL. */
	const struct regen_fork *forks;
	uint32_t nforks;
	/* Where its markers were recorded, runs by first (ascending); NULL: nowhere known. */
	const struct regen_where *where;
	uint32_t nwhere;
};

/*
 * Where marker i of s was recorded (REGEN_WHERE_NONE, or a stream with no
 * runs: CPU 0, stamp 0).
 */
void regen_where(const struct regen_stream *s, uint32_t i, uint32_t *cpu, uint64_t *stamp);

/* Reads bits from a stream; reading past the end sets eof. */
struct regen_bitreader {
	const uint64_t *bits;
	uint64_t nbits;
	uint64_t pos;
	int eof;
	/*
	 * Set by the engine before it asks a decoder for an edge: the ENTER
	 * marker waiting at pos, or NULL. An entry witness (encoding.h) is
	 * read from it instead of from the bits.
	 */
	const struct regen_marker *enter;
	/*
	 * Witness words by context (FORMAT.md, "Witness words by context"): the
	 * context the module kept when it wrote the bits at pos, set by the
	 * engine at each activation's start and by a decoder at each word it
	 * reads. It holds below ctx_limit, the first segment start at or after
	 * where it was set.
	 */
	uint32_t ctx_func;
	uint32_t ctx_row;	/* ENC_CTX_NONE (pathtrace_abi.h PT_CTX_NONE), REGEN_CTX_ENTRY or a row */
	uint64_t ctx_limit;
	const uint64_t *seg_starts;
	uint32_t nseg_starts;
	/* Adapting words: the stream's resets, and this walk of it (one number per walk). */
	const uint64_t *resets;
	uint32_t nresets;
	uint64_t walk;
	/*
	 * Where the last lookups of the first segment start and reset at or
	 * after a position ended (the walk's positions only grow, so the next
	 * lookup starts there; 0 before the first).
	 */
	uint32_t seg_cur, reset_cur;
	/*
	 * The answers of those lookups and the positions they hold for: the
	 * first segment start at or after any position in [~seg_lo_not,
	 * seg_limit] is seg_limit (the complement, so that a reader set to 0
	 * holds no range), and so for the resets.
	 */
	uint64_t seg_lo_not, seg_limit, reset_lo_not, reset_limit;
	/*
	 * The traced functions' direct calls by (function, callee, return
	 * address), set by the engine for the walk: a hash of calls_mask + 1
	 * slots (bitreader.h br_call_vertex).
	 */
	const struct regen_call_slot *calls;
	uint64_t calls_mask;
};

/* A call vertex v of f, direct to func_id callee and returning to ret; f NULL: empty. */
struct regen_call_slot {
	uint64_t ret;
	const struct regen_func *f;
	uint32_t callee, v;
};

#define REGEN_CTX_NONE 0xffffffffu
#define REGEN_CTX_ENTRY 0xfffffffeu	/* the function's entry row (its ctx_next[0]) */

/* Reads n (0..64) bits LSB first; on running out sets br->eof and returns 0. */
uint64_t regen_read_bits(struct regen_bitreader *br, unsigned int n);

/* Sets the context to (func, row), as the module did at bit position pos. */
void regen_ctx_set(struct regen_bitreader *br, uint32_t func, uint32_t row, uint64_t pos);

/* 1 when a segment of the stream starts at br->pos (its first bits are there), else 0. */
int regen_at_seg_start(const struct regen_bitreader *br);

struct regen_func;

/*
 * A decoder chooses edges for one function. The engine calls next_edge at
 * every vertex other than EXIT, after handling call-vertex markers. It
 * returns the out-edge taken (an edge id of the function's graph), reading
 * bits as it needs; or a negative PT_E* (-PT_ETRUNC when bits ran out,
 * -PT_EFORMAT when they are impossible, e.g. a witness not reachable).
 * The decoder's per-activation state lives in the frame (state[]) and is
 * reset by begin() when an activation starts.
 */
struct regen_walk;

struct regen_decoder_ops {
	const char *name;
	void (*begin)(const struct regen_func *f, uint64_t *state);
	int64_t (*next_edge)(const struct regen_func *f, uint64_t *state,
			     struct regen_bitreader *br, uint32_t v,
			     int64_t *partial /* pending PARTIAL sums, consumed by paths */);
	/*
	 * Optional (NULL: never). Non-zero when state holds evidence read
	 * but not yet used up, which proves the walk ahead: a witness code
	 * read at a predicate (the path to its edge ran), a path number (the
	 * path up to its end ran). The engine asks at the end of a stream.
	 */
	int (*pending)(const struct regen_func *f, const uint64_t *state);
	/*
	 * Optional (NULL: none). Called once per visit of a call vertex v,
	 * before the engine looks for its callees' ENTER markers: for what a
	 * plan emits before the call instruction (e.g. a path end at a call
	 * the decoder has not read yet). Reads what it needs; returns 0 or a
	 * negative PT_E* as next_edge does (-PT_ETRUNC: bits ran out). Bits
	 * read across a LOSS or ENTER marker are a gap, as for next_edge.
	 */
	int (*before_call)(const struct regen_func *f, uint64_t *state,
			   struct regen_bitreader *br, uint32_t v, int64_t *partial);
	/*
	 * Optional (NULL: none). The edges next_edge would take one call
	 * after another from vertex v in state while it reads no bit and
	 * looks at no marker, up to EXIT, a call vertex or a vertex where it
	 * would read or check (none from a call vertex): their number, the
	 * edges in *edges (the decoder's tables, read-only). Leaves state as
	 * those calls would. The engine takes them where an ENTER waits at
	 * the position and bits remain (the walk below where no marker does).
	 */
	uint32_t (*run)(const struct regen_func *f, uint64_t *state, uint32_t v,
			const uint32_t **edges);
	/*
	 * Optional (NULL: none). next_edge's calls one after another from
	 * vertex w->v (no call vertex) in state, with no ENTER waiting
	 * (br->enter NULL), while what each reads ends at or before bit
	 * w->limit (the next marker's position, or the end of the bits):
	 * each edge's block event to w->fn (none for EXIT), w->v and
	 * w->last_edge following. Stops after an edge into EXIT or a call
	 * vertex or one whose word ends at w->limit, when the callback
	 * returns non-zero (in *rc), or before a call that would do more
	 * than the decoder's common case (reading past w->limit, a slow
	 * path, an error). Leaves state and br as those calls would; returns
	 * their number.
	 */
	uint32_t (*walk)(const struct regen_func *f, uint64_t *state, struct regen_bitreader *br,
			 struct regen_walk *w, int *rc);
};


/* regen_func.tail_callee values besides a func_id. */
#define REGEN_TAIL_NONE UINT32_MAX		/* not a tail call */
#define REGEN_TAIL_OTHER (UINT32_MAX - 1)	/* tail call to untraced or indirect code */

/*
 * Tail calls (docs/runtime.md, "Which call an ENTER belongs to"). A
 * callee that leaves through a tail-call edge jumps to its target with
 * the caller's return address still on the stack, so the target runs as
 * part of the same call: the caller stands at call vertex V, at the bit
 * position p where the callee's activation ended. The engine then
 * descends, at V and at p:
 *  - after a tail call to a traced function T, into the next ENTER
 *    marker, which must be T's with the return address of the activation
 *    that jumped (V's own when that was V's direct callee; anything else
 *    is a GAP, -PT_EMISMATCH); T's activation may again end in a tail
 *    call (chained);
 *  - after a tail call to untraced or indirect code, into every ENTER at
 *    p, as for an untraced callee: that code may call traced functions
 *    (return addresses inside it) or tail-call one (V's return address).
 * Exact because an ENTER at p can belong to no call vertex but V (the
 * blocking rule: reaching another call vertex or EXIT of V's function
 * emits a bit first), and the decoded exit edge proves the jump was taken.
 */

/*
 * Adapting words (PT_PLAN_CTX_SWAP): a context row's last member, which
 * holds in walk `walk` below position `limit` (the first reset after the
 * word that set it); walk 0 is none (walks count from 1).
 */
struct regen_ctx_last {
	uint64_t walk;
	uint64_t limit;
	uint32_t code;
};

/*
 * --words: the witness words a decoder read. ctx[i] counts the reads of
 * the encoding's i-th word by context (encoding.h ctx_code order); plain
 * the words read with no context (the emission's own or its row's). And a
 * forecast, swap_bits: what the context reads would take if the words
 * adapted (PT_PLAN_CTX_SWAP), worked out on the fixed words with last[]
 * (per row, its last word by index). Of plans whose words adapt, ctx
 * counts the codes the words stand for, ctx_bits what was read, and
 * swap_bits equals ctx_bits.
 */
struct regen_word_reads {
	uint64_t *ctx;
	uint64_t ctx_bits;	/* what the reads in a context took */
	uint64_t plain, plain_bits;
	struct regen_ctx_last *last;
	uint64_t swap_bits;
};

/*
 * Witness words read by lookup (decode_witness.c): per row of an encoding
 * (pathtrace/encoding.h: a predicate's, a context row's) whose words are
 * at most REGEN_LOOKUP_BITS long, the word the next bits of the stream
 * begin with; and per vertex and edge, what the walk's common case needs
 * (an edge that reads and checks nothing). Read-only once built: threads
 * share it.
 */
#define REGEN_LOOKUP_BITS 10

struct regen_word_lookup;
struct encoding;

/*
 * Builds the lookup of enc (made for g, whose call vertices return to
 * call_ret_addr, or NULL) into *out. A witness function's decoder
 * (regen_func.lookup) needs it. Returns 0 or -PT_ENOMEM.
 */
int regen_word_lookup_build(const struct graph *g, const struct encoding *enc,
			    const uint64_t *call_ret_addr, struct regen_word_lookup **out);
void regen_word_lookup_free(struct regen_word_lookup *l);

/*
 * The witness decoder's free edges of g under enc (regen_func.free_edge)
 * into *out (g->nv entries, malloc'd). Returns 0 or -PT_ENOMEM.
 */
int regen_witness_free_edges(const struct graph *g, const struct encoding *enc, uint32_t **out);

/* regen_func.free_edge at a call vertex: the edge | REGEN_FREE_CALL (GRAPH_NONE has it too). */
#define REGEN_FREE_CALL 0x80000000u

/* A traced function as the engine needs it. */
struct regen_func {
	uint32_t func_id;
	const char *name;
	const struct graph *g;
	/* Per call vertex v (GRAPH_V_CALL): the address after its call
	 * instruction and the func_id of its direct traced callee or UINT32_MAX. */
	const uint64_t *call_ret_addr;	/* nv entries, 0 for non-call vertices */
	const uint32_t *call_callee;	/* nv entries */
	/*
	 * nv entries or NULL: 1 where the direct callee's plan lists this call
	 * as an implicit entry (pathtrace_abi.h struct pt_implicit): the
	 * callee may have been entered with no ENTER record. An ENTER that is
	 * there anyway (the kernel writes it when it cannot leave it out) is
	 * taken as usual.
	 */
	const uint8_t *call_implicit;
	/*
	 * Per edge (ne entries), or NULL when the function has no tail call:
	 * for an edge into EXIT that is a tail call (the block ends in a jmp,
	 * or a Jcc taken, to another function: cfg CFG_I_TAIL_CALL or a
	 * CFG_IF_LEAVES Jcc not to a return thunk), the func_id of its traced
	 * target, or REGEN_TAIL_OTHER when the target is untraced or
	 * indirect; REGEN_TAIL_NONE for every other edge.
	 */
	const uint32_t *tail_callee;
	const struct regen_decoder_ops *ops;
	const void *model;		/* the decoder's tables (witness sets, path numbering) */
	struct regen_word_reads *word_reads;	/* witness: counted when not NULL (--words) */
	/*
	 * Witness words that adapt (PT_PLAN_CTX_SWAP), else NULL: per context
	 * row, the code last read in it, below which position that holds
	 * (the first reset after its word) and in which walk.
	 */
	struct regen_ctx_swap *ctx_swap;
	/*
	 * PT_PLAN_CTX_RESTORE, else NULL: the function's own context (its row,
	 * REGEN_CTX_ENTRY or REGEN_CTX_NONE, below which position it holds, in
	 * which walk), set wherever the bitreader's is set for it.
	 */
	struct regen_ctx_saved *ctx_saved;
	/*
	 * PT_PLAN_FRAMED: its calls that are no entry witness or entered call
	 * are framed (encoding.h): at such a call the engine descends only
	 * into the ENTERs that name it, and the decoder, at a predicate,
	 * walks emission-free to the call an ENTER at its position names.
	 */
	int framed;
	/*
	 * witness: its encoding's word lookup, or NULL (words read a bit at a
	 * time); a framed function needs it (its framed calls' tables).
	 */
	const struct regen_word_lookup *lookup;
	/*
	 * Per vertex, or NULL: the out-edge the decoder takes there whatever
	 * its state, reading and checking nothing and leaving its state as it
	 * is (the vertex's only edge, nothing emitted on the edge or at its
	 * end), else GRAPH_NONE; at a call vertex with REGEN_FREE_CALL set.
	 * Where no marker waits at the position and bits remain, the engine
	 * walks it without asking: at a call vertex once the call is done
	 * (its callees returned, no tail call's ENTER due; or an untraced
	 * callee and no before_call).
	 */
	const uint32_t *free_edge;
	/*
	 * PT_PLAN_USER: a user function (docs/user.md). Its direct callees
	 * are its file's functions, whose ENTERs name no caller (return
	 * address 0): at its direct calls the engine takes such an ENTER as
	 * the call's (the blocking rule).
	 */
	int user;
};

struct regen_ctx_saved {
	uint32_t row;
	uint64_t limit;
	uint64_t walk;
};

/* PT_PLAN_CTX_RESTORE: f's own context is br's, just set for f (a no-op without). */
static inline void regen_ctx_save(const struct regen_func *f, const struct regen_bitreader *br)
{
	if (!f->ctx_saved)
		return;
	f->ctx_saved->row = br->ctx_row;
	f->ctx_saved->limit = br->ctx_limit;
	f->ctx_saved->walk = br->walk;
}

struct regen_ctx_swap {
	struct regen_ctx_last *row;	/* per context row: its last code */
	uint32_t nrows;			/* entries of row */
};

enum regen_event_type {
	REGEN_EV_ENTER = 1,	/* func entered (depth = new depth) */
	REGEN_EV_BLOCK = 2,	/* block executed */
	REGEN_EV_EXIT = 3,	/* func returned */
	REGEN_EV_GAP = 4,	/* loss or undecodable stream: nothing until resync */
	REGEN_EV_RESYNC = 5,	/* resumed at an ENTER after a gap */
	REGEN_EV_TRUNCATED = 6,	/* stream ended inside activations (see below) */
	/*
	 * The owner forked here (marker: its REGEN_M_FORK): frames[0..nframes)
	 * are the user activations the child inherits, outermost first;
	 * reason 0, or -PT_ENOENT when the walk could not say (a gap, or not
	 * at a call vertex): the child then gets none. Nothing else changes:
	 * the walk goes on in the parent. A child's inherited activations
	 * start as REGEN_EV_ENTER events whose marker is its REGEN_M_FORKED,
	 * block the block where the parent's stood (its last, reported in the
	 * parent's stream), and no entry block.
	 */
	REGEN_EV_FORK = 7,
	/*
	 * The owner completed an execve here (marker: its REGEN_M_EXEC):
	 * nframes user activations of the old image were open (func, depth:
	 * the innermost's, when nframes > 0); reason 0, or -PT_ENOENT after
	 * a gap (what was open is not known). Kernel activations open here
	 * (the execve's own) go on: nothing else changes until they return.
	 */
	REGEN_EV_EXEC = 8,
	/*
	 * func's activation at depth ended without returning: an execve
	 * replaced its image (marker: the REGEN_M_EXEC). One per user
	 * activation open at the exec, innermost first, when the walk is
	 * back in them (at the exec, or once the kernel activations open
	 * there returned); then the stack is empty and the new image's
	 * activations start at top level. block: the vertex it stood at (its
	 * call vertex of the execve), reported before; no EXIT.
	 */
	REGEN_EV_REPLACED = 9,
};

/*
 * The end of a stream: nothing after the last evidence is guessed.
 * Evidence is a bit read (an edge's or vertex's emission, a witness code,
 * a predicate's bits, a path number) or an ENTER marker. Mid-stream the
 * engine walks edges that need no bits, because what follows in the stream
 * proves the activation went on. Once every bit and ENTER is consumed and
 * the decoder holds nothing read ahead (regen_decoder_ops.pending), the
 * engine stops. The blocks reported are exactly:
 *  - every block up to the last one the evidence names: the target of the
 *    last edge whose emission was read (a vertex emission: its vertex;
 *    the end of the path a path number describes; with a witness code read
 *    ahead, the blocks up to that witness's edge and its target), or the
 *    entry block of the last ENTER;
 *  - after it nothing: no block reached by an edge that emits nothing, no
 *    return past a call vertex whose call may not have returned, no EXIT.
 * Then one REGEN_EV_TRUNCATED for the innermost open activation (func,
 * block = the last block reported for it, depth = its depth; the
 * activations at depths 0 .. depth are all still open, none gets an
 * EXIT), reason -PT_ETRUNC. An activation whose last edge into EXIT
 * emitted is complete: EXIT is reported. A stream that ends with no
 * activation open ends without TRUNCATED. Bits that run out in the middle
 * of a code are TRUNCATED the same way, at the vertex that needed them.
 */

struct regen_event {
	uint32_t type;
	uint32_t func;		/* func_id, or UINT32_MAX */
	uint32_t block;		/* REGEN_EV_BLOCK */
	uint32_t depth;		/* call depth, 0 = outermost traced */
	uint64_t pos;		/* bit position in the stream */
	int reason;		/* REGEN_EV_GAP: negative PT_E* or -PT_EKERNEL for LOSS */
	const struct regen_marker *marker; /* the marker involved, or NULL */
	uint32_t where;		/* the marker whose CPU and stamp it has (regen_where):
				 * marker's own, an implicit entry's the one before */
	uint32_t edge;		/* REGEN_EV_BLOCK: the edge that led to block (an
				 * edge id of the graph), GRAPH_NONE for the entry */
	const struct regen_inherited *frames;	/* REGEN_EV_FORK */
	uint32_t nframes;
};

/*
 * The 1994 encodings' decoders; their model is a struct encoding
 * (pathtrace/encoding.h) built for regen_func.g.
 */
extern const struct regen_decoder_ops regen_decode_witness_ops;
extern const struct regen_decoder_ops regen_decode_bits_ops;

/* Returns 0 to go on, non-zero to stop the engine (returned by regen_stream). */
typedef int (*regen_event_fn)(void *ctx, const struct regen_event *ev);

/* A decoder's walk (regen_decoder_ops.walk): where it stands and where its blocks go. */
struct regen_walk {
	uint32_t v;			/* the vertex; after the walk, the last edge's end */
	uint32_t last_edge;		/* the last edge taken */
	uint64_t limit;			/* what is read ends at or before this bit */
	regen_event_fn fn;
	void *ctx;
	struct regen_event *blk;	/* the BLOCK event, its function and depth set */
};

struct regen_index;

struct regen_funcs {
	const struct regen_func *funcs;	/* indexed by lookup, not by func_id */
	uint32_t nfuncs;
	/*
	 * Some function's words adapt: after a gap the engine resumes only at
	 * an ENTER where they have just been forgotten (a reset), since the
	 * bits it skipped moved the module's.
	 */
	int ctx_swap;
	/*
	 * The engine's tables of these functions (regen_index_build), built
	 * once for every stream walked over them; NULL: each regen_stream
	 * builds its own.
	 */
	struct regen_index *index;
};

/*
 * The engine's tables of fs's functions (by func_id; their call sites by
 * return address and by callee), for fs->index. They point into
 * fs->funcs, so they serve that array only, and are read-only: threads
 * may share them. Returns 0 or -PT_ENOMEM (*out NULL).
 */
int regen_index_build(const struct regen_funcs *fs, struct regen_index **out);
void regen_index_free(struct regen_index *ix);

/* The function with func_id, or NULL. */
const struct regen_func *regen_find(const struct regen_funcs *fs, uint32_t func_id);

/*
 * Regenerates one owner's stream, calling fn for every event in execution
 * order. Returns 0 when the stream was consumed (gaps are events, not
 * errors); the callback's non-zero value when it stopped the engine;
 * -PT_ENOMEM.
 */
int regen_stream(const struct regen_funcs *fs, const struct regen_stream *s,
		 regen_event_fn fn, void *ctx);

#endif
