/* SPDX-License-Identifier: GPL-2.0 */
/*
 * decode_paths - the path-mode decoder (1996 path numbers) for the engine.
 *
 * Its model is a struct pathnum (pathtrace/pathnum.h) built on the same
 * graph as regen_func.g. Val and NumPaths depend only on the graph (not on
 * the spanning tree the plan used), so the regenerator rebuilds the model
 * from the CFG alone; decode_paths_model checks the width against the plan.
 */
#ifndef PATHTRACE_DECODE_PATHS_H
#define PATHTRACE_DECODE_PATHS_H

#include <pathtrace/path_codes.h>
#include <pathtrace/pathnum.h>

#include "regen.h"

extern const struct regen_decoder_ops regen_decode_paths_ops;

/*
 * The model: the numbering, and the plan's path codes when it has them.
 * With codes, a number whose bits do not start a segment of the stream is
 * read as a word of the class of where its path starts (path_codes.h); one
 * that does is read in the full width, as every number without codes
 * (FORMAT.md, "Path numbers coded by start").
 */
struct paths_model {
	struct pathnum pn;
	struct path_codes pc;
	int coded;
};

/*
 * Builds the decoder's model for g into *out (free with
 * decode_paths_model_free). plan_nbits is the width the plan's PATH_EMIT
 * actions use, or -1 to skip the check. Returns 0; -PT_EFORMAT when the
 * widths differ; pathnum_build's errors.
 */
int decode_paths_model(const struct graph *g, int plan_nbits, struct paths_model **out);

/*
 * Adds a plan's path codes to model m (path_codes_load checks them against
 * its numbering). Returns 0; -PT_EFORMAT (why says what); -PT_ENOMEM.
 */
int decode_paths_codes(struct paths_model *m, const struct pt_path_code *codes, uint32_t ncodes,
		       const struct pt_path_range *ranges, uint32_t nranges, uint64_t npaths,
		       char *why, size_t whylen);

/* Frees a model from decode_paths_model (takes void * to fit pr_func.model_free). */
void decode_paths_model_free(void *model);

#endif
