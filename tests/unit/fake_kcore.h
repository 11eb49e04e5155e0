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

struct klive;

/*
 * A fake live vmlinux: asm (a .s file's text) assembled and linked with
 * .text at 0xffffffff81000000 and __x86_return_thunk at 0xffffffff81003000,
 * its image as kcore (16 KiB) and `nm` of it, minus the lines grep -v -e
 * drop matches (NULL: none), as kallsyms, under name in cfg_asm_dir().
 * Returns the klive over them, or NULL (CUnit failures recorded).
 */
struct klive *fake_kernel_open(const char *name, const char *asm_text, const char *drop);

#endif
