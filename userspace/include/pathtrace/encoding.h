/* SPDX-License-Identifier: GPL-2.0 */
/*
 * encoding - what one traced function emits into its owner's bitstring in
 * the 1994 paper's two trace encodings, per edge, and the tables the
 * regenerator decodes it with.
 *
 * THE CONTRACT (stable; the plan builder and the decoders rely on it):
 *   Traversing edge e appends the low edge_nbits[e] bits of edge_value[e]
 *   to the stream, LSB first. edge_nbits[e] == 0: e emits nothing.
 *   Nothing else is emitted by the encoding (ENTER at the function's first
 *   instruction is the plan's job, not the encoding's).
 * The plan builder turns every emitting edge into a PT_OP_EMIT action at
 * that edge's probe site (with `when` at a conditional site); the
 * simulator emits exactly the same bits when it walks an edge.
 *
 *  - PT_ENC_WITNESS (Sections 4.1-4.2): the edges of Ewit emit their
 *    witness code. Ewit = blocking witnesses first, then the chords of a
 *    maximum spanning tree of the rest (Fig. 17 order). A witness's word
 *    is read at a predicate, where only the witnesses of that predicate's
 *    row of next[] can come next: the words are prefix-free within every
 *    row (row_words.c), Huffman-shaped per row by
 *    encoding_opts.code_weight (equal weights by default), so a likely
 *    witness and a witness with few rivals cost fewer bits. The decoder
 *    takes any words prefix-free within each row (one prefix code over all
 *    of Ewit, or fixed-width values 1..nwit in ceil(log2(nwit + 1)) bits,
 *    are such words too).
 *  - PT_ENC_BITS (Section 6.2): every out-edge i (CSR order,
 *    g->out_edges[g->out_start[v] + i]) of a vertex with k >= 2 out-edges
 *    emits i in ceil(log2 k) bits; an out-edge of a call vertex with one
 *    out-edge emits a 1-bit separator (value 1) when some path from it
 *    reaches a call vertex or EXIT without emitting.
 *
 * TIMING: an edge out of a call vertex is taken after the call returns,
 * but a probe "anywhere in the source" would sit before the call. Such an
 * edge therefore emits only when its target has exactly one in-edge (and
 * is not EXIT), so its probe can sit at the target's first instruction.
 * Both encodings keep to this; where the rules below cannot be met without
 * breaking it (a call vertex whose out-edge leads straight into a call
 * vertex or EXIT with other predecessors, or a predicate that is also a
 * call vertex), they refuse the function (-PT_EREFUSED).
 *
 * VERTEX EMISSIONS (opt-in, ENC_F_VERTEX_EMIT): the one case the timing
 * rule cannot meet with edges is a call vertex c whose out-edge leads
 * straight into a call vertex t with other predecessors (about 7% of the
 * functions of ext4/btrfs/xfs/nf_tables). With the flag, t gets a vertex
 * emission instead: ENTERING t (by any in-edge, after that edge's own bits)
 * appends vertex_nbits[t] bits of vertex_value[t]; its probe sits at t's
 * first instruction, before t's call. Never at ENTRY or EXIT. In witness
 * mode it is a witness with its own code (wit_vertex[code] = t); in bit
 * mode a 1-bit separator of value 1. Without the flag vertex_nbits is NULL
 * and such functions are refused, so a plan builder that ignores vertex
 * emissions stays exact.
 *
 * Both satisfy docs/runtime.md's attribution rule in its strong form: no
 * emission-free directed path from a predicate or a call vertex to a call
 * vertex or to EXIT ("a call vertex is treated like a predicate"). A
 * "predicate" here is any vertex with two or more out-edges, even to the
 * same successor, so that edges (not only vertices) are recovered exactly.
 *
 * ENTRY WITNESSES (witness encoding, opt-in: encoding_opts.enter_witnessed):
 * a call vertex t whose callee is a direct call to a traced function needs
 * no bits of its own. The callee's ENTER marker is written at t's bit
 * position and its return address (the address after t's call) names t
 * exactly, so the marker is a witness of t that costs the caller nothing.
 * Such a t is a vertex witness with a code above every emitted one
 * (nemit < code <= nwit, enter_code[t]; never in the bits); it is neither
 * a blocking target nor a branch point (its call enters exactly once), so
 * paths from a predicate or another call vertex to t, and from t on, need
 * no emission for t's sake. The decoder takes the code from the ENTER
 * marker at its position (pathregen's witness decoder). The plan is exact only
 * while t's callee is traced, so the regenerator derives the entry
 * witnesses from the functions the trace holds and refuses a plan that
 * assumed more (its blocking check fails).
 *
 * ENTERED CALLS (implicit entries; witness and bit tracing): a direct call
 * t to a traced function whose ENTER the module leaves out (the callee's plan
 * lists t's return address for this caller) has no marker to witness it,
 * so t stays a blocking target. It is no branch point, though: the callee
 * is entered exactly once, and every ENTER written in its activation lies
 * before the activation's last bit (by induction: a call that is a branch
 * point is followed by a bit before EXIT, an entered one by its callee's
 * activation, which again ends after its own ENTERs). So an ENTER at the
 * position where t returned belongs to a later call vertex, and paths from
 * t on need no emission for t's sake (bit tracing: no separator after t).
 * enter_witnessed[t] == ENC_CALL_ENTERED says so.
 *
 * FRAMED CALLS (witness encoding, PT_PLAN_FRAMED; enter_witnessed[t] ==
 * ENC_CALL_FRAMED): every ENTER the module writes names the call it runs
 * under: its return address when its caller is traced, else the innermost
 * traced frame of its context (found by unwinding), or none. So an ENTER at
 * the regenerator's position is attributed by that name, not by where the
 * regenerator stands, and a framed call t is no blocking target (nothing
 * before it needs a bit for its sake) and no witness (its call may run no
 * traced code). It stays a branch point: every path from t to EXIT (or an
 * entered call) carries a bit, because a frame is an address: an
 * activation that recursed through untraced code from t's call and ended
 * at t without a bit could not be told from its outer self's ENTERs at t.
 * The decoder, at a predicate, walks emission-free to the call an ENTER at
 * its position names; the engine, at t, descends only into the ENTERs
 * that name t, and into none while a code read ahead is pending (those
 * ENTERs come after its bits). A call whose traced callee lists it among
 * its implicit entries is never framed (no ENTER names it): entered when
 * the callee is closed, else blocked (ENC_CALL_BLOCKED).
 */
