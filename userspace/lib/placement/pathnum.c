// SPDX-License-Identifier: GPL-2.0
/* Ball-Larus path numbering with back-edge and call cuts; see pathnum.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/pathnum.h>
#include <pathtrace/spantree.h>

unsigned int pathnum_log2_ceil(uint64_t n)
{
	unsigned int b = 0;

	while (b < 64 && (n - 1) >> b)
		b++;
	return n <= 1 ? 0 : b;
}

void pathnum_free(struct pathnum *p)
{
	graph_free(&p->dag);
	free(p->kind);
	free(p->orig);
	free(p->cfg);
	free(p->call_end);
	free(p->start_of);
	free(p->numpaths);
	free(p->val);
	free(p->chord);
	free(p->inc);
	free(p->act);
	free(p->add);
	free(p->emit);
	free(p->set);
	free(p->ecost);
	free(p->inc2);
	free(p->add2);
	free(p->emit2);
	free(p->set2);
	free(p->call_start);
	memset(p, 0, sizeof(*p));
	graph_init(&p->dag);
}

static int __attribute__((format(printf, 3, 4)))
refuse(struct pathnum *p, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
	return err;
}

/*
 * Marks the back edges of an iterative DFS (ENTRY first, then any vertex
 * not yet reached): an edge to a vertex still on the stack retreats.
 */
static int find_back_edges(const struct graph *g, uint8_t *back)
{
	uint8_t *color = calloc(g->nv, 1);	/* 0 new, 1 on stack, 2 done */
	uint32_t *stack = malloc(((size_t)g->nv + 1) * sizeof(*stack));
	uint32_t *next = malloc(((size_t)g->nv + 1) * sizeof(*next));
	uint32_t r, root, sp;

	if (!color || !stack || !next) {
		free(color);
		free(stack);
		free(next);
		return -PT_ENOMEM;
	}
	for (r = 0; r <= g->nv; r++) {
		root = r == 0 ? g->entry : r - 1;
		if (root >= g->nv || color[root])
			continue;
		sp = 0;
		stack[sp] = root;
		next[sp++] = g->out_start[root];
		color[root] = 1;
		while (sp) {
			uint32_t v = stack[sp - 1];

			if (next[sp - 1] == g->out_start[v + 1]) {
				color[v] = 2;
				sp--;
				continue;
			}
			uint32_t e = g->out_edges[next[sp - 1]++];
			uint32_t w = g->edges[e].dst;

			/* Every edge into ENTRY restarts a path: even from code
			 * ENTRY cannot reach, so START edges close no cycle. */
			if (color[w] == 1 || w == g->entry) {
				back[e] = 1;
			} else if (!color[w]) {
				color[w] = 1;
				stack[sp] = w;
				next[sp++] = g->out_start[w];
			}
		}
	}
	free(color);
	free(stack);
	free(next);
	return 0;
}

static int add_dag_edge(struct pathnum *p, uint32_t src, uint32_t dst, uint8_t kind,
			uint32_t orig, uint32_t *cap)
{
	int64_t id = graph_add_edge(&p->dag, src, dst);

	if (id < 0)
		return (int)id;
	if ((uint32_t)id >= *cap) {
		uint32_t ncap = *cap * 2 + 16;
		uint8_t *k = realloc(p->kind, ncap);
		uint32_t *o;

		if (!k)
			return -PT_ENOMEM;
		p->kind = k;
		o = realloc(p->orig, (size_t)ncap * sizeof(*o));
		if (!o)
			return -PT_ENOMEM;
		p->orig = o;
		*cap = ncap;
	}
	p->kind[id] = kind;
	p->orig[id] = orig;
	return (int)id;
}

