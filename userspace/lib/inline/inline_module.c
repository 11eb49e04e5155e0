// SPDX-License-Identifier: GPL-2.0
/*
 * inline_module - the livepatch module that carries the copies, written
 * with libelf from the template (kmod/inline/pathtrace_inline.ko): every
 * template section as it is, plus the copies and what the kernel keeps
 * about them (docs/inline.md, "The generated module"). Sections are kept
 * as bytes (the host is x86-64, as the module is); new sections go after
 * the template's, so no section index changes; new symbols are locals,
 * inserted before the template's globals, whose indices the relocations
 * are renumbered for.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/inline.h>
#include <pathtrace_abi.h>

#define TABLE_ENTRY 32		/* name, objname, copy, sympos: the template's struct */
#define EX_ENTRY 12
#define BUG_ENTRY 12
#define JUMP_ENTRY 16
#define STATIC_CALL_ENTRY 8

static void put32(uint8_t *p, int64_t v)
{
	int32_t x = (int32_t)v;

	memcpy(p, &x, 4);
}

struct sec {
	GElf_Shdr sh;
	char *name;		/* owned */
	uint8_t *buf;		/* owned; NULL for SHT_NOBITS */
	size_t size;
	size_t tsize;		/* the template's part of it (relocations to renumber) */
};

struct out {
	struct sec *s;
	size_t n, cap;
	char *err;
	size_t errlen;
};

static int fail(struct out *o, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct out *o, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->err, o->errlen, fmt, ap);
	va_end(ap);
	return err;
}

static int grow(struct sec *s, size_t add, size_t align)
{
	size_t at = align > 1 ? (s->size + align - 1) / align * align : s->size;
	uint8_t *b = realloc(s->buf, at + add + 1);

	if (!b)
		return -PT_ENOMEM;
	memset(b + s->size, 0, at + add - s->size);
	s->buf = b;
	s->size = at + add;
	return 0;
}

/* Appends len bytes (zeros when p is NULL) at align: returns the offset, or -1. */
static int64_t append(struct sec *s, const void *p, size_t len, size_t align)
{
	size_t at;

	if (grow(s, 0, align))
		return -1;
	at = s->size;
	if (grow(s, len, 1))
		return -1;
	if (p)
		memcpy(s->buf + at, p, len);
	return (int64_t)at;
}

static int64_t find(const struct out *o, const char *name)
{
	size_t i;

	for (i = 1; i < o->n; i++)
		if (!strcmp(o->s[i].name, name))
			return (int64_t)i;
	return -1;
}

/* The RELA section of section target, or -1. */
static int64_t rela_of(const struct out *o, size_t target)
{
	size_t i;

	for (i = 1; i < o->n; i++)
		if (o->s[i].sh.sh_type == SHT_RELA && o->s[i].sh.sh_info == target)
			return (int64_t)i;
	return -1;
}

static int64_t add_sec(struct out *o, const char *name, uint32_t type, uint64_t flags,
		       uint64_t align, uint64_t entsize)
{
	struct sec *s;

	if (o->n == o->cap) {
		size_t ncap = o->cap * 2 + 8;

		s = realloc(o->s, ncap * sizeof(*s));
		if (!s)
			return -1;
		o->s = s;
		o->cap = ncap;
	}
	s = &o->s[o->n];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	if (!s->name)
		return -1;
	s->sh.sh_type = type;
	s->sh.sh_flags = flags;
	s->sh.sh_addralign = align;
	s->sh.sh_entsize = entsize;
	return (int64_t)o->n++;
}

/* The section called name, made (with its RELA section) if the template has none. */
static int64_t table_sec(struct out *o, const char *name, uint64_t flags, uint64_t align,
			 size_t symtab)
{
	int64_t i = find(o, name), r;
	char rname[64];

	if (i < 0)
		i = add_sec(o, name, SHT_PROGBITS, flags, align, 0);
	if (i < 0)
		return -1;
	if (rela_of(o, (size_t)i) >= 0)
		return i;
	snprintf(rname, sizeof(rname), ".rela%s", name);
	r = add_sec(o, rname, SHT_RELA, SHF_INFO_LINK, 8, sizeof(Elf64_Rela));
	if (r < 0)
		return -1;
	o->s[r].sh.sh_link = (uint32_t)symtab;
	o->s[r].sh.sh_info = (uint32_t)i;
	return i;
}