#ifndef PATHTRACE_ENCODING_H
#define PATHTRACE_ENCODING_H

#include <stdint.h>

#include <pathtrace/graph.h>
#include <pathtrace_abi.h>

/* Why an edge emits (for `pathtracectl plan` and statistics). */
enum encoding_role {
	ENC_ROLE_NONE = 0,	/* emits nothing */
	ENC_ROLE_BLOCKING,	/* witness: blocker of a call or EXIT vertex (Section 4.2) */
	ENC_ROLE_CHORD,		/* witness: chord of the spanning-tree completion */
	ENC_ROLE_BRANCH,	/* bits: out-edge of a predicate */
	ENC_ROLE_SEPARATOR,	/* bits: separator after a call vertex */
};

struct encoding {
	uint32_t kind;		/* PT_ENC_WITNESS or PT_ENC_BITS (pathtrace_abi.h) */
	uint32_t nv, ne;	/* of the graph it was made for */
	uint8_t *edge_nbits;	/* ne: bits emitted when the edge is traversed */
	uint64_t *edge_value;	/* ne: their value */
	uint8_t *edge_role;	/* ne: enum encoding_role */
	uint32_t nemit;		/* edges that emit (witness: |Ewit|) */
	uint32_t width;		/* witness: bits of the longest code; bits: most bits on one edge */

	/* ENC_F_VERTEX_EMIT only, else NULL: emitted when a vertex is entered. */
	uint8_t *vertex_nbits;	/* nv */
	uint64_t *vertex_value;	/* nv */

