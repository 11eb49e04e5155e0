// SPDX-License-Identifier: GPL-2.0
/*
 * task_events.c - a task's process events in its stream (docs/user.md,
 * "Fork, exec and signals"), from the scheduler's tracepoints:
 *  - FORK (pathtrace_abi.h struct pt_rec_fork) in the parent's stream,
 *    naming the child, so that pathregen resumes the parent's open user
 *    activations in the child's stream;
 *  - EXEC (struct pt_rec_exec) in the task's own stream at a successful
 *    execve, so that pathregen ends the old image's user activations there
 *    and starts the new image's at top level.
 *
 * sched_process_fork: kernel_clone fires it in the parent after
 * copy_process and before wake_up_new_task: the child has not run, so the
 * record's stamp is below every stamp of the child's segments. A record is
 * written only for a child that continues the parent's user frames in an
 * address space of its own: its own mm (not CLONE_VM: a thread starts on a
 * stack of its own at its start routine, a vfork child borrows the
 * parent's address space) and the parent's user stack pointer (a clone
 * given a stack starts elsewhere).
 *
 * sched_process_exec: exec_binprm fires it in the task, inside the execve
 * system call, once the new image is loaded (past the point of no return:
 * a failed execve never gets here, and writes nothing). The record sits in
 * the task's bits where it happened: after the bits of the kernel
 * activations the execve ran so far, inside those still open.
 *
 * The tracepoints are found by name (for_each_kernel_tracepoint) and the
 * probes attached with tracepoint_probe_register, both exported; the
 * register_trace_* helpers of the tracepoints' header are not (their
 * __tracepoint symbols are not). A record is written only while armed and
 * while a user plan is loaded, through the CPU's stream coder with
 * interrupts off, as a handler's records are (stream.c): in order with the
 * task's other records, a refused write a counted drop.
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

struct linux_binprm;

static struct tracepoint *pt_fork_tp, *pt_exec_tp;

static void pt_task_events_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		pt_fork_tp = tp;
	else if (!strcmp(tp->name, "sched_process_exec"))
		pt_exec_tp = tp;
}

/*
 * Whether a record is wanted: armed, and a user plan loaded (for a kernel
 * function alone no user activation is open to end or inherit).
 */
static bool pt_task_events_wanted(void)
{
	return READ_ONCE(pt_armed) && READ_ONCE(pt_user_plans);
}

/* Interrupts off (*flags): this CPU's coder for current's stream, or NULL. */
static struct pt_coder *pt_task_event_begin(unsigned long *flags)
{
	local_irq_save(*flags);
	return pt_stage_enter(NULL);
}

/* Runs in the parent, in kernel_clone, preemption off (the tracepoint's). */
static void pt_fork_probe(void *data, struct task_struct *parent, struct task_struct *child)
{
	unsigned long flags;
	struct pt_coder *c;

	if (!child->mm || child->mm == parent->mm ||
	    task_pt_regs(child)->sp != task_pt_regs(parent)->sp)
		return;
	if (!pt_task_events_wanted())
		return;
	c = pt_task_event_begin(&flags);
	if (c)
		pt_coder_fork(c, PT_OWNER(PT_OWNER_TASK, task_pid_nr(child)),
			      ktime_get_mono_fast_ns());
	local_irq_restore(flags);
}

/* Runs in the task (current), in exec_binprm, preemption off (the tracepoint's). */
static void pt_exec_probe(void *data, struct task_struct *p, pid_t old_pid,
			  struct linux_binprm *bprm)
{
	unsigned long flags;
	struct pt_coder *c;

	if (!pt_task_events_wanted())
		return;
	c = pt_task_event_begin(&flags);
	if (c)
		pt_coder_exec(c, PT_OWNER(PT_OWNER_TASK, old_pid));
	local_irq_restore(flags);
}

/* Returns 0, -ENOENT (no such tracepoint) or tracepoint_probe_register's error. */
int pt_task_events_init(void)
{
	int err;

	for_each_kernel_tracepoint(pt_task_events_find, NULL);
	if (!pt_fork_tp || !pt_exec_tp) {
		pr_err("no sched_process_%s tracepoint\n", pt_fork_tp ? "exec" : "fork");
		return -ENOENT;
	}
	err = tracepoint_probe_register(pt_fork_tp, pt_fork_probe, NULL);
	if (err)
		return err;
	err = tracepoint_probe_register(pt_exec_tp, pt_exec_probe, NULL);
	if (err)
		goto out_fork;
	return 0;

out_fork:
	tracepoint_probe_unregister(pt_fork_tp, pt_fork_probe, NULL);
	tracepoint_synchronize_unregister();
	return err;
}

/* After it no probe runs. */
void pt_task_events_exit(void)
{
	tracepoint_probe_unregister(pt_exec_tp, pt_exec_probe, NULL);
	tracepoint_probe_unregister(pt_fork_tp, pt_fork_probe, NULL);
	tracepoint_synchronize_unregister();
}
