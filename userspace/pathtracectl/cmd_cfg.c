// SPDX-License-Identifier: GPL-2.0
/*
 * pathtracectl cfg FUNC --elf FILE [--dot]: a function's recovered CFG (each
 * function a glob matches, for a glob) for
 * a human (blocks as symbol+offset, edges, calls, exits, the fentry site,
 * each Jcc's condition, or the refusal and its reason), or Graphviz.
 * pathtracectl cfg FUNC --live [--module MOD] [--moddir DIR]: the same from
 * the running kernel (/proc/kallsyms, /proc/kcore, /sys/module, and the
 * module's .ko through DIR/modules.dep, DIR default /lib/modules/RELEASE).
 * Exit status: 0 recovered, 1 refused / unknown function / unreadable
 * file, 2 bad command line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <pathtrace/cfg.h>
#include <pathtrace/elfobj.h>
#include <pathtrace/error.h>
#include <pathtrace/ksyms.h>

#include "commands.h"
#include "names.h"

/* x86 condition codes by the low nibble of the Jcc opcode. */
static const char *const cond[16] = {
	"o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g",
};

/* "f+0xoff" or "f.cold+0xoff". */
static const char *where(const struct cfg *c, uint64_t a, char *buf, size_t n)
{
	if (c->cold_len && a >= c->cold_addr && a - c->cold_addr < c->cold_len)
		snprintf(buf, n, "%s.cold+0x%" PRIx64, c->name, a - c->cold_addr);
	else if (a >= c->addr && a - c->addr < c->len)
		snprintf(buf, n, "%s+0x%" PRIx64, c->name, a - c->addr);
	else
		snprintf(buf, n, "0x%" PRIx64, a);
	return buf;
}

/* What the last instruction of a block does, in words. */
static void describe_insn(const struct cfg *c, const struct cfg_insn *i, char *buf, size_t n)
{
	const char *name = i->target_name ? i->target_name : "?";
	char w[128];

	switch (i->kind) {
	case CFG_I_JCC:
		if (i->flags & CFG_IF_LEAVES)
			snprintf(buf, n, "j%s (cc %u) leaving to %s", cond[i->cc & 15], i->cc, name);
		else
			snprintf(buf, n, "j%s (cc %u) to %s", cond[i->cc & 15], i->cc,
				 where(c, i->target, w, sizeof(w)));
		break;
	case CFG_I_JMP:
		snprintf(buf, n, "jmp %s", where(c, i->target, w, sizeof(w)));
		break;
	case CFG_I_KEY:
		snprintf(buf, n, "static-key site (%u bytes), jump to %s", i->len,
			 where(c, i->target, w, sizeof(w)));
		break;
	case CFG_I_CALL:
		snprintf(buf, n, "call %s", name);
		break;
	case CFG_I_CALL_INDIRECT:
		snprintf(buf, n, "indirect call%s%s", i->target_name ? " via " : "",
			 i->target_name ? i->target_name : "");
		break;
	case CFG_I_CALL_NORETURN:
		snprintf(buf, n, "call %s (noreturn%s)", i->target_name ? name : "indirect",
			 (i->flags & CFG_IF_NORETURN_INFERRED) ? ", inferred: last instruction" : "");
		break;
	case CFG_I_RET:
		snprintf(buf, n, "return%s%s", i->target_name ? " via " : "",
			 i->target_name ? i->target_name : "");
		break;
	case CFG_I_TAIL_CALL:
		snprintf(buf, n, "tail call %s", i->target_name ? name : "(indirect)");
		break;
	case CFG_I_BUG:
		snprintf(buf, n, "BUG (ud2, path ends)");
		break;
	case CFG_I_WARN:
		snprintf(buf, n, "WARN (ud2, continues)");
		break;
	case CFG_I_FENTRY:
		snprintf(buf, n, "__fentry__ site");
		break;
	default:
		if (i->flags & CFG_IF_FAULT_FIXUP)
			snprintf(buf, n, "may fault, fixup at %s", where(c, i->target, w, sizeof(w)));
		else
			snprintf(buf, n, "falls through");
		break;
	}
}

