// SPDX-License-Identifier: GPL-2.0
/*
 * pathtracectl enable [--mode trace|paths|edges] [--encoding witness|bits]
 *                     [--verify] [--moddir DIR] FUNC...
 *
 * For each function (names or shell globs over the kernel's text symbols,
 * module functions included): find it and its .cold part in
 * /proc/kallsyms, read its live bytes from /proc/kcore, recover the CFG,
 * build the plan, store code + CFG + plan for `record` (funcstore), and
 * hand the plan to pathtrace.ko (PT_IOC_ADD_PLAN), which registers the
 * probes. A function that is refused (CFG, plan or kernel) is reported
 * with its reason; the others go ahead. Static-call sites of vmlinux
 * (read from kcore) are never chosen as probe sites: kprobes refuse them.
 * Exit status: 0 every name enabled (a glob: at least one of its matches),
 * 1 something named was refused or matched nothing, 2 bad command line.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <pathtrace/cfg.h>
#include <pathtrace/error.h>
#include <pathtrace/funcstore.h>
#include <pathtrace/ksyms.h>
#include <pathtrace/plan.h>
#include <pathtrace/static_calls.h>
#include <pathtrace/tracefile.h>

#include "commands.h"
#include "loaded.h"

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
};

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
	default:
		return strerror(err);
	}
}

/* Keeps what record needs, then asks the module. Returns 0 or 1 (reported). */
static int install(struct enabler *e, const struct cfg_input *in, const struct cfg *c,
		   const void *blob, size_t blob_len)
{
	struct pt_plan_arg a;
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
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.plan = (uintptr_t)blob;
	a.plan_len = (uint32_t)blob_len;
	if (ioctl(e->fd, PT_IOC_ADD_PLAN, &a) < 0) {
		err = errno;
		funcstore_remove(e->o.func_id);
		printf("%s: refused by pathtrace.ko: %s\n", in->name, add_reason(err));
		ctl_err(in->name, "PT_IOC_ADD_PLAN: %s", strerror(err));
		return 1;
	}
	return 0;
}

/* Enables text symbol i. Returns 0 enabled, 1 refused (reported). */
static int enable_sym(struct enabler *e, uint32_t i)
{
	const struct ksym *s = ksyms_get(klive_ksyms(e->k), i);
	struct cfg_input in;
	struct cfg c;
	struct plan pl;
	const char *tag = NULL;
	char detail[160] = "";
	void *blob = NULL;
	size_t len = 0;
	int err, ret = 1;

	if (already(e, s->addr)) {
		printf("%s: already enabled\n", s->name);
		return 0;
	}
	err = klive_input_sym(e->k, i, &in, &tag, detail, sizeof(detail));
	if (err) {
		if (err == -PT_EREFUSED)
			printf("%s: refused: %s (%s)\n", s->name, tag, detail);
		else
			printf("%s: cannot read it: %s\n", s->name, pt_strerror(err));
		return 1;
	}
	memset(&c, 0, sizeof(c));
	err = cfg_build(&in, &c);
	if (err) {
		if (err == -PT_EREFUSED)
			printf("%s: refused: %s (%s)\n", s->name, c.refusal, c.detail);
		else
			printf("%s: no CFG: %s\n", s->name, pt_strerror(err));
		cfg_free(&c);
		return 1;
	}
	static_calls_mark(&e->sc, &c);
	err = plan_build(&c, &e->o, &pl);
	if (err) {
		printf("%s: refused: no plan: %s\n", s->name,
		       pl.reason[0] ? pl.reason : pt_strerror(err));
	} else if (plan_serialize(&pl, &blob, &len)) {
		ctl_err(s->name, "out of memory");
	} else if (!install(e, &in, &c, blob, len)) {
		printf("%s: enabled as %u: %u probes (%u jump-optimizable), every-block %u\n",
		       s->name, e->o.func_id, pl.hdr.nr_sites + pl.hdr.nr_verify,
		       pl.noptimizable, pl.every_block_probes);
		e->done = realloc(e->done, (e->ndone + 1) * sizeof(*e->done));
		if (e->done)
			e->done[e->ndone++] = s->addr;
		e->o.func_id++;
		ret = 0;
	}
	free(blob);
	plan_free(&pl);
	cfg_free(&c);
	return ret;
}

static int is_cold(const char *name)
{
	const char *d = strstr(name, ".cold");

	return d && (d[5] == 0 || d[5] == '.');
}

