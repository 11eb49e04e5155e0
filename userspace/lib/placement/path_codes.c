// SPDX-License-Identifier: GPL-2.0
/* Prefix codes for path numbers by where each path starts; see path_codes.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/huffman.h>
#include <pathtrace/path_codes.h>

#include "path_likely_internal.h"

/* A class's candidate path: its likelihood within the class and its number. */
struct cand {
	double score;
	uint64_t id;
};

static int by_likelihood(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int by_path(const void *a, const void *b)
{
	const struct path_code *x = a, *y = b;

	return x->path < y->path ? -1 : x->path > y->path;
}

/* The codes, for sorting code indices by (class, nbits, value). */
static const struct path_code *sort_codes;

static int by_word(const void *a, const void *b)
{
	const struct path_code *x = &sort_codes[*(const uint32_t *)a];
	const struct path_code *y = &sort_codes[*(const uint32_t *)b];

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->nbits != y->nbits)
		return x->nbits < y->nbits ? -1 : 1;
	return x->value < y->value ? -1 : x->value > y->value;
}

int path_codes_fit(const struct pathnum *pn)
{
	uint32_t v;

	if (!pn->width)
		return 0;
	for (v = 0; v < pn->dag.nv; v++)
		if (pn->call_end[v] != GRAPH_NONE && pn->kind[pn->call_end[v]] == PATHNUM_CALL_END &&
		    graph_out_degree(pn->g, v) != 1)
			return 0;
	return 1;
}

void path_codes_to_plan(const struct path_codes *pc, struct pt_path_code *codes,
			struct pt_path_range *ranges)
{
	uint32_t i;

	for (i = 0; i < pc->ncodes; i++)
		codes[i] = (struct pt_path_code){ .path = pc->code[i].path,
						  .value = (uint32_t)pc->code[i].value,
						  .nbits = pc->code[i].nbits };
	for (i = 0; i < pc->nrange; i++)
		ranges[i] = (struct pt_path_range){
			.lo = pc->range_lo[i],
			.esc_value = (uint32_t)pc->esc_value[pc->range_class[i]],
			.esc_nbits = pc->esc_nbits[pc->range_class[i]] };
}

void path_codes_dag_weights(const struct pathnum *pn, const uint64_t *cfg_weight, double *dag_w)
{
	path_likely_dag_weights(pn, cfg_weight, dag_w);
}

/* Weight units for huffman_lengths: a likelihood of 1 is 2^40. */
#define SCALE 1099511627776.0

/*
 * Class cls's listed paths (its n likeliest candidates) and escape: words
 * by Huffman over their likelihoods, the escape weighing what the unlisted
 * paths leave. Appends to pc->code.
 */
static int code_class(struct path_codes *pc, uint32_t cls, struct cand *cand, uint32_t n,
		      uint64_t class_paths)
{
	uint32_t nsym = n + (n < class_paths), i;
	uint64_t *w = malloc(((size_t)nsym + 1) * sizeof(*w)), *value;
	uint8_t *len = malloc((size_t)nsym + 1);
	double left = 1.0;
	int err = 0;

	value = malloc(((size_t)nsym + 1) * sizeof(*value));
	if (!w || !len || !value) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		w[i] = (uint64_t)(cand[i].score * SCALE) + 1;
		left -= cand[i].score;
	}
	if (n < nsym)
		w[n] = (uint64_t)((left > 0 ? left : 0) * SCALE) + 1;
	/* one symbol gets 1 bit: every path end moves the position (path_codes.h) */
	err = huffman_lengths(w, nsym, len);
	if (!err)
		err = huffman_canonical(len, nsym, value);
	if (err)
		goto out;
	for (i = 0; i < n; i++)
		pc->code[pc->ncodes++] = (struct path_code){ cand[i].id, value[i], len[i], cls };
	if (n < nsym) {
		pc->esc_nbits[cls] = len[n];
		pc->esc_value[cls] = value[n];
	}
out:
	free(w);
	free(len);
	free(value);
	return err;
}

