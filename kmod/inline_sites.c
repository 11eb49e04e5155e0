// SPDX-License-Identifier: GPL-2.0
/*
 * inline_sites.c - a plan's sites as calls in its function's inline copy
 * (docs/inline.md, "Sites as calls"; PT_ADD_INLINE_SITES).
 *
 * The copy calls pt_inline_hit (inline_hit.S) before each site's
 * instruction; pt_inline_hit calls pt_inline_fast with its return address,
 * which names the site (ranges.c's hash of the copies' addresses maps it
 * to the site's probe), and the flags; a site that needs every register
 * gets them as a struct pt_regs in pt_inline_site_hit. No kprobe is
 * involved: the hit runs the probe's actions as a kprobe's would
 * (handlers.c).
 *
 * The plan is the original's, and so are the addresses in the trace: a
 * return address in a copy (an ENTER's caller, a frame) is translated to
 * the original's instruction it stands for (pt_ranges_caller), from the
 * table userspace gave with the plan.
 *
 * A hit while another inline hit is handled on this CPU (an NMI, or code
 * the handler calls) is skipped and counted in its probe's kp.nmissed,
 * where missed.c places kprobes' own misses.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bsearch.h>
#include <linux/export.h>
#include <linux/irqflags.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>

#include "pathtrace.h"
#include "copy_hash.h"
#include "inline_hit.h"
#include "inline/pathtrace_inline.h"

/* The thunk the copies call (inline_hit.S): the generated module imports it. */
EXPORT_SYMBOL_GPL(pt_inline_hit);
/* and the one the sites that need only the flags call (stage.c) */
EXPORT_SYMBOL_GPL(pt_inline_stage);

static DEFINE_PER_CPU(unsigned int, pt_inline_nesting);

static int pt_site_cmp(const void *a, const void *b)
{
	const struct pt_inline_site *x = a, *y = b;

	return x->copy < y->copy ? -1 : x->copy > y->copy;
}

static int pt_probe_key_cmp(const void *key, const void *elt)
{
	unsigned long a = *(const unsigned long *)key;
	const struct pt_probe *pp = elt;

	return a < pp->addr ? -1 : a > pp->addr;
}

/*
 * Whether @pp's actions read no register but the flags: no ENTER (it reads
 * the return address, and may walk the stack) and no profile (its path
 * register's hit takes the registers).
 */
static bool pt_probe_flags_only(const struct pt_func *f, const struct pt_probe *pp)
{
	const struct pt_site *s = pp->site;

	if (f->profile)
		return false;
	return !s || !s->nr_actions || pt_action_at(f, s->first_action)->op != PT_OP_ENTER;
}

/*
 * @pp's one action when the stage may run it alone, with no block and no
 * walk over the site's actions: a flags_only site's word (a witness), or
 * an ENTER site's ENTER (most of a witness plan's sites); else NULL.
 */
static const struct pt_action *pt_probe_alone(const struct pt_func *f,
					      const struct pt_probe *pp)
{
	const struct pt_site *s = pp->site;
	const struct pt_action *a;

	if (!s || s->nr_actions != 1 || pp->block >= 0)
		return NULL;
	a = pt_action_at(f, s->first_action);
	return a->op == (pp->flags_only ? PT_OP_EMIT : PT_OP_ENTER) ? a : NULL;
}

/*
 * The thunk the call that returns to @ret calls: 1 for pt_inline_stage, 0
 * for pt_inline_hit, -EINVAL for anything else (a site's call is e8 rel32
 * right before where it returns).
 */
static int pt_site_staged(unsigned long ret)
{
	u8 insn[5];
	s32 rel;

	if (copy_from_kernel_nofault(insn, (void *)(ret - sizeof(insn)), sizeof(insn)) ||
	    insn[0] != 0xe8)
		return -EINVAL;
	memcpy(&rel, insn + 1, sizeof(rel));
	if (ret + rel == (unsigned long)pt_inline_stage)
		return 1;
	return ret + rel == (unsigned long)pt_inline_hit ? 0 : -EINVAL;
}

