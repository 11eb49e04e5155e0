// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: any bytes as a trace.bin, through everything pathregen
 * does with one: the reader, CFG blobs and plans (function models and
 * decoders), kbuffer page decoding, per-owner stream assembly, and the
 * regeneration engine on every stream. Built and run by `make check-fuzz`
 * with AddressSanitizer and UBSan; the seed corpus is tests/fixtures/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "out.h"
#include "regen.h"
#include "streams.h"

/* The engine must terminate on its own; this only bounds a pathological but finite run. */
#define MAX_EVENTS 2000000u

struct count {
	uint64_t events;
};

static int on_event(void *ctx, const struct regen_event *ev)
{
	struct count *c = ctx;

	(void)ev;
	return ++c->events > MAX_EVENTS;
}

/* The CFG blob decoder on its own too (pr_model_load stops at the first bad function part). */
static void decode_cfgs(const struct tracefile *tf)
{
	uint32_t i;

	for (i = 0; i < tf->nfuncs; i++) {
		struct cfg c;

		if (!cfg_blob_decode(tf->funcs[i].cfg, tf->funcs[i].cfg_len, &c))
			cfg_blob_free(&c);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tracefile tf;
	struct tr_records rs;
	struct regen_streams ss;
	struct pr_model m;
	uint32_t i;
	int model_ok;

	memset(&rs, 0, sizeof(rs));
	memset(&m, 0, sizeof(m));
	/* A failed parse still leaves the valid prefix: use it, as pathregen does. */
	if (tracefile_parse(data, size, &tf) == -PT_ENOMEM)
		goto out_tf;
	decode_cfgs(&tf);
	/* Functions exactly as pathregen loads them. */
	model_ok = pr_model_load(&tf, &m, NULL, NULL) >= 0;
	if (tr_decode_tracefile(&rs, &tf))
		goto out;
	if (regen_streams_build(&rs, &ss) == 0 && model_ok) {
		for (i = 0; i < ss.nstreams; i++) {
			struct count c = { 0 };
			const struct regen_stream *s = &ss.streams[i];
			uint32_t k;

			/* The stream contract the engine relies on: markers sorted by pos, inside the bits. */
			for (k = 0; k < s->nmarkers; k++)
				if (s->markers[k].pos > s->nbits ||
				    (k && s->markers[k].pos < s->markers[k - 1].pos))
					abort();
			regen_stream(&m.fs, s, on_event, &c);
		}
	}
	regen_streams_free(&ss);
out:
	pr_model_free(&m);
	tr_records_free(&rs);
out_tf:
	tracefile_free(&tf);
	return 0;
}
