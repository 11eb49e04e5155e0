/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tf_sample - a small hand-made trace for tests and the fixture: a
 * three-block CFG ("sample_fn": a compare, a call, a return), its plan,
 * and ring-buffer pages of two CPUs in the kernel's page format.
 */
#ifndef PT_TEST_TF_SAMPLE_H
#define PT_TEST_TF_SAMPLE_H

#include <stdint.h>
#include <stdio.h>

#include <pathtrace/cfg.h>

#define SAMPLE_FUNC_ID 7
#define SAMPLE_ADDR 0xffffffffc0001000ull
#define SAMPLE_PAGE 4096u

/* Fills c with the sample CFG (static storage: do not free). */
void sample_cfg(struct cfg *c);

/* The sample plan blob (static storage); *len its length. */
const void *sample_plan(uint32_t *len);

/* The sample code bytes (static storage, SAMPLE_LEN bytes). */
#define SAMPLE_LEN 16u
extern const uint8_t sample_code[SAMPLE_LEN];

/*
 * Writes the sample trace.bin to f: SYSTEM, FUNCTION, PAGES for CPUs 0 and
 * 1 (CPU 0's split over two sections), an unknown section 99, LOSS, END.
 * Returns 0 or the writer's error.
 */
int sample_write(FILE *f);

/* Writes it into memory; returns a malloc'd buffer and its size in *size. */
uint8_t *sample_bytes(size_t *size);

/*
 * Rewrites the trace.bin in b (size bytes) in place as format 2.0 wrote
 * it: no CHECKSUM sections, minor 0, so that a test of the structure alone
 * can patch it. Returns its new size.
 */
size_t tf_strip_checksums(uint8_t *b, size_t size);

struct tracefile;

/*
 * tf written again through the writer (format 2.1: checksums), into
 * memory: SYSTEM, its functions, each stored page as a PAGES_TRIMMED
 * section of its own, LOSS. Only the pages whose bytes end at or before
 * offset until of tf's file are written, and LOSS only when until is
 * tf->size or more; then, for each CPU in gap_cpus (bit c: CPU c), one
 * page that fails its checksum (a gap at the end of that CPU's records).
 * Returns the bytes (malloc'd; *size their length), or NULL.
 */
uint8_t *tf_rewrite(const struct tracefile *tf, uint64_t until, uint64_t gap_cpus, size_t *size);

#endif
