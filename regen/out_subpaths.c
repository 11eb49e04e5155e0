// SPDX-License-Identifier: GPL-2.0
/*
 * out_subpaths - --subpaths: online subpath profiling (OSP, Oren 2002) over
 * the regenerated execution. A subpath is any run of L consecutive blocks
 * of one stream (across calls and returns, never across a gap), L a power
 * of two from 2 to max_len. The sampler and the hot list are the module's
 * (trace-format/coder/osp_core.h), over blocks instead of path ends: a
 * block position starts a sample with probability 2^-tau_log2 and a length
 * drawn uniformly; the hot list keeps at most `memory` subpaths as concise
 * samples (Gibbons and Matias): when it is full, tau_log2 grows by one and
 * every count is thinned to a binomial half, so memory stays bounded and
 * the list stays a uniform sample of everything seen so far. A subpath's
 * estimated count is its sample count times 2^tau_log2 times the number of
 * lengths, with a standard error of the square root of that count times
 * the same scale (the binomial sample's; the paper bounds it with
 * Chernoff).
 *
 * --subpaths --exact counts every candidate instead (memory grows with the
 * distinct subpaths): the oracle the estimates are tested against. A
 * subpath's id is its osp_hash() in both.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "coder/osp_core.h"
#include "out.h"

#define SP_SHOW 6		/* blocks of a subpath printed */

struct sp_block {
	uint32_t func, block;
};

struct sp_entry {
	uint64_t id;		/* osp_hash() of the blocks (1 if 0); 0: empty slot */
	uint64_t count;
	uint32_t len;
	struct sp_block first[SP_SHOW];
};

struct subpaths {
	struct osp *osp;	/* sampled: the hot list */
	struct sp_entry *tab;	/* exact: open addressing */
	uint64_t cap, used;
	uint32_t *wfunc;	/* exact: the last max_len blocks, oldest first */
	uint64_t *wblock;
	uint32_t nwin;
	uint64_t positions;
	int exact;
	uint32_t memory, max_len;
};

static uint64_t sp_id(const uint32_t *func, const uint64_t *block, uint32_t len)
{
	uint64_t id = osp_hash(func, block, len);

	return id ? id : 1;
}

static void sp_first(struct sp_block *first, const uint32_t *func, const uint64_t *block,
		     uint32_t len)
{
	uint32_t k;

	memset(first, 0, SP_SHOW * sizeof(*first));
	for (k = 0; k < len && k < SP_SHOW; k++) {
		first[k].func = func[k];
		first[k].block = (uint32_t)block[k];
	}
}

static struct sp_entry *sp_find(struct subpaths *s, uint64_t id)
{
	uint64_t i;

	for (i = id & (s->cap - 1); s->tab[i].id; i = (i + 1) & (s->cap - 1))
		if (s->tab[i].id == id)
			return &s->tab[i];
	return &s->tab[i];
}

static int sp_grow(struct subpaths *s)
{
	struct sp_entry *old = s->tab;
	uint64_t n = s->cap, i;

	s->cap = s->cap ? s->cap * 2 : 1024;
	s->tab = calloc(s->cap, sizeof(*s->tab));
	if (!s->tab)
		return -PT_ENOMEM;
	for (i = 0; i < n; i++)
		if (old[i].id)
			*sp_find(s, old[i].id) = old[i];
	free(old);
	return 0;
}

/* Exact: one more occurrence of the subpath of len blocks. */
static int sp_add(struct subpaths *s, const uint32_t *func, const uint64_t *block, uint32_t len)
{
	uint64_t id = sp_id(func, block, len);
	struct sp_entry *e;
	int err;

	if ((s->used + 1) * 2 > s->cap) {
		err = sp_grow(s);
		if (err)
			return err;
	}
	e = sp_find(s, id);
	if (!e->id) {
		e->id = id;
		e->len = len;
		sp_first(e->first, func, block, len);
		s->used++;
	}
	e->count++;
	return 0;
}