/* Builds the DAG: real edges, end edges in place, START edges last. */
static int build_dag(struct pathnum *p, const uint8_t *back)
{
	const struct graph *g = p->g;
	uint32_t *starts = NULL, nstarts = 0, cap = 0, e, v;
	int err = 0, id;

	starts = malloc(((size_t)g->nv + 1) * sizeof(*starts));
	if (!starts)
		return -PT_ENOMEM;
	for (v = 0; v < g->nv; v++) {
		if (graph_add_vertex(&p->dag, 0) < 0) {
			err = -PT_ENOMEM;
			goto out;
		}
		p->call_end[v] = GRAPH_NONE;
		p->start_of[v] = GRAPH_NONE;
	}
	for (e = 0; e < g->ne; e++) {
		uint32_t s = g->edges[e].src, d = g->edges[e].dst;
		struct pathnum_cfg_edge *ce = &p->cfg[e];
		/* ENTRY's call is not cut: its path number is read after the
		 * callee's markers, like any path's (see pathnum.h). */
		int cut_call = (g->vflags[s] & GRAPH_V_CALL) && s != g->entry &&
			       !(graph_out_degree(g, s) == 1 && d == g->exit);

		ce->start = GRAPH_NONE;
		ce->dag = GRAPH_NONE;
		if (cut_call || back[e]) {
			ce->role = cut_call ? PATHNUM_ROLE_CALL : PATHNUM_ROLE_BACK;
			if (cut_call) {
				if (p->call_end[s] == GRAPH_NONE) {
					id = add_dag_edge(p, s, g->exit, PATHNUM_CALL_END,
							  GRAPH_NONE, &cap);
					if (id < 0) {
						err = id;
						goto out;
					}
					p->call_end[s] = id;
				}
			} else {
				id = add_dag_edge(p, s, g->exit, PATHNUM_BACK_END, e, &cap);
				if (id < 0) {
					err = id;
					goto out;
				}
				ce->dag = id;
			}
			if (cut_call && d != g->entry)
				p->call_start[d] = 1;
			/* A path that restarts at ENTRY needs no START edge. */
			if (d != g->entry && p->start_of[d] == GRAPH_NONE) {
				p->start_of[d] = 0;	/* placeholder: added below */
				starts[nstarts++] = d;
			}
		} else {
			ce->role = PATHNUM_ROLE_REAL;
			id = add_dag_edge(p, s, d, PATHNUM_REAL, e, &cap);
			if (id < 0) {
				err = id;
				goto out;
			}
			ce->dag = id;
			if ((g->vflags[s] & GRAPH_V_CALL) && d == g->exit && s != g->entry)
				p->call_end[s] = id;
		}
	}
	for (v = 0; v < nstarts; v++) {
		id = add_dag_edge(p, g->entry, starts[v], PATHNUM_START, GRAPH_NONE, &cap);
		if (id < 0) {
			err = id;
			goto out;
		}
		p->start_of[starts[v]] = id;
	}
	for (e = 0; e < g->ne; e++)
		if (p->cfg[e].role != PATHNUM_ROLE_REAL && g->edges[e].dst != g->entry)
			p->cfg[e].start = p->start_of[g->edges[e].dst];
	err = graph_finish(&p->dag, g->entry, g->exit);
out:
	free(starts);
	return err;
}

/* Kahn's algorithm; order[] gets a topological order of the DAG. */
static int topo_order(const struct graph *d, uint32_t *order)
{
	uint32_t *indeg = malloc(((size_t)d->nv + 1) * sizeof(*indeg));
	uint32_t head = 0, tail = 0, v, i;

	if (!indeg)
		return -PT_ENOMEM;
	for (v = 0; v < d->nv; v++) {
		indeg[v] = graph_in_degree(d, v);
		if (!indeg[v])
			order[tail++] = v;
	}
	while (head < tail) {
		v = order[head++];
		for (i = d->out_start[v]; i < d->out_start[v + 1]; i++) {
			uint32_t w = d->edges[d->out_edges[i]].dst;

			if (!--indeg[w])
				order[tail++] = w;
		}
	}
	free(indeg);
	return tail == d->nv ? 0 : -PT_EINVAL;
}

