// SPDX-License-Identifier: GPL-2.0
/*
 * Encoding tables shared by the witness and bit-tracing encodings: the
 * Fig. 15 witness sets as a next-edge table, the strong blocking check,
 * and rebuilding both from per-edge emissions (encoding.h).
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>
#include <pathtrace_abi.h>

#include "encoding_internal.h"

unsigned int enc_bits_for(uint64_t n)
{
	unsigned int b = 0;

	/* ceil(log2(n)) for n >= 1 */
	while (b < 64 && (1ull << b) < n)
		b++;
	return b;
}

int encoding_edge_can_emit(const struct graph *g, uint32_t e)
{
	uint32_t d = g->edges[e].dst;

	if (!(g->vflags[g->edges[e].src] & GRAPH_V_CALL))
		return 1;
	return d != g->exit && graph_in_degree(g, d) == 1;
}

/* Any emission on an edge the timing rule forbids. */
static int bad_timing(const struct graph *g, const uint8_t *nbits)
{
	uint32_t e;

	for (e = 0; e < g->ne; e++)
		if (nbits[e] && !encoding_edge_can_emit(g, e))
			return 1;
	return 0;
}

void encoding_free(struct encoding *enc)
{
	free(enc->edge_nbits);
	free(enc->edge_value);
	free(enc->edge_role);
	free(enc->wit_edge);
	free(enc->pred_row);
	free(enc->next);
	memset(enc, 0, sizeof(*enc));
}

int enc_alloc(const struct graph *g, uint32_t kind, struct encoding *enc)
{
	memset(enc, 0, sizeof(*enc));
	enc->kind = kind;
	enc->nv = g->nv;
	enc->ne = g->ne;
	enc->edge_nbits = calloc(g->ne + 1, sizeof(*enc->edge_nbits));
	enc->edge_value = calloc(g->ne + 1, sizeof(*enc->edge_value));
	enc->edge_role = calloc(g->ne + 1, sizeof(*enc->edge_role));
	if (!enc->edge_nbits || !enc->edge_value || !enc->edge_role) {
		encoding_free(enc);
		return -PT_ENOMEM;
	}
	return 0;
}

/*
 * Marks reach[] with the vertices that reach a vertex with mark[] set along
 * emission-free edges (paths of length 0 included). stack: nv entries.
 */
static void reach_back(const struct graph *g, const uint8_t *nbits, uint8_t *reach, uint32_t *stack)
{
	uint32_t sp = 0, v, k;

	for (v = 0; v < g->nv; v++)
		if (reach[v])
			stack[sp++] = v;
	while (sp) {
		v = stack[--sp];
		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
			uint32_t e = g->in_edges[k], u = g->edges[e].src;

			if (!nbits[e] && !reach[u]) {
				reach[u] = 1;
				stack[sp++] = u;
			}
		}
	}
}

int encoding_check_blocking(const struct graph *g, const uint8_t *nbits, uint32_t *bad_vertex)
{
	uint8_t *reach = calloc(g->nv + 1, 1);
	uint32_t *stack = malloc(((size_t)g->nv + 1) * sizeof(*stack));
	uint32_t v, k;
	int err = 0;

	if (!reach || !stack) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (v = 0; v < g->nv; v++)
		reach[v] = (g->vflags[v] & (GRAPH_V_CALL | GRAPH_V_EXIT)) != 0;
	reach_back(g, nbits, reach, stack);
	for (v = 0; v < g->nv && !err; v++) {
		if (graph_out_degree(g, v) < 2 && !(g->vflags[v] & GRAPH_V_CALL))
			continue;
		for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
			uint32_t e = g->out_edges[k];

			if (!nbits[e] && reach[g->edges[e].dst]) {
				if (bad_vertex)
					*bad_vertex = v;
				err = -PT_EINVAL;
				break;
			}
		}
	}
out:
	free(reach);
	free(stack);
	return err;
}

