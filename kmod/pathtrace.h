/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pathtrace.h - what the parts of pathtrace.ko share.
 *
 *   main.c      control device and ioctls (the control mutex lives there)
 *   plan.c      copying and validating plan blobs
 *   probes.c    turning a plan into kprobes and back
 *   uprobes.c   a user plan's (PT_PLAN_USER) probes: uprobes on its file
 *   handlers.c  the kprobe pre_handler: a site's actions
 *   conds.h     a site's branch condition and which actions it runs
 *   stream.c    each CPU's stream coder over the ring buffer, hotplug
 *   compat.h    what differs between the kernels it builds for
 *   counts.c    counters and path counts into the stream
 *   profile.c   path profiles counted in the kernel
 *   osp.c       online subpath profiling of path profiles
 *   ranges.c    where traced code is
 *   copy_hash.h the hashes of the inline copies' return addresses (ranges.c's)
 *   frames.c    the traced frame an ENTER from untraced code runs under
 *   missed.c    placing the probe hits kprobes skipped
 *   implicit.c  entries the regenerator knows without an ENTER record
 *   inline_sites.c, inline_hit.S  sites as calls in an inline copy
 *   stage.c     the per-CPU stage of those sites: the flags-only ones, ENTERs
 */
#ifndef PATHTRACE_KMOD_H
#define PATHTRACE_KMOD_H

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/types.h>
#include <linux/uprobes.h>

#include "pathtrace_abi.h"
#include "../trace-format/coder/coder.h"

/* Limits: a plan blob, and the counters one COUNTERS record can carry. */
#define PT_PLAN_MAX_BYTES	(16u << 20)
#define PT_MAX_COUNTERS		480
#define PT_MAX_IMPLICIT		65536
/* Kernel and module text lie in the top 2 GiB (-mcmodel=kernel). */
#define PT_KERNEL_TEXT_MIN	0xffffffff80000000ull

/*
 * One probe per distinct probed address of a function: a kprobe, or for a
 * user plan a uprobe consumer (uprobes.c). A plan site and a verify site
 * at the same address share it, so their order is the module's (see
 * handlers.c), never the kprobe aggregation order.
 */
struct pt_probe {
	struct kprobe kp;		/* a kernel plan's */
	struct uprobe_consumer uc;	/* a user plan's */
	struct uprobe *uprobe;		/* uc's registration, where the kernel has one */
	unsigned long addr;		/* kernel text, or the user file's virtual address */
	struct pt_func *func;
	const struct pt_site *site;	/* NULL: verify only */
	s64 block;			/* verify block id, or -1 */
	bool flags_only;		/* its actions read no register but the flags */
	/* a staged site's one action, when it runs alone (inline_sites.c) */
	const struct pt_action *alone;
	unsigned long missed_seen;	/* kp.nmissed already placed (missed.c) */
};

/* One function on one CPU: statistics and its stream coder state. */
struct pt_func_pcpu {
	u64 hits;
	struct pt_coder_func_cpu coder;	/* bytes, dropped, context */
};

/* One installed plan. */
/*
 * A PT_PLAN_PROFILE function's path counts on one CPU (profile.c): up to
 * 2^PT_PROFILE_DENSE_BITS paths a plain array indexed by path number
 * (2^bits entries), more a hash table of path numbers (open addressing, a
 * bounded probe); what fits in neither is counted in overflow, never
 * dropped silently. A PT_PLAN_PPP function's: nr_ppp counters indexed by
 * PPP id - ppp_min, then one for every other path.
 */
#define PT_PROFILE_DENSE_BITS	9
#define PT_PROFILE_SLOTS	256

struct pt_path_slot {
	u64 path;
	u64 count;		/* 0: empty */
};

struct pt_profile {
	u64 lost;		/* path ends not counted: a context switch cut the path */
	u64 overflow;		/* path ends not counted: no room */
	union {		/* profile_size entries */
		DECLARE_FLEX_ARRAY(u64, count);
		DECLARE_FLEX_ARRAY(struct pt_path_slot, slot);
	};
};

