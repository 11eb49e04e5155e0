// SPDX-License-Identifier: GPL-2.0
/*
 * frames.c - the traced frame an ENTER from untraced code runs under.
 *
 * A framed plan (PT_PLAN_FRAMED) puts no bit before its calls, so an ENTER
 * that untraced code makes below one of them must say which call that is:
 * the return address of the innermost frame on the stack that lies in
 * traced code. The ORC unwinder walks from the probe's registers, within
 * the probed context only: another stack (the IRQ stack left for the task
 * stack, an exception stack), an entry from user mode, or any entry frame
 * off the task stack ends it with none, because what lies below belongs to
 * another owner's stream. A page fault in kernel mode on the task stack is
 * the same owner (copy_to_user under a traced call) and is walked through.
 * Walks only while a framed plan is installed: they cost a few
 * microseconds under TCG (tools/experiments/unwind-at-enter), counted and
 * timed for pathtracectl status (PT_IOC_STATS frame_walks, frame_walk_ns).
 *
 * Most ENTERs need no walk: inline copies built with PT_ADD_INLINE_FRAMES
 * keep the innermost call in flight in pt_inline_frame (docs/inline.md,
 * "Frames the copies keep"), and the frame is that call's return address;
 * each activation puts back, as it ends, the call its caller kept; and they
 * count their activations in pt_inline_depth, so an ENTER that is the only
 * one in flight knows it runs under no traced frame. An ENTER that serves a
 * softirq uses the kept call where it lies on the ENTER's own stack
 * (pt_frames_kept_softirq).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/export.h>
#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task_stack.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/stacktrace.h>
#include <asm/unwind.h>

#include "pathtrace.h"

/* Frames deeper than this are not looked for: the ENTER says so. */
#define PT_FRAMES_MAX 64

/* Plans whose ENTERs name the frame they run under (pt_frames_wanted). */
atomic_t pt_framed_plans = ATOMIC_INIT(0);

/*
 * The innermost call in flight from a copy that keeps frames: the stack
 * pointer at its call instruction (its return address is the word below),
 * or 0. The copy stores it right before each call that returns and zeroes
 * it where the call returns; every ENTER of a copy's site and every context
 * switch zeroes it, and an activation that ends puts back what it held as
 * the activation began (pt_inline_frames_saved). So while it is not 0 on
 * this CPU, the call that stored it is in flight and every traced
 * activation begun since has ended: whatever runs below that call on the
 * same stack runs under it.
 */
DEFINE_PER_CPU(unsigned long, pt_inline_frame);
EXPORT_PER_CPU_SYMBOL_GPL(pt_inline_frame);

/*
 * What pt_inline_frame held as each activation in flight began, by its
 * depth (pt_inline_depth with it, 1 to PT_INLINE_FRAMES_SAVED: slot d - 1):
 * each copy saves it before counting itself up and puts it back after
 * counting itself down, so when an activation ends its caller's kept call
 * is kept again. Between the two nothing else at that depth begins: the
 * activations that do are nested in it, and a switch starts the count
 * again from 0 (an activation begun before it ends at 0 or below, where no
 * slot is). An interrupt's activations save and put back what the task's
 * code had, the word and the slots above the task's own.
 */
DEFINE_PER_CPU(unsigned long [PT_INLINE_FRAMES_SAVED], pt_inline_frames_saved);
EXPORT_PER_CPU_SYMBOL_GPL(pt_inline_frames_saved);

/*
 * The copies' activations in flight on this CPU: each copy counts itself
 * up after its __fentry__ site and down on every way out; a context switch
 * zeroes it. Interrupts count up and down alike, so in a task's context it
 * is the task's activations begun since it came to this CPU, less those it
 * had before that have ended here since. pt_inline_depth_known says when
 * it holds every traced one: set where a walk found no traced frame below
 * the one activation counted; cleared at a switch, and by a copy whose
 * count-down goes below 0 (one that began before the switch has ended: it
 * was an outer frame of all the counted ones, and was not counted). While
 * it is set, a count of 1 at an ENTER says no other traced activation is
 * in flight: copies without a plan left over from before may be, and are
 * untraced code to the walk too.
 */
DEFINE_PER_CPU(int, pt_inline_depth);
EXPORT_PER_CPU_SYMBOL_GPL(pt_inline_depth);
DEFINE_PER_CPU(bool, pt_inline_depth_known);
EXPORT_PER_CPU_SYMBOL_GPL(pt_inline_depth_known);

