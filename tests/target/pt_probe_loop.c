// SPDX-License-Identifier: GPL-2.0
/*
 * pt-probe-loop - the loops bench-vm's mode=probe-cost times (docs/benchmarks.md,
 * "What a probe hit costs"): a tiny user function called in a loop, and a cheap
 * system call that calls a tiny kernel function, each N times, so that a plan
 * on that one function turns every iteration into a fixed number of probe hits. Built static with
 * symbols like pt-user-target: pl_tick is one block, its own call kept.
 *
 * Usage: pt-probe-loop user|kernel N [REPEATS]
 *   user    N calls of pl_tick
 *   kernel  N getuid(2) system calls (syscall(2), never a cached value):
 *           each calls the kernel's from_kuid_munged once
 * The loop runs REPEATS times (default 3), each timed with CLOCK_MONOTONIC;
 * prints one line "calls=N repeats=REPEATS best_ns=NS" (NS the fastest
 * repeat's time) and exits 0, or prints why to stderr and exits 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* each loop's result, stored so that the loop is kept */
long pl_sink;

/* The user probe's function: one block, no branch. */
long pl_tick(long v)
{
	return v * 3 + 1;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The kernel loop's step: one getuid(2), never a value cached in user space. */
static long getuid_step(long v)
{
	return syscall(SYS_getuid) + v;
}

/* n calls of step, timed (ns); the same loop for both probes. */
static long long timed_loop(long (*step)(long v), long n)
{
	long long t0 = now_ns();
	long i, acc = 0;

	for (i = 0; i < n; i++)
		acc += step(i);
	pl_sink = acc;
	return now_ns() - t0;
}

static long count_arg(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s < '0' || *s > '9' || *end || v < 1) {
		fprintf(stderr, "pt-probe-loop: %s %s: not a positive number\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long (*step)(long v);
	long long t, best = -1;
	long n, repeats = 3, r;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: pt-probe-loop user|kernel N [REPEATS]\n");
		return 2;
	}
	if (!strcmp(argv[1], "user")) {
		step = pl_tick;
	} else if (!strcmp(argv[1], "kernel")) {
		step = getuid_step;
	} else {
		fprintf(stderr, "pt-probe-loop: %s: neither user nor kernel\n", argv[1]);
		return 2;
	}
	n = count_arg(argv[2], "N");
	if (argc > 3)
		repeats = count_arg(argv[3], "REPEATS");
	for (r = 0; r < repeats; r++) {
		t = timed_loop(step, n);
		if (best < 0 || t < best)
			best = t;
	}
	printf("calls=%ld repeats=%ld best_ns=%lld\n", n, repeats, best);
	return 0;
}
