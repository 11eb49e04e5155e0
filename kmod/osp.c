// SPDX-License-Identifier: GPL-2.0
/*
 * osp.c - online subpath profiling (Oren, Matias & Sagiv 2002) of path
 * profiles: while PT_PLAN_PROFILE functions count their paths, each CPU
 * samples subpaths (runs of 2, 4 or 8 consecutive path ends of one owner,
 * across loop iterations and calls) into a bounded hot list, so that
 * `pathtracectl top` can show the hottest subpaths live.
 *
 * A path end starts a sample with probability 2^-tau_log2 and a length
 * drawn uniformly among the three; the sample collects the path ends that
 * follow in the same owner context and, once complete, counts in the hot
 * list. When the list is full, tau_log2 grows by one and each count is
 * thinned to a binomial half (Gibbons & Matias' concise samples): memory
 * stays bounded by the configured entries and the list stays a uniform
 * sample of everything seen. No division, no allocation in the handler: a
 * completed sample finds its entry through a hash index, and thinning does
 * bounded work per entry. Contexts nest, so each (task, softirq, hardirq)
 * has its own samples in progress; a task switch on the CPU cuts the
 * task's (counted), and an NMI handler's path ends are not sampled (an NMI
 * may interrupt a list update).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jhash.h>
#include <linux/math.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>

#include "pathtrace.h"

/* At most one sample completes before the next starts: 8 in flight. */
#define PT_OSP_ACTIVE	PT_OSP_MAX_LEN

struct pt_osp_active {
	struct pt_subpath sp;	/* len: its length; count: path ends so far */
};

struct pt_osp_ctx {
	u64 owner;		/* whose path ends the samples collect */
	u32 nact;
	struct pt_osp_active act[PT_OSP_ACTIVE];
};

struct pt_osp_cpu {
	struct pt_osp_ctx ctx[PT_OWNER_NMI];	/* task .. hardirq; no NMI */
	u64 rng;
	u32 tau_log2;
	u32 used;
	u64 positions, samples, cut;
	/* set at config, kept across START: */
	u16 *slot;		/* index into list by hash: list index + 1, 0 empty */
	u32 slot_mask;		/* slots - 1: a power of two, at least twice the list */
	struct pt_subpath list[];		/* pt_osp_entries of them, then the slots */
};

/* Per CPU, kvmalloc'ed: the list may exceed what alloc_percpu gives. */
static struct pt_osp_cpu **pt_osp;
static u32 pt_osp_entries;

static u64 pt_osp_rand(struct pt_osp_cpu *o)
{
	u64 x = o->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	o->rng = x;
	return x;
}

static bool pt_osp_same(const struct pt_subpath *a, const struct pt_subpath *b)
{
	return a->len == b->len &&
	       !memcmp(a->func, b->func, a->len * sizeof(a->func[0])) &&
	       !memcmp(a->path, b->path, a->len * sizeof(a->path[0]));
}

static u32 pt_osp_hash(const struct pt_subpath *s)
{
	return jhash2((const u32 *)s->path, 2 * s->len, jhash2(s->func, s->len, s->len));
}

/* The slot where s is, or the empty one where it would go. */
static u16 *pt_osp_find(struct pt_osp_cpu *o, const struct pt_subpath *s)
{
	u32 h = pt_osp_hash(s);

	for (;; h++) {
		u16 *slot = &o->slot[h & o->slot_mask];

		if (!*slot || pt_osp_same(&o->list[*slot - 1], s))
			return slot;
	}
}

/*
 * Binomial(c, 1/2) with bounded work in a handler: by coin flips
 * (popcount of random bits) up to 1024, beyond by its normal
 * approximation, the sum of 12 uniform draws (an Irwin-Hall variate).
 */
