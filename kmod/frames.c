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
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <asm/stacktrace.h>
#include <asm/unwind.h>

#include "pathtrace.h"

/* Frames deeper than this are not looked for: the ENTER says so. */
#define PT_FRAMES_MAX 64

static atomic_t pt_framed_plans = ATOMIC_INIT(0);

/* Walks since START and their time, per CPU (pathtracectl status). */
struct pt_frames_count {
	u64 walks;
	u64 ns;
};
static DEFINE_PER_CPU(struct pt_frames_count, pt_frames_counts);

/* Before f's probes are registered: ENTERs name frames from now on. */
void pt_frames_installing(const struct pt_func *f)
{
	if (f->plan->flags & PT_PLAN_FRAMED)
		atomic_inc(&pt_framed_plans);
}

/* After f's probes are gone (or failed to register). */
void pt_frames_removed(const struct pt_func *f)
{
	if (f->plan->flags & PT_PLAN_FRAMED)
		atomic_dec(&pt_framed_plans);
}

bool pt_frames_wanted(void)
{
	return atomic_read(&pt_framed_plans) > 0;
}
NOKPROBE_SYMBOL(pt_frames_wanted);

/* Before arming (nothing walks): the counts start again. */
void pt_frames_reset(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		*per_cpu_ptr(&pt_frames_counts, cpu) = (struct pt_frames_count){ 0 };
}

/* The walks since START and their time, summed over the CPUs. */
void pt_frames_totals(u64 *walks, u64 *ns)
{
	unsigned int cpu;

	*walks = 0;
	*ns = 0;
	for_each_possible_cpu(cpu) {
		const struct pt_frames_count *c = per_cpu_ptr(&pt_frames_counts, cpu);

		*walks += READ_ONCE(c->walks);
		*ns += READ_ONCE(c->ns);
	}
}

/*
 * The ENTER's return address (pathtrace_abi.h PT_ENTER_FRAME) for a probe
 * at a function's entry whose caller is not traced: the innermost traced
 * frame's, 0 when there is none (written as an untraced caller's), or
 * PT_ENTER_FRAME_UNKNOWN when the unwinder failed or the stack is deeper
 * than PT_FRAMES_MAX. @ret is the return address at regs->sp, which the
 * caller found untraced, or 0 when it could not be read.
 *
 * At a function's entry the caller's frame needs no unwinding: it is the
 * return address, the stack above it and the registers as they are. The
 * walk starts there, one ORC lookup (the probed function's, in a copy a
 * module's table) fewer. Its ip is the call instruction's last byte, where
 * a step from the entry looks its ORC entry up (ret - 1: the unwinder reads
 * a starting frame's ip as it stands, and a call's own for a return address).
 */
static u32 pt_frames_unwind(struct pt_regs *regs, unsigned long ret)
{
	struct unwind_state st;
	struct pt_regs caller;
	enum stack_type start;
	unsigned int n = 1;	/* the first frame looked at: the caller's caller */
	bool traced;

	if (ret) {
		caller = *regs;
		caller.ip = ret - 1;
		caller.sp = regs->sp + sizeof(long);
		regs = &caller;
	}
	/* steps past the frame of @regs */
	unwind_start(&st, current, regs, NULL);
	start = st.stack_info.type;
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
			return 0;
		entry = unwind_get_entry_regs(&st, &partial);
		if (entry && (user_mode(entry) || start != STACK_TYPE_TASK))
			return 0;
		addr = pt_ranges_caller(addr, &traced);	/* a copy's: the original's */
		if (!addr)
			return PT_ENTER_FRAME_UNKNOWN;
		if (addr >> 32 == 0xffffffffu && traced)
			return PT_ENTER_FRAME(addr);
	}
	return unwind_error(&st) ? PT_ENTER_FRAME_UNKNOWN : 0;
}
NOKPROBE_SYMBOL(pt_frames_unwind);

/* pt_frames_unwind, counted and timed (pathtracectl status). */
u32 pt_frames_walk(struct pt_regs *regs, unsigned long ret)
{
	u64 t0 = ktime_get_mono_fast_ns();
	u32 frame = pt_frames_unwind(regs, ret);

	/* single instructions: an interrupt's or NMI's walk cannot split them */
	this_cpu_add(pt_frames_counts.ns, ktime_get_mono_fast_ns() - t0);
	this_cpu_inc(pt_frames_counts.walks);
	return frame;
}
NOKPROBE_SYMBOL(pt_frames_walk);
