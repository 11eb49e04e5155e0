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

/* What status and list need to say which mechanism carries each plan. */
struct loaded_carriers {
	int known;		/* the module reports carriers (ABI 2.2 or later) */
	uint64_t copies_lo, copies_hi;	/* the inline copies' module, [lo, hi); 0, 0 if none */
};

/*
 * Fills c: the module's ABI (fd) and where the inline copies' module
 * (docs/inline.md) lies, from /proc/modules. Returns 0, or -1 after
 * reporting as @who.
 */
int loaded_carriers(int fd, const char *who, struct loaded_carriers *c);

/*
 * Which mechanism carries plan f: "probes" (kprobes on the function),
 * "copy+probes" (kprobes on its inline copy), "inline-counters" (counters
 * as code in its inline copy, no probe), or "?" (a module before ABI 2.2).
 */
const char *loaded_carrier(const struct pt_func_info *f, const struct loaded_carriers *c);

#endif