static u64 pt_osp_half(struct pt_osp_cpu *o, u64 c)
{
	s64 z = -6 * 65536;
	u64 n = 0;
	int i;

	if (c > 1024) {
		for (i = 0; i < 3; i++) {
			u64 r = pt_osp_rand(o);

			z += (r & 0xffff) + (r >> 16 & 0xffff) + (r >> 32 & 0xffff) + (r >> 48);
		}
		/* c/2 + z * sqrt(c)/2, z of mean 0 and variance 1 (scaled by 2^16) */
		return c / 2 + (z * (s64)int_sqrt64(c)) / (2 * 65536);
	}
	for (; c >= 64; c -= 64)
		n += hweight64(pt_osp_rand(o));
	if (c)
		n += hweight64(pt_osp_rand(o) & ((1ull << c) - 1));
	return n;
}

/* Each sampled occurrence stays with probability 1/2; empty entries go. */
static void pt_osp_thin(struct pt_osp_cpu *o)
{
	u32 i, kept = 0;

	if (o->tau_log2 < 62)	/* beyond, a sample every 2^62 path ends: never */
		o->tau_log2++;
	for (i = 0; i < o->used; i++) {
		u64 n = pt_osp_half(o, o->list[i].count);

		if (!n)
			continue;
		o->list[kept] = o->list[i];
		o->list[kept++].count = n;
	}
	o->used = kept;
	memset(o->slot, 0, (o->slot_mask + 1) * sizeof(o->slot[0]));
	for (i = 0; i < kept; i++)
		*pt_osp_find(o, &o->list[i]) = i + 1;
}

static void pt_osp_count(struct pt_osp_cpu *o, const struct pt_subpath *s)
{
	u16 *slot = pt_osp_find(o, s);

	o->samples++;
	if (*slot) {
		o->list[*slot - 1].count++;
		return;
	}
	/* Full: sample more sparsely until there is room (a uniform sample still). */
	if (o->used == pt_osp_entries) {
		while (o->used == pt_osp_entries)
			pt_osp_thin(o);
		slot = pt_osp_find(o, s);
	}
	o->list[o->used] = *s;
	o->list[o->used++].count = 1;
	*slot = o->used;
}

void pt_osp_path_end(unsigned int kind, u64 owner, u32 func_id, u64 path)
{
	struct pt_osp_cpu **all = READ_ONCE(pt_osp);
	struct pt_osp_ctx *c;
	struct pt_osp_cpu *o;
	u32 i, k;
	u64 r;

	/*
	 * kind is the probed code's (an int3 probe's handler runs as an NMI
	 * itself, pt_current_owner): a real NMI samples nothing, as it may
	 * interrupt a handler updating this CPU's list.
	 */
	if (!all || kind >= PT_OWNER_NMI)
		return;
	o = all[smp_processor_id()];
	c = &o->ctx[kind];
	if (c->owner != owner) {
		o->cut += c->nact;
		c->nact = 0;
		c->owner = owner;
	}
	o->positions++;
	for (i = 0, k = 0; i < c->nact; i++) {
		struct pt_subpath *s = &c->act[i].sp;

		s->func[s->count] = func_id;
		s->path[s->count++] = path;
		if (s->count == s->len) {
			pt_osp_count(o, s);
			continue;
		}
		if (k != i)
			c->act[k] = c->act[i];
		k++;
	}
	c->nact = k;
	r = pt_osp_rand(o);
	if (r & ((1ull << o->tau_log2) - 1))
		return;
	/* never full: a sample in flight has fewer than 8 path ends */
	if (WARN_ON_ONCE(k == PT_OSP_ACTIVE)) {
		o->cut++;
		return;
	}
	c->act[k].sp.len = 2u << ((r >> 40) % PT_OSP_LENGTHS);
	c->act[k].sp.tau_log2 = 0;
	c->act[k].sp.count = 1;
	c->act[k].sp.func[0] = func_id;
	c->act[k].sp.path[0] = path;
	c->nact = k + 1;
}
NOKPROBE_SYMBOL(pt_osp_path_end);

static void pt_osp_free_all(struct pt_osp_cpu **all)
{
	unsigned int cpu;

	if (!all)
		return;
	for_each_possible_cpu(cpu)
		kvfree(all[cpu]);
	kfree(all);
}