struct pt_func {
	struct list_head node;		/* in pt_funcs, under pt_ctl_mutex */
	u32 func_id;
	struct pt_plan *plan;		/* the validated blob, as userspace sent it */
	u32 plan_len;
	const struct pt_site *sites;	/* into plan */
	const struct pt_action *actions;
	const struct pt_verify_site *verify;
	u32 site_size, action_size, verify_size;
	struct pt_probe *probes;
	u32 nr_probes;
	struct pt_func_pcpu __percpu *pcpu;
	u64 __percpu *counters;		/* nr_counters per CPU, or NULL */
	u64 __percpu *counts_taken;	/* nr_counters per CPU: what a flush takes */
	bool inline_counters;		/* counters are an inline module's (PT_ADD_INLINE) */
	bool counts_only;		/* only PT_OP_COUNT, no verify: writes no record */
	struct pt_profile __percpu *profile;	/* PT_PLAN_PROFILE: path counts, or NULL */
	u32 profile_size;		/* count[] entries (dense) or slot[] entries (hash) */
	u8 profile_bits;		/* its path numbers' width (PATH_EMIT nbits) */
	const struct pt_ppp_slot *ppp;	/* PT_PLAN_PPP: into plan, nr_ppp of them */
	u32 nr_ppp, ppp_size;
	struct pt_implicit *implicit;	/* into plan; caller_id may be retired */
	u32 nr_implicit, implicit_size;
	/* what the stream coder reads: the word tables, into plan */
	struct pt_coder_func coder;
	u32 *ctx_first;			/* where each row's words begin, or NULL */
	/* PT_PLAN_CTX_SWAP: per row its top code (then its word), and per CPU its last */
	u32 *ctx_top;
	struct pt_ctx_last __percpu *ctx_last;
	u64 missed;			/* hits skipped since START, placed */
	u64 missed_carry;		/* skipped, their LOSS refused: unplaced */
	u64 missed_since;		/* placed up to here (mono ns) */
	bool inline_missed;		/* a site's call skipped since the last sweep */
	/* PT_PLAN_USER: the ELF file (held), virtual address - file offset */
	struct file *user_file;
	u64 user_off_delta;
	/* --pid: the one address space its uprobes apply to (mmgrab), or NULL */
	struct mm_struct *user_mm;
	/* PT_ADD_INLINE_SITES: its copy, what its calls return to, its sites */
	unsigned long copy_start, copy_end;
	struct pt_inline_ret *inline_rets;	/* hashed in ranges.c */
	u32 nr_inline_rets;
	struct pt_inline_site *inline_sites;	/* sorted by copy address */
	u32 nr_inline_sites;
	u32 nr_staged;			/* sites that stage (stage.c): pt_inline_stage's, ENTERs */
	bool keeps_frames;		/* PT_ADD_INLINE_FRAMES: its copy keeps pt_inline_frame */
};

/* An address in an inline copy a call returns to, and the original's it stands for. */
struct pt_inline_ret {
	unsigned long copy, orig;
};

/* Where a site's call in an inline copy returns, and the site's probe. */
struct pt_inline_site {
	unsigned long copy;
	struct pt_probe *pp;
};

static inline const struct pt_site *pt_site_at(const struct pt_func *f, u32 i)
{
	return (const void *)((const u8 *)f->sites + (size_t)i * f->site_size);
}

static inline const struct pt_action *pt_action_at(const struct pt_func *f,
						   u32 i)
{
	return (const void *)((const u8 *)f->actions + (size_t)i * f->action_size);
}

static inline const struct pt_verify_site *pt_verify_at(const struct pt_func *f,
							u32 i)
{
	return (const void *)((const u8 *)f->verify + (size_t)i * f->verify_size);
}

static inline const struct pt_ppp_slot *pt_ppp_at(const struct pt_func *f, u32 i)
{
	return (const void *)((const u8 *)f->ppp + (size_t)i * f->ppp_size);
}

/* A path profile's counts are a plain array (dense or PPP), not the hash. */
static inline bool pt_profile_dense(const struct pt_func *f)
{
	return f->nr_ppp || f->profile_bits <= PT_PROFILE_DENSE_BITS;
}

/* The path whose count is entry i of pr: by Ball-Larus number, PPP's others as PT_PATH_OTHER. */
static inline u64 pt_profile_path(const struct pt_func *f, const struct pt_profile *pr, u32 i)
{
	if (f->nr_ppp)
		return i < f->nr_ppp ? pt_ppp_at(f, i)->path : PT_PATH_OTHER;
	return pt_profile_dense(f) ? i : READ_ONCE(pr->slot[i].path);
}

static inline const struct pt_ctx_word *pt_ctx_word_at(const struct pt_func *f, u32 i)
{
	return (const void *)((const u8 *)f->coder.ctx_words + (size_t)i * f->coder.ctx_word_size);
}

