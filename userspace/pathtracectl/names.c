// SPDX-License-Identifier: GPL-2.0
/* names - a function operand as a name or a glob (names.h). */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "names.h"

int ctl_is_glob(const char *pattern)
{
	return strpbrk(pattern, "*?[") != NULL;
}

int ctl_is_cold(const char *name)
{
	const char *d = strstr(name, ".cold");

	return d && (d[5] == 0 || d[5] == '.');
}

static int add(struct ctl_names *out, const char *name)
{
	if (out->n == out->cap) {
		uint32_t cap = out->cap ? 2 * out->cap : 64;
		const char **v = realloc(out->v, cap * sizeof(*v));

		if (!v)
			return -PT_ENOMEM;
		out->v = v;
		out->cap = cap;
	}
	out->v[out->n++] = name;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted, each name once. */
static void unique(struct ctl_names *out)
{
	uint32_t i, k = 0;

	qsort(out->v, out->n, sizeof(*out->v), cmp_name);
	for (i = 0; i < out->n; i++)
		if (!k || strcmp(out->v[k - 1], out->v[i]))
			out->v[k++] = out->v[i];
	out->n = k;
}

int ctl_names_elf(const struct elfobj *o, const char *pattern, struct ctl_names *out)
{
	uint32_t i;
	int err;

	memset(out, 0, sizeof(*out));
	if (!ctl_is_glob(pattern))
		return add(out, pattern);
	for (i = 0; i < elfobj_nfuncs(o); i++) {
		const struct elfobj_func *f = elfobj_func(o, i);

		if (f->parent != ELFOBJ_NONE || fnmatch(pattern, f->name, 0))
			continue;
		err = add(out, f->name);
		if (err)
			return err;
	}
	unique(out);
	return 0;
}

int ctl_names_live(const struct ksyms *ks, const char *pattern, const char *module,
		   struct ctl_names *out)
{
	uint32_t i, n = ksyms_count(ks);
	int err;

	memset(out, 0, sizeof(*out));
	if (!ctl_is_glob(pattern))
		return add(out, pattern);
	for (i = 0; i < n; i++) {
		const struct ksym *s = ksyms_get(ks, i);

		if ((s->type != 't' && s->type != 'T') || ctl_is_cold(s->name) ||
		    (module ? !s->module || strcmp(module, s->module) : s->module != NULL) ||
		    fnmatch(pattern, s->name, 0))
			continue;
		err = add(out, s->name);
		if (err)
			return err;
	}
	unique(out);
	return 0;
}

void ctl_names_free(struct ctl_names *names)
{
	free(names->v);
	memset(names, 0, sizeof(*names));
}
