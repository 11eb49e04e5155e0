// SPDX-License-Identifier: GPL-2.0
/*
 * Path codes by start class: every path number of random graphs (loops,
 * calls) written as its word and read back with the class its first block
 * names, alone and in a concatenation; each class's code complete (Kraft
 * sum 1) and within a bit of its entropy when every path is listed; a
 * skewed chain's likeliest path the shortest word; escapes for what k
 * leaves out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/path_codes.h>
#include <pathtrace/pathnum.h>

#include "unit.h"

/* An LSB-first bitstring to write words into and read them back from. */
struct bits {
	uint64_t w[512];
	uint32_t n, pos;
};

static void put(struct bits *b, uint64_t v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++, b->n++)
		if (v >> i & 1)
			b->w[b->n / 64] |= 1ull << (b->n % 64);
}

static uint64_t next(void *ctx, unsigned int n)
{
	struct bits *b = ctx;
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++, b->pos++)
		if (b->pos < b->n && (b->w[b->pos / 64] >> (b->pos % 64) & 1))
			v |= 1ull << i;
	return v;
}

/* Writes path id's whole word (code, or escape then width bits). */
static void put_path(struct bits *b, const struct path_codes *pc, uint64_t id)
{
	unsigned int nbits;
	uint64_t value;
	int raw;

	CU_ASSERT_EQUAL_FATAL(path_codes_word(pc, id, &value, &nbits, &raw), 0);
	put(b, value, nbits);
	if (raw)
		put(b, id, pc->width);
	CU_ASSERT_EQUAL(nbits + (raw ? pc->width : 0), path_codes_nbits(pc, id));
}

/* The class the reader derives for path id: that of its first block. */
static int64_t reader_class(const struct path_codes *pc, const struct pathnum *pn, uint64_t id)
{
	uint32_t blocks[256];
	int n = pathnum_blocks(pn, id, blocks, 256);

	CU_ASSERT_FATAL(n > 0);
	return path_codes_class_at(pc, pn, blocks[0]);
}

/* Random graph: forward edges, some back edges, some call vertices. */
static int random_graph(struct graph *g)
{
	uint32_t nv = 3 + rand() % 14, v;

	graph_init(g);
	for (v = 0; v < nv; v++)
		graph_add_vertex(g, v && v + 2 < nv && rand() % 4 == 0 ? GRAPH_V_CALL : 0);
	for (v = 0; v + 1 < nv; v++) {
		graph_add_edge(g, v, v + 1 + rand() % (nv - v - 1));
		if (!(g->vflags[v] & GRAPH_V_CALL) && rand() % 2)
			graph_add_edge(g, v, rand() % nv);
	}
	return graph_finish(g, 0, nv - 1);
}

static void check_codes(const struct path_codes *pc, const struct pathnum *pn)
{
	struct bits *b = calloc(1, sizeof(*b));
	uint64_t id, got, seq[64];
	uint32_t c, i, n = 0;

	for (i = 0; i < pc->ncodes; i++)
		CU_ASSERT(pc->code[i].nbits >= 1 && pc->code[i].nbits <= 32);
	for (id = 0; id < pn->npaths && id < 4096; id++) {
		int64_t cls = path_codes_class(pc, id);

		CU_ASSERT(cls >= 0);
		CU_ASSERT_EQUAL(reader_class(pc, pn, id), cls);
		memset(b, 0, sizeof(*b));
		put_path(b, pc, id);
		CU_ASSERT_EQUAL(path_codes_read(pc, (uint32_t)cls, next, b, &got), 0);
		CU_ASSERT_EQUAL(got, id);
		CU_ASSERT_EQUAL(b->pos, b->n);	/* exactly its bits */
	}
	/* Kraft: a class of several symbols fills its code tree. */
	for (c = 0; c < pc->nclass; c++) {
		double kraft = pc->esc_nbits[c] ? ldexp(1.0, -pc->esc_nbits[c]) : 0;
		uint32_t syms = pc->esc_nbits[c] != 0;

		for (i = pc->class_start[c]; i < pc->class_start[c + 1]; i++, syms++)
			kraft += ldexp(1.0, -pc->code[pc->by_class[i]].nbits);
		CU_ASSERT(syms >= 1);
		if (syms > 1)
			CU_ASSERT(fabs(kraft - 1.0) < 1e-9);
	}
	/* A run of words back to back reads back word by word. */
	memset(b, 0, sizeof(*b));
	for (i = 0; i < 64 && pn->npaths; i++) {
		seq[n] = (uint64_t)rand() % pn->npaths;
		if (b->n + 32 + pc->width > sizeof(b->w) * 8)
			break;
		put_path(b, pc, seq[n++]);
	}
	for (i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(path_codes_read(pc, (uint32_t)path_codes_class(pc, seq[i]), next, b,
						&got), 0);
		CU_ASSERT_EQUAL(got, seq[i]);
	}
	CU_ASSERT_EQUAL(b->pos, b->n);
	free(b);
}

