// SPDX-License-Identifier: GPL-2.0
/*
 * osp_core (trace-format/coder/osp_core.h): the sampler and hot list the
 * module and pathregen share. At rate 1 with one length the list is the
 * exact pair counts of a known sequence (contexts, owners and cuts
 * included); the start rate at a raised tau and the length draw are
 * binomial; a thinning halves counts without bias (both of osp_half's
 * ways); and on a simulated path-end stream (a Markov chain of path ends)
 * the estimates of the truly hottest subpaths are unbiased against their
 * exact counts, with the standard error the formula gives.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coder/osp_core.h"
#include "unit.h"

static struct osp *make(uint32_t entries, uint32_t max_len, uint32_t contexts, uint64_t seed)
{
	size_t size = osp_size(entries, max_len, contexts);
	void *mem = size ? malloc(size) : NULL;

	if (!mem)
		return NULL;
	return osp_init(mem, entries, max_len, contexts, seed);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_sizes(void)
{
	static const uint32_t bad[][3] = {
		{ 0, 8, 1 }, { OSP_MAX_ENTRIES + 1, 8, 1 }, { 16, 0, 1 }, { 16, 1, 1 },
		{ 16, 3, 1 }, { 16, 12, 1 }, { 16, 128, 1 }, { 16, 8, 0 },
		{ 16, 8, OSP_MAX_CONTEXTS + 1 },
	};
	uint64_t mem[64];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(osp_size(bad[i][0], bad[i][1], bad[i][2]), 0);
		CU_ASSERT_PTR_NULL(osp_init(mem, bad[i][0], bad[i][1], bad[i][2], 1));
	}
	CU_ASSERT(osp_size(1, 2, 1) > sizeof(struct osp));
	CU_ASSERT(osp_size(4096, 8, 4) > 4096 * (2 + 8 + 4) * 8);
	CU_ASSERT(osp_size(OSP_MAX_ENTRIES, OSP_MAX_LEN, OSP_MAX_CONTEXTS) > 0);
	CU_ASSERT_EQUAL(osp_init(mem, 1, 2, 1, 1), (struct osp *)mem);
}

/* Entry i is the pair (f0, v0), (f1, v1) with count c. */
static int pair_is(const struct osp *o, uint32_t i, uint64_t v0, uint64_t v1, uint64_t c)
{
	struct osp_subpath sp;

	if (i >= o->used)
		return 0;
	osp_get(o, i, &sp);
	return sp.len == 2 && sp.count == c && sp.func[0] == (uint32_t)v0 + 100 &&
	       sp.func[1] == (uint32_t)v1 + 100 && sp.val[0] == v0 && sp.val[1] == v1;
}

static void add(struct osp *o, uint32_t ctx, uint64_t owner, uint64_t v)
{
	CU_ASSERT_EQUAL(osp_add(o, ctx, owner, (uint32_t)v + 100, v), 0);
}

