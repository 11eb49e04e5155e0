// SPDX-License-Identifier: GPL-2.0
/*
 * bench-regen - regeneration speed and memory: basic blocks per second on
 * a large simulated trace (tests/oracle/sim.h: a random program lowered to
 * real x86 code through cfg_build and plan_build, run by its executor with
 * the module back end executing the plans).
 *
 *   bench-regen [-n BLOCKS] [-j JOBS] [-c CPUS] [-m witness|bits|paths] [-s SEED] [-r REPS]
 *               [-k] [-e]
 *
 * prints one line:
 *   mode=regen blocks= jobs= cpus= engine_blocks_per_s= end_to_end_blocks_per_s=
 *   peak_rss_kb= trace_bytes=
 * measured in a child process that runs pathregen's pipeline on the
 * compact trace.bin and nothing else (so peak_rss_kb, from wait4's
 * ru_maxrss, is the pipeline's own, not the generator's), best of REPS:
 *   engine       the engine over every stream, counting blocks, JOBS
 *                threads taking the streams largest first (each thread
 *                but the first with engine state of its own,
 *                pr_model_engine_copy, as pathregen -j gives its threads);
 *   end to end   pr_trace_load (read, pages, streams, model) + the engine,
 *                the load on JOBS threads too (struct pr_trace.jobs).
 * trace_bytes is the file's size. With JOBS 1 the child runs on the CPU
 * fastest just before it (cpu_capacity below). With JOBS >= 2 the line
 * goes on with
 *   end_to_end_speedup   one thread's end to end time over JOBS
 *                threads', the children alternating (REPS rounds of one
 *                child on one thread, pinned to the CPU fastest just
 *                before it, then one on JOBS threads; each side's best,
 *                and the JOBS line's keys are its side's): the -j 1
 *                line's figure without the minutes between two
 *                invocations;
 *   cpu_capacity what JOBS threads could do at most on this machine then:
 *                the JOBS fastest CPUs' rates over the fastest's (each
 *                CPU's rate a loop of dependent multiplies pinned to it,
 *                alone), the mean of samples before each child and after
 *                the last. This host's vCPUs each run, for seconds to
 *                minutes at a time, at about half the other's rate
 *                (docs/pathregen.md, "Two vCPUs, not two cores"), so two
 *                threads cannot always reach 2; a sample between two
 *                children does not see a change within one.
 * JOBS defaults to 1. The recording has
 * CPUS CPUs (1 to MAX_CPUS, default 2, as this host and bench-vm's guest),
 * a ring buffer each: each activation starts on a random one and its task
 * migrates to another at 1% of its probe hits, so a task's stream is
 * segments on every CPU; with JOBS >= 2 pathregen decodes different
 * CPUs' pages on different threads. The simulated runs
 * that make up the trace continue one another's clock, so stamps grow
 * through the file as a recording's do. The child is
 * "bench-regen -X TRACE.BIN -j JOBS -r REPS", which prints "blocks
 * engine_s end_to_end_s" (run it under perf to profile the pipeline alone).
 *
 * -e adds the comparison with the every-block trace of the same run (the
 * compact trace plus one verify-mode BLOCK record per executed block):
 * load and read-back times of both, as a table (it holds that trace's
 * pages in memory while generating, about 25 bytes a block).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "out.h"
#include "pathtrace_abi.h"
#include "rbpage.h"
#include "streams.h"
#include "sim.h"
#include "pipeline.h"

#define PAGE 4096u
#define MAX_CPUS 8	/* the simulator's SIM_MAX_CPUS */