/* Potentials over the spanning tree: phi(w) - phi(u) = Val(u->w) on tree edges. */
static int potentials(const struct pathnum *p, uint64_t *phi)
{
	const struct graph *d = &p->dag;
	uint8_t *seen = calloc(d->nv, 1);
	uint32_t *queue = malloc(((size_t)d->nv + 1) * sizeof(*queue));
	uint32_t head, tail, r, i;

	if (!seen || !queue) {
		free(seen);
		free(queue);
		return -PT_ENOMEM;
	}
	for (r = 0; r <= d->nv; r++) {
		uint32_t root = r == 0 ? d->entry : r - 1;

		if (seen[root])
			continue;
		head = tail = 0;
		seen[root] = 1;
		phi[root] = 0;
		queue[tail++] = root;
		while (head < tail) {
			uint32_t v = queue[head++];

			/* The EXIT->ENTRY edge: Val 0, always in the tree. */
			if (v == d->entry && !seen[d->exit]) {
				seen[d->exit] = 1;
				phi[d->exit] = phi[v];
				queue[tail++] = d->exit;
			} else if (v == d->exit && !seen[d->entry]) {
				seen[d->entry] = 1;
				phi[d->entry] = phi[v];
				queue[tail++] = d->entry;
			}
			for (i = d->out_start[v]; i < d->out_start[v + 1]; i++) {
				uint32_t e = d->out_edges[i], w = d->edges[e].dst;

				if (p->chord[e] || seen[w])
					continue;
				seen[w] = 1;
				phi[w] = phi[v] + p->val[e];
				queue[tail++] = w;
			}
			for (i = d->in_start[v]; i < d->in_start[v + 1]; i++) {
				uint32_t e = d->in_edges[i], u = d->edges[e].src;

				if (p->chord[e] || seen[u])
					continue;
				seen[u] = 1;
				phi[u] = phi[v] - p->val[e];
				queue[tail++] = u;
			}
		}
	}
	free(seen);
	free(queue);
	return 0;
}

#define PUSH_NEVER UINT64_MAX

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > PUSH_NEVER - b ? PUSH_NEVER : a + b;
}

/*
 * need[v]: what it costs, beyond the ADD probes already there, to emit on
 * the edges into v (or further up) instead of after v: PUSH_NEVER when the
 * EMIT cannot leave v (ENTRY, a branch at v, a pseudo edge into it). An
 * in-edge with an ADD takes the EMIT for nothing; a tree edge costs its own
 * probe, or what its source needs when that is less (the paper's "count at
 * the last chord" is the case where everything is free). take_edge[f]: f
 * itself emits rather than its source's in-edges.
 */
static uint64_t push_need(const struct pathnum *p, uint32_t v, uint64_t *need, uint8_t *take_edge)
{
	const struct graph *d = &p->dag;
	uint64_t sum = 0;
	uint32_t i;

	if (need[v] != PUSH_NEVER - 1)
		return need[v];
	need[v] = PUSH_NEVER;
	if (v == d->entry || graph_out_degree(d, v) != 1 || !graph_in_degree(d, v))
		return PUSH_NEVER;
	for (i = d->in_start[v]; i < d->in_start[v + 1]; i++) {
		uint32_t f = d->in_edges[i];
		uint64_t c, up;

		if (p->kind[f] != PATHNUM_REAL)
			return PUSH_NEVER;
		if (p->act[f] & PATHNUM_ACT_ADD) {
			c = 0;
		} else {
			c = p->ecost[f];
			up = push_need(p, d->edges[f].src, need, take_edge);
			take_edge[f] = c <= up;
			if (up < c)
				c = up;
		}
		sum = sat_add(sum, c);
	}
	need[v] = sum;
	return sum;
}

/* carry2: the second register's part (when there is one). */
static void push(struct pathnum *p, uint32_t v, uint64_t carry, uint64_t carry2,
		 const uint8_t *take_edge)
{
	const struct graph *d = &p->dag;
	uint32_t i;

	for (i = d->in_start[v]; i < d->in_start[v + 1]; i++) {
		uint32_t f = d->in_edges[i];

		if ((p->act[f] & PATHNUM_ACT_ADD) || take_edge[f]) {
			p->act[f] = PATHNUM_ACT_EMIT;
			p->emit[f] = p->add[f] + carry;
			p->add[f] = 0;
			if (p->inc2) {
				p->emit2[f] = p->add2[f] + carry2;
				p->add2[f] = 0;
			}
		} else {
			push(p, d->edges[f].src, carry, carry2, take_edge);
		}
	}
}

int pathnum_emit_earlier(struct pathnum *p, uint32_t d)
{
	const struct graph *dag = &p->dag;
	uint32_t v = dag->edges[d].src, i;

	if (!(p->act[d] & PATHNUM_ACT_EMIT) || (p->act[d] & PATHNUM_ACT_SET) ||
	    dag->edges[d].dst != dag->exit ||
	    v == dag->entry || graph_out_degree(dag, v) != 1 || !graph_in_degree(dag, v))
		return -PT_EINVAL;
	for (i = dag->in_start[v]; i < dag->in_start[v + 1]; i++)
		if (p->kind[dag->in_edges[i]] != PATHNUM_REAL)
			return -PT_EINVAL;
	for (i = dag->in_start[v]; i < dag->in_start[v + 1]; i++) {
		uint32_t f = dag->in_edges[i];

		p->emit[f] = p->add[f] + p->emit[d];
		p->add[f] = 0;
		p->act[f] = PATHNUM_ACT_EMIT;
		if (p->inc2) {
			p->emit2[f] = p->add2[f] + p->emit2[d];
			p->add2[f] = 0;
		}
	}
	p->act[d] = 0;
	p->emit[d] = 0;
	if (p->inc2)
		p->emit2[d] = 0;
	return 0;
}

