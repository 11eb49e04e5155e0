// SPDX-License-Identifier: GPL-2.0
/*
 * ksyms_live - CFG inputs from the running kernel: bytes from kcore, names
 * from kallsyms, tables from kcore at addresses kallsyms (vmlinux) or
 * /sys/module/<mod>/sections (modules) give, sizes from the module's .ko.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/elfobj.h>
#include <pathtrace/error.h>
#include <pathtrace/ksyms.h>
#include <pathtrace/noreturn.h>

#include "ktables.h"
#include "ktext_refs.h"

#define MAX_LEN (1u << 20)	/* upper-bound sizes beyond this are cut (and refused if reached) */

struct tables {
	struct cfg_fixup *fixups;
	uint32_t nfixups;
	struct cfg_key_site *keys;
	uint32_t nkeys;
	struct cfg_bug_site *bugs;
	uint32_t nbugs;
	uint32_t cap_fixups, cap_keys, cap_bugs;	/* klive_input's scratch only */
};

struct kmod {
	char *name;
	struct elfobj *ko;	/* NULL when not found or not readable */
	char why[160];		/* why tables are unknown, or "" */
	struct tables t;
	struct kmod *next;
};

/* One object's ORC tables as read: each ip resolved, its entry's bytes. */
struct orc_table {
	uint64_t n;
	uint64_t *ip;
	uint8_t *orc;		/* n * KORC_ENTRY */
	int sorted;		/* ip ascending: found by binary search */
};

struct klive {
	struct klive_paths p;
	struct ksyms *ks;
	struct kcore *kc;
	uint64_t init_start, init_end;	/* vmlinux __init text, freed after boot */
	int vmlinux_read;
	char vmlinux_why[160];
	struct tables vt;
	struct orc_table vorc;		/* vmlinux's ORC tables, read at the first klive_orc */
	struct kmod *mods;
	/* klive_input's scratch */
	uint8_t *code, *cold_code;
	struct tables in_t;
	struct kmod *cur_mod;
	struct ktext_refs refs;		/* vmlinux: data pointing into text */
	int refs_tried, refs_err;	/* ktext_refs_load called, what it returned */
	char ijmp_unproven[160];	/* the cfg_input's, for the refusal */
};

static void orc_table_free(struct orc_table *t)
{
	free(t->ip);
	free(t->orc);
	memset(t, 0, sizeof(*t));
}

static void free_tables(struct tables *t)
{
	free(t->fixups);
	free(t->keys);
	free(t->bugs);
	memset(t, 0, sizeof(*t));
}

int klive_open(const struct klive_paths *p, struct klive **out)
{
	struct klive *k = calloc(1, sizeof(*k));
	int err;

	*out = NULL;
	if (!k)
		return -PT_ENOMEM;
	k->p = *p;
	err = ksyms_load(p->kallsyms, &k->ks);
	if (!err)
		err = kcore_open(p->kcore, &k->kc);
	if (err) {
		klive_close(k);
		return err;
	}
	/* __init_begin..__init_end holds .init.text and the built-ins' .exit.text. */
	k->init_start = ksyms_addr(k->ks, "__init_begin");
	k->init_end = ksyms_addr(k->ks, "__init_end");
	if (!k->init_start || !k->init_end) {
		k->init_start = ksyms_addr(k->ks, "_sinittext");
		k->init_end = ksyms_addr(k->ks, "_einittext");
	}
	*out = k;
	return 0;
}

void klive_close(struct klive *k)
{
	struct kmod *m, *n;

	if (!k)
		return;
	ktext_refs_free(&k->refs);
	for (m = k->mods; m; m = n) {
		n = m->next;
		elfobj_close(m->ko);
		free_tables(&m->t);
		free(m->name);
		free(m);
	}
	free_tables(&k->vt);
	orc_table_free(&k->vorc);
	free_tables(&k->in_t);
	free(k->code);
	free(k->cold_code);
	ksyms_free(k->ks);
	kcore_close(k->kc);
	free(k);
}

