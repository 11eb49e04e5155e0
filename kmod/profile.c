// SPDX-License-Identifier: GPL-2.0
/*
 * profile.c - path profiles in the kernel (PT_PLAN_PROFILE, Ball & Larus
 * 1996): the plan's path-register actions run as in a paths trace, but a
 * path end counts its number in per-CPU counters (struct pt_profile)
 * instead of writing it; stream.c writes the counts as PT_REC_PATHS records
 * when the module flushes.
 *
 * The path register is per CPU and per context (task, idle, softirq,
 * hardirq, NMI: contexts nest, so each keeps its own) and knows whose path
 * it holds. Tasks share their CPU's task register: when a handler finds it
 * holding another task's path, that path's partial sum (if not 0) is kept
 * in a small global stash until its task comes back, on this CPU or
 * another, and the new task's own partial sum is taken from there (0 when
 * it has none: every path after a call starts at 0, docs/runtime.md). As
 * in a paths trace, where the same switch writes a PARTIAL record, the
 * count stays exact; a stash too full to keep a partial sum counts that
 * path end as lost instead.
 *
 * Preferential path profiling (PT_PLAN_PPP) keeps a second register, the
 * PPP id, beside the path register, switched and stashed with it: a path
 * end counts in the dense slot of its PPP id when the slot names the
 * path's Ball-Larus number (an uninteresting path may alias an id), else
 * in the one counter of the other paths.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/irqflags.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/smp.h>
#include <linux/uaccess.h>

#include "conds.h"
#include "pathtrace.h"

/* How far the hash table is probed for a path's slot before it overflows. */
#define PT_PROFILE_PROBES	16
/* Partial sums of switched-out tasks kept at once. */
#define PT_STASH_SLOTS		64

struct pt_path_reg {
	u64 owner;		/* whose path the register holds (0: none yet) */
	u64 value;
	u64 ppp;		/* PT_PLAN_PPP: the PPP register */
};

static DEFINE_PER_CPU(struct pt_path_reg, pt_path_regs[PT_OWNER_NMI + 1]);

/* Switched-out tasks' partial sums: owner 0 is a free slot. */
static struct pt_path_reg pt_stash[PT_STASH_SLOTS];
static DEFINE_RAW_SPINLOCK(pt_stash_lock);
static atomic_t pt_stash_used = ATOMIC_INIT(0);

/* Keeps owner's partial sums; false when the stash is full. */
static bool pt_stash_put(u64 owner, u64 value, u64 ppp)
{
	bool kept = false;
	u32 i;

	raw_spin_lock(&pt_stash_lock);
	for (i = 0; i < PT_STASH_SLOTS && !kept; i++) {
		if (pt_stash[i].owner)
			continue;
		pt_stash[i].owner = owner;
		pt_stash[i].value = value;
		pt_stash[i].ppp = ppp;
		atomic_inc(&pt_stash_used);
		kept = true;
	}
	raw_spin_unlock(&pt_stash_lock);
	return kept;
}

/* Owner's kept partial sums into r, removed from the stash; 0 if none. */
static void pt_stash_take(u64 owner, struct pt_path_reg *r)
{
	u32 i;

	r->value = 0;
	r->ppp = 0;
	if (!atomic_read(&pt_stash_used))
		return;
	raw_spin_lock(&pt_stash_lock);
	for (i = 0; i < PT_STASH_SLOTS; i++) {
		if (pt_stash[i].owner != owner)
			continue;
		r->value = pt_stash[i].value;
		r->ppp = pt_stash[i].ppp;
		pt_stash[i].owner = 0;
		atomic_dec(&pt_stash_used);
		break;
	}
	raw_spin_unlock(&pt_stash_lock);
}

/* Bytes of one CPU's table of profile_size entries. */
static size_t pt_profile_table_bytes(const struct pt_func *f)
{
	size_t entry = pt_profile_dense(f) ? sizeof(u64) : sizeof(struct pt_path_slot);

	return offsetof(struct pt_profile, count) + (size_t)f->profile_size * entry;
}

size_t pt_profile_bytes(const struct pt_func *f)
{
	return f->profile ? pt_profile_table_bytes(f) : 0;
}

int pt_profile_alloc(struct pt_func *f)
{
	u32 i;

	if (!(f->plan->flags & PT_PLAN_PROFILE))
		return 0;
	/* plan.c: PT_MODE_PATHS, no verify sites, one width for every PATH_EMIT */
	for (i = 0; i < f->plan->nr_actions; i++)
		if (pt_action_at(f, i)->op == PT_OP_PATH_EMIT)
			f->profile_bits = pt_action_at(f, i)->nbits;
	if (f->nr_ppp)
		f->profile_size = f->nr_ppp + 1;	/* the last: other paths */
	else if (pt_profile_dense(f))
		f->profile_size = 1u << f->profile_bits;
	else
		f->profile_size = PT_PROFILE_SLOTS;
	f->profile = __alloc_percpu(pt_profile_table_bytes(f), __alignof__(struct pt_profile));
	return f->profile ? 0 : -ENOMEM;
}

