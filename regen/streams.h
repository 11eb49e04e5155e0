/* SPDX-License-Identifier: GPL-2.0 */
/*
 * streams - per-owner stream assembly (docs/runtime.md, FORMAT.md
 * "From records to streams"): every CPU's records are cut into segments at
 * OWNER records; an owner's segments, ordered by their OWNER stamps, give
 * its bitstring and its markers (struct regen_stream).
 *
 * Losses: a LOSS record is a marker in the stream whose segment is open on
 * its CPU. LOSS(OVERRUN) and the reader's LOSS(TR_LOSS_CORRUPT) also close
 * that segment: records up to the next OWNER record on that CPU cannot be
 * attributed, so they are counted (unowned_*), never guessed into a stream.
 * A segment hidden by such a loss has a stamp strictly between lo (the
 * segment open at the loss) and hi (the next OWNER on that CPU), so every
 * other owner that can run on that CPU (tasks; that CPU's idle and
 * interrupt owners) gets a LOSS marker at each boundary between two of its
 * segments whose stamps straddle (lo, hi), including before its first and
 * after its last. Records before a CPU's first OWNER are such a loss with lo
 * unknown. LOSS(MISSED) marks that CPU's interrupt owners likewise.
 *
 * Forks: a FORK record is a REGEN_M_FORK marker in its owner's stream, and
 * the child's stream gets a REGEN_M_FORKED marker at the start of its first
 * segment stamped after the fork (a LOSS marker at that boundary comes
 * first). An EXEC record is a REGEN_M_EXEC marker in its owner's stream.
 */
#ifndef PATHTRACE_STREAMS_H
#define PATHTRACE_STREAMS_H

#include <stdint.h>

#include <pathtrace/tracefile.h>

#include "regen.h"

struct regen_streams {
	struct regen_stream *streams;	/* sorted by owner */
	uint32_t nstreams;
	uint64_t unowned_records;	/* records before a CPU's first OWNER or after a gap */
	uint64_t unowned_bits;		/* bits in them */
	uint64_t counters_records;	/* PT_REC_COUNTERS (edge mode): not part of streams */
	uint64_t loss_records;		/* LOSS records and reader losses seen */
	/*
	 * FORK records (docs/user.md, "Fork, exec and signals"), in recording
	 * order by CPU: each stream's forks point here. What a child inherits
	 * is set by regen_forks_resolve.
	 */
	struct regen_fork *forks;
	uint32_t nforks, capforks;
	/* Storage (owned). */
	uint64_t **bits_store;
	struct regen_marker **marker_store;
	uint64_t **seg_store;		/* per stream: its segment starts */
	uint64_t **reset_store;		/* per stream: its resets (regen_stream.resets) */
	struct regen_where **where_store;	/* per stream: where its markers were recorded */
};

/*
 * Builds the streams of rs. Returns 0, -PT_ENOMEM, -PT_EOVERFLOW (a
 * stream longer than 2^40 bits or 2^32 markers, or 2^24 - 1 forks: a
 * marker's arg names a fork) or -PT_EFORMAT (a BLOCK record of block 2^24
 * or more: no function has that many). Free with regen_streams_free
 * whatever it returns.
 */
int regen_streams_build(const struct tr_records *rs, struct regen_streams *out);

/*
 * The same in steps, for records that come a few at a time (the pages as
 * they are decoded): each record is cut into its owner's store when it is
 * added, so the records can be dropped after regen_streams_add. Records of
 * one CPU must come in recording order; CPUs may interleave. What the
 * streams hold is the same as regen_streams_build's of every record.
 * begin (jobs: threads finish may assemble the owners' streams on, 0 or 1:
 * the caller's alone) returns 0 or -PT_ENOMEM; add returns 0 or the first error
 * (-PT_ENOMEM, -PT_EOVERFLOW, -PT_EFORMAT), after which nothing more is cut; finish
 * returns that error or its own as regen_streams_build does, and frees b.
 * abort frees b without streams.
 */
struct regen_streams_builder;

int regen_streams_begin(struct regen_streams_builder **b, unsigned int jobs);
int regen_streams_add(struct regen_streams_builder *b, const struct tr_records *rs, size_t first,
		      size_t n);
int regen_streams_finish(struct regen_streams_builder *b, struct regen_streams *out);
void regen_streams_abort(struct regen_streams_builder *b);

/*
 * Moves what from was given into into and frees from, when their records
 * were of different CPUs (each CPU's with one builder), so that several
 * threads can cut their CPUs' records at once: into then holds what one
 * builder given both's records would, and may take more records. Returns
 * 0; the first error of either (then into keeps it, as add's); -PT_EINVAL
 * for a CPU both were given records of; -PT_ENOMEM, -PT_EOVERFLOW.
 */
int regen_streams_merge(struct regen_streams_builder *into, struct regen_streams_builder *from);

void regen_streams_free(struct regen_streams *s);

/*
 * What each fork's child inherits (struct regen_fork: known, frames): the
 * engine over fs walks each parent's stream up to its last fork, parents
 * in the order of their forks' stamps (so a parent that is itself a forked
 * child has its own inheritance first). Until then, and for a fork whose
 * parent's walk could not say, a child inherits nothing. Returns 0 or
 * -PT_ENOMEM.
 */
int regen_forks_resolve(const struct regen_funcs *fs, struct regen_streams *ss);

/* The stream of owner, or NULL. */
const struct regen_stream *regen_streams_find(const struct regen_streams *s, uint64_t owner);

#endif
