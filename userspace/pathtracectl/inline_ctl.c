// SPDX-License-Identifier: GPL-2.0
/*
 * enable --inline: the targets' copies in a generated livepatch module
 * (docs/inline.md). Copy, write, load, wait for the transition, read the
 * copies back and check them; disable's inline_remove undoes it once no
 * task can be inside a copy.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pathtrace/cfg.h>
#include <pathtrace/error.h>
#include <pathtrace/funcstore.h>
#include <pathtrace/inline.h>

#include "commands.h"
#include "inline_ctl.h"

#define LP_DIR "/sys/kernel/livepatch/" INLINE_MODULE

static int exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

int inline_loaded(void)
{
	return exists("/sys/module/" INLINE_MODULE);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The first line of path into buf, without its newline ("?" when unreadable). */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f || !fgets(buf, (int)len, f))
		snprintf(buf, len, "?");
	else
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
}

/* Reads the number in LP_DIR/name, or -1. */
static int lp_read(const char *name)
{
	char path[128], v[32];

	snprintf(path, sizeof(path), LP_DIR "/%s", name);
	read_line(path, v, sizeof(v));
	return isdigit((unsigned char)v[0]) ? atoi(v) : -1;
}

static int lp_write_enabled(int v)
{
	FILE *f = fopen(LP_DIR "/enabled", "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%d\n", v) > 0;
	return fclose(f) || !ok ? -1 : 0;
}

/* 1 when the switch-over is done: transition reads 0. */
static int switched_over(void)
{
	return lp_read("transition") == 0;
}

/* 1 when the switch back is done: livepatch freed the patch. */
static int switched_back(void)
{
	return !exists(LP_DIR);
}

/*
 * Counts the tasks livepatch's transition still waits for: their
 * /proc/PID/task/TID/patch_state is not target (1 patched, 0 unpatched).
 * With where, prints each (at most 16) with its kernel stack, after a line
 * saying it is where. Returns how many there are.
 */