/* Class 0's or a START class's candidates into cand; returns how many. */
static uint32_t class_cands(const struct path_likely *pl, const struct pathnum *pn,
			    const double *dag_w, uint32_t start, struct cand *cand)
{
	const struct graph *d = &pn->dag;
	uint32_t o, r, nc = 0;
	double total = 0;

	if (start != GRAPH_NONE) {
		uint32_t w = d->edges[start].dst;

		for (r = 0; r < pl->len[w]; r++)
			cand[nc++] = (struct cand){ pl->best[(size_t)w * pl->k + r].score,
						    pn->val[start] + path_likely_val(pl, pn, w, r) };
		return nc;
	}
	for (o = d->out_start[d->entry]; o < d->out_start[d->entry + 1]; o++)
		if (pn->kind[d->out_edges[o]] != PATHNUM_START)
			total += dag_w[d->out_edges[o]];
	for (o = d->out_start[d->entry]; o < d->out_start[d->entry + 1]; o++) {
		uint32_t e = d->out_edges[o], u = d->edges[e].dst;
		double p = total > 0 ? dag_w[e] / total : 0;

		if (pn->kind[e] == PATHNUM_START)
			continue;
		for (r = 0; r < pl->len[u]; r++)
			cand[nc++] = (struct cand){ p * pl->best[(size_t)u * pl->k + r].score,
						    pn->val[e] + path_likely_val(pl, pn, u, r) };
	}
	return nc;
}

/*
 * The ranges of path numbers ENTRY's DAG out-edges own (consecutive by
 * Val; sorted by Val they tile 0 .. npaths) and their classes: 0 for
 * ENTRY's real edges, one per START edge in out-edge order.
 */
static int make_ranges(struct path_codes *pc, const struct pathnum *pn)
{
	const struct graph *d = &pn->dag;
	uint32_t nout = graph_out_degree(d, d->entry), o, i, c = 1;

	pc->width = pn->width;
	pc->npaths = pn->npaths;
	pc->nclass = 1;
	for (o = d->out_start[d->entry]; o < d->out_start[d->entry + 1]; o++)
		pc->nclass += pn->kind[d->out_edges[o]] == PATHNUM_START;
	pc->range_lo = malloc(((size_t)nout + 1) * sizeof(*pc->range_lo));
	pc->range_class = malloc(((size_t)nout + 1) * sizeof(*pc->range_class));
	pc->class_edge = malloc(((size_t)pc->nclass + 1) * sizeof(*pc->class_edge));
	pc->esc_nbits = calloc((size_t)pc->nclass + 1, 1);
	pc->esc_value = calloc((size_t)pc->nclass + 1, sizeof(*pc->esc_value));
	pc->class_start = calloc((size_t)pc->nclass + 2, sizeof(*pc->class_start));
	if (!pc->range_lo || !pc->range_class || !pc->class_edge || !pc->esc_nbits ||
	    !pc->esc_value || !pc->class_start)
		return -PT_ENOMEM;
	pc->class_edge[0] = GRAPH_NONE;
	for (o = d->out_start[d->entry]; o < d->out_start[d->entry + 1]; o++) {
		uint32_t e = d->out_edges[o], cls = 0;

		if (pn->kind[e] == PATHNUM_START) {
			cls = c++;
			pc->class_edge[cls] = e;
		}
		for (i = pc->nrange; i > 0 && pc->range_lo[i - 1] > pn->val[e]; i--) {
			pc->range_lo[i] = pc->range_lo[i - 1];
			pc->range_class[i] = pc->range_class[i - 1];
		}
		pc->range_lo[i] = pn->val[e];
		pc->range_class[i] = cls;
		pc->nrange++;
	}
	return 0;
}

/* by_class and class_start from the codes (sorted by path). */
static void group_by_class(struct path_codes *pc)
{
	uint32_t i, c;

	for (i = 0; i < pc->ncodes; i++) {
		pc->by_class[i] = i;
		pc->class_start[pc->code[i].cls + 1]++;
	}
	for (c = 0; c < pc->nclass; c++)
		pc->class_start[c + 1] += pc->class_start[c];
	sort_codes = pc->code;
	qsort(pc->by_class, pc->ncodes, sizeof(*pc->by_class), by_word);
}

/*
 * Class c's candidates from a path profile: its counted paths, each once,
 * scored count / (total + 1) so that the unseen share one run's worth (the
 * escape's). Returns how many.
 */
