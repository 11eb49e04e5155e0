/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unit tests: one file per module, tests/unit/test_NAME.c, which defines
 * register_test_NAME() (the Makefile generates the list). Use UNIT_SUITE.
 */
#ifndef PT_UNIT_H
#define PT_UNIT_H

#include <stddef.h>

#include <CUnit/CUnit.h>

struct unit_test {
	const char *name;
	CU_TestFunc fn;
};

/* Adds a suite of tests; aborts the run if CUnit cannot. */
void unit_add_suite(const char *name, const struct unit_test *tests, unsigned int n);

#define UNIT_SUITE(name, ...)                                               \
	void register_test_##name(void);                                    \
	void register_test_##name(void)                                     \
	{                                                                   \
		static const struct unit_test t[] = { __VA_ARGS__ };        \
		unit_add_suite(#name, t, sizeof(t) / sizeof(t[0]));         \
	}

/* Seed for randomized tests: $PT_SEED if set, else time; printed by the runner. */
unsigned long unit_seed(void);

/*
 * The module tree /lib/modules/$PT_UNIT_KERNEL/kernel (make check-unit sets
 * it to the default kernel's release), else the newest installed Debian
 * kernel's (tools/install-deps installs them), or NULL when there is none.
 */
const char *unit_modules_dir(void);

/*
 * The file of module ko ("fs/ext4/ext4.ko") in unit_modules_dir(), as
 * installed: ko, or ko compressed (.xz, .zst, .gz), into path; 1 when
 * there is one, else 0.
 */
int unit_module_file(const char *ko, char *path, size_t len);

/*
 * The path of the program name built next to the running unit-tests (as
 * build/pathregen beside build/unit-tests) into path; 1 when it is there
 * and executable, else 0.
 */
int unit_sibling_prog(const char *name, char *path, size_t len);

#endif
