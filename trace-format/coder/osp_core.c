// SPDX-License-Identifier: GPL-2.0
/*
 * osp_core.c - online subpath profiling's sampler and hot list; see
 * osp_core.h. Built into the module (kmod/osp_core.c) and into the
 * userspace library: no allocation, no library call, and bounded work per
 * position apart from the thinning of a full list (bounded per entry). A
 * completed sample finds its entry through a hash index.
 *
 * A subpath is stored as osp->stride 64-bit words: its count (sampled
 * occurrences; in flight, the positions it has so far), its length, its
 * max_len vals, then its max_len funcs two to a word.
 */
#include "osp_core.h"

#define OSP_COUNT	0
#define OSP_LEN		1
#define OSP_VAL		2
#define OSP_U64_MAX	(~0ull)

static size_t osp_align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static uint32_t osp_slots(uint32_t entries)
{
	uint32_t n = 1;

	while (n < 2 * entries)	/* at least twice the list: short probe chains */
		n <<= 1;
	return n;
}

static uint32_t osp_stride(uint32_t max_len)
{
	return OSP_VAL + max_len + max_len / 2;
}

static bool osp_sizes_ok(uint32_t entries, uint32_t max_len, uint32_t contexts)
{
	return entries && entries <= OSP_MAX_ENTRIES && max_len >= 2 &&
	       max_len <= OSP_MAX_LEN && !(max_len & (max_len - 1)) &&
	       contexts && contexts <= OSP_MAX_CONTEXTS;
}

size_t osp_size(uint32_t entries, uint32_t max_len, uint32_t contexts)
{
	size_t words;

	if (!osp_sizes_ok(entries, max_len, contexts))
		return 0;
	words = contexts + ((size_t)contexts * max_len + entries) * osp_stride(max_len);
	return osp_align8(sizeof(struct osp)) + words * sizeof(uint64_t) +
	       osp_align8(contexts * sizeof(uint32_t)) +
	       osp_align8(osp_slots(entries) * sizeof(uint32_t));
}

struct osp *osp_init(void *mem, uint32_t entries, uint32_t max_len, uint32_t contexts,
		     uint64_t seed)
{
	struct osp *o = mem;
	uint64_t *w;
	uint32_t len;

	if (!osp_sizes_ok(entries, max_len, contexts))
		return NULL;
	o->entries = entries;
	o->max_len = max_len;
	o->contexts = contexts;
	o->nlens = 0;
	for (len = 2; len <= max_len; len *= 2)
		o->nlens++;
	o->stride = osp_stride(max_len);
	o->slot_mask = osp_slots(entries) - 1;
	w = (uint64_t *)((char *)mem + osp_align8(sizeof(*o)));
	o->owner = w;
	o->act = w + contexts;
	o->list = o->act + (size_t)contexts * max_len * o->stride;
	o->nact = (uint32_t *)(o->list + (size_t)entries * o->stride);
	o->slot = (uint32_t *)((char *)o->nact + osp_align8(contexts * sizeof(uint32_t)));
	osp_reset(o, seed);
	return o;
}

void osp_reset(struct osp *o, uint64_t seed)
{
	uint32_t i;

	for (i = 0; i < o->contexts; i++) {
		o->owner[i] = 0;
		o->nact[i] = 0;
	}
	for (i = 0; i <= o->slot_mask; i++)
		o->slot[i] = 0;
	o->rng = seed | 1;
	o->positions = 0;
	o->samples = 0;
	o->cut = 0;
	o->tau_log2 = 0;
	o->used = 0;
}

static uint64_t osp_rand(struct osp *o)
{
	uint64_t x = o->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	o->rng = x;
	return x;
}

static uint32_t osp_popcount(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

/* floor(sqrt(x)) */
static uint64_t osp_sqrt(uint64_t x)
{
	uint64_t r = 0, bit = 1ull << 62;

	while (bit > x)
		bit >>= 2;
	for (; bit; bit >>= 2) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
	}
	return r;
}

