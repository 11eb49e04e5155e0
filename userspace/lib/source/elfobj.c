// SPDX-License-Identifier: GPL-2.0
/*
 * elfobj - an ELF object's functions, symbols and relocations as CFG inputs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/noreturn.h>

#include "elfobj_internal.h"
#include "ktables.h"

static int cmp_rel(const void *x, const void *y)
{
	const struct elfobj_rel *a = x, *b = y;

	return a->off < b->off ? -1 : a->off > b->off;
}

const struct elfobj_rel *elfobj_rel_at(const struct elfobj_sec *s, uint64_t off)
{
	struct elfobj_rel key = { .off = off };

	return bsearch(&key, s->rels, s->nrels, sizeof(key), cmp_rel);
}

/* First relocation at or after off, as an index (nrels if none). */
static uint32_t rel_from(const struct elfobj_sec *s, uint64_t off)
{
	uint32_t lo = 0, hi = s->nrels;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->rels[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t sym_addr(const struct elfobj *o, const struct elfobj_sym *s)
{
	if (s->shndx == SHN_UNDEF || s->shndx >= o->nsecs)
		return 0;
	return o->secs[s->shndx].addr + s->value;
}

uint64_t elfobj_rel_dest(const struct elfobj *o, const struct elfobj_rel *r)
{
	uint64_t a;

	if (r->sym >= o->nsyms)
		return 0;
	a = sym_addr(o, &o->syms[r->sym]);
	return a ? a + r->addend : 0;
}

static int read_sections(struct elfobj *o)
{
	size_t i, shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(o->elf, &o->nsecs) || elf_getshdrstrndx(o->elf, &shstrndx))
		return -PT_EFORMAT;
	o->secs = calloc(o->nsecs, sizeof(*o->secs));
	if (!o->secs)
		return -PT_ENOMEM;
	while ((scn = elf_nextscn(o->elf, scn))) {
		struct elfobj_sec *s;
		Elf_Data *d;
		GElf_Shdr sh;

		i = elf_ndxscn(scn);
		if (i >= o->nsecs || !gelf_getshdr(scn, &sh))
			return -PT_EFORMAT;
		s = &o->secs[i];
		s->name = elf_strptr(o->elf, shstrndx, sh.sh_name);
		s->addr = o->rel ? (uint64_t)i << 32 : sh.sh_addr;
		s->size = sh.sh_size;
		s->type = sh.sh_type;
		s->flags = sh.sh_flags;
		if (sh.sh_type != SHT_NOBITS && sh.sh_size) {
			d = elf_getdata(scn, NULL);
			if (!d || d->d_size != sh.sh_size)
				return -PT_EFORMAT;
			s->data = d->d_buf;
		}
		/* .symtab, else (a stripped file) .dynsym: a library's exports */
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !o->syms)) {
			size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0, k;

			d = elf_getdata(scn, NULL);
			free(o->syms);
			o->syms = calloc(n ? n : 1, sizeof(*o->syms));
			if (!o->syms)
				return -PT_ENOMEM;
			o->nsyms = n;
			for (k = 0; k < n; k++) {
				GElf_Sym sym;

				if (!gelf_getsym(d, k, &sym))
					return -PT_EFORMAT;
				o->syms[k].name = elf_strptr(o->elf, sh.sh_link, sym.st_name);
				o->syms[k].value = sym.st_value;
				o->syms[k].size = sym.st_size;
				o->syms[k].shndx = sym.st_shndx;
				o->syms[k].type = GELF_ST_TYPE(sym.st_info);
			}
		}
	}
	/* A linked file's symbol values are addresses: as section offsets here. */
	for (i = 0; !o->rel && i < o->nsyms; i++) {
		struct elfobj_sym *y = &o->syms[i];

		if (y->shndx != SHN_UNDEF && y->shndx < o->nsecs && y->value >= o->secs[y->shndx].addr)
			y->value -= o->secs[y->shndx].addr;
	}
	/* Relocations, attached to the section they apply to. */
	scn = NULL;
	while ((scn = elf_nextscn(o->elf, scn))) {
		struct elfobj_sec *t;
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n, k;

		/* a user file's are the dynamic linker's, not the code's */
		if (o->user || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
			continue;
		if (sh.sh_info >= o->nsecs || !sh.sh_entsize)
			return -PT_EFORMAT;
		t = &o->secs[sh.sh_info];
		d = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		if (!d || t->rels)
			return -PT_EFORMAT;
		t->rels = malloc((n ? n : 1) * sizeof(*t->rels));
		if (!t->rels)
			return -PT_ENOMEM;
		for (k = 0; k < n; k++) {
			GElf_Rela r;

			if (!gelf_getrela(d, k, &r))
				return -PT_EFORMAT;
			t->rels[k].off = r.r_offset;
			t->rels[k].type = GELF_R_TYPE(r.r_info);
			t->rels[k].sym = GELF_R_SYM(r.r_info);
			t->rels[k].addend = r.r_addend;
		}
		t->nrels = n;
		qsort(t->rels, n, sizeof(*t->rels), cmp_rel);
	}
	return o->syms ? 0 : -PT_EFORMAT;
}