static int pending_tasks(int target, const char *where)
{
	char path[600], line[256], comm[32];
	DIR *proc = opendir("/proc"), *tasks;
	struct dirent *p, *t;
	int found = 0;
	FILE *f;

	if (!proc)
		return 0;
	while ((p = readdir(proc))) {
		if (!isdigit((unsigned char)p->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		tasks = opendir(path);
		if (!tasks)
			continue;	/* gone */
		while ((t = readdir(tasks))) {
			if (!isdigit((unsigned char)t->d_name[0]))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/patch_state", p->d_name,
				 t->d_name);
			read_line(path, line, sizeof(line));
			if (line[0] == '?' || atoi(line) == target || atoi(line) < 0)
				continue;	/* gone, switched, or no transition */
			found++;
			if (!where || found > 16)
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/comm", p->d_name, t->d_name);
			read_line(path, comm, sizeof(comm));
			fprintf(stderr, "pathtracectl: task %s (%s) is %s; its stack:\n", t->d_name,
				comm, where);
			snprintf(path, sizeof(path), "/proc/%s/task/%s/stack", p->d_name, t->d_name);
			f = fopen(path, "r");
			while (f && fgets(line, sizeof(line), f))
				fprintf(stderr, "    %s", line);
			if (f)
				fclose(f);
		}
		closedir(tasks);
	}
	closedir(proc);
	if (where && found > 16)
		fprintf(stderr, "pathtracectl: ... and %d more tasks\n", found - 16);
	return found;
}

/*
 * Waits until done() says livepatch's transition is over, or until tasks
 * have stayed unswitched (pending_tasks(target)) for wait_s seconds in all.
 * Every 15 s the kernel itself sends a fake signal to each task still in
 * the old state (kernel/livepatch/transition.c, SIGNALS_TIMEOUT: a task
 * asleep interruptibly wakes, leaves through the system call's exit and
 * switches there; a kthread asleep interruptibly is woken); user space has
 * no safer lever, and force is never used. Once every task has switched
 * back, the kernel still unregisters one ftrace handler per copied function
 * (each an RCU-tasks grace period) before it frees the patch: that time is
 * waited for without a limit, since nothing is blocked then (docs/inline.md,
 * "Switching over and back"). Returns 0, or -1 when tasks stayed unswitched.
 */
static int wait_transition(int (*done)(void), int target, int wait_s)
{
	long blocked = 0, i;

	for (i = 0; !done(); i++) {
		if (i % 10 == 0 && pending_tasks(target, NULL) > 0 && ++blocked > wait_s)
			return -1;
		sleep_ms(100);
	}
	return 0;
}

int inline_remove(int wait_s)
{
	int i;

	if (exists(LP_DIR)) {
		if (lp_read("enabled") == 1 && lp_write_enabled(0)) {
			ctl_err(INLINE_MODULE, "cannot disable its livepatch: %s", strerror(errno));
			return 1;
		}
		/* the reverse transition: done when livepatch frees the patch */
		if (wait_transition(switched_back, 0, wait_s)) {
			ctl_err(INLINE_MODULE, "tasks stayed inside the copies for %d s: "
				"the module stays loaded, nothing was forced (disable again "
				"later, or end these tasks)", wait_s);
			pending_tasks(0, "not switched back yet (inside a copy, or its stack "
				     "is unreliable)");
			return 1;
		}
	}
	for (i = 0; i < 100; i++) {
		if (!syscall(SYS_delete_module, INLINE_MODULE, O_NONBLOCK))
			break;
		if (errno != EBUSY && errno != EAGAIN && errno != EWOULDBLOCK) {
			if (errno == ENOENT)
				return 0;
			break;
		}
		sleep_ms(100);	/* livepatch drops its module reference from a work item */
	}
	if (inline_loaded()) {
		ctl_err(INLINE_MODULE, "cannot unload: %s", strerror(errno));
		return 1;
	}
	printf("inline copies removed: the originals run again\n");
	return 0;
}

static void refuse(struct inline_target *t, const char *name, const char *tag, const char *detail)
{
	printf("%s: refused: %s (%s)\n", name, tag, detail);
	t->refusal = tag;
}

/*
 * The generated module allocates the copies' counters in per-CPU pieces of
 * PT_INLINE_PIECE_BYTES, each copy's in one: a copy with more counters is
 * refused here.
 */
static void refuse_over_piece(struct inline_target *t, const struct inline_copy *cp, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!t[i].refusal && 8ull * cp[i].ncounters > PT_INLINE_PIECE_BYTES)
			refuse(&t[i], cp[i].name, "inline-percpu", "its counters do not fit one "
			       "piece of the copies' per-CPU counters");
}

/* What the copies' increments cost: how many save the flags or a register. */
static void print_sequences(const struct inline_copy *cps, uint32_t n)
{
	uint64_t seq = 0, flags = 0, regs = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		seq += cps[i].nsequences;
		flags += cps[i].nflags_saved;
		regs += cps[i].nregs_saved;
	}
	if (seq)
		printf("inline: %" PRIu64 " increments, %" PRIu64 " saving the flags, %" PRIu64
		       " saving a register (none dead)\n", seq, flags, regs);
}

/*
 * The klp_func old_sympos of text symbol i: its position among its name's
 * symbols in vmlinux (kallsyms is in address order, as livepatch counts),
 * or -1 for a module's repeated name (a module's kallsyms is not). A
 * unique name gets 1, not 0: livepatch then stops its kallsyms walk at the
 * match instead of walking every symbol to prove the name unique (a 0 and
 * a 1 name the same function to it).
 */
static int64_t sympos(const struct ksyms *ks, uint32_t i)
{
	uint32_t same, pos = ksyms_name_pos(ks, i, &same);

	if (same > 1 && ksyms_get(ks, i)->module)
		return -1;
	return pos;
}

