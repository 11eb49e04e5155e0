// SPDX-License-Identifier: GPL-2.0
/*
 * page_trim.c - how much of a ring-buffer page trace.bin stores.
 *
 * A page read while tracing runs is full but for the tail its next event
 * did not fit, and the page read at stop is partly empty: what follows the
 * committed data is zero (FORMAT.md, section 3). PT_SEC_PAGES_TRIMMED stores each
 * page up to the end of its data, so the file holds what the CPUs wrote,
 * not the pages' padding; the reader's decoder reads no further anyway.
 */
#include <string.h>

#include "pathtrace/tracefile.h"

#define COMMIT_SIZE_MASK 0x7ffffffull
#define RB_MISSED_EVENTS (1ull << 31)
#define RB_MISSED_STORED (1ull << 30)
#define PAGE_HDR 16u

uint32_t tf_page_data_end(const void *page, uint32_t page_size)
{
	uint64_t commit, end;

	memcpy(&commit, (const uint8_t *)page + 8, sizeof(commit));
	end = PAGE_HDR + (commit & COMMIT_SIZE_MASK) + (commit & RB_MISSED_STORED ? 8 : 0);
	if ((commit & ~(COMMIT_SIZE_MASK | RB_MISSED_EVENTS | RB_MISSED_STORED)) ||
	    ((commit & RB_MISSED_STORED) && !(commit & RB_MISSED_EVENTS)) || end > page_size)
		return 0;
	return (uint32_t)end;
}

uint32_t tf_page_stored_len(const void *page, uint32_t page_size)
{
	uint32_t end = tf_page_data_end(page, page_size);

	/* a header the decoder refuses: the page as it was, whole */
	if (!end)
		return page_size;
	end = (end + 7) & ~7u;
	return end < page_size ? end : page_size;
}
