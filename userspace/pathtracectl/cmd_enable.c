// SPDX-License-Identifier: GPL-2.0
/*
 * pathtracectl enable [--mode trace|paths|path-profile|edges] [--encoding witness|bits]
 *                     [--verify] [--moddir DIR] [--weights FILE]
 *                     [--ppp N] [--ppp-paths FILE] [--path-codes K]
 *                     [--adapting-words 0|1] [--why-loud] FUNC...
 *
 * For each function (names or shell globs over the kernel's text symbols,
 * module functions included): find it and its .cold part in
 * /proc/kallsyms, read its live bytes from /proc/kcore, recover the CFG,
 * build the plan, store code + CFG + plan for `record` (funcstore), and
 * hand the plan to pathtrace.ko (PT_IOC_ADD_PLAN). By default the
 * functions run as copies in a generated livepatch module, each plan as
 * code in its copy, and kprobes carry the plans of what the copy refuses
 * (or every plan, when no copy can be made here: enable says why);
 * --inline makes copies only, --probes only kprobes (mechanism,
 * docs/inline.md "Which mechanism carries a function"). A function that
 * is refused (CFG, plan or kernel) is reported with its reason; the
 * others go ahead. --weights FILE plans from the
 * measured edge counts of an earlier run (`pathregen --edges` of a trace
 * of the same functions) instead of the Section 5 heuristic; a function
 * the profile does not hold, or whose code changed, keeps the heuristic.
 * --ppp N (path-profile): preferential path profiling, the N most likely
 * paths of each function (by the weights) counted in a dense array, every
 * other path in one counter; --ppp-paths FILE takes them from an earlier
 * path profile instead (`pathregen --paths`, its N hottest per function
 * with --ppp N, else every path it lists). --path-codes K (paths): the K
 * likeliest paths of each place a path starts get their own prefix code
 * (by the weights; 64 when not given), the rest an escape and their
 * number; 0 writes every number in its full width (path_codes.h).
 * --adapting-words 0|1 (trace, witness): whether a row's word last read in
 * a segment trades with the row's shortest (PT_PLAN_CTX_SWAP); by default
 * they do unless the plan comes from --weights.
 * --why-loud: after each function's line, every call that stays a call
 * vertex and why (quiet_call_why: the chain of loud callees and the reason
 * it ends in), the calls whose blocking witnesses a plan pays for.
 * Static-call sites of vmlinux
 * (read from kcore) are never chosen as probe sites: kprobes refuse them.
 * Exit status: 0 every name enabled (a glob: at least one of its matches),
 * 1 something named was refused or matched nothing, 2 bad command line.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <pathtrace/cfg.h>
#include <pathtrace/edge_profile.h>
#include <pathtrace/elfobj.h>
#include <pathtrace/entry_witness.h>
#include <pathtrace/error.h>
#include <pathtrace/funcstore.h>
#include <pathtrace/inline.h>
#include <pathtrace/ksyms.h>
#include <pathtrace/path_codes.h>
#include <pathtrace/path_profile.h>
#include <pathtrace/plan.h>
#include <pathtrace/ppp.h>
#include <pathtrace/quiet_calls.h>
#include <pathtrace/static_calls.h>
#include <pathtrace/tracefile.h>

#include "commands.h"
#include "inline_ctl.h"
#include "names.h"
#include "loaded.h"

struct target;

struct enabler {
	int fd;
	struct klive *k;
	struct plan_opts o;
	uint32_t next_id;
	struct pt_func_info *loaded;	/* plans already installed */
	int nloaded;
	uint64_t *done;			/* addresses enabled by this run */
	size_t ndone;
	struct static_calls sc;		/* vmlinux static-call sites */
	struct target *targets;		/* what the arguments name, in order */
	uint32_t ntargets, cap;
	struct {
		char tag[40];
		uint32_t n;
	} reasons[32];			/* refusals by reason, for the summary */
	uint32_t nreasons;
	struct edge_profile *profile;	/* --weights, or NULL */
	struct path_profile *ppp_from;	/* --ppp-paths, or NULL */
	uint32_t ppp_top;		/* --ppp N, or 0 */
	uint32_t ppp_funcs;		/* PPP plans installed, and their figures: */
	uint64_t ppp_interesting, ppp_counters;
	double bl_paths;		/* the same functions' Ball-Larus paths */
	double t0, shown;		/* start, last progress line (seconds) */
	struct quiet_calls *quiet;	/* NULL with --loud-calls */
	int why_loud;			/* --why-loud */
	int explicit_entries;		/* no implicit entries: --explicit-entries, or framed */
	uint32_t nimplicit;		/* implicit entries planned */
	uint32_t nquiet;		/* calls planned as quiet */
	uint32_t nprobes, ninstalled;	/* installed by this run, for progress */
	int inline_mode;		/* --inline: the targets run as copies (docs/inline.md) */
	int inline_counts;		/* --inline in edges mode: the counters are code in them */
	int inline_calls;		/* --inline in other modes: the sites are calls in them */
	int inline_code;		/* either: plans for the originals, carried by the copies */
	int inline_fallback;		/* what the copy refuses goes on kprobes (the default) */
	uint32_t nfallback;		/* functions it put there */
	int copies_live;		/* the copies of an earlier enable run */
	const char *inline_ko;		/* the template module */
	int user_fd;			/* the user file being enabled (docs/user.md), or 0 */
	uint64_t user_delta;		/* its virtual address - file offset */
	pid_t user_pid;			/* --pid: the one process of the user plans, or 0 */
	uint32_t user_ok, user_refused;	/* user functions enabled and refused */
};

static void ppp_report(struct enabler *e, const struct plan *pl, int from_profile);

/*
 * A large enable takes minutes under emulation (the kernel checks and
 * patches every probe), so say how far it got: on a terminal a line that
 * updates once a second, elsewhere one every ten seconds.
 */
static void progress(struct enabler *e, int last)
{
	int tty = isatty(STDERR_FILENO);
	double t = ctl_now_s();

	if (!last && t - e->shown < (tty ? 1.0 : 10.0))
		return;
	if (!last || tty)
		fprintf(stderr, "%senable: %u of %u functions probed, %u probes, %.0f s%s",
			tty ? "\r" : "", e->ninstalled, e->ntargets, e->nprobes, t - e->t0,
			tty && !last ? "" : "\n");
	e->shown = t;
}

static int already(const struct enabler *e, uint64_t addr)
{
	size_t i;
	int j;

	for (j = 0; j < e->nloaded; j++)
		if (e->loaded[j].addr == addr)
			return 1;
	for (i = 0; i < e->ndone; i++)
		if (e->done[i] == addr)
			return 1;
	return 0;
}

/* The kernel's own ENOTSUPP (include/linux/errno.h): uprobes pass it on for an instruction they cannot probe. */
#define ENOTSUPP_KERNEL 524

/* The kernel's errno for ADD_PLAN of a user function (kmod/uprobes.c), in words. */
static const char *add_reason_user(int err)
{
	switch (err) {
	case EINVAL:
		return "uprobes refused a site or the plan is malformed";
	case ERANGE:
		return "the function does not lie in the file at its offsets";
	case ESRCH:
		return "no process of the --pid (it exited, or it is a kernel thread)";
	case ENOTSUPP_KERNEL:
		return "uprobes cannot probe an instruction of a site";
	case EBUSY:
		return "the function is already traced";
	case EOPNOTSUPP:
	case ENOSYS:
		return "this pathtrace.ko or kernel places no uprobes (user functions, docs/user.md)";
	default:
		return strerror(err);
	}
}

/* The kernel's errno for ADD_PLAN, in words. */
static const char *add_reason(int err)
{
	switch (err) {
	case EINVAL:
		return "kprobes refused a site (blacklisted, noinstr or static-key code) or the "
		       "plan is malformed";
	case EILSEQ:
		return "a site is not on an instruction boundary";
	case ENOENT:
		return "the kernel has no symbol of this name at this address";
	case ERANGE:
		return "the plan reaches past the kernel's symbol";
	case EPERM:
		return "pathtrace.ko's own code cannot be traced";
	case EBUSY:
		return "the function is already traced";
	case EOPNOTSUPP:
		return "this pathtrace.ko places no uprobes (user functions, docs/user.md)";
	default:
		return strerror(err);
	}
}

/*
 * Asks the module. it: NULL, or the inline copy that carries the plan as
 * code, its counters (PT_ADD_INLINE) or its sites as calls
 * (PT_ADD_INLINE_SITES). Returns 0 or 1 (reported).
 */
static int add_plan(struct enabler *e, const char *name, const void *blob, size_t blob_len,
		    const struct inline_target *it)
{
	struct pt_plan_arg a;
	int err;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.plan = (uintptr_t)blob;
	a.plan_len = (uint32_t)blob_len;
	a.user_fd = e->user_fd;
	a.user_off_delta = e->user_delta;
	a.user_pid = e->user_fd ? e->user_pid : 0;
	if (it && it->sites) {
		/* inline_sites_insert keeps every call's frame */
		a.flags = PT_ADD_INLINE_SITES | PT_ADD_INLINE_FRAMES;
		a.inline_copy = it->copy_addr;
		a.inline_copy_len = it->copy_len;
		a.inline_map = (uintptr_t)it->map;
		a.inline_map_len = it->nmap;
	} else if (it) {
		a.flags = PT_ADD_INLINE;
		a.inline_counters = it->counter_off;
	}
	if (ioctl(e->fd, PT_IOC_ADD_PLAN, &a) < 0) {
		err = errno;
		funcstore_remove(((const struct pt_plan *)blob)->func_id);
		printf("%s: refused by pathtrace.ko: %s\n", name,
		       e->user_fd ? add_reason_user(err) : add_reason(err));
		ctl_err(name, "PT_IOC_ADD_PLAN: %s", strerror(err));
		return 1;
	}
	return 0;
}

/*
 * Keeps what record needs, then asks the module; with inline code the
 * module is asked once the copies run (inline_code_targets). Returns 0
 * or 1 (reported).
 */
