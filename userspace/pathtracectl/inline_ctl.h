/* SPDX-License-Identifier: GPL-2.0 */
/*
 * enable --inline and disable's side of it (docs/inline.md): copies of the
 * targets in a generated livepatch module, loaded and switched over before
 * any plan is made; removed when the last plan goes.
 */
#ifndef PATHTRACECTL_INLINE_CTL_H
#define PATHTRACECTL_INLINE_CTL_H

#include <stdint.h>

#include <pathtrace/inline.h>
#include <pathtrace/ksyms.h>
#include <pathtrace/static_calls.h>

#include "pathtrace_abi.h"

struct inline_target {
	uint32_t sym;		/* in: the original's text symbol; out: the copy's */
	uint64_t orig;		/* out: the original's address */
	const char *refusal;	/* out: a tag when refused (reported already) */
	/*
	 * in: an edges plan to carry as code (docs/inline.md, "Counters
	 * (edges mode)"), or edge_counter NULL for a plain copy: per CFG edge
	 * its counter or INLINE_NONE, the activations' counter, how many
	 */
	const uint32_t *edge_counter;
	uint32_t nedges, entry_counter, ncounters;
	uint64_t counter_off;	/* out: its counters' offset (PT_ADD_INLINE) */
	/*
	 * in: a probe plan's sites to carry as calls (docs/inline.md, "Sites
	 * as calls"): its probes, one per address; NULL for none
	 */
	const struct inline_site *sites;
	uint32_t nsites;
	/* out, with sites: the copy and its address table (PT_ADD_INLINE_SITES) */
	uint64_t copy_addr;
	uint32_t copy_len;
	struct pt_inline_addr *map;	/* owned by the caller once out: free() */
	uint32_t nmap;
};

/*
 * Copies the n targets (their symbols in k), writes the module from
 * template, loads it, waits for livepatch's transition, then adds the
 * copies to k's symbols (klive_module_loaded) and checks each copy's CFG
 * against its original's (a copy carrying counters: its loaded bytes
 * against the module's). Targets that cannot be copied are refused (one
 * line each on stdout); when the module cannot be loaded or the
 * transition does not finish, all are. The copies' static-call sites
 * are added to sc (vmlinux's, with their keys: what the copies'
 * .static_call_sites entries name). Returns 0, or 1 for an error
 * already reported (the module is not loaded then).
 */
int inline_enable(struct klive *k, const char *template, struct static_calls *sc,
		  struct inline_target *t, uint32_t n);

/*
 * What inline_enable would refuse of the n targets, found as it finds it
 * (each refusal printed and in t[i].refusal), with nothing written or
 * loaded. Returns how many it refused, or -PT_ENOMEM.
 */
int inline_refusals(struct klive *k, struct static_calls *sc, struct inline_target *t,
		    uint32_t n);

/* 1 when the generated module is loaded. */
int inline_loaded(void);

/*
 * How long enable waits for livepatch's switch-over, and disable (by
 * default) for the switch back, in seconds.
 */
#define INLINE_WAIT_S 120

/*
 * Disables the livepatch, waits up to wait_s seconds until every task has
 * left the copies, and unloads the module. When tasks stay inside a copy,
 * the module stays loaded (nothing is forced): each such task is reported
 * with its stack. Returns 0, or 1 (reported).
 */
int inline_remove(int wait_s);

#endif
