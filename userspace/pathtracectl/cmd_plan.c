// SPDX-License-Identifier: GPL-2.0
/*
 * pathtracectl plan FUNC --elf FILE|--live [--module M] [--mode trace|paths|edges]
 *                  [--encoding witness|bits] [--verify] [--dot]
 * The plan for one function of an ELF object, for a human: the CFG with
 * edge weights, chords and what each instrumented edge does (witness code,
 * path increment or end, counter), the probe sites with their
 * jump-optimizability, bits per witness or path, and the static cost
 * against probing every block; or Graphviz with the instrumentation drawn
 * on the CFG. Exit status: 0 planned, 1 refused / unknown function /
 * unreadable file, 2 bad command line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <pathtrace/cfg.h>
#include <pathtrace/elfobj.h>
#include <pathtrace/error.h>
#include <pathtrace/ksyms.h>
#include <pathtrace/plan.h>
#include <pathtrace/static_calls.h>
#include <pathtrace/weight.h>

#include "commands.h"
#include "names.h"

static const char *const how_name[] = {
	[PROBESITE_NONE] = "none", [PROBESITE_DST] = "at target",
	[PROBESITE_SRC] = "in source", [PROBESITE_BRANCH] = "at branch",
};

static const char *const when_name[] = { "", " if taken", " if not taken" };

static const char *const mode_name[] = {
	[PT_MODE_TRACE] = "trace", [PT_MODE_PATHS] = "paths", [PT_MODE_EDGES] = "edges",
};

static const char *where(const struct cfg *c, uint64_t a, char *buf, size_t n)
{
	if (c->cold_len && a >= c->cold_addr && a - c->cold_addr < c->cold_len)
		snprintf(buf, n, "%s.cold+0x%" PRIx64, c->name, a - c->cold_addr);
	else
		snprintf(buf, n, "%s+0x%" PRIx64, c->name, a - c->addr);
	return buf;
}

static void action_text(const struct pt_action *a, char *buf, size_t n)
{
	switch (a->op) {
	case PT_OP_ENTER:
		snprintf(buf, n, "ENTER");
		break;
	case PT_OP_EMIT:
		if (a->arg)	/* a witness code whose word depends on the context */
			snprintf(buf, n, "emit witness %u (else %" PRIu64 "/%u bits)%s", a->arg,
				 (uint64_t)a->value, a->nbits, when_name[a->when % 3]);
		else
			snprintf(buf, n, "emit %" PRIu64 "/%u bits%s", (uint64_t)a->value,
				 a->nbits, when_name[a->when % 3]);
		break;
	case PT_OP_PATH_ADD:
		snprintf(buf, n, "r += %" PRId64 "%s", (int64_t)a->value, when_name[a->when % 3]);
		break;
	case PT_OP_PATH_EMIT:
		snprintf(buf, n, "emit r + %" PRId64 " in %u bits, r = 0%s", (int64_t)a->value,
			 a->nbits, when_name[a->when % 3]);
		break;
	case PT_OP_PATH_SET:
		snprintf(buf, n, "r = %" PRId64 "%s", (int64_t)a->value, when_name[a->when % 3]);
		break;
	case PT_OP_COUNT:
		snprintf(buf, n, "count[%u]++%s", a->arg, when_name[a->when % 3]);
		break;
	case PT_OP_PPP_ADD:	/* PPP's second register */
		snprintf(buf, n, "q += %" PRId64 "%s", (int64_t)a->value, when_name[a->when % 3]);
		break;
	case PT_OP_PPP_SET:
		snprintf(buf, n, "q = %" PRId64 "%s", (int64_t)a->value, when_name[a->when % 3]);
		break;
	default:
		snprintf(buf, n, "op %u", a->op);
	}
}

