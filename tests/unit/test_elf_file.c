// SPDX-License-Identifier: GPL-2.0
/*
 * elf_file (userspace/lib/source/elf_file.h) through elfobj_open: an object
 * compressed as distributions install modules (xz, zstd, gzip, by xz(1),
 * zstd(1), gzip(1)) reads as the plain object does; a compressed stream
 * cut short is malformed input, a missing file an I/O error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/elfobj.h>
#include <pathtrace/error.h>

#include "cfg_asm.h"
#include "unit.h"

static const char text[] =
	"	.text\n	.type one,@function\none:	call __fentry__\n	ret\n	.size one, .-one\n"
	"	.type two,@function\ntwo:	call __fentry__\n	test %edi,%edi\n	je 1f\n"
	"	call one\n1:	ret\n	.size two, .-two\n";

static void test_compressed(void)
{
	static const char *const packers[][2] = {
		{ "xz -kf", "xz" }, { "zstd -qf", "zst" }, { "gzip -kf", "gz" },
	};
	struct elfobj *plain, *o;
	char cmd[1024], path[300];
	unsigned int k, i;

	plain = cfg_asm_object("packed", text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
	CU_ASSERT_EQUAL_FATAL(elfobj_nfuncs(plain), 2);
	for (k = 0; k < 3; k++) {
		snprintf(cmd, sizeof(cmd), "cd %s && %s packed.o", cfg_asm_dir(), packers[k][0]);
		CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
		snprintf(path, sizeof(path), "%s/packed.o.%s", cfg_asm_dir(), packers[k][1]);
		CU_ASSERT_EQUAL_FATAL(elfobj_open(path, &o), 0);
		CU_ASSERT_EQUAL_FATAL(elfobj_nfuncs(o), elfobj_nfuncs(plain));
		for (i = 0; i < elfobj_nfuncs(o); i++) {
			CU_ASSERT_STRING_EQUAL(elfobj_func(o, i)->name, elfobj_func(plain, i)->name);
			CU_ASSERT_EQUAL(elfobj_func(o, i)->size, elfobj_func(plain, i)->size);
		}
		elfobj_close(o);
		/* cut short: the stream does not decompress */
		snprintf(cmd, sizeof(cmd), "cd %s && head -c 60 packed.o.%s > cut.%s", cfg_asm_dir(),
			 packers[k][1], packers[k][1]);
		CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
		snprintf(path, sizeof(path), "%s/cut.%s", cfg_asm_dir(), packers[k][1]);
		CU_ASSERT_EQUAL(elfobj_open(path, &o), -PT_EFORMAT);
	}
	elfobj_close(plain);
	errno = 0;
	CU_ASSERT_EQUAL(elfobj_open("/nonexistent.ko.xz", &o), -PT_EIO);
	CU_ASSERT_EQUAL(errno, ENOENT);
}

UNIT_SUITE(elf_file,
	   { "modules compressed with xz, zstd, gzip read as the plain object", test_compressed })
