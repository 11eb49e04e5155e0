/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by eprof.c and vprof.c; not a public API. */
#ifndef PATHTRACE_COUNTERS_INTERNAL_H
#define PATHTRACE_COUNTERS_INTERNAL_H

#include <pathtrace/eprof.h>

/*
 * Solves the tree edges (and EXIT->ENTRY, index g->ne of val) from the
 * known non-tree edges: chords with a counter get count[], removed chords
 * 0, and early_exit[v] adds a known edge v->EXIT. Values are signed (Fig. 8
 * may produce negative tree values). Returns 0; -PT_EINVAL when the flow
 * law is broken at some vertex; -PT_ENOMEM.
 */
int counters_propagate(const struct graph *g, const struct counters *c, const uint64_t *count,
		       const uint64_t *early_exit, __int128 *val);

#endif
