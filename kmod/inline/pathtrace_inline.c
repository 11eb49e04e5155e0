// SPDX-License-Identifier: GPL-2.0
/*
 * pathtrace_inline - the template of the modules `pathtracectl enable
 * --inline` generates (docs/inline.md). Userspace adds the copies of live
 * functions (.text.pt_inline) and fills the table below; this code only
 * turns the table into a livepatch whose functions are the copies.
 *
 * Table: entries of four words { name, object name (NULL: vmlinux), copy,
 * sympos }, ended by an entry whose name is NULL. The template's own table
 * is empty: loaded as built, it refuses to load (-EINVAL).
 */
#define pr_fmt(fmt) "pathtrace_inline: " fmt

#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "pathtrace_abi.h"
#include "pathtrace_inline.h"

asm(".pushsection .pt_inline, \"a\"\n"
	".balign 8\n"
	"pt_inline_table:\n"
	".zero 32\n"
	".popsection\n");

/*
 * The copies' edge counters (docs/inline.md, "Counters (edges mode)"):
 * per-CPU memory this module allocates at init, in pieces of
 * PT_INLINE_PIECE_BYTES (alloc_percpu's limit is near), each copy's
 * counters inside one piece. enable writes the bytes they span in
 * pt_inline_counter_bytes and gives pt_inline_pieces a slot per piece,
 * where the copies read their piece's base. pathtrace.ko reaches the
 * counters through pt_inline_counters (symbol_get, which holds this module
 * while it counts).
 */
asm(".pushsection .pt_inline_counters, \"a\"\n"
	".balign 8\n"
	"pt_inline_counter_bytes:\n"
	".quad 0\n"
	".popsection\n"
	".pushsection .pt_inline_pieces, \"aw\"\n"
	".balign 8\n"
	"pt_inline_pieces:\n"
	".quad 0\n"
	".popsection\n");

/*
 * What the copies' sites call (pathtrace.ko's inline_hit.S; docs/inline.md,
 * "Sites as calls", "The stage"): referenced here so that every generated
 * module imports them, with their symbol versions, and holds pathtrace.ko
 * while it is loaded.
 */
static void (*const pt_inline_hit_ref)(void) __used = pt_inline_hit;
static void (*const pt_inline_stage_ref)(void) __used = pt_inline_stage;

/* What the copies keep their calls and count their activations in (kmod/frames.c): imported the same way. */
static unsigned long __percpu *const pt_inline_frame_ref __used = &pt_inline_frame;
static int __percpu *const pt_inline_depth_ref __used = &pt_inline_depth;
static bool __percpu *const pt_inline_depth_known_ref __used = &pt_inline_depth_known;
static unsigned long __percpu *const pt_inline_frames_saved_ref __used = pt_inline_frames_saved;

static unsigned long pt_nr_pieces(void)
{
	return DIV_ROUND_UP(pt_inline_counter_bytes, PT_INLINE_PIECE_BYTES);
}

void __percpu *pt_inline_counters(unsigned long off, unsigned long len)
{
	unsigned long piece = off / PT_INLINE_PIECE_BYTES;

	if (off > pt_inline_counter_bytes || len > pt_inline_counter_bytes - off ||
	    off % PT_INLINE_PIECE_BYTES + len > PT_INLINE_PIECE_BYTES)
		return NULL;
	return (char __percpu *)pt_inline_pieces[piece] + off % PT_INLINE_PIECE_BYTES;
}
EXPORT_SYMBOL_GPL(pt_inline_counters);

static void pt_free_pieces(void)
{
	unsigned long i;

	for (i = 0; i < pt_nr_pieces(); i++) {
		free_percpu(pt_inline_pieces[i]);
		pt_inline_pieces[i] = NULL;
	}
}

/* Every piece whole but the last, which holds what is left. */
static int pt_alloc_pieces(void)
{
	unsigned long i, left = pt_inline_counter_bytes;

	for (i = 0; i < pt_nr_pieces(); i++) {
		unsigned long n = min_t(unsigned long, left, PT_INLINE_PIECE_BYTES);

		pt_inline_pieces[i] = __alloc_percpu(n, sizeof(u64));
		if (!pt_inline_pieces[i]) {
			pt_free_pieces();
			return -ENOMEM;
		}
		left -= n;
	}
	return 0;
}

static struct klp_patch pt_patch;
static struct klp_object *pt_objs;
static struct klp_func *pt_funcs;

static bool pt_same_obj(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int __init pt_inline_init(void)
{
	unsigned int n = 0, nobjs = 0, i, o, f = 0;
	int err;

	while (pt_inline_table[n].name)
		n++;
	if (!n) {
		pr_err("no functions: only modules written by pathtracectl enable --inline load\n");
		return -EINVAL;
	}
	/* at most one object per entry, one terminator per object */
	pt_objs = kcalloc(n + 1, sizeof(*pt_objs), GFP_KERNEL);
	pt_funcs = kcalloc(2 * n, sizeof(*pt_funcs), GFP_KERNEL);
	if (!pt_objs || !pt_funcs) {
		err = -ENOMEM;
		goto fail;
	}
	err = pt_alloc_pieces();
	if (err)
		goto fail;
	for (i = 0; i < n; i++) {
		for (o = 0; o < nobjs; o++)
			if (pt_same_obj(pt_objs[o].name, pt_inline_table[i].objname))
				break;
		if (o < nobjs)
			continue;
		/* a new object: its functions, contiguous, then a zero entry */
		pt_objs[nobjs].name = pt_inline_table[i].objname;
		pt_objs[nobjs].funcs = &pt_funcs[f];
		for (o = i; o < n; o++) {
			if (!pt_same_obj(pt_inline_table[o].objname, pt_inline_table[i].objname))
				continue;
			pt_funcs[f].old_name = pt_inline_table[o].name;
			pt_funcs[f].new_func = pt_inline_table[o].copy;
			pt_funcs[f].old_sympos = pt_inline_table[o].sympos;
			f++;
		}
		f++;
		nobjs++;
	}
	pt_patch.mod = THIS_MODULE;
	pt_patch.objs = pt_objs;
	err = klp_enable_patch(&pt_patch);
	if (err)
		goto fail_pieces;
	pr_info("%u functions run as copies (%u objects)\n", n, nobjs);
	return 0;
fail_pieces:
	pt_free_pieces();
fail:
	kfree(pt_funcs);
	kfree(pt_objs);
	return err;
}

static void __exit pt_inline_exit(void)
{
	/* livepatch let go of the module: the patch is disabled, no copy runs */
	pt_free_pieces();
	kfree(pt_funcs);
	kfree(pt_objs);
}

module_init(pt_inline_init);
module_exit(pt_inline_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pathtrace: copies of live functions run in their place");
MODULE_INFO(livepatch, "Y");