/* Enables every text symbol that pattern names. Returns the exit status. */
static int enable_pattern(struct enabler *e, const char *pattern)
{
	const struct ksyms *ks = klive_ksyms(e->k);
	uint32_t n = ksyms_count(ks), i, matched = 0, ok = 0;
	int glob = strpbrk(pattern, "*?[") != NULL;

	for (i = 0; i < n; i++) {
		const struct ksym *s = ksyms_get(ks, i);

		if (is_cold(s->name) || (glob ? fnmatch(pattern, s->name, 0) :
					 strcmp(pattern, s->name)))
			continue;
		matched++;
		ok += !enable_sym(e, i);
	}
	if (!matched) {
		ctl_err(pattern, "no such function in /proc/kallsyms");
		return 1;
	}
	if (glob)
		printf("%s: %u of %u matching functions enabled\n", pattern, ok, matched);
	return ok && (glob || ok == matched) ? 0 : 1;
}

static int parse(int argc, char **argv, struct plan_opts *o, const char **moddir, int *first)
{
	int a;

	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		const char *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(argv[a], "--verify")) {
			o->flags |= PT_PLAN_VERIFY;
			continue;
		}
		if (!v) {
			ctl_err("enable", "%s needs a value", argv[a]);
			return 2;
		}
		if (!strcmp(argv[a], "--mode")) {
			o->mode = !strcmp(v, "trace") ? PT_MODE_TRACE :
				  !strcmp(v, "paths") ? PT_MODE_PATHS :
				  !strcmp(v, "edges") ? PT_MODE_EDGES : 0;
		} else if (!strcmp(argv[a], "--encoding")) {
			o->encoding = !strcmp(v, "witness") ? PT_ENC_WITNESS :
				      !strcmp(v, "bits") ? PT_ENC_BITS : 0;
			if (!o->encoding) {
				ctl_err("enable", "--encoding witness|bits, not %s", v);
				return 2;
			}
		} else if (!strcmp(argv[a], "--moddir")) {
			*moddir = v;
		} else {
			ctl_err("enable", "unknown option %s", argv[a]);
			return 2;
		}
		if (!o->mode) {
			ctl_err("enable", "--mode trace|paths|edges, not %s", v);
			return 2;
		}
		a++;
	}
	if (a == argc) {
		ctl_err("enable", "usage: pathtracectl enable [--mode trace|paths|edges] "
			"[--encoding witness|bits] [--verify] [--moddir DIR] FUNC...");
		return 2;
	}
	if (o->encoding && o->mode != PT_MODE_TRACE) {
		ctl_err("enable", "--encoding applies to --mode trace only");
		return 2;
	}
	if (o->mode == PT_MODE_PATHS)
		o->encoding = PT_ENC_PATH;
	*first = a;
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

static int cmd_enable(int argc, char **argv)
{
	struct enabler e;
	struct klive_paths p = { "/proc/kallsyms", "/proc/kcore", "/sys/module", NULL };
	char moddir[300];
	struct utsname u;
	int a, first, err, ret = 0;

	memset(&e, 0, sizeof(e));
	e.o.mode = PT_MODE_TRACE;
	err = parse(argc, argv, &e.o, &p.moddir, &first);
	if (err)
		return err;
	if (e.o.mode == PT_MODE_TRACE && !e.o.encoding)
		e.o.encoding = PT_ENC_WITNESS;
	if (!p.moddir) {
		uname(&u);
		snprintf(moddir, sizeof(moddir), "/lib/modules/%s", u.release);
		p.moddir = moddir;
	}
	e.fd = loaded_open("enable");
	if (e.fd < 0)
		return 1;
	e.nloaded = loaded_list(e.fd, "enable", &e.loaded);
	if (e.nloaded < 0) {
		close(e.fd);
		return 1;
	}
	e.next_id = 1;
	for (a = 0; a < e.nloaded; a++)
		if (e.loaded[a].func_id >= e.next_id)
			e.next_id = e.loaded[a].func_id + 1;
	e.o.func_id = e.next_id;
	err = klive_open(&p, &e.k);
	if (err) {
		ctl_err("live kernel", "%s (kallsyms and kcore need root)", pt_strerror(err));
		free(e.loaded);
		close(e.fd);
		return 1;
	}
	err = read_static_calls(&p, klive_ksyms(e.k), &e.sc);
	if (err)	/* the kernel then refuses probes on them: reported per function */
		ctl_err("static calls", "%s: probes may land on static-call sites",
			pt_strerror(err));
	for (a = first; a < argc; a++)
		ret |= enable_pattern(&e, argv[a]);
	klive_close(e.k);
	static_calls_free(&e.sc);
	free(e.loaded);
	free(e.done);
	close(e.fd);
	return ret;
}

CTL_COMMAND(enable, cmd_enable, "enable [--mode trace|paths|edges] [--encoding witness|bits] "
	    "[--verify] [--moddir DIR] FUNC...   plan and probe kernel functions (globs allowed)")
