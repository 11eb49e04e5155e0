// SPDX-License-Identifier: GPL-2.0
/* The 1994 paper's example graphs (paper_graphs.h). */
#include <CUnit/CUnit.h>

#include "paper_graphs.h"

void pg_build(struct graph *g, uint32_t nv, const uint32_t (*edges)[2], uint32_t ne,
	      uint32_t entry, uint32_t exit, const uint32_t *vflags)
{
	uint32_t i;

	graph_init(g);
	for (i = 0; i < nv; i++)
		CU_ASSERT_FATAL(graph_add_vertex(g, vflags ? vflags[i] : 0) == i);
	for (i = 0; i < ne; i++)
		CU_ASSERT_FATAL(graph_add_edge(g, edges[i][0], edges[i][1]) == i);
	CU_ASSERT_FATAL(graph_finish(g, entry, exit) == 0);
}

/* Ties between the weight-3 edges: ids decide, as spantree_max documents. */
static const uint32_t fig4_edges[F4_NE][2] = {
	[F4_AB] = { F4_A, F4_B }, [F4_AF] = { F4_A, F4_F }, [F4_GX] = { F4_G, F4_EXIT },
	[F4_HX] = { F4_H, F4_EXIT }, [F4_BC] = { F4_B, F4_C }, [F4_BE] = { F4_B, F4_E },
	[F4_CD] = { F4_C, F4_D }, [F4_CE] = { F4_C, F4_E }, [F4_DE] = { F4_D, F4_E },
	[F4_EB] = { F4_E, F4_B }, [F4_EF] = { F4_E, F4_F }, [F4_FG] = { F4_F, F4_G },
	[F4_FH] = { F4_F, F4_H },
};

const uint64_t fig4_weight[F4_NE] = {
	[F4_AB] = 3, [F4_AF] = 3, [F4_GX] = 3, [F4_HX] = 3, [F4_BC] = 43, [F4_BE] = 10,
	[F4_CD] = 22, [F4_CE] = 21, [F4_DE] = 22, [F4_EB] = 50, [F4_EF] = 3, [F4_FG] = 3,
	[F4_FH] = 3,
};

void pg_fig4(struct graph *g)
{
	pg_build(g, F4_NV, fig4_edges, F4_NE, F4_A, F4_EXIT, NULL);
}

void pg_fig14(struct graph *g, uint32_t b_flags)
{
	static const uint32_t e[F14_NE][2] = {
		[F14_PA] = { F14_P, F14_A }, [F14_PB] = { F14_P, F14_B },
		[F14_AC] = { F14_A, F14_C }, [F14_BA] = { F14_B, F14_A },
		[F14_BC] = { F14_B, F14_C }, [F14_CP] = { F14_C, F14_P },
		[F14_CEXIT] = { F14_C, F14_EXIT },
	};
	uint32_t flags[F14_NV] = { 0 };

	flags[F14_B] = b_flags;
	pg_build(g, F14_NV, e, F14_NE, F14_P, F14_EXIT, flags);
}

void pg_fig1(struct graph *g)
{
	static const uint32_t e[F1_NE][2] = {
		[F1_PQ] = { F1_P, F1_Q }, [F1_PEXIT] = { F1_P, F1_EXIT },
		[F1_QA] = { F1_Q, F1_A }, [F1_QB] = { F1_Q, F1_B },
		[F1_AR] = { F1_A, F1_R }, [F1_BR] = { F1_B, F1_R },
		[F1_RC] = { F1_R, F1_C }, [F1_REXIT] = { F1_R, F1_EXIT },
		[F1_CP] = { F1_C, F1_P },
	};

	pg_build(g, F1_NV, e, F1_NE, F1_P, F1_EXIT, NULL);
}
