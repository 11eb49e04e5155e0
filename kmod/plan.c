// SPDX-License-Identifier: GPL-2.0
/*
 * plan.c - copy a plan blob from userspace and validate every byte of it.
 *
 * A plan that passes describes only instruction sites inside the function
 * the kernel knows under that name and address (checked with
 * sprint_symbol), with well-formed actions. Whether an address may carry a
 * kprobe at all (blacklist, noinstr, mid-instruction, static-key site) is
 * left to register_kprobe, whose errno is passed on unchanged. A user
 * plan (PT_PLAN_USER) names no kernel symbol: its places are checked
 * against its file (uprobes.c) and uprobe_register has the last word.
 *
 * Errors: -EINVAL malformed field or layout, -E2BIG unknown non-zero tail
 * or too large, -EPROTONOSUPPORT other ABI major, -ENOENT name and address
 * do not match a kernel symbol, -ERANGE symbol size differs from len or a
 * site lies outside its region, -EPERM the function is pathtrace's own,
 * -EFAULT, -ENOMEM.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "pathtrace.h"
#include "inline/pathtrace_inline.h"

/* Bytes [from, to) of p must be zero (a newer writer's fields we do not know). */
static int pt_tail_zero(const void *p, size_t from, size_t to)
{
	if (to > from && memchr_inv((const u8 *)p + from, 0, to - from))
		return -E2BIG;
	return 0;
}

static u32 pt_region_len(const struct pt_plan *pl, u16 region)
{
	return region == PT_REGION_COLD ? pl->cold_len : pl->len;
}

/* offset..offset+n must lie in the region; the region must exist. */
static int pt_check_place(const struct pt_plan *pl, u16 region, u32 offset,
			  u32 n)
{
	u32 rlen;

	if (region != PT_REGION_MAIN && region != PT_REGION_COLD)
		return -EINVAL;
	rlen = pt_region_len(pl, region);
	if (!rlen)
		return -EINVAL;
	if (offset >= rlen || n > rlen - offset)
		return -ERANGE;
	return 0;
}

