// SPDX-License-Identifier: GPL-2.0
/* Driving one decoder by itself (decode_walk.h). */
#include <string.h>

#include <pathtrace/error.h>

#include "decode_walk.h"
#include "unit.h"

void dw_emit(struct dw_bits *b, unsigned int nbits, uint64_t value)
{
	unsigned int i;

	for (i = 0; i < nbits && b->n < DW_MAX_BITS; i++, b->n++)
		if (value >> i & 1)
			b->w[b->n >> 6] |= 1ull << (b->n & 63);
}

int64_t dw_walk(const struct regen_func *f, const struct dw_bits *b, int64_t partial,
		uint32_t *edges, uint32_t max, uint64_t *pos)
{
	uint64_t state[REGEN_STATE_WORDS] = { 0 };
	struct regen_bitreader br;
	uint32_t v = f->g->entry, n = 0;
	int64_t e = 0;

	memset(&br, 0, sizeof(br));
	br.bits = b->w;
	br.nbits = b->n;
	f->ops->begin(f, state);
	while (v != f->g->exit) {
		if (n == max) {
			e = -PT_EOVERFLOW;
			break;
		}
		e = f->ops->next_edge(f, state, &br, v, &partial);
		if (e < 0)
			break;
		edges[n++] = (uint32_t)e;
		v = f->g->edges[e].dst;
	}
	*pos = br.pos;
	return e < 0 ? e : n;
}

void dw_check_walk(const struct regen_func *f, const struct dw_bits *b, const uint32_t *want,
		   uint32_t n)
{
	struct dw_bits cut = *b;
	uint32_t got[64];
	uint64_t pos;

	CU_ASSERT_FATAL(n <= 64);
	CU_ASSERT_EQUAL_FATAL(dw_walk(f, b, 0, got, 64, &pos), n);
	CU_ASSERT(!memcmp(got, want, n * sizeof(*want)));
	CU_ASSERT_EQUAL(pos, b->n);
	for (cut.n = 0; cut.n < b->n; cut.n++)
		CU_ASSERT_EQUAL(dw_walk(f, &cut, 0, got, 64, &pos), -PT_ETRUNC);
}
