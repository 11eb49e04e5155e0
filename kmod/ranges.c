// SPDX-License-Identifier: GPL-2.0
/*
 * ranges.c - where traced code is: the installed plans' main and cold
 * parts, sorted, for the handlers. An ENTER whose return address lies in
 * none of them was called from untraced code, and the regenerator needs
 * no return address for it (docs/runtime.md, "Which call an ENTER belongs
 * to"): its ENTER code names no caller. The inline copies that carry
 * plans as calls are in it too, marked as copies (inline_sites.c).
 * The table is rebuilt under pt_ctl_mutex whenever the plans change,
 * published with RCU and read from handlers (preemption off).
 *
 * Beside it, two hashes of the addresses in the copies a call returns to:
 * one of the sites' calls, where a site finds its probe, and one of the
 * places that stand for an original's instruction, where an ENTER called
 * from a copy (or a frame in one) finds the original's return address,
 * each in a slot or two. The sites' is the one every hit reads: a site
 * per several instructions against a place or more per instruction, so
 * it spans a fraction of the pages the places' takes. A plan's
 * addresses go into each in place while it has room (at most half its
 * slots taken, counting those of removed plans, which stay as keys that
 * name nothing), else into a table of four times the live entries,
 * published with RCU: adding n plans costs what their addresses take, not
 * n rebuilds.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "copy_hash.h"
#include "pathtrace.h"

struct pt_range {
	unsigned long start, end;
	bool copy;		/* an inline copy's (its addresses are not traced) */
};

struct pt_ranges {
	struct rcu_head rcu;
	u32 gen;		/* names this table in the memos: 1..PT_MEMO_GEN_MASK */
	unsigned int n;
	unsigned int copies;	/* ranges of inline copies among them */
	unsigned long copy_lo, copy_hi;	/* every copy lies within (ends included) */
	struct pt_range r[];
};

static struct pt_ranges __rcu *pt_ranges;
struct pt_copy_hash __rcu *pt_site_hash;	/* copy_hash.h */
static struct pt_copy_hash __rcu *pt_place_hash;
static u32 pt_ranges_gen;	/* the last table's; under pt_ctl_mutex */

/*
 * What the search of the table said of recent return addresses, per CPU:
 * a traced function's callers are few, and the binary search over every
 * traced range is most of an ENTER's lookup. An entry is one word (an
 * NMI that interrupts its store sees it whole): the address's low half
 * (kernel text is in the top 2 GiB; other addresses are not kept), the
 * generation of the table searched and its answer (0: an empty entry).
 */
enum pt_where { PT_WHERE_UNTRACED = 1, PT_WHERE_TRACED, PT_WHERE_COPY };

#define PT_MEMO_BITS		8
#define PT_MEMO_GEN_MASK	((1u << 30) - 1)
struct pt_ranges_memo {
	u64 e[1 << PT_MEMO_BITS];
};

/* allocated: a module's static per-CPU data comes out of a small reserve */
static struct pt_ranges_memo __percpu *pt_ranges_memo;

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
	t->r[t->n++] = (struct pt_range){ f->plan->addr, f->plan->addr + f->plan->len, false };
	if (f->plan->cold_len)
		t->r[t->n++] = (struct pt_range){ f->plan->cold_addr,
						  f->plan->cold_addr + f->plan->cold_len, false };
	if (f->copy_end) {
		t->r[t->n++] = (struct pt_range){ f->copy_start, f->copy_end, true };
		if (!t->copies++ || f->copy_start < t->copy_lo)
			t->copy_lo = f->copy_start;
		t->copy_hi = max(t->copy_hi, f->copy_end);
	}
}

/*
 * @addr's entry, with @val: the site's probe (sites' hash) or the
 * original's address (places'), both a word, stored through the union's
 * orig. A new key is published last.
 */
static void pt_hash_put(struct pt_copy_hash *h, unsigned long addr, unsigned long val)
{
	struct pt_copy_addr *e = pt_hash_slot(h, addr);

	WRITE_ONCE(e->orig, val);
	if (!e->copy) {
		h->used++;
		/* the entry before its key: pairs with pt_hash_slot's acquire */
		smp_store_release(&e->copy, addr);
	}
}

/* What f puts into the sites' hash (@sites) or the places'. */
static unsigned long pt_hash_entries(const struct pt_func *f, bool sites)
{
	return sites ? f->nr_inline_sites : f->nr_inline_rets;
}

