// SPDX-License-Identifier: GPL-2.0
/*
 * mkseeds - writes the fuzzer's extra seeds, tests/fuzz/seeds/*.bin: small
 * simulated traces (tests/oracle/sim.h programs lowered to x86 code and run
 * by its module back end, written by the unit tests' regen_trace.c) in each
 * decodable mode, so the fuzzer starts from inputs that reach the decoders
 * and the engine. Not built by make; run
 *
 *   make O=build userspace build/unit-tests
 *   cc -std=gnu11 -D_GNU_SOURCE -Iuserspace/include -Itrace-format -Iregen -Itests/unit \
 *      -Itests/oracle tests/fuzz/mkseeds.c tests/unit/regen_trace.c \
 *      build/liboracle.a build/libregen.a build/libpathtrace.a \
 *      -lZydis -lZycore -lelf -ltraceevent -lm -o /tmp/mkseeds && /tmp/mkseeds tests/fuzz/seeds
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "regen_trace.h"

static const struct {
	const char *name;
	uint16_t mode, encoding;
	uint32_t flags;
} kinds[] = {
	{ "paths", PT_MODE_PATHS, PT_ENC_PATH, 0 },
	{ "witness", PT_MODE_TRACE, PT_ENC_WITNESS, 0 },
	{ "bits-verify", PT_MODE_TRACE, PT_ENC_BITS, PT_PLAN_VERIFY },
};

int main(int argc, char **argv)
{
	unsigned int k;

	if (argc != 2)
		return fprintf(stderr, "usage: mkseeds DIR\n"), 2;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct rt_case c;
		char dst[512];
		FILE *in, *out;
		char buf[65536];
		size_t n;
		int err = rt_case_make(&c, 1234 + k, 2, kinds[k].mode, kinds[k].encoding,
				       kinds[k].flags);

		if (err) {
			fprintf(stderr, "mkseeds: %s: error %d\n", kinds[k].name, err);
			return 1;
		}
		snprintf(dst, sizeof(dst), "%s/synth-%s.bin", argv[1], kinds[k].name);
		in = fopen(c.path, "rb");
		out = fopen(dst, "wb");
		if (!in || !out)
			return perror(dst), 1;
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, n, out);
		fclose(in);
		fclose(out);
		printf("%s\n", dst);
		rt_case_free(&c);
	}
	return 0;
}
