// SPDX-License-Identifier: GPL-2.0
/*
 * pathtrace_target.ko - functions shaped to stress path regeneration, run
 * deterministically from /sys/kernel/debug/pathtrace_target/run:
 *
 *   echo "FUNC ARG" > run     runs pt_target_FUNC(ARG) once
 *   cat run                   prints "FUNC ARG = RESULT" of the last run
 *
 * "storm N" runs pt_target_nested N times while an hrtimer calls
 * pt_target_tick from hardirq context every PT_TARGET_TICK_NS: probes hit
 * in interrupts that arrive while a probe of the task is being handled,
 * which kprobes skips (nmissed).
 *
 * Every function is noipa (no inlining, cloning or IPA-propagated
 * constants), so its symbol is exactly the code a plan describes. The
 * error paths (BUG, WARN_ON_ONCE) are reachable only by arguments the run
 * file refuses, so dmesg stays clean.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/* noipa implies noinline and forbids clones and IPA-propagated constants. */
#define PT_TARGET __attribute__((__noipa__))

/* Above this, the error paths below would run; the run file refuses it. */
#define PT_TARGET_ARG_MAX 100000

static long pt_target_sink;

/* Nested loops: an outer loop whose body is an inner loop with a branch. */
static PT_TARGET long pt_target_nested(long n)
{
	long i, j, s = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++) {
			if ((i ^ j) & 1)
				s += j;
			else
				s -= i;
		}
		s += i;
	}
	return s;
}

/* A loop with three exits: found, limit, and a sentinel. */
static PT_TARGET long pt_target_multi_exit(long n)
{
	long i;

	for (i = 0; i < 64; i++) {
		if (i * i == n)
			return i;
		if (i * 7 > n + 40)
			break;
		if ((n >> (i & 31)) == 0)
			goto sentinel;
	}
	return -i;
sentinel:
	return 1000 + i;
}

/* Irreducible: the loop a <-> b is entered at a or at b. */
static PT_TARGET long pt_target_irreducible(long n)
{
	long s = n;

	if (n & 1)
		goto b;
a:
	s = s * 3 + 1;
	if (s > 5000)
		goto out;
b:
	s += 7;
	if (s & 2)
		goto a;
	if (s < 3000)
		goto b;
out:
	return s;
}

/* Sparse cases: without jump tables, a tree of compares. */
static PT_TARGET long pt_target_switch(long n)
{
	switch (n) {
	case 1:
		return 11;
	case 5:
		return 55;
	case 17:
		return 170;
	case 40:
		return n * 3;
	case 99:
		return 9;
	case 250:
		return n - 1;
	case 1000:
		return 7;
	case 4096:
		return n >> 2;
	default:
		return -1;
	}
}

/* Recursion: traced activations nest inside each other. */
static PT_TARGET long pt_target_recursive(long n)
{
	long r;

	if (n <= 1)
		return 1;
	r = pt_target_recursive(n - 1);
	/* A compiler barrier after the call keeps it a real recursion, not a loop. */
	barrier();
	if (n & 1)
		return n + r;
	return r * 2 - n;
}

/* Called only through pt_target_untraced, so its ENTER has no call vertex above it. */
static PT_TARGET long pt_target_inner(long n)
{
	return n > 10 ? n - 10 : n * 2;
}

/* Tests leave this one untraced: a traced caller reaches a traced callee through it. */
static PT_TARGET long pt_target_untraced(long n)
{
	return pt_target_inner(n + 1) + 1;
}

static PT_TARGET long pt_target_outer(long n)
{
	long s = 0;

	if (n > 3)
		s = pt_target_untraced(n);
	s += pt_target_untraced(n / 2);
	if (n & 1)
		s += pt_target_inner(n);
	return s;
}

/* Early returns from several depths. */
static PT_TARGET long pt_target_early(long n)
{
	if (n < 0)
		return -1;
	if (n == 0)
		return 0;
	if (n % 3 == 0) {
		if (n % 9 == 0)
			return 9;
		return 3;
	}
	if (n > 50)
		return 50;
	return n + 100;
}

/*
 * notrace: no __fentry__ call, so livepatch cannot redirect it and an
 * inline copy of it is refused (inline-no-fentry); kprobes still probe it
 * (t-inline-default.sh: what the copy refuses goes on kprobes).
 */
static notrace PT_TARGET long pt_target_notrace(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += (i & 1) ? i : -i;
	return s;
}

/*
 * A direct call to pt_target_notrace between two branches: with implicit
 * entries its plan takes the callee as traced (an entered call, no ENTER),
 * until the copy refuses the callee (t-inline-default.sh).
 */
static PT_TARGET long pt_target_notrace_caller(long n)
{
	long s = n & 1 ? 1 : 2;

	s += pt_target_notrace(n);
	return s > 100 ? s - 100 : s;
}