/* What an edge carries in the plan, as text (empty if nothing). */
static void edge_text(const struct plan *pl, uint32_t e, char *buf, size_t n)
{
	buf[0] = 0;
	if (pl->have_enc && pl->enc.edge_nbits[e]) {
		snprintf(buf, n, "%s %" PRIu64 "/%u bits",
			 pl->enc.edge_role[e] == ENC_ROLE_BLOCKING ? "blocking witness" :
			 pl->enc.edge_role[e] == ENC_ROLE_CHORD ? "witness" : "bits",
			 (uint64_t)pl->enc.edge_value[e], pl->enc.edge_nbits[e]);
	} else if (pl->have_pn) {
		const struct pathnum *p = &pl->pn;
		uint32_t d = p->cfg[e].dag;

		if (p->cfg[e].role == PATHNUM_ROLE_CALL) {
			snprintf(buf, n, "after call: path starts");
		} else if (d != GRAPH_NONE && (p->act[d] & PATHNUM_ACT_ADD)) {
			snprintf(buf, n, "r += %" PRId64 " (Val %" PRIu64 ")", (int64_t)p->add[d],
				 p->val[d]);
		} else if (d != GRAPH_NONE && (p->act[d] & PATHNUM_ACT_EMIT)) {
			snprintf(buf, n, "%spath end: emit r + %" PRId64 "%s%" PRId64,
				 p->cfg[e].role == PATHNUM_ROLE_BACK ? "back edge, " : "",
				 (int64_t)p->emit[d], (p->act[d] & PATHNUM_ACT_SET) ?
				 ", r = " : "", (p->act[d] & PATHNUM_ACT_SET) ?
				 (int64_t)p->set[d] : (int64_t)0);
		} else if (p->cfg[e].role == PATHNUM_ROLE_BACK) {
			snprintf(buf, n, "back edge (end emitted at its last chord)");
		}
	} else if (pl->in_tree && !pl->in_tree[e]) {
		snprintf(buf, n, "count[%u]++", e);
	}
}