/*
 * Takes the copy and its address table from @a (PT_ADD_INLINE_SITES) for
 * f, whose probes are built: every entry inside the copy, sorted, each
 * site's address one of f's probes, every probe a site's, each site's call
 * one to a thunk, to pt_inline_stage only for a flags_only probe. Returns 0,
 * -EINVAL, -EFAULT or -ENOMEM; pt_inline_sites_free undoes it either way.
 */
int pt_inline_sites_attach(struct pt_func *f, const struct pt_plan_arg *a)
{
	const struct pt_inline_addr __user *um = u64_to_user_ptr(a->inline_map);
	struct pt_inline_addr e;
	u32 i, nr = 0, ns = 0;
	int staged;

	if (f->plan->flags & (PT_PLAN_USER | PT_PLAN_PROFILE) || f->counts_only ||
	    a->inline_copy < PT_KERNEL_TEXT_MIN || !a->inline_copy_len ||
	    a->inline_copy + a->inline_copy_len < a->inline_copy ||
	    !a->inline_map_len || a->inline_map_len > 4 * PT_PLAN_MAX_BYTES / sizeof(e))
		return -EINVAL;
	f->inline_rets = kvcalloc(a->inline_map_len, sizeof(*f->inline_rets), GFP_KERNEL);
	f->inline_sites = kvcalloc(a->inline_map_len, sizeof(*f->inline_sites), GFP_KERNEL);
	if (!f->inline_rets || !f->inline_sites)
		return -ENOMEM;
	f->copy_start = a->inline_copy;
	f->copy_end = a->inline_copy + a->inline_copy_len;
	for (i = 0; i < a->inline_map_len; i++) {
		if (copy_from_user(&e, &um[i], sizeof(e)))
			return -EFAULT;
		if (e.copy < f->copy_start || e.copy > f->copy_end || e.reserved ||
		    (e.flags & ~PT_INLINE_ADDR_SITE))
			return -EINVAL;
		if (e.flags & PT_INLINE_ADDR_SITE) {
			struct pt_probe *pp = bsearch(&e.orig, f->probes, f->nr_probes,
						      sizeof(*pp), pt_probe_key_cmp);

			if (!pp)
				return -EINVAL;
			pp->flags_only = pt_probe_flags_only(f, pp);
			pp->alone = pt_probe_alone(f, pp);
			staged = pt_site_staged(e.copy);
			if (staged < 0 || (staged && !pp->flags_only))
				return -EINVAL;
			/* the others are ENTER sites, staged when they can be (stage.c) */
			f->nr_staged += staged || !pp->flags_only;
			f->inline_sites[ns++] = (struct pt_inline_site){ e.copy, pp };
		} else {
			f->inline_rets[nr++] = (struct pt_inline_ret){ e.copy, e.orig };
		}
	}
	/* every probe is called from exactly one place */
	if (ns != f->nr_probes)
		return -EINVAL;
	sort(f->inline_sites, ns, sizeof(*f->inline_sites), pt_site_cmp, NULL);
	for (i = 1; i < ns; i++)
		if (f->inline_sites[i].copy == f->inline_sites[i - 1].copy ||
		    f->inline_sites[i].pp == f->inline_sites[i - 1].pp)
			return -EINVAL;
	f->nr_inline_rets = nr;
	f->nr_inline_sites = ns;
	return 0;
}

void pt_inline_sites_free(struct pt_func *f)
{
	kvfree(f->inline_rets);
	kvfree(f->inline_sites);
	f->inline_rets = NULL;
	f->inline_sites = NULL;
}

/*
 * Runs @pp's site (with @regs, or for a flags_only site none), unless
 * another inline hit is being handled on this CPU: then the hit is
 * counted as kprobes count their misses. Interrupts off.
 */