static void print_text(const struct cfg *c)
{
	char w1[128], w2[128], d[256];
	uint32_t b, e, i;

	printf("%s: %u blocks, %u instructions, %u edges; main 0x%x bytes", c->name, c->nblocks,
	       c->ninsns, c->nedges, c->len);
	if (c->cold_len)
		printf(", cold part %s.cold 0x%x bytes", c->name, c->cold_len);
	printf("\n");
	for (i = 0; i < c->ninsns; i++)
		if (c->insns[i].kind == CFG_I_FENTRY)
			printf("fentry: %s\n", where(c, c->insns[i].addr, w1, sizeof(w1)));
	for (b = 0; b < c->nblocks; b++) {
		const struct cfg_block *bl = &c->blocks[b];
		const struct cfg_insn *last = &c->insns[bl->first_insn + bl->ninsn - 1];

		printf("B%u %s (%u insns, %u bytes)%s%s%s\n", b, where(c, bl->addr, w1, sizeof(w1)),
		       bl->ninsn, bl->size, (bl->flags & CFG_BF_ENTRY) ? " entry" : "",
		       (bl->flags & CFG_BF_CALL) ? " call" : "", (bl->flags & CFG_BF_COLD) ? " cold" : "");
		describe_insn(c, last, d, sizeof(d));
		printf("    last %s: %s\n", where(c, last->addr, w2, sizeof(w2)), d);
		for (i = bl->first_insn; i + 1 < bl->first_insn + bl->ninsn; i++)
			if (c->insns[i].kind == CFG_I_FENTRY)
				printf("    %s: __fentry__ site\n", where(c, c->insns[i].addr, w2, sizeof(w2)));
		for (e = bl->first_succ; e < bl->first_succ + bl->nsucc; e++) {
			if (c->edges[e].dst == c->nblocks)
				printf("    -> EXIT %s\n", cfg_edge_kind_name(c->edges[e].kind));
			else
				printf("    -> B%u %s\n", c->edges[e].dst, cfg_edge_kind_name(c->edges[e].kind));
		}
	}
}

static void print_dot(const struct cfg *c)
{
	char w[128], d[256];
	uint32_t b, e;

	printf("digraph \"%s\" {\n\tnode [shape=box, fontname=monospace];\n", c->name);
	for (b = 0; b < c->nblocks; b++) {
		const struct cfg_block *bl = &c->blocks[b];

		describe_insn(c, &c->insns[bl->first_insn + bl->ninsn - 1], d, sizeof(d));
		printf("\tB%u [label=\"B%u %s\\n%s\"%s];\n", b, b, where(c, bl->addr, w, sizeof(w)),
		       d, (bl->flags & CFG_BF_COLD) ? ", style=dashed" :
		       (bl->flags & CFG_BF_CALL) ? ", peripheries=2" : "");
	}
	printf("\tEXIT [shape=oval];\n");
	for (e = 0; e < c->nedges; e++) {
		const struct cfg_edge *ed = &c->edges[e];

		if (ed->dst == c->nblocks)
			printf("\tB%u -> EXIT [label=\"%s\"];\n", ed->src, cfg_edge_kind_name(ed->kind));
		else
			printf("\tB%u -> B%u [label=\"%s\"];\n", ed->src, ed->dst,
			       cfg_edge_kind_name(ed->kind));
	}
	printf("}\n");
}

static int show(const char *func, const struct cfg_input *in, int dot)
{
	struct cfg c;
	int err = cfg_build(in, &c);

	if (err == -PT_EREFUSED) {
		printf("%s: refused (%s): %s\n", func, c.refusal, c.detail);
		ctl_err(func, "refused: %s", c.refusal);
	} else if (err) {
		ctl_err(func, "%s", pt_strerror(err));
	} else if (dot) {
		print_dot(&c);
	} else {
		print_text(&c);
	}
	cfg_free(&c);
	return err ? 1 : 0;
}

static int from_elf(const char *pattern, const char *elf, int dot)
{
	struct ctl_names names;
	struct elfobj *o;
	struct cfg_input in;
	uint32_t k;
	int64_t i;
	int err, ret = 0;

	err = elfobj_open(elf, &o);
	if (err) {
		ctl_elf_err(elf, err);
		return 1;
	}
	if (ctl_names_elf(o, pattern, &names)) {
		ctl_err(pattern, "%s", pt_strerror(-PT_ENOMEM));
		elfobj_close(o);
		return 1;
	}
	if (!names.n) {
		ctl_err(pattern, "no function of %s matches", elf);
		ret = 1;
	}
	for (k = 0; k < names.n; k++) {
		const char *func = names.v[k];

		i = elfobj_find(o, func);
		if (i < 0) {
			ctl_err(func, "no such function in %s", elf);
			ret = 1;
			continue;
		}
		if (elfobj_func(o, i)->parent != ELFOBJ_NONE) {
			ctl_err(func, "is the .cold part of %s: ask for that function",
				elfobj_func(o, elfobj_func(o, i)->parent)->name);
			ret = 1;
			continue;
		}
		err = elfobj_input(o, i, &in);
		if (err) {
			ctl_err(func, "%s", pt_strerror(err));
			ret = 1;
			continue;
		}
		ret |= show(func, &in, dot);
	}
	ctl_names_free(&names);
	elfobj_close(o);
	return ret;
}