static int subpaths_open(struct out_writer *w)
{
	struct subpaths *s = calloc(1, sizeof(*s));
	size_t size;

	if (!s)
		return -PT_ENOMEM;
	w->priv = s;
	s->exact = w->sp_exact;
	s->memory = w->sp_memory ? w->sp_memory : 2048;
	s->max_len = w->sp_max_len ? w->sp_max_len : 64;
	if (s->exact) {
		s->wfunc = calloc(s->max_len, sizeof(*s->wfunc));
		s->wblock = calloc(s->max_len, sizeof(*s->wblock));
		if (!s->wfunc || !s->wblock)
			return -PT_ENOMEM;
		return sp_grow(s);
	}
	size = osp_size(s->memory, s->max_len, 1);
	if (!size)
		return -PT_EINVAL;
	s->osp = malloc(size);
	if (!s->osp)
		return -PT_ENOMEM;
	osp_init(s->osp, s->memory, s->max_len, 1, w->sp_seed ? w->sp_seed : 0x9e3779b97f4a7c15ull);
	return 0;
}

/* The stream or a gap cuts every subpath in progress. */
static void sp_cut(struct subpaths *s)
{
	if (s->osp)
		osp_cut(s->osp, 0);
	s->nwin = 0;
}

/* Exact: every candidate ending at this block. */
static int sp_exact_block(struct subpaths *s, uint32_t func, uint32_t block)
{
	uint32_t len;
	int err;

	if (s->nwin == s->max_len) {
		memmove(s->wfunc, s->wfunc + 1, (s->max_len - 1) * sizeof(*s->wfunc));
		memmove(s->wblock, s->wblock + 1, (s->max_len - 1) * sizeof(*s->wblock));
		s->nwin--;
	}
	s->wfunc[s->nwin] = func;
	s->wblock[s->nwin++] = block;
	for (len = 2; len <= s->nwin; len *= 2) {
		err = sp_add(s, s->wfunc + s->nwin - len, s->wblock + s->nwin - len, len);
		if (err)
			return err;
	}
	return 0;
}

static int subpaths_step(struct out_writer *w, const struct out_stream *st,
			 const struct out_step *sp)
{
	struct subpaths *s = w->priv;

	(void)st;
	switch (sp->ev->type) {
	case REGEN_EV_BLOCK:
		if (!sp->f)
			return 0;
		s->positions++;
		if (s->exact)
			return sp_exact_block(s, sp->f->func_id, sp->ev->block);
		osp_add(s->osp, 0, 0, sp->f->func_id, sp->ev->block);	/* 0: one context */
		return 0;
	case REGEN_EV_GAP:
	case REGEN_EV_RESYNC:
	case REGEN_EV_TRUNCATED:
	case REGEN_EV_REPLACED:
		sp_cut(s);
		return 0;
	default:
		return 0;
	}
}

static int subpaths_stream_end(struct out_writer *w, const struct out_stream *st)
{
	(void)st;
	sp_cut(w->priv);
	return 0;
}

