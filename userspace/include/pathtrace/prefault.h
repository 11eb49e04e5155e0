/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory made present before it is written. Writing a page that is not
 * yet present costs a page fault; madvise(MADV_POPULATE_WRITE) (Linux
 * 5.14) makes every page of a range present in one call. On a
 * virtualized host a fault costs 10-16 us and a page made present this
 * way under 1 us (docs/pathregen.md, "Pages made present before they are
 * written").
 */
#ifndef PATHTRACE_PREFAULT_H
#define PATHTRACE_PREFAULT_H

#include <stddef.h>

/*
 * Makes the pages that hold [p, p + n) present and writable; what they
 * hold does not change. Only for memory that is about to be written: a
 * page made present stays resident. Returns 0; -PT_ENOTSUP where the
 * kernel has no MADV_POPULATE_WRITE (the pages then fault in as they are
 * written, as without the call), or a mapping it does not apply to;
 * -PT_ENOMEM if the range is not all mapped or memory ran out; -PT_EIO if
 * a page could not be made present (errno has the detail). Some pages may
 * be present after an error.
 */
int pt_prefault(void *p, size_t n);

#endif