static int install(struct enabler *e, const struct cfg_input *in, const struct cfg *c,
		   const void *blob, size_t blob_len)
{
	struct tf_function fn;
	uint8_t *code, *cblob = NULL;
	uint32_t cblen = 0;
	int err;

	code = malloc((size_t)in->len + in->cold_len);
	if (!code || cfg_blob_encode(c, &cblob, &cblen)) {
		ctl_err(in->name, "out of memory");
		free(code);
		return 1;
	}
	memcpy(code, in->code, in->len);
	if (in->cold_len)
		memcpy(code + in->len, in->cold_code, in->cold_len);
	memset(&fn, 0, sizeof(fn));
	fn.func_id = e->o.func_id;
	fn.addr = in->addr;
	fn.cold_addr = in->cold_addr;
	fn.len = in->len;
	fn.cold_len = in->cold_len;
	fn.name = in->name;
	fn.name_len = (uint32_t)strlen(in->name);
	fn.code = code;
	fn.cfg = cblob;
	fn.cfg_len = cblen;
	fn.plan = blob;
	fn.plan_len = (uint32_t)blob_len;
	err = funcstore_save(&fn);
	free(code);
	free(cblob);
	if (err) {
		ctl_err(in->name, "cannot store its code and CFG in %s: %s", funcstore_dir(),
			strerror(errno));
		return 1;
	}
	return e->inline_code ? 0 : add_plan(e, in->name, blob, blob_len, NULL);
}

/*
 * A function named on the command line, through the two passes. The first
 * pass keeps its live bytes and CFG: once any plan is installed, kcore
 * shows patched code, so the second pass (and a re-plan) reads neither.
 */
struct target {
	uint32_t sym;		/* text symbol index */
	uint64_t addr;
	uint32_t pattern;	/* the first argument that named it */
	int state;		/* enum target_state */
	uint64_t *tails;	/* its tail calls' targets (0: indirect) */
	uint32_t ntails;
	uint64_t *calls;	/* its direct calls: target, return address, ... */
	uint32_t ncalls;
	uint8_t *ewit;		/* the entry witnesses its installed plan assumed, or NULL */
	/* its installed plan's part of the summary: probes, quiet calls, implicit entries */
	uint32_t nprobes, nquiet, nimplicit;
	/* calls its plan takes a traced function at: witnessed, entered, its implicit entries */
	uint32_t nassumed;
	uint32_t plan_probes;	/* its plan's probes, should kprobes carry it */
	uint32_t nblocks;
	uint32_t func_id;
	struct cfg_input in;	/* addresses and lengths; code points into code */
	uint8_t *code;		/* len + cold_len live bytes */
	uint8_t *cfg_blob;	/* its CFG (cfg_blob_encode), static-call sites marked */
	uint32_t cfg_len;
	uint64_t orig;		/* --inline: the original's address (addr is the copy's) */
	/* inline code: its plan, until the copies run, and its counted edges or its sites */
	void *blob;
	size_t blob_len;
	uint32_t *edge_counter;
	uint32_t nedges;
	struct inline_site *sites;	/* its probes, sorted by address */
	uint32_t nsites;
};

enum target_state { T_PENDING, T_INSTALLED, T_REFUSED };

/* Counts one refusal under its reason tag for the summary. */
static void count_refusal(struct enabler *e, const char *tag)
{
	uint32_t i;

	for (i = 0; i < e->nreasons; i++) {
		if (!strcmp(e->reasons[i].tag, tag)) {
			e->reasons[i].n++;
			return;
		}
	}
	if (e->nreasons < sizeof(e->reasons) / sizeof(e->reasons[0])) {
		snprintf(e->reasons[e->nreasons].tag, sizeof(e->reasons[0].tag), "%s", tag);
		e->reasons[e->nreasons++].n = 1;
	}
}

/* The live input and CFG of t. Returns 0, or 1 refused (reported and counted). */
static int recover(struct enabler *e, const struct target *t, struct cfg_input *in,
		   struct cfg *c)
{
	const struct ksym *s = ksyms_get(klive_ksyms(e->k), t->sym);
	const char *tag = NULL;
	char detail[160] = "";
	int err;

	memset(c, 0, sizeof(*c));
	err = klive_input_sym(e->k, t->sym, in, &tag, detail, sizeof(detail));
	if (err) {
		if (err == -PT_EREFUSED)
			printf("%s: refused: %s (%s)\n", s->name, tag, detail);
		else
			printf("%s: cannot read it: %s\n", s->name, pt_strerror(err));
		count_refusal(e, err == -PT_EREFUSED && tag ? tag : "unreadable");
		return 1;
	}
	err = cfg_build(in, c);
	if (err) {
		if (err == -PT_EREFUSED)
			printf("%s: refused: %s (%s)\n", s->name, c->refusal, c->detail);
		else
			printf("%s: no CFG: %s\n", s->name, pt_strerror(err));
		count_refusal(e, err == -PT_EREFUSED && c->refusal ? c->refusal : "no-cfg");
		cfg_free(c);
		return 1;
	}
	static_calls_mark(&e->sc, c);
	return 0;
}

/* First pass: t's CFG is recoverable; keep its tail calls for the closure. */
static void survey(struct enabler *e, struct target *t)
{
	struct cfg_input in;
	struct cfg c;
	uint64_t target;
	uint32_t i;

	if (recover(e, t, &in, &c)) {
		t->state = T_REFUSED;
		return;
	}
	t->nblocks = c.nblocks;
	t->tails = calloc(c.nedges + 1, sizeof(*t->tails));
	t->code = malloc((size_t)in.len + in.cold_len + 1);
	if (!t->tails || !t->code || cfg_blob_encode(&c, &t->cfg_blob, &t->cfg_len)) {
		ctl_err(in.name, "out of memory");
		count_refusal(e, "no-memory");
		t->state = T_REFUSED;
		cfg_free(&c);
		return;
	}
	memcpy(t->code, in.code, in.len);
	if (in.cold_len)
		memcpy(t->code + in.len, in.cold_code, in.cold_len);
	memset(&t->in, 0, sizeof(t->in));
	t->in.name = ksyms_get(klive_ksyms(e->k), t->sym)->name;
	t->in.addr = in.addr;
	t->in.code = t->code;
	t->in.len = in.len;
	t->in.cold_addr = in.cold_addr;
	t->in.cold_code = t->code + in.len;
	t->in.cold_len = in.cold_len;
	for (i = 0; t->tails && i < c.nedges; i++)
		if (cfg_tail_call(&c, i, &target))
			t->tails[t->ntails++] = target;
	/* Direct calls, for the callees' implicit entries. */
	t->calls = malloc(((size_t)c.nblocks + 1) * 2 * sizeof(*t->calls));
	for (i = 0; t->calls && i < c.nblocks; i++) {
		const struct cfg_block *bl = &c.blocks[i];
		const struct cfg_insn *in_;

		if (!(bl->flags & CFG_BF_CALL) || !bl->ninsn)
			continue;
		in_ = &c.insns[bl->first_insn + bl->ninsn - 1];
		if (in_->kind != CFG_I_CALL || !in_->target)
			continue;
		t->calls[2 * t->ncalls] = in_->target;
		t->calls[2 * t->ncalls++ + 1] = in_->addr + in_->len;
	}
	cfg_free(&c);
}

/*
 * The entry witnesses of every pending or installed target: closed[i] over
 * the targets still in the running (entry_witness.h). Functions installed
 * before this run are left out: their tail calls are not known here, so
 * calls to them keep their bits (pathregen, which knows them, only ever
 * finds more entry witnesses than such a plan assumed, which is exact).
 */
static int closure(struct enabler *e, uint8_t *closed, uint64_t *addr)
{
	uint32_t *start = calloc(e->ntargets + 1, sizeof(*start)), *to, i, k, n = 0;
	int err;

	for (i = 0; i < e->ntargets; i++)
		n += e->targets[i].ntails;
	to = calloc(n + 1, sizeof(*to));
	if (!start || !to) {
		free(start);
		free(to);
		return -PT_ENOMEM;
	}
	for (i = 0; i < e->ntargets; i++)
		addr[i] = e->targets[i].state == T_REFUSED ? 0 : e->targets[i].addr;
	for (i = 0, n = 0; i < e->ntargets; i++) {
		start[i] = n;
		for (k = 0; k < e->targets[i].ntails; k++)
			to[n++] = entry_index_of(e->ntargets, addr, e->targets[i].tails[k]);
	}
	start[e->ntargets] = n;
	err = entry_closed(e->ntargets, start, to, closed);
	free(start);
	free(to);
	return err;
}

static void del_plan(struct enabler *e, uint32_t func_id)
{
	struct pt_del_arg d;

	if (e->inline_code) {	/* the module has none yet: inline_code_targets adds them */
		funcstore_remove(func_id);
		return;
	}
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.func_id = func_id;
	if (ioctl(e->fd, PT_IOC_DEL_PLAN, &d) < 0)
		ctl_err("enable", "PT_IOC_DEL_PLAN %u: %s", func_id, strerror(errno));
	funcstore_remove(func_id);
}

/* Whether t's plan must be (re)made: never installed, or its entry witnesses changed. */
static int stale(const struct target *t, const uint8_t *ewit)
{
	if (t->state != T_INSTALLED)
		return 1;
	if (!t->ewit || !ewit)
		return t->ewit != ewit;
	return memcmp(t->ewit, ewit, t->nblocks) != 0;
}

/*
 * o->implicit: the direct call sites of the targets still in the running
 * (t's own included) that call t: t's ENTER is not written for them while
 * their function is installed (pathtrace_abi.h struct pt_implicit). None
 * in edges mode or with --explicit-entries. Returns 0 or -PT_ENOMEM.
 */
