// SPDX-License-Identifier: GPL-2.0
/* ksyms - /proc/kallsyms: text symbols with upper-bound sizes, .cold pairs. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include <pathtrace/error.h>
#include <pathtrace/ksyms.h>

struct ksyms {
	struct ksym *all;	/* every symbol, sorted by address */
	size_t nall;
	struct ksym *text;	/* text symbols, sorted by address */
	uint32_t ntext;
	uint32_t *bucket;	/* text symbols by name: each bucket's first, or KSYMS_NONE */
	uint32_t *next;		/* the next text symbol in the same bucket, address order */
	uint32_t mask;		/* buckets - 1 (a power of two) */
	char *file;		/* the file as read, each field NUL-terminated in place:
				 * every name and module string points into it */
	char **added;		/* the strings of symbols ksyms_add added, one block each */
	uint32_t nadded;
};

static int cmp_addr(const void *x, const void *y)
{
	const struct ksym *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int modcmp(const char *a, const char *b)
{
	if (!a || !b)	/* vmlinux (NULL) is equal only to itself */
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/* Text symbols; weak functions are W/w (tail calls name them too). */
static int is_text(char t)
{
	return t == 't' || t == 'T' || t == 'W' || t == 'w';
}

static uint32_t *name_bucket(const struct ksyms *ks, const char *name)
{
	return &ks->bucket[XXH3_64bits(name, strlen(name)) & ks->mask];
}

/*
 * The first text symbol named name in module (NULL: vmlinux) at or after t
 * in its bucket's chain, or KSYMS_NONE. Chains are in address order, so
 * from the bucket's head on this gives the name's symbols in address order.
 */
static uint32_t named_from(const struct ksyms *ks, uint32_t t, const char *name,
			   const char *module)
{
	for (; t != KSYMS_NONE; t = ks->next[t])
		if (!strcmp(ks->text[t].name, name) && !modcmp(ks->text[t].module, module))
			return t;
	return KSYMS_NONE;
}

/* How many text symbols are named name in module; *rank: how many of them lie below t. */
static uint32_t named_count(const struct ksyms *ks, const char *name, const char *module,
			    uint32_t t, uint32_t *rank)
{
	uint32_t n = 0, u;

	*rank = 0;
	for (u = named_from(ks, *name_bucket(ks, name), name, module); u != KSYMS_NONE;
	     u = named_from(ks, ks->next[u], name, module), n++)
		*rank += u < t;
	return n;
}

/* The k-th (from 0) text symbol named name in module, in address order, or KSYMS_NONE. */
static uint32_t named_kth(const struct ksyms *ks, const char *name, const char *module,
			  uint32_t k)
{
	uint32_t u = named_from(ks, *name_bucket(ks, name), name, module);

	while (k-- && u != KSYMS_NONE)
		u = named_from(ks, ks->next[u], name, module);
	return u;
}

/* Chains the text symbols into buckets by name. Returns 0 or -PT_ENOMEM. */
static int hash_names(struct ksyms *ks)
{
	uint32_t nb = 1024, t;

	while (nb < 2 * ks->ntext)
		nb *= 2;
	ks->mask = nb - 1;
	ks->bucket = malloc(nb * sizeof(*ks->bucket));
	ks->next = malloc((ks->ntext + 1) * sizeof(*ks->next));
	if (!ks->bucket || !ks->next)
		return -PT_ENOMEM;
	memset(ks->bucket, 0xff, nb * sizeof(*ks->bucket));	/* KSYMS_NONE */
	for (t = ks->ntext; t-- > 0;) {	/* from the top: each chain ends up in address order */
		uint32_t *b = name_bucket(ks, ks->text[t].name);

		ks->next[t] = *b;
		*b = t;
	}
	return 0;
}

/*
 * Reads all of f into a NUL-terminated buffer (/proc/kallsyms has no size
 * to ask for). Returns it, or NULL with *err set (-PT_EIO, -PT_ENOMEM).
 */
static char *read_all(FILE *f, size_t *len, int *err)
{
	size_t cap = 1 << 20, n = 0, got;
	char *buf = malloc(cap + 1), *nb;

	*err = -PT_ENOMEM;
	if (!buf)
		return NULL;
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n < cap)
			continue;
		nb = realloc(buf, 2 * cap + 1);
		if (!nb)
			goto fail;
		buf = nb;
		cap *= 2;
	}
	if (ferror(f)) {
		*err = -PT_EIO;
		goto fail;
	}
	buf[n] = 0;
	*len = n;
	return buf;
fail:
	free(buf);
	return NULL;
}

