// SPDX-License-Identifier: GPL-2.0
/*
 * --format perfetto: the Trace Event JSON file's structure, read back by a
 * checker written from the format (docs/pathregen.md "Perfetto"): the
 * header and footer lines, one event a line, every track named before its
 * events, a track's times never going back, every E closing the innermost
 * open B of its track with the same name, nothing left open. The checker
 * refuses hand-made files that break each rule. A known execution (the
 * synthetic run's truth) through the writer must give, track by track,
 * exactly its ENTERs as B, its blocks as instant events and its EXITs as E;
 * a regenerated trace through pathregen -o FILE must give one track per
 * stream and one slice per activation the engine reports.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "pipeline.h"
#include "regen_trace.h"
#include "unit.h"

#define MAX_TRACKS 64
#define MAX_DEPTH 256

/* One event line as the checker read it. */
struct pf_line {
	char ph;
	uint32_t tid;
	uint64_t ts_ns;
	char name[160];
};

struct pf_read {
	struct pf_line *ev;		/* B, E and i events in file order */
	size_t nev;
	uint32_t ntracks;		/* tracks named by thread_name */
	uint32_t slices;		/* B events */
	char why[160];			/* the first broken rule */
};

/* The string value after key in line into out; 0 if there is none. */
static int str_field(const char *line, const char *key, char *out, size_t max)
{
	const char *p = strstr(line, key);
	size_t n = 0;

	if (!p)
		return 0;
	p += strlen(key);
	if (*p++ != '"')
		return 0;
	while (*p && *p != '"') {
		if (*p == '\\' && p[1])
			p++;
		if (n + 1 < max)
			out[n++] = *p;
		p++;
	}
	out[n] = 0;
	return *p == '"';
}

static int num_field(const char *line, const char *key, uint64_t *v, uint32_t *frac)
{
	const char *p = strstr(line, key);
	char *end;

	if (!p)
		return 0;
	*v = strtoull(p + strlen(key), &end, 10);
	if (frac) {
		if (*end != '.' || strlen(end) < 4)
			return 0;
		*frac = (uint32_t)strtoul(end + 1, &end, 10);
	}
	return 1;
}

/*
 * Reads and checks text. Returns 0, or -1 with r->why saying which rule
 * broke (and where).
 */
