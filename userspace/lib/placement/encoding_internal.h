/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by encoding.c, witness.c and bitenc.c; not a public API. */
#ifndef PATHTRACE_ENCODING_INTERNAL_H
#define PATHTRACE_ENCODING_INTERNAL_H

#include <pathtrace/encoding.h>

/* ceil(log2(n)) for n >= 1. */
unsigned int enc_bits_for(uint64_t n);
/* Zeroed per-edge (and with ENC_F_VERTEX_EMIT per-vertex) arrays; 0 or -PT_ENOMEM. */
int enc_alloc(const struct graph *g, uint32_t kind, uint32_t flags, struct encoding *enc);
/* Checks codes, blocking (unless ENC_F_SINGLE_PROCEDURE) and builds tables. */
int enc_finish_witness(const struct graph *g, struct encoding *enc, uint32_t flags);
/*
 * Rebuilds the per-row word tables of a finished witness encoding from its
 * current words (after witness_context_words). 0; -PT_EINVAL when a row's
 * words are not prefix-free; -PT_ENOMEM.
 */
int enc_witness_words(struct encoding *enc);
/*
 * No witness word is shaped by a weight under 2^-ENC_WORD_SPREAD of the
 * heaviest it competes with: the weights are guesses, or counts of an
 * earlier run, and a witness they call rare would otherwise get a word of
 * up to HUFFMAN_MAX_BITS (the module corpus had 32-bit ones), paid again
 * on every hit when it runs hot after all.
 */
#define ENC_WORD_SPREAD 10

/* Raises each of w[0..n-1] to at least 2^-ENC_WORD_SPREAD of the largest. */
void enc_spread_floor(uint64_t *w, uint32_t n);

/*
 * Words for the emitted codes 1..nemit of a finished witness encoding,
 * prefix-free within each row of next[] (row_words.c): nbits[c - 1],
 * value[c - 1], by weight[c - 1] (NULL: equal). Returns 0; -PT_EOVERFLOW
 * when some witness stays boxed in by its row-mates' words (no free word
 * of up to HUFFMAN_MAX_BITS); -PT_ENOMEM.
 */
int witness_context_words(const struct encoding *enc, const uint64_t *weight, uint8_t *nbits,
			  uint64_t *value);
/*
 * Frees the tables of words by the last witness (built by
 * last_witness_words.c; encoding.c owns them); they are NULL after.
 */
void enc_ctx_free(struct encoding *enc);
int enc_finish_bits(const struct graph *g, struct encoding *enc, uint32_t flags);

/* The timing rule and, with no (ne entries, may be NULL), observability. */
int enc_may_emit(const struct graph *g, const uint8_t *no, uint32_t e);
/* Records why (a static string) and where in o (may be NULL); returns -PT_EREFUSED. */
int enc_refuse(struct encoding_opts *o, uint32_t where, const char *why);

/*
 * -PT_EINVAL when a cycle of silent vertices (loud[v] zero: entering v
 * emits nothing) and silent edges (nbits[e] zero) exists: the decoder
 * would walk it for ever without a bit. next[] catches such a cycle only
 * where a predicate is on it; an endless loop (`1: pause; jmp 1b`) has
 * none. 0 when there is none; -PT_ENOMEM.
 */
int enc_silent_cycle(const struct graph *g, const uint8_t *nbits, const uint8_t *loud);

/*
 * Drops witnesses of a trace set with the blocking property (role[] edge
 * witnesses, vwit[] vertex witnesses, may be NULL; ewit[] entry witnesses,
 * may be NULL) that it keeps without them, the costliest first (weight[]
 * per edge, vcost[] per vertex; NULL: equal): witness_prune.c. Returns 0;
 * -PT_ENOMEM (role and vwit unchanged or still a valid set).
 */
int witness_prune(const struct graph *g, const uint64_t *weight, const uint64_t *vcost,
		  const uint8_t *ewit, uint8_t *role, uint8_t *vwit);

#endif
