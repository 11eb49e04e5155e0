// SPDX-License-Identifier: GPL-2.0
/*
 * Witness placement for multiprocedure tracing (1994 paper, Section 4.2,
 * Fig. 17 order): blocking witnesses first, then the chords of a maximum
 * spanning tree of the remaining edges.
 *
 * With site costs (encoding_opts.vertex_cost), the blockers are then
 * chosen again as a minimum cut of each call or EXIT vertex's chains
 * (cut_blockers): one blocker after chains merge serves them all, and a
 * call vertex may take a vertex witness instead of its blockers.
 *
 * Blocking: a "branch point" is a predicate (two or more out-edges) or a
 * call vertex (docs/runtime.md: a call vertex is treated like a
 * predicate). The blockers of a call or EXIT vertex v are the edges b->x0
 * such that b is a branch point and x0 .. v are not: the witnesses as far
 * from v as possible, so none is redundant. After them no emission-free
 * path leads from a branch point to a call vertex or EXIT.
 *
 * Timing (encoding.h): a call vertex's out-edge into a vertex x with other
 * predecessors cannot emit, nor can an edge no probe observes
 * (encoding_opts.unobservable); its blocker moves to x's own out-edge (x
 * is not a branch point, so that edge is the only way on), and on along
 * the chain while that cannot emit either; when the chain reaches the
 * call vertex to block, only a vertex witness on it can (with
 * ENC_F_VERTEX_EMIT; else, or at EXIT, the function is refused). Such
 * edges are forced into the spanning tree, so no chord lands on them.
 * A vertex witness t acts as an edge t'->t in front of t that all of t's
 * in-edges enter: the spanning tree is computed on that split graph, so
 * the emission-free edges still form a forest.
 *
 * Entry witnesses (encoding.h, encoding_opts.enter_witnessed): a call
 * vertex whose traced callee's ENTER names it is neither a call vertex to
 * block nor a branch point, and a walk that meets it is blocked there; in
 * the spanning tree it is split like a vertex witness. It costs no probe.
 *
 * Completion: the blockers may not be tree edges (the paper's footnote 5:
 * the "tree" may then be a forest); every other edge outside the maximum
 * spanning tree becomes a witness, so the emission-free edges form a
 * forest: no diamonds or directed cycles, hence Trace(Ewit).
 *
 * Codes: a prefix code over Ewit (huffman.h) by encoding_opts.code_weight:
 * an edge witness weighs its edge's count, a vertex witness the sum of its
 * in-edges'. Without counts all weigh the same (the paper's fixed width,
 * some codes a bit shorter).
 */
#include <stdlib.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>
#include <pathtrace/huffman.h>
#include <pathtrace/spantree.h>
#include <pathtrace_abi.h>

#include "encoding_internal.h"

static int is_entry_witness(const uint8_t *ewit, uint32_t v)
{
	return ewit && ewit[v] == ENC_CALL_WITNESS;
}

/* Entered calls (encoding.h): blocked, but their callee enters once. */
static int is_entered(const uint8_t *ewit, uint32_t v)
{
	return ewit && ewit[v] == ENC_CALL_ENTERED;
}

/* Framed calls (encoding.h): their callees' ENTERs name them by frame. */
static int is_framed(const uint8_t *ewit, uint32_t v)
{
	return ewit && ewit[v] == ENC_CALL_FRAMED;
}

/* A call vertex to block: its callee's ENTERs do not name it. */
static int is_blocked_call(const struct graph *g, const uint8_t *ewit, uint32_t v)
{
	return (g->vflags[v] & GRAPH_V_CALL) && !is_entry_witness(ewit, v) &&
	       !is_framed(ewit, v);
}

/*
 * A framed call is a branch point though no blocking target: from it, a
 * bit before EXIT, so that an activation that recursed through untraced
 * code ends before the ENTERs its outer self's call (the same frame) runs.
 */
static int is_branch_point(const struct graph *g, const uint8_t *ewit, uint32_t v)
{
	return graph_out_degree(g, v) >= 2 ||
	       ((is_blocked_call(g, ewit, v) || is_framed(ewit, v)) && !is_entered(ewit, v));
}