static void print_text(const struct cfg *c, const struct plan *pl)
{
	char w1[160], w2[160], t[160];
	uint32_t b, e, k, a;

	printf("%s: %u blocks, %u edges, %u instructions; mode %s", c->name, c->nblocks,
	       c->nedges, c->ninsns, mode_name[pl->hdr.mode]);
	if (pl->hdr.mode == PT_MODE_TRACE)
		printf(", encoding %s", pl->hdr.encoding == PT_ENC_BITS ? "bits" : "witness");
	printf("\n\nblocks (frequency per call, Section 5 weighting unless given):\n");
	for (b = 0; b < c->nblocks; b++)
		printf("  B%-4u %-32s %3u insns  freq %8.2f%s%s\n", b,
		       where(c, c->blocks[b].addr, w1, sizeof(w1)), c->blocks[b].ninsn,
		       (double)probesite_block_freq(c, pl->weight, b) / WEIGHT_ONE,
		       (c->blocks[b].flags & CFG_BF_CALL) ? "  call" : "",
		       (c->blocks[b].flags & CFG_BF_COLD) ? "  cold" : "");
	printf("\nedges (weight, probe site, instrumentation):\n");
	for (e = 0; e < c->nedges; e++) {
		const struct probesite *s = &pl->edge_site[e];

		edge_text(pl, e, t, sizeof(t));
		if (s->insn != PROBESITE_NO_INSN)
			where(c, c->insns[s->insn].addr, w2, sizeof(w2));
		else
			snprintf(w2, sizeof(w2), "-");
		if (c->edges[e].dst == c->nblocks)
			snprintf(w1, sizeof(w1), "EXIT");
		else
			snprintf(w1, sizeof(w1), "B%u", c->edges[e].dst);
		printf("  e%-4u B%-4u -> %-5s w %8.2f  %-9s %-28s%s %s\n", e, c->edges[e].src, w1,
		       (double)pl->weight[e] / WEIGHT_ONE, how_name[s->how], w2,
		       s->window_ok ? " opt" : "    ", t);
	}
	if (pl->have_pn) {
		const struct pathnum *p = &pl->pn;

		for (k = 0; k < c->nblocks; k++) {
			uint32_t d = p->call_end[k];

			if (d != GRAPH_NONE && p->kind[d] == PATHNUM_CALL_END && p->act[d])
				printf("  call B%u: path end before the call: emit r + %" PRId64 "\n",
				       k, (int64_t)p->emit[d]);
		}
	}
	printf("\nprobe sites:\n");
	for (k = 0; k < pl->hdr.nr_sites; k++) {
		const struct pt_site *s = &pl->sites[k];

		printf("  %-32s %s%s:", where(c, c->insns[pl->site_insn[k]].addr, w1, sizeof(w1)),
		       (s->flags & PT_SITE_OPTIMIZABLE) ? "[OPTIMIZED]" :
		       probesite_ftrace(c, pl->site_insn[k]) ? "[FTRACE]   " :
		       "[int3]     ",
		       s->cond != PT_COND_NONE ? " cond" : "");
		for (a = s->first_action; a < s->first_action + s->nr_actions; a++) {
			action_text(&pl->actions[a], t, sizeof(t));
			printf("%s %s", a == s->first_action ? "" : ";", t);
		}
		printf("\n");
	}
	printf("\nsummary:\n");
	if (pl->have_pn) {
		printf("  paths %" PRIu64 ", %u bits per path number\n", pl->pn.npaths, pl->bits);
		if (pl->hdr.nr_path_ranges)
			printf("  path codes: %u paths listed with a word of their start's code, "
			       "the rest escaped, over %u ranges of numbers\n", pl->hdr.nr_path_codes,
			       pl->hdr.nr_path_ranges);
	} else if (pl->have_enc && pl->enc.kind == PT_ENC_WITNESS) {
		printf("  %u witnesses, codes of %u to %u bits\n", pl->enc.nwit, pl->enc.word_min,
		       pl->bits);
		if (pl->hdr.nr_ctx_codes)
			printf("  words by context: %u words in the rows the %u codes and the entry "
			       "lead to\n", pl->hdr.nr_ctx_words, pl->hdr.nr_ctx_codes - 1);
	} else if (pl->have_enc) {
		printf("  bit tracing: at most %u bits per edge\n", pl->bits);
	} else {
		printf("  %u counters (chords) of %u edges\n", pl->hdr.nr_actions - 1, c->nedges);
	}
	printf("  probes %u (%u jump-optimizable) vs every-block %u (%u jump-optimizable): %.2fx "
	       "the probes\n", pl->hdr.nr_sites, pl->noptimizable, pl->every_block_probes,
	       pl->every_block_optimizable,
	       pl->every_block_probes ? (double)pl->hdr.nr_sites / pl->every_block_probes : 0);
	printf("  static cost (block frequency x 1 optimized / %d int3 / %d ftrace): %.1f vs "
	       "every-block %.1f: %.2fx\n", PROBESITE_INT3_FACTOR, PROBESITE_FTRACE_FACTOR,
	       (double)pl->cost / WEIGHT_ONE, (double)pl->every_block_cost / WEIGHT_ONE,
	       pl->every_block_cost ? (double)pl->cost / pl->every_block_cost : 0);
	printf("  plan blob %u bytes\n", pl->hdr.total_len);
}

static void print_dot(const struct cfg *c, const struct plan *pl)
{
	char w1[160], t[160];
	uint32_t b, e;

	printf("digraph \"%s\" {\n  node [shape=box fontname=monospace];\n", c->name);
	for (b = 0; b < c->nblocks; b++)
		printf("  B%u [label=\"B%u %s\\nfreq %.2f\"%s];\n", b, b,
		       where(c, c->blocks[b].addr, w1, sizeof(w1)),
		       (double)probesite_block_freq(c, pl->weight, b) / WEIGHT_ONE,
		       (c->blocks[b].flags & CFG_BF_CALL) ? " style=bold" : "");
	printf("  EXIT [shape=oval];\n");
	for (e = 0; e < c->nedges; e++) {
		edge_text(pl, e, t, sizeof(t));
		printf("  B%u -> ", c->edges[e].src);
		if (c->edges[e].dst == c->nblocks)
			printf("EXIT");
		else
			printf("B%u", c->edges[e].dst);
		printf(" [label=\"%.2f%s%s\"%s];\n", (double)pl->weight[e] / WEIGHT_ONE,
		       t[0] ? "\\n" : "", t, pl->edge_probed[e] ? " color=red fontcolor=red" : "");
	}
	printf("}\n");
}

