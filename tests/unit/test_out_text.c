// SPDX-License-Identifier: GPL-2.0
/*
 * The default text output (out_text.c) against the same lines written
 * with printf from the format's rules: a stream's header, two spaces of
 * indent per open activation (64 levels at most), an entry as
 * "[cpu C @ S.NNNNNNNNN] name() {" when it has a marker, each block as
 * pr_block_name gives it, a return as a brace and the name in a comment
 * (": replaced by execve" after it when an execve ended it), an entry
 * inherited at a fork with its parent. First every task's truth of generated programs; then events made
 * by hand for what the truth does not reach: nesting deeper than 64, a
 * function name longer than the writer's line buffer, stamps whose
 * nanoseconds have leading zeros, a block the CFG does not have.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "regen_trace.h"
#include "unit.h"

/* The lines the text output must hold for events ev[0, n) of stream st, by printf. */
static char *expected(const struct pr_model *m, const struct out_stream *st,
		      const struct regen_event *ev, uint64_t n)
{
	char *text = NULL, buf[192], own[48];
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	uint32_t depth = 0, i;
	uint64_t k;

	if (!fp)
		return NULL;
	fprintf(fp, "%s# stream %u: %s, %" PRIu64 " trace bits, %u markers\n",
		st->index ? "\n" : "", st->index, pr_owner_name(st->s->owner, own, sizeof(own)),
		st->s->nbits, st->s->nmarkers);
	for (k = 0; k < n; k++) {
		const struct regen_event *e = &ev[k];
		const struct pr_func *f = pr_model_func(m, e->func);
		const char *name = f ? f->name : "?";
		uint64_t stamp;
		uint32_t cpu;

		if (e->type == REGEN_EV_EXIT || e->type == REGEN_EV_REPLACED)
			depth -= depth > 0;
		for (i = 0; i < depth && i < 64; i++)
			fputs("  ", fp);
		switch (e->type) {
		case REGEN_EV_ENTER:
			if (e->marker) {
				regen_where(st->s, e->where, &cpu, &stamp);
				fprintf(fp, "[cpu %u @ %" PRIu64 ".%09" PRIu64 "] ", cpu,
					stamp / 1000000000u, stamp % 1000000000u);
			}
			if (e->marker && e->marker->type == REGEN_M_FORKED)
				fprintf(fp, "%s() { /* inherited at fork from %s */\n", name,
					pr_owner_name(e->marker->value, own, sizeof(own)));
			else
				fprintf(fp, "%s() {\n", name);
			depth++;
			break;
		case REGEN_EV_BLOCK:
			fprintf(fp, "%s\n", pr_block_name(f, e->block, buf, sizeof(buf)));
			break;
		default:
			fprintf(fp, "} /* %s%s */\n", name,
				e->type == REGEN_EV_REPLACED ? ": replaced by execve" : "");
			break;
		}
	}
	fclose(fp);
	return text;
}

/* Events ev[0, n) of stream st through the text writer: its output (malloc'd). */
static char *written(const struct pr_model *m, const struct out_stream *st,
		     const struct regen_event *ev, uint64_t n)
{
	struct out_writer w = { .ops = &out_text_ops, .m = m };
	struct out_writer *ws[1] = { &w };
	char *text = NULL;
	size_t len = 0;

	w.fp = open_memstream(&text, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w.fp);
	CU_ASSERT_EQUAL(out_open_all(ws, 1), 0);
	CU_ASSERT_EQUAL(out_walk_events(m, st, ev, n, ws, 1), 0);
	CU_ASSERT_EQUAL(out_close_all(ws, 1), 0);
	fclose(w.fp);
	return text;
}

static void test_truth(void)
{
	uint64_t seed, lines = 0;

	for (seed = 1; seed <= 12; seed++) {
		struct rt_case c;
		uint32_t t;

		CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, seed, 6, PT_MODE_TRACE, PT_ENC_WITNESS, 0), 0);
		for (t = 0; t < RT_NTASKS; t++) {
			struct regen_stream s = { .owner = RT_TASK(t) };
			struct out_stream st = { .s = &s, .index = t };
			uint64_t nev;
			struct regen_event *ev = rt_truth_events(&c.t, RT_TASK(t), &nev);
			char *want, *got;

			CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
			want = expected(&c.m, &st, ev, nev);
			got = written(&c.m, &st, ev, nev);
			CU_ASSERT_PTR_NOT_NULL_FATAL(want);
			CU_ASSERT_PTR_NOT_NULL_FATAL(got);
			CU_ASSERT_STRING_EQUAL(got, want);
			lines += nev;
			free(want);
			free(got);
			free(ev);
		}
		rt_case_free(&c);
	}
	CU_ASSERT(lines > 1000);
}

