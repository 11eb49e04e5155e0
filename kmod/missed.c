// SPDX-License-Identifier: GPL-2.0
/*
 * missed.c - placing the probe hits kprobes skipped.
 *
 * kprobes skips a hit (and counts it in the probe's nmissed) when another
 * probe's handling is running on the same CPU: an interrupt or NMI that
 * arrives while an optimized or ftrace-based probe is handled (interrupts
 * are on there, before and after our handler), or code the handler itself
 * calls. Every probe hit of such a nested execution is skipped, so it is
 * absent as a whole and no recorded activation is cut. The counter says
 * neither where nor on which CPU, so a sweep compares every probe's nmissed
 * with what it already placed and writes one LOSS(MISSED) per function for
 * the difference, stamped with the interval since the previous sweep: the
 * reader marks the interrupt executions of that interval as possibly
 * incomplete and the counts add up exactly to what kprobes counted.
 *
 * Sweeps run under pt_ctl_mutex: every PT_MISSED_PERIOD_MS while armed,
 * for a plan about to be freed, at stop, and after stop once the reader
 * has emptied a buffer a refused LOSS(MISSED) could not go into.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>

#include "pathtrace.h"

static u64 pt_missed_placed;	/* hits placed since START */
static bool pt_missed_unplaced;	/* a sweep found hits it could not write */

/* At START: what kprobes counted so far is not this trace's. */
void pt_missed_reset(struct list_head *funcs)
{
	u64 now = ktime_get_mono_fast_ns();
	struct pt_func *f;
	u32 i;

	list_for_each_entry(f, funcs, node) {
		for (i = 0; i < f->nr_probes; i++)
			f->probes[i].missed_seen = READ_ONCE(f->probes[i].kp.nmissed);
		f->missed = 0;
		f->missed_carry = 0;
		f->missed_since = now;
	}
	pt_missed_placed = 0;
	pt_missed_unplaced = false;
}

/*
 * Writes LOSS(MISSED) for hits of f's probes skipped in (since, until] on
 * the calling CPU's stream (where it sits there carries no meaning: see
 * pt_rec_loss). Returns false if the full buffer refused it (a drop).
 */
static bool pt_missed_write(struct pt_func *f, u64 n, u64 since, u64 until)
{
	struct pt_rec_loss l = {
		.count = n, .func_id = f->func_id, .since = since, .until = until,
	};
	unsigned long flags;
	bool ok;

	local_irq_save(flags);
	pt_stream_hold();
	ok = pt_stream_write(f, PT_REC_LOSS, PT_LOSS_MISSED, &l, sizeof(l));
	pt_stream_release();
	local_irq_restore(flags);
	return ok;
}

/*
 * Places the hits of f's probes skipped since its previous sweep, on the
 * calling CPU's stream; @before: the clock read before any of f's counters
 * is (a hit counted after that read is the next interval's). A LOSS record
 * a full buffer refuses is itself an overrun drop; its hits are carried
 * (pt_missed_pending) and the next sweep places them with the interval
 * reaching back to where f's were placed. The clock is read again only
 * when there is a record to write: under software emulation a read of the
 * HPET costs a microsecond, and a sweep reads every function.
 */
void pt_missed_sweep_func(struct pt_func *f, u64 before)
{
	u64 n = f->missed_carry;
	u32 i;

	/*
	 * An inline copy's sites are calls, not kprobes: only inline_sites.c
	 * counts their misses, and it says so in inline_missed. No flag, no
	 * probe to read (a sweep of every site every period shows in a
	 * profile of the copies).
	 */
	if (f->nr_inline_sites && !xchg(&f->inline_missed, false) && !n) {
		f->missed_since = before;
		return;
	}
	for (i = 0; i < f->nr_probes; i++) {
		struct pt_probe *pp = &f->probes[i];
		unsigned long now = READ_ONCE(pp->kp.nmissed);

		n += now - pp->missed_seen;
		pp->missed_seen = now;
	}
	f->missed_carry = 0;
	if (n && !pt_missed_write(f, n, f->missed_since, ktime_get_mono_fast_ns())) {
		f->missed_carry = n;
		pt_missed_unplaced = true;
		return;
	}
	f->missed += n;
	f->missed_since = before;
	pt_missed_placed += n;
}

/*
 * Sweeps every function. Returns true when one is carried by probes
 * (kprobes or uprobes, whose misses only their counters say), false when
 * all are copies (whose sites flag their misses; counters miss none).
 */
bool pt_missed_sweep(struct list_head *funcs)
{
	u64 before = ktime_get_mono_fast_ns();
	bool probes = false;
	struct pt_func *f;

	pt_missed_unplaced = false;
	list_for_each_entry(f, funcs, node) {
		pt_missed_sweep_func(f, before);
		probes |= f->nr_probes && !f->nr_inline_sites && !f->inline_counters;
		cond_resched();
	}
	return probes;
}

u64 pt_missed_total(void)
{
	return pt_missed_placed;
}

/* True when a sweep could not write all its LOSS records. */
bool pt_missed_pending(void)
{
	return pt_missed_unplaced;
}