static int add_rela(struct out *o, size_t target, uint64_t off, uint32_t sym, uint32_t type,
		    int64_t addend)
{
	Elf64_Rela r = { .r_offset = off, .r_info = ELF64_R_INFO(sym, type), .r_addend = addend };
	int64_t ri = rela_of(o, target);

	return ri < 0 || append(&o->s[ri], &r, sizeof(r), 1) < 0 ? -PT_ENOMEM : 0;
}

static int read_template(const char *path, struct out *o, GElf_Ehdr *eh)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx, i;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = -PT_EFORMAT;

	if (fd < 0)
		return fail(o, -PT_EIO, "%s: %s", path, strerror(errno));
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, eh) || eh->e_type != ET_REL ||
	    eh->e_machine != EM_X86_64 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    elf_getshdrstrndx(e, &shstrndx)) {
		fail(o, err, "%s: not a relocatable x86-64 ELF object", path);
		goto out;
	}
	o->cap = 64;
	o->s = calloc(o->cap, sizeof(*o->s));
	if (!o->s || !(o->s[0].name = strdup(""))) {
		err = -PT_ENOMEM;
		goto out;
	}
	o->n = 1;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *n;
		int64_t k;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e, shstrndx, sh.sh_name)))
			goto out;
		if (elf_ndxscn(scn) != o->n) {
			fail(o, err, "%s: sections out of order", path);
			goto out;
		}
		k = add_sec(o, n, sh.sh_type, sh.sh_flags, sh.sh_addralign, sh.sh_entsize);
		if (k < 0) {
			err = -PT_ENOMEM;
			goto out;
		}
		o->s[k].sh = sh;
		if (sh.sh_type == SHT_NOBITS) {
			o->s[k].size = sh.sh_size;
			continue;
		}
		d = elf_rawdata(scn, NULL);
		if (sh.sh_size && (!d || d->d_size != sh.sh_size))
			goto out;
		if (append(&o->s[k], d ? d->d_buf : NULL, sh.sh_size, 1) < 0) {
			err = -PT_ENOMEM;
			goto out;
		}
		o->s[k].tsize = sh.sh_size;
	}
	for (i = 1; i < o->n; i++)
		if (o->s[i].sh.sh_type == SHT_SYMTAB_SHNDX) {
			fail(o, err, "%s: extended section indices", path);
			goto out;
		}
	err = 0;
out:
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

static int write_elf(const char *path, struct out *o, const GElf_Ehdr *teh)
{
	Elf *e;
	GElf_Ehdr eh;
	size_t i;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), err = -PT_EIO;

	if (fd < 0)
		return fail(o, -PT_EIO, "%s: %s", path, strerror(errno));
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e || !gelf_newehdr(e, ELFCLASS64))
		goto out;
	eh = *teh;
	eh.e_shoff = 0;
	eh.e_shnum = 0;
	if (!gelf_update_ehdr(e, &eh))
		goto out;
	for (i = 1; i < o->n; i++) {
		Elf_Scn *scn = elf_newscn(e);
		Elf_Data *d;
		GElf_Shdr sh = o->s[i].sh;

		if (!scn || !(d = elf_newdata(scn)))
			goto out;
		d->d_type = ELF_T_BYTE;
		d->d_buf = o->s[i].sh.sh_type == SHT_NOBITS ? NULL : o->s[i].buf;
		d->d_size = o->s[i].size;
		d->d_align = sh.sh_addralign ? sh.sh_addralign : 1;
		sh.sh_size = o->s[i].size;
		sh.sh_offset = 0;
		if (!gelf_update_shdr(scn, &sh))
			goto out;
	}
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto out;
	err = 0;
out:
	if (err)
		fail(o, err, "%s: writing: %s", path, elf_errmsg(-1));
	if (e)
		elf_end(e);
	if (close(fd) && !err)
		err = fail(o, -PT_EIO, "%s: %s", path, strerror(errno));
	return err;
}

/* Where the counters of a copy of bytes go after at: in one piece, the next one if need be. */
static uint64_t counter_place(uint64_t at, uint64_t bytes)
{
	if (at % PT_INLINE_PIECE_BYTES + bytes > PT_INLINE_PIECE_BYTES)
		at = (at / PT_INLINE_PIECE_BYTES + 1) * PT_INLINE_PIECE_BYTES;
	return at;
}