/*
 * Any edge of the chain from e on to the vertex it ends at blocks the same
 * paths (every vertex after e's source is a non-branch point with one
 * out-edge): the cheapest that may emit, by weight (the plan's site cost).
 * On ties the first, as far from the call as possible (the paper's Fig. 16
 * rule: no blocker redundant, more diamonds broken for Trace(Ewit)). Under
 * site costs the edges of a chain differ: a critical edge after a Jcc costs
 * an int3 at the branch on every execution of the branch, an edge into a
 * single-predecessor block further on a probe at that block's entry, often
 * jump-optimized.
 */
static uint32_t cheapest_on_chain(const struct graph *g, const uint8_t *no, const uint8_t *ewit,
				  const uint64_t *weight, uint32_t e)
{
	uint32_t best = e, y = g->edges[e].dst, steps = 0;

	while (weight && !is_blocked_call(g, ewit, y) && y != g->exit &&
	       !is_branch_point(g, ewit, y) && steps++ <= g->nv) {
		e = g->out_edges[g->out_start[y]];
		if (enc_may_emit(g, no, e) && weight[e] < weight[best])
			best = e;
		y = g->edges[e].dst;
	}
	return best;
}

/*
 * Backward walk from every call and EXIT vertex through non-branch points
 * (which have a single out-edge: the one the walk came along). A blocker
 * goes on the cheapest edge of that single-out-edge chain that may emit
 * (timing rule, observability); when none can, a vertex witness on the call
 * vertex the chain ends at.
 */
static int mark_blockers(const struct graph *g, const uint64_t *weight, const uint8_t *no,
			 uint8_t *role, uint8_t *vwit, struct encoding_opts *o)
{
	const uint8_t *ewit = o ? o->enter_witnessed : NULL;
	uint8_t *seen = calloc(g->nv + 1, 1);
	uint32_t *stack = malloc(((size_t)g->nv + 1) * sizeof(*stack));
	uint32_t sp = 0, v, k;
	int err = 0;

	if (!seen || !stack) {
		free(seen);
		free(stack);
		return -PT_ENOMEM;
	}
	for (v = 0; v < g->nv; v++) {
		if (is_blocked_call(g, ewit, v) || v == g->exit) {
			seen[v] = 1;
			stack[sp++] = v;
		}
	}
	while (sp && !err) {
		v = stack[--sp];
		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
			uint32_t e = g->in_edges[k], u = g->edges[e].src, x = v, steps = 0;

			/* entering u was a witness, or u is blocked itself */
			if (is_entry_witness(ewit, u) || is_entered(ewit, u))
				continue;
			if (!is_branch_point(g, ewit, u)) {
				if (!seen[u]) {
					seen[u] = 1;
					stack[sp++] = u;
				}
				continue;
			}
			while (!enc_may_emit(g, no, e) && steps++ <= g->nv) {
				if (is_entry_witness(ewit, x)) {
					e = GRAPH_NONE;	/* x's ENTER blocks */
					break;
				}
				if (is_blocked_call(g, ewit, x) || x == g->exit) {
					e = GRAPH_NONE;
					if (vwit && x != g->exit && x != g->entry) {
						vwit[x] = 1;
						break;
					}
					err = enc_refuse(o, u, x == g->exit ?
						"no edge a probe can observe lies between a branch point and "
						"EXIT (a call's or an unobservable edge leads straight there)" :
						"a call or an unobservable edge leads straight into a call "
						"vertex with other predecessors (needs vertex emissions)");
					break;
				}
				/* x is a non-branch point of the walk: one out-edge */
				e = g->out_edges[g->out_start[x]];
				x = g->edges[e].dst;
			}
			if (err)
				break;
			if (e != GRAPH_NONE && enc_may_emit(g, no, e))
				role[cheapest_on_chain(g, no, ewit, weight, e)] = ENC_ROLE_BLOCKING;
			else if (e != GRAPH_NONE)
				err = enc_refuse(o, u, "an emission-free cycle of unobservable edges");
		}
	}
	free(seen);
	free(stack);
	return err;
}

