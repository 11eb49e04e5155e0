// SPDX-License-Identifier: GPL-2.0
/*
 * pt-user-target - a user program with known paths for the user-space
 * tests (docs/user.md): a loop, a switch, recursion, and system calls
 * (write) made through libc from traced code. Built static with symbols,
 * without jump tables (an indirect jump is refused in user code).
 *
 * Usage: pt-user-target [-w FILE] [-x] [ROUNDS]
 *   -w FILE  wait until FILE exists before the rounds (the tests start
 *            two processes, enable one of them with --pid, then go)
 *   -x       processes and signals too: every 4th round raises SIGUSR1,
 *            whose handler ut_on_signal is a traced function, from inside
 *            the round's activation; every 10th round's ut_spawn forks a
 *            child inside its own activation, which runs a round and then
 *            execs this program for 2 rounds, and waits for it
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *self;
static sig_atomic_t signals;	/* read after the rounds: raise() is a call */

int ut_classify(int v)
{
	switch (v % 7) {
	case 0:
		return 3;
	case 1:
		return v / 2;
	case 2:
	case 3:
		return v + 11;
	case 4:
		return -v;
	case 5:
		return v * 3;
	default:
		return 1;
	}
}

unsigned long ut_fact(unsigned int n)
{
	if (n < 2)
		return 1;
	return n * ut_fact(n - 1);
}

/* SIGUSR1's handler: a traced function run between two of ut_round's blocks. */
void ut_on_signal(int sig)
{
	int i, v = 0;

	for (i = 0; i < sig % 5 + 2; i++)
		v += ut_classify(sig + i);
	signals += v > 0 ? 1 : 2;
}

/* Sums a round's values and writes one line with write(2). */
long ut_round(int round, int extras)
{
	char line[64];
	long sum = 0;
	int i, len;

	for (i = 0; i < round % 13 + 1; i++) {
		if (i & 1)
			sum += ut_classify(round + i);
		else
			sum -= (long)ut_fact((unsigned int)(i % 9));
	}
	if (extras && round % 4 == 3)
		raise(SIGUSR1);
	len = snprintf(line, sizeof(line), "round %d sum %ld\n", round, sum);
	if (len > 0 && write(1, line, (size_t)len) != len)
		return -1;
	return sum;
}

/*
 * Forks inside this activation: the child starts inside it (and main's),
 * runs a round, then execs this program for 2 rounds (a new image: its
 * activations start afresh). Returns the child's exit status, or -1.
 */
int ut_spawn(int round)
{
	char arg[16];
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		ut_round(round + 1000, 0);
		snprintf(arg, sizeof(arg), "%d", 2);
		execl(self, self, arg, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void wait_for(const char *path)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	while (access(path, F_OK))
		nanosleep(&tick, NULL);
}

int main(int argc, char **argv)
{
	long total = 0;
	int rounds, r, extras = 0;

	self = argv[0];
	if (argc > 2 && !strcmp(argv[1], "-w")) {
		wait_for(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc > 1 && !strcmp(argv[1], "-x")) {
		extras = 1;
		signal(SIGUSR1, ut_on_signal);
		argc--;
		argv++;
	}
	rounds = argc > 1 ? atoi(argv[1]) : 100;

	for (r = 0; r < rounds; r++) {
		total += ut_round(r, extras);
		if (extras && r % 10 == 9 && ut_spawn(r))
			return 1;
	}
	printf("total %ld\n", total);
	if (extras)
		printf("signals %d\n", (int)signals);
	return 0;
}