static int implicit_entries(struct enabler *e, const struct target *t, struct plan_opts *o)
{
	struct pt_implicit *m = NULL;
	uint32_t i, k, n = 0, cap = 0;

	if (e->explicit_entries || o->mode == PT_MODE_EDGES || (o->flags & PT_PLAN_PROFILE))
		return 0;
	for (i = 0; i < e->ntargets; i++) {
		const struct target *a = &e->targets[i];

		if (a->state == T_REFUSED || a->func_id >= PT_IMPLICIT_MAX_ID)
			continue;
		for (k = 0; k < a->ncalls; k++) {
			if (a->calls[2 * k] != t->addr)
				continue;
			if (n == cap) {
				struct pt_implicit *g;

				cap = cap ? cap * 2 : 16;
				g = realloc(m, cap * sizeof(*m));
				if (!g) {
					free(m);
					return -PT_ENOMEM;
				}
				m = g;
			}
			m[n++] = (struct pt_implicit){ .ret = a->calls[2 * k + 1],
						       .caller_id = a->func_id };
		}
	}
	o->implicit = m;
	o->nimplicit = n;
	return 0;
}

/*
 * Second pass for t: plans it, in witness mode with the entry witnesses
 * that closed[]/addr[] (over e->targets) give, and installs it; an
 * installed t whose entry witnesses changed is replaced. Returns 0
 * (installed, or unchanged), 1 refused (reported and counted), or -PT_ENOMEM.
 */
/*
 * --why-loud: c's calls that stay call vertices (quiet_calls_mark ran on
 * c), each with why no proof made it quiet; a trace plan's entry witnesses
 * (ewit, may be NULL) are said to cost no blocker.
 */
static void print_loud_calls(struct enabler *e, const struct cfg *c, const uint8_t *ewit)
{
	char why[512];
	uint32_t b;

	for (b = 0; b < c->nblocks; b++) {
		const struct cfg_block *bl = &c->blocks[b];
		const struct cfg_insn *last;
		uint64_t base;

		if (!(bl->flags & CFG_BF_CALL) || !bl->ninsn)
			continue;
		last = &c->insns[bl->first_insn + bl->ninsn - 1];
		base = c->cold_addr && last->addr >= c->cold_addr ? c->cold_addr : c->addr;
		if (last->kind == CFG_I_CALL_INDIRECT)
			snprintf(why, sizeof(why), "an indirect call");
		else if (last->kind != CFG_I_CALL || !e->quiet ||
			 quiet_call_why(e->quiet, last->target, why, sizeof(why)) != 0)
			continue;
		printf("  loud call %s%s+0x%" PRIx64 ": %s%s\n", c->name,
		       base == c->addr ? "" : ".cold", last->addr - base, why,
		       !ewit || e->o.mode != PT_MODE_TRACE ? "" :
		       ewit[b] == ENC_CALL_WITNESS ? "; its ENTER witnesses the call: no blocker" :
		       ewit[b] == ENC_CALL_ENTERED ?
		       "; entered without an ENTER: blocked, no bit after it" :
		       ewit[b] == ENC_CALL_BLOCKED ?
		       "; its callee writes no ENTER for it and is not closed: blocked" :
		       (e->o.flags & PT_PLAN_FRAMED) ?
		       "; framed: no blocker, the ENTERs below it name it" : "");
	}
}

/*
 * A framed plan's calls that its traced callees list among their implicit
 * entries (implicit_entries: every direct call from a target in the
 * running) write no ENTER, so no frame names them: entered calls when
 * ewit says the callee is closed, else blocked (ENC_CALL_BLOCKED).
 */
static void block_implicit_calls(const struct enabler *e, const struct target *t,
				 const struct cfg *c, uint8_t *ewit)
{
	uint32_t b, i;

	if (e->explicit_entries || t->func_id >= PT_IMPLICIT_MAX_ID)
		return;
	for (b = 0; b < c->nblocks; b++) {
		const struct cfg_block *bl = &c->blocks[b];
		const struct cfg_insn *last;

		if (!(bl->flags & CFG_BF_CALL) || !bl->ninsn || ewit[b] == ENC_CALL_ENTERED)
			continue;
		last = &c->insns[bl->first_insn + bl->ninsn - 1];
		for (i = 0; last->kind == CFG_I_CALL && i < e->ntargets; i++)
			if (e->targets[i].state != T_REFUSED && e->targets[i].addr == last->target)
				ewit[b] = ENC_CALL_BLOCKED;
	}
}

/*
 * Inline counters: t keeps its plan blob (taken from *blob) and the edges
 * it counts (the chords, counter = edge id; activations in counter
 * nedges, plan.c). Returns 0 or -PT_ENOMEM.
 */
static int keep_counted(struct target *t, const struct cfg *c, const struct plan *pl, void **blob,
			size_t len)
{
	uint32_t k;

	free(t->edge_counter);
	free(t->blob);
	t->blob = NULL;
	t->edge_counter = malloc(((size_t)c->nedges + 1) * sizeof(*t->edge_counter));
	if (!t->edge_counter)
		return -PT_ENOMEM;
	for (k = 0; k < c->nedges; k++)
		t->edge_counter[k] = pl->in_tree[k] ? INLINE_NONE : k;
	t->nedges = c->nedges;
	t->blob = *blob;
	t->blob_len = len;
	*blob = NULL;
	return 0;
}

