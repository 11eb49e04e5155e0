/* SPDX-License-Identifier: GPL-2.0 */
/*
 * edge_order - the order in which placement (spantree.c, vprof.c) considers
 * edges: heaviest first, ties by lower edge id, so results are deterministic.
 */
#ifndef PATHTRACE_EDGE_ORDER_H
#define PATHTRACE_EDGE_ORDER_H

#include <stddef.h>
#include <stdint.h>

/* Sorts the edge ids edges[0..n) by decreasing weight[e], then increasing e. */
void edges_by_weight_desc(uint32_t *edges, size_t n, const uint64_t *weight);

#endif
