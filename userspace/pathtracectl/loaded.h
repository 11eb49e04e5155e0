/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loaded - the module's view of what is traced (PT_IOC_LIST_FUNCS), shared
 * by enable, disable, list and status: the module, not a file, remembers
 * func_id <-> function across pathtracectl invocations.
 */
#ifndef PATHTRACECTL_LOADED_H
#define PATHTRACECTL_LOADED_H

#include <stdint.h>

#include "pathtrace_abi.h"

/*
 * Opens /dev/pathtrace and checks its ABI (LIST_FUNCS needs 1.1).
 * Returns the descriptor, or -1 after reporting as @who.
 */
int loaded_open(const char *who);

/*
 * Every installed plan's pt_func_info (plan blobs not copied) into a
 * malloc'ed array. Returns the count, or -1 after reporting as @who.
 */
int loaded_list(int fd, const char *who, struct pt_func_info **out);

/* "trace/witness", "paths", ... for a plan's mode and encoding. */
const char *loaded_mode_name(uint16_t mode, uint16_t encoding, uint32_t flags);

#endif
