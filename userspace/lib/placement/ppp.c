// SPDX-License-Identifier: GPL-2.0
/* Preferential path profiling (POPL 2007, Fig. 10); see ppp.h. */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/ppp.h>

#include "path_likely_internal.h"

struct ipath {
	uint32_t *edges;	/* DAG edges from ENTRY to EXIT */
	uint64_t *prefix;	/* per position: BL sum of the edges before it */
	uint32_t len;
};

struct prefix_cis {
	uint64_t key;
	int64_t cis;
	int64_t min;		/* scratch: min pid over (e, q) */
	int64_t max;		/* scratch: max pid over (e, q) */
	int seen;
};

void ppp_free(struct ppp *pp)
{
	free(pp->bl);
	free(pp->id);
	free(pp->w);
	free(pp->inc);
	free(pp->slot_bl);
	memset(pp, 0, sizeof(*pp));
}

/* Position of DAG edge e on path p, or -1. */
static int64_t pos_of(const struct ipath *p, uint32_t e)
{
	uint32_t i;

	for (i = 0; i < p->len; i++)
		if (p->edges[i] == e)
			return i;
	return -1;
}

static struct prefix_cis *find(struct prefix_cis *t, uint32_t *nt, uint64_t key)
{
	uint32_t i;

	for (i = 0; i < *nt; i++)
		if (t[i].key == key)
			return &t[i];
	memset(&t[*nt], 0, sizeof(t[*nt]));
	t[*nt].key = key;
	return &t[(*nt)++];
}

/* W moved onto the pathnum's chords: potentials over its spanning tree. */
static int chord_increments(struct ppp *pp)
{
	const struct pathnum *pn = pp->pn;
	const struct graph *d = &pn->dag;
	int64_t *phi = calloc((size_t)d->nv + 1, sizeof(*phi));
	uint8_t *seen = calloc((size_t)d->nv + 1, 1);
	uint32_t *q = malloc(((size_t)d->nv + 1) * sizeof(*q));
	uint32_t r, h, t, k, e;

	if (!phi || !seen || !q) {
		free(phi);
		free(seen);
		free(q);
		return -PT_ENOMEM;
	}
	for (r = 0; r <= d->nv; r++) {
		uint32_t root = r ? r - 1 : d->entry;

		if (seen[root])
			continue;
		seen[root] = 1;
		h = t = 0;
		q[t++] = root;
		while (h < t) {
			uint32_t v = q[h++];

			if (v == d->entry && !seen[d->exit]) {
				seen[d->exit] = 1;
				phi[d->exit] = phi[v];
				q[t++] = d->exit;
			} else if (v == d->exit && !seen[d->entry]) {
				seen[d->entry] = 1;
				phi[d->entry] = phi[v];
				q[t++] = d->entry;
			}
			for (k = d->out_start[v]; k < d->out_start[v + 1]; k++) {
				e = d->out_edges[k];
				if (!pn->chord[e] && !seen[d->edges[e].dst]) {
					seen[d->edges[e].dst] = 1;
					phi[d->edges[e].dst] = phi[v] + pp->w[e];
					q[t++] = d->edges[e].dst;
				}
			}
			for (k = d->in_start[v]; k < d->in_start[v + 1]; k++) {
				e = d->in_edges[k];
				if (!pn->chord[e] && !seen[d->edges[e].src]) {
					seen[d->edges[e].src] = 1;
					phi[d->edges[e].src] = phi[v] - pp->w[e];
					q[t++] = d->edges[e].src;
				}
			}
		}
	}
	for (e = 0; e < d->ne; e++)
		pp->inc[e] = pn->chord[e] ?
			(int64_t)((uint64_t)pp->w[e] + (uint64_t)phi[d->edges[e].src] -
				  (uint64_t)phi[d->edges[e].dst]) : 0;
	free(phi);
	free(seen);
	free(q);
	return 0;
}

