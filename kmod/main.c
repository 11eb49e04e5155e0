// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - pathtrace.ko's control device and its ioctls.
 *
 * /dev/pathtrace (0600; opening it needs CAP_SYS_ADMIN or CAP_PERFMON) takes
 * the ioctls of trace-format/pathtrace_abi.h. An open descriptor holds a
 * reference on the module (fops.owner), so the module cannot be unloaded
 * under a tracer that is still talking to it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "pathtrace.h"

/* Per-CPU ring buffer size unless PT_IOC_CONFIG says otherwise. */
#define PT_DEFAULT_BUFFER_KB	1024
#define PT_MAX_BUFFER_KB	(256u * 1024)

/* How often skipped probe hits are placed while tracing (missed.c). */
#define PT_MISSED_PERIOD_MS	10
#define PT_MISSED_COPIES_PERIOD_MS	100
/* How often the recorder's wait is checked against the buffers (pt_read_timer). */
#define PT_READ_PERIOD_MS	10

/*
 * Copy a size-prefixed struct from userspace (as copy_struct_from_user does):
 * a smaller user size reads the missing tail as zero; a larger one must have
 * a zero tail. Returns 0, -EFAULT or -E2BIG; -EINVAL if size is too small to
 * hold even the size field.
 */
static int pt_copy_arg(void *dst, size_t ksize, const void __user *src)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)src))
		return -EFAULT;
	if (usize < sizeof(u32))
		return -EINVAL;
	return copy_struct_from_user(dst, ksize, src, usize);
}

/*
 * Copy a size-prefixed struct out to the tool's @dst: no more of @src's
 * @ksize bytes than the size @dst's own size field gives (an older tool's
 * struct is shorter; a newer one's tail stays as the tool zeroed it).
 * Returns 0 or -EFAULT.
 */
static int pt_copy_out(void __user *dst, const void *src, size_t ksize)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)dst))
		return -EFAULT;
	if (copy_to_user(dst, src, min_t(size_t, usize, ksize)))
		return -EFAULT;
	return 0;
}

static long pt_ioctl_version(void __user *uarg)
{
	struct pt_version v;
	int err;

	err = pt_copy_arg(&v, sizeof(v), uarg);
	if (err)
		return err;
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.major = PT_ABI_MAJOR;
	v.minor = PT_ABI_MINOR;
	v.nr_cpus = num_possible_cpus();
	v.page_size = PAGE_SIZE;
	return pt_copy_out(uarg, &v, sizeof(v));
}

/*
 * Control state, all under pt_ctl_mutex: the installed functions, the
 * configured buffer size and whether tracing is armed. Handlers take no
 * lock: they see pt_armed and the probes they were registered with.
 */
static DEFINE_MUTEX(pt_ctl_mutex);
static LIST_HEAD(pt_funcs);
static unsigned int pt_nr_funcs;
static unsigned long pt_buffer_bytes = PT_DEFAULT_BUFFER_KB * 1024ul;

static struct pt_func *pt_find(u32 func_id)
{
	struct pt_func *f;

	list_for_each_entry(f, &pt_funcs, node)
		if (f->func_id == func_id)
			return f;
	return NULL;
}

static bool pt_overlaps(const struct pt_plan *a, const struct pt_plan *b)
{
	return a->addr < b->addr + b->len && b->addr < a->addr + a->len;
}

static long pt_ioctl_config(void __user *uarg)
{
	struct pt_config c;
	int err;

	err = pt_copy_arg(&c, sizeof(c), uarg);
	if (err)
		return err;
	if (c.flags || c.reserved[0] || c.reserved[1])
		return -EINVAL;
	if (c.buffer_kb < 8 || c.buffer_kb > PT_MAX_BUFFER_KB ||
	    c.osp_entries > PT_OSP_MAX_ENTRIES)
		return -EINVAL;
	if (pt_armed)
		return -EBUSY;
	err = pt_stream_alloc(c.buffer_kb * 1024ul);
	if (!err)
		pt_buffer_bytes = c.buffer_kb * 1024ul;
	if (!err)
		err = pt_osp_config(c.osp_entries);
	return err;
}

