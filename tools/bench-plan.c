// SPDX-License-Identifier: GPL-2.0
/*
 * bench-plan - plans for every function of every installed kernel module,
 * in each mode: plans per second, refusals, and over the corpus the static
 * ratio of probes placed versus probing every block, the share of probes
 * the kernel can jump-optimize, the static cost ratio (block frequency x
 * probe factor) and bits per witness / path.
 *
 *   bench-plan [--calls-quiet|--blocked-calls] [DIR|FILE.ko ...]
 *                                        (default /lib/modules/<newest>/kernel)
 *
 * Witness plans are framed (PT_PLAN_FRAMED, enable's default: no bit
 * blocks a call, the ENTERs below it name it); --blocked-calls blocks
 * every loud call instead.
 * --calls-quiet plans every call as a quiet one (docs/runtime.md, "Quiet
 * calls"): no call vertex, so no blocking witness and no path end at it.
 * It is not exact for calls that can reach traced code; it measures what
 * blocking at calls costs, the placement a way of attributing ENTERs to
 * their call site without bits between calls would allow.
 *
 * CFG recovery is timed apart (bench-cfg measures it): plans/s covers
 * weighting, probe sites, spanning tree, numbering or encoding, actions,
 * optimizability and serialization. Per mode it ends with one line,
 *
 *   mode=witness cost_ratio_aggregate=R cost_ratio_mean4=R probe_ratio=R optimizable_pct=P
 *
 * cost_ratio_aggregate: sum over planned functions of plan cost over the
 * sum of every-block cost (weighted by frequency, so loop-heavy functions
 * dominate it); cost_ratio_mean4: the mean of per-function cost ratios
 * over functions of at least 4 blocks (the all-function mean also counts
 * the many 1-3 block functions, where a plan has little or nothing to save
 * over a probe per block);
 * probe_ratio: sum of plan probe sites (pt_plan.nr_sites, ENTER included,
 * as the probes column) over the sum of every-block probes;
 * optimizable_pct: jump-optimizable share of those plan sites, in percent.
 * Untimed, every trace and paths plan is
 * bound back the way pathregen does (pr_bind_decoder on the blob): a plan
 * it cannot decode exactly is counted as a failure, with an example.
 * Refusals are counted by reason.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pathtrace/cfg.h>
#include <pathtrace/elfobj.h>
#include <pathtrace/error.h>
#include <pathtrace/plan.h>
#include <pathtrace/static_calls.h>

#include "out.h"

enum { M_WITNESS, M_BITS, M_PATHS, M_EDGES, NMODES };

static const struct {
	const char *name, *key;	/* key: the summary line's mode= */
	uint16_t mode, encoding;
} modes[NMODES] = {
	{ "trace/witness", "witness", PT_MODE_TRACE, PT_ENC_WITNESS },
	{ "trace/bits", "bits", PT_MODE_TRACE, PT_ENC_BITS },
	{ "paths", "paths", PT_MODE_PATHS, 0 },
	{ "edges", "edges", PT_MODE_EDGES, 0 },
};

#define MIN_BLOCKS_MEAN4 4

struct stats {
	uint64_t planned, refused_overflow, refused_other, sites, opt, every, every_opt;
	uint64_t bits_sum, bits_max, blob_bytes;
	long double cost, every_cost;
	double cost_ratio_sum;		/* per function: cost / every-block cost */
	uint64_t nratio;		/* functions with a cost ratio (every-block cost > 0) */
	double cost_ratio_sum4;		/* the same over functions of >= MIN_BLOCKS_MEAN4 blocks */
	uint64_t nratio4;
	uint64_t cheaper;		/* functions whose plan costs no more than every-block */
	long double top_every_cost;	/* the function with the largest every-block cost */
	long double top_cost;
	char top_name[160];
	double seconds;
	char example[512];
	uint64_t bound, bind_failed;	/* trace/paths: plans pathregen binds back (pr_bind) */
	char bind_example[256];
};

/* Refusal reasons with their numbers (edge, block ids) replaced by N, counted. */
#define NREASONS 64
struct reason {
	char text[200];
	uint64_t count;
	char example[160];
};
static struct reason reasons[NMODES][NREASONS];
static uint64_t reasons_other[NMODES];

