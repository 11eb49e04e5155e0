// SPDX-License-Identifier: GPL-2.0
/*
 * pathtracectl record -o trace.bin [--duration S] [--buffer-kb N] [--osp N] [-- COMMAND ARGS]
 *
 * --buffer-kb: per-CPU ring buffer; by default 8 MiB, 64 MiB when a loaded
 * plan verifies (halved while the kernel cannot allocate it). --osp N:
 * online subpath profiling beside path-profile plans, a hot list of N
 * subpaths per CPU (`pathtracectl subpaths`, `top`).
 *
 * Arms the loaded plans, runs COMMAND (or waits for the duration or
 * SIGINT/SIGTERM), reads every CPU's ring-buffer pages while tracing runs,
 * then stops, flushes, drains and writes trace.bin (trace-format/FORMAT.md):
 * header, SYSTEM, one FUNCTION per loaded plan, PAGES as they were read,
 * LOSS totals, END. Recording ends at whichever comes first: COMMAND exits
 * (its non-zero status is reported, recording still succeeds), the duration
 * ends (COMMAND, if still running, gets SIGTERM), or a signal. Exit 0 when
 * trace.bin is complete, 1 on a failure (the file then has no END section),
 * 2 for a bad command line.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/funcstore.h>
#include <pathtrace/kdev.h>
#include <pathtrace/tracefile.h>

#include "commands.h"

/*
 * Between drains while tracing runs, the recorder sleeps in poll() on the
 * device, which is readable once a CPU's buffer is half full (the module
 * looks every 10 ms: a CPU filling about 100 MB/s at worst adds 1 MB
 * meanwhile, well inside the default per-CPU buffer), or until WAIT_MS,
 * COMMAND's exit or a signal. A module before ABI 2.10 cannot be polled:
 * then it drains every POLL_NS.
 */
#define WAIT_MS 1000L
#define POLL_NS 10000000L
#define ABI_MINOR_POLL 10
/* Pages read from one CPU before they are written out as one PAGES section. */
#define BATCH_PAGES 256u

/*
 * The per-CPU buffer when --buffer-kb is not given: it must absorb the
 * rate for as long as the recorder may not get to run (under a busy
 * workload, or software emulation, that is easily a second). Verify mode
 * writes a record per executed block, ten times the rate of the plans.
 */
#define DEFAULT_BUFFER_KB	8192L
#define DEFAULT_VERIFY_BUFFER_KB 65536L

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* SIGCHLD is caught (not ignored) so that it ends the wait in ppoll(). */
static void on_child(int sig)
{
	(void)sig;
}

/*
 * Sleeps until the next drain is due, or a signal @during lets through
 * arrives (blocked outside the wait: none can come between the caller's
 * checks and the sleep). With @can_poll (a pollable module) until a CPU's
 * buffer is half full, WAIT_MS or @left_s (> 0: the duration left); else
 * for POLL_NS. Returns 1 when it woke for a half-full buffer, else 0.
 */
static int wait_for_pages(int fd, int can_poll, double left_s, const sigset_t *during)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec t = { 0, POLL_NS };
	long ms = WAIT_MS;

	if (!can_poll)
		return ppoll(NULL, 0, &t, during) > 0;
	if (left_s > 0 && left_s * 1000 < ms)
		ms = (long)(left_s * 1000) + 1;
	t.tv_sec = ms / 1000;
	t.tv_nsec = ms % 1000 * 1000000L;
	return ppoll(&pfd, 1, &t, during) > 0;
}

struct recorder {
	int fd;
	uint32_t nr_cpus;
	uint32_t page_size;
	uint8_t *batch;		/* BATCH_PAGES pages of one CPU */
	uint64_t *pages;	/* per CPU: pages read */
	uint64_t bytes;		/* of page data written (each page up to its data's end) */
	struct tf_writer w;
	const char *out;
};

static int usage_error(const char *why)
{
	return ctl_usage_err("record", "%s", why);
}