static long pt_ioctl_add_plan(void __user *uarg)
{
	struct pt_plan_arg a;
	struct pt_func *f, *g;
	int err;

	err = pt_copy_arg(&a, sizeof(a), uarg);
	if (err)
		return err;
	if ((a.flags & ~(PT_ADD_INLINE | PT_ADD_INLINE_SITES | PT_ADD_INLINE_FRAMES)) ||
	    a.reserved0 || a.user_pid < 0 ||
	    (a.flags & PT_ADD_INLINE && a.flags & PT_ADD_INLINE_SITES) ||
	    (a.flags & PT_ADD_INLINE_FRAMES && !(a.flags & PT_ADD_INLINE_SITES)) ||
	    (!(a.flags & PT_ADD_INLINE) && a.inline_counters) ||
	    (!(a.flags & PT_ADD_INLINE_SITES) &&
	     (a.inline_copy || a.inline_copy_len || a.inline_map_len || a.inline_map)))
		return -EINVAL;
	f = pt_plan_load(u64_to_user_ptr(a.plan), a.plan_len, a.flags, a.inline_counters);
	if (IS_ERR(f))
		return PTR_ERR(f);
	/* a user function's file (uprobes.c); a kernel plan names none */
	err = 0;
	if (f->plan->flags & PT_PLAN_USER)
		err = pt_uprobes_attach(f, a.user_fd, a.user_off_delta, a.user_pid);
	else if (a.user_fd || a.user_off_delta || a.user_pid)
		err = -EINVAL;
	if (!err && a.flags & PT_ADD_INLINE_SITES)
		err = pt_inline_sites_attach(f, &a);
	if (err)
		goto fail;
	f->keeps_frames = a.flags & PT_ADD_INLINE_FRAMES;
	if (pt_find(f->func_id)) {
		err = -EEXIST;
		goto fail;
	}
	list_for_each_entry(g, &pt_funcs, node) {
		/* user addresses are a file's: they meet only that file's */
		if (!!(f->plan->flags & PT_PLAN_USER) != !!(g->plan->flags & PT_PLAN_USER) ||
		    ((f->plan->flags & PT_PLAN_USER) && !pt_uprobes_same_file(f, g)))
			continue;
		if (pt_overlaps(f->plan, g->plan)) {
			err = -EBUSY;
			goto fail;
		}
	}
	/*
	 * A framed plan's calls are told apart by the frames ENTERs name; a
	 * frame kept by the copies is trusted only while no traced code keeps
	 * none, so f counts before its code is traced.
	 */
	err = pt_frames_installing(f);
	if (err)
		goto fail;
	err = pt_stage_installing(f);
	if (err) {
		pt_frames_removed(f);
		goto fail;
	}
	/* its code counts as traced before any handler can see a call from it */
	err = pt_ranges_rebuild(&pt_funcs, f);
	if (err) {
		pt_stage_removed(f);
		pt_frames_removed(f);
		goto fail;
	}
	/* kprobes counts a probe's misses from its registration on. */
	f->missed_since = ktime_get_mono_fast_ns();
	err = pt_probes_register(f);
	if (err) {
		pt_ranges_forget(f);
		pt_ranges_rebuild(&pt_funcs, NULL);	/* a stale range is harmless */
		pt_frames_removed(f);
		if (f->copy_end) {
			synchronize_rcu();	/* no site's call still runs f's probes */
			pt_stage_drain_all();	/* an ENTER staged holds its probe */
		}
		pt_stage_removed(f);
		goto fail;
	}
	pt_implicit_installed(&pt_funcs, f);
	list_add_tail(&f->node, &pt_funcs);
	pt_nr_funcs++;
	return 0;
fail:
	pt_func_free(f);
	return err;
}

