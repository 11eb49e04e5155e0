// SPDX-License-Identifier: GPL-2.0
/*
 * osp.c - online subpath profiling (Oren, Matias & Sagiv 2002) of path
 * profiles: while PT_PLAN_PROFILE functions count their paths, each CPU
 * samples subpaths (runs of 2, 4 or 8 consecutive path ends of one owner,
 * across loop iterations and calls) into a bounded hot list, so that
 * `pathtracectl top` can show the hottest subpaths live.
 *
 * The sampler and the hot list are trace-format/coder/osp_core.c (the
 * one implementation pathregen --subpaths runs too): no division, no
 * allocation in the handler. This file is the kernel side: a profiler per
 * CPU in kvmalloc'ed memory, replaced under RCU at config, reset at START
 * and read on its CPU with interrupts off. Contexts nest, so each (task,
 * idle, softirq, hardirq) is a context of its own with its samples in
 * progress; a task switch on the CPU cuts the task's (counted), and an NMI
 * handler's path ends are not sampled (an NMI may interrupt a list update).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>

#include "pathtrace.h"
#include "coder/osp_core.h"

/* Per CPU, kvmalloc'ed: the list may exceed what alloc_percpu gives. */
static struct osp **pt_osp;
static u32 pt_osp_entries;

void pt_osp_path_end(unsigned int kind, u64 owner, u32 func_id, u64 path)
{
	struct osp **all = READ_ONCE(pt_osp);

	/*
	 * kind is the probed code's (an int3 probe's handler runs as an NMI
	 * itself, pt_current_owner): a real NMI samples nothing, as it may
	 * interrupt a handler updating this CPU's list.
	 */
	if (!all || kind >= PT_OWNER_NMI)
		return;
	/* never: a sample in flight has fewer than 8 path ends */
	WARN_ON_ONCE(osp_add(all[smp_processor_id()], kind, owner, func_id, path));
}
NOKPROBE_SYMBOL(pt_osp_path_end);

static void pt_osp_free_all(struct osp **all)
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
	struct osp **all = NULL, **old;
	unsigned int cpu;
	size_t size;

	if (entries > PT_OSP_MAX_ENTRIES)
		return -EINVAL;
	if (!entries && !pt_osp)
		return 0;
	if (entries) {
		size = osp_size(entries, PT_OSP_MAX_LEN, PT_OWNER_NMI);
		if (!size)
			return -EINVAL;
		all = kcalloc(nr_cpu_ids, sizeof(*all), GFP_KERNEL);
		if (!all)
			return -ENOMEM;
		for_each_possible_cpu(cpu) {
			void *mem = kvzalloc(size, GFP_KERNEL);

			if (!mem) {
				pt_osp_free_all(all);
				return -ENOMEM;
			}
			all[cpu] = osp_init(mem, entries, PT_OSP_MAX_LEN, PT_OWNER_NMI, 1);
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
	for_each_possible_cpu(cpu)
		osp_reset(pt_osp[cpu], get_random_u64());
}

void pt_osp_exit(void)
{
	pt_osp_config(0);
}

struct pt_osp_snap {
	struct osp *o;		/* the CPU's */
	struct pt_subpath *out;
	u32 max, n;
	struct pt_subpaths_read *r;
};

/* On the CPU itself, interrupts off: a list no handler is changing. */
static void pt_osp_snap_cpu(void *arg)
{
	struct pt_osp_snap *s = arg;
	struct osp *o = s->o;
	struct osp_subpath sp;
	unsigned long flags;
	u32 i, j;

	local_irq_save(flags);
	s->r->tau_log2 = o->tau_log2;
	s->r->positions = o->positions;
	s->r->samples = o->samples;
	s->r->cut = o->cut;
	for (i = 0; i < o->used && s->n < s->max; i++) {
		struct pt_subpath *out = &s->out[s->n++];

		osp_get(o, i, &sp);
		out->len = sp.len;
		out->tau_log2 = o->tau_log2;
		out->count = sp.count;
		for (j = 0; j < sp.len; j++) {
			out->func[j] = sp.func[j];
			out->path[j] = sp.val[j];
		}
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