static int pf_check(const char *text, struct pf_read *r)
{
	char *copy = strdup(text), *line, *save = NULL;
	char stack[MAX_TRACKS][MAX_DEPTH][160];
	uint32_t depth[MAX_TRACKS] = { 0 }, lineno = 0, t;
	int named[MAX_TRACKS] = { 0 }, seen_ts[MAX_TRACKS] = { 0 }, last = 0, rc = -1;
	uint64_t last_ts[MAX_TRACKS] = { 0 };
	size_t cap = 0;

	memset(r, 0, sizeof(*r));
	if (!copy)
		return -1;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct pf_line e = { 0 };
		size_t len = strlen(line);
		char ph[4];
		uint64_t tid;
		uint32_t frac;

		lineno++;
		if (last) {
			snprintf(r->why, sizeof(r->why), "line %u: after the footer", lineno);
			goto out;
		}
		if (lineno == 1) {
			if (strcmp(line, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [")) {
				snprintf(r->why, sizeof(r->why), "line 1: not the header");
				goto out;
			}
			continue;
		}
		if (!strcmp(line, "]}")) {
			last = 1;
			continue;
		}
		if (line[0] != '{' || (strcmp(line + len - 2, "},") && strcmp(line + len - 1, "}"))) {
			snprintf(r->why, sizeof(r->why), "line %u: not one event", lineno);
			goto out;
		}
		if (!str_field(line, "\"ph\": ", ph, sizeof(ph)) || strlen(ph) != 1) {
			snprintf(r->why, sizeof(r->why), "line %u: no ph", lineno);
			goto out;
		}
		if (ph[0] == 'M' && strstr(line, "\"name\": \"process_name\""))
			continue;
		if (!num_field(line, "\"tid\": ", &tid, NULL) || !tid || tid > MAX_TRACKS) {
			snprintf(r->why, sizeof(r->why), "line %u: no track", lineno);
			goto out;
		}
		t = (uint32_t)tid - 1;
		if (ph[0] == 'M') {
			if (strstr(line, "\"name\": \"thread_name\"") && !named[t]++)
				r->ntracks++;
			continue;
		}
		if (!named[t]) {
			snprintf(r->why, sizeof(r->why), "line %u: track %u not named", lineno, t + 1);
			goto out;
		}
		if (!num_field(line, "\"ts\": ", &e.ts_ns, &frac) ||
		    !str_field(line, "\"name\": ", e.name, sizeof(e.name))) {
			snprintf(r->why, sizeof(r->why), "line %u: no ts or name", lineno);
			goto out;
		}
		e.ts_ns = e.ts_ns * 1000 + frac;
		if (seen_ts[t] && e.ts_ns < last_ts[t]) {
			snprintf(r->why, sizeof(r->why), "line %u: time goes back on track %u",
				 lineno, t + 1);
			goto out;
		}
		seen_ts[t] = 1;
		last_ts[t] = e.ts_ns;
		e.ph = ph[0];
		e.tid = t + 1;
		if (e.ph == 'B') {
			if (depth[t] == MAX_DEPTH)
				goto out;
			strcpy(stack[t][depth[t]++], e.name);
			r->slices++;
		} else if (e.ph == 'E') {
			if (!depth[t] || strcmp(stack[t][depth[t] - 1], e.name)) {
				snprintf(r->why, sizeof(r->why),
					 "line %u: E %.60s does not close the innermost slice",
					 lineno, e.name);
				goto out;
			}
			depth[t]--;
		} else if (e.ph != 'i' || !strstr(line, "\"s\": \"t\"")) {
			snprintf(r->why, sizeof(r->why), "line %u: unknown event", lineno);
			goto out;
		}
		if (r->nev == cap) {
			struct pf_line *n = realloc(r->ev, (cap = cap ? 2 * cap : 256) * sizeof(*n));

			if (!n)
				goto out;
			r->ev = n;
		}
		r->ev[r->nev++] = e;
	}
	if (!last) {
		snprintf(r->why, sizeof(r->why), "no footer");
		goto out;
	}
	for (t = 0; t < MAX_TRACKS; t++)
		if (depth[t]) {
			snprintf(r->why, sizeof(r->why), "track %u: %u slices left open", t + 1,
				 depth[t]);
			goto out;
		}
	rc = 0;
out:
	free(copy);
	return rc;
}

static int check_text(const char *text)
{
	struct pf_read r;
	int rc = pf_check(text, &r);

	free(r.ev);
	return rc;
}

#define HEAD "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n" \
	"{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"task/1\"}},\n"
#define EV(ph, ts, name) "{\"ph\": \"" ph "\", \"pid\": 1, \"tid\": 1, \"ts\": " ts ", \"name\": \"" name "\"}"

static void test_checker_rejects(void)
{
	const char *good = HEAD EV("B", "0.001", "a") ",\n" EV("B", "0.002", "b") ",\n"
			   EV("E", "0.003", "b") ",\n" EV("E", "0.004", "a") "\n]}\n";

	CU_ASSERT_EQUAL(check_text(good), 0);
	/* crossed nesting: a closes before b */
	CU_ASSERT_EQUAL(check_text(HEAD EV("B", "0.001", "a") ",\n" EV("B", "0.002", "b") ",\n"
				   EV("E", "0.003", "a") ",\n" EV("E", "0.004", "b") "\n]}\n"), -1);
	/* an E with nothing open */
	CU_ASSERT_EQUAL(check_text(HEAD EV("E", "0.001", "a") "\n]}\n"), -1);
	/* left open */
	CU_ASSERT_EQUAL(check_text(HEAD EV("B", "0.001", "a") "\n]}\n"), -1);
	/* time going back */
	CU_ASSERT_EQUAL(check_text(HEAD EV("B", "0.002", "a") ",\n" EV("E", "0.001", "a")
				   "\n]}\n"), -1);
	/* a track never named */
	CU_ASSERT_EQUAL(check_text("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n"
				   EV("B", "0.001", "a") ",\n" EV("E", "0.002", "a") "\n]}\n"), -1);
	/* no footer */
	CU_ASSERT_EQUAL(check_text(HEAD EV("B", "0.001", "a") ",\n" EV("E", "0.002", "a") "\n"),
			-1);
}

/* The truth of every task through the writer: B, i, E exactly as it ran, track by track. */
static void check_truth(uint64_t seed)
{
	struct rt_case c;
	struct out_writer w = { .ops = &out_perfetto_ops, .perfetto_blocks = 1 };
	struct pf_read r;
	char *text = NULL, buf[160];
	size_t len = 0, k = 0;
	uint64_t i, t;
	int ok = 1;

	if (rt_case_make(&c, seed, 4, PT_MODE_TRACE, PT_ENC_WITNESS, 0)) {
		CU_FAIL("synthetic run");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(rt_truth_output(&c, &w, &text, &len), 0);
	if (pf_check(text, &r)) {
		fprintf(stderr, "perfetto: %s\n", r.why);
		CU_FAIL("the writer's file breaks the format");
	}
	CU_ASSERT_EQUAL(r.ntracks, RT_NTASKS);
	for (t = 0; t < RT_NTASKS; t++) {
		for (i = 0; i < c.t.nev && ok; i++) {
			const struct sim_event *ev = &c.t.ev[i];
			const struct pr_func *f;
			char ph;
			const char *name;

			if (c.t.ev[i].owner != RT_TASK(t))
				continue;
			f = pr_model_func(&c.m, ev->func);
			if (ev->type == REGEN_EV_ENTER) {
				ph = 'B';
				name = f->name;
			} else if (ev->type == REGEN_EV_EXIT) {
				ph = 'E';
				name = f->name;
			} else if (ev->type == REGEN_EV_BLOCK) {
				ph = 'i';
				name = pr_block_name(f, ev->block, buf, sizeof(buf));
			} else {
				continue;
			}
			while (k < r.nev && r.ev[k].tid != t + 1)
				k++;	/* tracks do not interleave, but be plain about it */
			ok = k < r.nev && r.ev[k].ph == ph && !strcmp(r.ev[k].name, name);
			if (!ok)
				fprintf(stderr, "perfetto: task %" PRIu64 " event %" PRIu64
					": want %c %s, file has %c %s\n", t, i, ph, name,
					k < r.nev ? r.ev[k].ph : '-', k < r.nev ? r.ev[k].name : "-");
			k++;
		}
	}
	CU_ASSERT(ok);
	CU_ASSERT_EQUAL(k, r.nev);	/* nothing more than the truth */
	CU_ASSERT(r.slices > 0);
	free(r.ev);
	free(text);
	rt_case_free(&c);
}

static void test_truth_as_slices(void)
{
	uint64_t seed = unit_seed();
	unsigned int i;

	for (i = 0; i < 4; i++)
		check_truth(seed * 7 + i);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int c;

	if (!f)
		return NULL;
	m = open_memstream(&buf, &len);
	while (m && (c = fgetc(f)) != EOF)
		fputc(c, m);
	if (m)
		fclose(m);
	fclose(f);
	return buf;
}

/* pathregen TRACE --format perfetto -o FILE on a regenerated trace. */
static void test_pathregen_writes_it(void)
{
	struct rt_case c;
	struct rt_result res = { 0 };
	struct pf_read r;
	char prog[4096], cmd[4400], out[] = "/tmp/pt-perfetto-XXXXXX";
	uint64_t i, enters = 0;
	char *text;
	int fd;

	if (!unit_sibling_prog("pathregen", prog, sizeof(prog))) {
		CU_FAIL("pathregen is not built next to unit-tests");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, unit_seed() * 5 + 3, 4, PT_MODE_TRACE,
					   PT_ENC_WITNESS, 0), 0);
	CU_ASSERT_EQUAL_FATAL(rt_regen(c.path, &res, NULL, 0, NULL), 0);
	for (i = 0; i < res.nev; i++)
		enters += res.ev[i].type == REGEN_EV_ENTER;
	fd = mkstemp(out);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s %s --format perfetto -o %s", prog, c.path, out);
	CU_ASSERT_EQUAL(system(cmd), 0);
	text = slurp(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	if (pf_check(text, &r)) {
		fprintf(stderr, "perfetto: %s\n", r.why);
		CU_FAIL("pathregen's file breaks the format");
	}
	CU_ASSERT_EQUAL(r.slices, enters);
	{
		struct pr_trace l;

		CU_ASSERT_EQUAL(pr_trace_load(c.path, &l, 0, 1), 0);
		CU_ASSERT_EQUAL(r.ntracks, l.ss.nstreams);	/* a track per stream */
		pr_trace_free(&l);
	}
	for (i = 0; i < r.nev; i++)	/* blocks only with --blocks */
		CU_ASSERT(r.ev[i].ph != 'i' || !strcmp(r.ev[i].name, "truncated") ||
			  !strcmp(r.ev[i].name, "gap"));
	free(r.ev);
	free(text);
	/* --blocks: one instant event per regenerated block */
	snprintf(cmd, sizeof(cmd), "%s %s --format perfetto --blocks -o %s", prog, c.path, out);
	CU_ASSERT_EQUAL(system(cmd), 0);
	text = slurp(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL(pf_check(text, &r), 0);
	{
		uint64_t blocks = 0, instants = 0;

		for (i = 0; i < res.nev; i++)
			blocks += res.ev[i].type == REGEN_EV_BLOCK;
		for (i = 0; i < r.nev; i++)
			instants += r.ev[i].ph == 'i' && strcmp(r.ev[i].name, "truncated") &&
				    strcmp(r.ev[i].name, "gap");
		CU_ASSERT_EQUAL(instants, blocks);
	}
	free(r.ev);
	free(text);
	unlink(out);
	rt_result_free(&res);
	rt_case_free(&c);
}

UNIT_SUITE(out_perfetto,
	   { "the checker refuses broken nesting, order and framing", test_checker_rejects },
	   { "a known execution: B, blocks, E as it ran, per track", test_truth_as_slices },
	   { "pathregen --format perfetto -o FILE: a slice per activation",
	     test_pathregen_writes_it })