static uint64_t *osp_rec(const struct osp *o, uint64_t *base, uint32_t i)
{
	return base + (size_t)i * o->stride;
}

static uint32_t *osp_func(const struct osp *o, uint64_t *rec)
{
	return (uint32_t *)(rec + OSP_VAL + o->max_len);
}

static void osp_copy(const struct osp *o, uint64_t *dst, const uint64_t *src)
{
	uint32_t i;

	for (i = 0; i < o->stride; i++)
		dst[i] = src[i];
}

static bool osp_same(const struct osp *o, uint64_t *a, uint64_t *b)
{
	const uint32_t *fa = osp_func(o, a), *fb = osp_func(o, b);
	uint32_t i, len = (uint32_t)a[OSP_LEN];

	if (a[OSP_LEN] != b[OSP_LEN])
		return false;
	for (i = 0; i < len; i++)
		if (fa[i] != fb[i] || a[OSP_VAL + i] != b[OSP_VAL + i])
			return false;
	return true;
}

uint64_t osp_hash(const uint32_t *func, const uint64_t *val, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ len;
	uint32_t i;

	for (i = 0; i < len; i++) {
		h ^= ((uint64_t)func[i] << 32) ^ val[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

/* The slot where the subpath rec is, or the empty one where it would go. */
static uint32_t *osp_find(struct osp *o, uint64_t *rec)
{
	uint64_t h = osp_hash(osp_func(o, rec), rec + OSP_VAL, (uint32_t)rec[OSP_LEN]);

	for (;; h++) {
		uint32_t *slot = &o->slot[h & o->slot_mask];

		if (!*slot || osp_same(o, osp_rec(o, o->list, *slot - 1), rec))
			return slot;
	}
}

/*
 * Binomial(c, 1/2) with bounded work: by coin flips (popcount of random
 * bits) up to 1024, beyond by its normal approximation, the sum of 12
 * uniform draws (an Irwin-Hall variate).
 */
static uint64_t osp_half(struct osp *o, uint64_t c)
{
	int64_t z = -6 * 65536;
	uint64_t n = 0;
	int i;

	if (c > 1024) {
		for (i = 0; i < 3; i++) {
			uint64_t r = osp_rand(o);

			z += (r & 0xffff) + (r >> 16 & 0xffff) + (r >> 32 & 0xffff) + (r >> 48);
		}
		/* c/2 + z * sqrt(c)/2, z of mean 0 and variance 1 (scaled by 2^16) */
		return c / 2 + (z * (int64_t)osp_sqrt(c)) / (2 * 65536);
	}
	for (; c >= 64; c -= 64)
		n += osp_popcount(osp_rand(o));
	if (c)
		n += osp_popcount(osp_rand(o) & ((1ull << c) - 1));
	return n;
}

/* Each sampled occurrence stays with probability 1/2; empty entries go. */
static void osp_thin(struct osp *o)
{
	uint32_t i, kept = 0;

	if (o->tau_log2 < 62)	/* beyond, a sample every 2^62 positions: never */
		o->tau_log2++;
	for (i = 0; i < o->used; i++) {
		uint64_t *rec = osp_rec(o, o->list, i);
		uint64_t n = osp_half(o, rec[OSP_COUNT]);

		if (!n)
			continue;
		if (kept != i)
			osp_copy(o, osp_rec(o, o->list, kept), rec);
		osp_rec(o, o->list, kept++)[OSP_COUNT] = n;
	}
	o->used = kept;
	for (i = 0; i <= o->slot_mask; i++)
		o->slot[i] = 0;
	for (i = 0; i < kept; i++)
		*osp_find(o, osp_rec(o, o->list, i)) = i + 1;
}

/* A completed sample counts in the list. */
static void osp_count(struct osp *o, uint64_t *rec)
{
	uint32_t *slot = osp_find(o, rec);

	o->samples++;
	if (*slot) {
		osp_rec(o, o->list, *slot - 1)[OSP_COUNT]++;
		return;
	}
	/* Full: sample more sparsely until there is room (a uniform sample still). */
	if (o->used == o->entries) {
		while (o->used == o->entries)
			osp_thin(o);
		slot = osp_find(o, rec);
	}
	osp_copy(o, osp_rec(o, o->list, o->used), rec);
	osp_rec(o, o->list, o->used++)[OSP_COUNT] = 1;
	*slot = o->used;
}

int osp_add(struct osp *o, uint32_t ctx, uint64_t owner, uint32_t func, uint64_t val)
{
	uint64_t *act = osp_rec(o, o->act, ctx * o->max_len);
	uint32_t i, k, n = o->nact[ctx];
	uint64_t r, *rec;

	if (o->owner[ctx] != owner) {
		o->cut += n;
		n = 0;
		o->owner[ctx] = owner;
	}
	o->positions++;
	for (i = 0, k = 0; i < n; i++) {
		rec = osp_rec(o, act, i);
		osp_func(o, rec)[rec[OSP_COUNT]] = func;
		rec[OSP_VAL + rec[OSP_COUNT]++] = val;
		if (rec[OSP_COUNT] == rec[OSP_LEN]) {
			osp_count(o, rec);
			continue;
		}
		if (k != i)
			osp_copy(o, osp_rec(o, act, k), rec);
		k++;
	}
	o->nact[ctx] = k;
	r = osp_rand(o);
	if (r & ((1ull << o->tau_log2) - 1))
		return 0;
	/* never full: one sample starts a position, and lives at most max_len of them */
	if (k == o->max_len) {
		o->cut++;
		return -1;
	}
	rec = osp_rec(o, act, k);
	rec[OSP_LEN] = 2u << ((uint32_t)(r >> 40) % o->nlens);
	rec[OSP_COUNT] = 1;
	osp_func(o, rec)[0] = func;
	rec[OSP_VAL] = val;
	o->nact[ctx] = k + 1;
	return 0;
}

void osp_cut(struct osp *o, uint32_t ctx)
{
	o->cut += o->nact[ctx];
	o->nact[ctx] = 0;
}

void osp_get(const struct osp *o, uint32_t i, struct osp_subpath *sp)
{
	uint64_t *rec = osp_rec(o, o->list, i);

	sp->count = rec[OSP_COUNT];
	sp->len = (uint32_t)rec[OSP_LEN];
	sp->func = osp_func(o, rec);
	sp->val = rec + OSP_VAL;
}

uint64_t osp_estimate(uint64_t sampled, uint32_t tau_log2, uint32_t nlens)
{
	uint64_t scaled;

	if (!sampled || !nlens)
		return 0;
	if (tau_log2 >= 64 || sampled > OSP_U64_MAX / nlens)
		return OSP_U64_MAX;
	scaled = sampled * nlens;
	if (scaled > OSP_U64_MAX >> tau_log2)
		return OSP_U64_MAX;
	return scaled << tau_log2;
}

/*
 * sqrt(sampled x nlens^2 x 4^tau_log2): the root of sampled x nlens^2 with
 * as many of the tau_log2 doublings under the root as fit in 64 bits (to
 * keep the fraction), the rest applied after rounding.
 */
uint64_t osp_stderr(uint64_t sampled, uint32_t tau_log2, uint32_t nlens)
{
	uint64_t v, r;
	uint32_t k = 0;

	if (!sampled || !nlens)
		return 0;
	if (tau_log2 >= 64 || sampled > OSP_U64_MAX / nlens / nlens)
		return OSP_U64_MAX;
	v = sampled * nlens * nlens;
	while (k < tau_log2 && k < 31 && v <= OSP_U64_MAX >> 2 * (k + 1))
		k++;
	v <<= 2 * k;
	r = osp_sqrt(v);
	r += v - r * r > r;	/* to the nearest */
	if (r > OSP_U64_MAX >> (tau_log2 - k))
		return OSP_U64_MAX;
	return r << (tau_log2 - k);
}
