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

/* A fake live kernel's /proc/kallsyms and /proc/kcore (make_fake_kernel). */
struct fake_kernel {
	char kallsyms[512], kcore[512];
};

/*
 * Assembles text (in cfg_asm_dir(), files NAME.*) linked at
 * 0xffffffff81000000, with __x86_return_thunk at return_thunk (in kallsyms
 * only); kallsyms is `nm` of it without absolute symbols and without the
 * lines matching the grep(1) arguments drop (NULL: none); kcore covers
 * 0x4000 bytes. Returns make_kcore's count (0 if anything failed).
 */
int make_fake_kernel(const char *name, const char *text, uint64_t return_thunk,
		     const char *drop, struct fake_kernel *fk);

#endif