static int check_graph(struct pathnum *p, const struct graph *g)
{
	uint32_t v, i, j;

	if (!g->out_start || g->entry >= g->nv || g->exit >= g->nv)
		return refuse(p, -PT_EINVAL, "graph not finished");
	if (graph_out_degree(g, g->exit))
		return refuse(p, -PT_ENOTSUP, "EXIT vertex %u has %u out-edges", g->exit,
			      graph_out_degree(g, g->exit));
	if (g->vflags[g->entry] & GRAPH_V_CALL) {
		if (graph_in_degree(g, g->entry))
			return refuse(p, -PT_ENOTSUP,
				      "entry block %u ends in a call and is a loop header",
				      g->entry);
		for (i = g->out_start[g->entry]; i < g->out_start[g->entry + 1]; i++)
			if (g->edges[g->out_edges[i]].dst == g->exit)
				return refuse(p, -PT_ENOTSUP,
					      "entry block %u ends in a call and returns: no "
					      "instruction after the call for its path end", g->entry);
	}
	for (v = 0; v < g->nv; v++) {
		uint32_t n = graph_out_degree(g, v);

		if (!(g->vflags[v] & GRAPH_V_CALL))
			continue;
		for (i = g->out_start[v]; i < g->out_start[v + 1]; i++) {
			uint32_t d = g->edges[g->out_edges[i]].dst;

			/* No instruction after the call could emit, and a path
			 * number is needed between it and the return (ENTER
			 * attribution in the caller). Real CFGs never have this:
			 * a call is followed by the block holding the ret. */
			if (d == g->exit)
				return refuse(p, -PT_ENOTSUP,
					      "call vertex %u returns straight to EXIT (%u "
					      "successors): no bit can follow its call", v, n);
			for (j = i + 1; j < g->out_start[v + 1]; j++)
				if (g->edges[g->out_edges[j]].dst == d)
					return refuse(p, -PT_ENOTSUP,
						      "call vertex %u has two edges to vertex %u",
						      v, d);
		}
	}
	return 0;
}

/* Whether DAG edge e has an increment in either register. */
static int has_inc(const struct pathnum *p, uint32_t e)
{
	return p->inc[e] || (p->inc2 && p->inc2[e]);
}

/*
 * The run-time actions from the chord increments (inc, and inc2 when a
 * second register runs beside): what each DAG edge does, then the
 * paper's "count at the last chord". Both registers share one shape (an
 * edge adds when either has an increment), so a moved EMIT carries both.
 */
static int derive_actions(struct pathnum *p)
{
	const struct graph *g = p->g;
	uint32_t e, v, ne = p->dag.ne;
	uint64_t *need = malloc(((size_t)p->dag.nv + 1) * sizeof(*need));
	uint8_t *take_edge = calloc((size_t)ne + 1, 1);

	if (!need || !take_edge) {
		free(need);
		free(take_edge);
		return -PT_ENOMEM;
	}
	for (v = 0; v < p->dag.nv; v++)
		need[v] = PUSH_NEVER - 1;	/* not yet known */

	for (e = 0; e < ne; e++) {
		const struct graph_edge *de = &p->dag.edges[e];

		if (de->dst == g->exit) {
			p->act[e] = PATHNUM_ACT_EMIT;
			p->emit[e] = p->inc[e];
			if (p->inc2)
				p->emit2[e] = p->inc2[e];
		} else if (p->kind[e] == PATHNUM_START) {
			continue;	/* no probe of its own */
		} else if (has_inc(p, e)) {
			p->act[e] = PATHNUM_ACT_ADD;
			p->add[e] = p->inc[e];
			if (p->inc2)
				p->add2[e] = p->inc2[e];
		}
	}
	/* A back edge into a START edge with an increment sets it. */
	for (e = 0; e < g->ne; e++) {
		uint32_t d = p->cfg[e].dag, st = p->cfg[e].start;

		if (p->cfg[e].role == PATHNUM_ROLE_BACK && st != GRAPH_NONE && has_inc(p, st)) {
			p->act[d] |= PATHNUM_ACT_SET;
			p->set[d] = p->inc[st];
			if (p->inc2)
				p->set2[d] = p->inc2[st];
		}
	}
	/*
	 * Count (here: emit) at the last chord, or wherever before the end
	 * is cheaper than the end's own probe. Decided on the ADDs as the
	 * chords left them: a push only turns ADDs and tree edges of one
	 * in-tree into EMITs, and in-trees of different ends are disjoint.
	 */
	for (e = 0; e < ne; e++) {
		uint32_t s = p->dag.edges[e].src;

		if (p->dag.edges[e].dst != g->exit || (p->act[e] & PATHNUM_ACT_SET) ||
		    push_need(p, s, need, take_edge) >= p->ecost[e])
			continue;
		push(p, s, p->emit[e], p->inc2 ? p->emit2[e] : 0, take_edge);
		p->act[e] = 0;
		p->emit[e] = 0;
		if (p->inc2)
			p->emit2[e] = 0;
	}
	free(need);
	free(take_edge);
	return 0;
}

