// SPDX-License-Identifier: GPL-2.0
/*
 * Bit-tracing decoder (1994 paper, Section 6.2; Fig. 13 with bits): at a
 * predicate read the out-edge's index, on a single out-edge that carries a
 * separator read it and check its value; entering a vertex with a vertex
 * separator (encoding.h) read and check that too. The model is a struct
 * encoding.
 */
#include <pathtrace/encoding.h>
#include <pathtrace/error.h>

#include "bitreader.h"

static void bits_begin(const struct regen_func *f, uint64_t *state)
{
	(void)f;
	(void)state;
}

/* The vertex emission on entering v, if any: read and checked. */
static int64_t vertex_bits(const struct encoding *enc, struct regen_bitreader *br, uint32_t v,
			   int64_t e)
{
	uint64_t x;

	if (!enc->vertex_nbits || !enc->vertex_nbits[v])
		return e;
	x = br_read(br, enc->vertex_nbits[v]);
	if (br->eof)
		return -PT_ETRUNC;
	return x == enc->vertex_value[v] ? e : -PT_EFORMAT;
}

static int64_t bits_next_edge(const struct regen_func *f, uint64_t *state,
			      struct regen_bitreader *br, uint32_t v, int64_t *partial)
{
	const struct encoding *enc = f->model;
	const struct graph *g = f->g;
	uint32_t first = g->out_start[v], deg = g->out_start[v + 1] - first, e;
	uint64_t x;

	(void)state;
	(void)partial;
	if (deg == 0)
		return -PT_EFORMAT;
	e = g->out_edges[first];
	if (!enc->edge_nbits[e])
		return deg == 1 ? vertex_bits(enc, br, g->edges[e].dst, e) : -PT_EFORMAT;
	x = br_read(br, enc->edge_nbits[e]);
	if (br->eof)
		return -PT_ETRUNC;
	if (deg >= 2) {
		if (x >= deg)
			return -PT_EFORMAT;
		e = g->out_edges[first + x];
		return vertex_bits(enc, br, g->edges[e].dst, e);
	}
	if (x != enc->edge_value[e])
		return -PT_EFORMAT;
	return vertex_bits(enc, br, g->edges[e].dst, e);
}

const struct regen_decoder_ops regen_decode_bits_ops = {
	.name = "bits",
	.begin = bits_begin,
	.next_edge = bits_next_edge,
};
