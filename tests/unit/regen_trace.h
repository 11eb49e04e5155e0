/* SPDX-License-Identifier: GPL-2.0 */
/*
 * regen_trace - test support for pathregen's tests: writes a simulated run
 * of a lowered program (tests/oracle/sim.h, the module back end) as trace.bin (ring-buffer pages in the kernel's format,
 * rbpage.h) and regenerates a trace.bin the way pathregen does, collecting
 * the events.
 */
#ifndef PT_TEST_REGEN_TRACE_H
#define PT_TEST_REGEN_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "out.h"
#include "sim.h"
#include "streams.h"

#define RT_PAGE 4096u

/* Writes p (its traced functions) and r as trace.bin to f. Returns 0 or a negative PT_E*. */
int rt_write(FILE *f, const struct sim_program *p, const struct sim_kmod_run *r, uint32_t nr_cpus);

/* Writes it to a temporary file; returns its path (static buffer) or NULL. */
const char *rt_write_tmp(const struct sim_program *p, const struct sim_kmod_run *r,
			 uint32_t nr_cpus);

/* One collected event: ENTER, BLOCK, EXIT, and GAP / TRUNCATED as separators. */
struct rt_event {
	uint64_t owner;
	uint32_t type, func, block, edge;
};

struct rt_result {
	struct rt_event *ev;
	uint64_t nev, cap;
	uint32_t gaps, truncated;
	uint64_t bad_input;		/* pages, events and records the reader could not read */
	int load_bad;			/* pr_model_load's count of unusable functions */
	int file_err;			/* tracefile_read's result */
};

/*
 * Reads path and regenerates every stream like pathregen, collecting
 * events; extra writers (may be NULL/0) see the same steps. Returns 0 or
 * the first error.
 */
int rt_regen(const char *path, struct rt_result *res, struct out_writer *const *extra,
	     unsigned int nextra, struct pr_model *keep_model);

void rt_result_free(struct rt_result *res);

/* Whether streams a and b hold the same: owners, bits, markers, segments, resets, forks. */
int rt_same_streams(const struct regen_streams *a, const struct regen_streams *b);

#endif

/*
 * A generated program (closed: every function traced, every call to one of
 * them), one run of it, its truth, its trace.bin and the model pathregen
 * loads from it.
 */
struct rt_case {
	struct sim_program p;
	struct sim_kmod_run r;
	struct sim_truth t;
	struct pr_model m;
	char path[64];
};

/*
 * A recorded run: a program generated with go and lowered with lo, run on
 * the simulated module with ko (its truth t, its records r), written as
 * trace.bin at path (ko->nr_cpus CPUs; removed by rt_run_free).
 */
struct rt_run {
	struct sim_program p;
	struct sim_kmod_run r;
	struct sim_truth t;
	char path[64];
};

/* Makes one; *rng goes on. Returns 0 or a negative PT_E* (free it either way). */
int rt_run_make(struct rt_run *x, uint64_t *rng, const struct sim_gen_opts *go,
		const struct sim_lower_opts *lo, const struct sim_kmod_opts *ko);

void rt_run_free(struct rt_run *x);

/* Makes one (1 CPU, 3 tasks). Returns 0 or a negative PT_E*. */
int rt_case_make(struct rt_case *c, uint64_t seed, uint32_t nfuncs, uint16_t mode,
		 uint16_t encoding, uint32_t plan_flags);

void rt_case_free(struct rt_case *c);

/* The truth of owner as engine events (malloc'd; *n of them); NULL if none or no memory. */
struct regen_event *rt_truth_events(const struct sim_truth *t, uint64_t owner, uint64_t *n);

#define RT_TASK(i) PT_OWNER(PT_OWNER_TASK, 100 + (i))
#define RT_NTASKS 3

/*
 * Opens the writers ws[0..n) and feeds them every task's truth, task after
 * task (stream index = task number); closing is the caller's. Returns 0 or
 * the first writer error (-PT_ENOMEM).
 */
int rt_feed_truth(const struct rt_case *c, struct out_writer *const *ws, unsigned int n);

/*
 * rt_feed_truth to the one writer w (its model set to c's), its output in
 * memory: *text (malloc'd, free it; NUL-terminated) and *len; w is closed.
 * Returns 0, the first writer error, or -PT_ENOMEM.
 */
int rt_truth_output(const struct rt_case *c, struct out_writer *w, char **text, size_t *len);

/* How many instructions the truth executes, all tasks together. */
uint64_t rt_truth_insns(const struct rt_case *c);