static void test_random(void)
{
	unsigned int seed = (unsigned int)unit_seed(), t, graphs = 0, escaped = 0;

	srand(seed);
	for (t = 0; t < 2500; t++) {
		struct graph g;
		struct pathnum pn;
		struct path_codes pc;
		double *w;
		uint32_t e, k = rand() % 3 ? 1 + rand() % 4 : PATH_CODES_K_MAX;

		if (random_graph(&g))
			continue;
		if (pathnum_build(&pn, &g, NULL, NULL)) {
			graph_free(&g);
			continue;
		}
		w = calloc((size_t)pn.dag.ne + 1, sizeof(*w));
		for (e = 0; e < pn.dag.ne; e++)
			w[e] = rand() % 4 ? rand() % 1000 : 0;
		CU_ASSERT_EQUAL_FATAL(path_codes_build(&pc, &pn, w, k), 0);
		graphs++;
		for (e = 0; e < pc.nclass; e++)
			escaped += pc.esc_nbits[e] != 0;
		if (k == PATH_CODES_K_MAX)
			for (e = 0; e < pc.nclass; e++)
				CU_ASSERT_EQUAL(pc.esc_nbits[e], 0);	/* all listed */
		check_codes(&pc, &pn);
		path_codes_free(&pc);
		free(w);
		pathnum_free(&pn);
		graph_free(&g);
	}
	CU_ASSERT(graphs > 1500);
	CU_ASSERT(escaped > 200);
	fprintf(stderr, "[path codes: %u graphs, %u classes with escapes, seed %u] ", graphs,
		escaped, seed);
}

/*
 * A chain of n diamonds, each branch 99:1: 2^n paths from ENTRY, the
 * likeliest (all 99s) gets the shortest word, and with every path listed
 * the expected word length is within a bit of the entropy (Huffman).
 */
static void test_skewed_chain(void)
{
	enum { N = 6 };
	struct graph g;
	struct pathnum pn;
	struct path_codes pc;
	double *w, H = 0, L = 0;
	uint32_t v, e, best = UINT32_MAX;
	uint64_t id;

	graph_init(&g);
	for (v = 0; v < 3 * N + 1; v++)
		graph_add_vertex(&g, 0);
	for (v = 0; v < N; v++) {	/* 3v -> 3v+1 (likely) or 3v+2, both -> 3v+3 */
		graph_add_edge(&g, 3 * v, 3 * v + 1);
		graph_add_edge(&g, 3 * v, 3 * v + 2);
		graph_add_edge(&g, 3 * v + 1, 3 * v + 3);
		graph_add_edge(&g, 3 * v + 2, 3 * v + 3);
	}
	CU_ASSERT_EQUAL_FATAL(graph_finish(&g, 0, 3 * N), 0);
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&pn, &g, NULL, NULL), 0);
	CU_ASSERT_EQUAL(pn.npaths, 1u << N);
	w = calloc((size_t)pn.dag.ne + 1, sizeof(*w));
	for (e = 0; e < pn.dag.ne; e++) {
		uint32_t s = pn.dag.edges[e].src, d = pn.dag.edges[e].dst;

		w[e] = s % 3 == 0 && d == s + 2 ? 1 : 99;
	}
	CU_ASSERT_EQUAL_FATAL(path_codes_build(&pc, &pn, w, PATH_CODES_K_MAX), 0);
	CU_ASSERT_EQUAL(pc.nclass, 1);
	CU_ASSERT_EQUAL(pc.esc_nbits[0], 0);
	for (id = 0; id < pn.npaths; id++) {
		uint32_t blocks[64], unlikely = 0, n = pathnum_blocks(&pn, id, blocks, 64), i;
		double p;

		for (i = 0; i < n; i++)
			unlikely += blocks[i] % 3 == 2;
		p = pow(0.99, N - unlikely) * pow(0.01, unlikely);
		H -= p * log2(p);
		L += p * path_codes_nbits(&pc, id);
		if (!unlikely)
			best = path_codes_nbits(&pc, id);
		else
			CU_ASSERT(path_codes_nbits(&pc, id) >= best);
	}
	CU_ASSERT_EQUAL(best, 1);
	CU_ASSERT(L >= H - 1e-9 && L < H + 1);
	check_codes(&pc, &pn);
	path_codes_free(&pc);
	/* k = 4: four listed, the rest escape to their 6-bit numbers. */
	CU_ASSERT_EQUAL_FATAL(path_codes_build(&pc, &pn, w, 4), 0);
	CU_ASSERT_EQUAL(pc.ncodes, 4);
	CU_ASSERT(pc.esc_nbits[0] > 0);
	check_codes(&pc, &pn);
	path_codes_free(&pc);
	free(w);
	pathnum_free(&pn);
	graph_free(&g);
}