/* Unregisters and frees the functions in @victims (already off pt_funcs). */
static void pt_remove(struct pt_func **victims, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		pt_implicit_removed(victims[i]);
	pt_probes_unregister(victims, n);
	/* what their copies staged is written while their sites are found */
	pt_stage_drain_all();
	for (i = 0; i < n; i++)
		pt_ranges_forget(victims[i]);
	/*
	 * Off pt_funcs and silent: their code is untraced from now on. Without
	 * memory the old table stays (a range of removed code only makes
	 * ENTERs keep their return address, and they stay counted in
	 * frames.c: code traced that keeps no frame).
	 */
	if (!pt_ranges_rebuild(&pt_funcs, NULL))
		for (i = 0; i < n; i++)
			pt_frames_removed(victims[i]);
	/* an inline copy's site calls find their probes in ranges.c's hash */
	for (i = 0; i < n; i++)
		if (victims[i]->copy_end) {
			synchronize_rcu();
			break;
		}
	/*
	 * What was staged since names no site now and is dropped, as a hit
	 * after removal: none stays to be read against code loaded later.
	 */
	pt_stage_drain_all();
	for (i = 0; i < n; i++)
		pt_stage_removed(victims[i]);
	for (i = 0; i < n; i++) {
		/* Their last misses and counts go into the trace before they do. */
		if (pt_armed) {
			pt_missed_sweep_func(victims[i], ktime_get_mono_fast_ns());
			pt_counts_flush_counters(victims[i]);
			pt_counts_flush_paths(victims[i]);
		}
		pt_func_free(victims[i]);
	}
}

static void pt_remove_all(void)
{
	struct pt_func **v, *f, *tmp;
	unsigned int n = 0;

	if (!pt_nr_funcs)
		return;
	v = kvcalloc(pt_nr_funcs, sizeof(*v), GFP_KERNEL);
	list_for_each_entry_safe(f, tmp, &pt_funcs, node) {
		list_del(&f->node);
		if (v)
			v[n++] = f;
		else
			pt_remove(&f, 1);
	}
	pt_nr_funcs = 0;
	if (v)
		pt_remove(v, n);
	kvfree(v);
}

static long pt_ioctl_del_plan(void __user *uarg)
{
	struct pt_del_arg d;
	struct pt_func *f;
	int err;

	err = pt_copy_arg(&d, sizeof(d), uarg);
	if (err)
		return err;
	if ((d.flags & ~PT_DEL_ALL) || d.reserved0)
		return -EINVAL;
	if (d.flags & PT_DEL_ALL) {
		pt_remove_all();
		return 0;
	}
	f = pt_find(d.func_id);
	if (!f)
		return -ENOENT;
	list_del(&f->node);
	pt_nr_funcs--;
	pt_remove(&f, 1);
	return 0;
}

static void pt_missed_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(pt_missed_work, pt_missed_work_fn);

/*
 * The periodic sweep: every PT_MISSED_PERIOD_MS while a function is
 * carried by probes, whose misses only a sweep finds, else every
 * PT_MISSED_COPIES_PERIOD_MS (a copy's skipped hit flags its function, and
 * the sweep reads nothing else: a kworker woken a hundred times a second
 * for that showed in a recorded run's profile). It never waits for
 * pt_ctl_mutex (STOP cancels it while holding the mutex): when an ioctl
 * holds it, it tries next period.
 */
static void pt_missed_work_fn(struct work_struct *work)
{
	unsigned int ms = PT_MISSED_PERIOD_MS;

	if (mutex_trylock(&pt_ctl_mutex)) {
		if (pt_armed && !pt_missed_sweep(&pt_funcs))
			ms = PT_MISSED_COPIES_PERIOD_MS;
		mutex_unlock(&pt_ctl_mutex);
	}
	if (READ_ONCE(pt_armed))
		queue_delayed_work(system_unbound_wq, &pt_missed_work, msecs_to_jiffies(ms));
}

