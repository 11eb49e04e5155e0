// SPDX-License-Identifier: GPL-2.0
/*
 * bench-cfg - CFG recovery over every function of every installed kernel
 * module: functions per second and refusals by reason.
 *
 *   bench-cfg [DIR|FILE.ko ...]   (default /lib/modules/<newest>/kernel)
 *   bench-cfg --live               every text symbol of the running kernel
 *                                  (/proc/kallsyms + /proc/kcore; root)
 * BENCH_CFG_VERBOSE=1 in the environment lists every refusal on stderr.
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pathtrace/cfg.h>
#include <pathtrace/elfobj.h>
#include <pathtrace/error.h>
#include <pathtrace/ksyms.h>
#include <sys/utsname.h>

#define MAX_REASONS 64

static struct {
	const char *tag;
	uint64_t n;
	char example[256];
} reasons[MAX_REASONS];
static unsigned int nreasons;
static uint64_t nmodules, nskipped, nfuncs, nrecovered, nrefused, nblocks, ninsns, nbytes;
static double seconds;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void count_refusal(const struct cfg *c, const char *module)
{
	unsigned int i;

	if (getenv("BENCH_CFG_VERBOSE"))	/* every refusal, for finding causes */
		fprintf(stderr, "refused %s: %s: %s\n", module, c->refusal, c->detail);
	for (i = 0; i < nreasons; i++)
		if (!strcmp(reasons[i].tag, c->refusal))
			break;
	if (i == nreasons) {
		if (nreasons == MAX_REASONS)
			i = MAX_REASONS - 1;
		else
			nreasons++;
		reasons[i].tag = c->refusal;
		snprintf(reasons[i].example, sizeof(reasons[i].example), "%.60s: %.180s",
			 strrchr(module, '/') ? strrchr(module, '/') + 1 : module, c->detail);
	}
	reasons[i].n++;
}

/* Recovers in's CFG and counts the outcome; module names where it came from. */
static void recover(const struct cfg_input *in, const char *module)
{
	struct cfg c;
	int err;

	nbytes += in->len + in->cold_len;
	err = cfg_build(in, &c);
	if (!err) {
		nrecovered++;
		nblocks += c.nblocks;
		ninsns += c.ninsns;
	} else if (err == -PT_EREFUSED) {
		nrefused++;
		count_refusal(&c, module);
	} else {
		fprintf(stderr, "bench-cfg: %s: %s: %s\n", module, in->name, pt_strerror(err));
	}
	cfg_free(&c);
}

/* Counts a function refused before there was an input to recover. */
static void __attribute__((format(printf, 3, 4)))
count_input_refusal(const char *tag, const char *module, const char *fmt, ...)
{
	struct cfg c;
	va_list ap;

	memset(&c, 0, sizeof(c));
	c.refusal = tag;
	va_start(ap, fmt);
	vsnprintf(c.detail, sizeof(c.detail), fmt, ap);
	va_end(ap);
	nrefused++;
	count_refusal(&c, module);
}

static void bench_module(const char *path)
{
	struct elfobj *o;
	struct cfg_input in;
	uint32_t i;
	double t0;

	if (elfobj_open(path, &o)) {
		nskipped++;
		return;
	}
	nmodules++;
	t0 = now();
	for (i = 0; i < elfobj_nfuncs(o); i++) {
		if (elfobj_func(o, i)->parent != ELFOBJ_NONE)
			continue;
		if (elfobj_input(o, i, &in))
			continue;
		nfuncs++;
		recover(&in, path);
	}
	seconds += now() - t0;
	elfobj_close(o);
}