/* Error paths that are never taken: a BUG (noreturn) and a WARN_ON_ONCE. */
/*
 * The noreturn error path: a call to a __noreturn function ends the path
 * (never taken by the tests). The printk-then-BUG() form is refused by the
 * planner on purpose: nothing after the printk call can be probed, so its
 * callee's ENTERs could not be told from those of the BUG handler.
 */
static noinline void __noreturn pt_target_fatal(long n)
{
	panic("pathtrace_target: argument %ld out of range\n", n);
}

static PT_TARGET long pt_target_bug(long n)
{
	if (unlikely(n > PT_TARGET_ARG_MAX))
		pt_target_fatal(n);
	if (WARN_ON_ONCE(n < -PT_TARGET_ARG_MAX))
		return 0;
	return n * 2 + 1;
}

/* Runs in hardirq context (the storm's hrtimer): a loop and a branch. */
static PT_TARGET long pt_target_tick(long n)
{
	long i, s = 0;

	for (i = 0; i < (n & 7); i++)
		s += (n >> i) & 1 ? i : -1;
	return s;
}

#define PT_TARGET_TICK_NS 50000

static struct hrtimer pt_target_timer;
static long pt_target_ticks;

static enum hrtimer_restart pt_target_timer_fn(struct hrtimer *t)
{
	pt_target_ticks++;
	WRITE_ONCE(pt_target_sink, pt_target_tick(pt_target_ticks));
	hrtimer_forward_now(t, ns_to_ktime(PT_TARGET_TICK_NS));
	return HRTIMER_RESTART;
}

/* Returns the ticks that ran: the run file shows them. */
static PT_TARGET long pt_target_storm(long n)
{
	long i, s = 0;

	if (n < 0)
		return 0;
	pt_target_ticks = 0;
	hrtimer_start(&pt_target_timer, ns_to_ktime(PT_TARGET_TICK_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
	for (i = 0; i < n; i++)
		s += pt_target_nested(6);
	hrtimer_cancel(&pt_target_timer);
	WRITE_ONCE(pt_target_sink, s);
	return pt_target_ticks;
}

struct pt_target_fn {
	const char *name;
	long (*fn)(long n);
};

static const struct pt_target_fn pt_target_fns[] = {
	{ "nested", pt_target_nested },
	{ "multi_exit", pt_target_multi_exit },
	{ "irreducible", pt_target_irreducible },
	{ "switch", pt_target_switch },
	{ "recursive", pt_target_recursive },
	{ "inner", pt_target_inner },
	{ "untraced", pt_target_untraced },
	{ "outer", pt_target_outer },
	{ "early", pt_target_early },
	{ "notrace", pt_target_notrace },
	{ "notrace_caller", pt_target_notrace_caller },
	{ "bug", pt_target_bug },
	{ "storm", pt_target_storm },
};

static DEFINE_MUTEX(pt_target_lock);
static char pt_target_last[96];
static struct dentry *pt_target_dir;

static ssize_t pt_target_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	char buf[64], name[32];
	long arg, res;
	size_t i;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "%31s %ld", name, &arg) != 2)
		return -EINVAL;
	if (arg > PT_TARGET_ARG_MAX || arg < -PT_TARGET_ARG_MAX)
		return -ERANGE;
	if (!strcmp(name, "recursive") && (arg < 0 || arg > 64))
		return -ERANGE;
	for (i = 0; i < ARRAY_SIZE(pt_target_fns); i++) {
		if (strcmp(name, pt_target_fns[i].name))
			continue;
		res = pt_target_fns[i].fn(arg);
		WRITE_ONCE(pt_target_sink, res);
		mutex_lock(&pt_target_lock);
		snprintf(pt_target_last, sizeof(pt_target_last), "%s %ld = %ld\n",
			 name, arg, res);
		mutex_unlock(&pt_target_lock);
		return count;
	}
	return -ENOENT;
}

static ssize_t pt_target_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	char buf[sizeof(pt_target_last)];

	mutex_lock(&pt_target_lock);
	memcpy(buf, pt_target_last, sizeof(buf));
	mutex_unlock(&pt_target_lock);
	return simple_read_from_buffer(ubuf, count, ppos, buf, strlen(buf));
}

static const struct file_operations pt_target_fops = {
	.owner = THIS_MODULE,
	.write = pt_target_write,
	.read = pt_target_read,
	.llseek = default_llseek,
};

static int __init pt_target_init(void)
{
	hrtimer_init(&pt_target_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	pt_target_timer.function = pt_target_timer_fn;
	pt_target_dir = debugfs_create_dir("pathtrace_target", NULL);
	debugfs_create_file("run", 0600, pt_target_dir, NULL, &pt_target_fops);
	return 0;
}

static void __exit pt_target_exit(void)
{
	debugfs_remove_recursive(pt_target_dir);
}

module_init(pt_target_init);
module_exit(pt_target_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pathtrace test target: functions that stress path regeneration");