int pathnum_second(struct pathnum *p, const uint64_t *inc2)
{
	size_t n = (size_t)p->dag.ne + 1;
	uint32_t e;

	if (!p->inc || p->inc2)
		return -PT_EINVAL;
	for (e = 0; e < p->dag.ne; e++)
		if (inc2[e] && !p->chord[e])
			return -PT_EINVAL;
	p->inc2 = calloc(n, sizeof(*p->inc2));
	p->add2 = calloc(n, sizeof(*p->add2));
	p->emit2 = calloc(n, sizeof(*p->emit2));
	p->set2 = calloc(n, sizeof(*p->set2));
	if (!p->inc2 || !p->add2 || !p->emit2 || !p->set2) {
		free(p->inc2);
		free(p->add2);
		free(p->emit2);
		free(p->set2);
		p->inc2 = p->add2 = p->emit2 = p->set2 = NULL;
		return -PT_ENOMEM;
	}
	memcpy(p->inc2, inc2, p->dag.ne * sizeof(*inc2));
	memset(p->act, 0, n);
	memset(p->add, 0, n * sizeof(*p->add));
	memset(p->emit, 0, n * sizeof(*p->emit));
	memset(p->set, 0, n * sizeof(*p->set));
	return derive_actions(p);
}

/* An in-edge of a path end's source, cheaper as a chord by share. */
static void discount(const struct pathnum *p, uint64_t *weight, uint32_t f, uint64_t share)
{
	if (p->kind[f] == PATHNUM_REAL)
		weight[f] = weight[f] > share ? weight[f] - share : 0;
}

/*
 * Count at the last chord, priced into the tree: a path end whose source v
 * has no other DAG out-edge costs nothing of its own when every edge into
 * v is a chord (derive_actions moves its EMIT onto them). So an in-edge of
 * v, or of the single-successor chain into v, is cheaper as a chord by
 * what the end's probe costs (p->ecost), shared among v's in-edges.
 */
static void last_chord_discount(const struct pathnum *p, uint64_t *weight)
{
	const struct graph *d = &p->dag;
	uint32_t v, e, k;

	for (v = 0; v < d->nv; v++) {
		uint64_t share;
		uint32_t x = v, n = graph_in_degree(d, v);

		if (v == d->entry || v == d->exit || graph_out_degree(d, v) != 1 || !n)
			continue;
		e = d->out_edges[d->out_start[v]];
		if (d->edges[e].dst != d->exit)
			continue;
		share = p->ecost[e] / n;
		for (k = d->in_start[v]; k < d->in_start[v + 1]; k++)
			discount(p, weight, d->in_edges[k], share);
		/* up a single-successor, single-predecessor chain */
		while (n == 1) {
			uint32_t f = d->in_edges[d->in_start[x]], u = d->edges[f].src;

			if (p->kind[f] != PATHNUM_REAL || u == d->entry ||
			    graph_out_degree(d, u) != 1 || graph_in_degree(d, u) != 1)
				break;
			discount(p, weight, d->in_edges[d->in_start[u]], share);
			x = u;
		}
	}
}

