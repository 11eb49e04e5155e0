/* SPDX-License-Identifier: GPL-2.0 */
/*
 * osp_live - the kernel's online subpath profile (kmod/osp.c) read from
 * every online CPU (PT_IOC_SUBPATHS_READ) and merged into estimates, for
 * `pathtracectl subpaths` and `top`.
 */
#ifndef PATHTRACECTL_OSP_LIVE_H
#define PATHTRACECTL_OSP_LIVE_H

#include <stdint.h>
#include <stdio.h>

#include "pathtrace_abi.h"

struct osp_estimate {
	struct pt_subpath sp;	/* count: sampled occurrences over all CPUs */
	double estimate;	/* sum over CPUs of count * 2^tau_log2 * PT_OSP_LENGTHS */
	double stderr_;		/* the binomial samples' standard error */
	double scale;		/* the largest 2^tau_log2 * PT_OSP_LENGTHS among its CPUs */
};

struct osp_live {
	struct osp_estimate *e;		/* most frequent first */
	uint32_t n;
	uint32_t cpus, capacity;	/* CPUs read, hot-list entries per CPU */
	uint32_t tau_log2_max;
	uint64_t positions, samples, cut;
};

/*
 * Reads and merges every online CPU's hot list. Returns 0; -PT_ENOENT
 * when the module has no OSP configured (record --osp N); -PT_EIO with
 * errno set when an ioctl fails otherwise; -PT_ENOMEM.
 */
int osp_live_read(int fd, struct osp_live *out);

/*
 * Prints the k most frequent: "ESTIMATE ±STDERR  LEN: NAME:PATH ..." with
 * names from info (n entries; "?" for a func_id not there).
 */
void osp_live_print(FILE *fp, const struct osp_live *o, const struct pt_func_info *info, int n,
		    uint32_t k);

void osp_live_free(struct osp_live *o);

#endif
