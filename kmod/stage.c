// SPDX-License-Identifier: GPL-2.0
/*
 * stage.c - the per-CPU stage of an inline copy's sites whose actions read
 * no register but the flags, and of its ENTERs (docs/inline.md, "The stage").
 *
 * A copy calls pt_inline_stage (inline_hit.S) at such a site. In a task's
 * context, with this CPU's stage open, that appends the call's return
 * address and the site's flags here and returns: a few instructions with
 * interrupts off, no C, no lookup. Otherwise (an interrupt or an NMI, a
 * full or closed stage) it goes on as pt_inline_hit.
 *
 * An ENTER site's call (pt_inline_hit, with every register) is staged the
 * same way when it can be (pt_stage_enter_site): its ENTER's value, which
 * reads the stack and the frames the copies keep, is found at the hit, and
 * the entry carries it; the coding waits for the run with the others.
 *
 * The entries are run, in order, through their sites' actions for the
 * owner the stage was opened for:
 *  - by every handler on this CPU before it records (pt_stage_enter),
 *    so a task's stream keeps its order, and an interrupt's records come
 *    after what the task it interrupted staged;
 *  - by the context switch: a task leaves a CPU only through one, so no
 *    entry outlives its owner's turn here;
 *  - by stop, by the removal of a copy's plan and by a module's unload
 *    (pt_stage_drain_all).
 * An NMI does neither (it may have interrupted an append); its handlers
 * record as before, and the stage's run holds the stream as the stop's
 * flush does, so an NMI meanwhile drops and counts what it would write.
 *
 * The stage opens from a handler in a task's context, and only for the
 * task the last switch switched to: between the sched_switch tracepoint
 * and the switch itself the last task still runs, and what it staged there
 * would be run after it may have gone on elsewhere. Each run closes the
 * stage first, so a site hit in code the run calls goes the way of a call
 * (and is skipped as nested, as before). The idle task never stages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irqflags.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/tracepoint.h>

#include "compat.h"
#include "inline_hit.h"
#include "pathtrace.h"

/*
 * The entries themselves are allocated (alloc_percpu): a module's static
 * per-CPU data comes out of a reserve all modules share (8 KiB on 6.1).
 */
struct pt_stage_entries {
	struct pt_stage_entry e[PT_STAGE_ENTRIES];
};

struct pt_stage {
	struct pt_stage_entry *next;	/* PT_STAGE_NEXT; NULL: closed */
	struct pt_stage_entry *end;	/* PT_STAGE_END; NULL: closed */
	struct pt_stage_entry *entries;	/* this CPU's of pt_stage_entries */
	struct task_struct *task;	/* the one the last switch switched to */
	u64 owner, gen;			/* whose entries these are */
};

DEFINE_PER_CPU(struct pt_stage, pt_stage);
static struct pt_stage_entries __percpu *pt_stage_entries;
/* The entries run on each CPU since START (PT_IOC_STATS hits_staged). */
static DEFINE_PER_CPU(u64, pt_stage_hits);

/* The per-CPU address of the preempt count, for pt_inline_stage's %gs: test. */
unsigned long pt_stage_preempt_count __ro_after_init;

/* Installed plans with staged sites (under pt_ctl_mutex), and whether the switch probe is on. */
static unsigned int pt_stage_users;
static bool pt_stage_live;

static void pt_stage_close(struct pt_stage *st)
{
	st->next = NULL;
	st->end = NULL;
}

/*
 * Runs @st's entries for their owner and leaves it empty and closed.
 * Interrupts off, never from an NMI. An entry whose site is gone (its plan
 * removed after it was staged) is dropped (pt_probe_record_stage).
 */
static void pt_stage_run(struct pt_stage *st)
{
	struct pt_stage_entry *end = st->next;
	struct pt_coder *c;
	u64 n;

	pt_stage_close(st);
	if (!end || end == st->entries)
		return;
	pt_stream_hold();
	c = pt_stream_coder(st->owner, st->gen);
	n = pt_probe_record_stage(c, st->entries, end);
	pt_stream_release();
	__this_cpu_add(pt_stage_hits, n);
}
NOKPROBE_SYMBOL(pt_stage_run);

/*
 * Before a handler that records for @owner (@gen) on this CPU, interrupts
 * off: this CPU's stage run, unless @owner is an NMI; then opened for it if
 * it is the task the last switch switched to.
 */
static void pt_stage_flush(u64 owner, u64 gen)
{
	struct pt_stage *st = this_cpu_ptr(&pt_stage);

	if (PT_OWNER_KIND(owner) == PT_OWNER_NMI)
		return;
	if (st->next == st->entries && st->owner == owner && st->gen == gen)
		return;		/* open for it, and empty */
	pt_stage_run(st);
	if (PT_OWNER_KIND(owner) != PT_OWNER_TASK || !READ_ONCE(pt_stage_live) ||
	    st->task != current)
		return;
	st->owner = owner;
	st->gen = gen;
	st->end = st->entries + PT_STAGE_ENTRIES;
	st->next = st->entries;
}
NOKPROBE_SYMBOL(pt_stage_flush);

/*
 * Called first by every handler that records (interrupts off): this CPU's
 * coder for the handler's owner, after what the stage holds; NULL when the
 * stream is held (by the flush IPI, or by a run of the stage that code the
 * handler is in called: the stage is neither run nor opened under it), a
 * drop counted. @p: the kprobe it came through, or NULL.
 */
struct pt_coder *pt_stage_enter(struct kprobe *p)
{
	u64 owner, gen;