/* A range of the kprobes blacklist, [s, e). */
struct bl_range {
	uint64_t s, e;
};

/*
 * The kprobes blacklist (noinstr, NOKPROBE_SYMBOL), read once per build:
 * the kernel formats every entry with its symbol on each read of the file.
 */
struct blacklist {
	struct bl_range *r;	/* sorted by s; r[i].e the greatest end of r[0..i] (they may overlap) */
	size_t n;
};

static int bl_range_cmp(const void *a, const void *b)
{
	const struct bl_range *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/*
 * bl from /sys/kernel/debug/kprobes/blacklist; empty without debugfs
 * (kprobes checks the copy's sites as it can). Returns 0 or -PT_ENOMEM.
 */
static int blacklist_read(struct blacklist *bl)
{
	FILE *f = fopen("/sys/kernel/debug/kprobes/blacklist", "r");
	size_t cap = 0, i;
	struct bl_range *g;
	char line[256];
	uint64_t s, e;

	memset(bl, 0, sizeof(*bl));
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "0x%" SCNx64 "-0x%" SCNx64, &s, &e) != 2)
			continue;
		if (bl->n == cap) {
			cap = cap ? 2 * cap : 1024;
			g = realloc(bl->r, cap * sizeof(*g));
			if (!g) {
				fclose(f);
				free(bl->r);
				memset(bl, 0, sizeof(*bl));
				return -PT_ENOMEM;
			}
			bl->r = g;
		}
		bl->r[bl->n++] = (struct bl_range){ s, e };
	}
	fclose(f);
	if (bl->n)
		qsort(bl->r, bl->n, sizeof(*bl->r), bl_range_cmp);
	for (i = 1; i < bl->n; i++)
		if (bl->r[i].e < bl->r[i - 1].e)
			bl->r[i].e = bl->r[i - 1].e;
	return 0;
}

/* 1 when [a, a + len) meets a range of bl. */
static int blacklisted(const struct blacklist *bl, uint64_t a, uint64_t len)
{
	size_t lo = 0, hi = bl->n;

	/* lo: the ranges that start before a + len */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bl->r[mid].s < a + len)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && bl->r[lo - 1].e > a;
}

struct work {
	struct inline_copy *cp;	/* per target */
	struct cfg *orig;	/* per target: the original's CFG */
	struct inline_copy *acc;	/* the accepted copies, linked, in copy order */
	uint32_t *idx;		/* their targets */
	uint32_t nidx;
	struct blacklist bl;
};

/* The copy of target i, or a refusal. Returns 0, or -PT_ENOMEM. */
static int copy_one(struct klive *k, const struct inline_env *env, const struct blacklist *bl,
		    struct inline_target *t, struct inline_copy *cp, struct cfg *c)
{
	const struct ksyms *ks = klive_ksyms(k);
	const struct ksym *s = ksyms_get(ks, t->sym);
	struct cfg_input in;
	const char *tag = NULL;
	char detail[200];
	int64_t pos;
	int err;

