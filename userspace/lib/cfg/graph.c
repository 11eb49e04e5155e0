// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/graph.h>

void graph_init(struct graph *g)
{
	memset(g, 0, sizeof(*g));
	g->entry = GRAPH_NONE;
	g->exit = GRAPH_NONE;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, (size_t)ncap * elem);
	if (!np)
		return -PT_ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

int64_t graph_add_vertex(struct graph *g, uint32_t flags)
{
	uint32_t cap = g->cap_v;

	if (g->nv == GRAPH_NONE - 1)
		return -PT_EOVERFLOW;
	if (grow((void **)&g->vflags, &cap, g->nv + 1, sizeof(*g->vflags)))
		return -PT_ENOMEM;
	g->cap_v = cap;
	g->vflags[g->nv] = flags;
	return g->nv++;
}

int64_t graph_add_edge(struct graph *g, uint32_t src, uint32_t dst)
{
	if (src >= g->nv || dst >= g->nv)
		return -PT_EINVAL;
	if (g->ne == GRAPH_NONE - 1)
		return -PT_EOVERFLOW;
	if (grow((void **)&g->edges, &g->cap_e, g->ne + 1, sizeof(*g->edges)))
		return -PT_ENOMEM;
	g->edges[g->ne].src = src;
	g->edges[g->ne].dst = dst;
	return g->ne++;
}

/* Counting sort of edge ids by one endpoint into CSR arrays. */
static int build_csr(const struct graph *g, int by_dst, uint32_t **startp, uint32_t **listp)
{
	uint32_t *start = calloc((size_t)g->nv + 1, sizeof(*start));
	uint32_t *list = malloc(((size_t)g->ne + 1) * sizeof(*list));
	uint32_t e, v;

	if (!start || !list) {
		free(start);
		free(list);
		return -PT_ENOMEM;
	}
	for (e = 0; e < g->ne; e++)
		start[(by_dst ? g->edges[e].dst : g->edges[e].src) + 1]++;
	for (v = 0; v < g->nv; v++)
		start[v + 1] += start[v];
	for (e = 0; e < g->ne; e++) {
		v = by_dst ? g->edges[e].dst : g->edges[e].src;
		list[start[v]++] = e;
	}
	/* Shift back: start[v] was advanced to the end of v's run. */
	for (v = g->nv; v > 0; v--)
		start[v] = start[v - 1];
	start[0] = 0;
	*startp = start;
	*listp = list;
	return 0;
}

int graph_finish(struct graph *g, uint32_t entry, uint32_t exit)
{
	int err;

	if (entry >= g->nv || exit >= g->nv || entry == exit)
		return -PT_EINVAL;
	g->entry = entry;
	g->exit = exit;
	g->vflags[entry] |= GRAPH_V_ENTRY;
	g->vflags[exit] |= GRAPH_V_EXIT;
	free(g->out_start);
	free(g->out_edges);
	free(g->in_start);
	free(g->in_edges);
	g->out_start = g->out_edges = g->in_start = g->in_edges = NULL;
	err = build_csr(g, 0, &g->out_start, &g->out_edges);
	if (!err)
		err = build_csr(g, 1, &g->in_start, &g->in_edges);
	return err;
}

void graph_free(struct graph *g)
{
	free(g->edges);
	free(g->vflags);
	free(g->out_start);
	free(g->out_edges);
	free(g->in_start);
	free(g->in_edges);
	graph_init(g);
}
