/* SPDX-License-Identifier: GPL-2.0 */
/*
 * noreturn - kernel functions that never return (Debian 6.1, x86-64).
 *
 * The compiler ends a path at a call to a __noreturn function and places
 * unrelated code (or nothing) after it, so the CFG must know them. This is
 * the kernel's own list (objtool's global_noreturns for 6.1, plus later
 * kernels' tools/objtool/noreturns.h entries that exist in 6.1); functions
 * local to one module are inferred from the code instead (cfg.h:
 * CFG_IF_NORETURN_INFERRED, and elfobj's dead-end analysis).
 */
#ifndef PATHTRACE_NORETURN_H
#define PATHTRACE_NORETURN_H

/* 1 if name is a known noreturn kernel function, else 0 (NULL gives 0). */
int noreturn_builtin(const char *name);

#endif
