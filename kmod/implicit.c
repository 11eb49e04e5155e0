// SPDX-License-Identifier: GPL-2.0
/*
 * implicit.c - entries the regenerator knows without an ENTER record.
 *
 * A plan may list return addresses of direct call sites in other traced
 * functions (struct pt_implicit): walking such a caller, the regenerator
 * reaches the call and knows the callee was entered, so its ENTER record
 * (a fifth of a witness trace's bytes per activation) is left out. That
 * holds only while the caller's own plan is installed: a caller running
 * untraced would leave the callee's bits without any entry. So an entry is
 * implicit only while its caller's id is in pt_installed_ids, which is set
 * once a plan's probes are all armed and cleared before they are removed;
 * an entry naming an id that a different function now holds is retired
 * when that function is installed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/kprobes.h>
#include <linux/list.h>

#include "pathtrace.h"

static DECLARE_BITMAP(pt_installed_ids, PT_IMPLICIT_MAX_ID);

/* Whether ret is inside f's code (either part). */
static bool pt_func_contains(const struct pt_func *f, u64 ret)
{
	const struct pt_plan *pl = f->plan;

	return (ret > pl->addr && ret <= pl->addr + pl->len) ||
	       (pl->cold_addr && ret > pl->cold_addr &&
		ret <= pl->cold_addr + pl->cold_len);
}

/* Handler side: true when f's entry from ret_addr needs no ENTER record. */
bool pt_implicit_entry(const struct pt_func *f, unsigned long ret_addr)
{
	u32 lo = 0, hi = f->nr_implicit;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		const struct pt_implicit *m = pt_implicit_at(f, mid);

		if (m->ret == ret_addr) {
			u32 caller = READ_ONCE(m->caller_id);

			return caller < PT_IMPLICIT_MAX_ID &&
			       test_bit(caller, pt_installed_ids);
		}
		if (m->ret < ret_addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}
NOKPROBE_SYMBOL(pt_implicit_entry);

/* Retires m: its ENTER is written again from now on. */
static void pt_implicit_retire(struct pt_implicit *m)
{
	WRITE_ONCE(m->caller_id, PT_IMPLICIT_MAX_ID);
}

/*
 * f's probes are armed (caller holds pt_ctl_mutex; f is not on funcs yet):
 * entries that name f's id but not a call site in f are retired, as are
 * f's own that name an installed function they are not in; then f counts
 * as installed.
 */
void pt_implicit_installed(struct list_head *funcs, struct pt_func *f)
{
	struct pt_func *g, *c;
	u32 i;

	list_for_each_entry(g, funcs, node) {
		for (i = 0; i < g->nr_implicit; i++) {
			struct pt_implicit *m = pt_implicit_at(g, i);

			if (m->caller_id == f->func_id && !pt_func_contains(f, m->ret))
				pt_implicit_retire(m);
		}
	}
	for (i = 0; i < f->nr_implicit; i++) {
		struct pt_implicit *m = pt_implicit_at(f, i);

		if (m->caller_id == f->func_id) {
			if (!pt_func_contains(f, m->ret))
				pt_implicit_retire(m);
			continue;
		}
		list_for_each_entry(c, funcs, node)
			if (c->func_id == m->caller_id && !pt_func_contains(c, m->ret))
				pt_implicit_retire(m);
	}
	if (f->func_id < PT_IMPLICIT_MAX_ID)
		set_bit(f->func_id, pt_installed_ids);
}

/* Before f's probes go: entries from its call sites write ENTER again. */
void pt_implicit_removed(struct pt_func *f)
{
	if (f->func_id < PT_IMPLICIT_MAX_ID)
		clear_bit(f->func_id, pt_installed_ids);
}
