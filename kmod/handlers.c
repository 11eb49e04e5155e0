// SPDX-License-Identifier: GPL-2.0
/*
 * handlers.c - run one probed address's actions: the kprobe pre_handler,
 * and the hit of a user plan's uprobe (uprobes.c) through the same code.
 *
 * There is no post_handler, so the kernel may jump-optimize the probes.
 * Order at one address (a plan site and a verify site may share it):
 * ENTER first (an activation starts before its first block), then the
 * BLOCK record of verify mode, then the site's other actions in plan order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irqflags.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/smp.h>
#include <linux/uaccess.h>

#include "coder/word.h"
#include "conds.h"
#include "copy_hash.h"
#include "pathtrace.h"

/*
 * A kernel function's ENTER as pt_coder_enter takes it (low 32 bits) when
 * its caller's return address is @ret, at the stack pointer @sp of @regs:
 * the low half of a traced caller's return address (text is in the top
 * 2 GiB), or for an untraced caller the traced call it runs under, if any
 * (frames.c). PT_ENTER_IMPLICIT for a call site its plan lists as an
 * implicit entry (no ENTER is written). Without @regs nothing walks: where
 * the frame needs the walk, PT_ENTER_NEEDS_WALK. Interrupts off.
 */
static __always_inline u64 pt_enter_value(struct pt_func *f, unsigned long ret,
					  unsigned long sp, struct pt_regs *regs)
{
	/* a call from an inline copy: the trace names the original's */
	unsigned long caller = pt_ranges_caller(ret);

	if (f->nr_implicit && pt_implicit_entry(f, caller))
		return PT_ENTER_IMPLICIT;
	if (pt_caller_traced(caller))
		return (u32)caller;
	if (!pt_frames_wanted())
		return 0;
	/* caller 0: a copy's address no call of its original returns to */
	if (ret && !caller)
		return PT_ENTER_FRAME_UNKNOWN;
	if (regs)
		return pt_frames_find(regs, ret);
	return pt_frames_named(sp);
}

/* pt_enter_value at a kprobe's @regs, whose stack is read without faulting. */
static u64 pt_enter_kernel_value(struct pt_func *f, struct pt_regs *regs)
{
	unsigned long ret;

	if (copy_from_kernel_nofault(&ret, (void *)regs->sp, sizeof(ret)))
		ret = 0;
	return pt_enter_value(f, ret, regs->sp, regs);
}
NOKPROBE_SYMBOL(pt_enter_kernel_value);

/*
 * pt_enter_value at an inline copy's ENTER site, whose stack pointer @sp
 * is its own (the return address is there), with its @regs or NULL.
 */
u64 pt_enter_inline_value(struct pt_func *f, unsigned long sp, struct pt_regs *regs)
{
	return pt_enter_value(f, *(unsigned long *)sp, sp, regs);
}
NOKPROBE_SYMBOL(pt_enter_inline_value);

/*
 * Inlined: a call per action is a cost every hit pays. An ENTER's value is
 * @enter when a staged ENTER brings it (pt_enter_inline_value's, taken at
 * the hit), else PT_ENTER_FROM_REGS: found here from @regs (a kprobe's, or a
 * copy's when its ENTER could not be staged).
 */
static __always_inline void pt_run_action(struct pt_coder *c, struct pt_func *f,
			  struct pt_coder_func_cpu *fc, const struct pt_action *a,
			  struct pt_regs *regs, u64 enter)
{
	switch (a->op) {
	case PT_OP_ENTER:
		/*
		 * A user function's ENTER names no caller (docs/user.md, "The
		 * user return address in the stream"): its calls are blocked.
		 */
		if (f->plan->flags & PT_PLAN_USER)
			enter = 0;
		else if (enter == PT_ENTER_FROM_REGS)
			enter = pt_enter_kernel_value(f, regs);
		if (enter != PT_ENTER_IMPLICIT)
			pt_coder_enter(c, &f->coder, fc, (u32)enter);
		/*
		 * Implicit entries too; after the ENTER, whose refused write
		 * (the LOSS before it) empties the context.
		 */
		pt_coder_ctx_enter(c, &f->coder, fc);
		break;
	case PT_OP_EMIT:
		pt_coder_word(c, &f->coder, fc, a->arg, a->value, a->nbits);
		break;
	case PT_OP_PATH_ADD:
		pt_coder_path_add(c, a->value);
		break;
	case PT_OP_PATH_EMIT:
		pt_coder_path_emit(c, &f->coder, fc, a->value, a->nbits);
		break;
	case PT_OP_PATH_SET:
		pt_coder_path_set(c, a->value);
		break;
	case PT_OP_COUNT:
		this_cpu_ptr(f->counters)[a->arg]++;
		break;
	}
}