const struct ksyms *klive_ksyms(const struct klive *k)
{
	return k->ks;
}

/*
 * Reads a table of size bytes at addr from kcore and decodes it (kind: 0
 * exception, 1 jump, 2 bug table); live fields hold their offsets.
 */
static int read_table(struct klive *k, struct tables *t, int kind, uint64_t addr, uint64_t size)
{
	struct ktable kt = { NULL, size, addr, NULL, NULL };
	uint8_t *buf;
	int err;

	if (!size)
		return 0;
	if (size > (64u << 20))
		return -PT_EFORMAT;
	buf = malloc(size);
	if (!buf)
		return -PT_ENOMEM;
	err = kcore_read(k->kc, addr, buf, size);
	kt.data = buf;
	if (!err && kind == 0)
		err = ktable_read_fixups(&kt, &t->fixups, &t->nfixups);
	else if (!err && kind == 1)
		err = ktable_read_keys(&kt, &t->keys, &t->nkeys);
	else if (!err)
		err = ktable_read_bugs(&kt, &t->bugs, &t->nbugs);
	free(buf);
	return err;
}

static const char *const table_name[3] = { "__ex_table", "__jump_table", "__bug_table" };

static int read_vmlinux_tables(struct klive *k)
{
	int kind, err;

	for (kind = 0; kind < 3; kind++) {
		char s[64], e[64];
		uint64_t a, b;

		snprintf(s, sizeof(s), "__start_%s", table_name[kind]);
		snprintf(e, sizeof(e), "__stop_%s", table_name[kind]);
		a = ksyms_addr(k->ks, s);
		b = ksyms_addr(k->ks, e);
		if (!a || !b || b < a) {
			snprintf(k->vmlinux_why, sizeof(k->vmlinux_why),
				 "vmlinux: %s/%s not in kallsyms", s, e);
			return 0;
		}
		err = read_table(k, &k->vt, kind, a, b - a);
		if (err)
			return err;
	}
	return 0;
}

/* Reads /sys/module/<mod>/sections/<sec>: 0 with *addr, or -PT_ENOENT. */
static int section_addr(const struct klive *k, const char *mod, const char *sec, uint64_t *addr)
{
	char path[768];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s/sections/%s", k->p.sysmodule, mod, sec);
	f = fopen(path, "r");
	if (!f)
		return -PT_ENOENT;
	ok = fscanf(f, "%" SCNx64, addr) == 1;
	fclose(f);
	return ok && *addr ? 0 : -PT_ENOENT;
}

/* Module names use '_' where file names may use '-'. */
static int same_module(const char *file, size_t n, const char *mod)
{
	size_t i;

	if (strlen(mod) != n)
		return 0;
	for (i = 0; i < n; i++)
		if ((file[i] == '-' ? '_' : file[i]) != (mod[i] == '-' ? '_' : mod[i]))
			return 0;
	return 1;
}

/* Finds and opens the module's .ko through modules.dep. */
static void open_ko(struct klive *k, struct kmod *m)
{
	char path[5200], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/modules.dep", k->p.moddir);
	f = fopen(path, "r");
	if (!f) {
		snprintf(m->why, sizeof(m->why), "module %.40s: no %.90s", m->name, path);
		return;
	}
	snprintf(m->why, sizeof(m->why), "module %.60s: not in modules.dep", m->name);
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *base, *dot;

		if (!colon)
			continue;
		*colon = 0;
		base = strrchr(line, '/') ? strrchr(line, '/') + 1 : line;
		dot = strstr(base, ".ko");
		if (!dot || !same_module(base, dot - base, m->name))
			continue;
		/* plain, or compressed as distributions install them (elf_file.h) */
		if (strcmp(dot, ".ko") && strcmp(dot, ".ko.xz") && strcmp(dot, ".ko.zst") &&
		    strcmp(dot, ".ko.gz")) {
			snprintf(m->why, sizeof(m->why), "module %.40s: %.80s is no module file",
				 m->name, base);
			break;
		}
		snprintf(path, sizeof(path), "%s/%s", k->p.moddir, line);
		if (elfobj_open(path, &m->ko))
			snprintf(m->why, sizeof(m->why), "module %.40s: cannot read %.90s", m->name, path);
		else
			m->why[0] = 0;
		break;
	}
	fclose(f);
}