int ppp_build(struct ppp *pp, const struct pathnum *pn, const uint64_t *bl, uint32_t n)
{
	const struct graph *d = &pn->dag;
	struct ipath *ip = NULL;
	struct prefix_cis *tab = NULL;
	uint32_t *order = NULL, i, j, k;
	uint64_t span;
	int err = 0;

	memset(pp, 0, sizeof(*pp));
	pp->pn = pn;
	if (!n)
		return -PT_EINVAL;
	pp->n = n;
	pp->bl = malloc(n * sizeof(*pp->bl));
	pp->id = calloc(n, sizeof(*pp->id));
	pp->w = calloc((size_t)d->ne + 1, sizeof(*pp->w));
	pp->inc = calloc((size_t)d->ne + 1, sizeof(*pp->inc));
	ip = calloc(n, sizeof(*ip));
	tab = calloc(n + 1, sizeof(*tab));
	order = malloc(((size_t)d->nv + 1) * sizeof(*order));
	if (!pp->bl || !pp->id || !pp->w || !pp->inc || !ip || !tab || !order) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		int len;

		for (j = 0; j < i; j++)
			if (bl[j] == bl[i]) {
				err = -PT_EINVAL;
				goto out;
			}
		pp->bl[i] = bl[i];
		ip[i].edges = malloc(((size_t)d->nv + 1) * sizeof(*ip[i].edges));
		ip[i].prefix = malloc(((size_t)d->nv + 1) * sizeof(*ip[i].prefix));
		if (!ip[i].edges || !ip[i].prefix) {
			err = -PT_ENOMEM;
			goto out;
		}
		len = pathnum_decode(pn, bl[i], ip[i].edges, d->nv + 1);
		if (len < 0) {
			err = len == -PT_EINVAL ? -PT_EINVAL : len;
			goto out;
		}
		ip[i].len = len;
		for (k = 0, span = 0; k < ip[i].len; k++) {
			ip[i].prefix[k] = span;
			span += pn->val[ip[i].edges[k]];
		}
	}
	err = path_likely_topo(d, order);
	if (err)
		goto out;
	/* Figure 10: nodes in reverse topological order. */
	for (k = d->nv; k-- > 0;) {
		uint32_t v = order[k], ntab = 0, o;

		for (o = d->out_start[v]; o < d->out_start[v + 1]; o++) {
			uint32_t e = d->out_edges[o];
			int any = 0, have_w = 0;
			int64_t w = 0;

			for (j = 0; j < ntab; j++)
				tab[j].seen = 0;
			/* min and max pid per prefix q over the paths through e */
			for (i = 0; i < n; i++) {
				int64_t at = pos_of(&ip[i], e);
				struct prefix_cis *q;

				if (at < 0)
					continue;
				q = find(tab, &ntab, ip[i].prefix[at]);
				if (!q->seen || pp->id[i] < q->min)
					q->min = pp->id[i];
				q->seen = 1;
				any = 1;
			}
			if (!any)
				continue;	/* W(e) stays 0 */
			for (j = 0; j < ntab; j++) {
				int64_t wq;

				if (!tab[j].seen)
					continue;
				if (__builtin_sub_overflow(tab[j].cis, tab[j].min, &wq)) {
					err = -PT_EOVERFLOW;
					goto out;
				}
				if (!have_w || wq > w)	/* the join */
					w = wq;
				have_w = 1;
			}
			pp->w[e] = w;
			for (j = 0; j < ntab; j++)
				tab[j].seen = 0;
			for (i = 0; i < n; i++) {
				int64_t at = pos_of(&ip[i], e);
				struct prefix_cis *q;

				if (at < 0)
					continue;
				if (__builtin_add_overflow(pp->id[i], w, &pp->id[i])) {
					err = -PT_EOVERFLOW;
					goto out;
				}
				q = find(tab, &ntab, ip[i].prefix[at]);
				if (!q->seen || pp->id[i] > q->max)
					q->max = pp->id[i];
				q->seen = 1;
			}
			for (j = 0; j < ntab; j++)
				if (tab[j].seen)
					tab[j].cis = tab[j].max + 1;
		}
	}
	pp->min_id = pp->max_id = pp->id[0];
	for (i = 1; i < n; i++) {
		if (pp->id[i] < pp->min_id)
			pp->min_id = pp->id[i];
		if (pp->id[i] > pp->max_id)
			pp->max_id = pp->id[i];
	}
	span = (uint64_t)(pp->max_id - pp->min_id) + 1;
	pp->gamma = (double)span / n;
	if (span > (uint64_t)n * 1024 + 1024) {
		err = -PT_EOVERFLOW;	/* no sensible array: refuse, do not truncate */
		goto out;
	}
	pp->slot_bl = malloc(span * sizeof(*pp->slot_bl));
	if (!pp->slot_bl) {
		err = -PT_ENOMEM;
		goto out;
	}
	memset(pp->slot_bl, 0xff, span * sizeof(*pp->slot_bl));
	for (i = 0; i < n; i++)
		pp->slot_bl[pp->id[i] - pp->min_id] = pp->bl[i];
	err = chord_increments(pp);
out:
	for (i = 0; ip && i < n; i++) {
		free(ip[i].edges);
		free(ip[i].prefix);
	}
	free(ip);
	free(tab);
	free(order);
	if (err) {
		ppp_free(pp);
		pp->pn = pn;
	}
	return err;
}

int64_t ppp_path_id(const struct ppp *pp, const uint32_t *edges, uint32_t n)
{
	uint64_t s = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		s += (uint64_t)pp->w[edges[i]];
	return (int64_t)s;
}

int64_t ppp_classify(const struct ppp *pp, int64_t id, uint64_t bl)
{
	uint32_t i;

	if (id < pp->min_id || id > pp->max_id || pp->slot_bl[id - pp->min_id] != bl)
		return -1;
	for (i = 0; i < pp->n; i++)
		if (pp->bl[i] == bl)
			return i;
	return -1;
}

int ppp_hottest(const struct pathnum *pn, const uint64_t *cfg_weight, uint32_t k, uint64_t *bl,
		uint32_t *n)
{
	const struct graph *d = &pn->dag;
	struct path_likely pl = { 0 };
	double *w;
	uint32_t i;
	int err;

	*n = 0;
	if (!k)
		return -PT_EINVAL;
	if (k > PPP_HOTTEST_MAX)
		k = PPP_HOTTEST_MAX;
	w = calloc((size_t)d->ne + 1, sizeof(*w));
	if (!w)
		return -PT_ENOMEM;
	path_likely_dag_weights(pn, cfg_weight, w);
	err = path_likely_build(&pl, pn, w, k);
	for (i = 0; !err && i < pl.len[d->entry]; i++)
		bl[(*n)++] = path_likely_val(&pl, pn, d->entry, i);
	path_likely_free(&pl);
	free(w);
	return err;
}
