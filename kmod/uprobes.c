// SPDX-License-Identifier: GPL-2.0
/*
 * uprobes.c - a user plan's probes (PT_PLAN_USER, docs/user.md, "Plans on
 * uprobes"): one uprobe_consumer per probed address, on the inode of the
 * plan's ELF file.
 *
 * PT_IOC_ADD_PLAN gives an open descriptor of the file and the delta from
 * the plan's virtual addresses to file offsets. The file is taken (fget,
 * under pt_ctl_mutex) when the plan is added and held until it is freed:
 * uprobes need the inode referenced while their probes are registered.
 * uprobe_register places a probe in every process that maps the file, now
 * or later, until uprobe_unregister takes it out of all of them.
 *
 * The handler runs on the task's way back to user mode from the breakpoint
 * (exit_to_user_mode_loop -> uprobe_notify_resume -> handle_swbp ->
 * handler_chain): task context, preemptible, interrupts on, never in an
 * interrupt or NMI. It keeps preemption off over the whole hit, so that a
 * STOP's synchronize_rcu() waits for it as for a kprobe handler, and runs
 * the site's actions through pt_probe_hit, the kprobe handler's code, with
 * the current task as the owner. uprobes skip no hit (no nmissed), so
 * missed.c finds nothing to place for these probes.
 *
 * Kernels differ here, and only here: 6.1's uprobe_register returns an int
 * and uprobe_unregister (inode, offset, consumer) returns once no handler
 * of that consumer runs (handler_chain holds the uprobe's register_rwsem
 * for reading); 6.12's uprobe_register takes a ref_ctr offset and returns
 * the struct uprobe *, and a batch is unregistered with
 * uprobe_unregister_nosync per probe and one uprobe_unregister_sync.
 * 6.1's consumer filter is told why it is asked (enum uprobe_filter_ctx),
 * 6.12's is not. kmod/Kbuild tells them apart by feature tests of the
 * tree's uprobes.h (PT_HAVE_UPROBE_REGISTER_HANDLE,
 * PT_HAVE_UPROBE_FILTER_CTX): a test that misses selects the other
 * signature, which then fails to compile, never mismatches.
 *
 * With --pid (pt_func.user_mm) the consumers' filter accepts one address
 * space: docs/user.md, "One process: --pid".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/pid.h>
#include <linux/preempt.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/uprobes.h>

#include "pathtrace.h"

#ifdef PT_HAVE_UPROBE_REGISTER_HANDLE
static int pt_uprobe_place(struct pt_probe *pp, struct inode *inode, loff_t off)
{
	struct uprobe *u = uprobe_register(inode, off, 0, &pp->uc);

	if (IS_ERR(u))
		return PTR_ERR(u);
	pp->uprobe = u;
	return 0;
}

static void pt_uprobe_remove(struct pt_probe *pp, struct inode *inode, loff_t off)
{
	uprobe_unregister_nosync(pp->uprobe, &pp->uc);
	pp->uprobe = NULL;
}

/* After pt_uprobe_remove of a batch: no handler of theirs runs. */
static void pt_uprobe_sync(void)
{
	uprobe_unregister_sync();
}
#else
static int pt_uprobe_place(struct pt_probe *pp, struct inode *inode, loff_t off)
{
	return uprobe_register(inode, off, &pp->uc);
}

static void pt_uprobe_remove(struct pt_probe *pp, struct inode *inode, loff_t off)
{
	uprobe_unregister(inode, off, &pp->uc);
}

static void pt_uprobe_sync(void)
{
}
#endif

/*
 * Whether the plan's uprobes belong in mm: every process's, or with --pid
 * the one address space (docs/user.md, "One process: --pid").
 */
static bool pt_uprobe_wants(const struct pt_probe *pp, const struct mm_struct *mm)
{
	return !pp->func->user_mm || pp->func->user_mm == mm;
}

#ifdef PT_HAVE_UPROBE_FILTER_CTX
static bool pt_uprobe_filter(struct uprobe_consumer *uc, enum uprobe_filter_ctx ctx,
			     struct mm_struct *mm)
#else
static bool pt_uprobe_filter(struct uprobe_consumer *uc, struct mm_struct *mm)
#endif
{
	return pt_uprobe_wants(container_of(uc, struct pt_probe, uc), mm);
}

/*
 * A process the plan is not for can still hit its breakpoint: a child
 * forked from the traced process inherits its breakpoints with its pages.
 * Such a hit records nothing and asks uprobes to take the breakpoint out
 * of that process (UPROBE_HANDLER_REMOVE, which the filter confirms), as
 * perf's uprobe events do.
 */
static int pt_uprobe_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct pt_probe *pp = container_of(uc, struct pt_probe, uc);

	if (!pt_uprobe_wants(pp, current->mm))
		return UPROBE_HANDLER_REMOVE;
	preempt_disable();
	pt_probe_hit(pp, NULL, regs);
	preempt_enable();
	return 0;
}