static int site_cmp(const void *a, const void *b)
{
	const struct inline_site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Where a plan site's call goes in the copy: on the one edge of its Jcc
 * that all its actions apply on (docs/inline.md, "Sites as calls"), else
 * at its instruction.
 */
static enum inline_edge site_edge(const struct plan *pl, const struct pt_site *ps)
{
	uint8_t when = plan_site_edge(ps, pl->actions);

	return when == PT_WHEN_TAKEN ? INLINE_TAKEN :
	       when == PT_WHEN_NOT_TAKEN ? INLINE_FALL : INLINE_AT;
}

/*
 * Whether site ps's actions read no register but the flags (no ENTER, which
 * reads the stack, and not a profile's): its call is staged, as pathtrace.ko
 * checks (docs/inline.md, "The stage").
 */
static int site_staged(const struct plan *pl, const struct pt_site *ps)
{
	return !(pl->hdr.flags & PT_PLAN_PROFILE) &&
	       (!ps->nr_actions || pl->actions[ps->first_action].op != PT_OP_ENTER);
}

/*
 * Inline calls: t keeps its plan blob (taken from *blob) and its probes
 * (sites and verify sites, one per address; a verify site's is at its
 * instruction), whose calls its copy will carry. Returns 0 or -PT_ENOMEM.
 */
static int keep_sites(struct target *t, const struct cfg *c, const struct plan *pl, void **blob,
		      size_t len)
{
	uint32_t k, n = 0, nall = pl->hdr.nr_sites + pl->hdr.nr_verify;

	free(t->sites);
	free(t->blob);
	t->blob = NULL;
	t->sites = malloc(((size_t)nall + 1) * sizeof(*t->sites));
	if (!t->sites)
		return -PT_ENOMEM;
	for (k = 0; k < pl->hdr.nr_sites; k++)
		t->sites[n++] = (struct inline_site){ c->addr + pl->sites[k].offset,
						      site_edge(pl, &pl->sites[k]),
						      site_staged(pl, &pl->sites[k]) };
	for (k = 0; k < pl->hdr.nr_verify; k++)
		t->sites[n++] = (struct inline_site){ c->addr + pl->verify[k].offset, INLINE_AT,
						      !(pl->hdr.flags & PT_PLAN_PROFILE) };
	qsort(t->sites, n, sizeof(*t->sites), site_cmp);
	for (k = nall = 0; k < n; k++) {
		if (nall && t->sites[nall - 1].addr == t->sites[k].addr) {
			/* a site and a verify site: one probe, an ENTER's if either has one */
			t->sites[nall - 1].edge = INLINE_AT;
			t->sites[nall - 1].staged &= t->sites[k].staged;
			continue;
		}
		t->sites[nall++] = t->sites[k];
	}
	t->nsites = nall;
	t->blob = *blob;
	t->blob_len = len;
	*blob = NULL;
	return 0;
}

static int install_target(struct enabler *e, struct target *t, const uint8_t *closed,
			  const uint64_t *addr)
{
	const struct ksym *s = ksyms_get(klive_ksyms(e->k), t->sym);
	struct cfg c;
	struct plan pl;
	uint8_t *ewit = NULL;
	uint64_t *weight = NULL;
	void *blob = NULL;
	size_t len = 0;
	uint32_t k, nw = 0, nentered = 0, nquiet = 0, nframed = 0;
	int err, ret = 1, profiled = 0, ppp_profiled = 0;

	err = cfg_blob_decode(t->cfg_blob, t->cfg_len, &c);
	if (err)
		return err == -PT_ENOMEM ? err : 1;
	if (e->quiet) {
		int nq = quiet_calls_mark(e->quiet, &c);

		if (nq < 0) {
			cfg_blob_free(&c);
			return nq;
		}
		nquiet = (uint32_t)nq;
	}
	if (closed) {
		ewit = calloc(c.nblocks + 1, 1);
		if (!ewit) {
			cfg_blob_free(&c);
			return -PT_ENOMEM;
		}
		entry_witnessed_calls(&c, e->ntargets, addr, closed, ewit);
		/*
		 * With implicit entries the callee writes no ENTER for these
		 * calls (implicit_entries lists them while t's id can be
		 * listed): blocked, but no branch point (encoding.h). A
		 * framed plan takes no entry witnesses: its ENTERs name
		 * these calls anyway (plan.c frames the loud ones).
		 */
		for (k = 0; k < c.nblocks; k++)
			if (ewit[k])
				ewit[k] = !e->explicit_entries ?
					  (t->func_id < PT_IMPLICIT_MAX_ID ? ENC_CALL_ENTERED :
					   ENC_CALL_LOUD) :
					  e->o.trace.encoding == PT_ENC_WITNESS &&
					  !(e->o.flags & PT_PLAN_FRAMED) ? ENC_CALL_WITNESS :
					  ENC_CALL_LOUD;
		if (e->o.flags & PT_PLAN_FRAMED)
			block_implicit_calls(e, t, &c, ewit);
	}
	if (!stale(t, ewit)) {
		free(ewit);
		cfg_blob_free(&c);
		return 0;
	}
	if (e->profile) {
		weight = calloc(c.nedges + 1, sizeof(*weight));
		if (!weight) {
			free(ewit);
			cfg_blob_free(&c);
			return -PT_ENOMEM;
		}
		profiled = !edge_profile_weights(e->profile, &c, weight);
	}
	e->o.func_id = t->func_id;
	e->o.trace.enter_witnessed = ewit;
	e->o.weight = profiled ? weight : NULL;
	if (e->ppp_from) {
		const struct path_profile_func *pf = path_profile_find(e->ppp_from, s->name);

		/* not in the profile (or no path of it): the most likely by the weights */
		if (pf && pf->npaths) {
			e->o.paths.ppp_paths = pf->paths;
			e->o.paths.nppp_paths = e->ppp_top && e->ppp_top < pf->npaths ?
					  e->ppp_top : pf->npaths;
			ppp_profiled = 1;
		}
	}
	err = implicit_entries(e, t, &e->o);
	if (!err)
		err = plan_build(&c, &e->o, &pl);
	free((void *)e->o.implicit);
	e->o.implicit = NULL;
	e->o.nimplicit = 0;
	e->o.paths.ppp_paths = NULL;
	e->o.paths.nppp_paths = 0;
	e->o.trace.enter_witnessed = NULL;
	e->o.weight = NULL;
	if (err == -PT_ENOMEM) {
		free(ewit);
		free(weight);
		plan_free(&pl);
		cfg_blob_free(&c);
		return err;
	}
	if (t->state == T_INSTALLED) {
		del_plan(e, t->func_id);
		/* the summary counts the plan that replaces it */
		e->nprobes -= t->nprobes;
		e->nquiet -= t->nquiet;
		e->nimplicit -= t->nimplicit;
		t->nprobes = t->nquiet = t->nimplicit = 0;
		printf("%s: re-planned: a function its plan assumed traced was refused\n",
		       s->name);
	}
	if (err) {
		printf("%s: refused: no plan: %s\n", s->name,
		       pl.reason[0] ? pl.reason : pt_strerror(err));
		count_refusal(e, "no-plan");
	} else if (plan_serialize(&pl, &blob, &len)) {
		ctl_err(s->name, "out of memory");
		count_refusal(e, "no-memory");
	} else if (e->inline_counts && keep_counted(t, &c, &pl, &blob, len)) {
		ctl_err(s->name, "out of memory");
		count_refusal(e, "no-memory");
	} else if (e->inline_calls && keep_sites(t, &c, &pl, &blob, len)) {
		ctl_err(s->name, "out of memory");
		count_refusal(e, "no-memory");
	} else if (!install(e, &t->in, &c, e->inline_code ? t->blob : blob, len)) {
		for (k = 0; ewit && k < c.nblocks; k++) {
			nw += ewit[k] == ENC_CALL_WITNESS;
			nentered += ewit[k] == ENC_CALL_ENTERED;
			nframed += ewit[k] == ENC_CALL_LOUD && (e->o.flags & PT_PLAN_FRAMED) &&
				   (c.blocks[k].flags & CFG_BF_CALL);
		}
		if (e->inline_counts)
			printf("%s: planned as %u: %u counters, inline in its copy",
			       s->name, e->o.func_id, pl.hdr.nr_counters);
		else if (e->inline_calls)
			printf("%s: planned as %u: %u sites, calls in its copy",
			       s->name, e->o.func_id, t->nsites);
		else
			printf("%s: enabled as %u: %u probes (%u jump-optimizable), every-block %u",
			       s->name, e->o.func_id, pl.hdr.nr_sites + pl.hdr.nr_verify,
			       pl.noptimizable, pl.every_block_probes);
		if (nw)
			printf("; %u calls witnessed by their callee's ENTER", nw);
		if (nentered)
			printf("; %u calls entered without an ENTER", nentered);
		if (nframed)
			printf("; %u calls framed", nframed);
		if (nquiet)
			printf("; %u quiet calls", nquiet);
		if (pl.hdr.nr_implicit)
			printf("; entered without ENTER from %u call sites", pl.hdr.nr_implicit);
		t->nimplicit = pl.hdr.nr_implicit;
		t->nassumed = nw + nentered + pl.hdr.nr_implicit;
		t->nquiet = nquiet;
		e->nimplicit += t->nimplicit;
		e->nquiet += t->nquiet;
		if (e->profile)
			printf(profiled ? "; profile weights" :
			       "; not in the profile: heuristic weights");
		if (pl.hdr.nr_ppp)
			ppp_report(e, &pl, ppp_profiled);
		printf("\n");
		if (e->why_loud)
			print_loud_calls(e, &c, ewit);
		if (t->state != T_INSTALLED)
			e->ninstalled++;
		t->plan_probes = pl.hdr.nr_sites + pl.hdr.nr_verify;
		t->nprobes = e->inline_code ? 0 : t->plan_probes;
		e->nprobes += t->nprobes;
		progress(e, 0);
		free(t->ewit);
		t->ewit = ewit;
		ewit = NULL;
		ret = 0;
	} else {
		count_refusal(e, "kernel");
	}
	free(ewit);
	free(weight);
	free(blob);
	plan_free(&pl);
	cfg_blob_free(&c);
	return ret;
}

/*
 * Refuses the pending targets that loaded plan i's quiet calls can reach:
 * tracing one would run its ENTERs inside those calls, where that plan has
 * no call vertex. Returns 0 or -PT_ENOMEM.
 */
static int quiet_conflicts(struct enabler *e, int i)
{
	struct tracefile tf;
	struct cfg c;
	uint32_t b, k;
	int err = 0;

	memset(&tf, 0, sizeof(tf));
	if (funcstore_load(e->loaded[i].func_id, &tf) ||
	    cfg_blob_decode(tf.funcs[0].cfg, tf.funcs[0].cfg_len, &c)) {
		tracefile_free(&tf);
		return 0;	/* no stored CFG: nothing was planned quiet */
	}
	for (b = 0; b < c.nblocks && !err; b++) {
		const struct cfg_block *bl = &c.blocks[b];
		uint64_t target;

		if (!(bl->flags & CFG_BF_QUIET_CALL) || !bl->ninsn)
			continue;
		target = c.insns[bl->first_insn + bl->ninsn - 1].target;
		err = quiet_call(e->quiet, target);	/* follows its callees */
		if (err > 0)
			err = 0;
		for (k = 0; k < e->ntargets && !err; k++) {
			struct target *t = &e->targets[k];

			if (t->state == T_REFUSED || !quiet_call_reaches(e->quiet, target, t->addr))
				continue;
			printf("%s: refused: %s's plan took a call that can reach it as quiet "
			       "(disable %s first)\n", ksyms_get(klive_ksyms(e->k), t->sym)->name,
			       e->loaded[i].name, e->loaded[i].name);
			count_refusal(e, "quiet-callee");
			t->state = T_REFUSED;
		}
	}
	cfg_blob_free(&c);
	tracefile_free(&tf);
	return err;
}

/*
 * Quiet calls (quiet_calls.h) against every function traced after this
 * run: the pending targets and the plans already loaded. A pending target
 * that a loaded plan's quiet call can reach is refused. Returns 0 or
 * -PT_ENOMEM.
 */
static int quiet_setup(struct enabler *e)
{
	uint64_t *traced = calloc(2 * (size_t)e->ntargets + (size_t)e->nloaded + 1, sizeof(*traced));
	size_t n = 0;
	uint32_t i;
	int err;

	if (!traced)
		return -PT_ENOMEM;
	for (i = 0; i < e->ntargets; i++)
		if (e->targets[i].state != T_REFUSED)
			traced[n++] = e->targets[i].addr;
	/* a call to a copied function's original runs its copy */
	for (i = 0; i < e->ntargets; i++)
		if (e->targets[i].state != T_REFUSED && e->targets[i].orig)
			traced[n++] = e->targets[i].orig;
	for (i = 0; i < (uint32_t)e->nloaded; i++)
		traced[n++] = e->loaded[i].addr;
	err = quiet_calls_open(e->k, traced, n, &e->quiet);
	free(traced);
	if (err)
		return err;
	for (i = 0; i < (uint32_t)e->nloaded && !err; i++)
		err = quiet_conflicts(e, (int)i);
	return err;
}

/*
 * Second pass over every target: plan with the entry witnesses of the
 * functions still in the running; when one is refused, the plans that
 * assumed it are made again (the set only shrinks, so this ends).
 */
static int install_all(struct enabler *e)
{
	/*
	 * Entry witnesses (--explicit-entries, witness encoding) and entered
	 * calls (implicit entries, either encoding) both need their callee
	 * traced and closed.
	 */
	int witness = e->o.mode == PT_MODE_TRACE;
	uint8_t *closed = calloc(e->ntargets + 1, 1);
	uint64_t *addr = calloc(e->ntargets + 1, sizeof(*addr));
	int again = 1, err = 0;
	uint32_t i;

	if (!closed || !addr)
		err = -PT_ENOMEM;
	/* Ids first: a plan names its callers' in its implicit entries. */
	for (i = 0; i < e->ntargets; i++)
		e->targets[i].func_id = e->next_id + i;
	while (again && !err) {
		again = 0;
		if (witness && (err = closure(e, closed, addr)))
			break;
		for (i = 0; i < e->ntargets && !err; i++) {
			struct target *t = &e->targets[i];

			if (t->state == T_REFUSED)
				continue;
			err = install_target(e, t, witness ? closed : NULL, addr);
			if (err == 1) {
				t->state = T_REFUSED;
				again = witness;	/* plans that assumed t change */
				err = 0;
			} else if (!err) {
				t->state = T_INSTALLED;
			}
		}
	}
	free(closed);
	free(addr);
	if (err)
		ctl_err("enable", "%s", pt_strerror(err));
	return err;
}

/*
 * Whether text symbol i is a live copy of an earlier enable, or the
 * original of one (livepatch lists it as OBJECT/NAME,SYMPOS, the position
 * the copy was made with): the copy runs instead of it, so neither can
 * take a plan of its own until disable --all removes the copies
 * (docs/inline.md, "Which mechanism carries a function").
 */
static int copied(const struct enabler *e, uint32_t i)
{
	const struct ksyms *ks = klive_ksyms(e->k);
	const struct ksym *s = ksyms_get(ks, i);
	char path[PATH_MAX];
	uint32_t same;

	if (!e->copies_live)
		return 0;
	if (s->module && !strcmp(s->module, INLINE_MODULE))
		return 1;
	snprintf(path, sizeof(path), "/sys/kernel/livepatch/" INLINE_MODULE "/%s/%s,%u",
		 s->module ? s->module : "vmlinux", s->name, ksyms_name_pos(ks, i, &same));
	return !access(path, F_OK);
}

/* First pass over what pattern names. Returns 0, or 1 when it names nothing. */
static int collect(struct enabler *e, const char *pattern, uint32_t pi)
{
	const struct ksyms *ks = klive_ksyms(e->k);
	uint32_t n = ksyms_count(ks), i, matched = 0;
	int glob = ctl_is_glob(pattern);

	for (i = 0; i < n; i++) {
		const struct ksym *s = ksyms_get(ks, i);
		struct target *t;

		if (ctl_is_cold(s->name) || (glob ? fnmatch(pattern, s->name, 0) :
					 strcmp(pattern, s->name)))
			continue;
		matched++;
		if (already(e, s->addr)) {
			printf("%s: already enabled\n", s->name);
			continue;
		}
		if (e->copies_live && s->module && !strcmp(s->module, INLINE_MODULE))
			continue;	/* a copy: its original's line says it */
		if (e->ntargets == e->cap) {
			uint32_t cap = e->cap ? 2 * e->cap : 64;
			struct target *nt = realloc(e->targets, cap * sizeof(*nt));

			if (!nt) {
				ctl_err(pattern, "out of memory");
				return 1;
			}
			e->targets = nt;
			e->cap = cap;
		}
		t = &e->targets[e->ntargets++];
		memset(t, 0, sizeof(*t));
		t->sym = i;
		t->addr = s->addr;
		t->pattern = pi;
		e->done = realloc(e->done, (e->ndone + 1) * sizeof(*e->done));
		if (e->done)
			e->done[e->ndone++] = s->addr;
		if (copied(e, i)) {
			printf("%s: refused: copy-live (its inline copy runs instead of it, with "
			       "no plan: pathtracectl disable --all, then enable it again)\n",
			       s->name);
			t->state = T_REFUSED;
			count_refusal(e, "copy-live");
		} else if (!e->inline_mode || e->inline_code) {
			survey(e, t);
		}
	}
	if (!matched) {
		ctl_err(pattern, "no such function in /proc/kallsyms");
		return 1;
	}
	return 0;
}

/*
 * A BINARY:FUNC argument (docs/user.md): what precedes the last ':' names
 * a regular file. Returns 1 with path and *func set, else 0.
 */
static int user_pattern(const char *arg, char *path, size_t n, const char **func)
{
	const char *c = strrchr(arg, ':');
	struct stat st;

	if (!c || c == arg || (size_t)(c - arg) >= n)
		return 0;
	memcpy(path, arg, (size_t)(c - arg));
	path[c - arg] = 0;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	*func = c + 1;
	return 1;
}

/*
 * Plans and installs user function i of o, named "BINARY!FUNC". Returns 0
 * enabled, 1 refused (reported and counted).
 */
static int user_install(struct enabler *e, struct elfobj *o, uint32_t i, const char *base)
{
	const struct elfobj_func *f = elfobj_func(o, i);
	char name[PT_NAME_MAX];
	struct cfg_input in;
	struct plan_opts po;
	uint64_t off, coff;
	struct plan pl;
	void *blob = NULL;
	size_t len = 0;
	struct cfg c;
	int err, ret = 1;

	if (strlen(base) + 1 + strlen(f->name) >= sizeof(name)) {
		printf("%s!%s: refused: name-too-long (over %d bytes)\n", base, f->name,
		       PT_NAME_MAX - 1);
		count_refusal(e, "name-too-long");
		return 1;
	}
	memcpy(name, base, strlen(base));
	name[strlen(base)] = '!';
	memcpy(name + strlen(base) + 1, f->name, strlen(f->name) + 1);
	memset(&c, 0, sizeof(c));
	memset(&pl, 0, sizeof(pl));
	err = elfobj_input(o, i, &in);
	if (err) {
		printf("%s: cannot read it: %s\n", name, pt_strerror(err));
		count_refusal(e, "unreadable");
		return 1;
	}
	in.name = name;
	if (elfobj_file_offset(o, in.addr, in.len, &off) ||
	    (in.cold_len && (elfobj_file_offset(o, in.cold_addr, in.cold_len, &coff) ||
			     in.cold_addr - coff != in.addr - off))) {
		printf("%s: refused: not-in-one-segment (its code is not in one executable "
		       "PT_LOAD segment of the file)\n", name);
		count_refusal(e, "not-in-one-segment");
		return 1;
	}
	err = cfg_build(&in, &c);
	if (err) {
		if (err == -PT_EREFUSED)
			printf("%s: refused: %s (%s)\n", name, c.refusal, c.detail);
		else
			printf("%s: no CFG: %s\n", name, pt_strerror(err));
		count_refusal(e, err == -PT_EREFUSED && c.refusal ? c.refusal : "no-cfg");
		cfg_free(&c);
		return 1;
	}
	/* blocked calls, no entry witnesses, no implicit entries (docs/user.md) */
	po = e->o;
	po.flags = (po.flags & ~PT_PLAN_FRAMED) | PT_PLAN_USER;
	po.func_id = e->next_id++;
	po.trace.enter_witnessed = NULL;
	po.implicit = NULL;
	po.nimplicit = 0;
	po.weight = NULL;
	po.paths.ppp_paths = NULL;
	po.paths.nppp_paths = 0;
	err = plan_build(&c, &po, &pl);
	if (err) {
		printf("%s: refused: no plan: %s\n", name, pl.reason[0] ? pl.reason : pt_strerror(err));
		count_refusal(e, "no-plan");
	} else if (plan_serialize(&pl, &blob, &len)) {
		ctl_err(name, "out of memory");
		count_refusal(e, "no-memory");
	} else {
		e->o.func_id = po.func_id;	/* install's funcstore entry */
		e->user_delta = in.addr - off;
		if (!install(e, &in, &c, blob, len)) {
			printf("%s: enabled as %u: %u uprobes, every-block %u\n", name, po.func_id,
			       pl.hdr.nr_sites + pl.hdr.nr_verify, pl.every_block_probes);
			e->nprobes += pl.hdr.nr_sites + pl.hdr.nr_verify;
			ret = 0;
		} else {
			count_refusal(e, "kernel");
		}
	}
	free(blob);
	plan_free(&pl);
	cfg_free(&c);
	return ret;
}

/*
 * User functions with --inline, or beside framed plans already loaded:
 * refused (docs/user.md). Returns 1 then (reported), else 0.
 */
static int user_refused(const struct enabler *e)
{
	int a;

	if (e->inline_mode) {
		ctl_err("enable", "--inline copies kernel functions only (docs/user.md)");
		return 1;
	}
	for (a = 0; a < e->nloaded; a++)
		if (e->loaded[a].flags & PT_PLAN_FRAMED) {
			ctl_err("enable", "framed-loaded: %s is loaded with framed calls, which user "
				"functions cannot run beside (docs/user.md); disable it first",
				e->loaded[a].name);
			return 1;
		}
	return 0;
}

/* The functions of BINARY that func names. Returns 0, or 1 (reported). */
static int user_collect(struct enabler *e, const char *path, const char *func, const char *arg)
{
	int glob = strpbrk(func, "*?[") != NULL, ret = 0;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	uint32_t i, named = 0, on = 0;
	struct elfobj *o;
	int err;

	err = elfobj_open(path, &o);
	if (err || !elfobj_is_user(o)) {
		ctl_err(path, "%s", err ? pt_strerror(err) :
			"not a user-space ELF file (an executable or a shared library)");
		elfobj_close(o);
		return 1;
	}
	e->user_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->user_fd < 0) {
		ctl_err(path, "%s", strerror(errno));
		e->user_fd = 0;
		elfobj_close(o);
		return 1;
	}
	for (i = 0; i < elfobj_nfuncs(o); i++) {
		const struct elfobj_func *f = elfobj_func(o, i);
		uint32_t k;

		if (f->parent != ELFOBJ_NONE ||
		    (glob ? fnmatch(func, f->name, 0) : strcmp(func, f->name)))
			continue;
		/* aliases share an address: the first name enables it */
		for (k = 0; k < i; k++)
			if (elfobj_func(o, k)->addr == f->addr && elfobj_func(o, k)->parent == ELFOBJ_NONE &&
			    !(glob ? fnmatch(func, elfobj_func(o, k)->name, 0) :
			      strcmp(func, elfobj_func(o, k)->name)))
				break;
		if (k < i)
			continue;
		named++;
		if (user_install(e, o, i, base))
			e->user_refused++;
		else
			on++;
	}
	close(e->user_fd);
	e->user_fd = 0;
	e->user_delta = 0;
	elfobj_close(o);
	if (!named) {
		ctl_err(arg, "no such function in %s", path);
		return 1;
	}
	e->user_ok += on;
	if (glob)
		printf("%s: %u of %u matching functions enabled\n", arg, on, named);
	if (!on || (!glob && on != named))
		ret = 1;
	return ret;
}