/*
 * Reads what cpu has now, up to BATCH_PAGES pages, and writes them as one
 * PAGES_TRIMMED section. Returns the number of pages, or -1 after reporting.
 */
static int drain_cpu(struct recorder *r, uint32_t cpu)
{
	uint64_t bytes = 0;
	uint32_t n = 0;

	while (n < BATCH_PAGES) {
		struct pt_read_arg a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.cpu = cpu;
		a.buf = (uintptr_t)(r->batch + (size_t)n * r->page_size);
		a.buf_len = r->page_size;
		if (ioctl(r->fd, PT_IOC_READ_PAGE, &a) < 0) {
			ctl_err("READ_PAGE", "cpu %u: %s", cpu, strerror(errno));
			return -1;
		}
		if (!a.out_len)
			break;
		if (a.out_len < r->page_size)
			memset(r->batch + (size_t)n * r->page_size + a.out_len, 0,
			       r->page_size - a.out_len);
		n++;
	}
	/* handed to the kernel at once: a record killed later leaves these pages readable */
	if (n && (tfw_pages(&r->w, cpu, r->page_size, n, r->batch, &bytes) || tfw_flush(&r->w))) {
		ctl_err(r->out, "write: %s", strerror(errno));
		return -1;
	}
	r->pages[cpu] += n;
	r->bytes += bytes;
	return n;
}

/*
 * One batch from every CPU (while tracing: the loop comes back soon); with
 * until_empty, repeats until every CPU is empty. Returns the pages read,
 * or -1 after reporting.
 */
static long drain_all(struct recorder *r, int until_empty)
{
	long read = 0;
	int more;

	do {
		uint32_t cpu;

		more = 0;
		for (cpu = 0; cpu < r->nr_cpus; cpu++) {
			int n = drain_cpu(r, cpu);

			if (n < 0)
				return -1;
			if (n == BATCH_PAGES)
				more = 1;	/* a full batch: look again */
			read += n;
		}
	} while (more && until_empty);
	return read;
}

/*
 * The FUNCTION section of the loaded plan at index (LIST_FUNCS). Code and
 * CFG come from the funcstore that enable filled; the module's own plan
 * copy must match the stored one, or the stored data is of another plan.
 * Returns 1 written, 0 past the last, -1 after reporting.
 */
static int write_function(struct recorder *r, uint32_t index, uint8_t **plan, uint32_t *cap)
{
	struct pt_func_info fi;
	struct tracefile st;
	struct tf_function fn;
	int err, have;

	for (;;) {
		memset(&fi, 0, sizeof(fi));
		fi.size = sizeof(fi);
		fi.index = index;
		fi.plan = (uintptr_t)*plan;
		fi.plan_len = *cap;
		if (!ioctl(r->fd, PT_IOC_LIST_FUNCS, &fi))
			break;
		if (errno == ENOENT)
			return 0;
		if (errno != ENOSPC || fi.plan_len <= *cap) {
			ctl_err("LIST_FUNCS", "%s%s", strerror(errno),
				errno == ENOTTY ? " (module without LIST_FUNCS)" : "");
			return -1;
		}
		free(*plan);
		*cap = fi.plan_len;
		*plan = malloc(*cap);
		if (!*plan) {
			ctl_err("record", "out of memory");
			return -1;
		}
	}
	fi.name[PT_NAME_MAX - 1] = 0;
	err = funcstore_load(fi.func_id, &st);
	have = !err && st.funcs[0].plan_len == fi.plan_len &&
	       !memcmp(st.funcs[0].plan, *plan, fi.plan_len) && st.funcs[0].addr == fi.addr;
	if (have) {
		fn = st.funcs[0];
	} else {
		/* Still recorded, so the trace is honest about what ran; pathregen refuses it. */
		if (err == -PT_ENOENT)
			ctl_err(fi.name, "no stored code and CFG in %s (not enabled by this "
				"pathtracectl?): recorded without them, pathregen cannot "
				"regenerate it", funcstore_dir());
		else
			ctl_err(fi.name, "stored code and CFG in %s do not match the loaded "
				"plan (%s): recorded without them", funcstore_dir(),
				err ? pt_strerror(err) : "another plan");
		memset(&fn, 0, sizeof(fn));
		fn.func_id = fi.func_id;
		fn.addr = fi.addr;
		fn.name = fi.name;
		fn.name_len = strlen(fi.name);
		fn.plan = *plan;
		fn.plan_len = fi.plan_len;
	}
	err = tfw_function(&r->w, &fn);
	tracefile_free(&st);
	if (err) {
		ctl_err(r->out, "write: %s", strerror(errno));
		return -1;
	}
	return 1;
}