/* The recorder, asleep in poll() between drains (pt_poll). */
static DECLARE_WAIT_QUEUE_HEAD(pt_read_wait);

static void pt_read_timer_fn(struct timer_list *t);
static DEFINE_TIMER(pt_read_timer, pt_read_timer_fn);

/*
 * Every PT_READ_PERIOD_MS while armed: the recorder woken when a buffer
 * is half full. A timer (softirq), so that it wakes nothing else. The
 * buffer is not reallocated meanwhile: only while disarmed, after STOP
 * has deleted the timer.
 */
static void pt_read_timer_fn(struct timer_list *t)
{
	if (!READ_ONCE(pt_armed))
		return;
	if (wq_has_sleeper(&pt_read_wait) && pt_stream_half_full())
		wake_up_interruptible(&pt_read_wait);
	mod_timer(&pt_read_timer, jiffies + msecs_to_jiffies(PT_READ_PERIOD_MS));
}

/*
 * Arming is a flag, not registration: probes are registered (and may be
 * jump-optimized) from ADD_PLAN on, so START and STOP are instantaneous
 * and exact for every function at once. A disarmed probe costs a trap or
 * trampoline that returns at once.
 */
static long pt_ioctl_start(void)
{
	struct pt_func *f;
	int err;

	if (pt_armed)
		return -EBUSY;
	if (!pt_stream_ready()) {
		err = pt_stream_alloc(pt_buffer_bytes);
		if (err)
			return err;
	}
	pt_stream_reset();
	pt_missed_reset(&pt_funcs);
	pt_frames_reset();
	pt_stage_reset();
	/* inline counters count from their module's load on: from here only */
	list_for_each_entry(f, &pt_funcs, node)
		pt_counts_reset_inline(f);
	pt_osp_reset();
	/* Handlers that see the flag also see the reset state above. */
	smp_store_release(&pt_armed, true);
	/* Unbound: a CPU busy in a long kernel loop must not delay it. */
	queue_delayed_work(system_unbound_wq, &pt_missed_work,
			   msecs_to_jiffies(PT_MISSED_PERIOD_MS));
	mod_timer(&pt_read_timer, jiffies + msecs_to_jiffies(PT_READ_PERIOD_MS));
	return 0;
}

static void pt_flush(void)
{
	struct pt_func *f;

	pt_stage_drain_all();
	pt_stream_flush_all();
	list_for_each_entry(f, &pt_funcs, node) {
		pt_counts_flush_counters(f);
		pt_counts_flush_paths(f);
	}
}

static long pt_ioctl_stop(void)
{
	if (!pt_armed)
		return -EINVAL;
	WRITE_ONCE(pt_armed, false);
	/* Handlers run with preemption off: wait until none is in flight. */
	synchronize_rcu();
	cancel_delayed_work_sync(&pt_missed_work);
	timer_delete_sync(&pt_read_timer);
	pt_missed_sweep(&pt_funcs);
	pt_flush();
	return 0;
}

static long pt_missed_sweep_here(void *unused)
{
	pt_missed_sweep(&pt_funcs);
	return 0;
}

static long pt_ioctl_read_page(void __user *uarg)
{
	struct pt_read_arg r;
	int err;

	err = pt_copy_arg(&r, sizeof(r), uarg);
	if (err)
		return err;
	if (r.flags || r.reserved0 || r.reserved[0] || r.reserved[1] || r.out_len)
		return -EINVAL;
	/*
	 * LOSS(MISSED) records the stop's sweep could not write (that CPU's
	 * buffer was full) are written once the reader has emptied a buffer,
	 * into that buffer, by a sweep on its CPU.
	 */
	if (!pt_armed && pt_missed_pending() && r.cpu < nr_cpu_ids &&
	    cpu_online(r.cpu) && pt_stream_cpu_empty(r.cpu))
		work_on_cpu(r.cpu, pt_missed_sweep_here, NULL);
	err = pt_stream_read_page(r.cpu, u64_to_user_ptr(r.buf), r.buf_len,
				  &r.out_len);
	if (err)
		return err;
	if (put_user(r.out_len, (u32 __user *)(uarg +
				offsetof(struct pt_read_arg, out_len))))
		return -EFAULT;
	return 0;
}