static char *skip_blanks(char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Ends the field at p (a blank, the line's NUL or its end) and returns what follows. */
static char *field_end(char *p)
{
	while (*p && *p != ' ' && *p != '\t')
		p++;
	if (*p)
		*p++ = 0;
	return p;
}

/*
 * One line of kallsyms, NUL-terminated in place: "ADDR TYPE NAME" and
 * optionally "\t[MODULE]". Fills s (name and module pointing into the
 * line). Returns 0, or -PT_EFORMAT.
 */
static int parse_line(char *line, struct ksym *s)
{
	char *p = skip_blanks(line), *q;
	uint64_t addr = 0;
	int digits = 0;

	for (; isxdigit((unsigned char)*p) && digits <= 16; p++, digits++)
		addr = addr << 4 | (uint64_t)(isdigit((unsigned char)*p) ? *p - '0' :
					       (tolower((unsigned char)*p) - 'a' + 10));
	if (!digits || digits > 16 || (*p != ' ' && *p != '\t'))
		return -PT_EFORMAT;
	p = skip_blanks(p);
	if (!*p || (p[1] != ' ' && p[1] != '\t'))
		return -PT_EFORMAT;
	*s = (struct ksym){ .addr = addr, .type = *p, .cold = KSYMS_NONE };
	p = skip_blanks(p + 1);
	if (!*p)
		return -PT_EFORMAT;
	s->name = p;
	p = skip_blanks(field_end(p));
	if (*p != '[')
		return 0;
	s->module = ++p;
	q = strchr(p, ']');
	if (q)
		*q = 0;
	return 0;
}

/*
 * Sorts all symbols by address, sizes them, and indexes the text symbols:
 * by address, by name, and f with its f.cold. Returns 0 or -PT_ENOMEM.
 */
static int index_syms(struct ksyms *ks)
{
	char name[512];
	size_t i;
	uint32_t t;

	qsort(ks->all, ks->nall, sizeof(*ks->all), cmp_addr);
	/* Size: up to the next symbol at a higher address (an upper bound). */
	for (i = 0; i < ks->nall; i++) {
		size_t j = i + 1;

		while (j < ks->nall && ks->all[j].addr == ks->all[i].addr)
			j++;
		ks->all[i].size = j < ks->nall ? ks->all[j].addr - ks->all[i].addr : 0;
	}
	free(ks->text);
	free(ks->bucket);
	free(ks->next);
	ks->bucket = ks->next = NULL;
	ks->ntext = 0;
	ks->text = malloc((ks->nall + 1) * sizeof(*ks->text));
	if (!ks->text)
		return -PT_ENOMEM;
	for (i = 0; i < ks->nall; i++)
		if (is_text(ks->all[i].type))
			ks->text[ks->ntext++] = ks->all[i];
	if (hash_names(ks))
		return -PT_ENOMEM;
	/*
	 * Pair f with f.cold of the same module: unique names, or else the
	 * k-th f with the k-th f.cold in address (link) order when the counts
	 * match, or the one f.cold to every f. A wrong pair can only make a
	 * jump land outside both parts, a refusal, never a wrong CFG: the
	 * parts' ranges are disjoint and only reachable code enters a CFG.
	 */
	for (t = 0; t < ks->ntext; t++) {
		struct ksym *s = &ks->text[t];
		size_t n = strlen(s->name);
		uint32_t nf, nc, rank, f, k;

		if (n < 6 || n - 5 >= sizeof(name) || strcmp(s->name + n - 5, ".cold"))
			continue;
		memcpy(name, s->name, n - 5);
		name[n - 5] = 0;
		nf = named_count(ks, name, s->module, 0, &k);
		nc = named_count(ks, s->name, s->module, t, &rank);
		f = named_kth(ks, name, s->module, rank);
		if (nf == nc && ks->text[f].cold == KSYMS_NONE) {
			ks->text[f].cold = t;
		} else if (nc == 1) {
			/* One f.cold for several f: each gets it; only its owner reaches it. */
			for (k = 0; k < nf; k++) {
				f = named_kth(ks, name, s->module, k);
				if (ks->text[f].cold == KSYMS_NONE)
					ks->text[f].cold = t;
			}
		}
	}
	return 0;
}

int ksyms_load(const char *path, struct ksyms **out)
{
	struct ksyms *ks;
	size_t cap = 0, len = 0, nonzero = 0;
	char *line, *end, *nl;
	FILE *f;
	int err = -PT_ENOMEM;

	*out = NULL;
	f = fopen(path, "r");
	if (!f)
		return -PT_EIO;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		goto out;
	ks->file = read_all(f, &len, &err);
	if (!ks->file)
		goto out;
	err = -PT_ENOMEM;
	for (line = ks->file, end = ks->file + len; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			nl = end;	/* the last line, unterminated: the buffer's NUL ends it */
		*nl = 0;
		if (ks->nall == cap) {
			size_t nc = cap ? cap * 2 : 65536;
			struct ksym *a = realloc(ks->all, nc * sizeof(*a));

			if (!a)
				goto out;
			ks->all = a;
			cap = nc;
		}
		if (parse_line(line, &ks->all[ks->nall])) {
			err = -PT_EFORMAT;
			goto out;
		}
		nonzero += ks->all[ks->nall].addr != 0;
		ks->nall++;
	}
	if (ks->nall && !nonzero) {
		err = -PT_ENOENT;
		goto out;
	}
	err = -PT_ENOMEM;
	if (index_syms(ks))
		goto out;
	*out = ks;
	err = 0;
out:
	fclose(f);
	if (err)
		ksyms_free(ks);
	return err;
}

void ksyms_free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->file);
	while (ks->nadded)
		free(ks->added[--ks->nadded]);
	free(ks->added);
	free(ks->all);
	free(ks->text);
	free(ks->bucket);
	free(ks->next);
	free(ks);
}

