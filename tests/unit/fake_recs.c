// SPDX-License-Identifier: GPL-2.0
/* Test support: records appended as the page decoder leaves them (fake_recs.h). */
#include <stdlib.h>
#include <string.h>

#include "fake_recs.h"
#include "unit.h"

void fake_rec_add(struct tr_records *rs, uint16_t type, uint32_t cpu, uint32_t arg,
		  const uint64_t *body, uint16_t nwords)
{
	struct tr_rec *r;

	rs->recs = realloc(rs->recs, (rs->n + 1) * sizeof(*rs->recs));
	rs->words = realloc(rs->words, (rs->nwords + nwords + 1) * sizeof(*rs->words));
	CU_ASSERT_FATAL(rs->recs && rs->words);
	r = &rs->recs[rs->n++];
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->cpu = cpu;
	r->arg = arg;
	r->nwords = nwords;
	r->len = (uint16_t)(8 + 8 * nwords);
	r->body = rs->nwords;
	if (nwords)
		memcpy(rs->words + rs->nwords, body, nwords * sizeof(*body));
	rs->nwords += nwords;
}