/* max_len 2: one length; tau stays 0 while the list has room: every pair is counted. */
static void test_known_sequence(void)
{
	static const uint64_t seq[] = { 1, 2, 1, 2, 1, 3 };
	struct osp *o = make(8, 2, 2, 7);
	unsigned int i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(o->nlens, 1);
	for (i = 0; i < 6; i++)
		add(o, 0, 5, seq[i]);
	CU_ASSERT_EQUAL(o->used, 3);
	CU_ASSERT(pair_is(o, 0, 1, 2, 2) && pair_is(o, 1, 2, 1, 2) && pair_is(o, 2, 1, 3, 1));
	CU_ASSERT_EQUAL(o->positions, 6);
	CU_ASSERT_EQUAL(o->samples, 5);
	CU_ASSERT_EQUAL(o->nact[0], 1);	/* the last position's sample, in flight */
	CU_ASSERT_EQUAL(o->cut, 0);
	CU_ASSERT_EQUAL(o->tau_log2, 0);

	/* a cut drops the sample in flight: 3 then 4 is no pair */
	osp_cut(o, 0);
	CU_ASSERT_EQUAL(o->cut, 1);
	add(o, 0, 5, 4);
	add(o, 0, 5, 1);
	CU_ASSERT_EQUAL(o->used, 4);
	CU_ASSERT(pair_is(o, 3, 4, 1, 1));

	/* another owner of the context: cut too; the other context is apart */
	add(o, 0, 6, 2);	/* cuts (4 1)'s successor: 1 then 2 is no pair */
	CU_ASSERT_EQUAL(o->cut, 2);
	add(o, 1, 5, 7);
	add(o, 0, 6, 3);
	add(o, 1, 5, 8);
	CU_ASSERT_EQUAL(o->used, 6);
	CU_ASSERT(pair_is(o, 0, 1, 2, 2) && pair_is(o, 4, 2, 3, 1) && pair_is(o, 5, 7, 8, 1));

	/* a reset empties everything */
	osp_reset(o, 9);
	CU_ASSERT_EQUAL(o->used, 0);
	CU_ASSERT_EQUAL(o->positions + o->samples + o->cut + o->nact[0] + o->nact[1], 0);
	add(o, 0, 0, 1);
	add(o, 0, 0, 2);
	CU_ASSERT(pair_is(o, 0, 1, 2, 1));
	free(o);
}

/* A long random sequence at rate 1: the list is exactly the pair counts, each once. */
static void test_pairs_exact(void)
{
	enum { SYMS = 40, N = 20000 };
	static uint64_t want[SYMS][SYMS];
	uint64_t s = unit_seed() | 1, prev = 0, distinct = 0, i;
	struct osp *o = make(SYMS * SYMS, 2, 1, s);
	struct osp_subpath sp;
	int ok = 1;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	memset(want, 0, sizeof(want));
	for (i = 0; i < N; i++) {
		uint64_t v = rnd(&s) % 8 ? rnd(&s) % 6 : rnd(&s) % SYMS;	/* skewed */

		add(o, 0, 0, v);
		if (i)
			distinct += !want[prev][v]++;
		prev = v;
	}
	CU_ASSERT_EQUAL(o->tau_log2, 0);
	CU_ASSERT_EQUAL(o->used, distinct);
	CU_ASSERT_EQUAL(o->samples, N - 1);
	for (i = 0; i < o->used; i++) {
		osp_get(o, (uint32_t)i, &sp);
		ok &= sp.len == 2 && sp.val[0] < SYMS && sp.val[1] < SYMS &&
		      sp.count == want[sp.val[0]][sp.val[1]];
		if (ok)
			want[sp.val[0]][sp.val[1]] = 0;	/* a second entry would not match */
	}
	CU_ASSERT(ok);
	free(o);
}

/* At tau 0 every position starts a sample; its length is uniform among the lengths. */
static void test_lengths(void)
{
	enum { N = 60000 };
	struct osp *o = make(1u << 16, 8, 1, unit_seed());
	uint64_t n[9] = { 0 }, i;
	struct osp_subpath sp;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	for (i = 0; i < N; i++) {
		CU_ASSERT_EQUAL(osp_add(o, 0, 1, 3, i), 0);	/* every subpath distinct */
		CU_ASSERT(o->nact[0] < 8);
	}
	CU_ASSERT_EQUAL(o->tau_log2, 0);
	CU_ASSERT_EQUAL(o->used, o->samples);
	CU_ASSERT_EQUAL(o->samples + o->nact[0], N);
	for (i = 0; i < o->used; i++) {
		osp_get(o, (uint32_t)i, &sp);
		CU_ASSERT_EQUAL(sp.count, 1);
		CU_ASSERT_EQUAL(sp.val[sp.len - 1] - sp.val[0], sp.len - 1);	/* consecutive */
		n[sp.len < 9 ? sp.len : 0]++;
	}
	CU_ASSERT_EQUAL(n[0] + n[1] + n[3] + n[5] + n[6] + n[7], 0);
	/* binomial(N, 1/3): sd 115; 6 sd */
	for (i = 2; i <= 8; i *= 2)
		CU_ASSERT(fabs((double)n[i] - N / 3.0) < 6 * sqrt(N * 2.0 / 9));
	free(o);
}

