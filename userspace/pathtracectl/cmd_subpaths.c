// SPDX-License-Identifier: GPL-2.0
/*
 * pathtracectl subpaths [-k LINES]: the kernel's online subpath profile
 * now (record --osp N configures it; it runs beside path-profile plans and
 * stays readable after the recording until the next one starts): the
 * hottest runs of 2, 4 and 8 consecutive path ends, each with its
 * estimated count and standard error, merged over CPUs.
 *
 *   # OSP: CPUS cpus, ENTRIES subpaths each, 1 path end in 2^T sampled, ...
 *   ESTIMATE ±STDERR  LEN: NAME:PATH NAME:PATH ...
 *
 * Exit status: 0; 1 if the module cannot be asked or has no OSP
 * configured; 2 for a bad command line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <pathtrace/error.h>

#include "commands.h"
#include "loaded.h"
#include "osp_live.h"

static int cmd_subpaths(int argc, char **argv)
{
	struct pt_func_info *info;
	unsigned long k = 20;
	struct osp_live o;
	struct ctl_args a;
	char *end;
	int r, fd, n, err;

	ctl_args_init(&a, argc, argv);
	while ((r = ctl_next(&a)) != CTL_END) {
		if (r == CTL_BAD)
			return 2;
		if (r == CTL_OPERAND)
			return ctl_usage_err("subpaths", "unexpected argument %s", a.val);
		k = strtoul(a.val, &end, 10);
		if (*end || !k || k > 100000)
			return ctl_usage_err("subpaths", "-k %s: lines between 1 and 100000", a.val);
	}
	fd = loaded_open("subpaths");
	if (fd < 0)
		return 1;
	n = loaded_list(fd, "subpaths", &info);
	if (n < 0) {
		close(fd);
		return 1;
	}
	err = osp_live_read(fd, &o);
	close(fd);
	if (err) {
		ctl_err("subpaths", "%s", err == -PT_ENOENT ?
			"no online subpath profile: record with --osp N beside path-profile plans" :
			pt_strerror(err));
		free(info);
		return 1;
	}
	printf("# OSP: %u cpus, %u subpaths each, 1 path end in 2^%u sampled (at most), "
	       "%" PRIu64 " path ends, %" PRIu64 " samples, %" PRIu64 " cut; "
	       "estimate = sampled x 2^tau x %u lengths\n",
	       o.cpus, o.capacity, o.tau_log2_max, o.positions, o.samples, o.cut,
	       PT_OSP_LENGTHS);
	osp_live_print(stdout, &o, info, n, (uint32_t)k);
	osp_live_free(&o);
	free(info);
	return 0;
}

static const struct ctl_opt subpaths_opts[] = {
	{ "--lines", 'k', "N", "the N hottest subpaths (20)" },
	{ NULL, 0, NULL, NULL },
};

CTL_COMMAND(subpaths, cmd_subpaths, "", "the kernel's online subpath profile: hottest runs of "
	    "2, 4, 8 path ends (record --osp N)", subpaths_opts)