	if (pt_stream_busy())
		return NULL;
	owner = pt_stream_owner(p, smp_processor_id(), &gen);
	pt_stage_flush(owner, gen);
	return pt_stream_coder(owner, gen);
}
NOKPROBE_SYMBOL(pt_stage_enter);

/*
 * An inline copy's ENTER site's hit (@pp not flags_only, with the site's
 * flags @rflags and stack pointer @sp, and its registers @regs or NULL),
 * interrupts off, not nested in another hit: staged as pt_inline_stage
 * stages a flags-only site when this CPU's stage is open and not full in a
 * task's context, with the ENTER's value found now (the stack and the
 * frames the copies keep are the hit's), and true. The entry holds @pp,
 * found in the sites' hash for this hit: a removal frees it only after a
 * grace period and a run of every stage. False: run it as a call (without
 * @regs, also when its frame needs the walk).
 */
bool pt_stage_enter_site(struct pt_probe *pp, unsigned long rflags, unsigned long sp,
			 struct pt_regs *regs)
{
	struct pt_stage *st = this_cpu_ptr(&pt_stage);
	struct pt_stage_entry *e = st->next;
	u64 enter;

	if (!e || e >= st->end || (preempt_count() & PT_STAGE_NOT_TASK))
		return false;
	enter = pt_enter_inline_value(pp->func, sp, regs);
	if (enter == PT_ENTER_NEEDS_WALK)
		return false;
	/* a probe's handler in code the walk called may have run it */
	e = st->next;
	if (unlikely(!e || e >= st->end))
		return false;
	e->ret = (unsigned long)pp;
	e->flags = (u32)rflags | PT_STAGE_PROBE;
	e->enter = (u32)enter;
	if (enter == PT_ENTER_IMPLICIT)
		e->flags |= PT_STAGE_NO_ENTER;
	st->next = e + 1;
	return true;
}
NOKPROBE_SYMBOL(pt_stage_enter_site);

static void notrace pt_stage_switch(void *data, bool preempt, struct task_struct *prev,
				    struct task_struct *next, unsigned int prev_state)
{
	struct pt_stage *st = this_cpu_ptr(&pt_stage);

	pt_stage_run(st);
	st->task = next;
}

static void pt_stage_drain_here(void *unused)
{
	unsigned long flags;

	local_irq_save(flags);
	pt_stage_run(this_cpu_ptr(&pt_stage));
	local_irq_restore(flags);
}

/* Runs every CPU's stage (stop, plan removal): they are closed after. */
void pt_stage_drain_all(void)
{
	if (READ_ONCE(pt_stage_live))
		on_each_cpu(pt_stage_drain_here, NULL, 1);
}

static void pt_stage_start_here(void *unused)
{
	struct pt_stage *st = this_cpu_ptr(&pt_stage);

	pt_stage_close(st);
	st->task = current;
}

/*
 * Before f's code is traced: the first plan with staged sites attaches the
 * switch probe (only then: every switch pays for it). Under pt_ctl_mutex.
 * Returns 0 or tracepoint_probe_register's error.
 */
int pt_stage_installing(const struct pt_func *f)
{
	int err;

	if (!f->nr_staged)
		return 0;
	if (!pt_stage_users) {
		err = tracepoint_probe_register(pt_sched_switch_tp, pt_stage_switch, NULL);
		if (err)
			return err;
		on_each_cpu(pt_stage_start_here, NULL, 1);
		WRITE_ONCE(pt_stage_live, true);
	}
	pt_stage_users++;
	return 0;
}

/*
 * After f's code is untraced (or failed to be traced), its plan's staged
 * entries run or dropped. The last one closes every stage (a handler that
 * saw the stage live has finished once the IPI ran on its CPU) and detaches
 * the probe. Under pt_ctl_mutex.
 */
void pt_stage_removed(const struct pt_func *f)
{
	if (!f->nr_staged || --pt_stage_users)
		return;
	WRITE_ONCE(pt_stage_live, false);
	on_each_cpu(pt_stage_drain_here, NULL, 1);
	tracepoint_probe_unregister(pt_sched_switch_tp, pt_stage_switch, NULL);
	tracepoint_synchronize_unregister();
}

/* Before arming (nothing staged: the stop ran every stage). */
void pt_stage_reset(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		per_cpu(pt_stage_hits, cpu) = 0;
}

u64 pt_stage_total(void)
{
	unsigned int cpu;
	u64 n = 0;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(per_cpu(pt_stage_hits, cpu));
	return n;
}

/* Returns 0 or -ENOMEM. */
int pt_stage_init(void)
{
	unsigned int cpu;

	BUILD_BUG_ON(offsetof(struct pt_stage, next) != PT_STAGE_NEXT ||
		     offsetof(struct pt_stage, end) != PT_STAGE_END ||
		     sizeof(struct pt_stage_entry) != PT_STAGE_ENTRY_BYTES);
	BUILD_BUG_ON(PT_STAGE_NOT_TASK != (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET));
	pt_stage_entries = alloc_percpu(struct pt_stage_entries);
	if (!pt_stage_entries)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		per_cpu(pt_stage, cpu).entries = per_cpu_ptr(pt_stage_entries, cpu)->e;
	pt_stage_preempt_count = pt_preempt_count_pcpu();
	return 0;
}

/* After every plan is removed (the switch probe is off, every stage closed). */
void pt_stage_exit(void)
{
	free_percpu(pt_stage_entries);
	pt_stage_entries = NULL;
}