static inline const struct pt_path_code *pt_path_code_at(const struct pt_func *f, u32 i)
{
	return (const void *)((const u8 *)f->coder.path_codes +
			      (size_t)i * f->coder.path_code_size);
}

static inline const struct pt_path_range *pt_path_range_at(const struct pt_func *f, u32 i)
{
	return (const void *)((const u8 *)f->coder.path_ranges +
			      (size_t)i * f->coder.path_range_size);
}

static inline struct pt_implicit *pt_implicit_at(const struct pt_func *f, u32 i)
{
	return (void *)((u8 *)f->implicit + (size_t)i * f->implicit_size);
}

static inline unsigned long pt_region_base(const struct pt_func *f, u16 region)
{
	return region == PT_REGION_COLD ? f->plan->cold_addr : f->plan->addr;
}

/* plan.c */
struct pt_func *pt_plan_load(const void __user *ublob, u32 len, u32 add_flags,
			     u64 inline_counters);
void pt_func_free(struct pt_func *f);

/* inline_sites.c */
int pt_inline_sites_attach(struct pt_func *f, const struct pt_plan_arg *a);
void pt_inline_sites_free(struct pt_func *f);
struct pt_probe *pt_inline_fast(unsigned long ret, unsigned long rflags, unsigned long sp);
void pt_inline_site_hit(struct pt_probe *pp, struct pt_regs *regs);

/* probes.c */
int pt_probes_build(struct pt_func *f);
int pt_probes_register(struct pt_func *f);
void pt_probes_unregister(struct pt_func **funcs, unsigned int n);
u32 pt_probes_optimized(const struct pt_func *f);

/* implicit.c */
bool pt_implicit_entry(const struct pt_func *f, unsigned long ret_addr);
void pt_implicit_installed(struct list_head *funcs, struct pt_func *f);
void pt_implicit_removed(struct pt_func *f);

/* uprobes.c */
int pt_uprobes_attach(struct pt_func *f, int fd, u64 off_delta, pid_t pid);
void pt_uprobes_detach(struct pt_func *f);
bool pt_uprobes_same_file(const struct pt_func *f, const struct pt_func *g);
int pt_uprobes_register(struct pt_func *f);
void pt_uprobes_unregister(struct pt_func **funcs, unsigned int n);
/* User plans whose uprobes are registered (under pt_ctl_mutex; read anywhere). */
extern unsigned int pt_user_plans;

/* task_events.c: FORK and EXEC records from the sched tracepoints (docs/user.md). */
int pt_task_events_init(void);
void pt_task_events_exit(void);

/* handlers.c */
void pt_probe_hit(struct pt_probe *pp, struct kprobe *p, struct pt_regs *regs);
void pt_probe_hit_flags(struct pt_probe *pp, unsigned long rflags);
/* An ENTER's value (handlers.c pt_enter_value): none is written (an implicit entry). */
#define PT_ENTER_IMPLICIT	(1ull << 32)
/* ... or its frame needs a walk, which needs the registers */
#define PT_ENTER_NEEDS_WALK	(2ull << 32)
/* pt_probe_record's @enter when the ENTER's value is found from the registers */
#define PT_ENTER_FROM_REGS	(~0ull)
u64 pt_enter_inline_value(struct pt_func *f, unsigned long sp, struct pt_regs *regs);

/*
 * An entry of the per-CPU stage (stage.c). pt_inline_stage writes flags
 * and enter as one 8-byte word: the site's flags, whose upper half is 0,
 * and ret, where the site's call returns, which names the site. An ENTER
 * site's entry (pt_stage_enter_site) holds its probe in ret instead,
 * marked PT_STAGE_PROBE among the flags, and its ENTER's value in enter,
 * or PT_STAGE_NO_ENTER among the flags for an implicit entry: bits that
 * are 0 in RFLAGS.
 */
struct pt_stage_entry {
	unsigned long ret;	/* where the site's call returns, or its probe */
	u32 flags;		/* the site's flags */
	u32 enter;		/* an ENTER site's: pt_enter_inline_value's */
};

#define PT_STAGE_NO_ENTER	(1u << 31)
#define PT_STAGE_PROBE		(1u << 30)

u64 pt_probe_record_stage(struct pt_coder *c, const struct pt_stage_entry *e,
			  const struct pt_stage_entry *end);
