/* SPDX-License-Identifier: GPL-2.0 */
/*
 * osp_core - online subpath profiling (Oren, Matias & Sagiv 2002): the
 * sampler and the hot list, one implementation for the module (kmod/osp.c:
 * runs of path ends, per CPU) and for pathregen (regen/out_subpaths.c: runs
 * of blocks of a regenerated stream). Freestanding: no allocation, no libc,
 * no kernel call; the caller gives the memory (osp_size()) and does any
 * locking.
 *
 * A position is one element of a sequence: a (func, val) pair, a path end
 * (func_id, Ball-Larus number) or a block (func_id, block). Positions come
 * in contexts, each with an owner (the kernel's task, softirq and hardirq of
 * a CPU; pathregen's one stream); a subpath is a run of len consecutive
 * positions of one context and owner, len a power of two from 2 to max_len.
 *
 * A position starts a sample with probability 2^-tau_log2 (a random bit
 * mask, no division) and a length drawn uniformly among the nlens lengths;
 * the sample collects the positions that follow and, once complete, counts
 * in the hot list. When the list is full, tau_log2 grows by one and each
 * count is thinned to a binomial half (Gibbons & Matias' concise samples):
 * memory stays bounded by the entries and the list stays a uniform sample
 * of everything seen. A subpath's count is estimated as its sampled count x
 * 2^tau_log2 x nlens, with the binomial standard error sqrt(sampled) x
 * 2^tau_log2 x nlens (osp_estimate(), osp_stderr()). A change of owner, or
 * osp_cut(), drops the context's samples in flight (counted in cut).
 */
#ifndef PT_OSP_CORE_H
#define PT_OSP_CORE_H

#ifdef __KERNEL__
#include <linux/stddef.h>
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

#define OSP_MAX_LEN		64		/* longest subpath, in positions */
#define OSP_MAX_ENTRIES		(1u << 24)	/* largest hot list */
#define OSP_MAX_CONTEXTS	16

/*
 * The state, at the start of the caller's memory (osp_init()). The fields
 * are for reading; only the osp_* functions change them.
 */
struct osp {
	uint64_t rng;		/* xorshift64, never 0 */
	uint64_t positions;	/* positions seen */
	uint64_t samples;	/* completed samples counted in the list */
	uint64_t cut;		/* samples dropped in flight (owner change, osp_cut) */
	uint32_t tau_log2;	/* a position starts a sample with probability 2^-tau_log2 */
	uint32_t used;		/* entries in the list */
	uint32_t entries;	/* the list's capacity */
	uint32_t max_len;	/* longest subpath: a power of two, 2 .. OSP_MAX_LEN */
	uint32_t nlens;		/* lengths 2, 4, .. max_len */
	uint32_t contexts;
	uint32_t stride;	/* 64-bit words a subpath takes (osp_core.c) */
	uint32_t slot_mask;	/* hash index slots - 1 */
	uint32_t *slot;		/* list index + 1 by hash, 0: empty */
	uint64_t *owner;	/* per context: whose positions its samples collect */
	uint32_t *nact;		/* per context: samples in flight */
	uint64_t *act;		/* per context: max_len samples in flight */
	uint64_t *list;		/* entries subpaths */
};

/* One subpath of the list, as osp_get() shows it. */
struct osp_subpath {
	uint64_t count;		/* sampled occurrences */
	uint32_t len;		/* positions in it */
	const uint32_t *func;	/* func of each position (len of them) */
	const uint64_t *val;	/* val of each */
};

/*
 * Bytes of memory a profiler needs (8-byte aligned) for a list of
 * `entries` subpaths of up to `max_len` positions in `contexts` contexts,
 * or 0 if those are out of range: entries 1 .. OSP_MAX_ENTRIES, max_len a power of
 * two 2 .. OSP_MAX_LEN, contexts 1 .. OSP_MAX_CONTEXTS.
 */
size_t osp_size(uint32_t entries, uint32_t max_len, uint32_t contexts);

/*
 * Lays a profiler out in mem (osp_size() bytes, 8-byte aligned) and resets
 * it with seed. Returns it, or NULL if the sizes are out of range.
 */
struct osp *osp_init(void *mem, uint32_t entries, uint32_t max_len, uint32_t contexts,
		     uint64_t seed);

/* Empties the list and the samples in flight; the random state starts from seed. */
void osp_reset(struct osp *o, uint64_t seed);

/*
 * One position of context ctx (< contexts), owned by owner: extends the
 * context's samples in flight (counting the completed ones in the list)
 * and maybe starts one. Returns 0, or -1 if a sample could not start
 * because max_len are in flight (cannot happen: counted in cut).
 */
int osp_add(struct osp *o, uint32_t ctx, uint64_t owner, uint32_t func, uint64_t val);

/* Drops context ctx's samples in flight (a gap in its sequence): counted in cut. */
void osp_cut(struct osp *o, uint32_t ctx);

/* Entry i (< used) of the list; its arrays stay valid until the next osp_add(). */
void osp_get(const struct osp *o, uint32_t i, struct osp_subpath *sp);

/* A subpath's 64-bit hash (its positions and its length). */
uint64_t osp_hash(const uint32_t *func, const uint64_t *val, uint32_t len);

/* Estimated count of a subpath sampled times: sampled x 2^tau_log2 x nlens (saturating). */
uint64_t osp_estimate(uint64_t sampled, uint32_t tau_log2, uint32_t nlens);

/*
 * Its standard error, sqrt(sampled) x 2^tau_log2 x nlens (saturating): to
 * the nearest integer while sampled x nlens^2 x 4^tau_log2 fits in 64 bits,
 * else within 2^-30 of it.
 */
uint64_t osp_stderr(uint64_t sampled, uint32_t tau_log2, uint32_t nlens);

#endif