struct pagebuf {
	uint8_t *data;
	uint64_t npages, cap;
	struct rbpage pg;
	int open;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int page_add(struct pagebuf *b, const struct sim_rec *rec)
{
	if (b->open && !rbpage_add(&b->pg, rec->ts, rec->payload, rec->len))
		return 0;
	if (b->open)
		rbpage_pad(&b->pg);
	if (b->npages == b->cap) {
		uint64_t cap = b->cap ? b->cap * 2 : 1024;
		uint8_t *d = realloc(b->data, cap * PAGE);

		if (!d)
			return -PT_ENOMEM;
		b->data = d;
		b->cap = cap;
	}
	memset(b->data + b->npages * PAGE, 0, PAGE);
	rbpage_init(&b->pg, b->data + b->npages * PAGE, PAGE, rec->ts);
	b->npages++;
	b->open = 1;
	return rbpage_add(&b->pg, rec->ts, rec->payload, rec->len) ? -PT_EINVAL : 0;
}

static int write_trace_to(struct tf_writer *w, const struct sim_program *p, struct pagebuf *pb,
			  uint32_t ncpus);

static int write_trace(const char *path, const struct sim_program *p, struct pagebuf *pb,
		       uint32_t ncpus)
{
	struct tf_writer w;

	if (tfw_open(&w, path))
		return -PT_EIO;
	return write_trace_to(&w, p, pb, ncpus);
}

/*
 * Functions pathregen would not regenerate (a plan it refuses) make gaps:
 * the benchmark wants a program whose every function decodes.
 */
static int all_decodable(const struct sim_program *p)
{
	struct pagebuf none[MAX_CPUS] = { 0 };
	struct tracefile tf;
	struct pr_model m;
	struct tf_writer w;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int bad = -1;

	if (!f)
		return 0;
	tfw_init(&w, f);
	if (!write_trace_to(&w, p, none, 1)) {
		fflush(f);
		memset(&tf, 0, sizeof(tf));
		if (!tracefile_parse(buf, len, &tf))
			bad = pr_model_load(&tf, &m, NULL, NULL);
		pr_model_free(&m);
		tracefile_free(&tf);
	}
	fclose(f);
	free(buf);
	return bad == 0;
}

/* The program's functions, then each of ncpus CPUs' pages. */
static int write_trace_to(struct tf_writer *w0, const struct sim_program *p, struct pagebuf *pb,
			  uint32_t ncpus)
{
	struct tf_writer w = *w0;
	uint32_t i;

	tfw_system(&w, ncpus, PAGE, "synthetic", 0);
	for (i = 0; i < p->nfuncs; i++) {
		const struct sim_func *sf = &p->funcs[i];
		struct tf_function fn = {
			.func_id = sf->func_id, .addr = sf->addr, .len = sf->len,
			.name = sf->name, .name_len = (uint32_t)strlen(sf->name), .code = sf->code,
			.cfg = sf->cfg_blob, .cfg_len = sf->cfg_len, .plan = sf->plan_blob,
			.plan_len = (uint32_t)sf->plan_len,
		};

		if (sf->traced)
			tfw_function(&w, &fn);
	}
	for (i = 0; i < ncpus; i++) {
		if (pb[i].open)
			rbpage_pad(&pb[i].pg);
		if (pb[i].npages)
			tfw_pages(&w, i, PAGE, (uint32_t)pb[i].npages, pb[i].data, NULL);
	}
	tfw_loss(&w, ncpus, 0, 0);
	return tfw_close(&w);
}

struct counts {
	uint64_t blocks, gaps, truncated;
};

static int count_event(void *ctx, const struct regen_event *ev)
{
	struct counts *c = ctx;

	c->blocks += ev->type == REGEN_EV_BLOCK;
	c->gaps += ev->type == REGEN_EV_GAP;
	c->truncated += ev->type == REGEN_EV_TRUNCATED;
	return 0;
}

static uint64_t file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return 0;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fclose(f);
	return n > 0 ? (uint64_t)n : 0;
}

/* ------------------------------------------------------------ the measured child */

struct pool {
	const struct pr_trace *t;
	uint32_t *order;		/* stream indexes, largest first */
	uint32_t next;			/* taken so far (atomic) */
	uint64_t blocks;		/* atomic */
	int err;
};

struct worker {
	struct pool *pool;
	int own_model;			/* engine state of its own (pr_model_engine_copy) */
	pthread_t th;
};

static int count_block(void *ctx, const struct regen_event *ev)
{
	*(uint64_t *)ctx += ev->type == REGEN_EV_BLOCK;
	return 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->pool;
	struct regen_funcs own;
	const struct regen_funcs *fs = &p->t->m.fs;
	uint64_t blocks = 0;
	uint32_t i;

	if (w->own_model) {
		if (pr_model_engine_copy(&p->t->m, &own)) {
			__atomic_store_n(&p->err, -PT_ENOMEM, __ATOMIC_RELAXED);
			pr_model_engine_free(&own);
			return NULL;
		}
		fs = &own;
	}
	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->t->ss.nstreams)
		regen_stream(fs, &p->t->ss.streams[p->order[i]], count_block, &blocks);
	__atomic_add_fetch(&p->blocks, blocks, __ATOMIC_RELAXED);
	if (w->own_model)
		pr_model_engine_free(&own);
	return NULL;
}

