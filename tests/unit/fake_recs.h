/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test support: records appended to a struct tr_records as the page
 * decoder would leave them (pages.c), for tests of what reads records.
 */
#ifndef PT_TEST_FAKE_RECS_H
#define PT_TEST_FAKE_RECS_H

#include <stdint.h>

#include <pathtrace/tracefile.h>

/* Appends a record of type on cpu with arg and nwords body words (fatal without memory). */
void fake_rec_add(struct tr_records *rs, uint16_t type, uint32_t cpu, uint32_t arg,
		  const uint64_t *body, uint16_t nwords);

#endif