static int write_functions(struct recorder *r)
{
	uint32_t cap = 1 << 16, i;
	uint8_t *plan = malloc(cap);
	int ret = 0;

	if (!plan) {
		ctl_err("record", "out of memory");
		return -1;
	}
	for (i = 0;; i++) {
		ret = write_function(r, i, &plan, &cap);
		if (ret <= 0)
			break;
	}
	free(plan);
	if (!ret && i == 0)
		ctl_err("record", "no functions are enabled: the trace will be empty");
	return ret < 0 ? -1 : 0;
}

static int parse_args(int argc, char **argv, const char **out, double *duration,
		      long *buffer_kb, uint32_t *osp, char ***cmd)
{
	struct ctl_args a;
	char *end;
	int r;

	*out = NULL;
	*duration = 0;
	*buffer_kb = 0;
	*osp = 0;
	*cmd = NULL;
	ctl_args_init(&a, argc, argv);
	/* the options end at the first operand, so COMMAND's own options are its own */
	a.stop_at_operand = 1;
	while ((r = ctl_next(&a)) != CTL_END) {
		if (r == CTL_BAD)
			return 2;
		if (ctl_is(&a, "--output")) {
			*out = a.val;
		} else if (ctl_is(&a, "--duration")) {
			*duration = strtod(a.val, &end);
			if (*end || !(*duration > 0))
				return usage_error("--duration needs a positive number of seconds");
		} else if (ctl_is(&a, "--buffer-kb")) {
			errno = 0;
			*buffer_kb = strtol(a.val, &end, 10);
			if (errno || *end || *buffer_kb <= 0 || *buffer_kb > (1L << 30))
				return usage_error("--buffer-kb needs a positive size in KiB");
		} else {
			unsigned long n;

			errno = 0;
			n = strtoul(a.val, &end, 10);
			if (errno || *end || !n || n > PT_OSP_MAX_ENTRIES)
				return usage_error("--osp needs 1..4096 subpaths per CPU");
			*osp = (uint32_t)n;
		}
	}
	if (!*out)
		return usage_error("-o trace.bin is required");
	if (a.i < argc)
		*cmd = argv + a.i;
	return 0;
}