static int pt_check_header(const struct pt_plan *pl, u32 len)
{
	size_t n;

	if (pl->size < sizeof(*pl) || pl->size > len)
		return -EINVAL;
	if (pl->abi_major != PT_ABI_MAJOR)
		return -EPROTONOSUPPORT;
	if (pt_tail_zero(pl, sizeof(*pl), pl->size))
		return -E2BIG;
	if (pl->total_len != len)
		return -EINVAL;
	if (pl->flags & ~(PT_PLAN_VERIFY | PT_PLAN_PROFILE | PT_PLAN_PPP | PT_PLAN_CTX_SWAP |
			  PT_PLAN_CTX_RESTORE | PT_PLAN_FRAMED | PT_PLAN_USER))
		return -EINVAL;
	/* a user function's calls are blocked: no frames, no implicit entries */
	if ((pl->flags & PT_PLAN_USER) && ((pl->flags & PT_PLAN_FRAMED) || pl->nr_implicit))
		return -EINVAL;
	/* framed calls are the witness encoding's */
	if ((pl->flags & PT_PLAN_FRAMED) &&
	    (pl->mode != PT_MODE_TRACE || pl->encoding != PT_ENC_WITNESS))
		return -EINVAL;
	/* adapting or restored, they are context words */
	if ((pl->flags & (PT_PLAN_CTX_SWAP | PT_PLAN_CTX_RESTORE)) && !pl->nr_ctx_words)
		return -EINVAL;
	/* PPP numbers a path profile's interesting paths: its fields, or none */
	if (pl->flags & PT_PLAN_PPP) {
		if (!(pl->flags & PT_PLAN_PROFILE) || !pl->nr_ppp ||
		    pl->nr_ppp > PT_PPP_MAX || pl->ppp_size < sizeof(struct pt_ppp_slot))
			return -EINVAL;
	} else if (pl->nr_ppp || pl->ppp_min || pl->ppp_size) {
		return -EINVAL;
	}
	/* a path profile counts path numbers: a paths plan with nothing to record */
	if ((pl->flags & PT_PLAN_PROFILE) &&
	    (pl->mode != PT_MODE_PATHS || (pl->flags & PT_PLAN_VERIFY) || pl->nr_implicit))
		return -EINVAL;
	if (pl->reserved0 || pl->reserved1 || memchr_inv(pl->reserved, 0, sizeof(pl->reserved)))
		return -EINVAL;
	/* witness words by context: a witness trace's, with codes, words of a size we know */
	if ((pl->nr_ctx_codes || pl->nr_ctx_words || pl->ctx_word_size) &&
	    (pl->mode != PT_MODE_TRACE || pl->encoding != PT_ENC_WITNESS ||
	     pl->nr_ctx_codes < 2 || pl->nr_ctx_codes > PT_PLAN_MAX_BYTES / sizeof(u32) ||
	     pl->nr_ctx_words > PT_PLAN_MAX_BYTES / sizeof(struct pt_ctx_word) ||
	     (pl->nr_ctx_words && pl->ctx_word_size < sizeof(struct pt_ctx_word)) ||
	     (!pl->nr_ctx_words && pl->ctx_word_size)))
		return -EINVAL;
	/* path codes: a paths trace's, a range at least, entries of a size we know */
	if ((pl->nr_path_codes || pl->path_code_size || pl->nr_path_ranges ||
	     pl->path_range_size || pl->nr_paths) &&
	    (pl->mode != PT_MODE_PATHS || (pl->flags & PT_PLAN_PROFILE) || !pl->nr_paths ||
	     !pl->nr_path_ranges || pl->nr_path_ranges > PT_PATH_CODES_MAX ||
	     pl->nr_path_codes > PT_PATH_CODES_MAX ||
	     pl->path_range_size < sizeof(struct pt_path_range) ||
	     (pl->nr_path_codes && pl->path_code_size < sizeof(struct pt_path_code)) ||
	     (!pl->nr_path_codes && pl->path_code_size)))
		return -EINVAL;
	if (pl->nr_implicit > PT_MAX_IMPLICIT ||
	    (pl->nr_implicit && pl->implicit_size < sizeof(struct pt_implicit)) ||
	    (pl->nr_implicit && pl->mode == PT_MODE_EDGES))	/* counts need ENTERs */
		return -EINVAL;
	switch (pl->mode) {
	case PT_MODE_TRACE:
		if (pl->encoding != PT_ENC_WITNESS && pl->encoding != PT_ENC_BITS)
			return -EINVAL;
		break;
	case PT_MODE_PATHS:
		if (pl->encoding != PT_ENC_PATH)
			return -EINVAL;
		break;
	case PT_MODE_EDGES:
		if (pl->encoding)	/* counters have no encoding */
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	n = strnlen(pl->name, PT_NAME_MAX);
	if (!n || n == PT_NAME_MAX)
		return -EINVAL;
	if (!pl->addr || !pl->len)
		return -EINVAL;
	if (!pl->cold_addr != !pl->cold_len)
		return -EINVAL;
	if (pl->site_size < sizeof(struct pt_site) ||
	    pl->action_size < sizeof(struct pt_action) ||
	    pl->verify_size < sizeof(struct pt_verify_site))
		return -EINVAL;
	if (!(pl->flags & PT_PLAN_VERIFY) != !pl->nr_verify)
		return -EINVAL;
	if (!pl->nr_sites && !pl->nr_verify)
		return -EINVAL;
	if (pl->nr_counters > PT_MAX_COUNTERS)
		return -E2BIG;
	return 0;
}

/* The arrays must exactly fill the blob after the header. */
static int pt_check_layout(struct pt_func *f, u32 len)
{
	const struct pt_plan *pl = f->plan;
	u64 s, a, v, m, p, cn, cw, pc, pr, end;

	s = (u64)pl->nr_sites * pl->site_size;
	a = (u64)pl->nr_actions * pl->action_size;
	v = (u64)pl->nr_verify * pl->verify_size;
	m = (u64)pl->nr_implicit * pl->implicit_size;
	p = (u64)pl->nr_ppp * pl->ppp_size;
	cn = (u64)pl->nr_ctx_codes * sizeof(u32);
	cw = (u64)pl->nr_ctx_words * pl->ctx_word_size;
	pc = (u64)pl->nr_path_codes * pl->path_code_size;
	pr = (u64)pl->nr_path_ranges * pl->path_range_size;
	end = pl->size + s + a + v + m + p + cn + cw + pc + pr;	/* each term < 2^64 / 16 */
	if (end != len)
		return -EINVAL;
	f->coder.nr_path_codes = pl->nr_path_codes;
	f->coder.path_code_size = pl->path_code_size;
	f->coder.nr_path_ranges = pl->nr_path_ranges;
	f->coder.path_range_size = pl->path_range_size;
	f->coder.path_codes = (const void *)((const u8 *)pl + pl->size + s + a + v + m + p + cn + cw);
	f->coder.path_ranges = (const void *)((const u8 *)f->coder.path_codes + pc);
	f->coder.nr_ctx_codes = pl->nr_ctx_codes;
	f->coder.nr_ctx_words = pl->nr_ctx_words;
	f->coder.ctx_word_size = pl->ctx_word_size;
	f->coder.ctx_next = (const void *)((const u8 *)pl + pl->size + s + a + v + m + p);
	f->coder.ctx_words = (const void *)((const u8 *)f->coder.ctx_next + cn);
	f->ppp_size = pl->ppp_size;
	f->nr_ppp = pl->nr_ppp;
	f->ppp = (const void *)((const u8 *)pl + pl->size + s + a + v + m);
	f->implicit_size = pl->implicit_size;
	f->nr_implicit = pl->nr_implicit;
	f->implicit = (void *)((u8 *)pl + pl->size + s + a + v);
	f->site_size = pl->site_size;
	f->action_size = pl->action_size;
	f->verify_size = pl->verify_size;
	f->sites = (const void *)((const u8 *)pl + pl->size);
	f->actions = (const void *)((const u8 *)f->sites + s);
	f->verify = (const void *)((const u8 *)f->actions + a);
	return 0;
}

static int pt_check_action(const struct pt_plan *pl, const struct pt_site *s,
			   const struct pt_action *a)
{
	if (a->when > PT_WHEN_NOT_TAKEN)
		return -EINVAL;
	if (a->when != PT_WHEN_ALWAYS && s->cond == PT_COND_NONE)
		return -EINVAL;
	if (a->nbits > 64)
		return -EINVAL;
	switch (a->op) {
	case PT_OP_ENTER:
		/* The return address is at *sp only on the first instruction. */
		if (s->offset || s->region != PT_REGION_MAIN ||
		    a->when != PT_WHEN_ALWAYS || a->nbits || a->arg || a->value)
			return -EINVAL;
		return 0;
	case PT_OP_EMIT:
		/* arg: the witness code whose context words apply, or none */
		if (pl->nr_ctx_codes ? !a->arg || a->arg >= pl->nr_ctx_codes : a->arg)
			return -EINVAL;
		if (a->nbits < 64 && a->value >> a->nbits)
			return -EINVAL;
		return 0;
	case PT_OP_PATH_EMIT:
		if (a->arg)
			return -EINVAL;
		return 0;
	case PT_OP_PATH_ADD:
	case PT_OP_PATH_SET:
		if (a->arg || a->nbits)
			return -EINVAL;
		return 0;
	case PT_OP_PPP_ADD:
	case PT_OP_PPP_SET:
		if (!(pl->flags & PT_PLAN_PPP) || a->arg || a->nbits)
			return -EINVAL;
		return 0;
	case PT_OP_COUNT:
		if (a->arg >= pl->nr_counters || a->nbits || a->value)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

static int pt_check_sites(const struct pt_func *f)
{
	const struct pt_plan *pl = f->plan;
	u32 i, j;
	int err;

	for (i = 0; i < pl->nr_sites; i++) {
		const struct pt_site *s = pt_site_at(f, i);

		if (s->reserved || (s->flags & ~PT_SITE_OPTIMIZABLE))
			return -EINVAL;
		if (s->insn_len < 1 || s->insn_len > 15)
			return -EINVAL;
		if (s->cond != PT_COND_NONE && s->cond > 15)
			return -EINVAL;
		err = pt_check_place(pl, s->region, s->offset, s->insn_len);
		if (err)
			return err;
		if (!s->nr_actions || s->first_action > pl->nr_actions ||
		    s->nr_actions > pl->nr_actions - s->first_action)
			return -EINVAL;
		for (j = 0; j < s->nr_actions; j++) {
			const struct pt_action *a = pt_action_at(f, s->first_action + j);

			/* ENTER leads its site, so the handler runs it first in one pass. */
			if (j && a->op == PT_OP_ENTER)
				return -EINVAL;
			err = pt_check_action(pl, s, a);
			if (err)
				return err;
		}
		err = pt_tail_zero(s, sizeof(*s), f->site_size);
		if (err)
			return err;
	}
	for (i = 0; i < pl->nr_actions; i++) {
		err = pt_tail_zero(pt_action_at(f, i), sizeof(struct pt_action),
				   f->action_size);
		if (err)
			return err;
	}
	for (i = 0; i < pl->nr_verify; i++) {
		const struct pt_verify_site *v = pt_verify_at(f, i);

		if (v->reserved0 || v->reserved1)
			return -EINVAL;
		err = pt_check_place(pl, v->region, v->offset, 1);
		if (err)
			return err;
		err = pt_tail_zero(v, sizeof(*v), f->verify_size);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The kernel must know a symbol @name starting at @addr, at least @len
 * bytes long: sprint_symbol prints "name+0x0/0x<size>" (" [module]" after
 * it for modules). The kernel's size runs to the next symbol, padding
 * included, so a plan may describe less (an ELF st_size), never more.
 */
static int pt_check_symbol(const char *name, unsigned long addr, u32 len)
{
	char *have, *want, *end;
	unsigned long size;
	size_t n;
	int err = 0;

	have = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
	want = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
	if (!have || !want) {
		err = -ENOMEM;
		goto out;
	}
	sprint_symbol(have, addr);
	n = snprintf(want, KSYM_SYMBOL_LEN, "%s+%#lx/", name, 0ul);
	if (strncmp(have, want, n)) {
		err = -ENOENT;
		goto out;
	}
	end = strchrnul(have + n, ' ');
	*end = '\0';
	if (kstrtoul(have + n, 16, &size) || len > size)
		err = -ERANGE;
out:
	if (err == -ENOENT || err == -ERANGE)
		pr_info("plan for %s (%u bytes): the kernel's symbol there is %s\n",
			name, len, have);
	kfree(have);
	kfree(want);
	return err;
}

static int pt_check_kernel(const struct pt_plan *pl)
{
	char cold[PT_NAME_MAX + 8];
	int err;

	if (within_module(pl->addr, THIS_MODULE) ||
	    (pl->cold_addr && within_module(pl->cold_addr, THIS_MODULE)))
		return -EPERM;
	err = pt_check_symbol(pl->name, pl->addr, pl->len);
	if (err || !pl->cold_addr)
		return err;
	snprintf(cold, sizeof(cold), "%s.cold", pl->name);
	return pt_check_symbol(cold, pl->cold_addr, pl->cold_len);
}

void pt_func_free(struct pt_func *f)
{
	if (!f)
		return;
	pt_uprobes_detach(f);
	if (f->inline_counters)
		__symbol_put(PT_INLINE_COUNTERS_SYM);
	else
		free_percpu(f->counters);
	free_percpu(f->counts_taken);
	free_percpu(f->profile);
	free_percpu(f->ctx_last);
	kfree(f->ctx_top);
	kvfree(f->ctx_first);
	free_percpu(f->pcpu);
	pt_inline_sites_free(f);
	kvfree(f->probes);
	kvfree(f->plan);
	kfree(f);
}

/*
 * Copies and validates the blob; returns the function (probes built, not
 * registered) or an ERR_PTR with the errno listed at the top of this file.
 */
/* Implicit entries: sorted, each return address once, in kernel text. */
static int pt_check_implicit(struct pt_func *f)
{
	u64 prev = 0;
	u32 i;
	int err;

	for (i = 0; i < f->nr_implicit; i++) {
		const struct pt_implicit *m = pt_implicit_at(f, i);

		if (m->ret <= prev || m->ret < PT_KERNEL_TEXT_MIN || m->reserved ||
		    m->caller_id >= PT_IMPLICIT_MAX_ID)
			return -EINVAL;
		err = pt_tail_zero(m, sizeof(*m), f->implicit_size);
		if (err)
			return err;
		prev = m->ret;
	}
	return 0;
}

/* PPP slots: a path number, or PT_PATH_OTHER; growth bytes zero. */
static int pt_check_ppp(struct pt_func *f)
{
	u32 i;
	int err;

	for (i = 0; i < f->nr_ppp; i++) {
		err = pt_tail_zero(pt_ppp_at(f, i), sizeof(struct pt_ppp_slot), f->ppp_size);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Context words: sorted by (row, code), each pair once (the handler's
 * binary search), a code of the plan's, 1..PT_CTX_WORD_MAX_BITS bits that
 * hold the value, growth bytes zero.
 */
static int pt_check_ctx(struct pt_func *f)
{
	const struct pt_ctx_word *w, *prev = NULL;
	u32 i;
	int err;

	for (i = 0; i < f->coder.nr_ctx_words; i++) {
		w = pt_ctx_word_at(f, i);
		if (!w->code || w->code >= f->coder.nr_ctx_codes || !w->nbits ||
		    w->nbits > PT_CTX_WORD_MAX_BITS ||
		    (w->nbits < 32 && w->value >> w->nbits) || w->reserved0 || w->reserved1)
			return -EINVAL;
		if (prev && (prev->row > w->row || (prev->row == w->row && prev->code >= w->code)))
			return -EINVAL;
		err = pt_tail_zero(w, sizeof(*w), f->coder.ctx_word_size);
		if (err)
			return err;
		prev = w;
	}
	return 0;
}

/* Rows the coder indexes where their words begin (pt_coder_ctx_first); beyond, it searches all. */
#define PT_CTX_FIRST_ROWS_MAX	65536

/*
 * The context words' rows: where each row's words begin (up to
 * PT_CTX_FIRST_ROWS_MAX rows). PT_PLAN_CTX_SWAP: rows below
 * PT_CTX_SWAP_ROWS_MAX, each row's top code (its word of the fewest bits,
 * of those the lowest value) and that word's index, and a per-CPU last
 * code per row, none remembered (generation 0: a CPU's starts at 1).
 */
static int pt_ctx_rows_alloc(struct pt_func *f)
{
	u32 rows = pt_coder_ctx_rows(&f->coder);
	unsigned int cpu;

	if (rows && rows <= PT_CTX_FIRST_ROWS_MAX) {
		f->ctx_first = kvcalloc(rows + 1, sizeof(*f->ctx_first), GFP_KERNEL);
		if (!f->ctx_first)
			return -ENOMEM;
		pt_coder_ctx_first(&f->coder, f->ctx_first);
		f->coder.ctx_first = f->ctx_first;
	}
	f->coder.nr_ctx_rows = rows;
	if (!(f->plan->flags & PT_PLAN_CTX_SWAP))
		return 0;
	if (!rows || rows > PT_CTX_SWAP_ROWS_MAX)
		return -EINVAL;
	/* per row its top code, then its top word's index */
	f->ctx_top = kcalloc(2 * rows, sizeof(*f->ctx_top), GFP_KERNEL);
	f->ctx_last = __alloc_percpu(rows * sizeof(struct pt_ctx_last),
				     __alignof__(struct pt_ctx_last));
	if (!f->ctx_top || !f->ctx_last)
		return -ENOMEM;
	pt_coder_ctx_tops(&f->coder, f->ctx_top, f->ctx_top + rows);
	f->coder.ctx_top = f->ctx_top;
	f->coder.ctx_top_word = f->ctx_top + rows;
	for_each_possible_cpu(cpu)
		per_cpu_ptr(f->pcpu, cpu)->coder.ctx_last = per_cpu_ptr(f->ctx_last, cpu);
	return 0;
}

/*
 * Path codes: codes sorted by path, each once, below nr_paths; ranges
 * sorted by lo from 0, below nr_paths; words of 1..PT_PATH_CODE_MAX_BITS
 * bits (an escape 0: none) that hold their value; growth bytes zero. A
 * range without an escape lists every number in it, so that a path end's
 * number always has a word (the handler's binary searches find it).
 */
static int pt_check_path_codes(struct pt_func *f)
{
	const struct pt_plan *pl = f->plan;
	u32 i, k = 0;
	int err;

	for (i = 0; i < f->coder.nr_path_codes; i++) {
		const struct pt_path_code *c = pt_path_code_at(f, i);

		if (c->path >= pl->nr_paths || (i && c->path <= pt_path_code_at(f, i - 1)->path) ||
		    !c->nbits || c->nbits > PT_PATH_CODE_MAX_BITS ||
		    (c->nbits < 32 && c->value >> c->nbits) || c->reserved0 || c->reserved1)
			return -EINVAL;
		err = pt_tail_zero(c, sizeof(*c), f->coder.path_code_size);
		if (err)
			return err;
	}
	for (i = 0; i < f->coder.nr_path_ranges; i++) {
		const struct pt_path_range *r = pt_path_range_at(f, i);
		u64 end = i + 1 < f->coder.nr_path_ranges ? pt_path_range_at(f, i + 1)->lo : pl->nr_paths;
		u64 listed = 0;

		if ((i ? r->lo <= pt_path_range_at(f, i - 1)->lo : r->lo) || r->lo >= pl->nr_paths ||
		    r->esc_nbits > PT_PATH_CODE_MAX_BITS ||
		    (r->esc_nbits < 32 && r->esc_value >> r->esc_nbits) ||
		    r->reserved0 || r->reserved1)
			return -EINVAL;
		err = pt_tail_zero(r, sizeof(*r), f->coder.path_range_size);
		if (err)
			return err;
		while (k < f->coder.nr_path_codes && pt_path_code_at(f, k)->path < end) {
			k++;
			listed++;
		}
		if (!r->esc_nbits && listed != end - r->lo)
			return -EINVAL;
	}
	return 0;
}

/*
 * A plan that only counts (edges mode, no verify sites): its handler
 * touches no stream, so a profile writes nothing per event.
 */
static bool pt_counts_only(const struct pt_func *f)
{
	u32 i;

	if (f->plan->nr_verify || !f->counters)
		return false;
	for (i = 0; i < f->plan->nr_actions; i++)
		if (pt_action_at(f, i)->op != PT_OP_COUNT)
			return false;
	return true;
}

/*
 * PT_ADD_INLINE: the counters are the inline module's, off bytes into its
 * counter space as its pt_inline_counters() maps it; symbol_get holds that
 * module until pt_func_free. Returns 0, -EINVAL (not a counts-only edges
 * plan, a misaligned offset), -ENOENT (no inline module), -ERANGE (past
 * its space, or across two of its pieces).
 */
static int pt_inline_attach(struct pt_func *f, u64 off)
{
	const struct pt_plan *pl = f->plan;
	pt_inline_counters_fn fn;
	void __percpu *base;

	if (pl->mode != PT_MODE_EDGES || pl->nr_verify || !pl->nr_counters ||
	    off % sizeof(u64))
		return -EINVAL;
	fn = (pt_inline_counters_fn)__symbol_get(PT_INLINE_COUNTERS_SYM);
	if (!fn)
		return -ENOENT;
	base = fn(off, (unsigned long)pl->nr_counters * sizeof(u64));
	if (!base) {
		__symbol_put(PT_INLINE_COUNTERS_SYM);
		return -ERANGE;
	}
	f->counters = (u64 __percpu *)base;
	f->inline_counters = true;
	return 0;
}

struct pt_func *pt_plan_load(const void __user *ublob, u32 len, u32 add_flags,
			     u64 inline_counters)
{
	struct pt_func *f;
	int err;

	if (len < sizeof(struct pt_plan))
		return ERR_PTR(-EINVAL);
	if (len > PT_PLAN_MAX_BYTES)
		return ERR_PTR(-E2BIG);
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&f->node);
	f->plan = kvmalloc(len, GFP_KERNEL);
	if (!f->plan) {
		err = -ENOMEM;
		goto fail;
	}
	if (copy_from_user(f->plan, ublob, len)) {
		err = -EFAULT;
		goto fail;
	}
	f->plan_len = len;
	f->func_id = f->plan->func_id;
	f->coder.func_id = f->func_id;
	f->coder.flags = f->plan->flags;
	f->pcpu = alloc_percpu(struct pt_func_pcpu);
	if (!f->pcpu) {
		err = -ENOMEM;
		goto fail;
	}
	err = pt_check_header(f->plan, len);
	if (err)
		goto fail;
	err = pt_check_layout(f, len);
	if (err)
		goto fail;
	err = pt_check_sites(f);
	if (err)
		goto fail;
	err = pt_check_implicit(f);
	if (!err)
		err = pt_check_ppp(f);
	if (!err)
		err = pt_check_ctx(f);
	if (!err)
		err = pt_check_path_codes(f);
	if (!err)
		err = pt_ctx_rows_alloc(f);
	if (err)
		goto fail;
	/* a user plan's code is its file's: uprobes.c checks the places */
	if (!(f->plan->flags & PT_PLAN_USER))
		err = pt_check_kernel(f->plan);
	else if (add_flags & PT_ADD_INLINE)
		err = -EINVAL;
	if (err)
		goto fail;
	if (add_flags & PT_ADD_INLINE) {
		err = pt_inline_attach(f, inline_counters);
		if (err)
			goto fail;
	} else if (f->plan->nr_counters) {
		f->counters = __alloc_percpu(f->plan->nr_counters * sizeof(u64),
					     sizeof(u64));
		if (!f->counters) {
			err = -ENOMEM;
			goto fail;
		}
	}
	if (f->plan->nr_counters) {
		f->counts_taken = __alloc_percpu(f->plan->nr_counters * sizeof(u64),
						 sizeof(u64));
		if (!f->counts_taken) {
			err = -ENOMEM;
			goto fail;
		}
	}
	f->counts_only = pt_counts_only(f);
	err = pt_profile_alloc(f);
	if (err)
		goto fail;
	/* inline counters are code in the copy: no probe */
	if (!f->inline_counters)
		err = pt_probes_build(f);
	if (err)
		goto fail;
	return f;
fail:
	pt_func_free(f);
	return ERR_PTR(err);
}