#define CUT_INF UINT64_MAX

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? CUT_INF : a + b;
}

/*
 * The blockers again, as a minimum cut: the chains into one call or EXIT
 * vertex t form an in-tree (every vertex on them but t has one out-edge),
 * and one blocker after the point where chains merge blocks them all.
 * mark_blockers prices each chain alone; here need(d), the cheapest way
 * to block every chain through edge d at or before d, is d's own cost or
 * the sum of need over the chain edges into d's source, whichever is
 * lower (ties stay before the merge, as far from t as possible, as in the
 * paper's rule). At a call vertex t itself a vertex witness (emitting as
 * t is entered, before its call) blocks them all at once: it replaces
 * the cut when it costs less (often one probe at t's entry against int3
 * probes at the branches), or when mark_blockers had to place one because
 * some chain cannot emit. The spanning tree comes after, so chords still
 * complete the witness set where a merged blocker leaves two of a
 * branch's edges without one.
 */
static int cut_blockers(const struct graph *g, const uint64_t *weight, const uint8_t *no,
			const uint64_t *vcost, uint8_t *role, uint8_t *vwit, const uint8_t *ewit)
{
	uint64_t *need = malloc(((size_t)g->ne + 1) * sizeof(*need));
	uint8_t *chain = calloc((size_t)g->ne + 1, 1), *take = calloc((size_t)g->ne + 1, 1);
	uint8_t *seen = calloc((size_t)g->nv + 1, 1);
	uint32_t *order = malloc(((size_t)g->nv + 1) * sizeof(*order));
	uint32_t *stack = malloc(((size_t)(g->nv > g->ne ? g->nv : g->ne) + 1) * sizeof(*stack));
	uint32_t n = 0, sp = 0, v, k, e, i;
	int err = 0;

	if (!need || !chain || !take || !seen || !order || !stack) {
		err = -PT_ENOMEM;
		goto out;
	}
	/* the trees: backward from every call and EXIT vertex through non-branch points */
	for (v = 0; v < g->nv; v++) {
		if (is_blocked_call(g, ewit, v) || v == g->exit) {
			seen[v] = 1;
			stack[sp++] = v;
		}
	}
	while (sp) {
		v = stack[--sp];
		order[n++] = v;
		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
			uint32_t d = g->in_edges[k], u = g->edges[d].src;

			/* entering u was a witness, or u is blocked itself */
			if (is_entry_witness(ewit, u) || is_entered(ewit, u))
				continue;
			chain[d] = 1;
			if (!is_branch_point(g, ewit, u) && !seen[u]) {
				seen[u] = 1;
				stack[sp++] = u;
			}
		}
	}
	for (e = 0; e < g->ne; e++) {
		need[e] = CUT_INF;
		if (chain[e] && is_branch_point(g, ewit, g->edges[e].src))
			need[e] = enc_may_emit(g, no, e) ? weight[e] : CUT_INF;
	}
	/* upstream first: a vertex's predecessors on the trees were visited after it */
	for (i = n; i-- > 0;) {
		uint64_t sum = 0, own;

		v = order[i];
		if (is_blocked_call(g, ewit, v) || v == g->exit)
			continue;
		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++)
			if (chain[g->in_edges[k]])
				sum = add_sat(sum, need[g->in_edges[k]]);
		e = g->out_edges[g->out_start[v]];
		own = enc_may_emit(g, no, e) ? weight[e] : CUT_INF;
		take[e] = own < sum;
		need[e] = take[e] ? own : sum;
	}
	for (e = 0; e < g->ne; e++)
		if (role[e] == ENC_ROLE_BLOCKING)
			role[e] = ENC_ROLE_NONE;
	for (i = 0; i < n; i++) {
		uint64_t total = 0;

		v = order[i];
		if (!is_blocked_call(g, ewit, v) && v != g->exit)
			continue;
		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++)
			if (chain[g->in_edges[k]])
				total = add_sat(total, need[g->in_edges[k]]);
		if (v != g->exit && v != g->entry &&
		    (vwit[v] || (vcost && vcost[v] != UINT64_MAX && vcost[v] < total))) {
			vwit[v] = 1;
			continue;
		}
		if (total == CUT_INF) {	/* mark_blockers refuses such a function first */
			err = -PT_EREFUSED;
			goto out;
		}
		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++)
			if (chain[g->in_edges[k]])
				stack[sp++] = g->in_edges[k];
		while (sp) {
			uint32_t d = stack[--sp], u = g->edges[d].src;

			if (is_branch_point(g, ewit, u) || take[d]) {
				role[d] = ENC_ROLE_BLOCKING;
				continue;
			}
			for (k = g->in_start[u]; k < g->in_start[u + 1]; k++)
				if (chain[g->in_edges[k]])
					stack[sp++] = g->in_edges[k];
		}
	}
