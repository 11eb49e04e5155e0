/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace_load - a trace.bin read the way pathregen reads it (the file, its
 * pages as records, the owners' streams and, if asked, the functions'
 * model), for the benchmarks and tools that regenerate without pathregen's
 * reporting.
 */
#ifndef PATHTRACE_REGEN_TRACE_LOAD_H
#define PATHTRACE_REGEN_TRACE_LOAD_H

#include <pathtrace/tracefile.h>

#include "out.h"
#include "streams.h"

struct pr_trace {
	struct tracefile tf;
	struct tr_records rs;
	struct regen_streams ss;
	struct pr_model m;		/* zero unless model was asked for */
};

/*
 * Reads path into t; model: also every function's model (pr_model_load).
 * Returns 0; tracefile_read's, tr_decode_tracefile's or
 * regen_streams_build's error (-PT_EIO with errno, -PT_EFORMAT,
 * -PT_ETRUNC, -PT_EVERSION, -PT_ENOMEM); -PT_EFORMAT when the model
 * cannot be loaded. Free t with pr_trace_free either way.
 */
int pr_trace_load(const char *path, struct pr_trace *t, int model);

void pr_trace_free(struct pr_trace *t);

#endif
