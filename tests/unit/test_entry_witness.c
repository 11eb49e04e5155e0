// SPDX-License-Identifier: GPL-2.0
/*
 * Closed callees for entry witnesses (entry_witness.h): a function is
 * closed when every tail call it makes reaches only traced, closed
 * functions; a tail-call cycle among traced functions stays closed; one
 * tail call into untraced code opens every function that can chain into it.
 */
#include <pathtrace/entry_witness.h>
#include <pathtrace/error.h>

#include "unit.h"

static void test_closure(void)
{
	/*
	 * 0: no tail call; 1 -> 2 -> 1 (a cycle); 3 -> 4 -> untraced;
	 * 5 -> 3 (chains into the open one); 6 -> 0 and 1.
	 */
	static const uint32_t start[] = { 0, 0, 1, 2, 3, 4, 5, 7 };
	static const uint32_t to[] = { 2, 1, 4, ENTRY_TAIL_OPEN, 3, 0, 1 };
	static const uint8_t want[] = { 1, 1, 1, 0, 0, 0, 1 };
	static const uint32_t bad_to[] = { 7 };
	static const uint32_t bad_start[] = { 0, 1 };
	uint8_t closed[7];
	uint32_t i;

	CU_ASSERT_EQUAL_FATAL(entry_closed(7, start, to, closed), 0);
	for (i = 0; i < 7; i++)
		CU_ASSERT_EQUAL(closed[i], want[i]);
	CU_ASSERT_EQUAL(entry_closed(1, bad_start, bad_to, closed), -PT_EINVAL);
}

UNIT_SUITE(entry_witness, { "closed callees: cycles, chains into untraced code", test_closure })