static int parse_args(int argc, char **argv, const char **func, const char **elf,
		      const char **module, int *live, struct plan_opts *o, int *dot)
{
	struct ctl_args a;
	int r;

	ctl_args_init(&a, argc, argv);
	while ((r = ctl_next(&a)) != CTL_END) {
		if (r == CTL_BAD)
			return 2;
		if (r == CTL_OPERAND) {
			if (*func)
				return ctl_usage_err("plan", "one function or glob only (got %s and %s)",
						     *func, a.val);
			*func = a.val;
		} else if (ctl_is(&a, "--dot")) {
			*dot = 1;
		} else if (ctl_is(&a, "--live")) {
			*live = 1;
		} else if (ctl_is(&a, "--verify")) {
			o->flags |= PT_PLAN_VERIFY;
		} else if (ctl_is(&a, "--elf")) {
			*elf = a.val;
		} else if (ctl_is(&a, "--module")) {
			*module = a.val;
		} else if (ctl_is(&a, "--mode")) {
			if (ctl_mode(a.val, &o->mode, &o->flags))
				return ctl_usage_err("plan", "--mode " CTL_MODES ", not %s", a.val);
		} else {
			o->trace.encoding = !strcmp(a.val, "witness") ? PT_ENC_WITNESS :
					    !strcmp(a.val, "bits") ? PT_ENC_BITS : 0;
			if (!o->trace.encoding)
				return ctl_usage_err("plan", "--encoding witness|bits, not %s", a.val);
		}
	}
	if (!*func)
		return ctl_usage_err("plan", "no function named");
	if (!*elf == !*live)
		return ctl_usage_err("plan", "--elf FILE or --live: one of them");
	if (*module && !*live)
		return ctl_usage_err("plan", "--module goes with --live");
	if (o->trace.encoding && o->mode != PT_MODE_TRACE)
		return ctl_usage_err("plan", "--encoding applies to --mode trace only");
	return 0;
}

/*
 * Where the function comes from: an ELF object, or the running kernel
 * (/proc/kallsyms and /proc/kcore, as enable reads it). The source stays
 * open while the plan is printed: the CFG's callee names point into it.
 */
struct plan_source {
	struct elfobj *obj;
	struct klive *live;
};

static void source_close(struct plan_source *src)
{
	if (src->obj)
		elfobj_close(src->obj);
	if (src->live)
		klive_close(src->live);
}

/*
 * Opens the ELF object or the running kernel, and the static-call sites
 * kprobes refuse. Returns 0 or an exit status (errors printed).
 */
static int source_open(const char *elf, struct plan_source *src, struct static_calls *sc)
{
	char moddir[300];
	struct klive_paths p = { "/proc/kallsyms", "/proc/kcore", "/sys/module", moddir };
	struct kcore *kc;
	struct utsname u;
	int err;

	if (elf) {
		err = elfobj_open(elf, &src->obj);
		if (err) {
			ctl_elf_err(elf, err);
			return 1;
		}
		/* kprobes refuse static-call sites; user code has none (docs/user.md) */
		err = elfobj_is_user(src->obj) ? 0 : static_calls_elf(elf, sc);
		if (err) {
			ctl_err(elf, "static-call sites: %s", pt_strerror(err));
			return 1;
		}
		return 0;
	}
	uname(&u);
	snprintf(moddir, sizeof(moddir), "/lib/modules/%s", u.release);
	err = klive_open(&p, &src->live);
	if (err) {
		ctl_err("live kernel", "%s (kallsyms and kcore need root)", pt_strerror(err));
		return 1;
	}
	err = kcore_open(p.kcore, &kc);
	if (!err) {
		err = static_calls_live(klive_ksyms(src->live), kc, sc);
		kcore_close(kc);
	}
	if (err) {
		ctl_err("live kernel", "static-call sites: %s", pt_strerror(err));
		return 1;
	}
	return 0;
}

/* Fills in func's CFG input from the source; returns 0 or an exit status (errors printed). */
static int source_input(const char *func, const char *module, const struct plan_source *src,
			struct cfg_input *in)
{
	char detail[160];
	const char *tag;
	int64_t i;
	int err;