/* The module's entry, its .ko found through modules.dep, or path when given. */
static int load_module_file(struct klive *k, const char *name, const char *path,
			    struct kmod **out)
{
	struct kmod *m;
	int kind, err;

	for (m = k->mods; m; m = m->next)
		if (!strcmp(m->name, name)) {
			*out = m;
			return 0;
		}
	m = calloc(1, sizeof(*m));
	if (!m || !(m->name = strdup(name))) {
		free(m);
		return -PT_ENOMEM;
	}
	m->next = k->mods;
	k->mods = m;
	*out = m;
	if (!path)
		open_ko(k, m);
	else if (elfobj_open(path, &m->ko))
		snprintf(m->why, sizeof(m->why), "module %.40s: cannot read %.90s", name, path);
	for (kind = 0; m->ko && kind < 3; kind++) {
		uint64_t size, addr;

		if (elfobj_section_size(m->ko, table_name[kind], &size) || !size)
			continue;
		if (section_addr(k, name, table_name[kind], &addr)) {
			snprintf(m->why, sizeof(m->why), "module %.30s: %.40s/%.30s/sections/%s missing",
				 name, k->p.sysmodule, name, table_name[kind]);
			break;
		}
		err = read_table(k, &m->t, kind, addr, size);
		if (err)
			return err;
	}
	return 0;
}

static int load_module(struct klive *k, const char *name, struct kmod **out)
{
	return load_module_file(k, name, NULL, out);
}

int klive_module_file(struct klive *k, const char *module, const char *path)
{
	struct kmod *m, **pp;

	for (pp = &k->mods; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->name, module))
			continue;
		m = *pp;
		*pp = m->next;
		elfobj_close(m->ko);
		free_tables(&m->t);
		free(m->name);
		free(m);
		break;
	}
	int err = load_module_file(k, module, path, &m);

	if (err)
		return err;
	if (!m->ko)
		return -PT_EIO;
	return m->why[0] ? -PT_ENOENT : 0;
}

int klive_module_loaded(struct klive *k, const char *module, const char *path)
{
	struct ksym *syms = NULL;
	struct kmod *m;
	uint32_t i, n = 0;
	int err;

	for (i = 0; i < ksyms_count(k->ks); i++)
		if (ksyms_get(k->ks, i)->module && !strcmp(ksyms_get(k->ks, i)->module, module))
			return -PT_EINVAL;	/* known already */
	err = klive_module_file(k, module, path);
	if (err)
		return err;
	for (m = k->mods; strcmp(m->name, module); m = m->next)
		;
	syms = calloc(elfobj_nfuncs(m->ko) + 1, sizeof(*syms));
	if (!syms)
		return -PT_ENOMEM;
	for (i = 0; i < elfobj_nfuncs(m->ko); i++) {
		const struct elfobj_func *fn = elfobj_func(m->ko, i);
		uint64_t at;

		/* the loader frees .init sections after init, and kallsyms forgets them */
		if (!strncmp(fn->section, ".init", 5))
			continue;
		err = section_addr(k, module, fn->section, &at);
		if (err)
			goto out;
		syms[n++] = (struct ksym){ .addr = at + (uint32_t)fn->addr, .type = 't',
					   .name = fn->name };
	}
	err = ksyms_add(k->ks, module, syms, n);
out:
	free(syms);
	return err;
}

