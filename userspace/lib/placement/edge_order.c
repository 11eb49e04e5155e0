// SPDX-License-Identifier: GPL-2.0
/* edge_order - edge ids heaviest first, ties by lower id. */
#include <stdlib.h>

#include "edge_order.h"

static int by_weight_desc(const void *pa, const void *pb, void *ctx)
{
	const uint64_t *w = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (w[a] != w[b])
		return w[a] > w[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

void edges_by_weight_desc(uint32_t *edges, size_t n, const uint64_t *weight)
{
	qsort_r(edges, n, sizeof(*edges), by_weight_desc, (void *)weight);
}