static uint32_t class_counted(const struct path_codes *pc, uint32_t c, const uint64_t *paths,
			      const uint64_t *counts, uint32_t n, struct cand *cand)
{
	uint32_t i, j, nc = 0;
	double total = 0;

	for (i = 0; i < n; i++) {
		if (paths[i] >= pc->npaths || path_codes_class(pc, paths[i]) != (int64_t)c ||
		    !counts[i])
			continue;
		for (j = 0; j < nc && cand[j].id != paths[i]; j++)
			;
		if (j < nc)
			continue;	/* a repeat */
		cand[nc++] = (struct cand){ (double)counts[i], paths[i] };
		total += (double)counts[i];
	}
	for (i = 0; i < nc; i++)
		cand[i].score /= total + 1;
	return nc;
}

/* How many paths class c holds: the sizes of its ranges. */
static uint64_t class_size(const struct path_codes *pc, uint32_t c)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < pc->nrange; i++)
		if (pc->range_class[i] == c)
			n += (i + 1 < pc->nrange ? pc->range_lo[i + 1] : pc->npaths) - pc->range_lo[i];
	return n;
}

int path_codes_build(struct path_codes *pc, const struct pathnum *pn, const double *dag_w,
		     uint32_t k)
{
	return path_codes_build_counted(pc, pn, dag_w, k, NULL, NULL, 0);
}

int path_codes_build_counted(struct path_codes *pc, const struct pathnum *pn, const double *dag_w,
			     uint32_t k, const uint64_t *paths, const uint64_t *counts, uint32_t n)
{
	struct path_likely pl;
	struct cand *cand = NULL;
	uint64_t size;
	uint32_t c, nc;
	int err;

	memset(pc, 0, sizeof(*pc));
	if (!k || !pn->npaths || !dag_w)
		return -PT_EINVAL;
	if (k > PATH_CODES_K_MAX)
		k = PATH_CODES_K_MAX;
	err = path_likely_build(&pl, pn, dag_w, k);
	if (err)
		return err;
	err = make_ranges(pc, pn);
	if (err)
		goto out;
	pc->code = malloc(((size_t)k * pc->nclass + 1) * sizeof(*pc->code));
	pc->by_class = malloc(((size_t)k * pc->nclass + 1) * sizeof(*pc->by_class));
	cand = malloc(((size_t)k * (pc->nrange + 1) + n + 1) * sizeof(*cand));
	if (!pc->code || !pc->by_class || !cand) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (c = 0; c < pc->nclass; c++) {
		size = class_size(pc, c);
		nc = paths ? class_counted(pc, c, paths, counts, n, cand) : 0;
		if (!nc)
			nc = class_cands(&pl, pn, dag_w, pc->class_edge[c], cand);
		qsort(cand, nc, sizeof(*cand), by_likelihood);
		if (nc > k)
			nc = k;
		err = code_class(pc, c, cand, nc, size);
		if (err)
			goto out;
	}
	qsort(pc->code, pc->ncodes, sizeof(*pc->code), by_path);
	group_by_class(pc);
out:
	free(cand);
	path_likely_free(&pl);
	if (err)
		path_codes_free(pc);
	return err;
}

/* A word as a left-aligned reading-order key: a word that is a prefix of another sorts just before it. */
struct word_key {
	uint64_t key;
	uint8_t nbits;
};

static int by_key(const void *a, const void *b)
{
	const struct word_key *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->nbits < y->nbits ? -1 : x->nbits > y->nbits;
}

static struct word_key key_of(uint64_t value, unsigned int nbits)
{
	return (struct word_key){ huffman_reading_order(value, nbits) << (64 - nbits),
				  (uint8_t)nbits };
}

/* Whether class c's words and escape are prefix-free (k: room for them). */
static int class_prefix_free(const struct path_codes *pc, uint32_t c, struct word_key *k)
{
	uint32_t n = 0, i;

	for (i = pc->class_start[c]; i < pc->class_start[c + 1]; i++)
		k[n++] = key_of(pc->code[pc->by_class[i]].value, pc->code[pc->by_class[i]].nbits);
	if (pc->esc_nbits[c])
		k[n++] = key_of(pc->esc_value[c], pc->esc_nbits[c]);
	qsort(k, n, sizeof(*k), by_key);
	for (i = 1; i < n; i++) {
		uint64_t mask = ~0ull << (64 - k[i - 1].nbits);

		if ((k[i].key & mask) == k[i - 1].key)
			return 0;	/* word i - 1 starts word i (or equals it) */
	}
	return 1;
}