/*
 * Reads one object's ORC tables (orc_types.h) from kcore: n ips, each an
 * s32 relative to its own slot in .orc_unwind_ip, and n entries of
 * KORC_ENTRY bytes in .orc_unwind. Returns 0 or a negative PT_E* code.
 */
static int orc_table_read(struct klive *k, uint64_t ip_at, uint64_t orc_at, uint64_t n,
			  struct orc_table *t)
{
	uint8_t *ipb;
	uint64_t i;
	int err;

	memset(t, 0, sizeof(*t));
	if (!n || n > (16u << 20))
		return -PT_EFORMAT;
	ipb = malloc(n * 4);
	t->ip = malloc(n * sizeof(*t->ip));
	t->orc = malloc(n * KORC_ENTRY);
	if (!ipb || !t->ip || !t->orc) {
		err = -PT_ENOMEM;
		goto out;
	}
	err = kcore_read(k->kc, ip_at, ipb, n * 4);
	if (!err)
		err = kcore_read(k->kc, orc_at, t->orc, n * KORC_ENTRY);
	if (err)
		goto out;
	t->n = n;
	t->sorted = 1;
	for (i = 0; i < n; i++) {
		int32_t v;

		memcpy(&v, ipb + i * 4, 4);
		t->ip[i] = ip_at + i * 4 + (int64_t)v;
		if (i && t->ip[i] < t->ip[i - 1])
			t->sorted = 0;
	}
out:
	free(ipb);
	if (err)
		orc_table_free(t);
	return err;
}

