// SPDX-License-Identifier: GPL-2.0
/* trace_load - a trace.bin read as pathregen reads it, for the tools (trace_load.h). */
#include <string.h>

#include <pathtrace/error.h>

#include "trace_load.h"

int pr_trace_load(const char *path, struct pr_trace *t, int model)
{
	int err;

	memset(t, 0, sizeof(*t));
	err = tracefile_read(path, &t->tf);
	if (!err)
		err = tr_decode_tracefile(&t->rs, &t->tf);
	if (!err)
		err = regen_streams_build(&t->rs, &t->ss);
	if (!err && model && pr_model_load(&t->tf, &t->m, NULL, NULL) < 0)
		err = -PT_EFORMAT;
	return err;
}

void pr_trace_free(struct pr_trace *t)
{
	regen_streams_free(&t->ss);
	tr_records_free(&t->rs);
	pr_model_free(&t->m);
	tracefile_free(&t->tf);
}
