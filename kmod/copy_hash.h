/* SPDX-License-Identifier: GPL-2.0 */
/*
 * copy_hash.h - the hashes of the addresses in the inline copies a call
 * returns to (ranges.c builds and publishes them; a staged site's run
 * reads the sites' one in its loop, handlers.c).
 */
#ifndef PT_COPY_HASH_H
#define PT_COPY_HASH_H

#include <linux/hash.h>
#include <linux/rcupdate.h>

struct pt_probe;

/*
 * An address in an inline copy some call returns to: in the sites' hash a
 * site's call (its probe), in the places' hash a call of the original's
 * code (the original's return address). A site that follows a call has
 * its address in both.
 */
struct pt_copy_addr {
	unsigned long copy;	/* 0: an empty slot; written last (release) */
	union {
		struct pt_probe *pp;	/* sites: NULL once its plan is gone */
		unsigned long orig;	/* places: 0 once its plan is gone */
	};
};

/* Open addressing, linear probing; never more than half the slots taken. */
struct pt_copy_hash {
	struct rcu_head rcu;
	unsigned int bits;
	unsigned long used;	/* slots with a key, live or not */
	struct pt_copy_addr slot[];
};

/* @addr's slot in @h: its own, or the empty one it would take. */
static inline struct pt_copy_addr *pt_hash_slot(struct pt_copy_hash *h, unsigned long addr)
{
	unsigned long mask = (1ul << h->bits) - 1;
	unsigned long i = hash_long(addr, h->bits);
	unsigned long key;

	/* pairs with pt_hash_put's release: a key seen, its entry is */
	while ((key = smp_load_acquire(&h->slot[i].copy)) && key != addr)
		i = (i + 1) & mask;
	return &h->slot[i];
}

/* @addr's entry in @h, or NULL; preemption off. */
static inline const struct pt_copy_addr *pt_copy_hash_find(struct pt_copy_hash *h,
							   unsigned long addr)
{
	const struct pt_copy_addr *e = pt_hash_slot(h, addr);

	return e->copy ? e : NULL;
}

/*
 * The probe of the site whose call returns to @ret in the sites' hash @h
 * (pt_ranges_sites), or NULL; preemption off.
 */
static inline struct pt_probe *pt_copy_hash_site(struct pt_copy_hash *h, unsigned long ret)
{
	const struct pt_copy_addr *e = pt_copy_hash_find(h, ret);

	return e ? READ_ONCE(e->pp) : NULL;
}

/* The sites' hash, published by ranges.c. */
extern struct pt_copy_hash __rcu *pt_site_hash;

/* The sites' hash, or NULL; preemption off. */
static inline struct pt_copy_hash *pt_ranges_sites(void)
{
	return rcu_dereference_sched(pt_site_hash);
}

/* The probe of the site whose call in an inline copy returns to @ret, or NULL; preemption off. */
static inline struct pt_probe *pt_ranges_site(unsigned long ret)
{
	struct pt_copy_hash *h = pt_ranges_sites();

	return h ? pt_copy_hash_site(h, ret) : NULL;
}

#endif