/*
 * Traced kernel functions whose code does not keep pt_inline_frame (probe
 * plans, copies without PT_ADD_INLINE_FRAMES): a kept frame would skip
 * theirs, so none is trusted while there is one.
 */
static atomic_t pt_frames_unkept = ATOMIC_INIT(0);

static bool check_frames;
module_param(check_frames, bool, 0644);
MODULE_PARM_DESC(check_frames, "walk the stack for every frame named without a walk too, and warn where they differ");

/*
 * The end (top) of this CPU's interrupt stack, where softirqs run, as the
 * unwinder gave it to a walk that started there; 0 until one has. A CPU's
 * interrupt stack is allocated once and kept (its hotplug included).
 */
static DEFINE_PER_CPU(unsigned long, pt_frames_irq_stack_end);

struct tracepoint *pt_sched_switch_tp;
/* Installed plans whose copies keep frames (PT_ADD_INLINE_FRAMES); under pt_ctl_mutex. */
static unsigned int pt_frames_keepers;

/*
 * Walks since START and their time, frames named without one and of those
 * the softirqs', per CPU (pathtracectl status).
 */
struct pt_frames_count {
	u64 walks;
	u64 ns;
	u64 kept;
	u64 kept_softirq;
};
static DEFINE_PER_CPU(struct pt_frames_count, pt_frames_counts);

static bool pt_frames_keeps(const struct pt_func *f)
{
	return f->keeps_frames || (f->plan->flags & PT_PLAN_USER);
}

/*
 * The task whose activations pt_inline_frame and pt_inline_depth describe
 * on this CPU: the one a switch switches to. Between the sched_switch
 * tracepoint and the switch itself the last task still runs (its copies
 * may too): what it names or calibrates there is not the next one's.
 */
static DEFINE_PER_CPU(struct task_struct *, pt_frames_owner);

/* What the copies keep on this CPU, forgotten: @owner's count starts again. */
static void pt_frames_forget(struct task_struct *owner)
{
	this_cpu_write(pt_inline_frame, 0);
	this_cpu_write(pt_inline_depth, 0);
	this_cpu_write(pt_inline_depth_known, false);
	this_cpu_write(pt_frames_owner, owner);
}

/* An IPI's at the start: the count starts again from the task it interrupted. */
static void pt_frames_forget_here(void *unused)
{
	pt_frames_forget(current);
}

/*
 * Tasks switched out with no copy's activation in flight (the count known,
 * and 0), by a hash of the pointer; a slot holds the last one parked there.
 * Such a task comes back (here or on another CPU) where it left, still
 * with none in flight: its count is known again, and its next ENTER from
 * untraced code runs under no traced frame without a walk. A slot names a
 * task only from its switch out to its next switch in, which takes it back;
 * a dead task parks nothing (its task_struct may come back as another's).
 */
#define PT_FRAMES_PARKED_BITS	10

static struct task_struct *pt_frames_parked[1 << PT_FRAMES_PARKED_BITS];

/*
 * A context switch: the next task's calls are not the last one's, and a
 * task that comes back walks until its copies store a call again; its
 * count starts again, known if the task left with none in flight.
 */
static void notrace pt_frames_switch(void *data, bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state)
{
	struct task_struct **slot;

	if (this_cpu_read(pt_frames_owner) == prev && this_cpu_read(pt_inline_depth_known) &&
	    !this_cpu_read(pt_inline_depth) && !(prev_state & TASK_DEAD))
		WRITE_ONCE(pt_frames_parked[hash_ptr(prev, PT_FRAMES_PARKED_BITS)], prev);
	pt_frames_forget(next);
	/* only next's own switch out parks next, and next is here */
	slot = &pt_frames_parked[hash_ptr(next, PT_FRAMES_PARKED_BITS)];
	if (READ_ONCE(*slot) == next && cmpxchg(slot, next, NULL) == next)
		this_cpu_write(pt_inline_depth_known, true);
}

/*
 * Before f's code is traced: ENTERs name frames from now on. The first
 * plan whose copy keeps frames attaches the context-switch probe (only
 * then: every switch pays for it), then forgets on every CPU what the
 * copies kept without it. Under pt_ctl_mutex. Returns 0 or
 * tracepoint_probe_register's error.
 */