out:
	free(need);
	free(chain);
	free(take);
	free(seen);
	free(order);
	free(stack);
	return err;
}

/*
 * A predicate with several predecessors that may take a vertex witness
 * instead of a chord among its in-edges (encoding_opts.vertex_cost): its
 * own entry is observed by one probe at its first instruction, where the
 * chords it replaces sit on critical edges, an int3 at a branch firing on
 * every run of the branch. (A block with one successor needs none: a
 * witness on its out-edge fires in the same runs, at the same cost.)
 */
static int vertex_chord_candidate(const struct graph *g, const uint8_t *vwit,
				  const struct encoding_opts *o, uint32_t v)
{
	return vwit && o && o->vertex_cost && v != g->entry && v != g->exit &&
	       !(g->vflags[v] & GRAPH_V_CALL) && graph_in_degree(g, v) >= 2 &&
	       graph_out_degree(g, v) >= 2 && o->vertex_cost[v] != UINT64_MAX;
}

/*
 * Spanning tree of the non-blocking edges (in-edges of a vertex witness t
 * enter a copy t' of t instead); the others become chords. With site
 * costs, each vertex_chord_candidate v is split too, and the copy joined
 * to v by an edge that costs v's entry probe: when the maximum spanning
 * tree leaves that edge out, v takes a vertex witness (marked in vwit)
 * where an edge witness on one of the critical edges into it would cost
 * more; when the tree takes it, v is as if never split.
 */
static int mark_chords(const struct graph *g, const uint64_t *weight, const uint8_t *no,
		       uint8_t *role, uint8_t *vwit, struct encoding_opts *o)
{
	struct graph sub;
	uint32_t *map = malloc(((size_t)g->ne + g->nv + 1) * sizeof(*map));
	uint64_t *w = malloc(((size_t)g->ne + g->nv + 1) * sizeof(*w));
	uint8_t *in_tree = malloc((size_t)g->ne + g->nv + 1);
	uint8_t *forced = malloc((size_t)g->ne + g->nv + 1);
	uint32_t *copy = malloc(((size_t)g->nv + 1) * sizeof(*copy));
	uint32_t v, e, n = 0;
	int err = 0;

	graph_init(&sub);
	if (!copy || !map || !w || !in_tree || !forced) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (v = 0; v < g->nv && !err; v++)
		if (graph_add_vertex(&sub, 0) < 0)
			err = -PT_ENOMEM;
	for (v = 0; v < g->nv && !err; v++) {
		int split = (vwit && vwit[v]) || (o && is_entry_witness(o->enter_witnessed, v)) ||
			    (weight && vertex_chord_candidate(g, vwit, o, v));
		int64_t c = split ? graph_add_vertex(&sub, 0) : (int64_t)v;

		if (c < 0)
			err = -PT_ENOMEM;
		copy[v] = (uint32_t)c;
	}
	for (e = 0; e < g->ne && !err; e++) {
		if (role[e] == ENC_ROLE_BLOCKING)
			continue;
		if (graph_add_edge(&sub, g->edges[e].src, copy[g->edges[e].dst]) < 0)
			err = -PT_ENOMEM;
		map[n] = e;
		forced[n] = !enc_may_emit(g, no, e);
		w[n++] = weight ? weight[e] : 0;
	}
	/* the candidates' copies (split for no other reason) joined to them: edges ne + v of map */
	for (v = 0; v < g->nv && !err; v++) {
		if (copy[v] == v || (vwit && vwit[v]) ||
		    (o && is_entry_witness(o->enter_witnessed, v)))
			continue;
		if (graph_add_edge(&sub, copy[v], v) < 0)
			err = -PT_ENOMEM;
		map[n] = g->ne + v;
		forced[n] = 0;
		w[n++] = o->vertex_cost[v];
	}
	if (!err)
		err = graph_finish(&sub, g->entry, g->exit);
	if (!err) {
		err = spantree_max(&sub, w, forced, in_tree);
		if (err == -PT_EINVAL)	/* edges that cannot emit form a cycle */
			err = enc_refuse(o, g->entry, "edges that cannot emit (out of calls, or "
					 "unobservable) form a cycle: one would have to be a chord");
	}
	for (e = 0; e < n && !err; e++) {
		if (in_tree[e])
			continue;
		if (map[e] < g->ne)
			role[map[e]] = ENC_ROLE_CHORD;
		else
			vwit[map[e] - g->ne] = 1;	/* a mark, as mark_blockers' */
	}
out:
	graph_free(&sub);
	free(map);
	free(w);
	free(in_tree);
	free(forced);
	free(copy);
	return err;
}

