// SPDX-License-Identifier: GPL-2.0
/*
 * pathtracectl top: a live view while tracing runs (record in another
 * shell), refreshed every interval like perf top: the functions with the
 * most probe hits in the last interval, and the hottest Ball-Larus paths
 * of the path-profile functions (enable --mode path-profile) with their
 * blocks, read from the kernel's counters as they are (PT_IOC_PATHS_READ:
 * nothing flushed, nothing written to the ring buffer), and when the
 * recording samples subpaths (record --osp N) the hottest of them, with
 * estimated counts (PT_IOC_SUBPATHS_READ, osp_live.h).
 *
 *   pathtracectl top [-d SECONDS] [-n FRAMES] [-k LINES]
 *
 * On a terminal each frame replaces the last; otherwise (or with -n) frames
 * follow each other, separated by a blank line. Exit status: 0; 1 if the
 * module cannot be asked; 2 for a bad command line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <pathtrace/cfg.h>
#include <pathtrace/error.h>
#include <pathtrace/funcstore.h>
#include <pathtrace/graph.h>
#include <pathtrace/pathnum.h>
#include <pathtrace/tracefile.h>

#include "commands.h"
#include "loaded.h"
#include "osp_live.h"

#define TOP_PAIRS 4096

struct top_func {
	struct pt_func_info info;
	uint64_t hits, prev_hits, missed;
	/* path profiles: the stored CFG, numbered as the plan was, for block names */
	struct cfg cfg;
	struct graph g;
	uint64_t cold_addr;
	struct pathnum pn;
	int have_pn;
};

struct top_path {
	uint32_t fi;
	uint64_t path, count;
};

static int cmp_rate(const void *a, const void *b)
{
	const struct top_func *x = *(struct top_func *const *)a, *y = *(struct top_func *const *)b;
	uint64_t dx = x->hits - x->prev_hits, dy = y->hits - y->prev_hits;

	if (dx != dy)
		return dx < dy ? 1 : -1;
	return x->hits < y->hits ? 1 : x->hits > y->hits ? -1 : 0;
}

static int cmp_path(const void *a, const void *b)
{
	const struct top_path *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->path < y->path ? -1 : x->path > y->path;
}

/* A path-profile function's CFG from the store, numbered as its plan was. */
static void load_paths(struct top_func *t)
{
	struct tracefile tf;

	memset(&tf, 0, sizeof(tf));
	graph_init(&t->g);
	if (!funcstore_load(t->info.func_id, &tf) && tf.nfuncs == 1 &&
	    !tf_function_cfg(&tf.funcs[0], &t->cfg) && t->cfg.nblocks &&
	    !cfg_to_graph(&t->cfg, &t->g) && !pathnum_build(&t->pn, &t->g, NULL, NULL)) {
		t->cold_addr = tf.funcs[0].cold_addr;
		t->have_pn = 1;
	}
	tracefile_free(&tf);
}

/* Adds fi's live path counts to paths[*n] (merging a path counted on several CPUs). */
static void read_paths(int fd, uint32_t fi, const struct top_func *t, struct top_path *paths,
		       size_t *n, size_t cap, uint64_t *pairs, uint64_t *lost)
{
	struct pt_paths_read r;
	uint32_t i;
	size_t k;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.func_id = t->info.func_id;
	r.pairs = (uint64_t)(uintptr_t)pairs;
	r.max = TOP_PAIRS;
	if (ioctl(fd, PT_IOC_PATHS_READ, &r) < 0)
		return;
	*lost += r.lost + r.overflow + r.more;
	for (i = 0; i < r.n; i++) {
		for (k = 0; k < *n; k++)
			if (paths[k].fi == fi && paths[k].path == pairs[2 * i])
				break;
		if (k == *n) {
			if (*n == cap)
				continue;
			paths[(*n)++] = (struct top_path){ .fi = fi, .path = pairs[2 * i] };
		}
		paths[k].count += pairs[2 * i + 1];
	}
}

