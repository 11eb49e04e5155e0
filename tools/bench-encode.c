// SPDX-License-Identifier: GPL-2.0
/*
 * bench-encode - the 1994 algorithms over every recovered CFG of kernel
 * modules: Section 5 weighting, witness and bit-tracing encodings (with
 * and without vertex emissions), Eprof(Ecnt) counters. Prints a table of
 * functions per second, refusals by the timing rule (encoding.h), and the
 * static share of edges that carry instrumentation.
 *
 *   bench-encode [FILE.ko ...]   (default: ext4, btrfs, xfs, nf_tables of
 *                                 the newest /lib/modules)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pathtrace/cfg.h>
#include <pathtrace/elfobj.h>
#include <pathtrace/encoding.h>
#include <pathtrace/eprof.h>
#include <pathtrace/error.h>
#include <pathtrace/weight.h>

struct row {
	const char *name;
	uint64_t refused, emitting, edges, table_bytes, table_max;
	double seconds;
};

static uint64_t nfuncs, nblocks, nedges, ncalls, ncounters;
static double weight_seconds, eprof_seconds;
static struct row rows[4] = {
	{ .name = "witness" }, { .name = "witness+vertex" }, { .name = "bits" },
	{ .name = "bits+vertex" },
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void encode(const struct graph *g, const uint64_t *w)
{
	unsigned int i;

	for (i = 0; i < 4; i++) {
		uint32_t flags = i & 1 ? ENC_F_VERTEX_EMIT : 0, v;
		struct encoding enc;
		double t0 = now();
		int err = i < 2 ? encoding_witness_flags(g, w, flags, &enc) :
				  encoding_bits_flags(g, flags, &enc);

		rows[i].seconds += now() - t0;
		if (err) {
			rows[i].refused += err == -PT_EREFUSED;
			if (err != -PT_EREFUSED)
				fprintf(stderr, "bench-encode: %s\n", pt_strerror(err));
			continue;
		}
		rows[i].emitting += enc.nemit;
		rows[i].edges += g->ne;
		for (v = 0; enc.vertex_nbits && v < g->nv; v++)
			rows[i].emitting += enc.vertex_nbits[v] != 0;
		if (i < 2) {
			uint64_t b = (uint64_t)enc.npred * (enc.nwit + 1) * sizeof(*enc.next);

			rows[i].table_bytes += b;
			if (b > rows[i].table_max)
				rows[i].table_max = b;
		}
		encoding_free(&enc);
	}
}

static void bench_module(const char *path)
{
	struct elfobj *o;
	uint32_t i, v;

	if (elfobj_open(path, &o)) {
		fprintf(stderr, "bench-encode: %s: cannot open\n", path);
		return;
	}
	for (i = 0; i < elfobj_nfuncs(o); i++) {
		struct cfg_input in;
		struct counters cn;
		struct graph g;
		struct cfg c;
		uint64_t *w;
		double t0;

		if (elfobj_func(o, i)->parent != ELFOBJ_NONE || elfobj_input(o, i, &in))
			continue;
		if (cfg_build(&in, &c)) {
			cfg_free(&c);
			continue;
		}
		graph_init(&g);
		w = NULL;
		if (cfg_to_graph(&c, &g) || !(w = malloc(((size_t)g.ne + 1) * sizeof(*w))))
			goto next;
		nfuncs++;
		nblocks += c.nblocks;
		nedges += g.ne;
		for (v = 0; v < g.nv; v++)
			ncalls += (g.vflags[v] & GRAPH_V_CALL) != 0;
		t0 = now();
		if (weight_heuristic(&g, w))
			goto next;
		weight_seconds += now() - t0;
		encode(&g, w);
		t0 = now();
		if (!eprof_place(&g, w, &cn)) {
			eprof_seconds += now() - t0;
			ncounters += cn.ncounters;
			counters_free(&cn);
		}
next:
		free(w);
		graph_free(&g);
		cfg_free(&c);
	}
	elfobj_close(o);
}

static const char *newest_modules(char *buf, size_t len)
{
	DIR *d = opendir("/lib/modules");
	struct dirent *de;
	char best[256] = "";

	if (!d)
		return NULL;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && strcmp(de->d_name, best) > 0)
			snprintf(best, sizeof(best), "%s", de->d_name);
	closedir(d);
	if (!best[0])
		return NULL;
	snprintf(buf, len, "/lib/modules/%s/kernel", best);
	return buf;
}

int main(int argc, char **argv)
{
	static const char *const dflt[] = { "fs/ext4/ext4.ko", "fs/btrfs/btrfs.ko", "fs/xfs/xfs.ko",
					    "net/netfilter/nf_tables.ko" };
	static const char usage[] = "usage: bench-encode [FILE.ko ...]\n";
	char base[512], path[1024];
	unsigned int i;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help"))
			return fputs(usage, stdout), 0;
		if (argv[a][0] == '-') {
			fprintf(stderr, "bench-encode: %s: unknown option\n%s", argv[a], usage);
			return 2;
		}
	}
	printf("command:");
	for (a = 0; a < argc; a++)
		printf(" %s", argv[a]);
	printf("\n");
	if (argc > 1) {
		for (a = 1; a < argc; a++)
			bench_module(argv[a]);
	} else if (newest_modules(base, sizeof(base))) {
		for (i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", base, dflt[i]);
			bench_module(path);
		}
	}
	if (!nfuncs) {
		fprintf(stderr, "bench-encode: no functions\n");
		return 1;
	}
	printf("%llu functions (recovered CFGs), %llu blocks, %llu edges, %llu call vertices\n",
	       (unsigned long long)nfuncs, (unsigned long long)nblocks, (unsigned long long)nedges,
	       (unsigned long long)ncalls);
	printf("%-16s %10s %9s %16s %12s %12s\n", "algorithm", "funcs/s", "refused",
	       "emitting/edges", "tables MB", "max table KB");
	printf("%-16s %10.0f %9s %16s %12s %12s\n", "weight (Sec. 5)", nfuncs / weight_seconds,
	       "-", "-", "-", "-");
	printf("%-16s %10.0f %9s %15.1f%% %12s %12s\n", "eprof counters", nfuncs / eprof_seconds,
	       "-", 100.0 * ncounters / nedges, "-", "-");
	for (i = 0; i < 4; i++) {
		char tb[32] = "-", tm[32] = "-";

		if (i < 2) {
			snprintf(tb, sizeof(tb), "%.1f", rows[i].table_bytes / 1e6);
			snprintf(tm, sizeof(tm), "%.1f", rows[i].table_max / 1e3);
		}
		printf("%-16s %10.0f %9llu %15.1f%% %12s %12s\n", rows[i].name,
		       nfuncs / rows[i].seconds, (unsigned long long)rows[i].refused,
		       rows[i].edges ? 100.0 * rows[i].emitting / rows[i].edges : 0.0, tb, tm);
	}
	printf("(emitting/edges: over the functions an encoding accepts; a vertex emission counts as one)\n");
	return 0;
}
