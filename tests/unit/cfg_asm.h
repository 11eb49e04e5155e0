/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test support: assemble x86-64 text with gcc at test time, read it back
 * through elfobj, and print a CFG in a compact canonical form:
 *   "OFF: EDGES; ..." per block, OFF in hex from the function's start (cN
 *   in the .cold part), EDGES one letter per kind and the destination
 *   block (E = EXIT): F fall, T taken, J jump, K key jump, k key fall,
 *   C call return, X fixup.
 */
#ifndef PT_CFG_ASM_H
#define PT_CFG_ASM_H

#include <stddef.h>

#include <pathtrace/cfg.h>
#include <pathtrace/elfobj.h>

/* Assembles text into DIR/name.o; returns the opened object or NULL. */
struct elfobj *cfg_asm_object(const char *name, const char *text);

/* Assembles, finds func and builds its CFG; returns cfg_build's result (or -1). */
int cfg_asm_build(const char *text, const char *func, struct cfg *c);

/* Writes the canonical form of c into buf; returns buf. */
const char *cfg_asm_describe(const struct cfg *c, char *buf, size_t n);

/* The temp dir the objects live in (created on first use). */
const char *cfg_asm_dir(void);

#endif