static void count_reason(int m, const char *fn, const char *why)
{
	char key[200];
	size_t i = 0, k;

	for (; *why && i + 2 < sizeof(key); why++) {
		if (*why >= '0' && *why <= '9') {
			if (!i || key[i - 1] != 'N')
				key[i++] = 'N';
			continue;
		}
		key[i++] = *why;
	}
	key[i] = 0;
	for (k = 0; k < NREASONS && reasons[m][k].count; k++)
		if (!strcmp(reasons[m][k].text, key))
			break;
	if (k == NREASONS) {
		reasons_other[m]++;
		return;
	}
	if (!reasons[m][k].count) {
		snprintf(reasons[m][k].text, sizeof(reasons[m][k].text), "%s", key);
		snprintf(reasons[m][k].example, sizeof(reasons[m][k].example), "%s", fn);
	}
	reasons[m][k].count++;
}

static int by_count(const void *a, const void *b)
{
	const struct reason *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static struct stats st[NMODES];
static uint64_t nmodules, nskipped, nfuncs, ncfg;
static uint64_t nstatic;	/* instructions on static-call sites: never probed */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Binds the serialized plan the way pathregen does (pr_bind_decoder reads
 * the emissions back from the blob's sites and rebuilds the decoder
 * tables). Returns 0 or its error.
 */
static int bind_back(const struct cfg *c, const void *blob, size_t len)
{
	struct pr_func f;
	int err = pr_func_init(&f, 1, "f", 1);

	if (err)
		return err;
	f.cfg = *c;	/* borrowed: zeroed again before pr_func_free */
	f.addr = c->addr;
	f.cold_addr = c->cold_addr;
	memcpy(&f.mode, (const uint8_t *)blob + offsetof(struct pt_plan, mode), sizeof(f.mode));
	memcpy(&f.encoding, (const uint8_t *)blob + offsetof(struct pt_plan, encoding),
	       sizeof(f.encoding));
	err = pr_func_derive(&f);
	if (!err)
		err = pr_bind_decoder(&f, blob, (uint32_t)len, NULL);
	memset(&f.cfg, 0, sizeof(f.cfg));
	pr_func_free(&f);
	return err;
}

/* --calls-quiet: every call planned as quiet; --blocked-calls: witness plans not framed. */
static int calls_quiet, blocked_calls;

static void bench_cfg(const struct cfg *c)
{
	int m;

	for (m = 0; m < NMODES; m++) {
		struct plan_opts o = {
			.mode = modes[m].mode, .trace.encoding = modes[m].encoding,
			.func_id = 1, .flags = m == M_WITNESS && !blocked_calls ? PT_PLAN_FRAMED : 0
		};
		struct plan pl;
		void *blob = NULL;
		size_t len = 0;
		double t0 = now();
		int err = plan_build(c, &o, &pl);

		if (!err)
			err = plan_serialize(&pl, &blob, &len);
		st[m].seconds += now() - t0;
		if (err) {
			if (err == -PT_EOVERFLOW)
				st[m].refused_overflow++;
			else
				st[m].refused_other++;
			if (!st[m].example[0])
				snprintf(st[m].example, sizeof(st[m].example), "%s: %s", c->name,
					 pl.reason);
			count_reason(m, c->name, pl.reason);
		} else {
			st[m].planned++;
			st[m].sites += pl.hdr.nr_sites;
			st[m].opt += pl.noptimizable;
			st[m].every += pl.every_block_probes;
			st[m].every_opt += pl.every_block_optimizable;
			st[m].cost += pl.cost;
			st[m].every_cost += pl.every_block_cost;
			if (pl.every_block_cost) {
				double r = (double)pl.cost / (double)pl.every_block_cost;

				st[m].cost_ratio_sum += r;
				st[m].nratio++;
				if (c->nblocks >= MIN_BLOCKS_MEAN4) {
					st[m].cost_ratio_sum4 += r;
					st[m].nratio4++;
				}
				st[m].cheaper += r <= 1.0;
			}
			if (pl.every_block_cost > st[m].top_every_cost) {
				st[m].top_every_cost = pl.every_block_cost;
				st[m].top_cost = pl.cost;
				snprintf(st[m].top_name, sizeof(st[m].top_name), "%s", c->name);
			}
			st[m].bits_sum += pl.bits;
			if (pl.bits > st[m].bits_max)
				st[m].bits_max = pl.bits;
			st[m].blob_bytes += len;
			if (modes[m].mode != PT_MODE_EDGES) {
				int berr = bind_back(c, blob, len);

				if (!berr) {
					st[m].bound++;
				} else {
					st[m].bind_failed++;
					if (!st[m].bind_example[0])
						snprintf(st[m].bind_example,
							 sizeof(st[m].bind_example), "%s: %s",
							 c->name, pt_strerror(berr));
				}
			}
		}
		free(blob);
		plan_free(&pl);
	}
}

static void bench_module(const char *path)
{
	struct elfobj *o;
	struct cfg_input in;
	struct static_calls sc;
	struct cfg c;
	uint32_t i;

	if (elfobj_open(path, &o)) {
		nskipped++;
		return;
	}
	if (static_calls_elf(path, &sc)) {	/* kprobes refuse their sites */
		elfobj_close(o);
		nskipped++;
		return;
	}
	nmodules++;
	for (i = 0; i < elfobj_nfuncs(o); i++) {
		if (elfobj_func(o, i)->parent != ELFOBJ_NONE || elfobj_input(o, i, &in))
			continue;
		nfuncs++;
		if (!cfg_build(&in, &c)) {
			uint32_t b;

			for (b = 0; calls_quiet && b < c.nblocks; b++)
				if (c.blocks[b].flags & CFG_BF_CALL)
					c.blocks[b].flags = (c.blocks[b].flags & ~CFG_BF_CALL) |
							    CFG_BF_QUIET_CALL;
			ncfg++;
			nstatic += static_calls_mark(&sc, &c);
			bench_cfg(&c);
		}
		cfg_free(&c);
	}
	static_calls_free(&sc);
	elfobj_close(o);
}

static int visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	size_t n = strlen(path);

	(void)sb;
	(void)ftw;
	if (type == FTW_F && n > 3 && !strcmp(path + n - 3, ".ko"))
		bench_module(path);
	else if (type == FTW_F && strstr(path, ".ko."))
		nskipped++;	/* compressed */
	return 0;
}

