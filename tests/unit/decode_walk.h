/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Driving one decoder (regen_decoder_ops) by itself, as the engine does
 * within one activation with no markers: bits written LSB first, then
 * next_edge from the entry until EXIT. For the decoders' own tests
 * (test_decode_witness.c, test_decode_bits.c, test_decode_paths.c).
 */
#ifndef PT_DECODE_WALK_H
#define PT_DECODE_WALK_H

#include <stdint.h>

#include "regen.h"

#define DW_MAX_BITS 1024

struct dw_bits {
	uint64_t w[DW_MAX_BITS / 64];
	uint64_t n;
};

/* Appends the nbits (0..64) low bits of value, LSB first. */
void dw_emit(struct dw_bits *b, unsigned int nbits, uint64_t value);

/*
 * f's activation over b from its graph's entry: the edges next_edge took
 * into edges[0..max) and their number; or next_edge's negative PT_E*
 * (-PT_EOVERFLOW for a walk longer than max). *pos: the bits read.
 */
int64_t dw_walk(const struct regen_func *f, const struct dw_bits *b, int64_t partial,
		uint32_t *edges, uint32_t max, uint64_t *pos);

/*
 * Asserts that f decodes all of b into the walk want[0..n), and that every
 * shorter stream runs out (-PT_ETRUNC): the decoder needs each bit.
 */
void dw_check_walk(const struct regen_func *f, const struct dw_bits *b, const uint32_t *want,
		   uint32_t n);

#endif