	t->orig = s->addr;
	err = klive_input_sym(k, t->sym, &in, &tag, detail, sizeof(detail));
	if (err) {
		refuse(t, s->name, err == -PT_EREFUSED && tag ? tag : "unreadable",
		       err == -PT_EREFUSED ? detail : pt_strerror(err));
		return err == -PT_ENOMEM ? err : 0;
	}
	if (inline_fentry_site(&in) < 0) {
		refuse(t, s->name, "inline-no-fentry", "no __fentry__ site at its start (notrace): "
		       "livepatch cannot redirect it");
		return 0;
	}
	err = cfg_build(&in, c);
	if (err) {
		refuse(t, s->name, err == -PT_EREFUSED && c->refusal ? c->refusal : "no-cfg",
		       err == -PT_EREFUSED ? c->detail : pt_strerror(err));
		return err == -PT_ENOMEM ? err : 0;
	}
	static_calls_mark(env->sc, c);
	err = inline_copy_build(&in, c, env, cp);
	if (!err || err == -PT_EREFUSED)
		cp->name = strdup(s->name);	/* kallsyms is read again after loading */
	if (!err && !cp->name)
		err = -PT_ENOMEM;
	if (err) {
		if (err == -PT_EREFUSED)
			refuse(t, s->name, cp->refusal, cp->detail);
		return err == -PT_ENOMEM ? err : 0;
	}
	cp->objname = s->module;
	pos = sympos(ks, t->sym);
	if (pos < 0) {
		refuse(t, s->name, "inline-ambiguous", "its name is not unique in its module");
		return 0;
	}
	cp->sympos = (uint64_t)pos;
	if (blacklisted(bl, cp->addr, cp->len)) {
		refuse(t, s->name, "inline-kprobe-blacklist",
		       "kprobes must not probe this code (noinstr or NOKPROBE_SYMBOL)");
		return 0;
	}
	err = klive_orc(k, s->module, cp->addr, cp->len, &cp->orc, &cp->norc);
	if (err) {
		snprintf(detail, sizeof(detail), "no ORC entries for its code: %s", pt_strerror(err));
		refuse(t, s->name, "inline-no-orc", detail);
		return err == -PT_ENOMEM ? err : 0;
	}
	if (t->sites) {
		err = inline_sites_insert(&in, c, cp, t->sites, t->nsites);
		if (err == -PT_EREFUSED)
			refuse(t, s->name, cp->refusal, cp->detail);
		else if (err && err != -PT_ENOMEM)
			refuse(t, s->name, "inline-sites", pt_strerror(err));
		return err == -PT_ENOMEM ? err : 0;
	}
	if (!t->edge_counter)
		return 0;
	if (t->nedges != c->nedges) {
		refuse(t, s->name, "inline-plan", "its plan was made for another CFG");
		return 0;
	}
	err = inline_counters_insert(&in, c, cp, t->edge_counter, t->entry_counter, t->ncounters);
	if (err == -PT_EREFUSED)
		refuse(t, s->name, cp->refusal, cp->detail);
	else if (err && err != -PT_ENOMEM)
		refuse(t, s->name, "inline-counters", pt_strerror(err));
	return err == -PT_ENOMEM ? err : 0;
}

/* 1 when byte off of cp is inside a relocated field. */
static int relocated(const struct inline_copy *cp, uint32_t off)
{
	uint32_t k;

	for (k = 0; k < cp->nrelocs; k++)
		if (off - cp->relocs[k].off < 4)
			return 1;
	return 0;
}

/* The static-key site of cp covering byte off, or NULL. */
static const struct inline_key *key_site(const struct inline_copy *cp, uint32_t off)
{
	uint32_t k;

	for (k = 0; k < cp->nkeys; k++)
		if (off - (cp->keys[k].code - cp->addr) < cp->keys[k].len)
			return &cp->keys[k];
	return NULL;
}

/*
 * A copy with counters: the kernel holds the bytes written, relocated
 * fields aside, and each static-key site in the original's live state
 * (the loader patched those whose key was not in its initial state).
 */
static int check_bytes(const struct inline_copy *cp, const struct cfg_input *in, char *why,
		       size_t len)
{
	const struct inline_key *ky;
	uint8_t want[5];
	uint32_t i;

	if (in->len < cp->len) {
		snprintf(why, len, "%u bytes loaded, %u written", in->len, cp->len);
		return -PT_EMISMATCH;
	}
	for (i = 0; i < cp->len; i++) {
		ky = key_site(cp, i);
		if (ky) {
			inline_key_bytes(want, ky->len, ky->live_jump, ky->code - cp->addr,
					 ky->target - cp->addr);
			if (memcmp(in->code + i, want, ky->len)) {
				snprintf(why, len, "+0x%x: its static-key site is not in the "
					 "original's state (%s)", i, ky->live_jump ? "jmp" : "nop");
				return -PT_EMISMATCH;
			}
			i += ky->len - 1;
			continue;
		}
		if (in->code[i] != cp->code[i] && !relocated(cp, i)) {
			snprintf(why, len, "+0x%x differs from what was written", i);
			return -PT_EMISMATCH;
		}
	}
	return 0;
}