int pt_pre_handler(struct kprobe *p, struct pt_regs *regs);

/* stream.c */
extern bool pt_armed;
int pt_stream_init(void);
void pt_stream_exit(void);
int pt_stream_alloc(unsigned long bytes_per_cpu);
bool pt_stream_ready(void);
bool pt_stream_cpu_empty(unsigned int cpu);
bool pt_stream_half_full(void);
void pt_stream_reset(void);
void pt_stream_flush_all(void);
int pt_stream_read_page(unsigned int cpu, void __user *ubuf, u32 buf_len,
			u32 *out_len);
void pt_stream_totals(u64 *records, u64 *dropped);

bool pt_stream_busy(void);
u64 pt_stream_owner(struct kprobe *p, unsigned int cpu, u64 *gen);
struct pt_coder *pt_stream_coder(u64 owner, u64 gen);
void pt_stream_hold(void);
void pt_stream_release(void);
bool pt_stream_write(struct pt_func *f, u16 type, u32 arg, const void *body,
		     unsigned int len);

/* counts.c */
void pt_counts_flush_counters(struct pt_func *f);
void pt_counts_reset_inline(struct pt_func *f);
void pt_counts_flush_paths(struct pt_func *f);

/* frames.c */
int pt_frames_installing(const struct pt_func *f);
void pt_frames_removed(const struct pt_func *f);
u32 pt_frames_find(struct pt_regs *regs, unsigned long ret);
u64 pt_frames_named(unsigned long sp);
extern atomic_t pt_framed_plans;
DECLARE_PER_CPU(unsigned long, pt_inline_frame);

/* Inline: each ENTER asks, and a call is a cost every hit pays. */
static __always_inline bool pt_frames_wanted(void)
{
	return atomic_read(&pt_framed_plans) > 0;
}

/*
 * An activation of traced code begins (a copy's ENTER site, run or not):
 * the calls in flight lie outside it. Interrupts off.
 */
static __always_inline void pt_frames_entered(void)
{
	this_cpu_write(pt_inline_frame, 0);
}
void pt_frames_reset(void);
void pt_frames_totals(struct pt_stats *s);
int pt_frames_init(void);
/* The context-switch tracepoint (frames.c finds it; stage.c attaches to it too). */
extern struct tracepoint *pt_sched_switch_tp;
void pt_frames_exit(void);

int pt_ranges_rebuild(struct list_head *funcs, const struct pt_func *extra);
void pt_ranges_forget(const struct pt_func *f);
void pt_ranges_free(void);
int pt_ranges_init(void);
void pt_ranges_exit(void);
unsigned long pt_ranges_caller(unsigned long addr);
/* Cleared in pt_ranges_caller's answer for an address that is not traced (text has it set). */
#define PT_CALLER_UNTRACED	(1ul << 63)

/* Whether pt_ranges_caller's answer @caller is traced kernel text (the top 4 GiB). */
static inline bool pt_caller_traced(unsigned long caller)
{
	return caller >> 32 == 0xffffffffu;
}

int pt_osp_config(u32 entries);
void pt_osp_reset(void);
void pt_osp_exit(void);
void pt_osp_path_end(unsigned int kind, u64 owner, u32 func_id, u64 path);
long pt_osp_read(struct pt_subpaths_read *r);
int pt_profile_alloc(struct pt_func *f);
size_t pt_profile_bytes(const struct pt_func *f);
long pt_profile_read(struct pt_func *f, struct pt_paths_read *r);
void pt_profile_hit(struct pt_func *f, struct kprobe *p, const struct pt_site *s,
		    struct pt_regs *regs);

/* stage.c */
struct pt_coder *pt_stage_enter(struct kprobe *p);
bool pt_stage_enter_site(struct pt_probe *pp, unsigned long rflags, unsigned long sp,
			 struct pt_regs *regs);
void pt_stage_drain_all(void);
int pt_stage_installing(const struct pt_func *f);
void pt_stage_removed(const struct pt_func *f);
void pt_stage_reset(void);
u64 pt_stage_total(void);
int pt_stage_init(void);
void pt_stage_exit(void);

/* missed.c */
void pt_missed_reset(struct list_head *funcs);
bool pt_missed_sweep(struct list_head *funcs);
void pt_missed_sweep_func(struct pt_func *f, u64 before);
u64 pt_missed_total(void);
bool pt_missed_pending(void);

#endif