int pt_frames_installing(const struct pt_func *f)
{
	int err;

	if (f->keeps_frames && !pt_frames_keepers) {
		/* parked while no switch took them back: stale */
		memset(pt_frames_parked, 0, sizeof(pt_frames_parked));
		err = tracepoint_probe_register(pt_sched_switch_tp, pt_frames_switch, NULL);
		if (err)
			return err;
		on_each_cpu(pt_frames_forget_here, NULL, 1);
	}
	pt_frames_keepers += f->keeps_frames;
	if (f->plan->flags & PT_PLAN_FRAMED)
		atomic_inc(&pt_framed_plans);
	if (!pt_frames_keeps(f))
		atomic_inc(&pt_frames_unkept);
	return 0;
}

/* After f's code is untraced (or failed to be traced). Under pt_ctl_mutex. */
void pt_frames_removed(const struct pt_func *f)
{
	if (f->plan->flags & PT_PLAN_FRAMED)
		atomic_dec(&pt_framed_plans);
	if (!pt_frames_keeps(f))
		atomic_dec(&pt_frames_unkept);
	pt_frames_keepers -= f->keeps_frames;
	if (f->keeps_frames && !pt_frames_keepers) {
		tracepoint_probe_unregister(pt_sched_switch_tp, pt_frames_switch, NULL);
		tracepoint_synchronize_unregister();
	}
}

/* Before arming (nothing walks): the counts start again. */
void pt_frames_reset(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		*per_cpu_ptr(&pt_frames_counts, cpu) = (struct pt_frames_count){ 0 };
}

/* The walks since START and their time, the frames named without one: summed over the CPUs. */
void pt_frames_totals(struct pt_stats *s)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		const struct pt_frames_count *c = per_cpu_ptr(&pt_frames_counts, cpu);

		s->frame_walks += READ_ONCE(c->walks);
		s->frame_walk_ns += READ_ONCE(c->ns);
		s->frames_kept += READ_ONCE(c->kept);
		s->frames_kept_softirq += READ_ONCE(c->kept_softirq);
	}
}

/*
 * Whether @addr lies where modules' code does: a copy's (traced or not),
 * or any other module's, BPF's or a trampoline's.
 */
static bool pt_frames_module_text(unsigned long addr)
{
	return addr >= MODULES_VADDR && addr < MODULES_END;
}

/*
 * The ENTER's return address (pathtrace_abi.h PT_ENTER_FRAME) for a probe
 * at a function's entry whose caller is not traced: the innermost traced
 * frame's, 0 when there is none (written as an untraced caller's), or
 * PT_ENTER_FRAME_UNKNOWN when the unwinder failed or the stack is deeper
 * than PT_FRAMES_MAX. @ret is the return address at regs->sp, which the
 * caller found untraced, or 0 when it could not be read. *@no_module: the
 * answer is 0, and no return address it passed (@ret's included) lies in
 * module space, where a copy is.
 *
 * At a function's entry the caller's frame needs no unwinding: it is the
 * return address, the stack above it and the registers as they are. The
 * walk starts there, one ORC lookup (the probed function's, in a copy a
 * module's table) fewer. Its ip is the call instruction's last byte, where
 * a step from the entry looks its ORC entry up (ret - 1: the unwinder reads
 * a starting frame's ip as it stands, and a call's own for a return address).
 */
static u32 pt_frames_unwind(struct pt_regs *regs, unsigned long ret, bool *no_module)
{
	struct unwind_state st;
	struct pt_regs caller;
	enum stack_type start;
	unsigned int n = 1;	/* the first frame looked at: the caller's caller */
	bool module = !ret || pt_frames_module_text(ret);	/* unread: could be a copy's */

	*no_module = false;
	if (ret) {
		caller = *regs;
		caller.ip = ret - 1;
		caller.sp = regs->sp + sizeof(long);
		regs = &caller;
	}
	/* steps past the frame of @regs */
	unwind_start(&st, current, regs, NULL);
	start = st.stack_info.type;
	if (start == STACK_TYPE_IRQ)
		this_cpu_write(pt_frames_irq_stack_end, (unsigned long)st.stack_info.end);
	/* from the probe's own registers: past the caller's too (the ENTER saw its return address) */
	if (!ret && !unwind_done(&st))
		unwind_next_frame(&st);
	for (; !unwind_done(&st); unwind_next_frame(&st), n++) {
		unsigned long addr = unwind_get_return_address(&st);
		struct pt_regs *entry;
		bool partial;

		if (n > PT_FRAMES_MAX)
			return PT_ENTER_FRAME_UNKNOWN;
		if (st.stack_info.type != start)
			goto none;
		entry = unwind_get_entry_regs(&st, &partial);
		if (entry && (user_mode(entry) || start != STACK_TYPE_TASK))
			goto none;
		module |= pt_frames_module_text(addr);
		addr = pt_ranges_caller(addr);	/* a copy's: the original's */
		if (!addr)
			return PT_ENTER_FRAME_UNKNOWN;
		if (pt_caller_traced(addr))
			return PT_ENTER_FRAME(addr);
	}
	if (unwind_error(&st))
		return PT_ENTER_FRAME_UNKNOWN;
none:
	*no_module = !module;
	return 0;
}
NOKPROBE_SYMBOL(pt_frames_unwind);