/* Loads the module at path and waits for the switch-over. Returns 0 or 1 (reported). */
static int load(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0) {
		ctl_err(path, "%s", strerror(errno));
		return 1;
	}
	err = syscall(SYS_finit_module, fd, "", 0) ? errno : 0;
	close(fd);
	if (err) {
		ctl_err(INLINE_MODULE, "the kernel refused the generated module: %s (dmesg says why)",
			strerror(err));
		return 1;
	}
	if (wait_transition(switched_over, 1, INLINE_WAIT_S)) {
		ctl_err(INLINE_MODULE, "livepatch's transition did not finish in %d s (a task "
			"sleeps inside an original): switching back", INLINE_WAIT_S);
		pending_tasks(1, "not switched over yet (inside an original, or its stack "
			     "is unreliable)");
		inline_remove(INLINE_WAIT_S);
		return 1;
	}
	return 0;
}

/* A copy with sites, loaded at at: its address table for pathtrace.ko. Returns 0 or -PT_ENOMEM. */
static int site_map(struct inline_target *t, const struct inline_copy *cp, uint64_t at)
{
	uint32_t k;

	t->map = calloc(cp->naddrs + 1, sizeof(*t->map));
	if (!t->map)
		return -PT_ENOMEM;
	for (k = 0; k < cp->naddrs; k++)
		t->map[k] = (struct pt_inline_addr){ .copy = at + cp->addrs[k].copy,
			.orig = cp->addrs[k].orig,
			.flags = cp->addrs[k].site ? PT_INLINE_ADDR_SITE : 0 };
	t->nmap = cp->naddrs;
	t->copy_addr = at;
	t->copy_len = cp->len;
	return 0;
}

/* After loading: each copy's symbol, its CFG checked against the original's. */
static int check_copies(struct klive *k, struct inline_target *t, struct work *w, char *why,
			size_t len)
{
	const struct ksyms *ks = klive_ksyms(k);
	struct inline_copy *cps = calloc(w->nidx + 1, sizeof(*cps));
	uint64_t *at = calloc(w->nidx + 1, sizeof(*at));
	uint32_t i;
	int err = 0;

	if (!cps || !at) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < w->nidx; i++) {
		int64_t s = ksyms_find(ks, w->cp[w->idx[i]].name, INLINE_MODULE);

		cps[i] = w->cp[w->idx[i]];
		if (s < 0) {
			snprintf(why, len, "%s: no copy in kallsyms", cps[i].name);
			err = -PT_ENOENT;
			goto out;
		}
		t[w->idx[i]].sym = (uint32_t)s;
		at[i] = ksyms_get(ks, (uint32_t)s)->addr;
	}
	for (i = 0; i < w->nidx && !err; i++) {
		struct cfg_input in;
		struct cfg c;
		const char *tag;
		char detail[200];

		err = klive_input_sym(k, t[w->idx[i]].sym, &in, &tag, detail, sizeof(detail));
		if (err) {
			snprintf(why, len, "%s: its copy: %s", cps[i].name,
				 err == -PT_EREFUSED ? detail : pt_strerror(err));
			break;
		}
		if (t[w->idx[i]].edge_counter || t[w->idx[i]].sites) {
			err = check_bytes(&cps[i], &in, detail, sizeof(detail));
			if (err)
				snprintf(why, len, "%s: its copy: %s", cps[i].name, detail);
			t[w->idx[i]].counter_off = inline_module_counter_offset(cps, i);
			if (!err && t[w->idx[i]].sites)
				err = site_map(&t[w->idx[i]], &cps[i], at[i]);
			continue;
		}
		err = cfg_build(&in, &c);
		if (!err)
			err = inline_check(&w->orig[w->idx[i]], &c, cps, w->nidx, at, detail,
					   sizeof(detail));
		else
			snprintf(detail, sizeof(detail), "%s", c.refusal ? c.detail : pt_strerror(err));
		if (err)
			snprintf(why, len, "%s: its copy's CFG: %s", cps[i].name, detail);
		cfg_free(&c);
	}
