/* SPDX-License-Identifier: GPL-2.0 */
/*
 * synth - synthetic traced programs and their recorded runs, for the
 * round-trip tests and the benchmark, with no kernel:
 *
 *  1. random x86-64 machine code per function (plain instructions, Jcc,
 *     jmp, direct calls to later functions, ret), recovered by the real
 *     CFG builder (cfg_build) and planned by the real planner
 *     (plan_build) in the chosen mode and encoding;
 *  2. a random execution that runs every plan's actions the way the
 *     module's handlers do (docs/runtime.md): per-CPU bit accumulators and
 *     path registers, ENTER/BLOCK records with flushes, owner switches
 *     with partial sums, task migration between CPUs; it yields the
 *     truth (every traced block and call, in order) and each CPU's
 *     records (pt_rec payloads with timestamps);
 *  3. the caller packs the records into ring-buffer pages and writes
 *     trace.bin (tests/unit/rbpage.h, tracefile.h).
 *
 * Oracle: the truth comes from walking the CFG, never from the decoders.
 */
#ifndef PATHTRACE_REGEN_SYNTH_H
#define PATHTRACE_REGEN_SYNTH_H

#include <stdint.h>

#include <pathtrace/cfg.h>
#include <pathtrace/plan.h>

#include "regen.h"

#define SYNTH_BASE 0xffffffffc0100000ull	/* function i at SYNTH_BASE + i * SYNTH_STRIDE */
#define SYNTH_STRIDE 0x10000ull
#define SYNTH_MAX_CODE 0x8000u
#define SYNTH_MAX_TASKS 64	/* tasks whose migrations are counted (ntasks beyond share none) */

struct synth_func {
	uint32_t func_id;
	char name[32];
	uint64_t addr;
	uint8_t *code;
	uint32_t len;
	struct cfg cfg;
	struct plan plan;
	void *plan_blob;
	size_t plan_len;
	uint8_t *cfg_blob;
	uint32_t cfg_len;
	uint32_t *site_of_insn;		/* per insn: site index + 1, 0 none */
	uint32_t *verify_of_insn;	/* per insn: verify site index + 1, 0 none */
	uint32_t *callee;		/* per block: function index of its call, or UINT32_MAX */
	uint32_t *dist;			/* per block: fewest edges to EXIT */
};

struct synth_program {
	uint32_t nfuncs;
	struct synth_func *funcs;
	uint16_t mode, encoding;
	uint32_t plan_flags;
};

struct synth_opts {
	uint32_t nfuncs;		/* functions (calls go from lower to higher index) */
	uint32_t max_labels;		/* labels (jump targets) per function, >= 2 */
	uint16_t mode;			/* PT_MODE_TRACE or PT_MODE_PATHS */
	uint16_t encoding;		/* PT_ENC_WITNESS, PT_ENC_BITS or PT_ENC_PATH */
	uint32_t plan_flags;		/* PT_PLAN_VERIFY */
};

/* xorshift64*. */
uint64_t synth_rand(uint64_t *rng);

/*
 * Generates a program (retrying functions the CFG builder or planner
 * refuses). Returns 0; -PT_ENOMEM; -PT_EREFUSED after too many refusals.
 */
int synth_generate(struct synth_program *p, const struct synth_opts *o, uint64_t *rng);

void synth_free(struct synth_program *p);

/* One recorded ring-buffer record. */
struct synth_rec {
	uint64_t ts;
	uint32_t cpu;
	uint16_t len;			/* payload bytes (pt_rec header included) */
	uint8_t payload[80];		/* the largest: BITS_ENTERS of 64 bits, 16 words */
};

struct synth_truth_ev {
	uint32_t type;			/* REGEN_EV_ENTER, _BLOCK, _EXIT */
	uint32_t func;			/* func_id */
	uint32_t block;
	uint32_t edge;			/* BLOCK: edge into it, UINT32_MAX at entry */
};

struct synth_run {
	struct synth_rec *recs;		/* every CPU's, in recording order */
	uint64_t nrecs, cap;
	struct synth_truth_ev *truth;	/* per owner, execution order */
	uint64_t ntruth, cap_truth;
	uint64_t *truth_owner;		/* per truth event: its owner */
	uint64_t blocks;		/* BLOCK events in the truth */
	uint64_t bits;			/* trace bits emitted */
	uint64_t dropped;		/* records the full ring buffer refused */
	int nomem;
};

struct synth_run_opts {
	uint32_t nr_cpus;		/* 1..8 */
	uint32_t ntasks;		/* owners TASK/100.. run activations in turn */
	uint64_t activations;		/* top-level activations in all */
	uint64_t max_steps;		/* per activation: then head to EXIT */
	uint32_t migrate_pct;		/* chance per handler that the task moves CPU */
	uint32_t irq_pct;		/* chance that an interrupt owner then runs on the old CPU */
	int no_truth;			/* count blocks only (benchmarks: runs too big to keep) */
	uint32_t drop_permille;		/* chance per record that the ring buffer is full: 1..8
					 * records are dropped, then LOSS(OVERRUN, n) precedes the
					 * next record written on that CPU (docs/runtime.md) */
};

/*
 * Runs activations of random functions and appends records and truth.
 * Returns 0 or -PT_ENOMEM.
 */
int synth_execute(const struct synth_program *p, const struct synth_run_opts *o, uint64_t *rng,
		  struct synth_run *r);

void synth_run_free(struct synth_run *r);

#endif
