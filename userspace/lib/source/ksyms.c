// SPDX-License-Identifier: GPL-2.0
/* ksyms - /proc/kallsyms: text symbols with upper-bound sizes, .cold pairs. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/ksyms.h>

struct ksyms {
	struct ksym *all;	/* every symbol, sorted by address */
	size_t nall;
	struct ksym *text;	/* text symbols, sorted by address */
	uint32_t ntext;
	uint32_t *by_name;	/* text indices sorted by (name, module) */
	char **strs;		/* owned strings (names, module names) */
	size_t nstrs;
};

static int cmp_addr(const void *x, const void *y)
{
	const struct ksym *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static const struct ksyms *sort_ks;

static int modcmp(const char *a, const char *b)
{
	if (!a || !b)	/* vmlinux (NULL) sorts first */
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int cmp_name(const void *x, const void *y)
{
	const struct ksym *a = &sort_ks->text[*(const uint32_t *)x];
	const struct ksym *b = &sort_ks->text[*(const uint32_t *)y];
	int r = strcmp(a->name, b->name);

	if (!r)
		r = modcmp(a->module, b->module);
	if (!r)	/* same name and module: address order (text[] is sorted by address) */
		r = *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
	return r;
}

/* Text symbols; weak functions are W/w (tail calls name them too). */
static int is_text(char t)
{
	return t == 't' || t == 'T' || t == 'W' || t == 'w';
}

/* Range of by_name entries with name (and module, if any_module is 0). */
static void name_range(const struct ksyms *ks, const char *name, const char *module,
		       int any_module, uint32_t *lo, uint32_t *hi)
{
	uint32_t l = 0, h = ks->ntext;

	while (l < h) {
		uint32_t m = l + (h - l) / 2;
		const struct ksym *s = &ks->text[ks->by_name[m]];
		int r = strcmp(s->name, name);

		if (!r && !any_module)
			r = modcmp(s->module, module);
		if (r < 0)
			l = m + 1;
		else
			h = m;
	}
	*lo = l;
	while (l < ks->ntext) {
		const struct ksym *s = &ks->text[ks->by_name[l]];

		if (strcmp(s->name, name) || (!any_module && modcmp(s->module, module)))
			break;
		l++;
	}
	*hi = l;
}

/* Position of text index t among by_name[lo, hi). */
static uint32_t ks_rank(const struct ksyms *ks, uint32_t lo, uint32_t hi, uint32_t t)
{
	uint32_t k;

	for (k = lo; k < hi; k++)
		if (ks->by_name[k] == t)
			return k - lo;
	return 0;
}

static char *keep(struct ksyms *ks, const char *s, size_t *cap)
{
	char *d;

	if (ks->nstrs == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		char **n = realloc(ks->strs, nc * sizeof(*n));

		if (!n)
			return NULL;
		ks->strs = n;
		*cap = nc;
	}
	d = strdup(s);
	if (d)
		ks->strs[ks->nstrs++] = d;
	return d;
}

int ksyms_load(const char *path, struct ksyms **out)
{
	struct ksyms *ks;
	size_t cap = 0, scap = 0, i, nonzero = 0;
	char line[1024], name[512], mod[256];
	const char *lastmod = NULL;
	FILE *f;
	int err = -PT_ENOMEM;
	uint32_t t, lo, hi;

	*out = NULL;
	f = fopen(path, "r");
	if (!f)
		return -PT_EIO;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		goto out;
	while (fgets(line, sizeof(line), f)) {
		uint64_t addr;
		char type;
		int n;

		mod[0] = 0;
		n = sscanf(line, "%" SCNx64 " %c %511s [%255[^]]]", &addr, &type, name, mod);
		if (n < 3) {
			err = -PT_EFORMAT;
			goto out;
		}
		if (ks->nall == cap) {
			size_t nc = cap ? cap * 2 : 4096;
			struct ksym *a = realloc(ks->all, nc * sizeof(*a));

			if (!a)
				goto out;
			ks->all = a;
			cap = nc;
		}
		ks->all[ks->nall] = (struct ksym){ .addr = addr, .type = type, .cold = KSYMS_NONE };
		ks->all[ks->nall].name = keep(ks, name, &scap);
		if (!ks->all[ks->nall].name)
			goto out;
		if (mod[0]) {
			/* Module symbols come grouped: share the module string. */
			if (!lastmod || strcmp(lastmod, mod))
				lastmod = keep(ks, mod, &scap);
			if (!lastmod)
				goto out;
			ks->all[ks->nall].module = lastmod;
		}
		nonzero += addr != 0;
		ks->nall++;
	}
	if (ferror(f)) {
		err = -PT_EIO;
		goto out;
	}
	if (ks->nall && !nonzero) {
		err = -PT_ENOENT;
		goto out;
	}
	qsort(ks->all, ks->nall, sizeof(*ks->all), cmp_addr);
	/* Size: up to the next symbol at a higher address (an upper bound). */
	for (i = 0; i < ks->nall; i++) {
		size_t j = i + 1;

		while (j < ks->nall && ks->all[j].addr == ks->all[i].addr)
			j++;
		ks->all[i].size = j < ks->nall ? ks->all[j].addr - ks->all[i].addr : 0;
	}
	ks->text = malloc((ks->nall + 1) * sizeof(*ks->text));
	ks->by_name = malloc((ks->nall + 1) * sizeof(*ks->by_name));
	if (!ks->text || !ks->by_name)
		goto out;
	for (i = 0; i < ks->nall; i++)
		if (is_text(ks->all[i].type))
			ks->text[ks->ntext++] = ks->all[i];
	for (t = 0; t < ks->ntext; t++)
		ks->by_name[t] = t;
	sort_ks = ks;
	qsort(ks->by_name, ks->ntext, sizeof(*ks->by_name), cmp_name);
	sort_ks = NULL;
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
		uint32_t clo, chi, k;

		if (n < 6 || n - 5 >= sizeof(name) || strcmp(s->name + n - 5, ".cold"))
			continue;
		memcpy(name, s->name, n - 5);
		name[n - 5] = 0;
		name_range(ks, name, s->module, 0, &lo, &hi);
		name_range(ks, s->name, s->module, 0, &clo, &chi);
		if (hi - lo == chi - clo &&
		    ks->text[ks->by_name[lo + (ks_rank(ks, clo, chi, t))]].cold == KSYMS_NONE) {
			ks->text[ks->by_name[lo + ks_rank(ks, clo, chi, t)]].cold = t;
		} else if (chi - clo == 1) {
			/* One f.cold for several f: each gets it; only its owner reaches it. */
			for (k = lo; k < hi; k++)
				if (ks->text[ks->by_name[k]].cold == KSYMS_NONE)
					ks->text[ks->by_name[k]].cold = t;
		}
	}
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
	size_t i;

	if (!ks)
		return;
	for (i = 0; i < ks->nstrs; i++)
		free(ks->strs[i]);
	free(ks->strs);
	free(ks->all);
	free(ks->text);
	free(ks->by_name);
	free(ks);
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
	uint32_t lo, hi;

	name_range(ks, name, module, 0, &lo, &hi);
	if (lo == hi)
		return -PT_ENOENT;
	if (hi - lo > 1)
		return -PT_EINVAL;
	return ks->by_name[lo];
}

uint32_t ksyms_name_pos(const struct ksyms *ks, uint32_t i, uint32_t *same)
{
	uint32_t lo, hi;

	name_range(ks, ks->text[i].name, ks->text[i].module, 0, &lo, &hi);
	*same = hi - lo;
	return ks_rank(ks, lo, hi, i) + 1;
}

uint64_t ksyms_addr(const struct ksyms *ks, const char *name)
{
	size_t i;

	for (i = 0; i < ks->nall; i++)
		if (!ks->all[i].module && !strcmp(ks->all[i].name, name))
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