uint64_t inline_module_counter_offset(const struct inline_copy *cps, uint32_t i)
{
	uint64_t at = inline_module_counter_bytes(cps, i);

	return counter_place(at, (uint64_t)cps[i].ncounters * 8);
}

uint64_t inline_module_counter_bytes(const struct inline_copy *cps, uint32_t n)
{
	uint64_t at = 0;
	uint32_t k;

	for (k = 0; k < n; k++)
		at = counter_place(at, (uint64_t)cps[k].ncounters * 8) +
		     (uint64_t)cps[k].ncounters * 8;
	return at;
}

uint64_t inline_module_offset(const struct inline_copy *cps, uint32_t i)
{
	uint64_t at = 0;
	uint32_t k;

	/* at least one int3 after each copy: its ORC terminator has an ip of its own */
	for (k = 0; k < i; k++)
		at = (at + cps[k].len + 1 + 15) / 16 * 16;
	return at;
}

/* New local symbols: the copies, the names' section, the absolute targets. */
struct syms {
	Elf64_Sym *v;
	uint32_t n, cap;
	uint64_t *abs_addr;	/* v[abs_first + k] is at abs_addr[k] */
	uint32_t abs_first;
};

static int64_t add_sym(struct syms *s, struct sec *strtab, const char *name, unsigned char info,
		       uint16_t shndx, uint64_t value, uint64_t size)
{
	int64_t at = 0;

	if (s->n == s->cap) {
		uint32_t ncap = s->cap * 2 + 16;
		Elf64_Sym *v = realloc(s->v, ncap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = ncap;
	}
	if (name && (at = append(strtab, name, strlen(name) + 1, 1)) < 0)
		return -1;
	s->v[s->n] = (Elf64_Sym){ .st_name = (uint32_t)at, .st_info = info,
				  .st_shndx = shndx, .st_value = value, .st_size = size };
	return s->n++;
}

/* The absolute symbol (new-local index k) for addr, made if needed; -1 out of memory. */
static int64_t abs_sym(struct syms *s, struct sec *strtab, uint64_t addr)
{
	char name[40];
	uint32_t k;
	uint64_t *a;
	int64_t i;

	for (k = s->abs_first; k < s->n; k++)
		if (s->abs_addr[k - s->abs_first] == addr)
			return k;
	a = realloc(s->abs_addr, (s->n - s->abs_first + 1) * sizeof(*a));
	if (!a)
		return -1;
	s->abs_addr = a;
	snprintf(name, sizeof(name), "__pt_abs_%" PRIx64, addr);
	i = add_sym(s, strtab, name, ELF64_ST_INFO(STB_LOCAL, STT_NOTYPE), SHN_ABS, addr, 0);
	if (i >= 0)
		a[i - s->abs_first] = addr;
	return i;
}

/* The template's symbol called name: its index, or -1. */
static int64_t template_sym(const struct out *o, size_t symtab, const char *name)
{
	const Elf64_Sym *v = (const Elf64_Sym *)o->s[symtab].buf;
	const struct sec *str = &o->s[o->s[symtab].sh.sh_link];
	size_t i, n = o->s[symtab].tsize / sizeof(*v);

	for (i = 1; i < n; i++)
		if (v[i].st_name < str->size && !strcmp((const char *)str->buf + v[i].st_name, name))
			return (int64_t)i;
	return -1;
}

/* The index of the template's undefined global name (an import), or -1. */
static int64_t template_import(const struct out *o, size_t symtab, uint32_t first_global,
			       const char *name)
{
	int64_t i = template_sym(o, symtab, name);

	if (i < 0 || ((const Elf64_Sym *)o->s[symtab].buf)[i].st_shndx != SHN_UNDEF ||
	    (uint32_t)i < first_global)
		return -1;
	return i;
}

/*
 * The copies' counter space (kmod/inline/pathtrace_inline.c): its bytes in
 * pt_inline_counter_bytes, a slot per piece from pt_inline_pieces (which
 * must start its section). Returns the slots' section index, or a
 * negative error.
 */
static int64_t counters_sec(struct out *o, size_t symtab, const struct inline_copy *cps, uint32_t n)
{
	int64_t ps = find(o, ".pt_inline_pieces"), by = find(o, ".pt_inline_counters");
	int64_t slots = template_sym(o, symtab, "pt_inline_pieces");
	uint64_t bytes = inline_module_counter_bytes(cps, n);
	uint64_t npieces = (bytes + PT_INLINE_PIECE_BYTES - 1) / PT_INLINE_PIECE_BYTES;
	const Elf64_Sym *v = (const Elf64_Sym *)o->s[symtab].buf;
	uint32_t i;

	if (ps < 0 || by < 0 || slots < 0 || o->s[by].size < 8 || v[slots].st_shndx != ps ||
	    v[slots].st_value || o->s[ps].size < 8)
		return fail(o, -PT_EFORMAT, "the template has no counter space (.pt_inline_pieces "
			    "from pt_inline_pieces, .pt_inline_counters)");
	for (i = 0; i < n; i++)
		if ((uint64_t)cps[i].ncounters * 8 > PT_INLINE_PIECE_BYTES)
			return fail(o, -PT_EINVAL, "%s: %u counters do not fit a piece",
				    cps[i].name, cps[i].ncounters);
	if (npieces > 1 && append(&o->s[ps], NULL, (npieces - 1) * 8, 8) < 0)
		return -PT_ENOMEM;
	memcpy(o->s[by].buf, &bytes, 8);
	return ps;
}

/* What the copies import from pathtrace.ko, by inline_reloc.copy: IMPORTS names and kinds. */
#define IMPORTS 6
static const char *const import_names[IMPORTS] = {
	"pt_inline_hit", "pt_inline_frame", "pt_inline_depth", "pt_inline_depth_known",
	"pt_inline_frames_saved", "pt_inline_stage"
};
static const uint32_t import_kinds[IMPORTS] = {
	INLINE_HIT, INLINE_FRAME, INLINE_DEPTH, INLINE_DEPTH_KNOWN, INLINE_FRAMES_SAVED,
	INLINE_STAGE
};

/* Which import a relocation of kind copy is against, or -1. */
static int import_of(uint32_t copy)
{
	int k;

	for (k = 0; k < IMPORTS; k++)
		if (import_kinds[k] == copy)
			return k;
	return -1;
}

/*
 * The references to pathtrace.ko: the sites' calls (INLINE_HIT, INLINE_STAGE), the kept
 * calls' stores and clears (INLINE_FRAME), the activations' count
 * (INLINE_DEPTH, INLINE_DEPTH_KNOWN) and the words they save
 * (INLINE_FRAMES_SAVED), against the template's undefined
 * symbols of those names (imp: their indices in the template, -1 where it
 * has none), once those are final (moved up by the nlocals new locals):
 * the module loader resolves them in pathtrace.ko.
 */
static int import_relocs(struct out *o, const int64_t imp[IMPORTS], const struct inline_copy *cps,
			 uint32_t n, uint32_t nlocals)
{
	int64_t text = find(o, ".text.pt_inline");
	uint32_t i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < cps[i].nrelocs; k++) {
			const struct inline_reloc *r = &cps[i].relocs[k];
			int which = import_of(r->copy);

			if (which < 0)
				continue;
			if (imp[which] < 0)
				return fail(o, -PT_EFORMAT, "the template does not import %s",
					    import_names[which]);
			if (text < 0 || add_rela(o, (size_t)text, inline_module_offset(cps, i) +
						 r->off, (uint32_t)imp[which] + nlocals, r->type,
						 r->addend))
				return -PT_ENOMEM;
		}
	return 0;
}

