// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/prefault.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* <linux/mman.h>, Linux 5.14 */
#endif

int pt_prefault(void *p, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;

	if (!n)
		return 0;
	lo = (uintptr_t)p & ~(page - 1);
	hi = ((uintptr_t)p + n + page - 1) & ~(page - 1);
	if (!madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE))
		return 0;
	switch (errno) {
	case EINVAL:
		/* no such advice here, or a mapping it does not apply to */
		return -PT_ENOTSUP;
	case ENOMEM:
		return -PT_ENOMEM;
	default:
		/* a page it could not make present (EFAULT, EHWPOISON), a signal */
		return -PT_EIO;
	}
}