int ksyms_add(struct ksyms *ks, const char *module, const struct ksym *syms, uint32_t n)
{
	size_t bytes = strlen(module) + 1, k;
	char *block, *p, **added;
	struct ksym *all;
	uint32_t i;

	for (i = 0; i < n; i++)
		bytes += strlen(syms[i].name) + 1;
	block = malloc(bytes);
	added = realloc(ks->added, (ks->nadded + 1) * sizeof(*added));
	all = realloc(ks->all, (ks->nall + n + 1) * sizeof(*all));
	if (added)
		ks->added = added;
	if (all)
		ks->all = all;
	if (!block || !added || !all) {
		free(block);
		return -PT_ENOMEM;
	}
	ks->added[ks->nadded++] = block;
	p = stpcpy(block, module) + 1;
	for (i = 0; i < n; i++) {
		k = ks->nall++;
		ks->all[k] = (struct ksym){ .addr = syms[i].addr, .type = syms[i].type,
					    .name = p, .module = block, .cold = KSYMS_NONE };
		p = stpcpy(p, syms[i].name) + 1;
	}
	return index_syms(ks);
}

uint32_t ksyms_count(const struct ksyms *ks)
{
	return ks->ntext;
}

const struct ksym *ksyms_get(const struct ksyms *ks, uint32_t i)
{
	return i < ks->ntext ? &ks->text[i] : NULL;
}

int64_t ksyms_find(const struct ksyms *ks, const char *name, const char *module)
{
	uint32_t t = named_from(ks, *name_bucket(ks, name), name, module);

	if (t == KSYMS_NONE)
		return -PT_ENOENT;
	if (named_from(ks, ks->next[t], name, module) != KSYMS_NONE)
		return -PT_EINVAL;
	return t;
}

uint32_t ksyms_name_pos(const struct ksyms *ks, uint32_t i, uint32_t *same)
{
	uint32_t rank;

	*same = named_count(ks, ks->text[i].name, ks->text[i].module, i, &rank);
	return rank + 1;
}

uint64_t ksyms_addr(const struct ksyms *ks, const char *name)
{
	size_t i;

	for (i = 0; i < ks->nall; i++)	/* the first byte before strcmp: most differ there */
		if (ks->all[i].name[0] == name[0] && !ks->all[i].module &&
		    !strcmp(ks->all[i].name, name))
			return ks->all[i].addr;
	return 0;
}

const char *ksyms_name_at(const struct ksyms *ks, uint64_t addr)
{
	uint32_t lo = 0, hi = ks->ntext;

	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;

		if (ks->text[m].addr < addr)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < ks->ntext && ks->text[lo].addr == addr ? ks->text[lo].name : NULL;
}