/*
 * Whether what the copies keep can be trusted for an ENTER at stack
 * pointer @sp: no traced code that keeps nothing, and a task's own context
 * on its task stack (an interrupt's or exception's handler on another
 * stack, or one that counts as its own owner, walks: what it interrupted
 * is not its frame), of the task the count is of (pt_frames_owner).
 */
static bool pt_frames_task(unsigned long sp)
{
	unsigned long base = (unsigned long)task_stack_page(current);

	return !atomic_read(&pt_frames_unkept) && this_cpu_read(pt_frames_owner) == current &&
	       !(preempt_count() & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET)) &&
	       sp >= base && sp < base + THREAD_SIZE;
}
NOKPROBE_SYMBOL(pt_frames_task);

/*
 * The frame pt_frames_unwind would find, from the call pt_inline_frame
 * keeps: the ENTER (at @enter_sp) below the call on the ENTER's own stack,
 * which ends at @end (0: none known), current's task stack for a task (a
 * call stored by another task, or left by one that has since switched out,
 * is not there: the switch zeroed it), or failing that none (0) where the
 * copies' count knows this activation is the only one in flight
 * (pt_inline_depth). PT_ENTER_NEEDS_WALK: look further. Inline in its
 * callers, which pt_frames_task or pt_frames_kept_softirq let through.
 */
static __always_inline u64 pt_frames_kept(unsigned long enter_sp, unsigned long end)
{
	unsigned long sp = this_cpu_read(pt_inline_frame);
	unsigned long caller;

	if (sp > enter_sp && sp <= end) {
		caller = pt_ranges_caller(*(unsigned long *)(sp - sizeof(long)));
		if (pt_caller_traced(caller))
			return PT_ENTER_FRAME(caller);
	}
	if (this_cpu_read(pt_inline_depth_known) && this_cpu_read(pt_inline_depth) == 1)
		return 0;
	return PT_ENTER_NEEDS_WALK;
}

/* The end (top) of current's task stack. */
static __always_inline unsigned long pt_task_stack_end(void)
{
	return (unsigned long)task_stack_page(current) + THREAD_SIZE;
}

/*
 * The frame pt_frames_unwind would find for an ENTER that serves a softirq
 * (neither a hard interrupt nor an NMI under it), at @enter_sp, from the
 * call pt_inline_frame keeps, or PT_ENTER_NEEDS_WALK. The kept call is
 * trusted where it lies above the ENTER on the ENTER's own stack, the
 * interrupt stack (once a walk has learnt where it ends) or the task's
 * (ksoftirqd): a call kept by the task the softirq interrupted lies on
 * another stack, and one of an interrupt or NMI that came and went was put
 * back as it ended, so a call there is this softirq's, in flight, with no
 * traced activation begun below it since (each would have cleared it), and
 * what the copies keep holds as in a task (pt_frames_kept). Else none where
 * the copies' count says so, as in a task. With no traced function on
 * probes: their activations keep nothing.
 */
static u64 pt_frames_kept_softirq(unsigned long enter_sp)
{
	unsigned long end = pt_task_stack_end();
	unsigned long irq_end = this_cpu_read(pt_frames_irq_stack_end);

	if ((preempt_count() & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET)) != SOFTIRQ_OFFSET ||
	    atomic_read(&pt_frames_unkept) || this_cpu_read(pt_frames_owner) != current)
		return PT_ENTER_NEEDS_WALK;
	/* the end of the ENTER's stack: the task's, the interrupt stack's, or none known */
	if (enter_sp < end - THREAD_SIZE || enter_sp >= end)
		end = enter_sp >= irq_end - IRQ_STACK_SIZE && enter_sp < irq_end ? irq_end : 0;
	return pt_frames_kept(enter_sp, end);
}