	/* Entry witnesses (witness encoding only, else NULL): code or 0. */
	uint32_t *enter_code;	/* nv */
	/* Entered calls (either trace encoding, or NULL): non-zero for each. */
	uint8_t *call_entered;	/* nv */
	/* Framed calls (witness encoding, or NULL): non-zero for each. */
	uint8_t *call_framed;	/* nv */

	/* Decoder tables (read by pathregen's witness and bits decoders). */
	uint32_t nwit;		/* witness: codes are 1..nwit (edges, vertices, entry
				 * witnesses); the emitted ones are 1..nemit, each
				 * written as its edge's (nbits, value) */
	uint32_t *edge_code;	/* witness: ne; the code of an emitting edge, else 0 */
	uint32_t *vertex_code;	/* witness: nv with vertex emissions, else NULL */
	/*
	 * witness: per predicate row, the words that can be read there (the
	 * emitted codes its next[] row reaches), sorted by (nbits, value), and
	 * their codes: row r's are [word_start[r], word_start[r + 1]). Words
	 * are prefix-free within a row; two witnesses that never share a row
	 * may have one word (row_words.c).
	 */
	uint32_t *word_start;	/* npred + 1 */
	uint8_t *word_nbits;
	uint64_t *word_value;
	uint32_t *word_code;
	uint8_t word_min;	/* bits of the shortest word */
	uint32_t *wit_edge;	/* witness: nwit + 1; wit_edge[code] = its edge, or GRAPH_NONE */
	uint32_t *wit_vertex;	/* witness: nwit + 1; the vertex of a vertex witness, or GRAPH_NONE */
	uint32_t *pred_row;	/* witness: nv; row of a predicate in next[], or GRAPH_NONE */
	uint32_t npred;
	/*
	 * witness: npred * (nwit + 1). next[row * (nwit + 1) + w] is the
	 * out-edge of the predicate on the unique emission-free path toward
	 * the edge of witness w (that edge itself included), GRAPH_NONE if
	 * none. Column 0 is EOF: toward EXIT (never set when the blocking
	 * property holds; kept for the single-procedure Fig. 15 algorithm).
	 */
	uint32_t *next;

	/*
	 * Witness words by context (last_witness_words.c), NULL without.
	 * Context rows: 0..npred-1 the predicates' rows, npred + c - 1 the
	 * row in which only code c can come. ctx_next[c] is the row of the
	 * decoder's first read after code c (ctx_next[0]: after the entry),
	 * or ENC_CTX_NONE (EXIT comes first). Row r's words are
	 * [ctx_start[r], ctx_start[r + 1]), sorted by (nbits, value).
	 */
	uint32_t *ctx_next;	/* nemit + 1 */
	uint32_t nctx_rows;	/* npred + nemit */
	uint32_t *ctx_start;	/* nctx_rows + 1 */
	uint8_t *ctx_nbits;
	uint64_t *ctx_value;
	uint32_t *ctx_code;
};

#define ENC_CTX_NONE PT_CTX_NONE

/*
 * Witness encoding of g for edge weights weight[ne] (weight.h). Returns 0;
 * -PT_EREFUSED when the timing rule above cannot be kept; -PT_EINVAL if g
 * has no adjacency (graph_finish not called); -PT_ENOMEM. enc is valid
 * (encoding_free) only on success.
 */
int encoding_witness(const struct graph *g, const uint64_t *weight, struct encoding *enc);

/* Bit-tracing encoding of g (weights are not needed). Returns as encoding_witness. */
int encoding_bits(const struct graph *g, struct encoding *enc);

#define ENC_F_VERTEX_EMIT (1u << 1)	/* allow vertex emissions (see above) */
/*
 * Witness, with weights: keep every chord of the spanning tree (the
 * paper's completion). Without it the witnesses the trace set keeps
 * without are dropped, the costliest first (witness_prune.c).
 */
#define ENC_F_TREE_ONLY (1u << 2)