static const struct regen_stream *sort_streams;

static int by_size_desc(const void *a, const void *b)
{
	uint64_t x = sort_streams[*(const uint32_t *)a].nbits +
		     sort_streams[*(const uint32_t *)a].nmarkers;
	uint64_t y = sort_streams[*(const uint32_t *)b].nbits +
		     sort_streams[*(const uint32_t *)b].nmarkers;

	return x > y ? -1 : x < y;
}

/* The engine over every stream of t with jobs threads: blocks into *blocks. Returns 0 or PT_E*. */
static int regen_parallel(const struct pr_trace *t, unsigned int jobs, uint64_t *blocks)
{
	struct pool p = { .t = t };
	struct worker *w = calloc(jobs, sizeof(*w));
	unsigned int k, started = 0;
	uint32_t i;

	p.order = malloc(((size_t)t->ss.nstreams + 1) * sizeof(*p.order));
	if (!w || !p.order) {
		free(w);
		free(p.order);
		return -PT_ENOMEM;
	}
	for (i = 0; i < t->ss.nstreams; i++)
		p.order[i] = i;
	sort_streams = t->ss.streams;
	qsort(p.order, t->ss.nstreams, sizeof(*p.order), by_size_desc);
	for (k = 0; k < jobs; k++) {
		w[k].pool = &p;
		w[k].own_model = k > 0;
	}
	for (k = 1; k < jobs; k++)
		if (!pthread_create(&w[k].th, NULL, work, &w[k]))
			started++;
		else
			p.err = -PT_ENOMEM;
	work(&w[0]);
	for (k = 1; k <= started; k++)
		pthread_join(w[k].th, NULL);
	*blocks = p.blocks;
	free(w);
	free(p.order);
	return p.err;
}