static int from_live(const char *pattern, const char *module, const char *dir, int dot)
{
	char moddir[300], detail[160];
	struct klive_paths p = { "/proc/kallsyms", "/proc/kcore", "/sys/module", dir ? dir : moddir };
	struct ctl_names names;
	struct cfg_input in;
	struct utsname u;
	struct klive *k;
	const char *tag;
	uint32_t j;
	int err, ret = 0;

	uname(&u);
	snprintf(moddir, sizeof(moddir), "/lib/modules/%s", u.release);
	err = klive_open(&p, &k);
	if (err) {
		ctl_err("live kernel", "%s (kallsyms and kcore need root)", pt_strerror(err));
		return 1;
	}
	if (ctl_names_live(klive_ksyms(k), pattern, module, &names)) {
		ctl_err(pattern, "%s", pt_strerror(-PT_ENOMEM));
		klive_close(k);
		return 1;
	}
	if (!names.n) {
		ctl_err(pattern, "no function%s%s matches", module ? " of module " : "",
			module ? module : "");
		ret = 1;
	}
	for (j = 0; j < names.n; j++) {
		const char *func = names.v[j];

		err = klive_input(k, func, module, &in, &tag, detail, sizeof(detail));
		if (err == -PT_EREFUSED) {
			printf("%s: refused (%s): %s\n", func, tag, detail);
			ctl_err(func, "refused: %s", tag);
			ret = 1;
		} else if (err) {
			ctl_err(func, "%s%s%s", err == -PT_ENOENT ? "no such function" :
				err == -PT_EINVAL ? "several functions have this name" :
				pt_strerror(err), module ? " in module " : "", module ? module : "");
			ret = 1;
		} else {
			ret |= show(func, &in, dot);
		}
	}
	ctl_names_free(&names);
	klive_close(k);
	return ret;
}

static int cmd_cfg(int argc, char **argv)
{
	const char *func = NULL, *elf = NULL, *module = NULL, *moddir = NULL;
	struct ctl_args a;
	int dot = 0, live = 0, r;

	ctl_args_init(&a, argc, argv);
	while ((r = ctl_next(&a)) != CTL_END) {
		if (r == CTL_BAD)
			return 2;
		if (r == CTL_OPERAND) {
			if (func)
				return ctl_usage_err("cfg", "one function or glob only (got %s and %s)",
						     func, a.val);
			func = a.val;
		} else if (ctl_is(&a, "--dot")) {
			dot = 1;
		} else if (ctl_is(&a, "--live")) {
			live = 1;
		} else if (ctl_is(&a, "--elf")) {
			elf = a.val;
		} else if (ctl_is(&a, "--module")) {
			module = a.val;
		} else {
			moddir = a.val;
		}
	}
	if (!func)
		return ctl_usage_err("cfg", "no function named");
	if (!!elf == live)
		return ctl_usage_err("cfg", "--elf FILE or --live: one of them");
	if ((module || moddir) && !live)
		return ctl_usage_err("cfg", "--module and --moddir go with --live");
	return live ? from_live(func, module, moddir, dot) : from_elf(func, elf, dot);
}

static const struct ctl_opt cfg_opts[] = {
	{ "--elf", 0, "FILE", "from an ELF object or module (.ko, .ko.xz, .ko.zst, .ko.gz)" },
	{ "--live", 0, NULL, "from the running kernel (/proc/kallsyms, /proc/kcore; root)" },
	{ "--module", 0, "MOD", "--live: a function of module MOD" },
	{ "--moddir", 0, "DIR", "--live: modules.dep and the .ko files under DIR" },
	{ "--dot", 0, NULL, "Graphviz instead of text" },
	{ NULL, 0, NULL, NULL },
};

CTL_COMMAND(cfg, cmd_cfg, "FUNC", "the recovered CFG of FUNC (a name or a glob)", cfg_opts)
