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

#include <pathtrace/pathnum.h>

#include "regen.h"

extern const struct regen_decoder_ops regen_decode_paths_ops;

/*
 * Builds the decoder's model for g into *out (free with
 * decode_paths_model_free). plan_nbits is the width the plan's PATH_EMIT
 * actions use, or -1 to skip the check. Returns 0; -PT_EFORMAT when the
 * widths differ; pathnum_build's errors.
 */
int decode_paths_model(const struct graph *g, int plan_nbits, struct pathnum **out);

/* Frees a model from decode_paths_model (takes void * to fit pr_func.model_free). */
void decode_paths_model_free(void *model);

#endif
