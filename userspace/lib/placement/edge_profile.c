// SPDX-License-Identifier: GPL-2.0
/* Measured edge profiles as planning weights; see edge_profile.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/edge_profile.h>
#include <pathtrace/error.h>
#include <pathtrace/weight.h>

/* "NAME+0xOFF" or "NAME.cold+0xOFF" for function name (len n). Returns 0 or -PT_EFORMAT. */
static int parse_place(const char *s, const char *name, size_t n, uint64_t *off, uint8_t *cold)
{
	char *end;

	if (strncmp(s, name, n))
		return -PT_EFORMAT;
	s += n;
	*cold = !strncmp(s, ".cold", 5);
	if (*cold)
		s += 5;
	if (strncmp(s, "+0x", 3))
		return -PT_EFORMAT;
	*off = strtoull(s + 3, &end, 16);
	return *end ? -PT_EFORMAT : 0;
}

static int parse_kind(const char *s, uint8_t *kind)
{
	uint32_t k;

	for (k = 0; strcmp(cfg_edge_kind_name(k), "?"); k++) {
		if (!strcmp(cfg_edge_kind_name(k), s)) {
			*kind = (uint8_t)k;
			return 0;
		}
	}
	return -PT_EFORMAT;
}

/* Room for one more element in *arr (n used of *cap). Returns 0 or -PT_ENOMEM. */
static int room(void **arr, uint32_t n, uint32_t *cap, size_t size)
{
	uint32_t c = *cap ? *cap * 2 : 16;
	void *na;

	if (n < *cap)
		return 0;
	na = realloc(*arr, c * size);
	if (!na)
		return -PT_ENOMEM;
	*arr = na;
	*cap = c;
	return 0;
}

/* One edge line of function f. Returns 0, -PT_EFORMAT, -PT_ENOMEM. */
static int parse_edge(char *l, struct edge_profile_func *f, uint32_t *cap)
{
	char src[256], dst[256], kind[32];
	struct edge_profile_edge e;
	size_t n = strlen(f->name);
	unsigned long long count;

	memset(&e, 0, sizeof(e));
	if (sscanf(l, " %llu %255s -> %255s (%31[a-z-])", &count, src, dst, kind) != 4)
		return -PT_EFORMAT;
	e.count = count;
	if (parse_place(src, f->name, n, &e.src_off, &e.src_cold) || parse_kind(kind, &e.kind))
		return -PT_EFORMAT;
	if (!strcmp(dst, "EXIT"))
		e.dst_exit = 1;
	else if (parse_place(dst, f->name, n, &e.dst_off, &e.dst_cold))
		return -PT_EFORMAT;
	if (room((void **)&f->edges, f->nedges, cap, sizeof(*f->edges)))
		return -PT_ENOMEM;
	f->edges[f->nedges++] = e;
	return 0;
}

/* A heading "NAME (func ID): N activations...": starts a function. 0, -PT_EFORMAT, -PT_ENOMEM. */
static int parse_heading(const char *l, struct edge_profile *p, uint32_t *cap)
{
	const char *par = strstr(l, " (func ");
	struct edge_profile_func *f;

	if (!par || par == l || !strstr(par, "): "))
		return -PT_EFORMAT;
	if (room((void **)&p->funcs, p->nfuncs, cap, sizeof(*p->funcs)))
		return -PT_ENOMEM;
	f = &p->funcs[p->nfuncs];
	memset(f, 0, sizeof(*f));
	f->name = strndup(l, (size_t)(par - l));
	if (!f->name)
		return -PT_ENOMEM;
	p->nfuncs++;
	return 0;
}

int edge_profile_read(FILE *fp, struct edge_profile *p, uint32_t *line)
{
	char buf[1024];
	uint32_t fcap = 0, ecap = 0, n = 0;
	int err;

	memset(p, 0, sizeof(*p));
	while (fgets(buf, sizeof(buf), fp)) {
		size_t len = strlen(buf);

		n++;
		if (len && buf[len - 1] == '\n')
			buf[--len] = 0;
		else if (!feof(fp))
			goto bad;	/* a line longer than any the writer makes */
		if (!len || buf[0] == '#')
			continue;
		if (buf[0] == ' ') {
			err = p->nfuncs ? parse_edge(buf, &p->funcs[p->nfuncs - 1], &ecap) :
					  -PT_EFORMAT;
		} else {
			err = parse_heading(buf, p, &fcap);
			ecap = 0;
		}
		if (err == -PT_ENOMEM)
			return err;
		if (err)
			goto bad;
	}
	return 0;
bad:
	if (line)
		*line = n;
	return -PT_EFORMAT;
}

static uint64_t block_off(const struct cfg *c, uint32_t b, uint8_t *cold)
{
	const struct cfg_block *bl = &c->blocks[b];

	*cold = (bl->flags & CFG_BF_COLD) && c->cold_addr && bl->addr >= c->cold_addr;
	return bl->addr - (*cold ? c->cold_addr : c->addr);
}

/* Whether profile edge pe is c's edge e. */
static int same_edge(const struct cfg *c, uint32_t e, const struct edge_profile_edge *pe)
{
	const struct cfg_edge *ce = &c->edges[e];
	uint8_t cold;

	if (ce->kind != pe->kind || block_off(c, ce->src, &cold) != pe->src_off ||
	    cold != pe->src_cold)
		return 0;
	if (ce->dst >= c->nblocks)
		return pe->dst_exit;
	return !pe->dst_exit && block_off(c, ce->dst, &cold) == pe->dst_off && cold == pe->dst_cold;
}

int edge_profile_weights(const struct edge_profile *p, const struct cfg *c, uint64_t *weight)
{
	uint32_t i, e;

	for (i = 0; i < p->nfuncs; i++) {
		const struct edge_profile_func *f = &p->funcs[i];

		if (strcmp(f->name, c->name) || f->nedges != c->nedges)
			continue;
		/* the writer lists a function's edges in CFG order */
		for (e = 0; e < c->nedges && same_edge(c, e, &f->edges[e]); e++)
			weight[e] = f->edges[e].count > WEIGHT_MAX / WEIGHT_ONE ? WEIGHT_MAX :
				    f->edges[e].count * WEIGHT_ONE;
		if (e == c->nedges)
			return 0;
	}
	return -PT_ENOENT;
}

void edge_profile_free(struct edge_profile *p)
{
	uint32_t i;

	for (i = 0; i < p->nfuncs; i++) {
		free(p->funcs[i].name);
		free(p->funcs[i].edges);
	}
	free(p->funcs);
	memset(p, 0, sizeof(*p));
}