out:
	free(cps);	/* a shallow view of w->cp */
	free(at);
	return err;
}

/*
 * The copies' static-call sites join sc, so that no plan puts a probe on
 * one (kprobes refuses them in a module as in vmlinux). Returns 0 or -PT_ENOMEM.
 */
static int add_copies_calls(struct klive *k, struct static_calls *sc, const struct inline_target *t,
			    const struct work *w)
{
	const struct ksyms *ks = klive_ksyms(k);
	uint64_t *site, *key;
	uint32_t i, j, n = 0;
	int err;

	for (i = 0; i < w->nidx; i++)
		n += w->cp[w->idx[i]].ncalls;
	site = calloc(n + 1, sizeof(*site));
	key = calloc(n + 1, sizeof(*key));
	if (!site || !key) {
		free(site);
		free(key);
		return -PT_ENOMEM;
	}
	for (i = n = 0; i < w->nidx; i++) {
		const struct inline_copy *cp = &w->cp[w->idx[i]];
		uint64_t at = ksyms_get(ks, t[w->idx[i]].sym)->addr;

		for (j = 0; j < cp->ncalls; j++, n++) {
			site[n] = at + (cp->calls[j].addr - cp->addr);
			key[n] = cp->calls[j].key | (cp->calls[j].tail ? STATIC_CALL_SITE_TAIL : 0);
		}
	}
	err = static_calls_add(sc, site, key, n);
	free(site);
	free(key);
	return err;
}

/* Frees what build() made of n targets (w itself is the caller's). */
static void work_free(struct work *w, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (w->cp) {
			free((char *)w->cp[i].name);
			inline_copy_free(&w->cp[i]);
		}
		if (w->orig)
			cfg_free(&w->orig[i]);
	}
	free(w->cp);
	free(w->orig);
	free(w->idx);
	free(w->acc);
	free(w->bl.r);
}

/*
 * The copies of the n targets, or their refusals (printed, in t[i].refusal):
 * w->acc holds the accepted ones, linked (calls between copies stay in the
 * copies; a jump into another's middle refuses), w->idx their targets.
 * Returns 0, or -PT_ENOMEM.
 */
static int build(struct klive *k, struct static_calls *sc, struct inline_target *t, uint32_t n,
		 struct work *w)
{
	struct inline_env env;
	uint32_t i, bad;
	int err = 0;

	w->cp = calloc(n + 1, sizeof(*w->cp));
	w->orig = calloc(n + 1, sizeof(*w->orig));
	w->idx = calloc(n + 1, sizeof(*w->idx));
	w->acc = calloc(n + 1, sizeof(*w->acc));
	if (!w->cp || !w->orig || !w->idx || !w->acc || blacklist_read(&w->bl))
		return -PT_ENOMEM;
	/* keys must be vmlinux's: a module's could go away under the copies' entries */
	env.sc = sc;
	env.keys_lo = ksyms_addr(klive_ksyms(k), "_text");
	env.keys_hi = ksyms_addr(klive_ksyms(k), "_end");
	if (!env.keys_lo || env.keys_hi <= env.keys_lo)
		env.keys_lo = env.keys_hi = 0;	/* unknown: every key refused */
	for (i = 0; i < n && !err; i++)
		err = copy_one(k, &env, &w->bl, &t[i], &w->cp[i], &w->orig[i]);
	if (err)
		return err;
	refuse_over_piece(t, w->cp, n);
	do {
		w->nidx = 0;
		for (i = 0; i < n; i++)
			if (!t[i].refusal) {
				w->idx[w->nidx] = i;
				w->acc[w->nidx++] = w->cp[i];
			}
		bad = inline_link(w->acc, w->nidx);
		if (bad) {
			i = w->idx[bad - 1];
			refuse(&t[i], w->acc[bad - 1].name, w->acc[bad - 1].refusal,
			       w->acc[bad - 1].detail);
		}
		for (i = 0; i < w->nidx; i++)	/* the links live in the relocations */
			w->cp[w->idx[i]] = w->acc[i];
	} while (bad);
	return 0;
}

