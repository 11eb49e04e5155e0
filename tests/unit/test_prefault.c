// SPDX-License-Identifier: GPL-2.0
/* prefault: the pages of a range made present, the ones around it left alone, contents kept. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/prefault.h>

#include "unit.h"

#define PAGES 32

/* Which of the PAGES pages at p are resident, one byte each (mincore). */
static void resident(void *p, size_t page, unsigned char *vec)
{
	CU_ASSERT_EQUAL_FATAL(mincore(p, PAGES * page, vec), 0);
	for (size_t i = 0; i < PAGES; i++)
		vec[i] &= 1;
}

/*
 * Where the kernel has no MADV_POPULATE_WRITE: -PT_ENOTSUP and nothing
 * made present. Returns whether it has it.
 */
static int supported(int ret, void *p, size_t page)
{
	unsigned char vec[PAGES];

	if (ret != -PT_ENOTSUP)
		return 1;
	resident(p, page, vec);
	for (size_t i = 0; i < PAGES; i++)
		CU_ASSERT_EQUAL(vec[i], 0);
	fprintf(stderr, "\n  prefault: no MADV_POPULATE_WRITE in this kernel");
	return 0;
}

static void test_range_pages(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), i;
	unsigned char vec[PAGES];
	char *p = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	int ret;

	CU_ASSERT_NOT_EQUAL_FATAL(p, MAP_FAILED);
	resident(p, page, vec);
	for (i = 0; i < PAGES; i++)
		CU_ASSERT_EQUAL_FATAL(vec[i], 0);

	CU_ASSERT_EQUAL(pt_prefault(p + 3 * page, 0), 0);	/* nothing */
	/* from inside page 3 to inside page 9: pages 3..9, nothing else */
	ret = pt_prefault(p + 3 * page + 100, 6 * page);
	CU_ASSERT(ret == 0 || ret == -PT_ENOTSUP);
	if (supported(ret, p, page)) {
		resident(p, page, vec);
		for (i = 0; i < PAGES; i++)
			CU_ASSERT_EQUAL(vec[i], i >= 3 && i <= 9);
		/* one byte at the end of page 20: that page alone */
		CU_ASSERT_EQUAL(pt_prefault(p + 21 * page - 1, 1), 0);
		resident(p, page, vec);
		for (i = 0; i < PAGES; i++)
			CU_ASSERT_EQUAL(vec[i], (i >= 3 && i <= 9) || i == 20);
	}
	/* present or not, the pages read as zero */
	for (i = 0; i < PAGES * page; i++)
		if (p[i])
			break;
	CU_ASSERT_EQUAL(i, PAGES * page);
	CU_ASSERT_EQUAL(munmap(p, PAGES * page), 0);
}

static void test_contents_kept(void)
{
	size_t n = 1u << 20, i;
	unsigned char *p = malloc(n);
	int ret;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 131 + 7);
	/* what is written already and the rest of its pages (the heap's) stay */
	ret = pt_prefault(p + 5, n - 10);
	CU_ASSERT(ret == 0 || ret == -PT_ENOTSUP);
	for (i = 0; i < n; i++)
		if (p[i] != (unsigned char)(i * 131 + 7))
			break;
	CU_ASSERT_EQUAL(i, n);
	free(p);
}

static void test_errors(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ret;

	CU_ASSERT_NOT_EQUAL_FATAL(p, MAP_FAILED);
	ret = pt_prefault(p, page);
	if (supported(ret, p, page)) {
		CU_ASSERT_EQUAL(ret, 0);
		/* a hole in the range: not all mapped */
		CU_ASSERT_EQUAL(munmap(p + 2 * page, page), 0);
		CU_ASSERT_EQUAL(pt_prefault(p, 4 * page), -PT_ENOMEM);
		/* a mapping that cannot be written */
		CU_ASSERT_EQUAL(mprotect(p, page, PROT_READ), 0);
		CU_ASSERT(pt_prefault(p, page) < 0);
		CU_ASSERT_EQUAL(munmap(p + 3 * page, page), 0);
		CU_ASSERT_EQUAL(munmap(p, 2 * page), 0);
	} else {
		CU_ASSERT_EQUAL(munmap(p, 4 * page), 0);
	}
}

UNIT_SUITE(prefault, { "a range's pages present, the ones around it not", test_range_pages },
	   { "contents kept, on the heap too", test_contents_kept },
	   { "a hole and a read-only mapping: errors", test_errors })