/* Raise tau by filling a small list, then count starts (each cut at once): 2^-tau of positions. */
static void test_rate(void)
{
	enum { N = 1 << 18 };
	struct osp *o = make(16, 2, 1, unit_seed());
	uint64_t i, cut, v = 0;
	uint32_t tau, used;
	double want;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	while (o->tau_log2 < 4)
		add(o, 0, 0, v++);	/* distinct pairs: the list fills and thins */
	CU_ASSERT(o->used < 16);
	osp_cut(o, 0);
	tau = o->tau_log2;
	used = o->used;
	cut = o->cut;
	for (i = 0; i < N; i++) {
		add(o, 0, 0, v++);
		osp_cut(o, 0);	/* the started sample, if any, never completes */
	}
	CU_ASSERT_EQUAL(o->tau_log2, tau);
	CU_ASSERT_EQUAL(o->used, used);
	want = ldexp(N, -(int)tau);
	CU_ASSERT(fabs((double)(o->cut - cut) - want) < 6 * sqrt(want));
	free(o);
}

/*
 * A full list thins: (1 2) and (2 1) counted c times each, (1 3) once,
 * then (3 4) finds it full. When one halving made room (tau 1), (1 2)'s
 * count is a binomial half of c: over many seeds its mean is c/2 and its
 * variance c/4.
 */
static void check_halving(uint64_t c, uint64_t seed)
{
	enum { RUNS = 400 };
	double sum = 0, sum2 = 0, mean, var;
	unsigned int r, once = 0;
	struct osp_subpath sp;
	uint64_t i;

	for (r = 0; r < RUNS; r++) {
		struct osp *o = make(3, 2, 1, seed + r);

		CU_ASSERT_PTR_NOT_NULL_FATAL(o);
		for (i = 0; i < 2 * c + 1; i++)
			add(o, 0, 0, 1 + i % 2);
		add(o, 0, 0, 3);
		CU_ASSERT_EQUAL(o->used, 3);
		CU_ASSERT(pair_is(o, 0, 1, 2, c) && pair_is(o, 1, 2, 1, c) &&
			  pair_is(o, 2, 1, 3, 1));
		add(o, 0, 0, 4);
		/* thinned until there was room, then (3 4): last, count 1 */
		CU_ASSERT(o->tau_log2 >= 1 && o->used <= 3);
		CU_ASSERT(pair_is(o, o->used - 1, 3, 4, 1));
		for (i = 0; i + 1 < o->used; i++) {
			osp_get(o, (uint32_t)i, &sp);
			CU_ASSERT(sp.count >= 1 && sp.count <= c);
		}
		/* one halving made room: (1 3) dropped ((1 2) and (2 1) at c >= 100 never do) */
		if (o->tau_log2 == 1 && o->used == 3) {
			osp_get(o, 0, &sp);
			CU_ASSERT(sp.val[0] == 1 && sp.val[1] == 2);
			sum += (double)sp.count;
			sum2 += (double)sp.count * (double)sp.count;
			once++;
		}
		free(o);
	}
	CU_ASSERT_FATAL(once > RUNS / 4);	/* (1 3) dropped: half the time */
	mean = sum / once;
	var = sum2 / once - mean * mean;
	CU_ASSERT(fabs(mean - c / 2.0) < 6 * sqrt(c / 4.0 / once));
	CU_ASSERT(var > 0.5 * c / 4.0 && var < 1.6 * c / 4.0);
}

static void test_halving(void)
{
	check_halving(100, unit_seed());	/* coin flips */
	check_halving(5000, unit_seed() + 1000);	/* the normal approximation */
}

