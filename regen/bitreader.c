// SPDX-License-Identifier: GPL-2.0
/*
 * The bit reader's operations for callers outside the engine's hot path
 * (regen.h); the engine and the decoders use bitreader.h's inline ones.
 */
#include "bitreader.h"

uint64_t regen_read_bits(struct regen_bitreader *br, unsigned int n)
{
	return br_read(br, n);
}

void regen_ctx_set(struct regen_bitreader *br, uint32_t func, uint32_t row, uint64_t pos)
{
	br_ctx_set(br, func, row, pos);
}

int regen_at_seg_start(const struct regen_bitreader *br)
{
	uint32_t lo = 0, hi = br->nseg_starts;

	while (lo < hi) {	/* the first segment start at or after pos */
		uint32_t mid = lo + (hi - lo) / 2;

		if (br->seg_starts[mid] < br->pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < br->nseg_starts && br->seg_starts[lo] == br->pos;
}