static int __attribute__((format(printf, 3, 4)))
refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -PT_EFORMAT;
}

int path_codes_load(struct path_codes *pc, const struct pathnum *pn,
		    const struct pt_path_code *codes, uint32_t ncodes,
		    const struct pt_path_range *ranges, uint32_t nranges, uint64_t npaths,
		    char *why, size_t whylen)
{
	uint64_t *size = NULL, *listed = NULL;
	struct word_key *keys = NULL;
	uint8_t *seen = NULL;
	uint32_t i, c;
	int err;

	memset(pc, 0, sizeof(*pc));
	if (npaths != pn->npaths)
		return refuse(why, whylen, "codes for %llu paths, the numbering has %llu",
			      (unsigned long long)npaths, (unsigned long long)pn->npaths);
	if (!path_codes_fit(pn))
		return refuse(why, whylen, "codes for a numbering of one path, or with a call "
			      "followed by more than one block");
	err = make_ranges(pc, pn);
	pc->code = malloc(((size_t)ncodes + 1) * sizeof(*pc->code));
	pc->by_class = malloc(((size_t)ncodes + 1) * sizeof(*pc->by_class));
	size = calloc((size_t)pc->nclass + 1, sizeof(*size));
	listed = calloc((size_t)pc->nclass + 1, sizeof(*listed));
	seen = calloc((size_t)pc->nclass + 1, 1);
	keys = malloc(((size_t)ncodes + 2) * sizeof(*keys));
	if (err || !pc->code || !pc->by_class || !size || !listed || !seen || !keys) {
		err = -PT_ENOMEM;
		goto out;
	}
	err = -PT_EFORMAT;
	if (nranges != pc->nrange) {
		refuse(why, whylen, "%u ranges, the numbering has %u", nranges, pc->nrange);
		goto out;
	}
	for (i = 0; i < nranges; i++) {
		c = pc->range_class[i];
		if (ranges[i].lo != pc->range_lo[i] ||
		    (seen[c] && (ranges[i].esc_nbits != pc->esc_nbits[c] ||
				 ranges[i].esc_value != pc->esc_value[c])) ||
		    ranges[i].esc_nbits > PT_PATH_CODE_MAX_BITS) {
			refuse(why, whylen, "range %u: from %llu with a %u-bit escape, not the "
			       "numbering's", i, (unsigned long long)ranges[i].lo,
			       ranges[i].esc_nbits);
			goto out;
		}
		seen[c] = 1;
		pc->esc_nbits[c] = ranges[i].esc_nbits;
		pc->esc_value[c] = ranges[i].esc_value;
		size[c] += (i + 1 < nranges ? pc->range_lo[i + 1] : npaths) - pc->range_lo[i];
	}
	for (i = 0; i < ncodes; i++) {
		int64_t cls = codes[i].path < npaths ? path_codes_class(pc, codes[i].path) : -1;

		if (cls < 0 || !codes[i].nbits || codes[i].nbits > PT_PATH_CODE_MAX_BITS ||
		    (i && codes[i].path <= codes[i - 1].path)) {
			refuse(why, whylen, "code %u: path %llu of %u bits", i,
			       (unsigned long long)codes[i].path, codes[i].nbits);
			goto out;
		}
		pc->code[i] = (struct path_code){ codes[i].path, codes[i].value, codes[i].nbits,
						  (uint32_t)cls };
		listed[cls]++;
	}
	pc->ncodes = ncodes;
	group_by_class(pc);
	for (c = 0; c < pc->nclass; c++) {
		if (!pc->esc_nbits[c] && listed[c] != size[c]) {
			refuse(why, whylen, "class %u: no escape, %llu of its %llu paths listed", c,
			       (unsigned long long)listed[c], (unsigned long long)size[c]);
			goto out;
		}
		if (!class_prefix_free(pc, c, keys)) {
			refuse(why, whylen, "class %u: its words are not prefix-free", c);
			goto out;
		}
	}
	err = 0;
out:
	free(size);
	free(listed);
	free(seen);
	free(keys);
	if (err)
		path_codes_free(pc);
	return err;
}