static int cmp_count_desc(const void *a, const void *b)
{
	const struct sp_entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static uint64_t sp_entries(const struct subpaths *s)
{
	return s->exact ? s->used : s->osp->used;
}

/* Every subpath the writer holds, hottest first (malloc'd, *n of them), or NULL. */
static struct sp_entry *sp_sorted(const struct subpaths *s, uint64_t *n)
{
	struct sp_entry *all = malloc((sp_entries(s) + 1) * sizeof(*all));
	struct osp_subpath sp;
	uint64_t i;

	*n = 0;
	if (!all)
		return NULL;
	for (i = 0; s->exact && i < s->cap; i++)
		if (s->tab[i].id)
			all[(*n)++] = s->tab[i];
	for (i = 0; !s->exact && i < s->osp->used; i++) {
		osp_get(s->osp, (uint32_t)i, &sp);
		all[*n].id = sp_id(sp.func, sp.val, sp.len);
		all[*n].count = sp.count;
		all[*n].len = sp.len;
		sp_first(all[(*n)++].first, sp.func, sp.val, sp.len);
	}
	qsort(all, *n, sizeof(*all), cmp_count_desc);
	return all;
}

static void sp_top(const struct subpaths *s, const struct sp_entry *e, struct out_subpath *out)
{
	out->id = e->id;
	out->len = e->len;
	out->sampled = e->count;
	if (s->exact) {
		out->estimate = (double)e->count;
		out->stderr_est = 0.0;
	} else {
		out->estimate = (double)osp_estimate(e->count, s->osp->tau_log2, s->osp->nlens);
		out->stderr_est = (double)osp_stderr(e->count, s->osp->tau_log2, s->osp->nlens);
	}
	out->first_func = e->first[0].func;
	out->first_block = e->first[0].block;
}

int out_subpaths_top(const struct out_writer *w, struct out_subpath *out, unsigned int k)
{
	const struct subpaths *s = w->priv;
	struct sp_entry *all;
	uint64_t i, n;

	if (!s)
		return 0;
	all = sp_sorted(s, &n);
	if (!all)
		return -PT_ENOMEM;
	for (i = 0; i < n && i < k; i++)
		sp_top(s, &all[i], &out[i]);
	free(all);
	return (int)i;
}

uint64_t out_subpaths_count(const struct out_writer *w, uint64_t id)
{
	struct subpaths *s = w->priv;
	struct osp_subpath sp;
	uint32_t i;

	if (!s || !id)
		return 0;
	if (s->exact)
		return sp_find(s, id)->count;	/* 0 in an empty slot */
	for (i = 0; i < s->osp->used; i++) {
		osp_get(s->osp, i, &sp);
		if (sp_id(sp.func, sp.val, sp.len) == id)
			return sp.count;
	}
	return 0;
}

uint64_t out_subpaths_entries(const struct out_writer *w)
{
	const struct subpaths *s = w->priv;

	return s ? sp_entries(s) : 0;
}

static int subpaths_close(struct out_writer *w)
{
	struct subpaths *s = w->priv;
	unsigned int k = w->top ? w->top : 10, j;
	struct sp_entry *all = NULL;
	struct out_subpath top;
	uint64_t i, n = 0;
	char buf[192];
	int err = 0;

	if (!s)
		return 0;
	if (s->exact ? !s->tab : !s->osp)	/* open failed */
		goto out;
	all = sp_sorted(s, &n);
	if (!all)
		err = -PT_ENOMEM;
	if (!err && s->exact)
		fprintf(w->fp, "# subpaths (exact): %" PRIu64 " block positions, %" PRIu64
			" distinct subpaths of lengths 2..%u, hottest first\n", s->positions, s->used,
			s->max_len);
	else if (!err)
		fprintf(w->fp, "# online subpath profile (OSP): %" PRIu64 " block positions, lengths "
			"2..%u, hot list of at most %u subpaths (%u now), sampling 1 in %.1f "
			"after %u resamplings; estimated counts with their standard error\n",
			s->positions, s->max_len, s->memory, s->osp->used,
			ldexp(1.0, (int)s->osp->tau_log2), s->osp->tau_log2);
	for (i = 0; !err && i < n && i < k; i++) {
		const struct sp_entry *e = &all[i];

		sp_top(s, e, &top);
		if (s->exact)
			fprintf(w->fp, "%12" PRIu64 "  length %3u:", top.sampled, top.len);
		else
			fprintf(w->fp, "%12.0f  +-%-8.0f length %3u:", top.estimate, top.stderr_est,
				top.len);
		for (j = 0; j < SP_SHOW && j < e->len; j++) {
			const struct pr_func *f = pr_model_func(w->m, e->first[j].func);

			fprintf(w->fp, " %s", f ? pr_block_name(f, e->first[j].block, buf, sizeof(buf)) :
				"?");
		}
		fprintf(w->fp, "%s\n", e->len > SP_SHOW ? " ..." : "");
	}
	err = err ?: (ferror(w->fp) ? -PT_EIO : 0);
out:
	free(all);
	free(s->osp);
	free(s->tab);
	free(s->wfunc);
	free(s->wblock);
	free(s);
	w->priv = NULL;
	return err;
}

const struct out_writer_ops out_subpaths_ops = {
	.name = "subpaths",
	.open = subpaths_open,
	.step = subpaths_step,
	.stream_end = subpaths_stream_end,
	.close = subpaths_close,
};