int pathnum_build(struct pathnum *p, const struct graph *g, const uint64_t *cost,
		  const uint64_t *call_cost)
{
	uint8_t *back = NULL, *forced = NULL, *free_start = NULL;
	uint64_t *weight = NULL, *phi = NULL;
	uint32_t *order = NULL;
	uint32_t v, e, i, ne;
	int err;

	memset(p, 0, sizeof(*p));
	graph_init(&p->dag);
	p->g = g;
	err = check_graph(p, g);
	if (err)
		return err;
	for (v = 0; v < g->nv; v++)
		if ((g->vflags[v] & GRAPH_V_CALL) && v != g->exit)
			p->has_calls = 1;
	back = calloc((size_t)g->ne + 1, 1);
	p->cfg = calloc((size_t)g->ne + 1, sizeof(*p->cfg));
	p->call_end = malloc(((size_t)g->nv + 1) * sizeof(*p->call_end));
	p->start_of = malloc(((size_t)g->nv + 1) * sizeof(*p->start_of));
	p->numpaths = calloc((size_t)g->nv + 1, sizeof(*p->numpaths));
	p->call_start = calloc((size_t)g->nv + 1, 1);
	order = malloc(((size_t)g->nv + 1) * sizeof(*order));
	free_start = calloc((size_t)g->nv + 1, 1);
	phi = calloc((size_t)g->nv + 1, sizeof(*phi));
	if (!back || !p->cfg || !p->call_end || !p->start_of || !p->numpaths || !order || !phi ||
	    !p->call_start || !free_start)
		goto nomem;
	err = find_back_edges(g, back);
	if (!err)
		err = build_dag(p, back);
	if (err)
		goto fail;
	ne = p->dag.ne;
	p->val = calloc((size_t)ne + 1, sizeof(*p->val));
	p->chord = calloc((size_t)ne + 1, 1);
	p->inc = calloc((size_t)ne + 1, sizeof(*p->inc));
	p->act = calloc((size_t)ne + 1, 1);
	p->add = calloc((size_t)ne + 1, sizeof(*p->add));
	p->emit = calloc((size_t)ne + 1, sizeof(*p->emit));
	p->set = calloc((size_t)ne + 1, sizeof(*p->set));
	p->ecost = calloc((size_t)ne + 1, sizeof(*p->ecost));
	weight = calloc((size_t)ne + 1, sizeof(*weight));
	forced = calloc((size_t)ne + 1, 1);
	if (!p->val || !p->chord || !p->inc || !p->act || !p->add || !p->emit || !weight ||
	    !forced || !p->set || !p->ecost)
		goto nomem;
	/* what a probe for each DAG edge's action costs (a START edge has none) */
	for (e = 0; e < ne; e++) {
		if (p->kind[e] == PATHNUM_CALL_END)
			p->ecost[e] = call_cost ? call_cost[p->dag.edges[e].src] : 1;
		else if (p->kind[e] != PATHNUM_START)
			p->ecost[e] = cost ? cost[p->orig[e]] : 1;
	}
	err = topo_order(&p->dag, order);
	if (err) {
		refuse(p, err, "internal: the cut graph is not acyclic");
		goto fail;
	}
	/* NumPaths and Val in reverse topological order (the paper's Step 1). */
	for (i = p->dag.nv; i-- > 0;) {
		uint64_t n = 0;
		uint32_t k;

		v = order[i];
		if (v == g->exit) {
			p->numpaths[v] = 1;
			continue;
		}
		for (k = p->dag.out_start[v]; k < p->dag.out_start[v + 1]; k++) {
			e = p->dag.out_edges[k];
			p->val[e] = n;
			if (__builtin_add_overflow(n, p->numpaths[p->dag.edges[e].dst], &n)) {
				err = refuse(p, -PT_EOVERFLOW,
					     "more than 2^64-1 paths from vertex %u to EXIT: "
					     "refused, never wrapped", v);
				goto fail;
			}
		}
		p->numpaths[v] = n;
	}
	p->npaths = p->numpaths[g->entry];
	if (!p->npaths) {
		err = refuse(p, -PT_ENOTSUP, "no path from ENTRY %u to EXIT %u", g->entry,
			     g->exit);
		goto fail;
	}
	p->width = pathnum_log2_ceil(p->npaths);
	if (p->has_calls && !p->width)
		p->width = 1;	/* runtime.md: a bit between any two call vertices */

	/* Chords: heavy edges into the tree; path ends are probed anyway. */
	for (e = 0; e < ne; e++) {
		uint32_t o = p->orig[e];

		switch (p->kind[e]) {
		case PATHNUM_START:
			forced[e] = 1;
			break;
		case PATHNUM_REAL:
			/* ENTRY's call is not cut: no increment may run before it
			 * (the callee needs the register at 0), so in the tree. */
			if (p->dag.edges[e].src == g->entry &&
			    (g->vflags[g->entry] & GRAPH_V_CALL)) {
				uint32_t w = p->dag.edges[e].dst;

				if (p->call_start[w]) {
					err = refuse(p, -PT_ENOTSUP,
						     "entry block %u ends in a call and its "
						     "successor %u also follows a call",
						     g->entry, w);
					goto fail;
				}
				forced[e] = 1;
				if (p->start_of[w] != GRAPH_NONE)
					free_start[w] = 1;
				break;
			}
			if (p->dag.edges[e].dst != g->exit)
				weight[e] = cost ? cost[o] : 1;
			break;
		default:
			break;
		}
	}
	last_chord_discount(p, weight);
	for (e = 0; e < ne; e++)
		if (p->kind[e] == PATHNUM_START && free_start[p->dag.edges[e].dst])
			forced[e] = 0;	/* its back edges set its increment */
	err = spantree_max(&p->dag, weight, forced, p->chord);
	if (err)
		goto fail;
	for (e = 0; e < ne; e++)
		p->chord[e] = !p->chord[e];
	err = potentials(p, phi);
	if (err)
		goto fail;
	for (e = 0; e < ne; e++) {
		const struct graph_edge *de = &p->dag.edges[e];

		if (p->chord[e])
			p->inc[e] = p->val[e] + phi[de->src] - phi[de->dst];
	}
	err = derive_actions(p);
	if (err)
		goto nomem;
	free(back);
	free(forced);
	free(free_start);
	free(weight);
	free(phi);
	free(order);
	return 0;
nomem:
	err = refuse(p, -PT_ENOMEM, "out of memory");
fail:
	{
		char why[sizeof(p->reason)];

		memcpy(why, p->reason, sizeof(why));
		free(free_start);
		free(back);
		free(forced);
		free(weight);
		free(phi);
		free(order);
		pathnum_free(p);
		memcpy(p->reason, why, sizeof(why));
	}
	return err;
}

