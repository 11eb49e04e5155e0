// SPDX-License-Identifier: GPL-2.0
/*
 * The CUnit runner: registers every suite, runs them in basic mode and exits
 * non-zero on any failure. `unit-tests SUITE...` runs only the named suites.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "unit.h"

void unit_register_all(void);

static int nr_only;
static char **only;
static unsigned long seed;

unsigned long unit_seed(void)
{
	return seed;
}

int unit_sibling_prog(const char *name, char *path, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", path, len);
	char *slash;

	if (n <= 0 || (size_t)n >= len)
		return 0;
	path[n] = 0;
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash + 1 - path) + strlen(name) >= len)
		return 0;
	strcpy(slash + 1, name);
	return access(path, X_OK) == 0;
}

const char *unit_modules_dir(void)
{
	static char dir[512];
	glob_t g;
	size_t i;

	if (dir[0])
		return dir;
	/* make check-unit names the default kernel's (docs/kernels.md) */
	if (getenv("PT_UNIT_KERNEL") && *getenv("PT_UNIT_KERNEL")) {
		snprintf(dir, sizeof(dir), "/lib/modules/%s/kernel", getenv("PT_UNIT_KERNEL"));
		return dir;
	}
	if (glob("/lib/modules/*/kernel", GLOB_ONLYDIR, NULL, &g))
		return NULL;
	for (i = 0; i < g.gl_pathc; i++)	/* the highest release, as sort -V would */
		if (!dir[0] || strverscmp(g.gl_pathv[i], dir) > 0)
			snprintf(dir, sizeof(dir), "%s", g.gl_pathv[i]);
	globfree(&g);
	return dir[0] ? dir : NULL;
}

int unit_module_file(const char *ko, char *path, size_t len)
{
	static const char *const ext[] = { "", ".xz", ".zst", ".gz" };
	unsigned int i;

	for (i = 0; unit_modules_dir() && i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(path, len, "%s/%s%s", unit_modules_dir(), ko, ext[i]);
		if (!access(path, R_OK))
			return 1;
	}
	return 0;
}

void unit_add_suite(const char *name, const struct unit_test *tests, unsigned int n)
{
	CU_pSuite s;
	unsigned int i;
	int k, wanted = !nr_only;

	for (k = 0; k < nr_only; k++)
		if (!strcmp(only[k], name))
			wanted = 1;
	if (!wanted)
		return;
	s = CU_add_suite(name, NULL, NULL);
	if (!s) {
		fprintf(stderr, "unit-tests: CU_add_suite(%s): %s\n", name, CU_get_error_msg());
		exit(2);
	}
	for (i = 0; i < n; i++) {
		if (!CU_add_test(s, tests[i].name, tests[i].fn)) {
			fprintf(stderr, "unit-tests: CU_add_test(%s): %s\n", tests[i].name,
				CU_get_error_msg());
			exit(2);
		}
	}
}

int main(int argc, char **argv)
{
	const char *env = getenv("PT_SEED");
	unsigned int failures;

	seed = env ? strtoul(env, NULL, 0) : (unsigned long)time(NULL);
	printf("unit-tests: seed %lu (replay with PT_SEED=%lu)\n", seed, seed);
	nr_only = argc - 1;
	only = argv + 1;
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "unit-tests: %s\n", CU_get_error_msg());
		return 2;
	}
	unit_register_all();
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	if (CU_get_error() != CUE_SUCCESS)
		failures++;
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