/* Every text symbol of the running kernel except .cold parts (their parent's CFG). */
static int bench_live(void)
{
	char moddir[300], detail[160];
	struct klive_paths p = { "/proc/kallsyms", "/proc/kcore", "/sys/module", moddir };
	const struct ksyms *ks;
	struct klive *k;
	struct utsname u;
	uint32_t i;
	double t0;
	int err;

	uname(&u);
	snprintf(moddir, sizeof(moddir), "/lib/modules/%s", u.release);
	err = klive_open(&p, &k);
	if (err) {
		fprintf(stderr, "bench-cfg: live kernel: %s\n", pt_strerror(err));
		return 1;
	}
	ks = klive_ksyms(k);
	nmodules = 1;
	t0 = now();
	for (i = 0; i < ksyms_count(ks); i++) {
		const struct ksym *s = ksyms_get(ks, i);
		const char *module = s->module ? s->module : "vmlinux";
		size_t n = strlen(s->name);
		struct cfg_input in;
		const char *tag;

		if (n > 5 && !strcmp(s->name + n - 5, ".cold"))
			continue;
		nfuncs++;
		err = klive_input_sym(k, i, &in, &tag, detail, sizeof(detail));
		if (err == -PT_EREFUSED)
			count_input_refusal(tag, module, "%s", detail);
		else if (err)
			count_input_refusal("source-error", module, "%s: %s", s->name,
					    pt_strerror(err));
		else
			recover(&in, module);
	}
	seconds = now() - t0;
	klive_close(k);
	return 0;
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t n = strlen(path);

	(void)st;
	(void)ftw;
	if (type == FTW_F && n > 3 && !strcmp(path + n - 3, ".ko"))
		bench_module(path);
	else if (type == FTW_F && strstr(path, ".ko."))
		nskipped++;	/* compressed: not read by this benchmark */
	return 0;
}

static int cmp_reason(const void *x, const void *y)
{
	const typeof(reasons[0]) *a = x, *b = y;

	return a->n < b->n ? 1 : a->n > b->n ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const char usage[] = "usage: bench-cfg [--live | DIR|FILE.ko ...]\n";
	char def[512];
	unsigned int i;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help"))
			return fputs(usage, stdout), 0;
		if (argv[a][0] == '-' && (strcmp(argv[a], "--live") || argc > 2)) {
			fprintf(stderr, "bench-cfg: %s: unknown option\n%s", argv[a], usage);
			return 2;
		}
	}
	if (argc < 2) {
		FILE *p = popen("ls -d /lib/modules/*/kernel 2>/dev/null | sort -V | tail -n 1", "r");

		if (!p || !fgets(def, sizeof(def), p)) {
			fprintf(stderr, "bench-cfg: no /lib/modules/*/kernel\n");
			return 1;
		}
		pclose(p);
		def[strcspn(def, "\n")] = 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--live")) {
		if (bench_live())
			return 1;
	} else {
		for (a = 1; a < argc || (argc < 2 && a == 1); a++)
			nftw(argc < 2 ? def : argv[a], visit, 32, FTW_PHYS);
	}
	qsort(reasons, nreasons, sizeof(reasons[0]), cmp_reason);
	printf("command: ");
	for (a = 0; a < argc; a++)
		printf("%s%s", a ? " " : "", argv[a]);
	printf("%s%s\n", argc < 2 ? " # default " : "", argc < 2 ? def : "");
	printf("%-28s %12s\n", argc == 2 && !strcmp(argv[1], "--live") ? "live kernel" : "modules",
	       "");
	printf("  %-26s %12llu\n", "read", (unsigned long long)nmodules);
	printf("  %-26s %12llu\n", "skipped (not readable)", (unsigned long long)nskipped);
	printf("%-28s %12llu\n", "functions", (unsigned long long)nfuncs);
	printf("  %-26s %12llu  (%.3f%%)\n", "recovered", (unsigned long long)nrecovered,
	       nfuncs ? 100.0 * nrecovered / nfuncs : 0);
	printf("  %-26s %12llu  (%.3f%%)\n", "refused", (unsigned long long)nrefused,
	       nfuncs ? 100.0 * nrefused / nfuncs : 0);
	for (i = 0; i < nreasons; i++)
		printf("    %-24s %12llu  e.g. %s\n", reasons[i].tag,
		       (unsigned long long)reasons[i].n, reasons[i].example);
	printf("%-28s %12llu\n", "blocks (recovered)", (unsigned long long)nblocks);
	printf("%-28s %12llu\n", "instructions (recovered)", (unsigned long long)ninsns);
	printf("%-28s %12.2f  (ELF indexing + recovery, excluding directory walk)\n",
	       "seconds", seconds);
	printf("%-28s %12.0f\n", "functions/second", seconds > 0 ? nfuncs / seconds : 0);
	printf("%-28s %12.1f\n", "MB of code/second", seconds > 0 ? nbytes / seconds / 1e6 : 0);
	return 0;
}