/* -X PATH: what the parent measures, printed as "blocks engine_s end_to_end_s". */
static int measure(const char *path, unsigned int jobs, unsigned int reps)
{
	double best_engine = 1e30, best_e2e = 1e30;
	uint64_t blocks = 0;
	unsigned int rep;

	/*
	 * glibc raises its mmap threshold as large blocks are freed, so a
	 * second repetition would keep blocks of up to 32 MiB on the heap and
	 * copy them as they grow: fixed at its first value, each repetition
	 * allocates as a single run (pathregen's) does.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	for (rep = 0; rep < reps; rep++) {
		struct pr_trace t;
		double t0 = now(), t1, t2;
		int err = pr_trace_load(path, &t, 1, jobs);

		t1 = now();
		if (!err)
			err = regen_parallel(&t, jobs, &blocks);
		t2 = now();
		pr_trace_free(&t);
		if (err) {
			fprintf(stderr, "bench-regen: %s: %s\n", path, pt_strerror(err));
			return 1;
		}
		best_engine = t2 - t1 < best_engine ? t2 - t1 : best_engine;
		best_e2e = t2 - t0 < best_e2e ? t2 - t0 : best_e2e;
	}
	printf("%" PRIu64 " %.9f %.9f\n", blocks, best_engine, best_e2e);
	return 0;
}

#define RATE_STEPS 20000000u	/* about 25 ms on this host's faster vCPU */
#define MAX_RATES 1024

static volatile uint64_t rate_sink;

/* Steps a second of a chain of dependent multiply-adds on the CPU this thread is on. */
static double loop_rate(void)
{
	uint64_t x = 1;
	double t = now();
	uint32_t i;

	for (i = 0; i < RATE_STEPS; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	rate_sink = x;
	t = now() - t;
	return t > 0 ? RATE_STEPS / t : 0;
}

static int by_rate_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x > y ? -1 : x < y;
}

/*
 * Each CPU this process may run on, its loop_rate alone (pinned to it,
 * one after another): the jobs fastest CPUs' rates over the fastest's
 * into *capacity, the fastest CPU into *fastest (-1 when the rates cannot
 * be taken; *capacity is then jobs).
 */
static void cpu_capacity(unsigned int jobs, double *capacity, int *fastest)
{
	double rate[MAX_RATES], best = 0, sum = 0;
	cpu_set_t old, one;
	int c, n = 0;
	unsigned int k;

	*capacity = jobs;
	*fastest = -1;
	if (sched_getaffinity(0, sizeof(old), &old))
		return;
	for (c = 0; c < CPU_SETSIZE && n < MAX_RATES; c++) {
		if (!CPU_ISSET(c, &old))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		rate[n] = loop_rate();
		if (rate[n] > best) {
			best = rate[n];
			*fastest = c;
		}
		n++;
	}
	sched_setaffinity(0, sizeof(old), &old);
	if (!n || best <= 0)
		return;
	qsort(rate, (size_t)n, sizeof(*rate), by_rate_desc);
	for (k = 0; k < jobs && k < (unsigned int)n; k++)
		sum += rate[k];
	*capacity = sum / best;
}

/*
 * Runs "self -X path -j jobs -r reps" and reads its line, on CPU cpu
 * alone unless cpu is -1; *rss_kb gets its peak resident memory. Returns
 * 0, or -1 after saying why.
 */
static int measure_child(const char *path, unsigned int jobs, unsigned int reps, int cpu,
			 uint64_t *blocks, double *engine_s, double *e2e_s, long *rss_kb)
{
	char j[16], r[16], self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct rusage ru;
	int pfd[2], status;
	pid_t pid;
	FILE *f;
	int got;

	if (n <= 0 || pipe(pfd)) {
		fprintf(stderr, "bench-regen: cannot start the measured run: %s\n", strerror(errno));
		return -1;
	}
	self[n] = 0;
	snprintf(j, sizeof(j), "%u", jobs);
	snprintf(r, sizeof(r), "%u", reps);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench-regen: fork: %s\n", strerror(errno));
		return -1;
	}
	if (!pid) {
		cpu_set_t one;

		CPU_ZERO(&one);
		if (cpu >= 0) {
			CPU_SET(cpu, &one);
			sched_setaffinity(0, sizeof(one), &one);
		}
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		execl(self, self, "-X", path, "-j", j, "-r", r, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	got = f && fscanf(f, "%" SCNu64 " %lf %lf", blocks, engine_s, e2e_s) == 3;
	if (f)
		fclose(f);
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    !got) {
		fprintf(stderr, "bench-regen: the measured run failed\n");
		return -1;
	}
	*rss_kb = ru.ru_maxrss;
	return 0;
}

/*
 * With jobs >= 2: reps rounds, each the child on one thread pinned to the
 * CPU fastest just before it, then on jobs threads, one repetition each;
 * the best of each side (*one_e2e: the one thread's end to end) and the
 * jobs threads' peak RSS, the mean of the cpu_capacity taken before each
 * child and after the last into *capacity. The blocks of the two sides
 * must be equal. Returns 0, or -1 after saying why.
 */
static int measure_against_one(const char *path, unsigned int jobs, unsigned int reps,
			       uint64_t *blocks, double *engine_s, double *e2e_s, long *rss_kb,
			       double *one_e2e, double *capacity)
{
	double engine, e2e, cap, caps = 0;
	uint64_t one_blocks = 0;
	unsigned int rep;
	int fastest;
	long rss;

	*engine_s = *e2e_s = *one_e2e = 1e30;
	*rss_kb = 0;
	for (rep = 0; rep < reps; rep++) {
		cpu_capacity(jobs, &cap, &fastest);
		caps += cap;
		if (measure_child(path, 1, 1, fastest, &one_blocks, &engine, &e2e, &rss))
			return -1;
		*one_e2e = e2e < *one_e2e ? e2e : *one_e2e;
		cpu_capacity(jobs, &cap, &fastest);
		caps += cap;
		if (measure_child(path, jobs, 1, -1, blocks, &engine, &e2e, &rss))
			return -1;
		*engine_s = engine < *engine_s ? engine : *engine_s;
		*e2e_s = e2e < *e2e_s ? e2e : *e2e_s;
		*rss_kb = rss > *rss_kb ? rss : *rss_kb;
		if (one_blocks != *blocks) {
			fprintf(stderr, "bench-regen: MISMATCH: %" PRIu64 " blocks regenerated on one"
				" thread, %" PRIu64 " on %u\n", one_blocks, *blocks, jobs);
			return -1;
		}
	}
	cpu_capacity(jobs, &cap, &fastest);
	*capacity = (caps + cap) / (2 * reps + 1);
	return 0;
}

static const char usage[] =
	"usage: bench-regen [-n BLOCKS] [-j JOBS] [-c CPUS] [-m witness|bits|paths] [-s SEED] [-r REPS] [-k] [-e]\n"
	"       bench-regen -X TRACE [-j JOBS] [-r REPS]\n";

int main(int argc, char **argv)
{
	uint64_t target = 10000000, seed = 1, rng, m_blocks = 0;
	unsigned int reps = 3, rep, keep = 0, i, jobs = 1, every_block = 0, cpus = 2;
	const char *measure_path = NULL;
	double m_engine = 0, m_e2e = 0, one_e2e = 0, capacity = 0;
	long rss_kb = 0;
	int fastest = -1;
	const char *mode = "witness";
	struct sim_gen_opts go = { .nfuncs = 8, .max_stmts = 24 };
	struct sim_lower_opts so = { .mode = PT_MODE_TRACE, .encoding = PT_ENC_WITNESS,
				     .plan_flags = PT_PLAN_VERIFY };
	struct sim_kmod_opts ro = { .nr_cpus = 2, .ntasks = 4, .activations = 2000,
				    .max_steps = 400, .migrate_pct = 1 };
	struct sim_program p;
	struct pagebuf compact[MAX_CPUS] = { 0 }, every[MAX_CPUS] = { 0 };
	char cpath[] = "/tmp/bench-regen-compact-XXXXXX", vpath[] = "/tmp/bench-regen-verify-XXXXXX";
	uint64_t blocks = 0, bits = 0, regen_blocks = 0, rec_blocks = 0, gaps = 0, truncated = 0;
	double t_gen, t_load_c = 1e30, t_load_v = 1e30, t_regen = 1e30, t_walk = 1e30,
	       t_rec = 1e30, t0;
	int c, fd, err;

	if (argc > 1 && !strcmp(argv[1], "--help"))
		return fputs(usage, stdout), 0;
	while ((c = getopt(argc, argv, "hn:m:s:r:kj:c:eX:")) != -1) {
		switch (c) {
		case 'j':
			jobs = (unsigned int)atoi(optarg);
			if (jobs < 1 || jobs > 1024) {
				fprintf(stderr, "bench-regen: -j: 1 to 1024 threads\n");
				return 2;
			}
			break;
		case 'c':
			cpus = (unsigned int)atoi(optarg);
			if (cpus < 1 || cpus > MAX_CPUS) {
				fprintf(stderr, "bench-regen: -c: 1 to %u CPUs\n", MAX_CPUS);
				return 2;
			}
			break;
		case 'e':
			every_block = 1;
			break;
		case 'X':
			measure_path = optarg;
			break;
		case 'n':
			target = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			mode = optarg;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			reps = (unsigned int)atoi(optarg);
			break;
		case 'k':
			keep = 1;
			break;
		case 'h':
			return fputs(usage, stdout), 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!strcmp(mode, "bits")) {
		so.encoding = PT_ENC_BITS;
	} else if (!strcmp(mode, "paths")) {
		so.mode = PT_MODE_PATHS;
		so.encoding = PT_ENC_PATH;
	} else if (strcmp(mode, "witness")) {
		fprintf(stderr, "bench-regen: -m: witness, bits or paths\n");
		return 2;
	}
	if (!reps)
		reps = 1;
	if (measure_path)
		return measure(measure_path, jobs, reps);
	ro.nr_cpus = cpus;
	rng = seed;
	t0 = now();
	for (i = 0; i < 1000; i++) {
		err = sim_generate_lowered(&p, &rng, &go, &so);
		if (err) {
			fprintf(stderr, "bench-regen: generate: %s\n", pt_strerror(err));
			return 1;
		}
		if (all_decodable(&p))
			break;
		sim_free(&p);
	}
	if (i == 1000) {
		fprintf(stderr, "bench-regen: no program whose every plan pathregen accepts\n");
		return 1;
	}
	while (blocks < target) {
		struct sim_kmod_run r = { 0 };
		struct sim_truth t;
		uint64_t k;

		err = sim_truth_init(&t, &p);
		t.no_events = 1;	/* too many to keep: the blocks are counted */
		if (!err)
			err = sim_kmod_execute(&p, &ro, &rng, &r, &t);
		for (k = 0; !err && k < r.nrecs; k++) {
			const struct sim_rec *rec = &r.recs[k];
			uint16_t type;

			memcpy(&type, rec->payload, 2);
			if (every_block)
				err = page_add(&every[rec->cpu], rec);
			if (!err && type != PT_REC_BLOCK)
				err = page_add(&compact[rec->cpu], rec);
		}
		blocks += t.blocks;
		bits += r.bits;
		sim_truth_free(&t, &p);
		/* the next run goes on from here: stamps grow through the file, as a recording's */
		ro.clock_start = r.clock;
		sim_kmod_run_free(&r);
		if (err) {
			fprintf(stderr, "bench-regen: run: %s\n", pt_strerror(err));
			return 1;
		}
	}
	fd = mkstemp(cpath);
	if (fd >= 0)
		close(fd);
	fd = mkstemp(vpath);
	if (fd >= 0)
		close(fd);
	if (write_trace(cpath, &p, compact, cpus) ||
	    (every_block && write_trace(vpath, &p, every, cpus))) {
		fprintf(stderr, "bench-regen: cannot write the traces\n");
		return 1;
	}
	t_gen = now() - t0;
	for (i = 0; i < MAX_CPUS; i++) {
		free(compact[i].data);
		free(every[i].data);
		compact[i].data = every[i].data = NULL;
	}
	if (jobs == 1)
		cpu_capacity(1, &capacity, &fastest);
	if (jobs >= 2 ? measure_against_one(cpath, jobs, reps, &m_blocks, &m_engine, &m_e2e,
					    &rss_kb, &one_e2e, &capacity) :
			measure_child(cpath, jobs, reps, fastest, &m_blocks, &m_engine, &m_e2e,
				      &rss_kb)) {
		unlink(cpath);
		unlink(vpath);
		return 1;
	}
	printf("mode=regen blocks=%" PRIu64 " jobs=%u cpus=%u engine_blocks_per_s=%.0f"
	       " end_to_end_blocks_per_s=%.0f peak_rss_kb=%ld trace_bytes=%" PRIu64,
	       m_blocks, jobs, cpus, m_engine > 0 ? (double)m_blocks / m_engine : 0.0,
	       m_e2e > 0 ? (double)m_blocks / m_e2e : 0.0, rss_kb, file_size(cpath));
	if (jobs >= 2)
		printf(" end_to_end_speedup=%.2f cpu_capacity=%.2f", m_e2e > 0 ? one_e2e / m_e2e : 0.0,
		       capacity);
	printf("\n");
	if (!every_block) {
		/* a stream's unproven tail is not regenerated (regen.h): a few blocks per stream */
		int ok = m_blocks <= blocks && m_blocks + 64 * (uint64_t)ro.ntasks >= blocks;

		if (!ok)
			fprintf(stderr, "bench-regen: MISMATCH: regenerated %" PRIu64
				" blocks of the run's %" PRIu64 "\n", m_blocks, blocks);
		if (keep)
			printf("kept %s\n", cpath);
		else
			unlink(cpath);
		unlink(vpath);
		sim_free(&p);
		return ok ? 0 : 1;
	}

	for (rep = 0; rep < reps; rep++) {
		struct pr_trace lc, lv;
		struct counts cnt = { 0 };
		double t;

		t = now();
		err = pr_trace_load(cpath, &lc, 1, 1);
		t_load_c = now() - t < t_load_c ? now() - t : t_load_c;
		if (err) {
			fprintf(stderr, "bench-regen: load: %s\n", pt_strerror(err));
			return 1;
		}
		t = now();
		for (i = 0; i < lc.ss.nstreams; i++)
			regen_stream(&lc.m.fs, &lc.ss.streams[i], count_event, &cnt);
		t = now() - t;
		t_regen = t < t_regen ? t : t_regen;
		regen_blocks = cnt.blocks;
		gaps = cnt.gaps;
		truncated = cnt.truncated;

		/* The same through the writers' walk with a profile writer (edges need no decoding). */
		{
			struct out_writer w = { .ops = &out_blocks_ops, .m = &lc.m, .fp = NULL };
			struct out_writer *ws[1] = { &w };
			FILE *devnull = fopen("/dev/null", "w");

			w.fp = devnull;
			t = now();
			if (!out_open_all(ws, 1)) {
				pr_trace_walk(&lc, ws, 1, NULL);
				out_close_all(ws, 1);
			}
			t = now() - t;
			t_walk = t < t_walk ? t : t_walk;
			fclose(devnull);
		}
		pr_trace_free(&lc);

		t = now();
		err = pr_trace_load(vpath, &lv, 0, 1);
		t_load_v = now() - t < t_load_v ? now() - t : t_load_v;
		if (err) {
			fprintf(stderr, "bench-regen: load: %s\n", pt_strerror(err));
			return 1;
		}
		t = now();
		rec_blocks = 0;
		{
			uint64_t sum = 0;

			for (i = 0; i < lv.ss.nstreams; i++) {
				const struct regen_stream *s = &lv.ss.streams[i];
				uint32_t k;

				for (k = 0; k < s->nmarkers; k++) {
					if (s->markers[k].type != REGEN_M_BLOCK)
						continue;
					rec_blocks++;
					sum += s->markers[k].arg;	/* touch the block id */
				}
			}
			t = now() - t;
			if (sum == UINT64_MAX)
				fprintf(stderr, "-");
		}
		t_rec = t < t_rec ? t : t_rec;
		pr_trace_free(&lv);
	}

	printf("command: ");
	for (i = 0; i < (unsigned int)argc; i++)
		printf("%s%s", i ? " " : "", argv[i]);
	printf("\nsimulated program: %u functions, mode %s; generated %" PRIu64
	       " blocks in %.1f s (not timed below)\n", p.nfuncs, mode, blocks, t_gen);
	printf("%-44s %14s %14s\n", "", "compact trace", "every-block");
	printf("%-44s %14" PRIu64 " %14" PRIu64 "\n", "trace.bin bytes", file_size(cpath),
	       file_size(vpath));
	printf("%-44s %14.3f %14s\n", "trace bits per block", (double)bits / (double)blocks, "-");
	printf("%-44s %14.3f %14.3f\n", "load: read + kbuffer pages + streams (s)", t_load_c,
	       t_load_v);
	printf("%-44s %14.3f %14.3f\n", "blocks out: regen engine / read BLOCK records (s)",
	       t_regen, t_rec);
	printf("%-44s %14.1f %14.1f\n", "  Mblocks/s (blocks out only)",
	       (double)regen_blocks / t_regen / 1e6, (double)rec_blocks / t_rec / 1e6);
	printf("%-44s %14.1f %14.1f\n", "  Mblocks/s (load + blocks out)",
	       (double)regen_blocks / (t_load_c + t_regen) / 1e6,
	       (double)rec_blocks / (t_load_v + t_rec) / 1e6);
	printf("%-44s %14.3f %14s\n", "regen + walk + --blocks profile (s)", t_walk, "-");
	printf("%-44s %14" PRIu64 " %14" PRIu64 "\n", "blocks", regen_blocks, rec_blocks);
	/*
	 * A stream's last blocks after its last bit or marker are not claimed
	 * (regen.h: nothing after the end is guessed), so the engine may stop a
	 * few blocks short of the run, at most a handful per truncated stream.
	 */
	printf("best of %u; gaps %" PRIu64 "; truncated streams %" PRIu64 "; %s", reps, gaps,
	       truncated, rec_blocks == blocks ? "every-block records equal the run's block count" :
	       "MISMATCH: every-block records differ from the run's block count");
	if (regen_blocks == blocks)
		printf("; regenerated blocks equal it\n");
	else if (regen_blocks < blocks && truncated)
		printf("; regenerated %" PRIu64 " fewer: the unproven tails of truncated streams\n",
		       blocks - regen_blocks);
	else
		printf("; MISMATCH: regenerated blocks differ from it\n");
	if (!keep) {
		unlink(cpath);
		unlink(vpath);
	} else {
		printf("kept %s %s\n", cpath, vpath);
	}
	sim_free(&p);
	for (i = 0; i < MAX_CPUS; i++) {
		free(compact[i].data);
		free(every[i].data);
	}
	return regen_blocks == blocks && rec_blocks == blocks ? 0 : 1;
}
