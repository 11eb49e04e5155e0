/* SPDX-License-Identifier: GPL-2.0 */
/*
 * funcstore - what `pathtracectl enable` knew about each function when it
 * made the plan (live code bytes read before any probe was registered, the
 * CFG blob, the plan blob), kept for `pathtracectl record`: once probes are
 * registered, /proc/kcore shows their int3 and jump bytes, not the code that
 * was decoded, so record cannot re-read it.
 *
 * One file per function, DIR/func-<func_id>.bin, in the trace.bin format
 * with a single FUNCTION section (trace-format/FORMAT.md). DIR is
 * $PATHTRACE_STATE, else /run/pathtrace.
 */
#ifndef PATHTRACE_FUNCSTORE_H
#define PATHTRACE_FUNCSTORE_H

#include <stdint.h>

#include <pathtrace/tracefile.h>

/* The directory in use (static string or the environment's). */
const char *funcstore_dir(void);

/*
 * Saves fn (creating the directory and its missing parents, mode 0700;
 * replacing an older file atomically).
 * Returns 0; -PT_EIO (errno set); -PT_EINVAL for NULLs with lengths.
 */
int funcstore_save(const struct tf_function *fn);

/*
 * Loads func_id's file into tf (tf->nfuncs is 1 on success). Returns 0;
 * -PT_ENOENT (none stored); what tracefile_read returns; -PT_EFORMAT when
 * the file holds another function. Free tf with tracefile_free either way.
 */
int funcstore_load(uint32_t func_id, struct tracefile *tf);

/* Removes func_id's file. Returns 0 (also when there was none) or -PT_EIO. */
int funcstore_remove(uint32_t func_id);

#endif