static void pt_hash_add(struct pt_copy_hash *h, const struct pt_func *f, bool sites)
{
	u32 i;

	if (sites)
		for (i = 0; i < f->nr_inline_sites; i++)
			pt_hash_put(h, f->inline_sites[i].copy,
				    (unsigned long)f->inline_sites[i].pp);
	else
		for (i = 0; i < f->nr_inline_rets; i++)
			pt_hash_put(h, f->inline_rets[i].copy, f->inline_rets[i].orig);
}

/*
 * Puts @extra's sites (@sites) or places into the hash at @hp: in place
 * when half the slots hold them, else into a new table with @funcs' (four
 * times the live entries) that replaces the old. Returns 0 or -ENOMEM
 * (nothing changed).
 */
static int pt_hash_install(struct pt_copy_hash __rcu **hp, struct list_head *funcs,
			   const struct pt_func *extra, bool sites)
{
	struct pt_copy_hash *h = rcu_dereference_protected(*hp, true), *old = h;
	unsigned long live = pt_hash_entries(extra, sites), bits;
	struct pt_func *f;

	if (!live)
		return 0;
	if (h && 2 * (h->used + live) <= 1ul << h->bits) {
		pt_hash_add(h, extra, sites);
		return 0;
	}
	list_for_each_entry(f, funcs, node)
		live += pt_hash_entries(f, sites);
	bits = ilog2(roundup_pow_of_two(4 * live));
	h = kvzalloc(struct_size(h, slot, 1ul << bits), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	h->bits = bits;
	list_for_each_entry(f, funcs, node)
		pt_hash_add(h, f, sites);
	pt_hash_add(h, extra, sites);
	rcu_assign_pointer(*hp, h);
	if (old)
		kvfree_rcu(old, rcu);
	return 0;
}

/*
 * Makes @f's addresses name nothing in the hashes (the keys stay until a
 * table is next rebuilt): after it, and an RCU grace period, no call finds
 * @f's probes. Cannot fail. The caller holds pt_ctl_mutex.
 */
void pt_ranges_forget(const struct pt_func *f)
{
	struct pt_copy_hash *sh = rcu_dereference_protected(pt_site_hash, true);
	struct pt_copy_hash *ph = rcu_dereference_protected(pt_place_hash, true);
	struct pt_copy_addr *e;
	u32 i;

	for (i = 0; sh && i < f->nr_inline_sites; i++) {
		e = pt_hash_slot(sh, f->inline_sites[i].copy);
		if (e->copy && e->pp == f->inline_sites[i].pp)
			WRITE_ONCE(e->pp, NULL);
	}
	for (i = 0; ph && i < f->nr_inline_rets; i++) {
		e = pt_hash_slot(ph, f->inline_rets[i].copy);
		if (e->copy)
			WRITE_ONCE(e->orig, 0);
	}
}

/*
 * The generation after @gen, under pt_ctl_mutex. Past the last, every
 * memo is emptied once no reader can still search a table of the last
 * round (they run with preemption off), so that no entry outlives its
 * round's tables.
 */
static u32 pt_ranges_gen_next(u32 gen)
{
	unsigned int cpu;

	if (gen < PT_MEMO_GEN_MASK)
		return gen + 1;
	synchronize_rcu();
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(pt_ranges_memo, cpu), 0, sizeof(*pt_ranges_memo));
	return 1;
}

/*
 * Rebuilds the table from @funcs and @extra (a plan about to be installed,
 * or NULL), and puts @extra's copy addresses into the hash; the caller
 * holds pt_ctl_mutex, and takes a removed plan out of the hash with
 * pt_ranges_forget. Without memory the old table stays and @extra is not
 * in it: returns -ENOMEM, and the caller must not install @extra.
 */
