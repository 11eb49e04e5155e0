// SPDX-License-Identifier: GPL-2.0
/*
 * out_subpaths - --subpaths: online subpath profiling (OSP, Oren 2002) over
 * the regenerated execution. A subpath is any run of L consecutive blocks
 * of one stream (across calls and returns, never across a gap), L a power
 * of two from 2 to max_len. Every block position starts one candidate of a
 * length drawn uniformly; a candidate is sampled with probability 1/tau
 * (a geometric skip between samples), and the sample is kept as a hot list
 * of (subpath, count) pairs, the concise samples of Gibbons and Matias:
 * when it holds more than `memory` subpaths, tau grows by a tenth and
 * every count is thinned (each sampled occurrence stays with probability
 * tau_old / tau_new), so memory stays bounded and the list stays a uniform
 * sample of everything seen so far. A subpath's estimated count is its
 * sample count times tau times the number of lengths, with a standard
 * error of the square root of that times tau times the number of lengths
 * (the binomial sample's; the paper bounds it with Chernoff).
 *
 * --subpaths --exact counts every candidate instead (memory grows with the
 * distinct subpaths): the oracle the estimates are tested against.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "out.h"

#define SP_SHOW 6		/* blocks of a subpath printed */

struct sp_block {
	uint32_t func, block;
};

struct sp_entry {
	uint64_t id;		/* hash of the blocks and the length; 0: empty slot */
	uint64_t count;
	uint32_t len;
	struct sp_block first[SP_SHOW];
};

struct sp_active {
	uint64_t id;
	uint32_t left, len, n;
	struct sp_block first[SP_SHOW];
};

struct subpaths {
	struct sp_entry *tab;	/* open addressing */
	uint64_t cap, used;
	double tau;		/* 1 / sampling probability */
	uint64_t skip;		/* block positions until the next sample */
	uint64_t rng;
	uint32_t nlens;		/* lengths 2, 4, .. max_len */
	struct sp_active *act;	/* samples being collected */
	uint32_t nact;
	struct sp_block *win;	/* exact: the last max_len blocks */
	uint64_t nwin;
	uint64_t positions, samples, resamples;
	int exact;
	uint32_t memory, max_len;
};

static uint64_t sp_rand(struct subpaths *s)
{
	uint64_t x = s->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	s->rng = x;
	return x;
}

static double sp_unit(struct subpaths *s)
{
	return ((sp_rand(s) >> 11) + 0.5) / 9007199254740992.0;	/* (0, 1) */
}

/* Positions to skip before the next sample: geometric with p = 1 / tau. */
static uint64_t sp_skip(struct subpaths *s)
{
	if (s->tau <= 1.0)
		return 0;
	return (uint64_t)floor(log(sp_unit(s)) / log(1.0 - 1.0 / s->tau));
}

