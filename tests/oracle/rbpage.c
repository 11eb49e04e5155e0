// SPDX-License-Identifier: GPL-2.0
/* rbpage - the kernel ring buffer's page encoding, for tests and benchmarks (rbpage.h). */
#include <string.h>

#include "pathtrace_abi.h"
#include "rbpage.h"

#define HDR 16u
#define TYPE_PADDING 29u
#define TYPE_TIME_EXTEND 30u
#define DELTA_BITS 27u
#define MAX_SMALL_DATA (4u * 28u)
#define MISSED_EVENTS (1ull << 31)
#define MISSED_STORED (1ull << 30)

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void set_commit(struct rbpage *pg, uint64_t flags)
{
	uint64_t c = pg->tail | flags;

	memcpy(pg->buf + 8, &c, 8);
}

void rbpage_init(struct rbpage *pg, void *buf, uint32_t page_size, uint64_t ts)
{
	pg->buf = buf;
	pg->page_size = page_size;
	pg->tail = 0;
	pg->last_ts = ts;
	memset(buf, 0, page_size);
	memcpy(pg->buf, &ts, 8);
	set_commit(pg, 0);
}

int rbpage_add(struct rbpage *pg, uint64_t ts, const void *payload, uint32_t len)
{
	uint64_t delta = ts - pg->last_ts;
	uint32_t room = pg->page_size - HDR - pg->tail;
	uint32_t ext = delta >> DELTA_BITS ? 8 : 0;
	uint32_t body = (len + 3) & ~3u;
	uint32_t need = ext + (len > MAX_SMALL_DATA ? 8 : 4) + body;
	uint8_t *p = pg->buf + HDR + pg->tail;

	if (!len || need > room)
		return -1;
	if (ext) {
		/* rb_add_time_stamp: the delta rides in a TIME_EXTEND, the event gets 0. */
		put32(p, TYPE_TIME_EXTEND | (uint32_t)(delta & ((1u << DELTA_BITS) - 1)) << 5);
		put32(p + 4, (uint32_t)(delta >> DELTA_BITS));
		p += 8;
		delta = 0;
	}
	memset(p, 0, need - ext);
	if (len > MAX_SMALL_DATA) {
		put32(p, 0 | (uint32_t)delta << 5);
		put32(p + 4, body + 4);
		memcpy(p + 8, payload, len);
	} else {
		put32(p, (body / 4) | (uint32_t)delta << 5);
		memcpy(p + 4, payload, len);
	}
	pg->tail += need;
	pg->last_ts = ts;
	set_commit(pg, 0);
	return 0;
}

void rbpage_pad(struct rbpage *pg)
{
	uint32_t room = pg->page_size - HDR - pg->tail;
	uint8_t *p = pg->buf + HDR + pg->tail;

	if (room < 8)
		return;
	/* rb_reset_tail: padding with time_delta 1 and its length in array[0]. */
	put32(p, TYPE_PADDING | 1u << 5);
	put32(p + 4, room - 4);
	pg->tail += room;
	set_commit(pg, 0);
}

void rbpage_set_missed(struct rbpage *pg, long count)
{
	uint32_t room = pg->page_size - HDR - pg->tail;

	if (count >= 0 && room >= 8) {
		uint64_t c = count;

		memcpy(pg->buf + HDR + pg->tail, &c, 8);
		set_commit(pg, MISSED_EVENTS | MISSED_STORED);
	} else {
		set_commit(pg, MISSED_EVENTS);
	}
}

uint32_t rbrec(void *out, uint16_t type, uint32_t arg, const uint64_t *body, uint32_t nwords)
{
	struct pt_rec h = { .type = type, .len = 8 + 8 * nwords, .arg = arg };

	memcpy(out, &h, 8);
	if (nwords)
		memcpy((uint8_t *)out + 8, body, 8 * nwords);
	return h.len;
}
