// SPDX-License-Identifier: GPL-2.0
/*
 * pathtracectl status: whether tracing is armed, records written and lost
 * since the last start, the stacks ENTERs unwound (framed plans: docs/runtime.md,
 * "Framed calls") and their time each, and per function: probes, how many the kernel
 * jump-optimized, handler hits, hits the kernel skipped (misses: each one
 * is a LOSS record in the stream), record bytes written, the bytes of its
 * counters on one CPU (edges counters, path counts), its mode and what
 * carries it (loaded_carrier: probes, copy+probes, inline-counters).
 * Exit status: 0, 1 if the module cannot be asked, 2 bad command line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "commands.h"
#include "loaded.h"

static int cmd_status(int argc, char **argv)
{
	struct pt_stats s;
	struct loaded_carriers lc;
	struct pt_func_info *f;
	int fd, n, i, ret = 0;

	if (ctl_no_args(argc, argv))
		return 2;
	fd = loaded_open("status");
	if (fd < 0)
		return 1;
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	if (ioctl(fd, PT_IOC_STATS, &s) < 0) {
		ctl_err("status", "PT_IOC_STATS: %s", strerror(errno));
		close(fd);
		return 1;
	}
	printf("tracing: %s; %u functions; since start: %" PRIu64 " records, %" PRIu64
	       " dropped (buffer full), %" PRIu64 " probe hits missed, %" PRIu64
	       " hits staged, %" PRIu64 " frames kept, %" PRIu64 " of them in softirqs, %" PRIu64
	       " frame walks (%.1f us each)\n",
	       s.tracing ? "on" : "off", s.nr_funcs, (uint64_t)s.records, (uint64_t)s.dropped,
	       (uint64_t)s.missed, (uint64_t)s.hits_staged, (uint64_t)s.frames_kept,
	       (uint64_t)s.frames_kept_softirq, (uint64_t)s.frame_walks,
	       s.frame_walks ? (double)s.frame_walk_ns / s.frame_walks / 1000 : 0.0);
	n = loaded_carriers(fd, "status", &lc) ? -1 : loaded_list(fd, "status", &f);
	if (n < 0) {
		close(fd);
		return 1;
	}
	printf("%-6s %-40s %7s %9s %12s %8s %12s %8s %9s %-14s %s\n", "id", "function", "probes",
	       "optimized", "hits", "misses", "bytes", "dropped", "counters", "mode", "carrier");
	for (i = 0; i < n; i++) {
		struct pt_func_stats fs;

		memset(&fs, 0, sizeof(fs));
		fs.size = sizeof(fs);
		fs.func_id = f[i].func_id;
		if (ioctl(fd, PT_IOC_FUNC_STATS, &fs) < 0) {
			ctl_err(f[i].name, "PT_IOC_FUNC_STATS: %s", strerror(errno));
			ret = 1;
			continue;
		}
		printf("%-6u %-40s %7u %9u %12" PRIu64 " %8" PRIu64 " %12" PRIu64 " %8" PRIu64
		       " %9" PRIu64 " %-14s %s\n",
		       f[i].func_id, f[i].name, fs.nr_probes, fs.nr_optimized, (uint64_t)fs.hits,
		       (uint64_t)fs.missed, (uint64_t)fs.bytes, (uint64_t)fs.dropped,
		       (uint64_t)fs.counter_bytes,
		       loaded_mode_name(f[i].mode, f[i].encoding, f[i].flags),
		       loaded_carrier(&f[i], &lc));
	}
	free(f);
	close(fd);
	return ret;
}

CTL_COMMAND(status, cmd_status, "", "tracing state; per function probes, optimized, hits, misses, "
	    "bytes, dropped, counter bytes a CPU, mode, carrier", NULL)