/* encoding_opts.enter_witnessed, per vertex */
enum enc_call {
	ENC_CALL_LOUD = 0,	/* a call vertex like any other (or no call) */
	ENC_CALL_WITNESS = 1,	/* an entry witness: its callee's ENTER names it */
	ENC_CALL_ENTERED = 2,	/* an entered call: no ENTER, blocked, no branch point */
	ENC_CALL_FRAMED = 3,	/* a framed call: its callees' ENTERs name it by their frame */
	/*
	 * a framed plan's call that stays blocked (as ENC_CALL_LOUD): its
	 * traced callee writes no ENTER for it (an implicit entry), so no
	 * frame names it, and the callee is not closed (else it is entered)
	 */
	ENC_CALL_BLOCKED = 4,
};

/* As encoding_witness / encoding_bits, with ENC_F_VERTEX_EMIT or 0. */
int encoding_witness_flags(const struct graph *g, const uint64_t *weight, uint32_t flags,
			   struct encoding *enc);
int encoding_bits_flags(const struct graph *g, uint32_t flags, struct encoding *enc);

/*
 * UNOBSERVABLE EDGES: an edge no probe can observe (probesite.h's
 * PROBESITE_NONE: a critical edge out of a static-key site or a fault
 * fixup) must never emit. With encoding_opts.unobservable the encodings
 * treat such an edge like one the timing rule forbids: its blocker moves
 * forward along the single-successor chain it leads into (to the first
 * edge that may emit, or a vertex emission on the call vertex it ends
 * at), and it is forced into the witness spanning tree. Bit tracing needs
 * every branch's bits, so there a predicate with an unobservable out-edge
 * is refused.
 */
struct encoding_opts {
	uint32_t flags;			/* ENC_F_VERTEX_EMIT, ENC_F_TREE_ONLY or 0 */
	const uint8_t *unobservable;	/* ne entries (non-zero: never emits), or NULL */
	/* Out, on -PT_EREFUSED: a static reason and the vertex it is about. */
	const char *why;
	uint32_t where;
	/*
	 * nv entries, or NULL: enum enc_call per vertex, call vertices that
	 * are entry witnesses or entered calls (above)
	 */
	const uint8_t *enter_witnessed;
	/*
	 * ne entries, or NULL (equal weights): how often each edge runs, for
	 * the witness codes' lengths. Only measured counts pay off: codes
	 * shaped by guessed weights cost more bits than equal ones.
	 */
	const uint64_t *code_weight;
	/* witness: also words by context (last_witness_words.c, encoding_ctx_build) */
	int ctx_words;
	/* ne entries, or NULL (code_weight): the edge weights those are shaped by */
	const uint64_t *ctx_weight;
	/*
	 * Witness, with ENC_F_VERTEX_EMIT: nv entries, or NULL: what a vertex
	 * witness would cost at each vertex (in the units of the weights;
	 * UINT64_MAX: none possible). A call vertex whose blockers together
	 * cost more gets one instead (witness.c, cut_blockers).
	 */
	const uint64_t *vertex_cost;
};

/*
 * As encoding_witness / encoding_bits with options (o may be NULL: none).
 * Returns as encoding_witness; on -PT_EREFUSED o->why and o->where say why.
 */
int encoding_witness_opts(const struct graph *g, const uint64_t *weight,
			  struct encoding_opts *o, struct encoding *enc);
int encoding_bits_opts(const struct graph *g, struct encoding_opts *o, struct encoding *enc);

/* Whether edge e may emit under the timing rule above. */
int encoding_edge_can_emit(const struct graph *g, uint32_t e);

/*
 * Rebuilds an encoding from per-edge emissions alone (e.g. read back from a
 * plan in trace.bin): roles are unknown (ENC_ROLE_NONE / BRANCH), tables are
 * recomputed. Returns 0; -PT_EINVAL when the emissions cannot be decoded
 * exactly (two witnesses with one code, a witness width that differs, a
 * predicate whose witness sets overlap, bits that are not a branch index,
 * an emission the timing rule forbids,
 * or the blocking rule broken unless flags has ENC_F_SINGLE_PROCEDURE);
 * -PT_ENOMEM.
 */