static uint64_t sp_hash(uint64_t h, uint32_t func, uint32_t block)
{
	h ^= ((uint64_t)func << 32) | block;
	h *= 0x100000001b3ull;
	return h ^ (h >> 29);
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

/* Binomial thinning of every count to keep memory entries: tau grows. */
static void sp_resample(struct subpaths *s)
{
	uint64_t i, kept = 0, k, c;
	double keep;

	while (s->used > s->memory) {
		s->tau *= 1.1;
		keep = 1.0 / 1.1;
		s->resamples++;
		for (i = 0; i < s->cap; i++) {
			if (!s->tab[i].id)
				continue;
			for (k = 0, c = 0; k < s->tab[i].count; k++)
				c += sp_unit(s) < keep;
			s->tab[i].count = c;
		}
		/* rebuild without the emptied entries (probe chains stay whole) */
		kept = 0;
		for (i = 0; i < s->cap; i++)
			kept += s->tab[i].id && s->tab[i].count;
		if (kept < s->used) {
			struct sp_entry *old = s->tab;

			s->tab = calloc(s->cap, sizeof(*s->tab));
			if (!s->tab) {
				s->tab = old;
				return;
			}
			for (i = 0; i < s->cap; i++)
				if (old[i].id && old[i].count)
					*sp_find(s, old[i].id) = old[i];
			free(old);
			s->used = kept;
		}
	}
}

static int sp_add(struct subpaths *s, uint64_t id, uint32_t len, const struct sp_block *first)
{
	struct sp_entry *e;
	int err;

	if (!id)
		id = 1;
	if ((s->used + 1) * 2 > s->cap) {
		err = sp_grow(s);
		if (err)
			return err;
	}
	e = sp_find(s, id);
	if (!e->id) {
		e->id = id;
		e->len = len;
		memcpy(e->first, first, sizeof(e->first));
		s->used++;
	}
	e->count++;
	if (!s->exact && s->used > s->memory)
		sp_resample(s);
	return 0;
}

static int subpaths_open(struct out_writer *w)
{
	struct subpaths *s = calloc(1, sizeof(*s));
	uint32_t l;

	if (!s)
		return -PT_ENOMEM;
	w->priv = s;
	s->exact = w->sp_exact;
	s->memory = w->sp_memory ? w->sp_memory : 2048;
	s->max_len = w->sp_max_len ? w->sp_max_len : 64;
	for (l = 2; l <= s->max_len; l *= 2)
		s->nlens++;
	s->tau = 1.0;
	s->rng = w->sp_seed ? w->sp_seed : 0x9e3779b97f4a7c15ull;
	s->act = calloc(s->max_len + 1, sizeof(*s->act));
	s->win = calloc(s->max_len + 1, sizeof(*s->win));
	if (!s->act || !s->win)
		return -PT_ENOMEM;
	return sp_grow(s);
}

/* The stream or a gap cuts every subpath in progress. */
static void sp_cut(struct subpaths *s)
{
	s->nact = 0;
	s->nwin = 0;
}

/* Exact: every candidate ending at this block. */
static int sp_exact_block(struct subpaths *s, struct sp_block b)
{
	uint32_t len, k;
	int err;

	memmove(s->win + 1, s->win, s->max_len * sizeof(*s->win));	/* win[0]: newest */
	s->win[0] = b;
	if (s->nwin < s->max_len)
		s->nwin++;
	for (len = 2; len <= s->nwin; len *= 2) {
		struct sp_block first[SP_SHOW] = { { 0, 0 } };
		uint64_t h = 0xcbf29ce484222325ull ^ len;

		for (k = 0; k < len; k++) {
			h = sp_hash(h, s->win[len - 1 - k].func, s->win[len - 1 - k].block);
			if (k < SP_SHOW)
				first[k] = s->win[len - 1 - k];
		}
		err = sp_add(s, h, len, first);
		if (err)
			return err;
	}
	return 0;
}

static int sp_sample_block(struct subpaths *s, struct sp_block b)
{
	uint32_t i;
	int err;

	/* this position starts a sample: one length, uniformly */
	if (s->skip-- == 0) {
		struct sp_active *a = &s->act[s->nact++];

		memset(a, 0, sizeof(*a));
		a->len = 2u << (sp_rand(s) % s->nlens);
		a->left = a->len;
		a->id = 0xcbf29ce484222325ull ^ a->len;
		s->samples++;
		s->skip = sp_skip(s);
	}
	for (i = 0; i < s->nact;) {
		struct sp_active *a = &s->act[i];

		a->id = sp_hash(a->id, b.func, b.block);
		if (a->n < SP_SHOW)
			a->first[a->n] = b;
		a->n++;
		if (--a->left) {
			i++;
			continue;
		}
		err = sp_add(s, a->id, a->len, a->first);
		if (err)
			return err;
		*a = s->act[--s->nact];
	}
	return 0;
}

static int subpaths_step(struct out_writer *w, const struct out_stream *st,
			 const struct out_step *sp)
{
	struct subpaths *s = w->priv;
	struct sp_block b;

	(void)st;
	switch (sp->ev->type) {
	case REGEN_EV_BLOCK:
		if (!sp->f)
			return 0;
		b.func = sp->f->func_id;
		b.block = sp->ev->block;
		s->positions++;
		/* at most max_len samples are open: one starts per position */
		return s->exact ? sp_exact_block(s, b) : sp_sample_block(s, b);
	case REGEN_EV_GAP:
	case REGEN_EV_RESYNC:
	case REGEN_EV_TRUNCATED:
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

int out_subpaths_top(const struct out_writer *w, struct out_subpath *out, unsigned int k)
{
	const struct subpaths *s = w->priv;
	struct sp_entry *all;
	uint64_t i, n = 0;
	double scale;

	if (!s)
		return 0;
	all = malloc((s->used + 1) * sizeof(*all));
	if (!all)
		return -PT_ENOMEM;
	for (i = 0; i < s->cap; i++)
		if (s->tab[i].id)
			all[n++] = s->tab[i];
	qsort(all, n, sizeof(*all), cmp_count_desc);
	scale = s->exact ? 1.0 : s->tau * s->nlens;
	for (i = 0; i < n && i < k; i++) {
		out[i].id = all[i].id;
		out[i].len = all[i].len;
		out[i].sampled = all[i].count;
		out[i].estimate = (double)all[i].count * scale;
		out[i].stderr_est = s->exact ? 0.0 : sqrt((double)all[i].count) * scale;
		out[i].first_func = all[i].first[0].func;
		out[i].first_block = all[i].first[0].block;
	}
	free(all);
	return (int)i;
}

uint64_t out_subpaths_count(const struct out_writer *w, uint64_t id)
{
	struct subpaths *s = w->priv;
	const struct sp_entry *e;

	if (!s || !id)
		return 0;
	e = sp_find(s, id);
	return e->id ? e->count : 0;
}

uint64_t out_subpaths_entries(const struct out_writer *w)
{
	const struct subpaths *s = w->priv;

	return s ? s->used : 0;
}

static int subpaths_close(struct out_writer *w)
{
	struct subpaths *s = w->priv;
	struct out_subpath *top;
	unsigned int k = w->top ? w->top : 10, n, i, j;
	char buf[192];
	int err = 0;

	if (!s)
		return 0;
	top = calloc(k + 1, sizeof(*top));
	if (!top)
		err = -PT_ENOMEM;
	if (!err && s->exact)
		fprintf(w->fp, "# subpaths (exact): %" PRIu64 " block positions, %" PRIu64
			" distinct subpaths of lengths 2..%u, hottest first\n", s->positions, s->used,
			s->max_len);
	else if (!err)
		fprintf(w->fp, "# online subpath profile (OSP): %" PRIu64 " block positions, lengths "
			"2..%u, hot list of at most %u subpaths (%" PRIu64 " now), sampling 1 in %.1f "
			"after %" PRIu64 " resamplings; estimated counts with their standard error\n",
			s->positions, s->max_len, s->memory, s->used, s->tau, s->resamples);
	n = err ? 0 : (unsigned int)out_subpaths_top(w, top, k);
	for (i = 0; i < n; i++) {
		const struct sp_entry *e = sp_find(s, top[i].id);

		if (s->exact)
			fprintf(w->fp, "%12" PRIu64 "  length %3u:", top[i].sampled, top[i].len);
		else
			fprintf(w->fp, "%12.0f  +-%-8.0f length %3u:", top[i].estimate, top[i].stderr_est,
				top[i].len);
		for (j = 0; j < SP_SHOW && j < e->len; j++) {
			const struct pr_func *f = pr_model_func(w->m, e->first[j].func);

			fprintf(w->fp, " %s", f ? pr_block_name(f, e->first[j].block, buf, sizeof(buf)) :
				"?");
		}
		fprintf(w->fp, "%s\n", e->len > SP_SHOW ? " ..." : "");
	}
	free(top);
	free(s->tab);
	free(s->act);
	free(s->win);
	free(s);
	w->priv = NULL;
	return err ?: (ferror(w->fp) ? -PT_EIO : 0);
}

const struct out_writer_ops out_subpaths_ops = {
	.name = "subpaths",
	.open = subpaths_open,
	.step = subpaths_step,
	.stream_end = subpaths_stream_end,
	.close = subpaths_close,
};