int main(int argc, char **argv)
{
	char def[512];
	int a, m, first = 1;

	for (; argc > first && argv[first][0] == '-'; first++) {
		if (!strcmp(argv[first], "-h") || !strcmp(argv[first], "--help")) {
			puts("usage: bench-plan [--calls-quiet|--blocked-calls] [DIR|FILE.ko ...]");
			return 0;
		} else if (!strcmp(argv[first], "--calls-quiet") && !blocked_calls) {
			calls_quiet = 1;
		} else if (!strcmp(argv[first], "--blocked-calls") && !calls_quiet) {
			blocked_calls = 1;
		} else {
			fprintf(stderr, "bench-plan: %s: unknown option (usage: bench-plan "
				"[--calls-quiet|--blocked-calls] [DIR|FILE.ko ...])\n", argv[first]);
			return 2;
		}
	}
	if (argc <= first) {
		FILE *p = popen("ls -d /lib/modules/*/kernel 2>/dev/null | sort -V | tail -n 1", "r");

		if (!p || !fgets(def, sizeof(def), p)) {
			fprintf(stderr, "bench-plan: no /lib/modules/*/kernel\n");
			return 1;
		}
		pclose(p);
		def[strcspn(def, "\n")] = 0;
	}
	for (a = first; a < argc || (argc <= first && a == first); a++)
		nftw(argc <= first ? def : argv[a], visit, 32, FTW_PHYS);
	printf("command: ");
	for (a = 0; a < argc; a++)
		printf("%s%s", a ? " " : "", argv[a]);
	printf("%s%s\n", argc <= first ? " # default " : "", argc <= first ? def : "");
	printf("modules %" PRIu64 " (skipped %" PRIu64 "), functions %" PRIu64
	       ", CFGs recovered %" PRIu64 ", static-call site instructions (never probed) %" PRIu64
	       "\n\n", nmodules, nskipped, nfuncs, ncfg, nstatic);
	printf("%-14s %9s %8s %9s %10s %8s %9s %9s %10s %8s %8s %9s %8s %8s\n", "mode",
	       "planned", "refused", "plans/s", "probes", "/every", "opt%", "every-opt%",
	       "cost/every", "mean4", "agg", "cheaper%", "bits avg", "bits max");
	for (m = 0; m < NMODES; m++) {
		struct stats *s = &st[m];

		printf("%-14s %9" PRIu64 " %8" PRIu64 " %9.0f %10" PRIu64 " %8.3f %8.1f%% %9.1f%% "
		       "%10.3f %8.3f %8.3f %8.1f%% %8.2f %8" PRIu64 "\n", modes[m].name, s->planned,
		       s->refused_overflow + s->refused_other,
		       s->seconds > 0 ? (s->planned + s->refused_overflow + s->refused_other) /
		       s->seconds : 0, s->sites,
		       s->every ? (double)s->sites / s->every : 0,
		       s->sites ? 100.0 * s->opt / s->sites : 0,
		       s->every ? 100.0 * s->every_opt / s->every : 0,
		       s->nratio ? s->cost_ratio_sum / s->nratio : 0,
		       s->nratio4 ? s->cost_ratio_sum4 / s->nratio4 : 0,
		       s->every_cost > 0 ? (double)(s->cost / s->every_cost) : 0,
		       s->planned ? 100.0 * s->cheaper / s->planned : 0,
		       s->planned ? (double)s->bits_sum / s->planned : 0, s->bits_max);
	}
	printf("\nrefusals (overflow / other) and a first example per mode:\n");
	for (m = 0; m < NMODES; m++)
		printf("  %-14s %" PRIu64 " / %" PRIu64 "  %s\n", modes[m].name,
		       st[m].refused_overflow, st[m].refused_other, st[m].example);
	printf("\nplans pathregen binds back (pr_bind_decoder on the blob):\n");
	for (m = 0; m < NMODES; m++)
		if (modes[m].mode != PT_MODE_EDGES)
			printf("  %-14s %9" PRIu64 " bound, %" PRIu64 " failed  %s\n", modes[m].name,
			       st[m].bound, st[m].bind_failed, st[m].bind_example);
	printf("\nrefusal reasons per mode (numbers shown as N; count, example function):\n");
	for (m = 0; m < NMODES; m++) {
		uint32_t k;

		qsort(reasons[m], NREASONS, sizeof(reasons[m][0]), by_count);
		for (k = 0; k < NREASONS && reasons[m][k].count; k++)
			printf("  %-14s %7" PRIu64 "  %s  (%s)\n", modes[m].name, reasons[m][k].count,
			       reasons[m][k].text, reasons[m][k].example);
		if (reasons_other[m])
			printf("  %-14s %7" PRIu64 "  (other reasons)\n", modes[m].name,
			       reasons_other[m]);
	}
	printf("\nthe function with the largest every-block cost (its share of the mode's\n"
	       "every-block cost sum, and its own cost ratio):\n");
	for (m = 0; m < NMODES; m++)
		printf("  %-14s %s  %.1f%%  %.3f\n", modes[m].name, st[m].top_name,
		       st[m].every_cost > 0 ?
		       (double)(100 * st[m].top_every_cost / st[m].every_cost) : 0,
		       st[m].top_every_cost > 0 ?
		       (double)(st[m].top_cost / st[m].top_every_cost) : 0);
	printf("\nprobes/every: probe sites placed (pt_plan.nr_sites, ENTER included) over one\n"
	       "probe per block; opt%%: sites the kernel can jump-optimize; cost/every: per\n"
	       "function, sum over sites of block frequency x (1 optimized, %d ftrace, %d int3)\n"
	       "under the Section 5 weighting over the same for one probe per block, averaged\n"
	       "over functions; mean4: that average over functions of at least %d blocks;\n"
	       "agg: sum of plan cost over sum of every-block cost (frequency-weighted, so\n"
	       "loop-heavy functions dominate); cheaper%%: functions whose plan costs no more\n"
	       "than every-block probing.\n",
	       PROBESITE_FTRACE_FACTOR, PROBESITE_INT3_FACTOR, MIN_BLOCKS_MEAN4);
	printf("\nsummary (probe_ratio = probes/every, optimizable_pct = opt%%):\n");
	for (m = 0; m < NMODES; m++) {
		struct stats *s = &st[m];

		printf("mode=%s cost_ratio_aggregate=%.2f cost_ratio_mean4=%.2f probe_ratio=%.2f "
		       "optimizable_pct=%.0f\n", modes[m].key,
		       s->every_cost > 0 ? (double)(s->cost / s->every_cost) : 0,
		       s->nratio4 ? s->cost_ratio_sum4 / s->nratio4 : 0,
		       s->every ? (double)s->sites / s->every : 0,
		       s->sites ? 100.0 * s->opt / s->sites : 0);
	}
	return 0;
}