static void test_estimate_formula(void)
{
	uint64_t c;
	uint32_t t, n;

	for (c = 0; c < 300; c += 7)
		for (t = 0; t < 20; t++)
			for (n = 1; n <= 6; n++) {
				double scale = ldexp(n, (int)t);

				CU_ASSERT_EQUAL(osp_estimate(c, t, n), (uint64_t)(c * scale));
				CU_ASSERT_EQUAL(osp_stderr(c, t, n), (uint64_t)llround(sqrt(c) * scale));
			}
	CU_ASSERT_EQUAL(osp_estimate(3, 62, 3), UINT64_MAX);
	CU_ASSERT_EQUAL(osp_estimate(UINT64_MAX / 2, 1, 3), UINT64_MAX);
	CU_ASSERT_EQUAL(osp_estimate(1, 62, 3), 3ull << 62);
	CU_ASSERT_EQUAL(osp_stderr(4, 62, 3), UINT64_MAX);
	CU_ASSERT_EQUAL(osp_stderr(4, 61, 1), 1ull << 62);	/* sqrt(4) x 2^61 */
	/* beyond 64 bits under the root: within 2^-30 */
	CU_ASSERT(fabs((double)osp_stderr(2, 40, 3) / (sqrt(2) * ldexp(3, 40)) - 1) < ldexp(1, -30));
	CU_ASSERT(fabs((double)osp_stderr(12345, 50, 6) / (sqrt(12345) * ldexp(6, 50)) - 1) <
		  ldexp(1, -30));
	CU_ASSERT_EQUAL(osp_stderr(1, 0, 0), 0);
}

/*
 * A simulated path-end stream: a Markov chain over NS (func, path) path
 * ends with skewed transitions, one owner. The exact counts of its runs of
 * 2, 4 and 8 (keyed by the states, 4 bits each) are the oracle.
 */
#define NS 12
#define STREAM 100000
#define TOPK 10

struct exact {
	uint64_t *key, *count;
	uint64_t cap;
};

static uint64_t *exact_slot(struct exact *x, uint64_t key)
{
	uint64_t i = (key * 0x9e3779b97f4a7c15ull) >> 40;

	for (i &= x->cap - 1; x->key[i] && x->key[i] != key; i = (i + 1) & (x->cap - 1))
		;
	x->key[i] = key;
	return &x->count[i];
}

static uint64_t run_key(const uint8_t *st, uint32_t len)
{
	uint64_t k = len;
	uint32_t i;

	for (i = 0; i < len; i++)
		k = k << 4 | st[i];
	return k;
}

/* E[sqrt(X)], X Poisson of mean m (a sampled count's law, near enough) */
static double mean_sqrt_poisson(double m)
{
	double p = exp(-m), e = 0;
	unsigned int x;

	for (x = 1; x < 40 + 4 * m; x++) {
		p *= m / x;
		e += p * sqrt(x);
	}
	return e;
}

