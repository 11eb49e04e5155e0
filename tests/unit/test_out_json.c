// SPDX-License-Identifier: GPL-2.0
/*
 * --json: an entry's keys by its marker. An ENTER marker names the return
 * address ("ret"), or for an untraced caller the traced frame below
 * ("frame", once) or that the module could not find it ("frame":
 * "unknown"); an activation inherited at a fork names its parent
 * ("inherited_from") and nothing else, whatever the fork's number is. Then
 * every event object of generated programs' truth holds each key once; and
 * strings are escaped as JSON asks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "regen_trace.h"
#include "unit.h"

/* Events ev[0, n) of stream st through the json writer: its output into *text (malloc'd). */
static void written(const struct pr_model *m, const struct out_stream *st,
		    const struct regen_event *ev, uint64_t n, char **text)
{
	struct out_writer w = { .ops = &out_json_ops, .m = m };
	struct out_writer *ws[1] = { &w };
	size_t len = 0;

	*text = NULL;
	w.fp = open_memstream(text, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w.fp);
	CU_ASSERT_EQUAL(out_open_all(ws, 1), 0);
	CU_ASSERT_EQUAL(out_walk_events(m, st, ev, n, ws, 1), 0);
	CU_ASSERT_EQUAL(out_close_all(ws, 1), 0);
	fclose(w.fp);
}

/* Whether the object on the line at p holds a key twice (keys: a string followed by ": "). */
static int key_twice(const char *p)
{
	const char *end = strchr(p, '\n'), *k, *q;
	char keys[16][32];
	int n = 0, i;

	if (!end)
		end = p + strlen(p);
	for (k = strstr(p, "\": "); k && k < end; k = strstr(k + 3, "\": ")) {
		for (q = k; q > p && q[-1] != '"'; q--)
			;
		if (n == 16 || k - q >= 32)
			return 1;
		memcpy(keys[n], q, (size_t)(k - q));
		keys[n][k - q] = 0;
		for (i = 0; i < n; i++)
			if (!strcmp(keys[i], keys[n]))
				return 1;
		n++;
	}
	return 0;
}

static void test_enter_keys(void)
{
	struct regen_marker mk[4];
	struct regen_where wh[4];
	struct regen_stream s = { .owner = RT_TASK(0), .markers = mk, .nmarkers = 4,
				  .where = wh, .nwhere = 4, .nbits = 9 };
	struct out_stream st = { .s = &s };
	struct regen_event ev[8];
	struct rt_case c;
	char want[4][256], *got, *at;
	uint32_t i, id;

	CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, 5, 3, PT_MODE_TRACE, PT_ENC_WITNESS, 0), 0);
	id = c.m.funcs[0].func_id;
	memset(mk, 0, sizeof(mk));
	memset(ev, 0, sizeof(ev));
	mk[0] = (struct regen_marker){ .type = REGEN_M_ENTER, .arg = REGEN_ENTER_RET,
				       .value = 0xffffffff81001234ull };
	mk[1] = (struct regen_marker){ .type = REGEN_M_ENTER, .arg = REGEN_ENTER_NESTED,
				       .value = 0xffffffff81005678ull };
	mk[2] = (struct regen_marker){ .type = REGEN_M_ENTER, .arg = REGEN_ENTER_FRAME_UNKNOWN };
	/* the first fork's child: arg (the fork's number) 1, REGEN_ENTER_NESTED's value */
	mk[3] = (struct regen_marker){ .type = REGEN_M_FORKED, .arg = 1, .value = RT_TASK(2) };
	for (i = 0; i < 4; i++) {
		wh[i] = (struct regen_where){ i, i, 1000 + i };
		ev[2 * i] = (struct regen_event){ .type = REGEN_EV_ENTER, .func = id,
						  .marker = &mk[i], .where = i };
		ev[2 * i + 1] = (struct regen_event){ .type = REGEN_EV_EXIT, .func = id };
	}
	snprintf(want[0], sizeof(want[0]), "{\"ev\": \"enter\", \"func\": %u, \"depth\": 0, "
		 "\"cpu\": 0, \"stamp\": 1000, \"ret\": \"0xffffffff81001234\"}", id);
	snprintf(want[1], sizeof(want[1]), "{\"ev\": \"enter\", \"func\": %u, \"depth\": 0, "
		 "\"cpu\": 1, \"stamp\": 1001, \"frame\": \"0xffffffff81005678\"}", id);
	snprintf(want[2], sizeof(want[2]), "{\"ev\": \"enter\", \"func\": %u, \"depth\": 0, "
		 "\"cpu\": 2, \"stamp\": 1002, \"frame\": \"unknown\"}", id);
	snprintf(want[3], sizeof(want[3]), "{\"ev\": \"enter\", \"func\": %u, \"depth\": 0, "
		 "\"cpu\": 3, \"stamp\": 1003, \"inherited_from\": \"task/102\"}", id);
	written(&c.m, &st, ev, 8, &got);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	/* each entry's object in order, each its own line */
	at = strstr(got, "\"events\": [");
	CU_ASSERT_PTR_NOT_NULL_FATAL(at);
	for (i = 0; i < 4; i++) {
		at = strstr(at, "\n  {\"ev\": \"enter\"");
		CU_ASSERT_PTR_NOT_NULL_FATAL(at);
		at += 3;
		CU_ASSERT_EQUAL(strncmp(at, want[i], strlen(want[i])), 0);
		CU_ASSERT_FALSE(key_twice(at));
	}
	free(got);
	rt_case_free(&c);
}