int inline_refusals(struct klive *k, struct static_calls *sc, struct inline_target *t,
		    uint32_t n)
{
	struct work w = { 0 };
	uint32_t i;
	int ret = -PT_ENOMEM;

	if (!build(k, sc, t, n, &w))
		for (ret = 0, i = 0; i < n; i++)
			ret += t[i].refusal != NULL;
	work_free(&w, n);
	return ret;
}

int inline_enable(struct klive *k, const char *template, struct static_calls *sc,
		  struct inline_target *t, uint32_t n)
{
	struct work w = { 0 };
	char path[4200], why[400];
	/* the phases' ends: start, copied, written, switched over, read back, added */
	double mark[6];
	uint32_t i;
	int err = 0, ret = 1;

	mark[0] = ctl_now_s();
	if (inline_loaded()) {
		ctl_err("enable --inline", "copies are live already (" INLINE_MODULE "): "
			"pathtracectl disable --all first");
		return 1;
	}
	if (build(k, sc, t, n, &w))
		goto nomem;
	mark[1] = ctl_now_s();
	if (!w.nidx) {
		ret = 0;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/inline.ko", funcstore_dir());
	mkdir(funcstore_dir(), 0700);
	err = inline_module_write(template, path, w.acc, w.nidx, why, sizeof(why));
	if (err) {
		ctl_err("enable --inline", "cannot write the module: %s", why);
		goto out;
	}
	mark[2] = ctl_now_s();
	if (load(path))
		goto out;
	mark[3] = ctl_now_s();
	/* the copies are the kernel's symbols now, where the module's sections lie */
	err = klive_module_loaded(k, INLINE_MODULE, path);
	mark[4] = ctl_now_s();
	if (err) {
		ctl_err("enable --inline", "reading the copies back: %s", pt_strerror(err));
		inline_remove(INLINE_WAIT_S);
		goto out;
	}
	err = check_copies(k, t, &w, why, sizeof(why));
	if (!err) {
		err = add_copies_calls(k, sc, t, &w);
		if (err)
			snprintf(why, sizeof(why), "out of memory");
	}
	if (err) {
		ctl_err("enable --inline", "%s: switching back", why);
		inline_remove(INLINE_WAIT_S);
		goto out;
	}
	mark[5] = ctl_now_s();
	printf("inline: %u functions run as copies in %s (%.1f s: copied %.1f, module written "
	       "%.1f, loaded and switched over %.1f, kernel read back %.1f, checked and added %.1f)\n",
	       w.nidx, INLINE_MODULE, mark[5] - mark[0], mark[1] - mark[0], mark[2] - mark[1],
	       mark[3] - mark[2], mark[4] - mark[3], mark[5] - mark[4]);
	print_sequences(w.acc, w.nidx);
	ret = 0;
	goto out;
nomem:
	ctl_err("enable --inline", "out of memory");
out:
	if (ret)
		for (i = 0; i < n; i++)
			if (!t[i].refusal)
				t[i].refusal = "inline-module";
	work_free(&w, n);
	return ret;
}