#define DEEP 70		/* activations open at once: more than the 64 levels indented */
#define LONG_NAME 700	/* bytes: more than the writer's line buffer */

static void test_by_hand(void)
{
	static const uint64_t stamps[] = { 0, 5, 999999999, 1000000000, 1234567890123ull,
					   18446744073709551615ull };
	struct regen_marker mk[DEEP + 2];
	struct regen_where wh[DEEP + 2];
	struct regen_event ev[3 * DEEP + 8];
	struct regen_stream s = { .owner = RT_TASK(1), .markers = mk, .nmarkers = DEEP + 2,
				  .where = wh, .nwhere = DEEP + 2, .nbits = 77 };
	struct out_stream st = { .s = &s, .index = 1 };
	struct rt_case c;
	char *want, *got, *name;
	uint32_t i, n = 0, id;

	CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, 3, 4, PT_MODE_TRACE, PT_ENC_WITNESS, 0), 0);
	CU_ASSERT_FATAL(c.m.nfuncs >= 2);
	/* function 1 gets a name longer than a line's buffer */
	name = malloc(LONG_NAME + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(name);
	memset(name, 'x', LONG_NAME);
	name[LONG_NAME] = 0;
	free(c.m.funcs[1].name);
	c.m.funcs[1].name = name;
	id = c.m.funcs[0].func_id;
	memset(mk, 0, sizeof(mk));
	memset(ev, 0, sizeof(ev));
	for (i = 0; i < DEEP + 2; i++) {
		mk[i].type = REGEN_M_ENTER;
		wh[i] = (struct regen_where){ i, i % 3, stamps[i % 6] };
	}
	mk[DEEP + 1].type = REGEN_M_FORKED;
	mk[DEEP + 1].value = RT_TASK(2);
	for (i = 0; i < DEEP; i++) {
		/* every other entry with its marker, the long name every seventh */
		ev[n] = (struct regen_event){ .type = REGEN_EV_ENTER, .depth = i,
					      .func = i % 7 == 3 ? c.m.funcs[1].func_id : id };
		if (i % 2) {
			ev[n].marker = &mk[i];
			ev[n].where = i;
		}
		n++;
		ev[n++] = (struct regen_event){ .type = REGEN_EV_BLOCK, .func = ev[n - 1].func,
						.block = i % c.m.funcs[i % 7 == 3].cfg.nblocks,
						.depth = i };
	}
	/* a block the CFG does not have, named by number */
	ev[n++] = (struct regen_event){ .type = REGEN_EV_BLOCK, .func = ev[n - 2].func,
					.block = 100000, .depth = DEEP - 1 };
	for (i = DEEP; i-- > 1;)
		ev[n++] = (struct regen_event){ .type = REGEN_EV_EXIT, .func = ev[2 * i].func,
						.depth = i };
	ev[n++] = (struct regen_event){ .type = REGEN_EV_REPLACED, .func = id };
	ev[n++] = (struct regen_event){ .type = REGEN_EV_ENTER, .func = id, .marker = &mk[DEEP + 1],
					.where = DEEP + 1 };
	ev[n++] = (struct regen_event){ .type = REGEN_EV_BLOCK, .func = id, .depth = 0 };
	ev[n++] = (struct regen_event){ .type = REGEN_EV_EXIT, .func = id };
	CU_ASSERT_FATAL(n <= sizeof(ev) / sizeof(ev[0]));

	want = expected(&c.m, &st, ev, n);
	got = written(&c.m, &st, ev, n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_STRING_EQUAL(got, want);
	/* what the cases are there for */
	CU_ASSERT_PTR_NOT_NULL(strstr(want, "[cpu 1 @ 0.000000005] "));
	CU_ASSERT_PTR_NOT_NULL(strstr(want, "[cpu 2 @ 18446744073.709551615] "));
	CU_ASSERT_PTR_NOT_NULL(strstr(want, "#100000\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(want, ": replaced by execve */\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(want, "/* inherited at fork from task/102 */\n"));
	free(want);
	free(got);
	rt_case_free(&c);
}

UNIT_SUITE(out_text,
	   { "every task's truth written as printf writes it", test_truth },
	   { "deep nesting, a long name, stamps, execve and fork by hand", test_by_hand })
