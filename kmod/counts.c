// SPDX-License-Identifier: GPL-2.0
/*
 * counts.c - what profiles counted, into the stream: edge-mode counters as
 * COUNTERS records and path counts as PATHS records, one CPU at a time
 * (an IPI on each), at stop and when a plan is removed. Nothing is written
 * while counting; a full buffer leaves the counts for the next flush.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <linux/smp.h>
#include <linux/string.h>

#include "pathtrace.h"

/*
 * Edge-mode counters: one COUNTERS record per CPU with the counts since the
 * previous one (arg func_id, body nr_counters u64). Each counter is taken
 * with this_cpu_xchg, so an increment that interrupts the flush (an NMI,
 * inline counters, which no irq-off section keeps out) lands in the next
 * record; a refused write gives the counts back.
 */
static void pt_counters_cpu(void *arg)
{
	struct pt_func *f = arg;
	unsigned long flags;
	u32 n = f->plan->nr_counters, i;
	u64 *t, any = 0;

	local_irq_save(flags);
	t = this_cpu_ptr(f->counts_taken);
	for (i = 0; i < n; i++) {
		t[i] = this_cpu_xchg(f->counters[i], 0);
		any |= t[i];
	}
	if (any) {
		pt_stream_hold();
		if (!pt_stream_write(f, PT_REC_COUNTERS, f->func_id, t, n * sizeof(*t)))
			for (i = 0; i < n; i++)
				this_cpu_add(f->counters[i], t[i]);
		pt_stream_release();
	}
	local_irq_restore(flags);
}

static void pt_counters_zero_cpu(void *arg)
{
	struct pt_func *f = arg;
	u32 i;

	for (i = 0; i < f->plan->nr_counters; i++)
		this_cpu_write(f->counters[i], 0);
}

/* Inline counters count whether armed or not: START zeroes them. */
void pt_counts_reset_inline(struct pt_func *f)
{
	if (f->inline_counters)
		on_each_cpu(pt_counters_zero_cpu, f, 1);
}

void pt_counts_flush_counters(struct pt_func *f)
{
	if (f->counters)
		on_each_cpu(pt_counters_cpu, f, 1);
}

/* Path counts per PT_REC_PATHS record: a small body, written from an IPI. */
#define PT_PATHS_PER_REC 32

/*
 * Writes one PT_REC_PATHS record (lost and overflow, then n pairs) and on
 * success zeroes what it reported; on failure (a full buffer, counted as a
 * drop) the counts stay for the next flush.
 */
static bool pt_paths_write(struct pt_func *f, struct pt_profile *pr, u64 *body,
			   const u32 *idx, unsigned int n, bool dense)
{
	unsigned int i;

	if (!pt_stream_write(f, PT_REC_PATHS, f->func_id, body, (2 + 2 * n) * sizeof(u64)))
		return false;
	pr->lost -= body[0];
	pr->overflow -= body[1];
	for (i = 0; i < n; i++) {
		if (dense)
			pr->count[idx[i]] = 0;
		else
			pr->slot[idx[i]].count = 0;
	}
	return true;
}

/* Path-profile counts of this CPU: PT_REC_PATHS records, then zero. */
static void pt_paths_cpu(void *arg)
{
	struct pt_func *f = arg;
	bool dense = pt_profile_dense(f);
	u32 size = f->profile_size;
	u64 body[2 + 2 * PT_PATHS_PER_REC];
	u32 idx[PT_PATHS_PER_REC];
	struct pt_profile *pr;
	unsigned long flags;
	unsigned int n = 0;
	u32 i;

	local_irq_save(flags);
	pr = this_cpu_ptr(f->profile);
	pt_stream_hold();
	body[0] = pr->lost;
	body[1] = pr->overflow;
	for (i = 0; i < size; i++) {
		u64 count = dense ? pr->count[i] : pr->slot[i].count;

		if (!count)
			continue;
		body[2 + 2 * n] = pt_profile_path(f, pr, i);
		body[3 + 2 * n] = count;
		idx[n++] = i;
		if (n < PT_PATHS_PER_REC)
			continue;
		if (!pt_paths_write(f, pr, body, idx, n, dense))
			goto out;
		body[0] = body[1] = 0;
		n = 0;
	}
	if (n || body[0] || body[1])
		pt_paths_write(f, pr, body, idx, n, dense);
out:
	pt_stream_release();
	local_irq_restore(flags);
}

void pt_counts_flush_paths(struct pt_func *f)
{
	if (f->profile)
		on_each_cpu(pt_paths_cpu, f, 1);
}