	if (src->obj) {
		i = elfobj_find(src->obj, func);
		if (i < 0 || elfobj_func(src->obj, i)->parent != ELFOBJ_NONE) {
			ctl_err(func, i < 0 ? "no such function" : "is a .cold part");
			return 1;
		}
		err = elfobj_input(src->obj, i, in);
		if (err) {
			ctl_err(func, "%s", pt_strerror(err));
			return 1;
		}
		return 0;
	}
	err = klive_input(src->live, func, module, in, &tag, detail, sizeof(detail));
	if (err == -PT_EREFUSED) {
		ctl_err(func, "CFG refused: %s", tag);
		fprintf(stderr, "  %s\n", detail);
		return 1;
	}
	if (err) {
		ctl_err(func, "%s%s%s", err == -PT_ENOENT ? "no such function" :
			err == -PT_EINVAL ? "several functions have this name" : pt_strerror(err),
			module ? " in module " : "", module ? module : "");
		return 1;
	}
	return 0;
}

/* The plan of func, printed. Returns 0 or 1 (errors printed). */
static int plan_one(const char *func, const char *module, const struct plan_source *src,
		    const struct static_calls *sc, const struct plan_opts *o, int dot)
{
	struct cfg_input in;
	struct cfg c;
	struct plan pl;
	int err = source_input(func, module, src, &in);

	if (err)
		return err;
	memset(&c, 0, sizeof(c));
	err = cfg_build(&in, &c);
	if (err) {
		ctl_err(func, "%s%s", err == -PT_EREFUSED ? "CFG refused: " : pt_strerror(err),
			err == -PT_EREFUSED ? c.refusal : "");
		if (err == -PT_EREFUSED)
			fprintf(stderr, "  %s\n", c.detail);
		cfg_free(&c);
		return 1;
	}
	static_calls_mark(sc, &c);
	err = plan_build(&c, o, &pl);
	if (err) {
		ctl_err(func, "plan refused: %s", pl.reason);
	} else if (dot) {
		print_dot(&c, &pl);
	} else {
		print_text(&c, &pl);
	}
	plan_free(&pl);
	cfg_free(&c);
	return err ? 1 : 0;
}

static int cmd_plan(int argc, char **argv)
{
	const char *func = NULL, *elf = NULL, *module = NULL;
	struct plan_opts o = { .mode = PT_MODE_TRACE, .func_id = 1 };
	struct plan_source src = { NULL, NULL };
	struct ctl_names names = { NULL, 0, 0 };
	struct static_calls sc;
	int dot = 0, live = 0, err, ret = 0;
	uint32_t k;

	err = parse_args(argc, argv, &func, &elf, &module, &live, &o, &dot);
	if (err)
		return err;
	memset(&sc, 0, sizeof(sc));
	ret = source_open(elf, &src, &sc);
	if (!ret) {
		err = src.obj ? ctl_names_elf(src.obj, func, &names) :
			ctl_names_live(klive_ksyms(src.live), func, module, &names);
		if (err) {
			ctl_err(func, "%s", pt_strerror(err));
			ret = 1;
		} else if (!names.n) {
			ctl_err(func, "no function matches");
			ret = 1;
		}
	}
	for (k = 0; !ret && k < names.n; k++)
		ret |= plan_one(names.v[k], module, &src, &sc, &o, dot);
	ctl_names_free(&names);
	static_calls_free(&sc);
	source_close(&src);
	return ret;
}

static const struct ctl_opt plan_opts[] = {
	{ "--elf", 0, "FILE", "from an ELF object or module (.ko, .ko.xz, .ko.zst, .ko.gz)" },
	{ "--live", 0, NULL, "from the running kernel (/proc/kallsyms, /proc/kcore; root)" },
	{ "--module", 0, "MOD", "--live: a function of module MOD" },
	{ "--mode", 0, CTL_MODES, "what the plan records, as enable's --mode (trace)" },
	{ "--encoding", 0, "witness|bits", "--mode trace: witness words or one bit per branch" },
	{ "--verify", 0, NULL, "with every-block verify records" },
	{ "--dot", 0, NULL, "Graphviz instead of text" },
	{ NULL, 0, NULL, NULL },
};

CTL_COMMAND(plan, cmd_plan, "FUNC", "the instrumentation plan of FUNC (a name or a glob) and "
	    "its static cost against every-block probing", plan_opts)