static void print_path(const struct top_func *t, const struct top_path *p)
{
	uint32_t blocks[256];
	char buf[192];
	int nb = t->have_pn ? pathnum_blocks(&t->pn, p->path, blocks, 256) : -1, k;

	if (p->path == PT_PATH_OTHER) {	/* PPP: every path it does not number */
		printf("%12" PRIu64 "  %s other paths (not PPP's interesting ones)\n", p->count,
		       t->info.name);
		return;
	}
	printf("%12" PRIu64 "  %s path %" PRIu64 ":", p->count, t->info.name, p->path);
	for (k = 0; k < nb && k < 8; k++)
		printf(" %s", cfg_block_name(&t->cfg, t->info.name, t->cfg.addr, t->cold_addr,
					     blocks[k], buf, sizeof(buf)));
	printf("%s\n", nb > 8 ? " ..." : nb < 0 ? " (no stored CFG)" : "");
}

/* The hottest subpaths, when the module samples them. */
static void print_subpaths(int fd, const struct top_func *f, int n, unsigned int lines)
{
	struct pt_func_info *info = calloc((size_t)n + 1, sizeof(*info));
	struct osp_live o;
	int i;

	if (!info || osp_live_read(fd, &o)) {
		free(info);
		return;
	}
	for (i = 0; i < n; i++)
		info[i] = f[i].info;
	if (o.n) {
		printf("hottest subpaths (OSP: runs of 2, 4, 8 path ends; estimated, 1 in 2^%u "
		       "sampled, %" PRIu64 " path ends):\n", o.tau_log2_max, o.positions);
		osp_live_print(stdout, &o, info, n, lines);
	}
	osp_live_free(&o);
	free(info);
}

static int frame(int fd, struct top_func *f, int n, double interval, unsigned int lines,
		 int clear)
{
	struct top_func **order = calloc((size_t)n + 1, sizeof(*order));
	struct top_path *paths = calloc(TOP_PAIRS, sizeof(*paths));
	uint64_t *pairs = calloc(2 * TOP_PAIRS, sizeof(*pairs)), lost = 0;
	struct pt_stats s;
	size_t np = 0, k;
	int i;

	if (!order || !paths || !pairs) {
		free(order);
		free(paths);
		free(pairs);
		return -PT_ENOMEM;
	}
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	if (ioctl(fd, PT_IOC_STATS, &s) < 0)
		memset(&s, 0, sizeof(s));
	for (i = 0; i < n; i++) {
		struct pt_func_stats fs;

		memset(&fs, 0, sizeof(fs));
		fs.size = sizeof(fs);
		fs.func_id = f[i].info.func_id;
		f[i].prev_hits = f[i].hits;
		if (!ioctl(fd, PT_IOC_FUNC_STATS, &fs)) {
			f[i].hits = fs.hits;
			f[i].missed = fs.missed;
		}
		if (f[i].prev_hits > f[i].hits)	/* a new start */
			f[i].prev_hits = 0;
		order[i] = &f[i];
		if (lines && (f[i].info.flags & PT_PLAN_PROFILE))
			read_paths(fd, (uint32_t)i, &f[i], paths, &np, TOP_PAIRS, pairs, &lost);
	}
	if (!lines)
		goto out;	/* the baseline */
	qsort(order, (size_t)n, sizeof(*order), cmp_rate);
	qsort(paths, np, sizeof(*paths), cmp_path);
	if (clear)
		fputs("\033[H\033[2J", stdout);
	printf("pathtracectl top: tracing %s, %d functions, %" PRIu64 " records, %" PRIu64
	       " dropped, %" PRIu64 " missed; hits in the last %.1f s\n", s.tracing ? "on" : "off",
	       n, (uint64_t)s.records, (uint64_t)s.dropped, (uint64_t)s.missed, interval);
	printf("%12s %12s %8s  %-14s %s\n", "hits/s", "hits", "misses", "mode", "function");
	for (i = 0; i < n && (unsigned int)i < lines; i++) {
		const struct top_func *t = order[i];

		printf("%12.0f %12" PRIu64 " %8" PRIu64 "  %-14s %s\n",
		       (double)(t->hits - t->prev_hits) / interval, t->hits, t->missed,
		       loaded_mode_name(t->info.mode, t->info.encoding, t->info.flags), t->info.name);
	}
	if (np) {
		printf("hottest paths (path-profile functions, counted since the last flush%s):\n",
		       lost ? "; some path ends lost or overflowed" : "");
		for (k = 0; k < np && k < lines; k++)
			print_path(&f[paths[k].fi], &paths[k]);
	}
	print_subpaths(fd, f, n, lines);
	fflush(stdout);
out:
	free(order);
	free(paths);
	free(pairs);
	return 0;
}

