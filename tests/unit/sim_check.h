/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim_check - glue between the simulator (tests/oracle/sim.h) and the
 * regeneration engine for tests: regen_funcs for a simulated program, and
 * the comparison of regenerated events with the simulator's truth. Any mode
 * can use it: pass that mode's decoder ops and models.
 */
#ifndef PT_SIM_CHECK_H
#define PT_SIM_CHECK_H

#include <stddef.h>

#include "sim.h"

#include "regen.h"

/*
 * Fills *fs with one regen_func per traced function of p (array in *arr,
 * simc_funcs_free it): ops, and model = models[i] if models is non-NULL,
 * else &p->funcs[i].enc; with the witness decoder, its word lookup and free
 * edges as pathregen binds them. Returns 0 or -PT_ENOMEM.
 */
int simc_funcs(const struct sim_program *p, const struct regen_decoder_ops *ops,
	       const void *const *models, struct regen_func **arr, struct regen_funcs *fs);

/* Frees simc_funcs' array of n functions (fs->nfuncs) and what it built. */
void simc_funcs_free(struct regen_func *arr, uint32_t n);

/* What simc_compare accepts besides an exact match. */
#define SIMC_TRUNCATED (1u << 0)	/* the run stopped early: truth is a prefix */

/*
 * Regenerates s and compares event by event with t. Equal means: the
 * events are the truth's; or (regen.h: nothing after the last evidence is
 * guessed) a prefix of the truth, then TRUNCATED naming the innermost open
 * activation at its last reported block, after every bit was read, with no
 * ENTER of the truth left out and no event that happened before the
 * stream's last bit (a later bit proves it) left out. A complete run may end so only when its
 * last events needed no bits. A stopped run (SIMC_TRUNCATED) never
 * regenerates past its truth but for the EXIT of an edge into EXIT that
 * emitted; it may also end in a GAP(-PT_EMISMATCH) (stopped between a call
 * vertex and its callee's ENTER). Returns 0 when equal; -PT_EMISMATCH with
 * msg describing the first difference; -PT_ENOMEM. *nev gets the number of
 * events regenerated (may be NULL).
 */
int simc_compare(const struct regen_funcs *fs, const struct sim_stream *s,
		 const struct sim_truth *t, uint32_t flags, char *msg, size_t len, uint32_t *nev);

#endif
