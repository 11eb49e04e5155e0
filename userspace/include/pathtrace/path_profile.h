/* SPDX-License-Identifier: GPL-2.0 */
/*
 * path_profile - a measured Ball-Larus path profile (the text
 * `pathregen --paths` writes) as the interesting paths of preferential
 * path profiling: plan a PPP profile from an earlier run's hottest paths,
 * as profile-guided optimization does.
 *
 * The format read, one function after another:
 *   NAME (func ID): N paths executed, ...
 *   COUNT  path ID: BLOCK...            (hottest first)
 * Lines starting with '#' and blank lines are skipped; a heading whose
 * paths were not numbered has no path lines. The numbers mean what the
 * planner's numbering (pathnum.h) of the same code means; a function
 * whose code changed since may name paths it no longer has, which the
 * planner drops, or other paths, whose counts are then exact but not the
 * ones wanted.
 */
#ifndef PATHTRACE_PATH_PROFILE_H
#define PATHTRACE_PATH_PROFILE_H

#include <stdint.h>
#include <stdio.h>

struct path_profile_func {
	char *name;
	uint64_t *paths;	/* Ball-Larus numbers, hottest first */
	uint64_t *counts;
	uint32_t npaths;
};

struct path_profile {
	struct path_profile_func *funcs;
	uint32_t nfuncs;
};

/*
 * Reads a profile from fp. Returns 0; -PT_EFORMAT with *line set to the
 * first line it cannot read (a path line before any heading, a malformed
 * count or number); -PT_ENOMEM. Free p with path_profile_free either way.
 */
int path_profile_read(FILE *fp, struct path_profile *p, uint32_t *line);

/* The first function named name, or NULL. */
const struct path_profile_func *path_profile_find(const struct path_profile *p, const char *name);

void path_profile_free(struct path_profile *p);

#endif
