/* SPDX-License-Identifier: GPL-2.0 */
/* A fake /proc/kcore for unit tests: an ELF core file over a linked image. */
#ifndef PT_TEST_FAKE_KCORE_H
#define PT_TEST_FAKE_KCORE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Writes a one-segment ELF core at path holding img's allocated PROGBITS
 * sections that lie in [base, base + size). Returns how many sections it
 * copied (0 if it could not write path).
 */
int make_kcore(const char *img, const char *path, uint64_t base, size_t size);

#endif