static const struct elfobj *sort_ctx;

static int cmp_by_addr(const void *x, const void *y)
{
	const struct elfobj_func *a = &sort_ctx->funcs[*(const uint32_t *)x];
	const struct elfobj_func *b = &sort_ctx->funcs[*(const uint32_t *)y];

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static int cmp_by_name(const void *x, const void *y)
{
	const struct elfobj_func *a = &sort_ctx->funcs[*(const uint32_t *)x];
	const struct elfobj_func *b = &sort_ctx->funcs[*(const uint32_t *)y];
	int r = strcmp(a->name, b->name);

	if (r)
		return r;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* Range [*lo, *hi) of by_name entries named name. */
static void name_range(const struct elfobj *o, const char *name, uint32_t *lo, uint32_t *hi)
{
	uint32_t l = 0, h = o->nfuncs;

	while (l < h) {
		uint32_t mid = l + (h - l) / 2;

		if (strcmp(o->funcs[o->by_name[mid]].name, name) < 0)
			l = mid + 1;
		else
			h = mid;
	}
	*lo = l;
	while (l < o->nfuncs && !strcmp(o->funcs[o->by_name[l]].name, name))
		l++;
	*hi = l;
}

/* Whether a relocated branch in [a, a+len) of section shndx lands in [ta, ta+tlen). */
static int branches_into(const struct elfobj *o, uint32_t shndx, uint64_t a, uint32_t len,
			 uint64_t ta, uint32_t tlen)
{
	const struct elfobj_sec *s = &o->secs[shndx];
	uint64_t off = a - s->addr, d;
	uint32_t k;

	for (k = rel_from(s, off); k < s->nrels && s->rels[k].off < off + len; k++) {
		const struct elfobj_rel *r = &s->rels[k];

		if (r->type != R_X86_64_PC32 && r->type != R_X86_64_PLT32)
			continue;
		d = elfobj_rel_dest(o, r);
		if (d && d + 4 - ta < tlen)
			return 1;
	}
	return 0;
}

/*
 * Pairs each f.cold with f. Local names can repeat in a module (two static
 * functions of different files); then the pair is the one whose code
 * branches into the other, and it must be unique.
 */
static void pair_cold(struct elfobj *o)
{
	uint32_t i, lo, hi, clo, chi, k, pick, npick;
	char base[512];

	for (i = 0; i < o->nfuncs; i++) {
		struct elfobj_func *f = &o->funcs[i];
		size_t n = strlen(f->name);

		if (n < 6 || n - 5 >= sizeof(base) || strcmp(f->name + n - 5, ".cold"))
			continue;
		memcpy(base, f->name, n - 5);
		base[n - 5] = 0;
		name_range(o, base, &lo, &hi);
		name_range(o, f->name, &clo, &chi);
		if (hi - lo == 1 && chi - clo == 1) {
			pick = o->by_name[lo];
		} else {
			for (k = lo, npick = 0, pick = ELFOBJ_NONE; k < hi; k++) {
				const struct elfobj_func *b = &o->funcs[o->by_name[k]];

				if (branches_into(o, f->shndx, f->addr, f->size, b->addr, b->size) ||
				    branches_into(o, b->shndx, b->addr, b->size, f->addr, f->size)) {
					pick = o->by_name[k];
					npick++;
				}
			}
			if (npick != 1)
				continue;	/* ambiguous: jumps into it will be refused */
		}
		if (o->funcs[pick].cold != ELFOBJ_NONE)
			continue;
		o->funcs[pick].cold = i;
		f->parent = pick;
	}
}

static int read_functions(struct elfobj *o)
{
	size_t k;
	uint32_t i;

	o->funcs = calloc(o->nsyms ? o->nsyms : 1, sizeof(*o->funcs));
	if (!o->funcs)
		return -PT_ENOMEM;
	for (k = 0; k < o->nsyms; k++) {
		const struct elfobj_sym *s = &o->syms[k];
		const struct elfobj_sec *sec;
		struct elfobj_func *f;

		if (s->type != STT_FUNC || !s->size || s->shndx == SHN_UNDEF ||
		    s->shndx >= o->nsecs || !s->name)
			continue;
		sec = &o->secs[s->shndx];
		if (!(sec->flags & SHF_EXECINSTR) || !sec->data)
			continue;
		if (s->value > sec->size || s->size > sec->size - s->value || s->size > UINT32_MAX)
			return -PT_EFORMAT;
		f = &o->funcs[o->nfuncs++];
		f->name = s->name;
		f->addr = sym_addr(o, s);
		f->size = s->size;
		f->shndx = s->shndx;
		f->section = sec->name;
		f->cold = ELFOBJ_NONE;
		f->parent = ELFOBJ_NONE;
	}
	o->by_addr = malloc((o->nfuncs + 1) * sizeof(uint32_t));
	o->by_name = malloc((o->nfuncs + 1) * sizeof(uint32_t));
	o->noreturn = malloc(o->nfuncs + 1);
	if (!o->by_addr || !o->by_name || !o->noreturn)
		return -PT_ENOMEM;
	for (i = 0; i < o->nfuncs; i++) {
		o->by_addr[i] = o->by_name[i] = i;
		o->noreturn[i] = -1;
	}
	sort_ctx = o;
	qsort(o->by_addr, o->nfuncs, sizeof(uint32_t), cmp_by_addr);
	qsort(o->by_name, o->nfuncs, sizeof(uint32_t), cmp_by_name);
	sort_ctx = NULL;
	pair_cold(o);
	return 0;
}

static void scratch_free(struct elfobj_scratch *sc)
{
	free(sc->fx);
	free(sc->ks);
	free(sc->bs);
	free(sc->as);
}

void elfobj_close(struct elfobj *o)
{
	size_t i;

	if (!o)
		return;
	for (i = 0; o->secs && i < o->nsecs; i++)
		free(o->secs[i].rels);
	free(o->secs);
	free(o->syms);
	free(o->funcs);
	free(o->by_addr);
	free(o->by_name);
	free(o->noreturn);
	free(o->taken_inside);
	free(o->fixups);
	free(o->keys);
	free(o->bugs);
	free(o->alts);
	scratch_free(&o->in);
	elf_file_close(&o->file);
	free(o);
}

uint32_t elfobj_nfuncs(const struct elfobj *o)
{
	return o->nfuncs;
}

const struct elfobj_func *elfobj_func(const struct elfobj *o, uint32_t i)
{
	return i < o->nfuncs ? &o->funcs[i] : NULL;
}

int64_t elfobj_find(const struct elfobj *o, const char *name)
{
	uint32_t lo, hi;

	name_range(o, name, &lo, &hi);
	return lo < hi ? (int64_t)o->by_name[lo] : -PT_ENOENT;
}

/* Index into by_addr of the last function starting at or before addr, or -1. */
static int64_t func_before(const struct elfobj *o, uint64_t addr)
{
	uint32_t lo = 0, hi = o->nfuncs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->funcs[o->by_addr[mid]].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)lo - 1;
}

static const char *name_at(void *ctx, uint64_t addr)
{
	const struct elfobj *o = ctx;
	int64_t k = func_before(o, addr);

	/* Aliases share an address: any of them names it. */
	if (k >= 0 && o->funcs[o->by_addr[k]].addr == addr)
		return o->funcs[o->by_addr[k]].name;
	return NULL;
}

const char *elfobj_symbolize(const struct elfobj *o, uint64_t addr, char *buf, size_t n)
{
	int64_t k = func_before(o, addr);

	while (k >= 0) {
		const struct elfobj_func *f = &o->funcs[o->by_addr[k]];

		if (addr - f->addr < f->size) {
			snprintf(buf, n, "%s+0x%" PRIx64, f->name, addr - f->addr);
			return buf;
		}
		/* An alias at the same address may have another size. */
		if (!k || o->funcs[o->by_addr[k - 1]].addr != f->addr)
			break;
		k--;
	}
	snprintf(buf, n, "0x%" PRIx64, addr);
	return buf;
}

static int branch_reloc(void *ctx, uint64_t addr, uint32_t len, uint64_t *target,
			const char **name)
{
	const struct elfobj *o = ctx;
	const struct elfobj_sec *s;
	const struct elfobj_rel *r;
	const struct elfobj_sym *sym;
	uint64_t off;
	uint32_t k;

	if (!o->rel || (addr >> 32) >= o->nsecs)
		return 0;
	s = &o->secs[addr >> 32];
	off = addr & 0xffffffffu;
	k = rel_from(s, off);
	if (k >= s->nrels || s->rels[k].off >= off + len)
		return 0;
	r = &s->rels[k];
	/* Only a PC-relative relocation of the final 4-byte displacement. */
	if ((r->type != R_X86_64_PC32 && r->type != R_X86_64_PLT32) || r->off != off + len - 4 ||
	    r->sym >= o->nsyms)
		return -1;
	sym = &o->syms[r->sym];
	if (sym->shndx == SHN_UNDEF) {
		if (r->addend != -4)
			return -1;
		*target = 0;
		*name = sym->name;
		return 1;
	}
	/* Displacement = S + A - P, target = end + disp = S + A + 4. */
	*target = elfobj_rel_dest(o, r) + 4;
	*name = sym->type == STT_SECTION ? NULL : (r->addend == -4 ? sym->name : NULL);
	return 1;
}

/*
 * Whether a function of this object never returns: it has no ret, no
 * return thunk and no tail call to a function that returns (objtool's
 * dead-end analysis). Unknown (refused, ambiguous, recursive) means returns.
 */
static int local_noreturn(struct elfobj *o, const char *name);

static int is_noreturn(void *ctx, const char *name)
{
	return noreturn_builtin(name) || local_noreturn(ctx, name);
}

static int fill_input(struct elfobj *o, uint32_t i, struct cfg_input *in,
		      struct elfobj_scratch *sc);

static int local_noreturn(struct elfobj *o, const char *name)
{
	struct elfobj_scratch sc;
	uint32_t lo, hi, e;
	struct cfg_input in;
	struct cfg c;
	uint32_t f;
	int never = 0;

	name_range(o, name, &lo, &hi);
	if (hi - lo != 1)
		return 0;
	f = o->by_name[lo];
	if (o->noreturn[f] >= 0)
		return o->noreturn[f] == 1;
	if (o->funcs[f].parent != ELFOBJ_NONE)
		return 0;
	/* Deep call chains are not followed (stack): unknown means it returns. */
	if (o->noreturn_depth >= 32)
		return 0;
	o->noreturn[f] = 2;	/* recursion: assume it returns */
	o->noreturn_depth++;
	memset(&c, 0, sizeof(c));
	memset(&sc, 0, sizeof(sc));
	if (!fill_input(o, f, &in, &sc) && !cfg_build(&in, &c)) {
		never = 1;
		for (e = 0; e < c.ninsns && never; e++) {
			const struct cfg_insn *ins = &c.insns[e];

			if (ins->kind == CFG_I_RET ||
			    (ins->kind == CFG_I_TAIL_CALL && !is_noreturn(o, ins->target_name)) ||
			    ((ins->flags & CFG_IF_LEAVES) && !is_noreturn(o, ins->target_name)))
				never = 0;
		}
	}
	cfg_free(&c);
	scratch_free(&sc);
	o->noreturn_depth--;
	o->noreturn[f] = never;
	return never;
}

static int fill_input(struct elfobj *o, uint32_t i, struct cfg_input *in,
		      struct elfobj_scratch *sc)
{
	const struct elfobj_func *f, *cold;
	uint64_t pa[2];
	uint32_t pl[2], p, nf = 0, nk = 0, nb = 0, na = 0;

	if (i >= o->nfuncs || o->funcs[i].parent != ELFOBJ_NONE)
		return -PT_EINVAL;
	f = &o->funcs[i];
	cold = f->cold != ELFOBJ_NONE ? &o->funcs[f->cold] : NULL;
	memset(in, 0, sizeof(*in));
	in->name = f->name;
	in->addr = f->addr;
	in->len = f->size;
	in->code = o->secs[f->shndx].data + (f->addr - o->secs[f->shndx].addr);
	if (cold) {
		in->cold_addr = cold->addr;
		in->cold_len = cold->size;
		in->cold_code = o->secs[cold->shndx].data +
				(cold->addr - o->secs[cold->shndx].addr);
	}
	pa[0] = in->addr;
	pl[0] = in->len;
	pa[1] = in->cold_addr;
	pl[1] = in->cold_len;
	for (p = 0; p < 2; p++) {
		if (!pl[p])
			continue;
		if (ktable_append_range((void **)&sc->fx, &nf, &sc->capf, o->fixups, o->nfixups,
					sizeof(*sc->fx), pa[p], pl[p]) ||
		    ktable_append_range((void **)&sc->ks, &nk, &sc->capk, o->keys, o->nkeys,
					sizeof(*sc->ks), pa[p], pl[p]) ||
		    ktable_append_range((void **)&sc->bs, &nb, &sc->capb, o->bugs, o->nbugs,
					sizeof(*sc->bs), pa[p], pl[p]) ||
		    ktable_append_range((void **)&sc->as, &na, &sc->capa, o->alts, o->nalts,
					sizeof(*sc->as), pa[p], pl[p]))
			return -PT_ENOMEM;
	}
	in->fixups = sc->fx;
	in->nfixups = nf;
	in->keys = sc->ks;
	in->nkeys = nk;
	in->bugs = sc->bs;
	in->nbugs = nb;
	in->alts = sc->as;
	in->nalts = na;
	in->names.ctx = o;
	in->names.name_at = name_at;
	in->names.is_noreturn = is_noreturn;
	in->names.branch_reloc = branch_reloc;
	/* user code has jump tables: an indirect jump is refused there */
	in->indirect_jumps_leave = !o->user && !o->taken_inside[i];
	return 0;
}

int elfobj_input(struct elfobj *o, uint32_t i, struct cfg_input *in)
{
	return fill_input(o, i, in, &o->in);
}

int elfobj_is_user(const struct elfobj *o)
{
	return o->user;
}

int elfobj_file_offset(const struct elfobj *o, uint64_t addr, uint32_t len, uint64_t *off)
{
	size_t n, i;

	if (!o->user || elf_getphdrnum(o->elf, &n))
		return -PT_ENOENT;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(o->elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz)
			continue;
		if (len > ph.p_filesz - (addr - ph.p_vaddr))
			return -PT_ENOENT;
		*off = addr - ph.p_vaddr + ph.p_offset;
		return 0;
	}
	return -PT_ENOENT;
}

