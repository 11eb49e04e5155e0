/* SPDX-License-Identifier: GPL-2.0 */
/*
 * entry_witness - which direct calls a callee's ENTER can witness
 * (encoding.h, "ENTRY WITNESSES").
 *
 * A call vertex V whose direct callee G is traced needs no bits of its own
 * in witness mode only if G's activation is all that V's call can put in
 * the stream: exactly one ENTER (G's, returning after V) and, when G
 * leaves through tail calls, the chained ENTERs of traced targets. Once a
 * tail call reaches untraced or indirect code, that code may call any
 * number of traced functions at V's position, so V must stay a branch
 * point. G is *closed* when every tail call it makes goes to a traced,
 * closed function (a greatest fixpoint: tail-call cycles among traced
 * functions stay closed).
 *
 * The planner and the regenerator compute the same closure over the same
 * set of traced functions: the planner over what it enables (and what is
 * already enabled), pathregen over the functions the trace holds.
 */
#ifndef PATHTRACE_ENTRY_WITNESS_H
#define PATHTRACE_ENTRY_WITNESS_H

#include <stdint.h>

#include <pathtrace/cfg.h>

#define ENTRY_TAIL_OPEN UINT32_MAX	/* a tail call to untraced or indirect code */

/*
 * n traced functions; function i's tail calls are tail_to[tail_start[i] ..
 * tail_start[i + 1]), each the index of a traced function or
 * ENTRY_TAIL_OPEN. Sets closed[i] (n entries) to 1 or 0. Returns 0;
 * -PT_EINVAL for an index >= n.
 */
int entry_closed(uint32_t n, const uint32_t *tail_start, const uint32_t *tail_to,
		 uint8_t *closed);

/* The index i of the traced function with addr[i] == a (a != 0), or ENTRY_TAIL_OPEN. */
uint32_t entry_index_of(uint32_t n, const uint64_t *addr, uint64_t a);

/*
 * The same for n traced functions given by their CFGs (c[i]; addr[i] is
 * the function's address, what a direct call or a jmp to it targets): a
 * tail call to an address that is no addr[j] is open. Returns 0;
 * -PT_ENOMEM.
 */
int entry_closed_cfgs(uint32_t n, const struct cfg *const *c, const uint64_t *addr,
		      uint8_t *closed);

/*
 * The entry witnesses of c (ewit: c->nblocks + 1 entries, indexed by
 * graph vertex = block): the call blocks whose direct call goes to one of
 * the n traced functions at addr[] that is closed.
 */
void entry_witnessed_calls(const struct cfg *c, uint32_t n, const uint64_t *addr,
			   const uint8_t *closed, uint8_t *ewit);

#endif