/*
 * Words prefix-free per predicate instead of over the whole function
 * (row_words.c): the codes 1..nemit are the order weight[] and the
 * scratch nb/val follow (edges, then vertices). Keeps the function-wide
 * words when some witness stays boxed in by its row-mates' words.
 */
static int context_words(struct encoding *enc, const uint64_t *weight, uint8_t *nb,
			 uint64_t *val)
{
	uint32_t c;
	int err = witness_context_words(enc, weight, nb, val);

	if (err == -PT_EOVERFLOW)
		return 0;
	for (c = 1; !err && c <= enc->nemit; c++) {
		uint32_t e = enc->wit_edge[c], v = enc->wit_vertex[c];

		if (e != GRAPH_NONE) {
			enc->edge_nbits[e] = nb[c - 1];
			enc->edge_value[e] = val[c - 1];
		} else {
			enc->vertex_nbits[v] = nb[c - 1];
			enc->vertex_value[v] = val[c - 1];
		}
	}
	return err ? err : enc_witness_words(enc);
}

int encoding_witness_opts(const struct graph *g, const uint64_t *weight,
			  struct encoding_opts *o, struct encoding *enc)
{
	uint32_t e, v, code = 0, flags = o ? o->flags : 0;
	const uint8_t *no = o ? o->unobservable : NULL;
	const uint64_t *cw = o ? o->code_weight : NULL;
	uint64_t *ww = NULL, *wv = NULL;
	uint8_t *wn = NULL;
	int err;