int elfobj_section_size(const struct elfobj *o, const char *name, uint64_t *size)
{
	size_t i;

	for (i = 0; i < o->nsecs; i++)
		if (o->secs[i].name && !strcmp(o->secs[i].name, name)) {
			*size = o->secs[i].size;
			return 0;
		}
	return -PT_ENOENT;
}

void elfobj_table_counts(const struct elfobj *o, uint32_t *fixups, uint32_t *keys,
			 uint32_t *bugs)
{
	*fixups = o->nfixups;
	*keys = o->nkeys;
	*bugs = o->nbugs;
}

/* Sections whose pointers into code are the CFG's own tables or not jump targets. */
static int metadata_section(const char *n)
{
	static const char *const meta[] = {
		"__ex_table", "__jump_table", "__bug_table", ".orc_unwind_ip", ".return_sites",
		".retpoline_sites", ".call_sites", "__mcount_loc", ".smp_locks",
		".static_call_sites", ".ibt_endbr_seal", "__patchable_function_entries",
		".altinstructions", ".kcfi_traps",
	};
	size_t i;

	if (!n || !strncmp(n, ".discard", 8))
		return 1;
	for (i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
		if (!strcmp(n, meta[i]))
			return 1;
	return 0;
}

/* Marks the function whose body (not its entry) contains addr. */
static void mark_taken(struct elfobj *o, uint64_t addr)
{
	int64_t k = func_before(o, addr);

	for (; k >= 0; k--) {
		uint32_t fi = o->by_addr[k];
		const struct elfobj_func *f = &o->funcs[fi];

		if (addr - f->addr < f->size) {
			if (f->parent != ELFOBJ_NONE)
				o->taken_inside[f->parent] = 1;	/* a .cold part has no entry */
			else if (addr != f->addr)
				o->taken_inside[fi] = 1;
		}
		if (!k || o->funcs[o->by_addr[k - 1]].addr != f->addr)
			break;
	}
}

/*
 * Finds functions with a taken interior address (a computed-goto label or
 * a jump-table entry): any relocation from an allocated section, other
 * than branch displacements and the kernel's metadata tables, that points
 * inside a function. PC-relative references from code point at S + A + 4
 * plus the size of an immediate that may follow (0..4), so all candidates
 * count: a false positive only costs a refusal.
 */
static int find_taken_addresses(struct elfobj *o)
{
	size_t si;
	uint32_t k;
	uint64_t d;

	o->taken_inside = calloc(o->nfuncs + 1, 1);
	if (!o->taken_inside)
		return -PT_ENOMEM;
	if (!o->rel)
		return 0;	/* no relocations: nothing is proven, see elfobj_input */
	for (si = 0; si < o->nsecs; si++) {
		const struct elfobj_sec *s = &o->secs[si];
		int code = !!(s->flags & SHF_EXECINSTR);

		if (!(s->flags & SHF_ALLOC) || metadata_section(s->name))
			continue;
		for (k = 0; k < s->nrels; k++) {
			const struct elfobj_rel *r = &s->rels[k];
			int pcrel = r->type == R_X86_64_PC32 || r->type == R_X86_64_PLT32;
			const struct elfobj_sym *sym;

			if (r->sym >= o->nsyms)
				continue;
			sym = &o->syms[r->sym];
			d = elfobj_rel_dest(o, r);
			if (!d || sym->shndx >= o->nsecs ||
			    !(o->secs[sym->shndx].flags & SHF_EXECINSTR))
				continue;
			if (code && pcrel && s->data && r->off >= 2 && r->off + 4 <= s->size) {
				const uint8_t *p = s->data + r->off;

				/* call/jmp rel32 or jcc rel32: a branch, in the CFG. */
				if (p[-1] == 0xe8 || p[-1] == 0xe9 ||
				    (p[-2] == 0x0f && (p[-1] & 0xf0) == 0x80))
					continue;
				/* A named function referenced as itself: its entry. */
				if (sym->type == STT_FUNC && r->addend >= -8 && r->addend <= -4)
					continue;
				mark_taken(o, d + 4);
				mark_taken(o, d + 5);
				mark_taken(o, d + 6);
				mark_taken(o, d + 8);
				continue;
			}
			mark_taken(o, d);
		}
	}
	return 0;
}

int elfobj_open(const char *path, struct elfobj **out)
{
	struct elfobj *o;
	GElf_Ehdr eh;
	int err;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -PT_EFORMAT;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -PT_ENOMEM;
	err = elf_file_open(path, &o->file);	/* plain, or a compressed module */
	o->elf = o->file.elf;
	if (err)
		goto fail;
	err = -PT_EFORMAT;
	if (elf_kind(o->elf) != ELF_K_ELF || !gelf_getehdr(o->elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		goto fail;
	o->rel = eh.e_type == ET_REL;
	/* a shared object, or an executable whose entry is in the lower half */
	o->user = eh.e_type == ET_DYN || (eh.e_type == ET_EXEC && !(eh.e_entry >> 63));
	err = read_sections(o);
	if (!err)
		err = read_functions(o);
	if (!err)
		err = elfobj_read_tables(o);
	if (!err)
		err = find_taken_addresses(o);
	if (err)
		goto fail;
	*out = o;
	return 0;
fail:
	elfobj_close(o);
	return err;
}