static long pt_ioctl_func_stats(void __user *uarg)
{
	struct pt_func_stats s;
	struct pt_func *f;
	unsigned int cpu;
	u32 id;
	int err;

	err = pt_copy_arg(&s, sizeof(s), uarg);
	if (err)
		return err;
	id = s.func_id;
	f = pt_find(id);
	if (!f)
		return -ENOENT;
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.func_id = id;
	s.nr_probes = f->nr_probes;
	s.nr_optimized = pt_probes_optimized(f);
	s.missed = f->missed;
	s.counter_bytes = pt_profile_bytes(f) + f->plan->nr_counters * sizeof(u64);
	for_each_possible_cpu(cpu) {
		s.hits += READ_ONCE(per_cpu_ptr(f->pcpu, cpu)->hits);
		s.bytes += READ_ONCE(per_cpu_ptr(f->pcpu, cpu)->coder.bytes);
		s.dropped += READ_ONCE(per_cpu_ptr(f->pcpu, cpu)->coder.dropped);
	}
	return pt_copy_out(uarg, &s, sizeof(s));
}

static long pt_ioctl_paths_read(void __user *uarg)
{
	struct pt_paths_read r;
	struct pt_func *f;
	long err;

	err = pt_copy_arg(&r, sizeof(r), uarg);
	if (err)
		return err;
	if (r.n || r.lost || r.overflow || r.more || r.reserved[0] || r.reserved[1])
		return -EINVAL;
	f = pt_find(r.func_id);
	if (!f)
		return -ENOENT;
	err = pt_profile_read(f, &r);
	if (err)
		return err;
	r.size = sizeof(r);
	return pt_copy_out(uarg, &r, sizeof(r));
}

static long pt_ioctl_subpaths_read(void __user *uarg)
{
	struct pt_subpaths_read r;
	long err;

	err = pt_copy_arg(&r, sizeof(r), uarg);
	if (err)
		return err;
	if (r.n || r.tau_log2 || r.positions || r.samples || r.cut || r.capacity ||
	    r.reserved0 || r.reserved[0] || r.reserved[1])
		return -EINVAL;
	err = pt_osp_read(&r);
	if (err)
		return err;
	r.size = sizeof(r);
	return pt_copy_out(uarg, &r, sizeof(r));
}

/* Writes as much of struct pt_stats as the caller's size says it has room for. */
static long pt_ioctl_stats(void __user *uarg)
{
	struct pt_stats s;
	int err;

	err = pt_copy_arg(&s, sizeof(s), uarg);
	if (err)
		return err;
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.nr_funcs = pt_nr_funcs;
	s.tracing = pt_armed;
	pt_stream_totals(&s.records, &s.dropped);
	s.missed = pt_missed_total();
	pt_frames_totals(&s);
	s.hits_staged = pt_stage_total();
	return pt_copy_out(uarg, &s, sizeof(s));
}