int pt_ranges_rebuild(struct list_head *funcs, const struct pt_func *extra)
{
	unsigned int n = extra ? 3 : 0;
	struct pt_ranges *t, *old;
	struct pt_func *f;

	list_for_each_entry(f, funcs, node)
		n += 3;
	t = kvmalloc(struct_size(t, r, n), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	/*
	 * The places first: left behind by a failure of the sites', they
	 * name the original's addresses a copy stands for, which stay true.
	 */
	if (extra && (pt_hash_install(&pt_place_hash, funcs, extra, false) ||
		      pt_hash_install(&pt_site_hash, funcs, extra, true))) {
		kvfree(t);
		return -ENOMEM;
	}
	pt_ranges_gen = pt_ranges_gen_next(pt_ranges_gen);
	t->gen = pt_ranges_gen;
	t->n = 0;
	t->copies = 0;
	t->copy_lo = 0;
	t->copy_hi = 0;
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

/* Returns 0 or -ENOMEM. */
int pt_ranges_init(void)
{
	pt_ranges_memo = alloc_percpu(struct pt_ranges_memo);
	return pt_ranges_memo ? 0 : -ENOMEM;
}

/* After every reader is gone (module exit, with pt_stage_exit). */
void pt_ranges_exit(void)
{
	free_percpu(pt_ranges_memo);
	pt_ranges_memo = NULL;
}

/* Frees the table and the hash (module exit, after the last handler). */
void pt_ranges_free(void)
{
	struct pt_ranges *old = rcu_dereference_protected(pt_ranges, true);
	struct pt_copy_hash *sh = rcu_dereference_protected(pt_site_hash, true);
	struct pt_copy_hash *ph = rcu_dereference_protected(pt_place_hash, true);

	RCU_INIT_POINTER(pt_ranges, NULL);
	RCU_INIT_POINTER(pt_site_hash, NULL);
	RCU_INIT_POINTER(pt_place_hash, NULL);
	if (old)
		kvfree_rcu(old, rcu);
	if (sh)
		kvfree_rcu(sh, rcu);
	if (ph)
		kvfree_rcu(ph, rcu);
}

/* Where @addr lies in @t (its ranges' ends included); preemption off. */
static enum pt_where pt_ranges_search(const struct pt_ranges *t, unsigned long addr)
{
	unsigned int lo = 0, hi = t->n;

	while (lo < hi) {
		unsigned int m = lo + (hi - lo) / 2;

		if (t->r[m].end < addr)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo == t->n || t->r[lo].start > addr)
		return PT_WHERE_UNTRACED;
	return t->r[lo].copy ? PT_WHERE_COPY : PT_WHERE_TRACED;
}

/* pt_ranges_search through this CPU's memo; preemption off. */
static enum pt_where pt_ranges_where(const struct pt_ranges *t, unsigned long addr)
{
	u64 *m, key, v;
	enum pt_where w;

	if (addr >> 32 != 0xffffffffu)
		return pt_ranges_search(t, addr);
	m = &this_cpu_ptr(pt_ranges_memo)->e[hash_32((u32)addr, PT_MEMO_BITS)];
	key = (u64)(u32)addr << 32 | (u64)t->gen << 2;
	v = READ_ONCE(*m);
	if ((v & ~3ull) == key && (v & 3))
		return v & 3;
	w = pt_ranges_search(t, addr);
	WRITE_ONCE(*m, key | w);
	return w;
}

/*
 * What an ENTER or a frame makes of return address @addr (preemption off):
 * in an inline copy, the original's address it stands for (0 for one no
 * call of the original's code returns to); elsewhere @addr itself, with
 * its top bit cleared (PT_CALLER_UNTRACED) where it is not traced code, so
 * that pt_caller_traced tells traced kernel text from the rest. Traced
 * includes a part's end (a call that is its last instruction returns
 * there), and an address while no table is built; a copy's own address is
 * not traced, its original's is. An address outside every copy (most of a
 * frame walk's) reads no hash; one inside, one hash probe; then this CPU's
 * memo, or a binary search.
 */
unsigned long pt_ranges_caller(unsigned long addr)
{
	const struct pt_ranges *t = rcu_dereference_sched(pt_ranges);
	const struct pt_copy_addr *e = NULL;
	struct pt_copy_hash *h;
	enum pt_where w;

	if (!t)
		return addr;
	if (t->copies && addr >= t->copy_lo && addr <= t->copy_hi) {
		h = rcu_dereference_sched(pt_place_hash);
		if (h)
			e = pt_copy_hash_find(h, addr);
		if (e && READ_ONCE(e->orig))
			return READ_ONCE(e->orig);	/* inside its original: traced */
	}
	w = pt_ranges_where(t, addr);
	if (w == PT_WHERE_COPY)
		return 0;
	return w == PT_WHERE_TRACED ? addr : addr & ~PT_CALLER_UNTRACED;
}
