// SPDX-License-Identifier: GPL-2.0
/*
 * ranges.c - where traced code is: the installed plans' main and cold
 * parts, sorted, for the handlers. An ENTER whose return address lies in
 * none of them was called from untraced code, and the regenerator needs
 * no return address for it (docs/runtime.md, "Which call an ENTER belongs
 * to"): its ENTER code names no caller. The inline copies that carry
 * plans as calls are in it too, each with its function (inline_sites.c).
 * The table is rebuilt under pt_ctl_mutex whenever the plans change,
 * published with RCU and read from handlers (preemption off).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "pathtrace.h"

struct pt_range {
	unsigned long start, end;
	const struct pt_func *copy_of;	/* an inline copy's: its function; else NULL */
};

struct pt_ranges {
	struct rcu_head rcu;
	unsigned int n;
	unsigned int copies;	/* ranges of inline copies among them */
	struct pt_range r[];
};

static struct pt_ranges __rcu *pt_ranges;

static int pt_range_cmp(const void *a, const void *b)
{
	const struct pt_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void pt_ranges_add(struct pt_ranges *t, const struct pt_func *f)
{
	/* a user plan's addresses are its file's, never a kernel return address */
	if (f->plan->flags & PT_PLAN_USER)
		return;
	t->r[t->n++] = (struct pt_range){ f->plan->addr, f->plan->addr + f->plan->len, NULL };
	if (f->plan->cold_len)
		t->r[t->n++] = (struct pt_range){ f->plan->cold_addr,
						  f->plan->cold_addr + f->plan->cold_len, NULL };
	if (f->copy_end) {
		t->r[t->n++] = (struct pt_range){ f->copy_start, f->copy_end, f };
		t->copies++;
	}
}

/*
 * Rebuilds the table from @funcs and @extra (a plan about to be installed,
 * or NULL); the caller holds pt_ctl_mutex. Without memory the old table stays and @extra is not in it:
 * returns -ENOMEM, and the caller must not install @extra.
 */
int pt_ranges_rebuild(struct list_head *funcs, const struct pt_func *extra)
{
	struct pt_ranges *t, *old;
	struct pt_func *f;
	unsigned int n = extra ? 3 : 0;

	list_for_each_entry(f, funcs, node)
		n += 3;
	t = kvmalloc(struct_size(t, r, n), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->n = 0;
	t->copies = 0;
	list_for_each_entry(f, funcs, node)
		pt_ranges_add(t, f);
	if (extra)
		pt_ranges_add(t, extra);
	sort(t->r, t->n, sizeof(t->r[0]), pt_range_cmp, NULL);
	/* the caller holds pt_ctl_mutex: the only writer */
	old = rcu_dereference_protected(pt_ranges, true);
	rcu_assign_pointer(pt_ranges, t);
	if (old)
		kvfree_rcu(old, rcu);
	return 0;
}

/* Frees the table (module exit, after the last handler). */
void pt_ranges_free(void)
{
	struct pt_ranges *old = rcu_dereference_protected(pt_ranges, true);

	RCU_INIT_POINTER(pt_ranges, NULL);
	if (old)
		kvfree_rcu(old, rcu);
}

/* The range @addr lies in (its end included), or NULL; preemption off. */
static const struct pt_range *pt_ranges_find(unsigned long addr)
{
	const struct pt_ranges *t = rcu_dereference_sched(pt_ranges);
	unsigned int lo = 0, hi;

	if (!t)
		return NULL;
	hi = t->n;
	while (lo < hi) {
		unsigned int m = lo + (hi - lo) / 2;

		if (t->r[m].end < addr)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < t->n && t->r[lo].start <= addr ? &t->r[lo] : NULL;
}

/*
 * True when @addr lies in traced code (its end included: a call that is a
 * part's last instruction returns there), or when that is not known. An
 * inline copy's address is not: its original's is (pt_inline_original).
 */
bool pt_ranges_traced(unsigned long addr)
{
	const struct pt_range *r;

	if (!rcu_dereference_sched(pt_ranges))
		return true;
	r = pt_ranges_find(addr);
	return r && !r->copy_of;
}

/*
 * The function whose inline copy @addr lies in, or NULL; preemption off.
 * Without copies (every probe plan) there is nothing to look up: each
 * ENTER asks.
 */
const struct pt_func *pt_ranges_copy(unsigned long addr)
{
	const struct pt_ranges *t = rcu_dereference_sched(pt_ranges);
	const struct pt_range *r;

	if (!t || !t->copies)
		return NULL;
	r = pt_ranges_find(addr);

	return r ? r->copy_of : NULL;
}