static long pt_ioctl_list_funcs(void __user *uarg)
{
	struct pt_func_info fi;
	struct pt_func *f;
	u32 i = 0, want;
	u64 ubuf;
	int err;

	err = pt_copy_arg(&fi, sizeof(fi), uarg);
	if (err)
		return err;
	list_for_each_entry(f, &pt_funcs, node)
		if (i++ == fi.index)
			break;
	if (list_entry_is_head(f, &pt_funcs, node))
		return -ENOENT;
	want = fi.plan_len;
	ubuf = fi.plan;
	fi.func_id = f->func_id;
	fi.mode = f->plan->mode;
	fi.encoding = f->plan->encoding;
	fi.addr = f->plan->addr;
	fi.cold_addr = f->plan->cold_addr;
	fi.len = f->plan->len;
	fi.cold_len = f->plan->cold_len;
	fi.plan_len = f->plan_len;
	fi.flags = f->plan->flags;
	strscpy(fi.name, f->plan->name, sizeof(fi.name));
	fi.carrier = f->inline_counters ? PT_CARRIER_INLINE :
		     f->copy_end ? PT_CARRIER_INLINE_CALLS : PT_CARRIER_PROBES;
	fi.reserved0 = 0;
	memset(fi.reserved, 0, sizeof(fi.reserved));
	err = 0;
	if (ubuf) {
		if (want < f->plan_len)
			err = -ENOSPC;
		else if (copy_to_user(u64_to_user_ptr(ubuf), f->plan, f->plan_len))
			return -EFAULT;
	}
	if (pt_copy_out(uarg, &fi, sizeof(fi)))
		return -EFAULT;
	return err;
}

/*
 * A command without the size its number carries: the structs are
 * size-prefixed and grow at their end (pt_copy_arg takes a tool's older or
 * newer one, copy_struct_from_user's rules), so a command is the same
 * command whatever its struct's size was when the tool was built.
 */
#define PT_IOC_SIZELESS(cmd) ((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

static long pt_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	long ret;

	cmd = PT_IOC_SIZELESS(cmd);
	if (cmd == PT_IOC_SIZELESS(PT_IOC_GET_VERSION))
		return pt_ioctl_version(uarg);
	mutex_lock(&pt_ctl_mutex);
	switch (cmd) {
	case PT_IOC_SIZELESS(PT_IOC_CONFIG):
		ret = pt_ioctl_config(uarg);
		break;
	case PT_IOC_SIZELESS(PT_IOC_ADD_PLAN):
		ret = pt_ioctl_add_plan(uarg);
		break;
	case PT_IOC_SIZELESS(PT_IOC_DEL_PLAN):
		ret = pt_ioctl_del_plan(uarg);
		break;
	case PT_IOC_SIZELESS(PT_IOC_START):
		ret = pt_ioctl_start();
		break;
	case PT_IOC_SIZELESS(PT_IOC_STOP):
		ret = pt_ioctl_stop();
		break;
	case PT_IOC_SIZELESS(PT_IOC_SUBPATHS_READ):
		ret = pt_ioctl_subpaths_read(uarg);
		break;
	case PT_IOC_SIZELESS(PT_IOC_FLUSH):
		pt_flush();
		ret = 0;
		break;
	case PT_IOC_SIZELESS(PT_IOC_READ_PAGE):
		ret = pt_ioctl_read_page(uarg);
		break;
	case PT_IOC_SIZELESS(PT_IOC_FUNC_STATS):
		ret = pt_ioctl_func_stats(uarg);
		break;
	case PT_IOC_SIZELESS(PT_IOC_STATS):
		ret = pt_ioctl_stats(uarg);
		break;
	case PT_IOC_SIZELESS(PT_IOC_LIST_FUNCS):
		ret = pt_ioctl_list_funcs(uarg);
		break;
	case PT_IOC_SIZELESS(PT_IOC_PATHS_READ):
		ret = pt_ioctl_paths_read(uarg);
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	mutex_unlock(&pt_ctl_mutex);
	return ret;
}

/*
 * A module going away takes its traced functions' plans with it (the
 * module cannot be pinned: __module_address is not exported). Its text is
 * still there at MODULE_STATE_GOING, so the probes unregister normally.
 */