/* Bad arguments and a lying escape. */
static void test_errors(void)
{
	struct graph g;
	struct pathnum pn;
	struct path_codes pc;
	struct bits b = { { 0 }, 0, 0 };
	double w[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	uint64_t id, value;
	unsigned int nbits;
	int raw;

	graph_init(&g);
	for (id = 0; id < 5; id++)
		graph_add_vertex(&g, 0);
	graph_add_edge(&g, 0, 1);
	graph_add_edge(&g, 0, 2);
	graph_add_edge(&g, 1, 3);
	graph_add_edge(&g, 2, 3);
	graph_add_edge(&g, 1, 2);
	graph_add_edge(&g, 3, 4);
	CU_ASSERT_EQUAL_FATAL(graph_finish(&g, 0, 4), 0);
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&pn, &g, NULL, NULL), 0);
	CU_ASSERT_EQUAL(path_codes_build(&pc, &pn, w, 0), -PT_EINVAL);
	CU_ASSERT_EQUAL(path_codes_build(&pc, &pn, NULL, 2), -PT_EINVAL);
	CU_ASSERT_EQUAL_FATAL(path_codes_build(&pc, &pn, w, 1), 0);
	CU_ASSERT_EQUAL(path_codes_class(&pc, pn.npaths), -PT_EINVAL);
	CU_ASSERT_EQUAL(path_codes_word(&pc, pn.npaths, &value, &nbits, &raw), -PT_EINVAL);
	CU_ASSERT_EQUAL(path_codes_nbits(&pc, pn.npaths), 0);
	CU_ASSERT_EQUAL(path_codes_read(&pc, pc.nclass, next, &b, &id), -PT_EINVAL);
	/* the escape followed by the listed path's number: not what a writer writes */
	put(&b, pc.esc_value[0], pc.esc_nbits[0]);
	put(&b, pc.code[0].path, pc.width);
	CU_ASSERT_EQUAL(path_codes_read(&pc, 0, next, &b, &id), -PT_EFORMAT);
	path_codes_free(&pc);
	pathnum_free(&pn);
	graph_free(&g);
}

/*
 * What the reader loads from a plan: the built codes' arrays load to the
 * same words; a word made another's twin in its class, a range moved, the
 * wrong number of paths, are refused.
 */
static void test_load(void)
{
	unsigned int t, loaded = 0, twins = 0;
	char why[160];

	srand((unsigned int)unit_seed() + 1);
	for (t = 0; t < 1500; t++) {
		struct graph g;
		struct pathnum pn;
		struct path_codes pc, lc;
		struct pt_path_code *codes;
		struct pt_path_range *ranges;
		double *w;
		uint32_t e, i, j;
		uint64_t id;

		if (random_graph(&g))
			continue;
		if (pathnum_build(&pn, &g, NULL, NULL) || !pn.width) {
			pathnum_free(&pn);
			graph_free(&g);
			continue;
		}
		w = calloc((size_t)pn.dag.ne + 1, sizeof(*w));
		for (e = 0; e < pn.dag.ne; e++)
			w[e] = rand() % 100;
		CU_ASSERT_EQUAL_FATAL(path_codes_build(&pc, &pn, w, 1 + rand() % 6), 0);
		codes = calloc(pc.ncodes + 1, sizeof(*codes));
		ranges = calloc(pc.nrange + 1, sizeof(*ranges));
		path_codes_to_plan(&pc, codes, ranges);
		CU_ASSERT_EQUAL(path_codes_load(&lc, &pn, codes, pc.ncodes, ranges, pc.nrange,
						pn.npaths, why, sizeof(why)), 0);
		for (id = 0; id < pn.npaths && id < 256; id++)
			CU_ASSERT_EQUAL(path_codes_nbits(&lc, id), path_codes_nbits(&pc, id));
		path_codes_free(&lc);
		loaded++;
		CU_ASSERT_EQUAL(path_codes_load(&lc, &pn, codes, pc.ncodes, ranges, pc.nrange,
						pn.npaths + 1, why, sizeof(why)), -PT_EFORMAT);
		ranges[pc.nrange - 1].lo += 1;
		CU_ASSERT_EQUAL(path_codes_load(&lc, &pn, codes, pc.ncodes, ranges, pc.nrange,
						pn.npaths, why, sizeof(why)), -PT_EFORMAT);
		ranges[pc.nrange - 1].lo -= 1;
		/* two listed paths of one class with one word: not prefix-free */
		for (i = 0; i < pc.ncodes; i++)
			for (j = i + 1; j < pc.ncodes; j++)
				if (pc.code[i].cls == pc.code[j].cls && codes[j].nbits) {
					codes[j].value = codes[i].value;
					codes[j].nbits = codes[i].nbits;
					CU_ASSERT_EQUAL(path_codes_load(&lc, &pn, codes, pc.ncodes, ranges,
									pc.nrange, pn.npaths, why,
									sizeof(why)), -PT_EFORMAT);
					CU_ASSERT(strstr(why, "prefix-free") != NULL);
					twins++;
					i = j = pc.ncodes;
				}
		path_codes_free(&pc);
		free(codes);
		free(ranges);
		free(w);
		pathnum_free(&pn);
		graph_free(&g);
	}
	CU_ASSERT(loaded > 500 && twins > 100);
}