int64_t path_codes_class(const struct path_codes *pc, uint64_t id)
{
	uint32_t lo = 0, hi = pc->nrange;

	if (id >= pc->npaths || !pc->nrange)
		return -PT_EINVAL;
	while (hi - lo > 1) {	/* the last range starting at or below id */
		uint32_t mid = lo + (hi - lo) / 2;

		if (pc->range_lo[mid] <= id)
			lo = mid;
		else
			hi = mid;
	}
	return pc->range_class[lo];
}

int64_t path_codes_class_at(const struct path_codes *pc, const struct pathnum *pn, uint32_t v)
{
	uint32_t e;

	if (v == pn->dag.entry)
		return 0;
	if (v >= pn->dag.nv || !pn->start_of || (e = pn->start_of[v]) == GRAPH_NONE)
		return -PT_EINVAL;
	return path_codes_class(pc, pn->val[e]);
}

/* The listed code of path id, or NULL. */
static const struct path_code *listed(const struct path_codes *pc, uint64_t id)
{
	uint32_t lo = 0, hi = pc->ncodes;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (pc->code[mid].path < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pc->ncodes && pc->code[lo].path == id ? &pc->code[lo] : NULL;
}

int path_codes_word(const struct path_codes *pc, uint64_t id, uint64_t *value, unsigned int *nbits,
		    int *raw)
{
	const struct path_code *pcode = listed(pc, id);
	int64_t cls;

	if (pcode) {
		*value = pcode->value;
		*nbits = pcode->nbits;
		*raw = 0;
		return 0;
	}
	cls = path_codes_class(pc, id);
	if (cls < 0 || !pc->esc_nbits[cls])
		return -PT_EINVAL;	/* outside, or a class that lists every path */
	*value = pc->esc_value[cls];
	*nbits = pc->esc_nbits[cls];
	*raw = 1;
	return 0;
}

unsigned int path_codes_nbits(const struct path_codes *pc, uint64_t id)
{
	unsigned int nbits;
	uint64_t value;
	int raw;

	if (path_codes_word(pc, id, &value, &nbits, &raw))
		return 0;
	return raw ? nbits + pc->width : nbits;
}

/* Class cls's listed code of word (n bits, v), or NULL. */
static const struct path_code *word_in(const struct path_codes *pc, uint32_t cls, unsigned int n,
				       uint64_t v)
{
	uint32_t lo = pc->class_start[cls], hi = pc->class_start[cls + 1];

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct path_code *m = &pc->code[pc->by_class[mid]];

		if (m->nbits < n || (m->nbits == n && m->value < v))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < pc->class_start[cls + 1]) {
		const struct path_code *m = &pc->code[pc->by_class[lo]];

		if (m->nbits == n && m->value == v)
			return m;
	}
	return NULL;
}

int path_codes_read(const struct path_codes *pc, uint32_t cls,
		    uint64_t (*next)(void *ctx, unsigned int n), void *ctx, uint64_t *id)
{
	const struct path_code *m;
	unsigned int n;
	uint64_t v = 0;

	if (cls >= pc->nclass)
		return -PT_EINVAL;
	for (n = 1; n <= HUFFMAN_MAX_BITS; n++) {
		v |= next(ctx, 1) << (n - 1);
		m = word_in(pc, cls, n, v);
		if (m) {
			*id = m->path;
			return 0;
		}
		if (pc->esc_nbits[cls] == n && pc->esc_value[cls] == v) {
			*id = pc->width ? next(ctx, pc->width) : 0;
			/* an escaped number is the class's and not listed, or the word lies */
			return path_codes_class(pc, *id) == (int64_t)cls && !listed(pc, *id) ?
			       0 : -PT_EFORMAT;
		}
	}
	return -PT_EFORMAT;
}

void path_codes_free(struct path_codes *pc)
{
	free(pc->code);
	free(pc->class_edge);
	free(pc->esc_nbits);
	free(pc->esc_value);
	free(pc->by_class);
	free(pc->class_start);
	free(pc->range_lo);
	free(pc->range_class);
	memset(pc, 0, sizeof(*pc));
}