static loff_t pt_uprobe_offset(const struct pt_func *f, const struct pt_probe *pp)
{
	return pp->addr - f->user_off_delta;
}

/* [addr, addr + len) at offset addr - delta must lie in the file. */
static bool pt_uprobes_in_file(u64 addr, u32 len, u64 delta, loff_t size)
{
	return addr >= delta && addr - delta < size && len <= size - (addr - delta);
}

/*
 * The address space of process pid (in the caller's pid namespace),
 * grabbed (mmgrab: the struct stays, so no other mm takes its address),
 * or NULL: no such process, or one without user memory.
 */
static struct mm_struct *pt_uprobes_process_mm(pid_t pid)
{
	struct task_struct *t;
	struct mm_struct *mm;

	rcu_read_lock();
	t = get_pid_task(find_vpid(pid), PIDTYPE_PID);
	rcu_read_unlock();
	if (!t)
		return NULL;
	mm = get_task_mm(t);
	put_task_struct(t);
	if (!mm)
		return NULL;
	mmgrab(mm);
	mmput(mm);
	return mm;
}

/*
 * Takes the file of a user plan (fd), the delta from its virtual
 * addresses to file offsets and, pid not 0, the one process whose address
 * space its uprobes go into; pt_func_free puts them. Returns 0, -EBADF
 * (no such descriptor), -EINVAL (not a regular file), -ESRCH (no such
 * process, or one with no user memory) or -ERANGE (the function's code
 * does not lie in the file at those offsets).
 */
int pt_uprobes_attach(struct pt_func *f, int fd, u64 off_delta, pid_t pid)
{
	const struct pt_plan *pl = f->plan;
	struct inode *inode;
	loff_t size;

	if (pid) {
		f->user_mm = pt_uprobes_process_mm(pid);
		if (!f->user_mm)
			return -ESRCH;
	}
	f->user_file = fget(fd);
	if (!f->user_file)
		return -EBADF;
	f->user_off_delta = off_delta;
	inode = file_inode(f->user_file);
	if (!S_ISREG(inode->i_mode))
		return -EINVAL;
	size = i_size_read(inode);
	if (!pt_uprobes_in_file(pl->addr, pl->len, off_delta, size) ||
	    (pl->cold_len && !pt_uprobes_in_file(pl->cold_addr, pl->cold_len, off_delta, size)))
		return -ERANGE;
	return 0;
}

void pt_uprobes_detach(struct pt_func *f)
{
	if (f->user_file)
		fput(f->user_file);
	f->user_file = NULL;
	if (f->user_mm)
		mmdrop(f->user_mm);
	f->user_mm = NULL;
}

/* Whether f and g are both user plans of one file (their addresses may meet). */
bool pt_uprobes_same_file(const struct pt_func *f, const struct pt_func *g)
{
	return f->user_file && g->user_file &&
	       file_inode(f->user_file) == file_inode(g->user_file);
}

unsigned int pt_user_plans;

/*
 * Registers a uprobe per probe of the user plan f, or leaves none. Returns
 * 0 or the errno of uprobe_register (the site refused).
 */
int pt_uprobes_register(struct pt_func *f)
{
	struct inode *inode = file_inode(f->user_file);
	int err = 0;
	u32 n;

	for (n = 0; n < f->nr_probes; n++) {
		struct pt_probe *pp = &f->probes[n];

		pp->uc.handler = pt_uprobe_handler;
		pp->uc.filter = pt_uprobe_filter;
		err = pt_uprobe_place(pp, inode, pt_uprobe_offset(f, pp));
		if (err) {
			pr_info("%s: uprobes refused %#lx (file offset %#llx, site %u of %u): %d\n",
				f->plan->name, pp->addr, pt_uprobe_offset(f, pp), n,
				f->nr_probes, err);
			break;
		}
	}
	if (!err) {
		WRITE_ONCE(pt_user_plans, pt_user_plans + 1);
		return 0;
	}
	while (n--)
		pt_uprobe_remove(&f->probes[n], inode, pt_uprobe_offset(f, &f->probes[n]));
	pt_uprobe_sync();
	return err;
}

/*
 * Unregisters the uprobes of the user plans among funcs[0..n); no handler
 * of theirs runs when it returns.
 */
void pt_uprobes_unregister(struct pt_func **funcs, unsigned int n)
{
	bool any = false;
	unsigned int i;
	u32 j;

	for (i = 0; i < n; i++) {
		struct pt_func *f = funcs[i];

		if (!(f->plan->flags & PT_PLAN_USER))
			continue;
		for (j = 0; j < f->nr_probes; j++)
			pt_uprobe_remove(&f->probes[j], file_inode(f->user_file),
					 pt_uprobe_offset(f, &f->probes[j]));
		WRITE_ONCE(pt_user_plans, pt_user_plans - 1);
		any = true;
	}
	if (any)
		pt_uprobe_sync();
}
