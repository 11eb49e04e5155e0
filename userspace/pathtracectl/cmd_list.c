// SPDX-License-Identifier: GPL-2.0
/*
 * pathtracectl list: the functions pathtrace.ko has plans for, one per
 * line: func_id, name, address, size (+ cold part), mode, verify and what
 * carries the plan (loaded_carrier: probes, copy+probes, inline-counters).
 * Exit status: 0, 1 if the module cannot be asked, 2 bad command line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "commands.h"
#include "loaded.h"

static int cmd_list(int argc, char **argv)
{
	struct loaded_carriers lc;
	struct pt_func_info *f;
	int fd, n, i;

	if (ctl_no_args(argc, argv))
		return 2;
	fd = loaded_open("list");
	if (fd < 0)
		return 1;
	n = loaded_carriers(fd, "list", &lc) ? -1 : loaded_list(fd, "list", &f);
	close(fd);
	if (n < 0)
		return 1;
	printf("%-6s %-40s %-18s %8s %-14s %-6s %s\n", "id", "function", "address", "bytes", "mode",
	       "verify", "carrier");
	for (i = 0; i < n; i++) {
		printf("%-6u %-40s 0x%016" PRIx64 " %8u %-14s %-6s %s\n", f[i].func_id, f[i].name,
		       (uint64_t)f[i].addr, f[i].len + f[i].cold_len,
		       loaded_mode_name(f[i].mode, f[i].encoding, f[i].flags),
		       (f[i].flags & PT_PLAN_VERIFY) ? "yes" : "no", loaded_carrier(&f[i], &lc));
	}
	free(f);
	return 0;
}

CTL_COMMAND(list, cmd_list, "", "the functions with an installed plan, and what carries it", NULL)