static void test_keys_once(void)
{
	uint64_t seed, objects = 0;

	for (seed = 1; seed <= 6; seed++) {
		struct rt_case c;
		char *text = NULL, *p;
		size_t len = 0;
		struct out_writer w = { .ops = &out_json_ops };

		CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, seed, 5, PT_MODE_TRACE, PT_ENC_WITNESS, 0), 0);
		CU_ASSERT_EQUAL(rt_truth_output(&c, &w, &text, &len), 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		for (p = strstr(text, "\n  {\"ev\""); p; p = strstr(p + 1, "\n  {\"ev\"")) {
			CU_ASSERT_FALSE(key_twice(p + 3));
			objects++;
		}
		free(text);
		rt_case_free(&c);
	}
	CU_ASSERT(objects > 1000);
}

/* JSON strings (out_json_str, out_line_json_str): quotes, backslashes, control characters. */
static void test_strings(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "\"\"" },
		{ "vfs_read+0x3c", "\"vfs_read+0x3c\"" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
		{ "\n\x01x\x1f", "\"\\u000a\\u0001x\\u001f\"" },
		{ "\"\"", "\"\\\"\\\"\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },	/* UTF-8 as it is */
	};
	char *buf = NULL, big[1200];
	size_t len = 0, i;
	FILE *fp;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fp = open_memstream(&buf, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
		out_json_str(fp, cases[i].in);
		fclose(fp);
		CU_ASSERT_STRING_EQUAL(buf, cases[i].out);
		free(buf);
		buf = NULL;
	}
	/* longer than a line's buffer, an escape at its end */
	memset(big, 'y', sizeof(big) - 2);
	big[sizeof(big) - 2] = '"';
	big[sizeof(big) - 1] = 0;
	fp = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	out_json_str(fp, big);
	fclose(fp);
	CU_ASSERT_EQUAL(len, sizeof(big) + 2);
	CU_ASSERT_EQUAL(strncmp(buf + len - 3, "\\\"\"", 3), 0);
	CU_ASSERT_EQUAL(strspn(buf + 1, "y"), sizeof(big) - 2);
	free(buf);
}

UNIT_SUITE(out_json,
	   { "JSON strings escaped", test_strings },
	   { "an entry's keys by its marker, each once", test_enter_keys },
	   { "every event object of the truth holds each key once", test_keys_once })