/*
 * Codes from a path profile: the counted paths are the listed ones, the
 * hottest of a class the shortest word, every never-counted path escaped
 * (k bounds the list), every word still reads back.
 */
static void test_counted(void)
{
	unsigned int t, checked = 0;

	srand((unsigned int)unit_seed() + 2);
	for (t = 0; t < 1500; t++) {
		struct graph g;
		struct pathnum pn;
		struct path_codes pc;
		uint64_t ids[8], counts[8], id;
		uint32_t n = 0, i, e;
		double *w;

		if (random_graph(&g))
			continue;
		if (pathnum_build(&pn, &g, NULL, NULL) || pn.npaths < 4) {
			pathnum_free(&pn);
			graph_free(&g);
			continue;
		}
		w = calloc((size_t)pn.dag.ne + 1, sizeof(*w));
		for (e = 0; e < pn.dag.ne; e++)
			w[e] = 1;
		for (i = 0; i < 7 && n < 7; i++) {	/* distinct paths, then a repeat */
			uint32_t j;

			ids[n] = (uint64_t)rand() % pn.npaths;
			for (j = 0; j < n && ids[j] != ids[n]; j++)
				;
			if (j == n)
				counts[n++] = 1 + (uint64_t)(rand() % 1000);
		}
		ids[n] = ids[0];	/* a repeat: counted once, with its first count */
		counts[n++] = 5000;
		CU_ASSERT_EQUAL_FATAL(path_codes_build_counted(&pc, &pn, w, PATH_CODES_K_MAX, ids,
							       counts, n), 0);
		for (id = 0; id < pn.npaths && id < 4096; id++) {
			unsigned int nbits;
			uint64_t value;
			int raw, counted = 0;

			for (i = 0; i + 1 < n; i++)
				counted |= ids[i] == id;
			CU_ASSERT_EQUAL(path_codes_word(&pc, id, &value, &nbits, &raw), 0);
			/* a class the profile reaches lists exactly its counted paths */
			if (counted)
				CU_ASSERT_EQUAL(raw, 0);
		}
		for (i = 0; i + 1 < n; i++) {
			uint32_t j;

			for (j = 0; j + 1 < n; j++)
				if (path_codes_class(&pc, ids[j]) == path_codes_class(&pc, ids[i]) &&
				    counts[j] > counts[i])
					CU_ASSERT(path_codes_nbits(&pc, ids[j]) <=
						  path_codes_nbits(&pc, ids[i]));
		}
		check_codes(&pc, &pn);
		path_codes_free(&pc);
		checked++;
		free(w);
		pathnum_free(&pn);
		graph_free(&g);
	}
	CU_ASSERT(checked > 300);
}

UNIT_SUITE(path_codes,
	   { "a path profile's counted paths listed, the rest escaped", test_counted },
	   { "the plan's arrays load, corrupted ones are refused", test_load },
	   { "random graphs: every path's word reads back in its start's class", test_random },
	   { "skewed chain: likeliest path shortest, within a bit of entropy", test_skewed_chain },
	   { "bad arguments, a lying escape", test_errors })