#define ENC_F_SINGLE_PROCEDURE (1u << 0) /* skip the blocking check (Section 4.1, Fig. 15 with EOF) */
int encoding_from_emissions(const struct graph *g, uint32_t kind, const uint8_t *nbits,
			    const uint64_t *value, uint32_t flags, struct encoding *enc);

/* As encoding_from_emissions, with vertex emissions (vnbits/vvalue: nv entries, or NULL). */
int encoding_from_emissions_v(const struct graph *g, uint32_t kind, const uint8_t *nbits,
			      const uint64_t *value, const uint8_t *vnbits,
			      const uint64_t *vvalue, uint32_t flags, struct encoding *enc);

/*
 * As encoding_from_emissions_v, with entry witnesses and entered calls
 * (ewit: nv entries of enum enc_call, or NULL; entry witnesses in witness
 * encoding only, ignored for bits; a call vertex with a vertex emission of
 * its own gets no entry code). Also -PT_EINVAL when ewit marks a vertex
 * that is not a call vertex.
 */
int encoding_from_emissions_ve(const struct graph *g, uint32_t kind, const uint8_t *nbits,
			       const uint64_t *value, const uint8_t *vnbits,
			       const uint64_t *vvalue, const uint8_t *ewit, uint32_t flags,
			       struct encoding *enc);

/*
 * Checks the strong attribution rule: no emission-free directed path from
 * a predicate or call vertex to a call vertex or EXIT. Returns 0; -PT_EINVAL
 * with *bad_vertex (may be NULL) set to the source of such a path; -PT_ENOMEM.
 */
int encoding_check_blocking(const struct graph *g, const uint8_t *nbits, uint32_t *bad_vertex);

/* The same with vertex emissions (vnbits: nv entries, or NULL). */
int encoding_check_blocking_v(const struct graph *g, const uint8_t *nbits, const uint8_t *vnbits,
			      uint32_t *bad_vertex);

/*
 * The same with entry witnesses and entered calls too (ewit: nv entries of
 * enum enc_call, or NULL): entering an entry witness is an emission, and
 * neither kind is a branch point.
 */
int encoding_check_blocking_ve(const struct graph *g, const uint8_t *nbits,
			       const uint8_t *vnbits, const uint8_t *ewit, uint32_t *bad_vertex);

/*
 * ctx_next[0..nemit] of a finished witness encoding (see struct encoding).
 * Returns 0; -PT_EINVAL for another kind of encoding.
 */
int encoding_ctx_next(const struct graph *g, const struct encoding *enc, uint32_t *next);

/*
 * Context words for a finished witness encoding: per named predicate row,
 * a Huffman code over its members by how often the predicate's read is
 * each of them (the branch shares of edge_weight[ne] along the path to
 * it; NULL: equal shares), floored as row_words.c does; a row of one
 * member gets a 1-bit word. Returns 0; -PT_EINVAL for another kind of
 * encoding; -PT_ENOMEM.
 */
int encoding_ctx_build(const struct graph *g, struct encoding *enc,
		       const uint64_t *edge_weight);

/*
 * The regenerator's side: installs a plan's ctx_next[0..nnext) and words
 * after checking them against enc's own rows (the same ctx_next; each named
 * row has a word for each of its members and no other, prefix-free among
 * them; no other row has words; reserved fields zero). Returns 0; -PT_EINVAL
 * when they differ; -PT_ENOMEM.
 */
int encoding_ctx_bind(const struct graph *g, struct encoding *enc, const uint32_t *next,
		      uint32_t nnext, const struct pt_ctx_word *words, uint32_t nwords);

/* Code's word in context row: 0 and *nbits, *value; -PT_EINVAL if it has none. */
int encoding_ctx_word(const struct encoding *enc, uint32_t row, uint32_t code, uint8_t *nbits,
		      uint64_t *value);

/* Frees the arrays; enc is zeroed. */
void encoding_free(struct encoding *enc);

#endif