/* Counts path number path (the low nbits bits, as a paths trace emits them). */
static void pt_profile_count(struct pt_func *f, u64 path, u64 ppp)
{
	struct pt_profile *pr = this_cpu_ptr(f->profile);
	u32 i, h;

	if (f->nr_ppp) {
		u64 slot = ppp - (u64)f->plan->ppp_min;

		if (slot < f->nr_ppp && pt_ppp_at(f, slot)->path == path)
			pr->count[slot]++;
		else
			pr->count[f->nr_ppp]++;
		return;
	}
	if (pt_profile_dense(f)) {
		/* the plan numbers every path below 2^bits; anything else is no path */
		if (path < f->profile_size)
			pr->count[path]++;
		else
			pr->overflow++;
		return;
	}
	h = hash_64(path, ilog2(PT_PROFILE_SLOTS));
	for (i = 0; i < PT_PROFILE_PROBES; i++) {
		struct pt_path_slot *s = &pr->slot[(h + i) % PT_PROFILE_SLOTS];

		if (!s->count)
			s->path = path;
		if (s->path == path) {
			s->count++;
			return;
		}
	}
	pr->overflow++;
}

void pt_profile_hit(struct pt_func *f, struct kprobe *p, const struct pt_site *s,
		    struct pt_regs *regs)
{
	unsigned int cpu = smp_processor_id();
	struct pt_path_reg *r;
	unsigned long flags;
	u64 owner, gen, path;
	bool taken;
	u32 i, kind;

	local_irq_save(flags);
	this_cpu_ptr(f->pcpu)->hits++;
	if (!s || pt_stream_busy())
		goto out;
	owner = pt_stream_owner(p, cpu, &gen);
	kind = PT_OWNER_KIND(owner) <= PT_OWNER_NMI ? PT_OWNER_KIND(owner) : PT_OWNER_TASK;
	r = this_cpu_ptr(&pt_path_regs[kind]);
	if (r->owner != owner) {
		/*
		 * Only tasks share a register: another context's owner is
		 * this CPU, so it differs only on first use.
		 */
		if (kind == PT_OWNER_TASK && r->owner && (r->value || r->ppp) &&
		    !pt_stash_put(r->owner, r->value, r->ppp))
			this_cpu_ptr(f->profile)->lost++;
		if (kind == PT_OWNER_TASK) {
			pt_stash_take(owner, r);
		} else {
			r->value = 0;
			r->ppp = 0;
		}
		r->owner = owner;
	}
	taken = pt_site_taken(s, regs->flags);
	for (i = 0; i < s->nr_actions; i++) {
		const struct pt_action *a = pt_action_at(f, s->first_action + i);

		if (!pt_applies(a, taken))
			continue;
		switch (a->op) {
		case PT_OP_ENTER:	/* a path from the entry starts at 0 */
			r->value = 0;
			r->ppp = 0;
			break;
		case PT_OP_PATH_SET:
			r->value = a->value;
			break;
		case PT_OP_PATH_ADD:
			r->value += a->value;
			break;
		case PT_OP_PPP_SET:
			r->ppp = a->value;
			break;
		case PT_OP_PPP_ADD:
			r->ppp += a->value;
			break;
		case PT_OP_PATH_EMIT:
			path = r->value + a->value;
			if (a->nbits < 64)
				path &= (1ull << a->nbits) - 1;
			pt_profile_count(f, path, r->ppp);
			pt_osp_path_end(kind, owner, f->func_id, path);
			r->value = 0;
			r->ppp = 0;
			break;
		}
	}
out:
	local_irq_restore(flags);
}
NOKPROBE_SYMBOL(pt_profile_hit);

/*
 * PT_IOC_PATHS_READ: every CPU's nonzero counts of f, copied out as they
 * are now (handlers may be adding to them: each word is read whole).
 */
long pt_profile_read(struct pt_func *f, struct pt_paths_read *r)
{
	bool dense = pt_profile_dense(f);
	u32 size = f->profile_size, i;
	u64 __user *out = u64_to_user_ptr(r->pairs);
	unsigned int cpu;

	if (!f->profile)
		return -EINVAL;
	r->n = 0;
	for_each_possible_cpu(cpu) {
		const struct pt_profile *pr = per_cpu_ptr(f->profile, cpu);

		r->lost += READ_ONCE(pr->lost);
		r->overflow += READ_ONCE(pr->overflow);
		for (i = 0; i < size; i++) {
			u64 pair[2];

			pair[1] = dense ? READ_ONCE(pr->count[i]) : READ_ONCE(pr->slot[i].count);
			if (!pair[1])
				continue;
			pair[0] = pt_profile_path(f, pr, i);
			if (r->n == r->max) {
				r->more++;
				continue;
			}
			if (copy_to_user(out + 2 * r->n, pair, sizeof(pair)))
				return -EFAULT;
			r->n++;
		}
	}
	return 0;
}
