/* SPDX-License-Identifier: GPL-2.0 */
/*
 * quiet_calls - direct calls into untraced code that can never run traced
 * code in the caller's context, so they need not be call vertices.
 *
 * A call vertex blocks the caller's path (its witnesses must be out before
 * a callee's ENTER can interleave). A callee that is not traced, and from
 * which no traced function can run on the caller's stream before it
 * returns, cannot interleave anything: the call is a plain instruction for
 * the encoding (no blocking witness, no path end). Proven on the live code
 * by a bounded search of the callee's own CFG and its callees': it is
 * quiet when it is not traced and every instruction it can reach is a
 * plain one, a branch inside it, a return, or a direct call or tail call
 * to a quiet function. Anything else makes it loud: an indirect call or
 * jump, a BUG or WARN trap (its report runs printk and more), an
 * exception-table fixup (a fault on user memory runs the page-fault
 * handler in the same task), a callee outside every known function, a CFG
 * the recovery refuses, or a search that runs past its bounds. Functions
 * in .sched.text are taken as quiet without looking inside: a task can be
 * preempted at any instruction, traced or not, so tracing the scheduler
 * already interleaves anywhere, and pathtrace assumes it is not traced.
 * Interrupts and softirqs run under owners of their own (docs/runtime.md).
 */
#ifndef PATHTRACE_QUIET_CALLS_H
#define PATHTRACE_QUIET_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include <pathtrace/cfg.h>
#include <pathtrace/ksyms.h>

struct quiet_calls;

/*
 * Starts an analysis over the live kernel k with the traced functions'
 * entry addresses (any order; copied). Returns 0 or -PT_ENOMEM.
 */
int quiet_calls_open(struct klive *k, const uint64_t *traced, size_t ntraced,
		     struct quiet_calls **out);
void quiet_calls_close(struct quiet_calls *q);

/*
 * 1 if a call to target (a function's entry) is quiet, 0 if not or
 * unknown, -PT_ENOMEM. Results are remembered.
 */
int quiet_call(struct quiet_calls *q, uint64_t target);

/*
 * Why a call to target is not quiet, for a human: into buf (len bytes,
 * truncated, NUL-terminated) the chain of loud callees the proof met
 * first and the reason it ends in, e.g. "f+0x0 -> g+0x0: an indirect
 * call at g+0x1c". Returns 0 (loud, buf says why), 1 (quiet, buf empty),
 * -PT_ENOENT when no quiet_call() looked at target, -PT_EINVAL when len
 * is 0. Only the first reason: a loud function may have several.
 */
int quiet_call_why(struct quiet_calls *q, uint64_t target, char *buf, size_t len);

/*
 * Marks c's quiet call blocks: clears CFG_BF_CALL and sets
 * CFG_BF_QUIET_CALL on each block ending in a direct call to a quiet
 * function. Returns how many it marked, or -PT_ENOMEM.
 */
int quiet_calls_mark(struct quiet_calls *q, struct cfg *c);

/*
 * 1 if fn (an entry address) is target itself or reachable from the quiet
 * function target by the calls the proof followed, else 0: tracing fn
 * would break a plan that took a call to target as quiet.
 */
int quiet_call_reaches(struct quiet_calls *q, uint64_t target, uint64_t fn);

#endif
