/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 1994 paper's example graphs, as far as its text pins them down (the
 * scanned figures are not in ../shared/seeds; each builder says what the
 * text fixes and what was reconstructed).
 */
#ifndef PT_PAPER_GRAPHS_H
#define PT_PAPER_GRAPHS_H

#include <stdint.h>

#include <pathtrace/graph.h>

/* Builds g from an edge list; vertex i gets vflags[i] (vflags may be NULL). */
void pg_build(struct graph *g, uint32_t nv, const uint32_t (*edges)[2], uint32_t ne,
	      uint32_t entry, uint32_t exit, const uint32_t *vflags);

/*
 * Fig. 4: vertices a b c d e f g h EXIT (0..8), weights in fig4_weight.
 * The text fixes: the edges a->b, a->f, e->b, e->f, f->g, f->h; the counts
 * e = b, a = f = EXIT = g + h; the costs 124 = 53+43+22+2*3 (vertex
 * counters), 62 = 22+21+10+3*3 (edge counters), 59 = 22+21+10+2*3 (the
 * pipeless cycle {a->b, e->b, e->f, a->f}). The loop body b..e was
 * reconstructed by an exhaustive search over 5-edge bodies and integer
 * flows for one that meets all of these at once (it is unique up to
 * swapping c and d among the candidates the search found).
 */
enum { F4_A, F4_B, F4_C, F4_D, F4_E, F4_F, F4_G, F4_H, F4_EXIT, F4_NV };
enum { F4_AB, F4_AF, F4_GX, F4_HX, F4_BC, F4_BE, F4_CD, F4_CE, F4_DE, F4_EB, F4_EF, F4_FG,
       F4_FH, F4_NE };
extern const uint64_t fig4_weight[F4_NE];
void pg_fig4(struct graph *g);

/*
 * Fig. 14: P A B C EXIT (0..4); P, B, C predicates; witnesses t on P->A,
 * u on B->A, v on B->C (all fixed by the text's walk-through and by its
 * counter-example without t).
 */
enum { F14_P, F14_A, F14_B, F14_C, F14_EXIT, F14_NV };
enum { F14_PA, F14_PB, F14_AC, F14_BA, F14_BC, F14_CP, F14_CEXIT, F14_NE };
void pg_fig14(struct graph *g, uint32_t b_flags);

/*
 * Figs. 1, 5, 7: P Q A B R C EXIT (0..6). The text fixes P->Q, Q->A, Q->B,
 * A->R, B->R, C->P, the tree path C->P<-EXIT and a multi-exit loop; the
 * exits P->EXIT and R->EXIT are reconstructed (a while loop with a break).
 */
enum { F1_P, F1_Q, F1_A, F1_B, F1_R, F1_C, F1_EXIT, F1_NV };
enum { F1_PQ, F1_PEXIT, F1_QA, F1_QB, F1_AR, F1_BR, F1_RC, F1_REXIT, F1_CP, F1_NE };
void pg_fig1(struct graph *g);

#endif
