// SPDX-License-Identifier: GPL-2.0
/* A `pathregen --paths` profile read back for planning; see path_profile.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/path_profile.h>

static int add_func(struct path_profile *p, const char *name, size_t len)
{
	struct path_profile_func *nf = realloc(p->funcs, (p->nfuncs + 1) * sizeof(*nf));

	if (!nf)
		return -PT_ENOMEM;
	p->funcs = nf;
	memset(&nf[p->nfuncs], 0, sizeof(nf[0]));
	nf[p->nfuncs].name = strndup(name, len);
	if (!nf[p->nfuncs].name)
		return -PT_ENOMEM;
	p->nfuncs++;
	return 0;
}

static int add_path(struct path_profile_func *f, uint64_t id, uint64_t count)
{
	uint64_t *np = realloc(f->paths, (f->npaths + 1) * sizeof(*np));
	uint64_t *nc;

	if (!np)
		return -PT_ENOMEM;
	f->paths = np;
	nc = realloc(f->counts, (f->npaths + 1) * sizeof(*nc));
	if (!nc)
		return -PT_ENOMEM;
	f->counts = nc;
	f->paths[f->npaths] = id;
	f->counts[f->npaths++] = count;
	return 0;
}

/* "COUNT  path ID:" -> count and id; 0 on success. */
static int path_line(const char *s, uint64_t *count, uint64_t *id)
{
	char *end;

	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	*count = strtoull(s, &end, 10);
	if (strncmp(end, "  path ", 7))
		return -1;
	s = end + 7;
	if (*s < '0' || *s > '9')
		return -1;
	*id = strtoull(s, &end, 10);
	return *end == ':' ? 0 : -1;
}

int path_profile_read(FILE *fp, struct path_profile *p, uint32_t *line)
{
	char buf[4096];
	int err = 0;

	memset(p, 0, sizeof(*p));
	*line = 0;
	while (fgets(buf, sizeof(buf), fp)) {
		const char *h;
		uint64_t count, id;
		size_t n = strlen(buf);

		++*line;
		if (n && buf[n - 1] != '\n' && !feof(fp))
			return -PT_EFORMAT;	/* a line this long is no profile line */
		if (buf[0] == '#' || buf[0] == '\n' || !buf[0])
			continue;
		if (buf[0] != ' ') {
			h = strstr(buf, " (func ");
			if (!h || h == buf)
				return -PT_EFORMAT;
			err = add_func(p, buf, (size_t)(h - buf));
		} else if (!path_line(buf, &count, &id) && p->nfuncs) {
			err = add_path(&p->funcs[p->nfuncs - 1], id, count);
		} else {
			return -PT_EFORMAT;
		}
		if (err)
			return err;
	}
	return 0;
}

const struct path_profile_func *path_profile_find(const struct path_profile *p, const char *name)
{
	uint32_t i;

	for (i = 0; i < p->nfuncs; i++)
		if (!strcmp(p->funcs[i].name, name))
			return &p->funcs[i];
	return NULL;
}

void path_profile_free(struct path_profile *p)
{
	uint32_t i;

	for (i = 0; i < p->nfuncs; i++) {
		free(p->funcs[i].name);
		free(p->funcs[i].paths);
		free(p->funcs[i].counts);
	}
	free(p->funcs);
	memset(p, 0, sizeof(*p));
}