/* Everything the copies add, new locals numbered from base (their final index). */
static int add_copies(struct out *o, size_t symtab, const struct inline_copy *cps, uint32_t n,
		      struct syms *sy, uint32_t base)
{
	int64_t text, rod, tab, ex, bug, orc, orc_ip, at, sect, pc, pcsym, jt = -1, scs = -1;
	uint32_t i, k;
	uint8_t zero_orc[KORC_ENTRY] = { 0 };

	text = add_sec(o, ".text.pt_inline", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 16, 0);
	rod = text < 0 ? -1 : add_sec(o, ".rodata.pt_inline", SHT_PROGBITS, SHF_ALLOC, 1, 0);
	if (rod < 0)
		return -PT_ENOMEM;
	/* table_sec may move o->s: indices only from here */
	if (table_sec(o, ".text.pt_inline", SHF_ALLOC | SHF_EXECINSTR, 16, symtab) < 0 ||
	    (tab = table_sec(o, ".pt_inline", SHF_ALLOC, 8, symtab)) < 0 ||
	    (ex = table_sec(o, "__ex_table", SHF_ALLOC, 4, symtab)) < 0 ||
	    (bug = table_sec(o, "__bug_table", SHF_ALLOC | SHF_WRITE, 4, symtab)) < 0 ||
	    (orc_ip = table_sec(o, ".orc_unwind_ip", SHF_ALLOC, 4, symtab)) < 0)
		return -PT_ENOMEM;
	for (i = 0; i < n; i++) {
		if (cps[i].nkeys && jt < 0 &&
		    (jt = table_sec(o, "__jump_table", SHF_ALLOC | SHF_WRITE, 8, symtab)) < 0)
			return -PT_ENOMEM;
		if (cps[i].ncalls && scs < 0 &&
		    (scs = table_sec(o, ".static_call_sites", SHF_ALLOC | SHF_WRITE, 4, symtab)) < 0)
			return -PT_ENOMEM;
	}
	orc = find(o, ".orc_unwind");
	if (orc < 0)
		orc = add_sec(o, ".orc_unwind", SHT_PROGBITS, SHF_ALLOC, 2, 0);
	if (orc < 0)
		return -PT_ENOMEM;
	pc = counters_sec(o, symtab, cps, n);
	if (pc < 0)
		return (int)pc;
	pcsym = add_sym(sy, &o->s[o->s[symtab].sh.sh_link], NULL,
			ELF64_ST_INFO(STB_LOCAL, STT_SECTION), (uint16_t)pc, 0, 0);
	sect = pcsym < 0 ? -1 : add_sym(sy, &o->s[o->s[symtab].sh.sh_link], NULL,
					ELF64_ST_INFO(STB_LOCAL, STT_SECTION), (uint16_t)rod, 0, 0);
	if (sect < 0)
		return -PT_ENOMEM;
	for (i = 0; i < n; i++)
		if (add_sym(sy, &o->s[o->s[symtab].sh.sh_link], cps[i].name,
			    ELF64_ST_INFO(STB_LOCAL, STT_FUNC), (uint16_t)text,
			    inline_module_offset(cps, i), cps[i].len) < 0)
			return -PT_ENOMEM;
	sy->abs_first = sy->n;
	/* the livepatch table replaces the template's empty one */
	o->s[tab].size = 0;
	for (i = 0; i < n; i++) {
		const struct inline_copy *c = &cps[i];
		uint32_t csym = base + (uint32_t)sect + 1 + i;
		uint64_t e[4] = { 0, 0, 0, c->sympos };
		int64_t nm, obj = -1, t;

		if (!c->code || c->refusal)
			return fail(o, -PT_EINVAL, "%s: refused copies are not written", c->name);
		nm = append(&o->s[rod], c->name, strlen(c->name) + 1, 1);
		if (c->objname)
			obj = append(&o->s[rod], c->objname, strlen(c->objname) + 1, 1);
		t = append(&o->s[tab], e, sizeof(e), 8);
		if (nm < 0 || (c->objname && obj < 0) || t < 0 ||
		    add_rela(o, (size_t)tab, t, base + (uint32_t)sect, R_X86_64_64, nm) ||
		    (c->objname && add_rela(o, (size_t)tab, t + 8, base + (uint32_t)sect,
					    R_X86_64_64, obj)) ||
		    add_rela(o, (size_t)tab, t + 16, csym, R_X86_64_64, 0))
			return -PT_ENOMEM;
		/* the code, then int3 up to the next copy (the section is at offset(i) here) */
		at = (int64_t)inline_module_offset(cps, i);
		if (append(&o->s[text], c->code, c->len, 1) != at ||
		    append(&o->s[text], NULL, inline_module_offset(cps, i + 1) - at - c->len, 1) < 0)
			return -PT_ENOMEM;
		memset(o->s[text].buf + at + c->len, 0xcc,
		       (size_t)(inline_module_offset(cps, i + 1) - at - c->len));
		for (k = 0; k < c->nrelocs; k++) {
			const struct inline_reloc *r = &c->relocs[k];
			int64_t s;

			if (r->copy == INLINE_COUNTER_PIECE) {
				/* the slot of the piece holding this copy's counters */
				if (add_rela(o, (size_t)text, at + r->off, base + (uint32_t)pcsym,
					     r->type, r->addend + (int64_t)(8 *
					     (inline_module_counter_offset(cps, i) /
					      PT_INLINE_PIECE_BYTES))))
					return -PT_ENOMEM;
				continue;
			}
			if (import_of(r->copy) >= 0)
				continue;	/* against the template's imports: import_relocs() */
			if (r->copy == INLINE_COUNTER_DISP) {
				/* the counter's place in the piece */
				put32(o->s[text].buf + at + r->off, r->addend +
				      (int64_t)(inline_module_counter_offset(cps, i) %
						PT_INLINE_PIECE_BYTES));
				continue;
			}
			s = r->copy != INLINE_NONE ? base + (int64_t)sect + 1 + r->copy :
				    abs_sym(sy, &o->s[o->s[symtab].sh.sh_link], r->target);

			if (s < 0 || add_rela(o, (size_t)text, at + r->off,
					      r->copy != INLINE_NONE ? (uint32_t)s :
					      base + (uint32_t)s, r->type,
					      r->addend + (int64_t)(r->copy != INLINE_NONE ?
								    r->target - cps[r->copy].addr :
								    0)))
				return -PT_ENOMEM;
		}
		for (k = 0; k < c->nfixups; k++) {
			const struct cfg_fixup *f = &c->fixups[k];
			uint32_t d[3] = { 0, 0, f->data };

			t = append(&o->s[ex], d, sizeof(d), 4);
			if (t < 0 ||
			    add_rela(o, (size_t)ex, t, csym, R_X86_64_PC32, (int64_t)(f->insn - c->addr)) ||
			    add_rela(o, (size_t)ex, t + 4, csym, R_X86_64_PC32,
				     (int64_t)(f->fixup - c->addr)))
				return -PT_ENOMEM;
		}
		for (k = 0; k < c->nbugs; k++) {
			const struct cfg_bug_site *b = &c->bugs[k];
			uint8_t d[BUG_ENTRY] = { 0 };
			int64_t fs;

			memcpy(d + 8, &b->line, 2);
			memcpy(d + 10, &b->flags, 2);
			t = append(&o->s[bug], d, sizeof(d), 4);
			fs = b->file ? abs_sym(sy, &o->s[o->s[symtab].sh.sh_link], b->file) : -1;
			if (t < 0 || (b->file && fs < 0) ||
			    add_rela(o, (size_t)bug, t, csym, R_X86_64_PC32, (int64_t)(b->addr - c->addr)) ||
			    (b->file && add_rela(o, (size_t)bug, t + 4, base + (uint32_t)fs,
						 R_X86_64_PC32, 0)))
				return -PT_ENOMEM;
		}
		for (k = 0; k < c->nkeys; k++) {
			/* s32 code, s32 target, s64 key | branch (struct jump_entry) */
			const struct inline_key *ky = &c->keys[k];
			int64_t ks = abs_sym(sy, &o->s[o->s[symtab].sh.sh_link], ky->key);

			t = append(&o->s[jt], NULL, JUMP_ENTRY, 8);
			if (t < 0 || ks < 0 ||
			    add_rela(o, (size_t)jt, t, csym, R_X86_64_PC32, (int64_t)(ky->code - c->addr)) ||
			    add_rela(o, (size_t)jt, t + 4, csym, R_X86_64_PC32,
				     (int64_t)(ky->target - c->addr)) ||
			    add_rela(o, (size_t)jt, t + 8, base + (uint32_t)ks, R_X86_64_PC64,
				     ky->branch & 1))
				return -PT_ENOMEM;
		}
		for (k = 0; k < c->ncalls; k++) {
			/* s32 addr, s32 key | STATIC_CALL_SITE_TAIL (struct static_call_site) */
			const struct inline_static_call *sc = &c->calls[k];
			int64_t ks = abs_sym(sy, &o->s[o->s[symtab].sh.sh_link], sc->key);

			t = append(&o->s[scs], NULL, STATIC_CALL_ENTRY, 4);
			if (t < 0 || ks < 0 ||
			    add_rela(o, (size_t)scs, t, csym, R_X86_64_PC32, (int64_t)(sc->addr - c->addr)) ||
			    add_rela(o, (size_t)scs, t + 4, base + (uint32_t)ks, R_X86_64_PC32,
				     sc->tail ? STATIC_CALL_SITE_TAIL : 0))
				return -PT_ENOMEM;
		}
		for (k = 0; k <= c->norc; k++) {
			/* the copied entries, then an undefined one at the copy's end */
			const uint8_t *e6 = k < c->norc ? c->orc[k].orc : zero_orc;
			uint64_t ip = k < c->norc ? c->orc[k].ip - c->addr : c->len;

			if (k < c->norc && ip >= c->len)
				continue;
			t = append(&o->s[orc_ip], NULL, 4, 4);
			if (t < 0 || append(&o->s[orc], e6, KORC_ENTRY, 1) < 0 ||
			    add_rela(o, (size_t)orc_ip, t, csym, R_X86_64_PC32, (int64_t)ip))
				return -PT_ENOMEM;
		}
	}
	if (append(&o->s[tab], NULL, TABLE_ENTRY, 8) < 0)	/* the end of the table */
		return -PT_ENOMEM;
	return 0;
}

