// SPDX-License-Identifier: GPL-2.0
/* The kernel's static-call sites, which kprobes refuse (static_calls.h). */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/static_calls.h>

#include "elf_file.h"

#define ENTRY_SIZE 8		/* struct static_call_site: s32 addr, s32 key */
#define MAX_SITES (1u << 24)

struct site_key {
	uint64_t site, key;
};

static int cmp_site(const void *a, const void *b)
{
	uint64_t x = ((const struct site_key *)a)->site, y = ((const struct site_key *)b)->site;

	return x < y ? -1 : x > y;
}

/* Sorts (sites with their keys) and deduplicates. Returns 0 or -PT_ENOMEM (sc unchanged). */
static int finish(struct static_calls *sc)
{
	struct site_key *v = malloc(((size_t)sc->n + 1) * sizeof(*v));
	uint32_t i, k = 0;

	if (!v)
		return -PT_ENOMEM;
	for (i = 0; i < sc->n; i++)
		v[i] = (struct site_key){ sc->site[i], sc->key ? sc->key[i] : 0 };
	qsort(v, sc->n, sizeof(*v), cmp_site);
	for (i = 0; i < sc->n; i++)
		if (!k || v[k - 1].site != v[i].site)
			v[k++] = v[i];
	for (i = 0; i < k; i++) {
		sc->site[i] = v[i].site;
		if (sc->key)
			sc->key[i] = v[i].key;
	}
	sc->n = k;
	free(v);
	return 0;
}

void static_calls_free(struct static_calls *sc)
{
	free(sc->site);
	free(sc->key);
	memset(sc, 0, sizeof(*sc));
}

int static_calls_add(struct static_calls *sc, const uint64_t *site, const uint64_t *key,
		     uint32_t n)
{
	uint64_t *s = malloc(((size_t)sc->n + n + 1) * sizeof(*s)), *k = NULL;
	int keys = key && (sc->key || !sc->n);
	struct static_calls t;

	if (s && keys)
		k = malloc(((size_t)sc->n + n + 1) * sizeof(*k));
	if (!s || (keys && !k)) {
		free(s);
		return -PT_ENOMEM;
	}
	memcpy(s, sc->site, (size_t)sc->n * sizeof(*s));
	memcpy(s + sc->n, site, (size_t)n * sizeof(*s));
	if (keys) {
		if (sc->n)
			memcpy(k, sc->key, (size_t)sc->n * sizeof(*k));
		memcpy(k + sc->n, key, (size_t)n * sizeof(*k));
	}
	t = (struct static_calls){ s, sc->n + n, k };
	if (finish(&t)) {
		free(s);
		free(k);
		return -PT_ENOMEM;
	}
	static_calls_free(sc);
	*sc = t;
	return 0;
}

int64_t static_calls_find(const struct static_calls *sc, uint64_t addr)
{
	uint32_t lo = 0, hi = sc->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (sc->site[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sc->n && sc->site[lo] == addr ? (int64_t)lo : -1;
}

int static_calls_live(const struct ksyms *ks, const struct kcore *kc, struct static_calls *out)
{
	uint64_t start = ksyms_addr(ks, "__start_static_call_sites");
	uint64_t stop = ksyms_addr(ks, "__stop_static_call_sites");
	uint32_t n, i;
	int32_t *tab;
	int err;

	memset(out, 0, sizeof(*out));
	if (!start)
		return 0;
	if (stop < start || (stop - start) % ENTRY_SIZE || (stop - start) / ENTRY_SIZE > MAX_SITES)
		return -PT_EFORMAT;
	n = (uint32_t)((stop - start) / ENTRY_SIZE);
	tab = malloc((size_t)n * ENTRY_SIZE + 1);
	out->site = malloc(((size_t)n + 1) * sizeof(*out->site));
	out->key = malloc(((size_t)n + 1) * sizeof(*out->key));
	if (!tab || !out->site || !out->key) {
		free(tab);
		static_calls_free(out);
		return -PT_ENOMEM;
	}
	err = n ? kcore_read(kc, start, tab, (size_t)n * ENTRY_SIZE) : 0;
	if (err) {
		free(tab);
		static_calls_free(out);
		return err;
	}
	for (i = 0; i < n; i++) {
		out->site[i] = start + (uint64_t)i * ENTRY_SIZE + (uint64_t)(int64_t)tab[2 * i];
		out->key[i] = start + (uint64_t)i * ENTRY_SIZE + 4 +
			      (uint64_t)(int64_t)tab[2 * i + 1];
	}
	out->n = n;
	free(tab);
	err = finish(out);
	if (err)
		static_calls_free(out);
	return err;
}

/* The .static_call_sites section's index and its RELA section, or 0s. */
static void find_sections(Elf *elf, size_t *sites, Elf_Scn **rela)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	*sites = 0;
	*rela = NULL;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".static_call_sites"))
			*sites = elf_ndxscn(scn);
	}
	while (*sites && (scn = elf_nextscn(elf, scn))) {	/* scn is NULL: from the start */
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA && sh.sh_info == *sites) {
			*rela = scn;
			return;
		}
	}
}