/* check_frames: the walk's answer beside the one named without it; a difference is a bug. */
static void pt_frames_check(struct pt_regs *regs, unsigned long ret, u32 kept)
{
	bool no_module;
	u32 walked = pt_frames_unwind(regs, ret, &no_module);

	if (walked != kept)
		pr_warn_ratelimited("ENTER at %pS: kept frame %#x, the walk finds %#x\n",
				    (void *)regs->ip, kept, walked);
}
NOKPROBE_SYMBOL(pt_frames_check);

/*
 * The ENTER's frame (pt_frames_unwind) for an ENTER at @regs whose caller
 * (@ret) is not traced: the kept call's (in a task or a softirq), none
 * where the copies' count says so (both counted as kept), or walked,
 * counted and timed (pathtracectl status). Interrupts off.
 */
u32 pt_frames_find(struct pt_regs *regs, unsigned long ret)
{
	bool task = pt_frames_task(regs->sp), no_module;
	u64 t0, kept;
	u32 frame;

	kept = task ? pt_frames_kept(regs->sp, pt_task_stack_end()) :
		      pt_frames_kept_softirq(regs->sp);
	if (kept != PT_ENTER_NEEDS_WALK) {
		this_cpu_inc(pt_frames_counts.kept);
		if (!task)
			this_cpu_inc(pt_frames_counts.kept_softirq);
		if (unlikely(READ_ONCE(check_frames)))
			pt_frames_check(regs, ret, kept);
		return kept;
	}
	/* this CPU's clock: the HPET a mono read takes under emulation costs 1 us */
	t0 = local_clock();
	frame = pt_frames_unwind(regs, ret, &no_module);
	/*
	 * No traced frame below, and no copy's: this activation is the only
	 * one in flight, and the count starts again from it. (The count of
	 * 1 alone says as much: what it did not count, a copy begun before
	 * the switch, would take it below 0 when it ends.)
	 */
	if (task && !frame && (no_module || this_cpu_read(pt_inline_depth) == 1)) {
		/* what it puts back as it ends: what it began with, still the word */
		this_cpu_write(pt_inline_frames_saved[0], this_cpu_read(pt_inline_frame));
		this_cpu_write(pt_inline_depth, 1);
		this_cpu_write(pt_inline_depth_known, true);
	}
	/* single instructions: an interrupt's or NMI's walk cannot split them */
	this_cpu_add(pt_frames_counts.ns, local_clock() - t0);
	this_cpu_inc(pt_frames_counts.walks);
	return frame;
}
NOKPROBE_SYMBOL(pt_frames_find);

/*
 * The frame pt_frames_find names without a walk for an ENTER at stack
 * pointer @sp (counted as kept), or PT_ENTER_NEEDS_WALK: it would walk (or
 * check_frames would, beside it). Interrupts off.
 */
u64 pt_frames_named(unsigned long sp)
{
	u64 frame;

	if (unlikely(READ_ONCE(check_frames)) || !pt_frames_task(sp))
		return PT_ENTER_NEEDS_WALK;
	frame = pt_frames_kept(sp, pt_task_stack_end());
	if (frame != PT_ENTER_NEEDS_WALK)
		this_cpu_inc(pt_frames_counts.kept);
	return frame;
}
NOKPROBE_SYMBOL(pt_frames_named);

static void pt_frames_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		pt_sched_switch_tp = tp;
}

/*
 * The context-switch tracepoint, found by name as task_events.c finds its
 * own (its probe is attached while plans keep frames). Returns 0 or
 * -ENOENT.
 */
int pt_frames_init(void)
{
	for_each_kernel_tracepoint(pt_frames_find_tp, NULL);
	if (!pt_sched_switch_tp) {
		pr_err("no sched_switch tracepoint\n");
		return -ENOENT;
	}
	return 0;
}

/* At unload, every plan gone: a probe left attached (a plan kept counted) goes too. */
void pt_frames_exit(void)
{
	if (!pt_frames_keepers)
		return;
	pt_frames_keepers = 0;
	tracepoint_probe_unregister(pt_sched_switch_tp, pt_frames_switch, NULL);
	tracepoint_synchronize_unregister();
}