int inline_module_write(const char *template_path, const char *out_path,
			const struct inline_copy *cps, uint32_t n, char *err, size_t errlen)
{
	struct out o = { .err = err, .errlen = errlen };
	struct syms sy = { 0 };
	GElf_Ehdr eh;
	int64_t symtab;
	uint32_t first_global, nsyms, i, k;
	Elf64_Sym *old;
	int64_t imp[IMPORTS];
	int ret;

	err[0] = 0;
	if (!n)
		return fail(&o, -PT_EINVAL, "no copies");
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(&o, -PT_EFORMAT, "libelf: %s", elf_errmsg(-1));
	ret = read_template(template_path, &o, &eh);
	if (ret)
		goto out;
	symtab = find(&o, ".symtab");
	ret = -PT_EFORMAT;
	if (symtab < 0 || o.s[symtab].sh.sh_type != SHT_SYMTAB || find(&o, ".pt_inline") < 0 ||
	    o.s[symtab].sh.sh_link >= o.n || o.s[symtab].size % sizeof(Elf64_Sym)) {
		fail(&o, ret, "%s: not the inline template (no .symtab or .pt_inline)",
		     template_path);
		goto out;
	}
	first_global = (uint32_t)o.s[symtab].sh.sh_info;
	nsyms = (uint32_t)(o.s[symtab].size / sizeof(Elf64_Sym));
	for (i = 0; i < IMPORTS; i++)
		imp[i] = template_import(&o, (size_t)symtab, first_global, import_names[i]);
	ret = add_copies(&o, (size_t)symtab, cps, n, &sy, first_global);
	if (ret)
		goto out;
	/* the template's globals move up by the new locals: renumber the template's relocations */
	for (i = 1; i < o.n; i++) {
		Elf64_Rela *r = (Elf64_Rela *)o.s[i].buf;

		if (o.s[i].sh.sh_type != SHT_RELA || (int64_t)o.s[i].sh.sh_link != symtab)
			continue;
		for (k = 0; k < o.s[i].tsize / sizeof(*r); k++) {
			uint32_t s = (uint32_t)ELF64_R_SYM(r[k].r_info);

			if (s >= first_global && s < nsyms)
				r[k].r_info = ELF64_R_INFO(s + sy.n, ELF64_R_TYPE(r[k].r_info));
		}
	}
	ret = -PT_ENOMEM;
	old = malloc((nsyms + sy.n) * sizeof(*old));
	if (!old)
		goto out;
	memcpy(old, o.s[symtab].buf, first_global * sizeof(*old));
	memcpy(old + first_global, sy.v, sy.n * sizeof(*old));
	memcpy(old + first_global + sy.n, o.s[symtab].buf + first_global * sizeof(*old),
	       (nsyms - first_global) * sizeof(*old));
	free(o.s[symtab].buf);
	o.s[symtab].buf = (uint8_t *)old;
	o.s[symtab].size = (nsyms + sy.n) * sizeof(*old);
	o.s[symtab].sh.sh_info = first_global + sy.n;
	ret = import_relocs(&o, imp, cps, n, sy.n);
	if (ret)
		goto out;
	ret = -PT_ENOMEM;
	/* section names: the new ones appended to .shstrtab */
	for (i = 1; i < o.n; i++) {
		int64_t at = append(&o.s[eh.e_shstrndx], o.s[i].name, strlen(o.s[i].name) + 1, 1);

		if (at < 0)
			goto out;
		o.s[i].sh.sh_name = (uint32_t)at;
	}
	ret = write_elf(out_path, &o, &eh);
out:
	for (i = 0; i < o.n; i++) {
		free(o.s[i].name);
		free(o.s[i].buf);
	}
	free(o.s);
	free(sy.v);
	free(sy.abs_addr);
	if (ret == -PT_ENOMEM && !err[0])
		fail(&o, ret, "out of memory");
	return ret;
}