static int cmd_top(int argc, char **argv)
{
	double interval = 2.0;
	long frames = 0;
	unsigned int lines = 15;
	struct pt_func_info *info;
	struct top_func *f;
	struct timespec ts;
	int c, fd, n, i, shown = 0, ret = 0;
	struct ctl_args a;
	const char *v;
	char *end;

	ctl_args_init(&a, argc, argv);
	while ((c = ctl_next(&a)) != CTL_END) {
		if (c == CTL_BAD)
			return 2;
		if (c == CTL_OPERAND)
			return ctl_usage_err("top", "unexpected argument %s", a.val);
		v = a.val;
		switch (a.opt->short_name) {
		case 'd':
			interval = strtod(v, &end);
			if (*end || !(interval >= 0.1 && interval <= 3600)) {
				ctl_err("top", "-d %s: seconds between 0.1 and 3600", v);
				return 2;
			}
			break;
		case 'n':
			frames = strtol(v, &end, 10);
			if (*end || frames < 1) {
				ctl_err("top", "-n %s: a positive number of frames", v);
				return 2;
			}
			break;
		case 'k':
			lines = (unsigned int)strtoul(v, &end, 10);
			if (*end || !lines || lines > 10000) {
				ctl_err("top", "-k %s: lines between 1 and 10000", v);
				return 2;
			}
			break;
		}
	}
	fd = loaded_open("top");
	if (fd < 0)
		return 1;
	n = loaded_list(fd, "top", &info);
	if (n < 0) {
		close(fd);
		return 1;
	}
	f = calloc((size_t)n + 1, sizeof(*f));
	if (!f) {
		ctl_err("top", "%s", pt_strerror(-PT_ENOMEM));
		free(info);
		close(fd);
		return 1;
	}
	for (i = 0; i < n; i++) {
		f[i].info = info[i];
		if (info[i].flags & PT_PLAN_PROFILE)
			load_paths(&f[i]);
	}
	free(info);
	ts.tv_sec = (time_t)interval;
	ts.tv_nsec = (long)((interval - (double)ts.tv_sec) * 1e9);
	/* the first read sets the baseline; each frame shows one interval */
	frame(fd, f, n, interval, 0, 0);
	while (!frames || shown < frames) {
		nanosleep(&ts, NULL);
		if (shown && (frames || !isatty(STDOUT_FILENO)))
			putchar('\n');
		if (frame(fd, f, n, interval, lines, !frames && isatty(STDOUT_FILENO))) {
			ctl_err("top", "%s", pt_strerror(-PT_ENOMEM));
			ret = 1;
			break;
		}
		shown++;
	}
	for (i = 0; i < n; i++) {
		if (f[i].have_pn)
			pathnum_free(&f[i].pn);
		cfg_blob_free(&f[i].cfg);
		graph_free(&f[i].g);
	}
	free(f);
	close(fd);
	return ret;
}

static const struct ctl_opt top_opts[] = {
	{ "--delay", 'd', "SECONDS", "between frames (2; 0.1 to 3600)" },
	{ "--frames", 'n', "FRAMES", "stop after FRAMES frames (default: until interrupted)" },
	{ "--lines", 'k', "LINES", "lines per table (15)" },
	{ NULL, 0, NULL, NULL },
};

CTL_COMMAND(top, cmd_top, "", "live view: functions by probe hits, hottest paths of path "
	    "profiles and subpaths (record --osp N)", top_opts)
