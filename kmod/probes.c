// SPDX-License-Identifier: GPL-2.0
/*
 * probes.c - one kprobe per probed address of a plan, registered and
 * unregistered as a whole; a user plan's probes are uprobes (uprobes.c).
 *
 * Registration goes probe by probe so that a refusal names its site; on any
 * refusal the probes already registered are unregistered in one batch (one
 * synchronization), so no plan is ever left half installed.
 *
 * Probes are registered disabled and armed only once all of a plan's are
 * in. Every armed probe kicks the kprobe optimizer, which holds
 * kprobe_mutex across an RCU-tasks grace period; registering armed probes
 * one by one therefore stalls each registration behind an optimizer round.
 * Arming them together queues the whole plan for one round (under QEMU's
 * software emulation: 35.6 s -> 11.7 s to enable bench-vm's 1470 probes).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "pathtrace.h"

struct pt_where {
	unsigned long addr;
	u32 index;
	bool verify;
};

static int pt_where_cmp(const void *a, const void *b)
{
	const struct pt_where *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)x->verify - (int)y->verify;
}

/*
 * Builds f->probes: sites and verify sites sorted by address, one probe
 * per address. Returns 0, -EINVAL if two sites (or two verify sites) share
 * an address, -ENOMEM.
 */
int pt_probes_build(struct pt_func *f)
{
	const struct pt_plan *pl = f->plan;
	u32 n = pl->nr_sites + pl->nr_verify, i, k = 0;
	struct pt_where *w;
	int err = 0;

	w = kvcalloc(n, sizeof(*w), GFP_KERNEL);
	f->probes = kvcalloc(n, sizeof(*f->probes), GFP_KERNEL);
	if (!w || !f->probes) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < pl->nr_sites; i++) {
		const struct pt_site *s = pt_site_at(f, i);

		w[i].addr = pt_region_base(f, s->region) + s->offset;
		w[i].index = i;
	}
	for (i = 0; i < pl->nr_verify; i++) {
		const struct pt_verify_site *v = pt_verify_at(f, i);
		struct pt_where *x = &w[pl->nr_sites + i];

		x->addr = pt_region_base(f, v->region) + v->offset;
		x->index = i;
		x->verify = true;
	}
	sort(w, n, sizeof(*w), pt_where_cmp, NULL);
	for (i = 0; i < n; i++) {
		struct pt_probe *pp;

		if (i && w[i].addr == w[i - 1].addr) {
			if (w[i].verify == w[i - 1].verify) {
				err = -EINVAL;
				goto out;
			}
			pp = &f->probes[k - 1];
		} else {
			pp = &f->probes[k++];
			pp->addr = w[i].addr;
			/* a user plan's are uprobes (uprobes.c) */
			if (!(pl->flags & PT_PLAN_USER)) {
				pp->kp.addr = (kprobe_opcode_t *)w[i].addr;
				pp->kp.pre_handler = pt_pre_handler;
			}
			pp->func = f;
			pp->block = -1;
		}
		if (w[i].verify)
			pp->block = pt_verify_at(f, w[i].index)->block;
		else
			pp->site = pt_site_at(f, w[i].index);
	}
	f->nr_probes = k;
out:
	kvfree(w);
	return err;
}

/*
 * Registers every probe of f and arms them, or leaves none. Returns 0 or
 * the errno of register_kprobe (the site refused) or enable_kprobe.
 */
int pt_probes_register(struct pt_func *f)
{
	struct kprobe **kps;
	u32 i, n = 0;
	int err = 0;

	if (f->plan->flags & PT_PLAN_USER)
		return pt_uprobes_register(f);
	if (f->copy_end)
		return 0;	/* its copy calls the sites (inline_sites.c) */
	kps = kvcalloc(f->nr_probes, sizeof(*kps), GFP_KERNEL);
	if (!kps)
		return -ENOMEM;
	for (; n < f->nr_probes; n++) {
		kps[n] = &f->probes[n].kp;
		kps[n]->flags |= KPROBE_FLAG_DISABLED;
		err = register_kprobe(kps[n]);
		if (err) {
			pr_info("%s: kprobes refused %pS (site %u of %u): %d\n",
				f->plan->name, (void *)kps[n]->addr, n,
				f->nr_probes, err);
			goto unregister;
		}
	}
	for (i = 0; i < n; i++) {
		err = enable_kprobe(kps[i]);
		if (err) {
			pr_info("%s: kprobes could not arm %pS: %d\n",
				f->plan->name, (void *)kps[i]->addr, err);
			goto unregister;
		}
	}
	kvfree(kps);
	return 0;
unregister:
	if (n)
		unregister_kprobes(kps, n);
	kvfree(kps);
	return err;
}

static bool pt_probes_kernel(const struct pt_func *f)
{
	return !(f->plan->flags & PT_PLAN_USER) && !f->copy_end;
}

/*
 * Unregisters all probes of funcs[0..n) with one synchronization when
 * possible; no handler runs for them when it returns.
 */
void pt_probes_unregister(struct pt_func **funcs, unsigned int n)
{
	struct kprobe **kps;
	size_t total = 0, k = 0;
	unsigned int i;
	u32 j;

	pt_uprobes_unregister(funcs, n);
	for (i = 0; i < n; i++)
		if (pt_probes_kernel(funcs[i]))
			total += funcs[i]->nr_probes;
	if (!total)
		return;
	kps = kvcalloc(total, sizeof(*kps), GFP_KERNEL);
	if (!kps) {
		for (i = 0; i < n; i++)
			for (j = 0; pt_probes_kernel(funcs[i]) && j < funcs[i]->nr_probes; j++)
				unregister_kprobe(&funcs[i]->probes[j].kp);
		return;
	}
	for (i = 0; i < n; i++)
		for (j = 0; pt_probes_kernel(funcs[i]) && j < funcs[i]->nr_probes; j++)
			kps[k++] = &funcs[i]->probes[j].kp;
	unregister_kprobes(kps, k);
	kvfree(kps);
}

/*
 * An optimized probe is an aggregate kprobe that carries ours on its list
 * (kprobes.c: try_to_optimize_kprobe), and only the aggregate has
 * KPROBE_FLAG_OPTIMIZED; get_kprobe() is not exported, so walk the ring.
 */
static bool pt_probe_optimized(struct kprobe *p)
{
	struct list_head *n;
	bool opt = false;

	rcu_read_lock();
	for (n = READ_ONCE(p->list.next); n != &p->list; n = READ_ONCE(n->next)) {
		if (READ_ONCE(container_of(n, struct kprobe, list)->flags) &
		    KPROBE_FLAG_OPTIMIZED) {
			opt = true;
			break;
		}
	}
	rcu_read_unlock();
	return opt;
}

u32 pt_probes_optimized(const struct pt_func *f)
{
	u32 i, n = 0;

	for (i = 0; pt_probes_kernel(f) && i < f->nr_probes; i++)
		n += pt_probe_optimized(&f->probes[i].kp);
	return n;
}
