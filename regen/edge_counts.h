/* SPDX-License-Identifier: GPL-2.0 */
/*
 * edge_counts - edges mode (pathtracectl enable --mode edges): the plan
 * counts the chords of its maximum spanning tree (PT_OP_COUNT, counter
 * index = CFG edge id) and the activations (PT_OP_COUNT of counter nedges
 * at the entry; nr_counters = nedges + 1), and the module writes
 * PT_REC_COUNTERS records only when it flushes (stop, plan removal): per
 * function and CPU, the counts since that CPU's previous COUNTERS record
 * of the function; nothing per activation. Summed over every CPU and
 * record, they are the chords' exact counts; every other edge's count
 * follows from the flow law (1994 paper, Fig. 6: eprof_counts), and a
 * block's count is the sum of its out-edges' counts. (A plan may instead
 * have nr_counters = nedges and an ENTER at the entry: its ENTER records
 * count the activations.)
 *
 * Exact when every activation counted began and ended while recording:
 * an activation open at start or stop breaks the flow law. Counts that
 * contradict it (a negative tree edge) are refused; an entry count (the
 * activation counter, or ENTER records) that differs from the recovered
 * activations is reported (status -PT_ETRUNC, counts kept but not
 * exact). Both cannot always be seen: an activation open at start and
 * another open at stop can balance.
 */
#ifndef PATHTRACE_EDGE_COUNTS_H
#define PATHTRACE_EDGE_COUNTS_H

#include <stdint.h>

#include <pathtrace/graph.h>
#include <pathtrace/plan.h>
#include <pathtrace/tracefile.h>

#include "model.h"

struct edge_counts_func {
	/*
	 * 0: exact; -PT_ENOENT: not an edges-mode function; -PT_ETRUNC:
	 * counted, but ENTERs != recovered activations (see above);
	 * -PT_EINVAL: the counts contradict the flow law (edge[] all 0);
	 * -PT_EFORMAT: its plan or a COUNTERS record is malformed.
	 */
	int status;
	uint64_t *edge;		/* cfg.nedges: every edge's count */
	uint64_t *block;	/* cfg.nblocks: sum of its out-edges */
	uint64_t activations;	/* recovered: the EXIT->ENTRY count */
	uint64_t enters;	/* entries counted: the activation counter, or ENTER records */
	uint64_t records;	/* COUNTERS records summed */
	uint64_t increments;	/* the counters' sum: every increment the plan's code made */
	uint32_t counters;	/* counters per COUNTERS record (nedges + 1; nedges: ENTERs count) */
	uint32_t chords;	/* edges with a counter */
};

struct edge_counts {
	uint32_t nfuncs;	/* = the model's */
	struct edge_counts_func *f;	/* indexed by pr_func.index */
	uint64_t stray;		/* COUNTERS records of no edges-mode function */
};

/*
 * Every edge count of one function: graph g (cfg_to_graph of its CFG),
 * its parsed plan pv (PT_MODE_EDGES), sum[pv->hdr.nr_counters] the summed
 * counters. Returns 0; -PT_EFORMAT (not an edges plan, a counter that is
 * not an edge of g or the activation counter g->ne, or nr_counters not
 * g->ne + 1 or, with an ENTER at the entry, g->ne); -PT_EINVAL (the flow law
 * contradicted); -PT_ENOMEM. edge_count gets g->ne entries.
 */
int edge_counts_func(const struct graph *g, const struct plan_view *pv, const uint64_t *sum,
		     uint64_t *edge_count, uint64_t *activations, uint32_t *chords);

/*
 * For every edges-mode function of m (plans from tf, records from rs):
 * fills out. Returns 0 (per-function problems are in status) or
 * -PT_ENOMEM. Free with edge_counts_free either way.
 */
int edge_counts_build(const struct pr_model *m, const struct tracefile *tf,
		      const struct tr_records *rs, struct edge_counts *out);

void edge_counts_free(struct edge_counts *ec);

#endif