static int read_elf(Elf *elf, struct static_calls *out)
{
	GElf_Ehdr eh;
	GElf_Shdr rsh, ssh;
	Elf_Scn *rela, *symscn;
	Elf_Data *rd, *sd;
	size_t sites, i, nrel;

	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_REL)
		return -PT_EFORMAT;
	find_sections(elf, &sites, &rela);
	if (!sites)
		return 0;
	if (!rela || !gelf_getshdr(rela, &rsh) || !rsh.sh_entsize)
		return -PT_EFORMAT;
	symscn = elf_getscn(elf, rsh.sh_link);
	rd = elf_getdata(rela, NULL);
	sd = symscn ? elf_getdata(symscn, NULL) : NULL;
	if (!rd || !sd || !gelf_getshdr(symscn, &ssh))
		return -PT_EFORMAT;
	nrel = rsh.sh_size / rsh.sh_entsize;
	if (nrel > MAX_SITES)
		return -PT_EFORMAT;
	out->site = malloc((nrel + 1) * sizeof(*out->site));
	if (!out->site)
		return -PT_ENOMEM;
	for (i = 0; i < nrel; i++) {
		GElf_Rela r;
		GElf_Sym s;

		if (!gelf_getrela(rd, (int)i, &r))
			return -PT_EFORMAT;
		if (r.r_offset % ENTRY_SIZE)
			continue;	/* the key field */
		if (GELF_R_TYPE(r.r_info) != R_X86_64_PC32 ||
		    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &s) ||
		    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
			return -PT_EFORMAT;
		/* PC32 stores S + A - P; the site is P + that: S + A. */
		out->site[out->n++] = ((uint64_t)s.st_shndx << 32) +
				      (uint64_t)((int64_t)s.st_value + r.r_addend);
	}
	return finish(out);
}

int static_calls_elf(const char *path, struct static_calls *out)
{
	struct elf_file ef;
	int err;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -PT_EFORMAT;
	err = elf_file_open(path, &ef);
	if (!err)
		err = elf_kind(ef.elf) == ELF_K_ELF ? read_elf(ef.elf, out) : -PT_EFORMAT;
	elf_file_close(&ef);
	if (err)
		static_calls_free(out);
	return err;
}

uint32_t static_calls_mark(const struct static_calls *sc, struct cfg *c)
{
	uint32_t i, lo, hi, count = 0;

	for (i = 0; i < c->ninsns && sc->n; i++) {
		struct cfg_insn *in = &c->insns[i];

		/* the last site starting before the instruction's end */
		lo = 0;
		hi = sc->n;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (sc->site[mid] < in->addr + in->len)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && sc->site[lo - 1] + STATIC_CALL_INSN_LEN > in->addr) {
			in->flags |= CFG_IF_STATIC_CALL;
			count++;
		}
	}
	return count;
}