/*
 * A plan that only counts (edges mode): the site's counters, nothing in
 * the ring buffer; stop and plan removal flush the counters.
 */
static void pt_count_only(struct pt_func *f, const struct pt_site *s,
			  unsigned long rflags)
{
	unsigned long flags;
	bool taken;
	u32 i;

	local_irq_save(flags);
	this_cpu_ptr(f->pcpu)->hits++;
	if (s && !pt_stream_busy()) {
		taken = pt_site_taken(s, rflags);
		for (i = 0; i < s->nr_actions; i++) {
			const struct pt_action *a = pt_action_at(f, s->first_action + i);

			if (pt_applies(a, taken))
				this_cpu_ptr(f->counters)[a->arg]++;
		}
	}
	local_irq_restore(flags);
}

/*
 * Probe @pp's actions on coder @c, with the probed code's @regs (NULL when
 * @pp is flags_only or its ENTER is staged) and flags @rflags; @enter is a
 * staged ENTER's value (pt_run_action). Interrupts off.
 */
static __always_inline void pt_probe_record(struct pt_coder *c, struct pt_probe *pp,
					    struct pt_regs *regs, unsigned long rflags,
					    u64 enter)
{
	struct pt_func *f = pp->func;
	struct pt_func_pcpu *pc = this_cpu_ptr(f->pcpu);
	const struct pt_site *s = pp->site;
	const struct pt_action *a, *end;
	size_t step = f->action_size;
	bool taken;

	pc->hits++;
	if (!s) {
		if (pp->block >= 0)
			pt_coder_block(c, &f->coder, &pc->coder, (u32)pp->block);
		return;
	}
	taken = pt_site_taken(s, rflags);
	a = pt_action_at(f, s->first_action);
	end = (const void *)((const u8 *)a + s->nr_actions * step);
	/* plan.c lets ENTER only lead its site. */
	if (a < end && a->op == PT_OP_ENTER) {
		pt_run_action(c, f, &pc->coder, a, regs, enter);
		a = (const void *)((const u8 *)a + step);
	}
	if (pp->block >= 0)
		pt_coder_block(c, &f->coder, &pc->coder, (u32)pp->block);
	for (; a < end; a = (const void *)((const u8 *)a + step))
		if (pt_applies(a, taken))
			pt_run_action(c, f, &pc->coder, a, regs, enter);
}

/*
 * A hit of probe @pp with the probed code's @regs and flags @rflags: @p is
 * the kprobe it came through, NULL for a user plan's uprobe (the owner is
 * then the current task) or an inline copy's site. @regs may be NULL when
 * @pp is flags_only. Runs with preemption off.
 */
static void pt_probe_run(struct pt_probe *pp, struct kprobe *p, struct pt_regs *regs,
			 unsigned long rflags)
{
	struct pt_func *f = pp->func;
	unsigned long flags;
	struct pt_coder *c;

	if (!READ_ONCE(pt_armed))
		return;
	if (f->counts_only) {
		pt_count_only(f, pp->site, rflags);
		return;
	}
	if (f->profile) {
		pt_profile_hit(f, p, pp->site, regs);
		return;
	}
	local_irq_save(flags);
	c = pt_stage_enter(p);
	if (likely(c))
		pt_probe_record(c, pp, regs, rflags, PT_ENTER_FROM_REGS);
	else
		this_cpu_ptr(f->pcpu)->hits++;
	local_irq_restore(flags);
}
NOKPROBE_SYMBOL(pt_probe_run);