static void test_estimates(void)
{
	static uint8_t st[STREAM];
	struct exact x = { .cap = 1u << 20 };
	uint64_t s = unit_seed() * 3 + 1, top[TOPK] = { 0 }, topn[TOPK] = { 0 }, i, j;
	double zsum = 0, z2sum = 0, ratio = 0, want_ratio = 0;
	unsigned int run, nz = 0, within = 0;
	uint8_t next[NS][4];
	uint32_t len, k;

	x.key = calloc(x.cap, sizeof(*x.key));
	x.count = calloc(x.cap, sizeof(*x.count));
	CU_ASSERT_FATAL(x.key && x.count);
	for (i = 0; i < NS; i++)
		for (j = 0; j < 4; j++)
			next[i][j] = rnd(&s) % NS;
	for (i = 0; i < STREAM; i++) {	/* the likeliest successor 5 times in 8 */
		uint64_t r = rnd(&s) % 8;

		st[i] = i ? next[st[i - 1]][r < 5 ? 0 : r - 4] : 0;
	}
	for (len = 2; len <= 8; len *= 2)
		for (i = 0; i + len <= STREAM; i++)
			++*exact_slot(&x, run_key(st + i, len));
	for (i = 0; i < x.cap; i++)	/* the exact top k */
		for (k = 0; k < TOPK; k++)
			if (x.count[i] > topn[k]) {
				memmove(top + k + 1, top + k, (TOPK - 1 - k) * sizeof(*top));
				memmove(topn + k + 1, topn + k, (TOPK - 1 - k) * sizeof(*topn));
				top[k] = x.key[i];
				topn[k] = x.count[i];
				break;
			}
	CU_ASSERT_FATAL(topn[TOPK - 1] > 1000);
	for (run = 0; run < 60; run++) {
		struct osp *o = make(256, 8, 1, s + run * 7919);
		uint64_t sampled[TOPK] = { 0 }, total = 0;
		struct osp_subpath sp;
		double scale;

		CU_ASSERT_PTR_NOT_NULL_FATAL(o);
		for (i = 0; i < STREAM; i++)
			if (osp_add(o, 0, 1, 1000 + st[i] / 4, st[i] % 4 + 10 * (st[i] / 4)))
				CU_FAIL("a sample could not start");
		CU_ASSERT(o->used <= 256 && o->tau_log2 > 0);
		for (i = 0; i < o->used; i++) {
			uint8_t run_st[8];

			osp_get(o, (uint32_t)i, &sp);
			total += sp.count;
			for (k = 0; k < sp.len; k++)
				run_st[k] = (uint8_t)(4 * (sp.func[k] - 1000) + sp.val[k] % 10);
			for (k = 0; k < TOPK; k++)
				if (run_key(run_st, sp.len) == top[k])
					sampled[k] = sp.count;
			CU_ASSERT(*exact_slot(&x, run_key(run_st, sp.len)) > 0);	/* real */
		}
		CU_ASSERT(total <= o->samples);
		scale = ldexp(o->nlens, (int)o->tau_log2);
		for (k = 0; k < TOPK; k++) {
			double est = (double)osp_estimate(sampled[k], o->tau_log2, o->nlens);
			double m = topn[k] / scale;	/* expected sampled count */
			double sd = sqrt(topn[k] * scale * (1 - 1 / scale));

			/* Chernoff, eps 1e-6, as test_out_subpaths.c */
			within += fabs(sampled[k] - m) <= sqrt(3.0 * log(2.0 * TOPK / 1e-6) / m) * m + 1;
			zsum += (est - topn[k]) / sd;
			z2sum += (est - topn[k]) * (est - topn[k]) / (sd * sd);
			ratio += (double)osp_stderr(sampled[k], o->tau_log2, o->nlens) / sd;
			want_ratio += mean_sqrt_poisson(m) * scale / sd;
			nz++;
		}
		free(o);
	}
	CU_ASSERT_EQUAL(within, nz);
	/* unbiased, with the binomial variance: z of mean 0 and variance 1 */
	CU_ASSERT(fabs(zsum / nz) < 0.3);
	CU_ASSERT(z2sum / nz > 0.7 && z2sum / nz < 1.4);
	/*
	 * The reported standard error, sqrt(sampled) x scale, against the
	 * estimate's: below it by what E[sqrt(sampled)] is below sqrt(m).
	 */
	CU_ASSERT(fabs(ratio / want_ratio - 1) < 0.06);
	fprintf(stderr, "[osp_core: %u estimates, z mean %.3f var %.3f, stderr / sd %.3f (%.3f)] ",
		nz, zsum / nz, z2sum / nz - (zsum / nz) * (zsum / nz), ratio / nz, want_ratio / nz);
	free(x.key);
	free(x.count);
}

UNIT_SUITE(osp_core,
	   { "sizes out of range are refused", test_sizes },
	   { "a known sequence: pairs, cuts, owners, contexts, reset", test_known_sequence },
	   { "at rate 1 the list is the exact pair counts", test_pairs_exact },
	   { "every position starts a sample at tau 0; lengths uniform", test_lengths },
	   { "a position starts a sample with probability 2^-tau", test_rate },
	   { "a full list thins each count to a binomial half", test_halving },
	   { "estimates and standard errors: the formula", test_estimate_formula },
	   { "estimates against exact counts of a simulated path-end stream", test_estimates })
