// SPDX-License-Identifier: GPL-2.0
/*
 * forks.c - the fork point in the parent's stream (docs/user.md, "Fork,
 * exec and signals"): a FORK record (pathtrace_abi.h struct pt_rec_fork)
 * naming the child, so that pathregen resumes the parent's open user
 * activations in the child's stream.
 *
 * The probe is on the sched_process_fork tracepoint, which kernel_clone
 * fires in the parent after copy_process and before wake_up_new_task: the
 * child has not run, so the record's stamp is below every stamp of the
 * child's segments. The tracepoint is found by name
 * (for_each_kernel_tracepoint) and the probe attached with
 * tracepoint_probe_register, both exported; the register_trace_* helpers
 * of the tracepoint's header are not (its __tracepoint symbol is not).
 *
 * A record is written only while armed and while a user plan is loaded,
 * and only for a child that continues the parent's user frames in an
 * address space of its own: its own mm (not CLONE_VM: a thread starts on a
 * stack of its own at its start routine, a vfork child borrows the
 * parent's address space) and the parent's user stack pointer (a clone
 * given a stack starts elsewhere). It goes through the CPU's stream coder
 * with interrupts off, as a handler's records do (stream.c): in order with
 * the parent's other records, a refused write a counted drop.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irqflags.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>

#include "pathtrace.h"

static struct tracepoint *pt_fork_tp;

static void pt_fork_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		pt_fork_tp = tp;
}

/* Runs in the parent, in kernel_clone, preemption off (the tracepoint's). */
static void pt_fork_probe(void *data, struct task_struct *parent, struct task_struct *child)
{
	unsigned long flags;
	struct pt_coder *c;

	if (!READ_ONCE(pt_armed) || !READ_ONCE(pt_user_plans))
		return;
	if (!child->mm || child->mm == parent->mm ||
	    task_pt_regs(child)->sp != task_pt_regs(parent)->sp)
		return;
	local_irq_save(flags);
	c = pt_stream_enter_handler(NULL, smp_processor_id());
	if (c)
		pt_coder_fork(c, PT_OWNER(PT_OWNER_TASK, task_pid_nr(child)),
			      ktime_get_mono_fast_ns());
	local_irq_restore(flags);
}

/* Returns 0, -ENOENT (no such tracepoint) or tracepoint_probe_register's error. */
int pt_forks_init(void)
{
	for_each_kernel_tracepoint(pt_fork_find, NULL);
	if (!pt_fork_tp) {
		pr_err("no sched_process_fork tracepoint\n");
		return -ENOENT;
	}
	return tracepoint_probe_register(pt_fork_tp, pt_fork_probe, NULL);
}

/* After it no probe runs. */
void pt_forks_exit(void)
{
	tracepoint_probe_unregister(pt_fork_tp, pt_fork_probe, NULL);
	tracepoint_synchronize_unregister();
}