/* A hit of probe @pp with the probed code's @regs (pt_probe_run). */
void pt_probe_hit(struct pt_probe *pp, struct kprobe *p, struct pt_regs *regs)
{
	pt_probe_run(pp, p, regs, regs->flags);
}
NOKPROBE_SYMBOL(pt_probe_hit);

/*
 * A hit of a flags_only probe (an inline copy's site that needs no
 * register but the flags: inline_sites.c) with the probed code's flags.
 */
void pt_probe_hit_flags(struct pt_probe *pp, unsigned long rflags)
{
	pt_probe_run(pp, NULL, NULL, rflags);
}
NOKPROBE_SYMBOL(pt_probe_hit_flags);

/*
 * pt_probe_record for a staged hit that does not run alone, out of line:
 * inlined, its saves would be paid on the path that runs alone too.
 */
static noinline void pt_probe_record_all(struct pt_coder *c, struct pt_probe *pp,
					 unsigned long rflags, u64 enter)
{
	pt_probe_record(c, pp, NULL, rflags, enter);
}
NOKPROBE_SYMBOL(pt_probe_record_all);

/*
 * A staged hit of probe @pp on coder @c, with its flags and a staged
 * ENTER's @enter: a site whose one action runs alone (pp->alone) without
 * the walk over its actions, its word coded inline (coder/word.h). Staged
 * while armed, so run without the test.
 */
static __always_inline void pt_probe_record_staged(struct pt_coder *c, struct pt_probe *pp,
						   unsigned long rflags, u64 enter)
{
	const struct pt_action *a = pp->alone;
	struct pt_func_pcpu *pc;

	if (!a) {
		pt_probe_record_all(c, pp, rflags, enter);
		return;
	}
	pc = this_cpu_ptr(pp->func->pcpu);
	pc->hits++;
	if (a->op != PT_OP_EMIT)
		pt_run_action(c, pp->func, &pc->coder, a, NULL, enter);
	else if (pt_applies(a, pt_site_taken(pp->site, rflags)))
		pt_coder_word_inline(c, &pp->func->coder, &pc->coder, a->arg, a->value,
				     a->nbits);
}

/*
 * Runs the staged entries [@e, @end) on coder @c, in order (stage.c, the
 * stream held; interrupts off): each through its site's actions with its
 * flags, an ENTER site's with the ENTER's value found at the hit. A
 * flags-only site's entry names the site by its call's return address,
 * looked up here in the sites' hash: one whose plan was removed since it
 * was staged names no probe and is dropped, as a hit after removal is.
 * An ENTER site's holds its probe (pt_stage_enter_site). One loop with the
 * lookup and the record inline: a call for each is a cost every staged
 * hit pays. Returns the entries run.
 */
u64 pt_probe_record_stage(struct pt_coder *c, const struct pt_stage_entry *e,
			  const struct pt_stage_entry *end)
{
	struct pt_copy_hash *h = pt_ranges_sites();
	struct pt_probe *pp;
	u64 enter, n = 0;

	for (; e < end; e++) {
		if (e->flags & PT_STAGE_PROBE) {
			pp = (struct pt_probe *)e->ret;
			enter = e->flags & PT_STAGE_NO_ENTER ? PT_ENTER_IMPLICIT : e->enter;
		} else {
			pp = h ? pt_copy_hash_site(h, e->ret) : NULL;
			if (unlikely(!pp))
				continue;
			enter = PT_ENTER_FROM_REGS;
		}
		pt_probe_record_staged(c, pp, e->flags, enter);
		n++;
	}
	return n;
}
NOKPROBE_SYMBOL(pt_probe_record_stage);

int pt_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	pt_probe_hit(container_of(p, struct pt_probe, kp), p, regs);
	return 0;
}
NOKPROBE_SYMBOL(pt_pre_handler);
