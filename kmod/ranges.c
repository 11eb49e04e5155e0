// SPDX-License-Identifier: GPL-2.0
/*
 * ranges.c - where traced code is: the installed plans' main and cold
 * parts, sorted, for the handlers. An ENTER whose return address lies in
 * none of them was called from untraced code, and the regenerator needs
 * no return address for it (docs/runtime.md, "Which call an ENTER belongs
 * to"): its ENTER code names no caller. The inline copies that carry
 * plans as calls are in it too, each with its function (inline_sites.c),
 * and a hash of the addresses in them a call returns to: each site's call
 * finds its probe there, and an ENTER called from a copy the original's
 * return address, in a slot or two instead of two binary searches.
 * The table is rebuilt under pt_ctl_mutex whenever the plans change,
 * published with RCU and read from handlers (preemption off).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "pathtrace.h"

struct pt_range {
	unsigned long start, end;
	const struct pt_func *copy_of;	/* an inline copy's: its function; else NULL */
};

/*
 * An address in an inline copy some call returns to: a site's call (its
 * probe) or a call of the original's code (the original's return address),
 * or both when a site follows a call.
 */
struct pt_copy_addr {
	unsigned long copy;	/* 0: an empty slot */
	struct pt_probe *pp;
	unsigned long orig;
};

struct pt_ranges {
	struct rcu_head rcu;
	unsigned int n;
	unsigned int copies;	/* ranges of inline copies among them */
	unsigned int hash_bits;	/* the hash has 1 << hash_bits slots, or none */
	struct pt_copy_addr *hash;	/* after r[]: open addressing, linear probing */
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

/* @addr's slot in @t's hash: its own, or the empty one it would take. */
static struct pt_copy_addr *pt_hash_slot(const struct pt_ranges *t, unsigned long addr)
{
	unsigned long mask = (1ul << t->hash_bits) - 1;
	unsigned long i = hash_long(addr, t->hash_bits);

	while (t->hash[i].copy && t->hash[i].copy != addr)
		i = (i + 1) & mask;
	return &t->hash[i];
}

static void pt_hash_add(struct pt_ranges *t, const struct pt_func *f)
{
	struct pt_copy_addr *e;
	u32 i;

	for (i = 0; i < f->nr_inline_sites; i++) {
		e = pt_hash_slot(t, f->inline_sites[i].copy);
		e->copy = f->inline_sites[i].copy;
		e->pp = f->inline_sites[i].pp;
	}
	for (i = 0; i < f->nr_inline_rets; i++) {
		e = pt_hash_slot(t, f->inline_rets[i].copy);
		e->copy = f->inline_rets[i].copy;
		e->orig = f->inline_rets[i].orig;
	}
}

static void pt_ranges_add_func(struct pt_ranges *t, const struct pt_func *f)
{
	pt_ranges_add(t, f);
	if (t->hash)
		pt_hash_add(t, f);
}

/*
 * Rebuilds the table from @funcs and @extra (a plan about to be installed,
 * or NULL); the caller holds pt_ctl_mutex. Without memory the old table stays and @extra is not in it:
 * returns -ENOMEM, and the caller must not install @extra.
 */
int pt_ranges_rebuild(struct list_head *funcs, const struct pt_func *extra)
{
	unsigned long addrs = extra ? extra->nr_inline_sites + extra->nr_inline_rets : 0;
	unsigned int n = extra ? 3 : 0, bits;
	struct pt_ranges *t, *old;
	struct pt_func *f;

	list_for_each_entry(f, funcs, node) {
		n += 3;
		addrs += f->nr_inline_sites + f->nr_inline_rets;
	}
	/* at most half the slots taken */
	bits = addrs ? ilog2(roundup_pow_of_two(2 * addrs)) : 0;
	t = kvzalloc(struct_size(t, r, n) + (addrs ? sizeof(*t->hash) << bits : 0), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->hash_bits = bits;
	t->hash = addrs ? (struct pt_copy_addr *)&t->r[n] : NULL;
	list_for_each_entry(f, funcs, node)
		pt_ranges_add_func(t, f);
	if (extra)
		pt_ranges_add_func(t, extra);
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
 * inline copy's address is not: its original's is (pt_ranges_original).
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

/* @addr's entry in the copies' hash, or NULL; preemption off. */
static const struct pt_copy_addr *pt_ranges_copy_addr(unsigned long addr)
{
	const struct pt_ranges *t = rcu_dereference_sched(pt_ranges);
	const struct pt_copy_addr *e;

	if (!t || !t->hash)
		return NULL;
	e = pt_hash_slot(t, addr);
	return e->copy ? e : NULL;
}

/* The probe of the site whose call in an inline copy returns to @ret, or NULL; preemption off. */
struct pt_probe *pt_ranges_site(unsigned long ret)
{
	const struct pt_copy_addr *e = pt_ranges_copy_addr(ret);

	return e ? e->pp : NULL;
}

/*
 * The original's address that @addr in an inline copy stands for (a
 * return address: ENTERs and frames name the original's calls); @addr
 * itself outside the copies, 0 for an address of a copy no call of the
 * original's code returns to. Preemption off.
 */
unsigned long pt_ranges_original(unsigned long addr)
{
	const struct pt_copy_addr *e = pt_ranges_copy_addr(addr);

	if (e && e->orig)
		return e->orig;
	return pt_ranges_copy(addr) ? 0 : addr;
}