int pathnum_decode(const struct pathnum *p, uint64_t id, uint32_t *edges, uint32_t max)
{
	const struct graph *d = &p->dag;
	uint32_t v = d->entry, n = 0, k;

	if (id >= p->npaths)
		return -PT_EINVAL;
	while (v != d->exit) {
		uint32_t pick = GRAPH_NONE;

		for (k = d->out_start[v]; k < d->out_start[v + 1]; k++) {
			uint32_t e = d->out_edges[k];

			if (p->val[e] <= id && id - p->val[e] < p->numpaths[d->edges[e].dst]) {
				pick = e;
				break;
			}
		}
		if (pick == GRAPH_NONE)
			return -PT_EINVAL;	/* cannot happen for id < NumPaths */
		if (n == max)
			return -PT_EOVERFLOW;
		edges[n++] = pick;
		id -= p->val[pick];
		v = d->edges[pick].dst;
	}
	return (int)n;
}

int pathnum_blocks(const struct pathnum *p, uint64_t id, uint32_t *blocks, uint32_t max)
{
	uint32_t *edges = malloc(((size_t)p->dag.nv + 1) * sizeof(*edges));
	uint32_t i, n = 0;
	int ne;

	if (!edges)
		return -PT_ENOMEM;
	ne = pathnum_decode(p, id, edges, p->dag.nv + 1);
	for (i = 0; ne > 0 && i < (uint32_t)ne; i++) {
		const struct graph_edge *de = &p->dag.edges[edges[i]];

		if (i == 0 && p->kind[edges[i]] == PATHNUM_START)
			continue;	/* ENTRY is not on a path that starts at w */
		if (n == max) {
			free(edges);
			return -PT_EOVERFLOW;
		}
		blocks[n++] = de->src;
	}
	free(edges);
	if (ne < 0)
		return ne;
	return (int)n;
}

uint64_t pathnum_value(const struct pathnum *p, const uint32_t *edges, uint32_t n)
{
	uint64_t s = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		s += p->val[edges[i]];
	return s;
}