static void pt_inline_run(struct pt_probe *pp, struct pt_regs *regs, unsigned long rflags)
{
	if (__this_cpu_inc_return(pt_inline_nesting) == 1) {
		if (!regs)
			pt_probe_hit_flags(pp, rflags);
		else if (!pt_stage_enter_site(pp, regs->flags, regs->sp, regs))
			pt_probe_hit(pp, NULL, regs);
	} else if (READ_ONCE(pt_armed)) {
		pp->kp.nmissed++;
		/* the count before the flag: pairs with the sweep's xchg */
		smp_store_release(&pp->func->inline_missed, true);
	}
	__this_cpu_dec(pt_inline_nesting);
}
NOKPROBE_SYMBOL(pt_inline_run);

/*
 * A hit's interrupts stay off until pt_inline_hit's popfq restores the
 * site's flags, IF among them: like the entry code before its iret, a hit
 * only says they come back on (for CONFIG_TRACE_IRQFLAGS) if the site had
 * them on. Under QEMU's TCG an sti ends a translation block as the popfq
 * does, and one such per hit is enough.
 */
static __always_inline void pt_inline_irqs_back(unsigned long site_flags)
{
	if (!irqs_disabled_flags(site_flags))
		trace_hardirqs_on();
}

/*
 * An ENTER site's hit staged without its registers (pt_stage_enter_site),
 * its frame named without a walk; false: it needs them (a walk, a closed
 * or full stage, another hit in progress on this CPU). Interrupts off.
 */
static bool pt_inline_enter_staged(struct pt_probe *pp, unsigned long rflags,
				   unsigned long sp)
{
	bool staged = false;

	if (__this_cpu_inc_return(pt_inline_nesting) == 1)
		staged = pt_stage_enter_site(pp, rflags, sp, NULL);
	__this_cpu_dec(pt_inline_nesting);
	if (staged)
		pt_frames_entered();	/* as pt_inline_site_hit after an ENTER */
	return staged;
}
NOKPROBE_SYMBOL(pt_inline_enter_staged);

/*
 * Called by pt_inline_hit with where the site's call returns, the site's
 * flags and its stack pointer, before any struct pt_regs exists: runs a
 * site whose actions read no register but the flags, or stages an ENTER
 * site whose frame needs no walk, and returns NULL (as for no site), or
 * returns the probe of one that needs every register, which
 * pt_inline_site_hit then runs. Returns with interrupts off: for the probe,
 * until pt_inline_site_hit is done with it (removal frees a probe only
 * after an RCU grace period).
 */
struct pt_probe *notrace pt_inline_fast(unsigned long ret, unsigned long rflags,
					unsigned long sp)
{
	unsigned long flags;
	struct pt_probe *pp;

	local_irq_save(flags);
	pp = pt_ranges_site(ret);
	if (pp && !pp->flags_only &&
	    !pt_inline_enter_staged(pp, rflags, sp))
		return pp;
	if (pp && pp->flags_only)
		pt_inline_run(pp, NULL, rflags);
	pt_inline_irqs_back(flags);
	return NULL;
}
NOKPROBE_SYMBOL(pt_inline_fast);

/*
 * Called by pt_inline_hit with the probe pt_inline_fast returned, interrupts
 * still off since, and the site's registers. Returns with interrupts off
 * (pt_inline_irqs_back).
 */
void notrace pt_inline_site_hit(struct pt_probe *pp, struct pt_regs *regs)
{
	BUILD_BUG_ON(offsetof(struct pt_regs, flags) != PT_HIT_FLAGS ||
		     offsetof(struct pt_regs, sp) != PT_HIT_SP ||
		     offsetof(struct pt_regs, ip) != PT_HIT_IP ||
		     offsetof(struct pt_regs, r15) != PT_HIT_R15 ||
		     offsetof(struct pt_regs, di) != PT_HIT_DI ||
		     sizeof(struct pt_regs) != PT_HIT_REGS);
	pt_inline_run(pp, regs, regs->flags);
	/*
	 * An ENTER (or a profile's site) has run or been skipped: the frame a
	 * copy keeps is not this activation's (frames.c), traced or not yet.
	 */
	pt_frames_entered();
	pt_inline_irqs_back(regs->flags);
}
NOKPROBE_SYMBOL(pt_inline_site_hit);