/* Per argument: what it named and what was enabled. Returns the exit status. */
/* Bytes in words: "152 B", "32.0 KiB", "2.0 TiB". */
static const char *human_bytes(double b, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned int u = 0;

	while (b >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
	return buf;
}

/*
 * PPP's memory beside plain Ball-Larus numbering's: the kernel's array of
 * interesting paths (nr_ppp counters and one for the others, struct
 * pt_profile) against one counter per path.
 */
static void ppp_report(struct enabler *e, const struct plan *pl, int from_profile)
{
	char a[32], b[32];

	printf("; PPP: %u interesting paths%s in %u counters (%s a CPU), Ball-Larus: %llu paths "
	       "(%s as an array)", pl->ppp_interesting,
	       !e->ppp_from ? "" : from_profile ? " from the profile" :
	       " (not in the profile: the likeliest by weights)", pl->hdr.nr_ppp + 1,
	       human_bytes(16.0 + 8.0 * (pl->hdr.nr_ppp + 1), a, sizeof(a)),
	       (unsigned long long)pl->pn.npaths,
	       human_bytes(16.0 + 8.0 * (double)pl->pn.npaths, b, sizeof(b)));
	e->ppp_funcs++;
	e->ppp_interesting += pl->ppp_interesting;
	e->ppp_counters += pl->hdr.nr_ppp + 1;
	e->bl_paths += (double)pl->pn.npaths;
}

static int report(const struct enabler *e, char **pats, int npats)
{
	char a[32], b[32];
	uint32_t i, ok = 0, refused = 0;
	int p, ret = 0;

	for (p = 0; p < npats; p++) {
		uint32_t named = 0, on = 0;
		int glob = ctl_is_glob(pats[p]);

		for (i = 0; i < e->ntargets; i++) {
			if (e->targets[i].pattern != (uint32_t)p)
				continue;
			named++;
			on += e->targets[i].state == T_INSTALLED;
		}
		if (glob && named)
			printf("%s: %u of %u matching functions enabled\n", pats[p], on, named);
		if (named && !(on && (glob || on == named)))
			ret = 1;
	}
	for (i = 0; i < e->ntargets; i++) {
		ok += e->targets[i].state == T_INSTALLED;
		refused += e->targets[i].state == T_REFUSED;
	}
	ok += e->user_ok;
	refused += e->user_refused;
	printf("enable: %u enabled, %u refused", ok, refused);
	for (i = 0; i < e->nreasons; i++)
		printf("%s %s %u", i ? "," : ":", e->reasons[i].tag, e->reasons[i].n);
	printf("\nenable: %u probes placed in %.1f s; %u calls into untraced code planned as "
	       "quiet; %u call sites enter their traced callee without an ENTER record\n",
	       e->nprobes, ctl_now_s() - e->t0, e->nquiet, e->nimplicit);
	if (e->nfallback)
		printf("enable: %u %s\n", e->nfallback, e->nfallback == 1 ?
		       "function on kprobes, its copy refused" :
		       "functions on kprobes, their copies refused");
	if (e->ppp_funcs)
		printf("enable: PPP in %u functions: %llu interesting paths in %llu counters "
		       "(%s a CPU), Ball-Larus numbering: %.0f paths (%s a CPU as arrays)\n",
		       e->ppp_funcs, (unsigned long long)e->ppp_interesting,
		       (unsigned long long)e->ppp_counters,
		       human_bytes(16.0 * e->ppp_funcs + 8.0 * (double)e->ppp_counters, a, sizeof(a)),
		       e->bl_paths,
		       human_bytes(16.0 * e->ppp_funcs + 8.0 * e->bl_paths, b, sizeof(b)));
	return ret;
}

/*
 * What --loud-calls, --explicit-entries and --blocked-calls turn off, and
 * --why-loud and --implicit-entries on.
 */
enum {
	OFF_QUIET_CALLS = 1, OFF_IMPLICIT_ENTRIES = 2, ON_WHY_LOUD = 4, OFF_FRAMED_CALLS = 8,
	ON_IMPLICIT_ENTRIES = 16, ON_INLINE = 32, ON_INLINE_PROBES = 64, ON_PROBES = 128
};

static int parse(int argc, char **argv, struct plan_opts *o, const char **moddir,
		 const char **weights, const char **ppp_file, const char **inline_ko, int *off,
		 pid_t *pid, int *first, int *nargs)
{
	int path_codes_set = 0, nfuncs = 0, r;
	struct ctl_args ca;

	ctl_args_init(&ca, argc, argv);
	while ((r = ctl_next(&ca)) != CTL_END) {
		const char *v = ca.val;

		if (r == CTL_BAD)
			return 2;
		if (r == CTL_OPERAND) {
			argv[1 + nfuncs++] = (char *)v;	/* the functions, in order, from argv[1] */
			continue;
		}
		if (ctl_is(&ca, "--verify")) {
			o->flags |= PT_PLAN_VERIFY;
		} else if (ctl_is(&ca, "--inline")) {
			*off |= ON_INLINE;
		} else if (ctl_is(&ca, "--inline-probes")) {
			*off |= ON_INLINE | ON_INLINE_PROBES;
		} else if (ctl_is(&ca, "--inline-module")) {
			*inline_ko = v;
			*off |= ON_INLINE;
		} else if (ctl_is(&ca, "--probes")) {
			*off |= ON_PROBES;
		} else if (ctl_is(&ca, "--loud-calls")) {
			*off |= OFF_QUIET_CALLS;
		} else if (ctl_is(&ca, "--explicit-entries")) {
			*off |= OFF_IMPLICIT_ENTRIES;
		} else if (ctl_is(&ca, "--implicit-entries")) {
			*off |= ON_IMPLICIT_ENTRIES;
		} else if (ctl_is(&ca, "--why-loud")) {
			*off |= ON_WHY_LOUD;
		} else if (ctl_is(&ca, "--blocked-calls")) {
			*off |= OFF_FRAMED_CALLS;
		} else if (ctl_is(&ca, "--mode")) {
			if (ctl_mode(v, &o->mode, &o->flags))
				return ctl_usage_err("enable", "--mode " CTL_MODES ", not %s", v);
		} else if (ctl_is(&ca, "--encoding")) {
			o->trace.encoding = !strcmp(v, "witness") ? PT_ENC_WITNESS :
					    !strcmp(v, "bits") ? PT_ENC_BITS : 0;
			if (!o->trace.encoding)
				return ctl_usage_err("enable", "--encoding witness|bits, not %s", v);
		} else if (ctl_is(&ca, "--pid")) {
			char *end;
			long n = strtol(v, &end, 10);

			if (*end || n <= 0 || n > INT32_MAX)
				return ctl_usage_err("enable", "--pid takes a process id, not %s", v);
			*pid = (pid_t)n;
		} else if (ctl_is(&ca, "--moddir")) {
			*moddir = v;
		} else if (ctl_is(&ca, "--weights")) {
			*weights = v;
		} else if (ctl_is(&ca, "--ppp")) {
			char *end;
			unsigned long n = strtoul(v, &end, 10);

			if (*end || !n || n > PPP_HOTTEST_MAX)
				return ctl_usage_err("enable", "--ppp takes 1..%u interesting paths "
						     "per function, not %s", PPP_HOTTEST_MAX, v);
			o->flags |= PT_PLAN_PPP;
			o->paths.ppp_hottest = (uint32_t)n;
		} else if (ctl_is(&ca, "--ppp-paths")) {
			o->flags |= PT_PLAN_PPP;
			*ppp_file = v;
		} else if (ctl_is(&ca, "--path-codes")) {
			char *end;
			unsigned long n = strtoul(v, &end, 10);

			if (*end || n > PATH_CODES_K_MAX)
				return ctl_usage_err("enable", "--path-codes takes 0..%u listed paths "
						     "per start, not %s", PATH_CODES_K_MAX, v);
			o->paths.codes_k = (uint32_t)n;
			o->paths.numbers = n ? PLAN_PATH_NUMBERS_CODED : PLAN_PATH_NUMBERS_FULL_WIDTH;
			path_codes_set = 1;
		} else {	/* --adapting-words */
			if (strcmp(v, "0") && strcmp(v, "1"))
				return ctl_usage_err("enable", "--adapting-words takes 0 or 1, not %s",
						     v);
			o->trace.adapting_words = *v == '1' ? PLAN_ADAPTING_ALWAYS : PLAN_ADAPTING_NEVER;
		}
	}
	for (; ca.i < argc; ca.i++)	/* after "--" */
		argv[1 + nfuncs++] = argv[ca.i];
	if (!nfuncs)
		return ctl_usage_err("enable", "no function named");
	if ((*off & ON_PROBES) && (*off & ON_INLINE)) {
		ctl_err("enable", "--probes and --inline contradict each other");
		return 2;
	}
	if ((*off & OFF_IMPLICIT_ENTRIES) && (*off & ON_IMPLICIT_ENTRIES)) {
		ctl_err("enable", "--explicit-entries and --implicit-entries contradict each other");
		return 2;
	}
	if (path_codes_set && (o->mode != PT_MODE_PATHS || (o->flags & PT_PLAN_PROFILE))) {
		ctl_err("enable", "--path-codes codes the numbers of a --mode paths trace");
		return 2;
	}
	if (o->trace.adapting_words &&
	    (o->mode != PT_MODE_TRACE || o->trace.encoding == PT_ENC_BITS)) {
		ctl_err("enable", "--adapting-words adapts the witness words of a --mode trace");
		return 2;
	}
	if ((o->flags & PT_PLAN_PPP) && !(o->flags & PT_PLAN_PROFILE)) {
		ctl_err("enable", "--ppp and --ppp-paths number the paths of --mode path-profile");
		return 2;
	}
	if (o->trace.encoding && o->mode != PT_MODE_TRACE) {
		ctl_err("enable", "--encoding applies to --mode trace only");
		return 2;
	}
	if ((o->flags & PT_PLAN_PROFILE) && (o->flags & PT_PLAN_VERIFY)) {
		ctl_err("enable", "--mode path-profile records nothing to verify: trace with "
			"--mode paths --verify to check the numbering");
		return 2;
	}
	*first = 1;
	*nargs = 1 + nfuncs;
	return 0;
}

/* vmlinux's static-call sites from kcore. Returns what static_calls_live returns. */
static int read_static_calls(const struct klive_paths *p, const struct ksyms *ks,
			     struct static_calls *sc)
{
	struct kcore *kc;
	int err = kcore_open(p->kcore, &kc);

	memset(sc, 0, sizeof(*sc));
	if (err)
		return err;
	err = static_calls_live(ks, kc, sc);
	kcore_close(kc);
	return err;
}

/* A profile file (--weights, --ppp-paths): open it, or say why not. */
static FILE *open_profile(const char *path)
{
	FILE *fp = fopen(path, "r");

	if (!fp)
		ctl_err(path, "%s", strerror(errno));
	return fp;
}

/* What a profile reader's err means to the user (what: its kind). Returns 0, or 1 reported. */
static int profile_err(const char *path, int err, uint32_t line, const char *what)
{
	if (err == -PT_EFORMAT)
		ctl_err(path, "line %u: not %s", line, what);
	else if (err)
		ctl_err(path, "%s", pt_strerror(err));
	return err ? 1 : 0;
}

/* --weights FILE: an edge profile (`pathregen --edges`). Returns 0, or 1 reported. */
static int read_profile(const char *path, struct edge_profile *p)
{
	FILE *fp = open_profile(path);
	uint32_t line = 0;
	int err;

	if (!fp)
		return 1;
	err = edge_profile_read(fp, p, &line);
	fclose(fp);
	if (err)
		edge_profile_free(p);
	return profile_err(path, err, line, "an edge profile (pathregen --edges writes one)");
}

/* --ppp-paths FILE: a path profile (`pathregen --paths`). Returns 0, or 1 reported. */
static int read_paths(const char *path, struct path_profile *p)
{
	FILE *fp = open_profile(path);
	uint32_t line = 0;
	int err;

	if (!fp)
		return 1;
	err = path_profile_read(fp, p, &line);
	fclose(fp);
	if (err)
		path_profile_free(p);
	return profile_err(path, err, line, "a path profile (pathregen --paths writes one)");
}

/*
 * --inline: the collected targets run as copies (inline_ctl.h); each is
 * then surveyed as its copy, a function of the generated module. Returns
 * 0, or 1 when the copies could not be made (the targets refused).
 */
/* The template module: --inline-module, else $PATHTRACE_INLINE_MODULE, else the installed one. */
static const char *template_path(const char *ko, char *def, size_t len)
{
	struct utsname u;

	if (ko)
		return ko;
	ko = getenv("PATHTRACE_INLINE_MODULE");
	if (ko && *ko)
		return ko;
	uname(&u);
	snprintf(def, len, "/lib/modules/%s/extra/pathtrace_inline.ko", u.release);
	return def;
}

/*
 * A target the copy refused, by default: its plan, made for the original,
 * goes on kprobes as it is (docs/inline.md, "Which mechanism carries a
 * function"). Returns 0, or 1 (reported).
 */
static int probes_instead(struct enabler *e, struct target *t, const char *name,
			  const char *refusal)
{
	if (add_plan(e, name, t->blob, t->blob_len, NULL))
		return 1;
	printf("%s: enabled as %u on kprobes: %u probes (not copied: %s)\n", name, t->func_id,
	       t->plan_probes, refusal);
	t->nprobes = t->plan_probes;
	e->nprobes += t->nprobes;
	e->nfallback++;
	return 0;
}

/* A refused target's quiet calls and implicit entries leave the summary. */
static void uncount(struct enabler *e, struct target *t)
{
	e->nquiet -= t->nquiet;
	e->nimplicit -= t->nimplicit;
	t->nquiet = t->nimplicit = 0;
}

/* The copies to make: each planned target's (it[j] for target idx[j]). Returns how many. */
static uint32_t copy_inputs(const struct enabler *e, struct inline_target *it, uint32_t *idx)
{
	uint32_t i, n = 0;

	for (i = 0; i < e->ntargets; i++) {
		const struct target *t = &e->targets[i];

		if (t->state != T_INSTALLED || !t->blob)
			continue;
		memset(&it[n], 0, sizeof(it[n]));
		it[n].sym = t->sym;
		it[n].edge_counter = t->edge_counter;
		it[n].nedges = t->nedges;
		it[n].entry_counter = t->nedges;
		it[n].ncounters = t->nedges + 1;
		it[n].sites = t->sites;
		it[n].nsites = t->nsites;
		idx[n++] = i;
	}
	return n;
}

/*
 * --inline in the trace modes: a plan may take another function as traced
 * (an entered call, an entry witness, an implicit entry from its caller)
 * whose copy is refused later, with no kprobe to carry its plan instead.
 * So where a plan does, the copies are tried first, with nothing loaded:
 * what they refuse is refused, the plans are made again without it
 * (install_all), and the copies tried again until they refuse nothing
 * (the set only shrinks). Returns 0, or 1 (reported).
 */
static int inline_settle(struct enabler *e)
{
	struct inline_target *it = calloc(e->ntargets + 1, sizeof(*it));
	uint32_t *idx = calloc(e->ntargets + 1, sizeof(*idx));
	int refused, ret = 1;
	uint32_t j, n;

	if (!it || !idx)
		goto out;
	/* plans that take no other function as traced hold whatever the copies refuse */
	for (j = 0; j < e->ntargets; j++)
		if (e->targets[j].state == T_INSTALLED && e->targets[j].nassumed)
			break;
	refused = j < e->ntargets;
	while (refused > 0) {
		n = copy_inputs(e, it, idx);
		refused = inline_refusals(e->k, &e->sc, it, n);
		if (refused < 0)
			goto out;
		for (j = 0; j < n; j++) {
			struct target *t = &e->targets[idx[j]];

			if (!it[j].refusal)
				continue;
			funcstore_remove(t->func_id);
			count_refusal(e, it[j].refusal);
			uncount(e, t);
			t->state = T_REFUSED;
			e->ninstalled--;
		}
		if (refused && install_all(e))
			goto out_reported;
	}
	ret = 0;
out:
	if (ret)
		ctl_err("enable --inline", "out of memory");
out_reported:
	free(it);
	free(idx);
	return ret;
}

/*
 * --inline and the default: the planned targets' copies carry their plans
 * as code, an edges plan's counters (docs/inline.md, "Counters (edges
 * mode)") or another plan's sites as calls ("Sites as calls"); once they
 * run, each plan goes to pathtrace.ko with PT_ADD_INLINE or
 * PT_ADD_INLINE_SITES, which places no probe. A target the copy refuses
 * loses its plan with --inline, and goes on kprobes by default. Returns 0,
 * or 1 when the copies could not be made and nothing took their place.
 */
static int inline_code_targets(struct enabler *e)
{
	struct inline_target *it = calloc(e->ntargets + 1, sizeof(*it));
	uint32_t *idx = calloc(e->ntargets + 1, sizeof(*idx));
	char **names = calloc(e->ntargets + 1, sizeof(*names));	/* enable reads kallsyms again */
	uint32_t i, n = 0;
	char def[300];
	int ret = 1;

	if (!it || !idx || !names) {
		ctl_err("enable --inline", "out of memory");
		goto out;
	}
	n = copy_inputs(e, it, idx);
	for (i = 0; i < n; i++) {
		names[i] = strdup(ksyms_get(klive_ksyms(e->k), it[i].sym)->name);
		if (!names[i]) {
			ctl_err("enable --inline", "out of memory");
			goto out;
		}
	}
	if (!n) {
		ret = 0;
		goto out;
	}
	ret = inline_enable(e->k, template_path(e->inline_ko, def, sizeof(def)), &e->sc, it, n);
	for (i = 0; i < n; i++) {
		struct target *t = &e->targets[idx[i]];

		if (!it[i].refusal && !add_plan(e, names[i], t->blob, t->blob_len, &it[i]))
			continue;
		if (it[i].refusal && e->inline_fallback) {
			if (!probes_instead(e, t, names[i], it[i].refusal))
				continue;
			count_refusal(e, "kernel");
		} else if (it[i].refusal) {
			funcstore_remove(t->func_id);
			count_refusal(e, it[i].refusal);
			uncount(e, t);
		} else {
			count_refusal(e, "kernel");
		}
		t->state = T_REFUSED;
		e->ninstalled--;
	}
	/* by default kprobes took the place of copies that could not be made */
	if (e->inline_fallback)
		ret = 0;
out:
	for (i = 0; names && i < n; i++) {
		free(names[i]);
		free(it[i].map);
	}
	free(names);
	free(it);
	free(idx);
	return ret;
}

static int inline_targets(struct enabler *e, const char *ko)
{
	struct inline_target *it = calloc(e->ntargets + 1, sizeof(*it));
	char def[300];
	uint32_t i;
	int ret;

	if (!it) {
		ctl_err("enable --inline", "out of memory");
		return 1;
	}
	ko = template_path(ko, def, sizeof(def));
	for (i = 0; i < e->ntargets; i++)
		it[i].sym = e->targets[i].sym;
	ret = inline_enable(e->k, ko, &e->sc, it, e->ntargets);
	for (i = 0; i < e->ntargets; i++) {
		struct target *t = &e->targets[i];

		if (it[i].refusal) {
			t->state = T_REFUSED;
			count_refusal(e, it[i].refusal);
			continue;
		}
		t->sym = it[i].sym;
		t->orig = it[i].orig;
		t->addr = ksyms_get(klive_ksyms(e->k), t->sym)->addr;
		survey(e, t);
	}
	free(it);
	return ret;
}

/*
 * Which mechanism carries the kernel functions (docs/inline.md, "Which
 * mechanism carries a function"): kprobes with --probes; copies alone
 * with --inline (--inline-probes: kprobes on the copies); by default
 * copies, with kprobes for what the copy refuses, unless no copy can be
 * made here, which enable then says. Returns 0, or 1 (reported).
 */
static int mechanism(struct enabler *e, int off, int nuser)
{
	const char *why = NULL;
	char def[300], what[400];
	const char *ko;

	e->copies_live = inline_loaded();
	if (off & ON_PROBES)
		return 0;
	if (off & ON_INLINE) {
		if (e->copies_live) {
			ctl_err("enable --inline", "inline copies are live (" INLINE_MODULE "): one "
				"set at a time (docs/inline.md); pathtracectl disable --all first");
			return 1;
		}
		if ((off & ON_INLINE_PROBES) && e->nloaded) {
			ctl_err("enable --inline-probes", "%d plans are loaded: probes on copies and "
				"on originals do not mix (docs/inline.md); pathtracectl disable --all "
				"first", e->nloaded);
			return 1;
		}
		e->inline_mode = 1;
		return 0;
	}
	ko = template_path(e->inline_ko, def, sizeof(def));
	if (nuser) {
		why = "user functions are named (docs/user.md)";
	} else if (e->o.flags & PT_PLAN_PROFILE) {
		why = "path profiles are counted there (docs/inline.md, \"Sites as calls\")";
	} else if (e->copies_live) {
		why = "the copies of an earlier enable are live, one set at a time; disable --all "
		      "ends them";
	} else if (access("/sys/kernel/livepatch", F_OK)) {
		why = "this kernel has no livepatch (/sys/kernel/livepatch)";
	} else if (access(ko, R_OK)) {
		snprintf(what, sizeof(what), "no inline template at %s (make install puts it "
			 "there; --inline-module, $PATHTRACE_INLINE_MODULE)", ko);
		why = what;
	}
	if (why) {
		printf("enable: kprobes carry the plans: %s\n", why);
		return 0;
	}
	e->inline_mode = 1;
	e->inline_fallback = 1;
	return 0;
}

static int cmd_enable(int argc, char **argv)
{
	struct enabler e;
	struct klive_paths p = { "/proc/kallsyms", "/proc/kcore", "/sys/module", NULL };
	char moddir[300];
	const char *weights = NULL, *ppp_file = NULL, *inline_ko = NULL;
	struct edge_profile profile;
	struct path_profile ppp_from;
	struct utsname u;
	char upath[PATH_MAX];
	const char *ufunc;
	int a, first, err, ret = 0, off = 0, nuser = 0;

	memset(&e, 0, sizeof(e));
	e.t0 = e.shown = ctl_now_s();
	/* One line per function as it happens, also into a pipe or a log. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	e.o.mode = PT_MODE_TRACE;
	err = parse(argc, argv, &e.o, &p.moddir, &weights, &ppp_file, &inline_ko, &off,
		    &e.user_pid, &first, &argc);
	if (err)
		return err;
	e.ppp_top = e.o.paths.ppp_hottest;
	if (ppp_file) {
		if (read_paths(ppp_file, &ppp_from))
			return 1;
		e.ppp_from = &ppp_from;
	}
	if (weights) {
		if (read_profile(weights, &profile)) {
			ret = 1;
			goto out_profile;
		}
		e.profile = &profile;
	}
	if (e.o.mode == PT_MODE_TRACE && !e.o.trace.encoding)
		e.o.trace.encoding = PT_ENC_WITNESS;
	/* witness plans: calls framed, not blocked (encoding.h), unless asked */
	if (e.o.mode == PT_MODE_TRACE && e.o.trace.encoding == PT_ENC_WITNESS &&
	    !(off & OFF_FRAMED_CALLS))
		e.o.flags |= PT_PLAN_FRAMED;
	if (!p.moddir) {
		uname(&u);
		snprintf(moddir, sizeof(moddir), "/lib/modules/%s", u.release);
		p.moddir = moddir;
	}
	e.fd = loaded_open("enable");
	if (e.fd < 0) {
		ret = 1;
		goto out_profile;
	}
	e.nloaded = loaded_list(e.fd, "enable", &e.loaded);
	if (e.nloaded < 0) {
		ret = 1;
		goto out_fd;
	}
	e.next_id = 1;
	for (a = 0; a < e.nloaded; a++)
		if (e.loaded[a].func_id >= e.next_id)
			e.next_id = e.loaded[a].func_id + 1;
	e.o.func_id = e.next_id;
	err = klive_open(&p, &e.k);
	if (err) {
		ctl_err("live kernel", "%s (kallsyms and kcore need root)", pt_strerror(err));
		ret = 1;
		goto out_loaded;
	}
	err = read_static_calls(&p, klive_ksyms(e.k), &e.sc);
	if (err)	/* the kernel then refuses probes on them: reported per function */
		ctl_err("static calls", "%s: probes may land on static-call sites",
			pt_strerror(err));
	e.inline_ko = inline_ko;
	for (a = first; a < argc; a++)
		nuser += user_pattern(argv[a], upath, sizeof(upath), &ufunc);
	if (mechanism(&e, off, nuser)) {
		ret = 1;
		goto out_klive;
	}
	e.inline_counts = e.inline_mode && e.o.mode == PT_MODE_EDGES;
	e.inline_calls = e.inline_mode && !e.inline_counts && !(off & ON_INLINE_PROBES);
	e.inline_code = e.inline_counts || e.inline_calls;
	/* plans for code on edges (docs/inline.md, "Placement for copies") */
	if (e.inline_code)
		e.o.costs = PLAN_COSTS_EDGES;
	/* kernel functions are traced system-wide (docs/user.md, "One process: --pid") */
	if (e.user_pid && !nuser) {
		ctl_err("enable", "--pid selects the process of user functions (BINARY:FUNC); "
			"none is named, and kernel functions are traced in every process");
		ret = 2;
		goto out_klive;
	}
	if (e.user_pid && kill(e.user_pid, 0) && errno == ESRCH) {
		ctl_err("enable", "--pid %d: no such process", (int)e.user_pid);
		ret = 1;
		goto out_klive;
	}
	if (nuser && user_refused(&e)) {
		ret = 1;
		goto out_klive;
	}
	/* with user functions every plan blocks its calls (docs/user.md) */
	if (nuser)
		e.o.flags &= ~PT_PLAN_FRAMED;
	for (a = first; a < argc; a++)
		if (!user_pattern(argv[a], upath, sizeof(upath), &ufunc))
			ret |= collect(&e, argv[a], (uint32_t)(a - first));
	if (e.inline_mode && !e.inline_code && inline_targets(&e, inline_ko))
		ret = 1;
	/*
	 * A framed plan's direct calls to traced functions are framed too
	 * when their callees write ENTERs (docs/runtime.md, "Every ENTER
	 * written in framed plans"): no blocker before them, at the price of
	 * those ENTERs' bytes. Where copies carry the sites, an ENTER costs
	 * its coding, not a hit (the callee's entry site runs either way):
	 * copies of heuristic plans keep implicit entries, whose blockers cost
	 * fewer instructions than the ENTERs; with --weights the blockers
	 * fall on hot calls and cost as many (docs/inline.md, "Implicit
	 * entries in copies").
	 */
	e.explicit_entries = (off & OFF_IMPLICIT_ENTRIES) ||
			     ((e.o.flags & PT_PLAN_FRAMED) && (!e.inline_calls || e.profile) &&
			      !(off & ON_IMPLICIT_ENTRIES));
	e.why_loud = !!(off & ON_WHY_LOUD);
	if (!(off & OFF_QUIET_CALLS) && (err = quiet_setup(&e))) {
		ctl_err("quiet calls", "%s", pt_strerror(err));
		ret = 1;
	} else if (install_all(&e)) {
		ret = 1;
	} else if (e.inline_code && !e.inline_fallback && e.o.mode == PT_MODE_TRACE &&
		   inline_settle(&e)) {
		ret = 1;
	} else if (e.inline_code && inline_code_targets(&e)) {
		ret = 1;
	}
	e.next_id += e.ntargets;
	for (a = first; a < argc; a++)
		if (user_pattern(argv[a], upath, sizeof(upath), &ufunc))
			ret |= user_collect(&e, upath, ufunc, argv[a]);
	progress(&e, 1);
	ret |= report(&e, argv + first, argc - first);
	for (a = 0; a < (int)e.ntargets; a++) {
		free(e.targets[a].tails);
		free(e.targets[a].calls);
		free(e.targets[a].ewit);
		free(e.targets[a].code);
		free(e.targets[a].cfg_blob);
		free(e.targets[a].blob);
		free(e.targets[a].edge_counter);
		free(e.targets[a].sites);
	}
	free(e.targets);
	quiet_calls_close(e.quiet);
out_klive:
	klive_close(e.k);
	static_calls_free(&e.sc);
	free(e.done);
out_loaded:
	free(e.loaded);
out_fd:
	close(e.fd);
out_profile:
	if (e.profile)
		edge_profile_free(e.profile);
	if (e.ppp_from)
		path_profile_free(e.ppp_from);
	return ret;
}

static const struct ctl_opt enable_opts[] = {
	{ "--mode", 0, CTL_MODES, "what is recorded: executions (trace, the default), path "
	  "numbers (paths), path counts (path-profile) or edge counts (edges)" },
	{ "--encoding", 0, "witness|bits", "--mode trace: witness words or one bit per branch" },
	{ "--verify", 0, NULL, "also record every executed block, for pathregen --verify" },
	{ "--inline", 0, NULL, "copies only: refuse what cannot run as a copy (by default "
	  "the functions run as copies in a generated livepatch module, their plans as code in "
	  "the copies, and kprobes carry what the copy refuses: docs/inline.md)" },
	{ "--probes", 0, NULL, "kprobes carry every plan, no copy is made" },
	{ "--inline-probes", 0, NULL, "--inline with the copies unchanged and the plans on "
	  "kprobes placed on them" },
	{ "--inline-module", 0, "KO", "the copies' template module (default "
	  "$PATHTRACE_INLINE_MODULE, else /lib/modules/RELEASE/extra/pathtrace_inline.ko)" },
	{ "--loud-calls", 0, NULL, "every call a call vertex, none proven quiet" },
	{ "--explicit-entries", 0, NULL, "an ENTER record at every entry (default of framed "
	  "witness plans on kprobes or with --weights)" },
	{ "--implicit-entries", 0, NULL, "no ENTER for a direct call between the functions "
	  "enabled together (default of copies without --weights)" },
	{ "--blocked-calls", 0, NULL, "witness plans block their calls with bits instead of "
	  "framing them" },
	{ "--why-loud", 0, NULL, "list each call that stays a call vertex, and why" },
	{ "--pid", 0, "PID", "user functions (BINARY:FUNC) in this process only; kernel "
	  "functions stay system-wide" },
	{ "--moddir", 0, "DIR", "modules.dep and the .ko files under DIR" },
	{ "--weights", 0, "FILE", "plan from an edge profile (pathregen --edges)" },
	{ "--ppp", 0, "N", "path-profile: the N likeliest paths of each function counted densely" },
	{ "--ppp-paths", 0, "FILE", "path-profile: those of a pathregen --paths profile" },
	{ "--path-codes", 0, "K", "--mode paths: a prefix code over the K likeliest paths of "
	  "each start (64; 0: full-width numbers)" },
	{ "--adapting-words", 0, "0|1", "witness words adapt within a segment (1) or not (0)" },
	{ NULL, 0, NULL, NULL },
};

CTL_COMMAND(enable, cmd_enable, "FUNC...", "plan and probe kernel functions (names or globs, "
	    "module functions)", enable_opts)