int pt_osp_config(u32 entries)
{
	struct pt_osp_cpu **all = NULL, **old;
	unsigned int cpu;

	if (entries > PT_OSP_MAX_ENTRIES)
		return -EINVAL;
	if (!entries && !pt_osp)
		return 0;
	if (entries) {
		all = kcalloc(nr_cpu_ids, sizeof(*all), GFP_KERNEL);
		if (!all)
			return -ENOMEM;
		u32 slots = roundup_pow_of_two(2 * entries);

		for_each_possible_cpu(cpu) {
			all[cpu] = kvzalloc(struct_size(all[cpu], list, entries) +
					    slots * sizeof(u16), GFP_KERNEL);
			if (!all[cpu]) {
				pt_osp_free_all(all);
				return -ENOMEM;
			}
			all[cpu]->slot = (u16 *)&all[cpu]->list[entries];
			all[cpu]->slot_mask = slots - 1;
		}
	}
	old = pt_osp;
	WRITE_ONCE(pt_osp, NULL);
	synchronize_rcu();	/* handlers run with preemption off */
	pt_osp_free_all(old);
	pt_osp_entries = entries;
	WRITE_ONCE(pt_osp, all);
	return 0;
}

/* Empty lists at START (not armed: no handler runs them). */
void pt_osp_reset(void)
{
	unsigned int cpu;

	if (!pt_osp)
		return;
	for_each_possible_cpu(cpu) {
		struct pt_osp_cpu *o = pt_osp[cpu];

		memset(o->ctx, 0, sizeof(o->ctx));
		o->tau_log2 = 0;
		o->used = 0;
		o->positions = o->samples = o->cut = 0;
		memset(o->slot, 0, (o->slot_mask + 1) * sizeof(o->slot[0]));
		o->rng = get_random_u64() | 1;
	}
}

void pt_osp_exit(void)
{
	pt_osp_config(0);
}

struct pt_osp_snap {
	struct pt_osp_cpu *o;	/* the CPU's */
	struct pt_subpath *out;
	u32 max, n;
	struct pt_subpaths_read *r;
};

/* On the CPU itself, interrupts off: a list no handler is changing. */
static void pt_osp_snap_cpu(void *arg)
{
	struct pt_osp_snap *s = arg;
	struct pt_osp_cpu *o = s->o;
	unsigned long flags;
	u32 i;

	local_irq_save(flags);
	s->r->tau_log2 = o->tau_log2;
	s->r->positions = o->positions;
	s->r->samples = o->samples;
	s->r->cut = o->cut;
	for (i = 0; i < o->used && s->n < s->max; i++) {
		s->out[s->n] = o->list[i];
		s->out[s->n++].tau_log2 = o->tau_log2;
	}
	local_irq_restore(flags);
}

long pt_osp_read(struct pt_subpaths_read *r)
{
	struct pt_osp_snap s = { .r = r };
	u8 __user *out = u64_to_user_ptr(r->entries);
	int err;
	u32 i;

	if (!pt_osp)
		return -ENODATA;
	if (r->cpu >= nr_cpu_ids || !cpu_online(r->cpu) ||
	    r->entry_size < sizeof(struct pt_subpath) || r->entry_size > PAGE_SIZE)
		return -EINVAL;
	s.o = pt_osp[r->cpu];
	s.max = min(r->max, pt_osp_entries);
	s.out = kvcalloc(s.max + 1, sizeof(*s.out), GFP_KERNEL);
	if (!s.out)
		return -ENOMEM;
	err = smp_call_function_single(r->cpu, pt_osp_snap_cpu, &s, 1);
	for (i = 0; !err && i < s.n; i++) {
		if (copy_to_user(out + (size_t)i * r->entry_size, &s.out[i], sizeof(s.out[i])) ||
		    clear_user(out + (size_t)i * r->entry_size + sizeof(s.out[i]),
			       r->entry_size - sizeof(s.out[i])))
			err = -EFAULT;
	}
	kvfree(s.out);
	r->n = s.n;
	r->capacity = pt_osp_entries;
	return err;
}
