// SPDX-License-Identifier: GPL-2.0
/*
 * Bit tracing (1994 paper, Section 6.2): every out-edge of a predicate
 * emits its index among the predicate's out-edges in ceil(log2 k) bits.
 * Bit tracing blocks predicates by construction; a call vertex with one
 * out-edge additionally gets a 1-bit separator on that edge when an
 * emission-free path leads from it to a call vertex or EXIT
 * (docs/runtime.md: ENTER attribution needs a bit there). The separator
 * sits on the call vertex's own out-edge: it executes no more often than
 * any later edge of that path. When that edge cannot emit (encoding.h's
 * timing rule: its target has other predecessors) the separator moves to
 * the target's out-edge (and on along the chain while an edge cannot emit:
 * the timing rule, or no probe observes it); when the chain reaches a call
 * vertex first, a vertex separator on it (ENC_F_VERTEX_EMIT); when that is
 * not allowed, or the chain reaches EXIT, or a predicate is also a call
 * vertex with such an out-edge, or a predicate's out-edge is unobservable,
 * the function is refused. An entered call (encoding.h) needs no separator:
 * its callee's activation ends after its own ENTERs.
 */
#include <stdlib.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>
#include <pathtrace_abi.h>

#include "encoding_internal.h"

/* Whether entering v leads emission-free into a call vertex or EXIT. */
static int reaches_call_or_exit(const struct graph *g, const uint8_t *nbits,
				const uint8_t *vnbits, uint32_t v)
{
	/* Non-predicates have one out-edge: the emission-free path is a chain. */
	uint32_t steps;

	for (steps = 0; steps <= g->nv; steps++) {
		uint32_t e;

		if (vnbits && vnbits[v])
			return 0;	/* entering v emits */
		if (g->vflags[v] & (GRAPH_V_CALL | GRAPH_V_EXIT))
			return 1;
		if (graph_out_degree(g, v) != 1)
			return 0;	/* a predicate emits; a dead end reaches nothing */
		e = g->out_edges[g->out_start[v]];
		if (nbits[e])
			return 0;
		v = g->edges[e].dst;
	}
	return 0;	/* an emission-free cycle that never leaves */
}

int encoding_bits_opts(const struct graph *g, struct encoding_opts *o, struct encoding *enc)
{
	const uint8_t *no = o ? o->unobservable : NULL;
	uint32_t v, k, flags = o ? o->flags : 0;
	int err;

	if (!g || !g->out_start || !enc)
		return -PT_EINVAL;
	err = enc_alloc(g, PT_ENC_BITS, flags & ENC_F_VERTEX_EMIT, enc);
	if (err)
		return err;
	for (v = 0; v < g->nv && !err; v++) {
		uint32_t deg = graph_out_degree(g, v);

		if (deg < 2)
			continue;
		for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
			uint32_t e = g->out_edges[k];

			if (!enc_may_emit(g, no, e)) {
				err = enc_refuse(o, v, !encoding_edge_can_emit(g, e) ?
					"a call vertex is also a predicate (a call with a fixup edge) "
					"and an out-edge enters a block with other predecessors" :
					"a branch edge no probe can observe (static key or fault "
					"fixup): bit tracing needs every branch's bits");
				break;
			}
			enc->edge_nbits[e] = enc_bits_for(deg);
			enc->edge_value[e] = k - g->out_start[v];
			enc->edge_role[e] = ENC_ROLE_BRANCH;
		}
	}
	if (o && o->enter_witnessed) {
		enc->call_entered = calloc(g->nv + 1, 1);
		if (!enc->call_entered) {
			encoding_free(enc);
			return -PT_ENOMEM;
		}
		for (v = 0; v < g->nv; v++)
			enc->call_entered[v] = (g->vflags[v] & GRAPH_V_CALL) &&
					       o->enter_witnessed[v] == ENC_CALL_ENTERED;
	}
	for (v = 0; v < g->nv && !err; v++) {
		uint32_t e, x, steps = 0;

		if (!(g->vflags[v] & GRAPH_V_CALL) || graph_out_degree(g, v) != 1)
			continue;
		if (enc->call_entered && enc->call_entered[v])
			continue;	/* entered calls: no bit after them (encoding.h) */
		e = g->out_edges[g->out_start[v]];
		if (!reaches_call_or_exit(g, enc->edge_nbits, enc->vertex_nbits, g->edges[e].dst))
			continue;
		/*
		 * The chain from v to the call vertex or EXIT it reaches has
		 * single out-edges: the separator goes on the first that may
		 * emit, else on that call vertex.
		 */
		for (x = g->edges[e].dst; !enc_may_emit(g, no, e) && steps++ <= g->nv;
		     x = g->edges[e].dst) {
			if (g->vflags[x] & (GRAPH_V_CALL | GRAPH_V_EXIT)) {
				if ((g->vflags[x] & GRAPH_V_CALL) && enc->vertex_nbits &&
				    x != g->entry) {
					enc->vertex_nbits[x] = 1;	/* entering x emits */
					enc->vertex_value[x] = 1;
				} else {
					err = enc_refuse(o, v, x == g->exit ?
						"a call leads into EXIT with no edge between that a "
						"probe can observe after the call" :
						"a call leads straight into a call vertex with other "
						"predecessors (needs vertex emissions)");
				}
				e = GRAPH_NONE;
				break;
			}
			e = g->out_edges[g->out_start[x]];	/* x has one out-edge */
		}
		if (e == GRAPH_NONE)
			continue;
		if (!enc_may_emit(g, no, e)) {
			err = enc_refuse(o, v, "an emission-free cycle of unobservable edges");
			break;
		}
		enc->edge_nbits[e] = 1;
		enc->edge_value[e] = 1;
		enc->edge_role[e] = ENC_ROLE_SEPARATOR;
	}
	if (!err)
		err = enc_finish_bits(g, enc, 0);
	if (err)
		encoding_free(enc);
	return err;
}

int encoding_bits_flags(const struct graph *g, uint32_t flags, struct encoding *enc)
{
	struct encoding_opts o = { .flags = flags };

	return encoding_bits_opts(g, &o, enc);
}

int encoding_bits(const struct graph *g, struct encoding *enc)
{
	return encoding_bits_flags(g, 0, enc);
}
