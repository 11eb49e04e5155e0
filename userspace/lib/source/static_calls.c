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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts and deduplicates. */
static void finish(struct static_calls *sc)
{
	uint32_t i, k = 0;

	qsort(sc->site, sc->n, sizeof(*sc->site), cmp_u64);
	for (i = 0; i < sc->n; i++)
		if (!k || sc->site[k - 1] != sc->site[i])
			sc->site[k++] = sc->site[i];
	sc->n = k;
}

void static_calls_free(struct static_calls *sc)
{
	free(sc->site);
	memset(sc, 0, sizeof(*sc));
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
	if (!tab || !out->site) {
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
	for (i = 0; i < n; i++)
		out->site[i] = start + (uint64_t)i * ENTRY_SIZE + (uint64_t)(int64_t)tab[2 * i];
	out->n = n;
	free(tab);
	finish(out);
	return 0;
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
	finish(out);
	return 0;
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