static int pt_module_going(struct notifier_block *nb, unsigned long state,
			   void *data)
{
	struct module *mod = data;
	struct pt_func *f, *tmp;

	if (state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&pt_ctl_mutex);
	list_for_each_entry_safe(f, tmp, &pt_funcs, node) {
		if (!within_module(f->plan->addr, mod))
			continue;
		pr_info("%s: module %s unloaded, its plan is removed\n",
			f->plan->name, mod->name);
		list_del(&f->node);
		pt_nr_funcs--;
		pt_remove(&f, 1);
	}
	/*
	 * It may be a module of copies, which ran after their plans went
	 * (until its livepatch was off): nothing they staged may stay to be
	 * read against code loaded at their addresses later.
	 */
	pt_stage_drain_all();
	mutex_unlock(&pt_ctl_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block pt_module_nb = {
	.notifier_call = pt_module_going,
};

static int pt_open(struct inode *inode, struct file *file)
{
	if (!capable(CAP_SYS_ADMIN) && !perfmon_capable())
		return -EPERM;
	return 0;
}

/*
 * Readable (EPOLLIN) while some CPU's buffer is half full. The recorder
 * sleeps here between drains and pt_read_timer wakes it (ABI 2.10):
 * one wakeup per half buffer, where a recorder on a timer of its own
 * switched in and out a hundred times a second on a traced system.
 */
static __poll_t pt_poll(struct file *file, poll_table *wait)
{
	__poll_t mask = 0;

	poll_wait(file, &pt_read_wait, wait);
	/* a signal meanwhile: the caller's poll() returns for it */
	if (mutex_lock_interruptible(&pt_ctl_mutex))
		return 0;
	if (pt_stream_half_full())
		mask = EPOLLIN | EPOLLRDNORM;
	mutex_unlock(&pt_ctl_mutex);
	return mask;
}

static const struct file_operations pt_fops = {
	.owner = THIS_MODULE,
	.open = pt_open,
	.unlocked_ioctl = pt_ioctl,
	.poll = pt_poll,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice pt_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = PT_DEVICE_NAME,
	.fops = &pt_fops,
	.mode = 0600,
};

static int __init pt_init(void)
{
	int err;

	err = pt_stream_init();
	if (err)
		return err;
	err = pt_task_events_init();
	if (err)
		goto out_stream;
	err = pt_frames_init();
	if (err)
		goto out_task_events;
	err = pt_stage_init();
	if (err)
		goto out_task_events;
	err = pt_ranges_init();
	if (err)
		goto out_stage;
	err = register_module_notifier(&pt_module_nb);
	if (err)
		goto out_ranges;
	err = misc_register(&pt_misc);
	if (err) {
		pr_err("cannot register /dev/%s: %d\n", PT_DEVICE_NAME, err);
		goto out_notifier;
	}
	pr_info("loaded, ABI %u.%u\n", PT_ABI_MAJOR, PT_ABI_MINOR);
	return 0;

out_notifier:
	unregister_module_notifier(&pt_module_nb);
out_ranges:
	pt_ranges_exit();
out_stage:
	pt_stage_exit();
out_task_events:
	pt_task_events_exit();
out_stream:
	pt_stream_exit();
	return err;
}

static void __exit pt_exit(void)
{
	misc_deregister(&pt_misc);
	unregister_module_notifier(&pt_module_nb);
	/* No descriptor is open (it would pin the module): stop, then clean up. */
	mutex_lock(&pt_ctl_mutex);
	if (pt_armed)
		pt_ioctl_stop();
	pt_remove_all();
	pt_ranges_free();
	pt_osp_exit();
	pt_frames_exit();
	mutex_unlock(&pt_ctl_mutex);
	pt_ranges_exit();
	pt_stage_exit();
	pt_task_events_exit();
	pt_stream_exit();
	pr_info("unloaded\n");
}

module_init(pt_init);
module_exit(pt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pathtrace: Ball-Larus path and witness tracing of kernel functions");
MODULE_AUTHOR("pathtrace developers");
