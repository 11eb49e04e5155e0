/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rbpage - builds ring-buffer pages in the kernel's exact format (as
 * ring_buffer_read_page hands them out, kernel/trace/ring_buffer.c of 6.1,
 * x86-64): struct buffer_data_page { u64 time_stamp; local_t commit; data },
 * events with a u32 header {type_len:5, time_delta:27} and array[]:
 * type_len 1..28 = data of type_len*4 bytes in array[0..]; 0 = data whose
 * length (+4) is in array[0], data from array[1]; 29 = padding; 30 =
 * TIME_EXTEND (delta = array[0] << 27 | time_delta). Tests decode them with
 * kbuffer, never with this code. Part of the oracle (liboracle.a): the unit
 * tests and bench-regen build their traces with it.
 */
#ifndef PT_TEST_RBPAGE_H
#define PT_TEST_RBPAGE_H

#include <stdint.h>
#include <stddef.h>

struct rbpage {
	uint8_t *buf;
	uint32_t page_size;
	uint32_t tail;		/* bytes of data used */
	uint64_t last_ts;	/* timestamp of the last event written */
};

/* Starts an empty page at buf with the page timestamp ts. */
void rbpage_init(struct rbpage *pg, void *buf, uint32_t page_size, uint64_t ts);

/* Appends one data event with timestamp ts (>= the last); 0, or -1 if it does not fit. */
int rbpage_add(struct rbpage *pg, uint64_t ts, const void *payload, uint32_t len);

/* Fills the rest of the page with a padding event, as rb_reset_tail does. */
void rbpage_pad(struct rbpage *pg);

/* Sets the missed-events flags as ring_buffer_read_page does (count < 0: not stored). */
void rbpage_set_missed(struct rbpage *pg, long count);

/* Builds a pt_rec payload into out (returns its length): type, arg, body words. */
uint32_t rbrec(void *out, uint16_t type, uint32_t arg, const uint64_t *body, uint32_t nwords);

#endif