static pid_t run_command(char **cmd)
{
	pid_t pid = fork();

	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(cmd[0], cmd);
		fprintf(stderr, "pathtracectl: %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* 1 if any loaded plan has verify sites, 0 if none, -1 on an ioctl error (errno). */
static int any_verify_plan(int fd)
{
	struct pt_func_info fi;
	uint32_t i;

	for (i = 0;; i++) {
		memset(&fi, 0, sizeof(fi));
		fi.size = sizeof(fi);
		fi.index = i;
		if (ioctl(fd, PT_IOC_LIST_FUNCS, &fi))
			return errno == ENOENT ? 0 : -1;
		if (fi.flags & PT_PLAN_VERIFY)
			return 1;
	}
}

/*
 * Sizes the buffers: --buffer-kb, else the default for the loaded plans,
 * halved while the kernel cannot allocate it (down to 1 MiB). Returns 0
 * with *kb set, or -1 after reporting.
 */
static int configure_buffers(int fd, long asked, uint32_t osp, long *kb)
{
	struct pt_config cfg;
	int verify;

	*kb = asked;
	if (!asked) {
		verify = any_verify_plan(fd);
		if (verify < 0) {
			ctl_err("LIST_FUNCS", "%s", strerror(errno));
			return -1;
		}
		*kb = verify ? DEFAULT_VERIFY_BUFFER_KB : DEFAULT_BUFFER_KB;
	}
	for (;;) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.size = sizeof(cfg);
		cfg.buffer_kb = (uint32_t)*kb;
		cfg.osp_entries = osp;
		if (!ioctl(fd, PT_IOC_CONFIG, &cfg))
			return 0;
		if (asked || errno != ENOMEM || *kb <= 1024) {
			ctl_err("CONFIG", "%ld KiB per CPU: %s", *kb, strerror(errno));
			return -1;
		}
		*kb /= 2;
	}
}

static int cmd_record(int argc, char **argv)
{
	struct recorder r = { .fd = -1 };
	struct pt_version v;
	struct pt_stats st;
	struct utsname un;
	struct sigaction sa;
	struct timespec rt;
	sigset_t blocked, during;
	const char *out;
	double duration, t0;
	long buffer_kb;
	uint32_t osp;
	char **cmd;
	pid_t child = -1;
	int status = 0, ret = 1, started = 0, failed = 0, woken = 0, wstatus;
	unsigned long wakes = 0;	/* by a half-full buffer */
	uint32_t cpu;
	uint64_t total = 0;

	ret = parse_args(argc, argv, &out, &duration, &buffer_kb, &osp, &cmd);
	if (ret)
		return ret;
	ret = 1;
	r.out = out;
	r.fd = kdev_open();
	if (r.fd < 0) {
		ctl_err(KDEV_PATH, "%s%s", strerror(errno),
			errno == ENOENT ? " (is pathtrace.ko loaded?)" : "");
		return 1;
	}
	if (kdev_version(r.fd, &v)) {
		ctl_err("GET_VERSION", "%s", strerror(errno));
		goto out;
	}
	if (kdev_check_version(&v)) {
		ctl_err("record", "module ABI %u.%u is incompatible with tool ABI %u.%u",
			v.major, v.minor, PT_ABI_MAJOR, PT_ABI_MINOR);
		goto out;
	}
	if (!v.nr_cpus || v.page_size < 64 || v.page_size > (1u << 20)) {
		ctl_err("GET_VERSION", "module reports %u cpus, %u-byte pages", v.nr_cpus,
			v.page_size);
		goto out;
	}
	r.nr_cpus = v.nr_cpus;
	r.page_size = v.page_size;
	r.batch = malloc((size_t)BATCH_PAGES * r.page_size);
	r.pages = calloc(r.nr_cpus, sizeof(*r.pages));
	if (!r.batch || !r.pages) {
		ctl_err("record", "out of memory");
		goto out;
	}
	if (configure_buffers(r.fd, buffer_kb, osp, &buffer_kb))
		goto out;
	if (tfw_open(&r.w, out)) {
		ctl_err(out, "%s", strerror(errno));
		goto out;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	uname(&un);
	tfw_system(&r.w, r.nr_cpus, r.page_size, un.release,
		   (uint64_t)rt.tv_sec * 1000000000ull + rt.tv_nsec);
	if (write_functions(&r))
		goto out;
	if (tfw_flush(&r.w)) {	/* the headers first: a record killed at once leaves them */
		ctl_err(out, "write: %s", strerror(errno));
		goto out;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;	/* writes and ioctls resume; the wait ends early */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	if (ioctl(r.fd, PT_IOC_START) < 0) {
		ctl_err("START", "%s", strerror(errno));
		goto out;
	}
	started = 1;
	t0 = ctl_now_s();
	if (cmd) {
		child = run_command(cmd);
		if (child < 0) {
			ctl_err(cmd[0], "fork: %s", strerror(errno));
			goto out;
		}
	}
	/* COMMAND (forked above) keeps the mask it had; here they wake the wait only */
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGCHLD);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGTERM);
	sigprocmask(SIG_BLOCK, &blocked, &during);
	for (;;) {
		long read = drain_all(&r, 0);

		failed = read < 0;
		if (failed || stop_requested)
			break;
		if (duration > 0 && ctl_now_s() - t0 >= duration)
			break;
		if (child > 0 && waitpid(child, &wstatus, WNOHANG) == child) {
			child = -1;
			status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
			if (status)
				fprintf(stderr, "pathtracectl: %s: exited with status %d\n",
					cmd[0], status);
			break;
		}
		/*
		 * Woken for a half-full buffer whose pages the writer still holds
		 * (a buffer of a page or two): the timer, not a spin, until it
		 * lets go of one.
		 */
		woken = wait_for_pages(r.fd, v.minor >= ABI_MINOR_POLL && !(woken && !read),
				       duration > 0 ? t0 + duration - ctl_now_s() : 0, &during);
		wakes += woken;
	}
	sigprocmask(SIG_SETMASK, &during, NULL);
	if (failed)
		goto out;
	if (ioctl(r.fd, PT_IOC_STOP) < 0) {
		ctl_err("STOP", "%s", strerror(errno));
		goto out;
	}
	started = 0;
	if (ioctl(r.fd, PT_IOC_FLUSH) < 0) {
		ctl_err("FLUSH", "%s", strerror(errno));
		goto out;
	}
	if (drain_all(&r, 1) < 0)
		goto out;
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	if (ioctl(r.fd, PT_IOC_STATS, &st) < 0) {
		ctl_err("STATS", "%s", strerror(errno));
		goto out;
	}
	tfw_loss(&r.w, r.nr_cpus, st.dropped, st.missed);
	if (tfw_close(&r.w)) {
		ctl_err(out, "write: %s", strerror(errno));
		goto out;
	}
	for (cpu = 0; cpu < r.nr_cpus; cpu++)
		total += r.pages[cpu];
	fprintf(stderr, "pathtracectl: record: %s: %llu pages (", out, (unsigned long long)total);
	for (cpu = 0; cpu < r.nr_cpus; cpu++)
		fprintf(stderr, "%scpu%u %llu", cpu ? ", " : "", cpu,
			(unsigned long long)r.pages[cpu]);
	fprintf(stderr, "; %llu bytes), %llu records, %llu dropped, %llu missed\n",
		(unsigned long long)r.bytes, (unsigned long long)st.records, (unsigned long long)st.dropped,
		(unsigned long long)st.missed);
	/* Records dropped although woken often: buffers too small for the wake-up's latency. */
	fprintf(stderr, "pathtracectl: record: woken %lu times by a half-full buffer\n", wakes);
	ret = 0;
out:
	if (started)
		ioctl(r.fd, PT_IOC_STOP);
	if (child > 0) {
		/* Recording is over (duration, signal or failure): the command does not outlive it. */
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	/* A failed recording keeps no END section: readers see it as cut short. */
	if (r.w.f && ret)
		fclose(r.w.f);
	free(r.batch);
	free(r.pages);
	close(r.fd);
	return ret;
}

static const struct ctl_opt record_opts[] = {
	{ "--output", 'o', "FILE", "the trace.bin to write (required)" },
	{ "--duration", 0, "S", "stop after S seconds" },
	{ "--buffer-kb", 0, "N", "per-CPU ring buffers of N KiB (8 MiB; 64 MiB when a plan verifies)" },
	{ "--osp", 0, "N", "online subpath profiling beside path-profile plans: N subpaths a CPU" },
	{ NULL, 0, NULL, NULL },
};

CTL_COMMAND(record, cmd_record, "[--] [COMMAND ARGS...]",
	    "trace into trace.bin until COMMAND exits, the duration ends or SIGINT", record_opts)
