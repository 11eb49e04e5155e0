// SPDX-License-Identifier: GPL-2.0
#include <pathtrace/error.h>
#include <pathtrace/graph.h>

#include "unit.h"

/* A diamond: 0 -> {1,2} -> 3. */
static void test_adjacency(void)
{
	struct graph g;
	uint32_t v;

	graph_init(&g);
	for (v = 0; v < 4; v++)
		CU_ASSERT_EQUAL(graph_add_vertex(&g, 0), v);
	CU_ASSERT_EQUAL(graph_add_edge(&g, 0, 1), 0);
	CU_ASSERT_EQUAL(graph_add_edge(&g, 0, 2), 1);
	CU_ASSERT_EQUAL(graph_add_edge(&g, 1, 3), 2);
	CU_ASSERT_EQUAL(graph_add_edge(&g, 2, 3), 3);
	CU_ASSERT_EQUAL(graph_add_edge(&g, 2, 9), -PT_EINVAL);
	CU_ASSERT_EQUAL(graph_finish(&g, 0, 3), 0);
	CU_ASSERT_EQUAL(graph_out_degree(&g, 0), 2);
	CU_ASSERT_EQUAL(graph_out_degree(&g, 3), 0);
	CU_ASSERT_EQUAL(graph_in_degree(&g, 3), 2);
	CU_ASSERT_EQUAL(graph_in_degree(&g, 0), 0);
	CU_ASSERT_EQUAL(g.out_edges[g.out_start[0]], 0);
	CU_ASSERT_EQUAL(g.out_edges[g.out_start[0] + 1], 1);
	CU_ASSERT_EQUAL(g.in_edges[g.in_start[3]], 2);
	CU_ASSERT_EQUAL(g.in_edges[g.in_start[3] + 1], 3);
	CU_ASSERT(g.vflags[0] & GRAPH_V_ENTRY);
	CU_ASSERT(g.vflags[3] & GRAPH_V_EXIT);
	graph_free(&g);
	CU_ASSERT_EQUAL(g.nv, 0);
}

static void test_finish_rejects(void)
{
	struct graph g;

	graph_init(&g);
	graph_add_vertex(&g, 0);
	CU_ASSERT_EQUAL(graph_finish(&g, 0, 0), -PT_EINVAL);
	CU_ASSERT_EQUAL(graph_finish(&g, 0, 5), -PT_EINVAL);
	graph_free(&g);
}

static void test_strerror(void)
{
	CU_ASSERT_STRING_EQUAL(pt_strerror(-PT_ENOMEM), "out of memory");
	CU_ASSERT_STRING_EQUAL(pt_strerror(PT_ETRUNC), "input is truncated");
	CU_ASSERT_STRING_EQUAL(pt_strerror(-999), "unknown error");
}

UNIT_SUITE(graph,
	   { "adjacency", test_adjacency },
	   { "finish rejects bad entry/exit", test_finish_rejects },
	   { "strerror table", test_strerror })
