/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error codes of libpathtrace. Library functions return 0 (or a count) on
 * success and a negative PT_E* on failure; pt_strerror() names it.
 */
#ifndef PATHTRACE_ERROR_H
#define PATHTRACE_ERROR_H

enum pt_error {
	PT_OK = 0,
	PT_ENOMEM = 1,		/* out of memory */
	PT_EINVAL = 2,		/* invalid argument */
	PT_EIO = 3,		/* I/O error (errno has the detail) */
	PT_EFORMAT = 4,		/* malformed input (trace.bin, plan, ELF) */
	PT_ETRUNC = 5,		/* input ends early */
	PT_EVERSION = 6,	/* unsupported format or ABI version */
	PT_EREFUSED = 7,	/* function cannot be modelled exactly */
	PT_EOVERFLOW = 8,	/* a count does not fit its type */
	PT_ENOENT = 9,		/* no such function, symbol or section */
	PT_EKERNEL = 10,	/* the module refused a request */
	PT_EMISMATCH = 11,	/* regenerated execution differs from the truth */
	PT_ENOTSUP = 12,	/* valid but not supported */
	PT_ERROR_MAX
};

/* Returns a static string for err (positive or negative); never NULL. */
const char *pt_strerror(int err);

#endif