	if (!g || !g->out_start || !enc)
		return -PT_EINVAL;
	err = enc_alloc(g, PT_ENC_WITNESS, flags & ENC_F_VERTEX_EMIT, enc);
	if (err)
		return err;
	if (o && o->enter_witnessed) {
		enc->enter_code = calloc(g->nv + 1, sizeof(*enc->enter_code));
		if (!enc->enter_code) {
			err = -PT_ENOMEM;
			goto fail;
		}
		enc->call_entered = calloc(g->nv + 1, 1);
		enc->call_framed = calloc(g->nv + 1, 1);
		if (!enc->call_entered || !enc->call_framed) {
			err = -PT_ENOMEM;
			goto fail;
		}
		for (v = 0; v < g->nv; v++) {
			int call = is_blocked_call(g, NULL, v);

			enc->enter_code[v] = call && is_entry_witness(o->enter_witnessed, v); /* marks */
			enc->call_entered[v] = call && is_entered(o->enter_witnessed, v);
			enc->call_framed[v] = call && is_framed(o->enter_witnessed, v);
		}
	}
	err = mark_blockers(g, weight, no, enc->edge_role, enc->vertex_nbits, o);
	if (!err && weight && enc->vertex_nbits && o && o->vertex_cost)
		err = cut_blockers(g, weight, no, o->vertex_cost, enc->edge_role, enc->vertex_nbits,
				   o->enter_witnessed);
	if (!err)
		err = mark_chords(g, weight, no, enc->edge_role, enc->vertex_nbits, o);
	if (!err && weight && !(flags & ENC_F_TREE_ONLY))
		err = witness_prune(g, weight, o ? o->vertex_cost : NULL,
				    o ? o->enter_witnessed : NULL, enc->edge_role, enc->vertex_nbits);
	if (err)
		goto fail;
	for (e = 0; e < g->ne; e++)
		if (enc->edge_role[e] != ENC_ROLE_NONE)
			enc->nwit++;
	for (v = 0; enc->vertex_nbits && v < g->nv; v++)
		enc->nwit += enc->vertex_nbits[v] != 0;
	ww = calloc((size_t)enc->nwit + 1, sizeof(*ww));
	wv = calloc((size_t)enc->nwit + 1, sizeof(*wv));
	wn = calloc((size_t)enc->nwit + 1, sizeof(*wn));
	if (!ww || !wv || !wn) {
		err = -PT_ENOMEM;
		goto fail;
	}
	for (e = 0; e < g->ne; e++)
		if (enc->edge_role[e] != ENC_ROLE_NONE)
			ww[code++] = cw ? cw[e] : 1;
	for (v = 0; enc->vertex_nbits && v < g->nv; v++) {
		uint32_t k;

		if (!enc->vertex_nbits[v])
			continue;
		for (k = g->in_start[v]; cw && k < g->in_start[v + 1]; k++) {
			uint64_t x = cw[g->in_edges[k]];

			ww[code] = ww[code] + x < ww[code] ? UINT64_MAX : ww[code] + x;
		}
		if (!cw)
			ww[code] = 1;
		code++;
	}
	enc_spread_floor(ww, enc->nwit);
	err = enc->nwit ? huffman_code(ww, enc->nwit, wn, wv) : 0;
	if (err)
		goto fail;
	code = 0;
	for (e = 0; e < g->ne; e++) {
		if (enc->edge_role[e] == ENC_ROLE_NONE)
			continue;
		enc->edge_nbits[e] = wn[code];
		enc->edge_value[e] = wv[code++];
	}
	for (v = 0; enc->vertex_nbits && v < g->nv; v++) {
		if (!enc->vertex_nbits[v])
			continue;
		enc->vertex_nbits[v] = wn[code];	/* was the mark from mark_blockers */
		enc->vertex_value[v] = wv[code++];
	}
	err = enc_finish_witness(g, enc, 0);
	if (err == -PT_EINVAL)	/* two out-edges of a predicate reach one witness */
		err = enc_refuse(o, g->entry, "the witness sets of a branch point overlap "
				 "(its edges cannot emit)");
	if (!err && enc->nemit)
		err = context_words(enc, ww, wn, wv);
	if (!err && enc->nemit && o && o->ctx_words)
		err = encoding_ctx_build(g, enc, o->ctx_weight ? o->ctx_weight : cw);
	if (err)
		goto fail;
	free(ww);
	free(wv);
	free(wn);
	return 0;
fail:
	free(ww);
	free(wv);
	free(wn);
	encoding_free(enc);
	if (err == -PT_EREFUSED && o && o->vertex_cost) {
		/* merged blockers broke something the plain ones do not: plan without */
		struct encoding_opts plain = *o;

		plain.vertex_cost = NULL;
		err = encoding_witness_opts(g, weight, &plain, enc);
		o->why = plain.why;
		o->where = plain.where;
	}
	return err;
}

int encoding_witness_flags(const struct graph *g, const uint64_t *weight, uint32_t flags,
			   struct encoding *enc)
{
	struct encoding_opts o = { .flags = flags };

	return encoding_witness_opts(g, weight, &o, enc);
}

int encoding_witness(const struct graph *g, const uint64_t *weight, struct encoding *enc)
{
	return encoding_witness_flags(g, weight, 0, enc);
}