/* The first index of t whose ip is above addr (t sorted). */
static uint64_t orc_above(const struct orc_table *t, uint64_t addr)
{
	uint64_t lo = 0, hi = t->n;

	while (lo < hi) {
		uint64_t m = lo + (hi - lo) / 2;

		if (t->ip[m] <= addr)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/*
 * Appends the entries of t whose ip lies in (addr, addr + len), after the
 * one in effect at addr (the last at or below it, its ip given as addr),
 * into *out, in table order. Returns 0 or a negative PT_E* code.
 */
static int orc_pick(const struct orc_table *t, uint64_t addr, uint64_t len,
		    struct korc_entry **out, uint32_t *nout)
{
	uint64_t i, from = 0, best = UINT64_MAX, best_ip = 0;
	uint32_t cnt = 0, cap = 16;
	struct korc_entry *o = malloc(cap * sizeof(*o));

	if (!o)
		return -PT_ENOMEM;
	if (t->sorted) {
		from = orc_above(t, addr);
		best = from ? from - 1 : UINT64_MAX;
	}
	for (i = from; i < t->n; i++) {
		uint64_t ip = t->ip[i];

		if (!t->sorted && ip <= addr && (best == UINT64_MAX || ip >= best_ip)) {
			best = i;
			best_ip = ip;
		}
		if (ip <= addr || ip - addr >= len) {
			if (t->sorted)
				break;
			continue;
		}
		if (cnt + 1 >= cap) {
			struct korc_entry *g = realloc(o, 2 * cap * sizeof(*o));

			if (!g) {
				free(o);
				return -PT_ENOMEM;
			}
			o = g;
			cap *= 2;
		}
		o[++cnt].ip = ip;	/* slot 0 is the one in effect at addr */
		memcpy(o[cnt].orc, t->orc + i * KORC_ENTRY, KORC_ENTRY);
	}
	if (best == UINT64_MAX) {
		free(o);
		return -PT_ENOENT;
	}
	o[0].ip = addr;
	memcpy(o[0].orc, t->orc + best * KORC_ENTRY, KORC_ENTRY);
	*out = o;
	*nout = cnt + 1;
	return 0;
}

int klive_orc(struct klive *k, const char *module, uint64_t addr, uint64_t len,
	      struct korc_entry **out, uint32_t *n)
{
	uint64_t ip_at, ip_end, orc_at, size;
	struct orc_table t;
	struct kmod *m;
	int err;

	*out = NULL;
	*n = 0;
	if (!module) {
		/* vmlinux's tables are read once (every copy asks) */
		if (!k->vorc.n) {
			ip_at = ksyms_addr(k->ks, "__start_orc_unwind_ip");
			ip_end = ksyms_addr(k->ks, "__stop_orc_unwind_ip");
			orc_at = ksyms_addr(k->ks, "__start_orc_unwind");
			if (!ip_at || !orc_at || ip_end <= ip_at)
				return -PT_ENOENT;
			if ((ip_end - ip_at) % 4)
				return -PT_EFORMAT;
			err = orc_table_read(k, ip_at, orc_at, (ip_end - ip_at) / 4, &k->vorc);
			if (err)
				return err;
		}
		return orc_pick(&k->vorc, addr, len, out, n);
	} else {
		err = load_module(k, module, &m);
		if (err)
			return err;
		if (!m->ko || elfobj_section_size(m->ko, ".orc_unwind_ip", &size) ||
		    section_addr(k, module, ".orc_unwind_ip", &ip_at) ||
		    section_addr(k, module, ".orc_unwind", &orc_at))
			return -PT_ENOENT;
	}
	if (size % 4)
		return -PT_EFORMAT;
	err = orc_table_read(k, ip_at, orc_at, size / 4, &t);
	if (err)
		return err;
	err = orc_pick(&t, addr, len, out, n);
	orc_table_free(&t);
	return err;
}

/* Copies the entries of t that fall in [a, a+len) into k's scratch. */
static int pick(struct klive *k, const struct tables *t, uint64_t a, uint64_t len)
{
	struct tables *o = &k->in_t;
	int err;

	err = ktable_append_range((void **)&o->fixups, &o->nfixups, &o->cap_fixups, t->fixups,
				  t->nfixups, sizeof(*t->fixups), a, len);
	if (!err)
		err = ktable_append_range((void **)&o->keys, &o->nkeys, &o->cap_keys, t->keys,
					  t->nkeys, sizeof(*t->keys), a, len);
	if (!err)
		err = ktable_append_range((void **)&o->bugs, &o->nbugs, &o->cap_bugs, t->bugs,
					  t->nbugs, sizeof(*t->bugs), a, len);
	return err;
}

/*
 * Each picked key site's initial state, from its key's type word in kcore
 * (static_key_type): left unknown (-1) where the key is unknown or unread.
 */
static void key_states(struct klive *k)
{
	uint32_t i;
	uint64_t w;

	for (i = 0; i < k->in_t.nkeys; i++) {
		struct cfg_key_site *ks = &k->in_t.keys[i];

		ks->init_jump = -1;
		if (ks->key && !kcore_read(k->kc, ks->key + KTABLE_JUMP_KEY_TYPE, &w, sizeof(w)))
			ks->init_jump = (int8_t)ktable_key_init_jump(ks, w);
	}
}

static const char *live_name_at(void *ctx, uint64_t addr)
{
	return ksyms_name_at(((struct klive *)ctx)->ks, addr);
}

static int live_noreturn(void *ctx, const char *name)
{
	struct klive *k = ctx;
	struct cfg_input in;
	int64_t i;

	if (noreturn_builtin(name))
		return 1;
	/* A function of the same module: its .ko's dead-end analysis. */
	if (k->cur_mod && k->cur_mod->ko) {
		i = elfobj_find(k->cur_mod->ko, name);
		if (i >= 0 && !elfobj_input(k->cur_mod->ko, i, &in) && in.names.is_noreturn)
			return in.names.is_noreturn(in.names.ctx, name);
	}
	return 0;
}

/*
 * Exact size, cold part and indirect-jump proof from the .ko: the .ko
 * function whose section (as loaded) plus offset is addr.
 */
static int from_ko(struct klive *k, struct kmod *m, const struct ksym *s, uint64_t *len,
		   uint64_t *cold_addr, uint64_t *cold_len, int *ijmp_leave)
{
	uint32_t i;

	for (i = 0; i < elfobj_nfuncs(m->ko); i++) {
		const struct elfobj_func *f = elfobj_func(m->ko, i);
		struct cfg_input in;
		uint64_t base;

		if (strcmp(f->name, s->name) || section_addr(k, m->name, f->section, &base) ||
		    base + (f->addr & 0xffffffffu) != s->addr)
			continue;
		*len = f->size;
		*cold_addr = *cold_len = 0;
		if (f->cold != ELFOBJ_NONE) {
			const struct elfobj_func *c = elfobj_func(m->ko, f->cold);

			if (section_addr(k, m->name, c->section, &base))
				return -PT_ENOENT;
			*cold_addr = base + (c->addr & 0xffffffffu);
			*cold_len = c->size;
		}
		if (f->parent != ELFOBJ_NONE || elfobj_input(m->ko, i, &in))
			return -PT_ENOENT;
		*ijmp_leave = in.indirect_jumps_leave;
		return 0;
	}
	return -PT_ENOENT;
}

/*
 * vmlinux: an indirect jmp leaves the function unless some data word points
 * inside it (ktext_refs.c; code taking an inner address is cfg_build's
 * taken_at). A word at the entry is a call of the function, not a jump
 * inside. len is an upper bound: stricter, never wrong. Returns 1 if
 * proven, else 0 with k->ijmp_unproven saying why.
 */
static int vmlinux_ijmp_leave(struct klive *k, const struct ksym *s, uint64_t len,
			      uint64_t cold_addr, uint64_t cold_len)
{
	const struct ktext_ref *r;
	const char *part = "";
	uint64_t base = s->addr;

	if (k->refs_err) {
		snprintf(k->ijmp_unproven, sizeof(k->ijmp_unproven),
			 "kernel data not scanned for pointers into text: %s",
			 pt_strerror(k->refs_err));
		return 0;
	}
	r = ktext_refs_in(&k->refs, s->addr + 1, s->addr + len);
	if (!r && cold_len) {
		r = ktext_refs_in(&k->refs, cold_addr, cold_addr + cold_len);
		part = ".cold";
		base = cold_addr;
	}
	if (!r)
		return 1;
	snprintf(k->ijmp_unproven, sizeof(k->ijmp_unproven),
		 "%s word at 0x%" PRIx64 " points to %s%s+0x%" PRIx64,
		 ktext_refs_section(&k->refs, r->at), r->at, s->name, part, r->target - base);
	return 0;
}

int klive_input(struct klive *k, const char *name, const char *module, struct cfg_input *in,
		const char **tag, char *detail, size_t n)
{
	int64_t i = ksyms_find(k->ks, name, module);

	*tag = NULL;
	detail[0] = 0;
	memset(in, 0, sizeof(*in));
	if (i < 0)
		return (int)i;
	return klive_input_sym(k, i, in, tag, detail, n);
}

int klive_input_sym(struct klive *k, uint32_t i, struct cfg_input *in, const char **tag,
		    char *detail, size_t n)
{
	const struct ksym *s, *cs = NULL;
	uint64_t len, cold_addr = 0, cold_len = 0;
	const char *name, *module;
	struct kmod *m = NULL;
	int err, ijmp = 0;
	void *p;

	*tag = NULL;
	detail[0] = 0;
	memset(in, 0, sizeof(*in));
	s = ksyms_get(k->ks, i);
	if (!s)
		return -PT_ENOENT;
	name = s->name;
	module = s->module;
	len = s->size;
	if (s->cold != KSYMS_NONE) {
		cs = ksyms_get(k->ks, s->cold);
		cold_addr = cs->addr;
		cold_len = cs->size;
	}
	k->cur_mod = NULL;
	if (module) {
		err = load_module(k, module, &m);
		if (err)
			return err;
		k->cur_mod = m;
		if (m->why[0]) {
			*tag = "unknown-static-key";
			snprintf(detail, n, "%s: %s: static keys and fixups unknown", name, m->why);
			return -PT_EREFUSED;
		}
		if (from_ko(k, m, s, &len, &cold_addr, &cold_len, &ijmp)) {
			*tag = "module-mismatch";
			snprintf(detail, n, "%s [%s] at 0x%" PRIx64 ": no function of the .ko is "
				 "loaded there", name, module, s->addr);
			return -PT_EREFUSED;
		}
	} else {
		/* Init code is freed (poisoned with int3) after boot; kallsyms keeps its names. */
		if (k->init_start && k->init_end && s->addr >= k->init_start &&
		    s->addr < k->init_end) {
			*tag = "init-freed";
			snprintf(detail, n, "%s: __init/__exit code, freed after boot", name);
			return -PT_EREFUSED;
		}
		if (!k->vmlinux_read) {
			err = read_vmlinux_tables(k);
			if (err)
				return err;
			k->vmlinux_read = 1;
		}
		if (k->vmlinux_why[0]) {
			*tag = "unknown-static-key";
			snprintf(detail, n, "%s: %s", name, k->vmlinux_why);
			return -PT_EREFUSED;
		}
		if (!k->refs_tried) {
			/* Without them indirect jmps stay unproven (refused), no more. */
			k->refs_tried = 1;
			k->refs_err = ktext_refs_load(&k->refs, k->ks, k->kc);
			if (k->refs_err == -PT_ENOMEM) {
				k->refs_tried = 0;	/* an error for this call, a retry for the next */
				return -PT_ENOMEM;
			}
		}
	}
	if (!len || len > MAX_LEN)
		len = MAX_LEN;	/* an upper bound; traversal stops at the real end */
	if (cold_len > MAX_LEN)
		cold_len = MAX_LEN;
	p = realloc(k->code, len);
	if (!p)
		return -PT_ENOMEM;
	k->code = p;
	/* Upper-bound sizes may run into unmapped memory: keep what reads. */
	while (kcore_read(k->kc, s->addr, k->code, len)) {
		uint64_t page = ((s->addr + len - 1) & ~4095ull);

		if (page <= s->addr)
			return -PT_EIO;
		len = page - s->addr;
	}
	if (cold_len) {
		p = realloc(k->cold_code, cold_len);
		if (!p)
			return -PT_ENOMEM;
		k->cold_code = p;
		err = kcore_read(k->kc, cold_addr, k->cold_code, cold_len);
		if (err)
			return err;
	}
	k->in_t.nfixups = k->in_t.nkeys = k->in_t.nbugs = 0;
	err = pick(k, m ? &m->t : &k->vt, s->addr, len);
	if (!err && cold_len)
		err = pick(k, m ? &m->t : &k->vt, cold_addr, cold_len);
	if (err)
		return err;
	key_states(k);
	in->name = s->name;
	in->addr = s->addr;
	in->code = k->code;
	in->len = len;
	in->cold_addr = cold_addr;
	in->cold_code = cold_len ? k->cold_code : NULL;
	in->cold_len = cold_len;
	in->fixups = k->in_t.fixups;
	in->nfixups = k->in_t.nfixups;
	in->keys = k->in_t.keys;
	in->nkeys = k->in_t.nkeys;
	in->bugs = k->in_t.bugs;
	in->nbugs = k->in_t.nbugs;
	in->names.ctx = k;
	in->names.name_at = live_name_at;
	in->names.is_noreturn = live_noreturn;
	k->ijmp_unproven[0] = 0;
	if (!module)
		ijmp = vmlinux_ijmp_leave(k, s, len, cold_addr, cold_len);
	in->indirect_jumps_leave = ijmp;
	in->ijmp_unproven = ijmp || !k->ijmp_unproven[0] ? NULL : k->ijmp_unproven;
	return 0;
}