/* Witness sets as the next[] table; -PT_EINVAL when two out-edges share a witness. */
static int witness_tables(const struct graph *g, struct encoding *enc)
{
	uint32_t cols = enc->nwit + 1, v, w, k, row;
	uint8_t *reach = malloc(g->nv + 1);
	uint32_t *stack = malloc(((size_t)g->nv + 1) * sizeof(*stack));
	int err = 0;

	enc->pred_row = malloc(((size_t)g->nv + 1) * sizeof(*enc->pred_row));
	if (!reach || !stack || !enc->pred_row) {
		err = -PT_ENOMEM;
		goto out;
	}
	enc->npred = 0;
	for (v = 0; v < g->nv; v++)
		enc->pred_row[v] = graph_out_degree(g, v) >= 2 ? enc->npred++ : GRAPH_NONE;
	enc->next = malloc(((size_t)enc->npred * cols + 1) * sizeof(*enc->next));
	if (!enc->next) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (w = 0; w < cols; w++) {
		memset(reach, 0, g->nv);
		/* Column 0 (EOF): toward EXIT; column w: toward witness w's source. */
		reach[w ? g->edges[enc->wit_edge[w]].src : g->exit] = 1;
		reach_back(g, enc->edge_nbits, reach, stack);
		for (v = 0; v < g->nv; v++) {
			uint32_t found = GRAPH_NONE;

			row = enc->pred_row[v];
			if (row == GRAPH_NONE)
				continue;
			for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
				uint32_t e = g->out_edges[k];
				int ok = w && e == enc->wit_edge[w];

				if (!enc->edge_nbits[e] && reach[g->edges[e].dst])
					ok = 1;
				if (!ok)
					continue;
				if (found != GRAPH_NONE) {
					err = -PT_EINVAL;	/* witness sets overlap */
					goto out;
				}
				found = e;
			}
			enc->next[(size_t)row * cols + w] = found;
		}
	}
out:
	free(reach);
	free(stack);
	return err;
}

int enc_finish_witness(const struct graph *g, struct encoding *enc, uint32_t flags)
{
	uint32_t e;
	int err;

	enc->wit_edge = calloc((size_t)enc->nwit + 1, sizeof(*enc->wit_edge));
	if (!enc->wit_edge)
		return -PT_ENOMEM;
	enc->width = enc_bits_for((uint64_t)enc->nwit + 1);
	enc->nemit = 0;
	for (e = 0; e < g->ne; e++) {
		uint64_t c = enc->edge_value[e];

		if (!enc->edge_nbits[e])
			continue;
		if (enc->edge_nbits[e] != enc->width || c == 0 || c > enc->nwit ||
		    enc->wit_edge[c])
			return -PT_EINVAL;
		enc->wit_edge[c] = e;
		enc->nemit++;
	}
	if (enc->nemit != enc->nwit || bad_timing(g, enc->edge_nbits))
		return -PT_EINVAL;
	if (!(flags & ENC_F_SINGLE_PROCEDURE)) {
		err = encoding_check_blocking(g, enc->edge_nbits, NULL);
		if (err)
			return err;
	}
	return witness_tables(g, enc);
}

int enc_finish_bits(const struct graph *g, struct encoding *enc, uint32_t flags)
{
	uint32_t v, k, e;

	enc->width = 0;
	enc->nemit = 0;
	for (v = 0; v < g->nv; v++) {
		uint32_t deg = graph_out_degree(g, v);
		unsigned int nb = enc_bits_for(deg);

		for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
			e = g->out_edges[k];
			if (deg >= 2 && (enc->edge_nbits[e] != nb ||
					 enc->edge_value[e] != k - g->out_start[v]))
				return -PT_EINVAL;
			if (enc->edge_nbits[e] > 64)
				return -PT_EINVAL;
			if (enc->edge_nbits[e]) {
				enc->nemit++;
				if (enc->edge_nbits[e] > enc->width)
					enc->width = enc->edge_nbits[e];
			}
		}
	}
	if (bad_timing(g, enc->edge_nbits))
		return -PT_EINVAL;
	if (!(flags & ENC_F_SINGLE_PROCEDURE))
		return encoding_check_blocking(g, enc->edge_nbits, NULL);
	return 0;
}

int encoding_from_emissions(const struct graph *g, uint32_t kind, const uint8_t *nbits,
			    const uint64_t *value, uint32_t flags, struct encoding *enc)
{
	uint32_t e;
	int err;

	if (!g || !g->out_start || !nbits || !value || !enc ||
	    (kind != PT_ENC_WITNESS && kind != PT_ENC_BITS))
		return -PT_EINVAL;
	err = enc_alloc(g, kind, enc);
	if (err)
		return err;
	for (e = 0; e < g->ne; e++) {
		enc->edge_nbits[e] = nbits[e];
		enc->edge_value[e] = nbits[e] >= 64 ? value[e] : value[e] & ((1ull << nbits[e]) - 1);
		if (nbits[e] && enc->edge_value[e] != value[e])
			err = -PT_EINVAL;
		if (nbits[e])
			enc->nwit++;
	}
	if (kind == PT_ENC_BITS) {
		enc->nwit = 0;
		for (e = 0; !err && e < g->ne; e++)
			if (nbits[e])
				enc->edge_role[e] = graph_out_degree(g, g->edges[e].src) >= 2 ?
						    ENC_ROLE_BRANCH : ENC_ROLE_SEPARATOR;
	}
	if (!err)
		err = kind == PT_ENC_WITNESS ? enc_finish_witness(g, enc, flags) :
					       enc_finish_bits(g, enc, flags);
	if (err)
		encoding_free(enc);
	return err;
}
