// SPDX-License-Identifier: GPL-2.0
/*
 * pt-user-target - a user program with known paths for the user-space
 * tests (docs/user.md): a loop, a switch, recursion, and system calls
 * (write) made through libc from traced code. Built static with symbols,
 * without jump tables (an indirect jump is refused in user code).
 *
 * Usage: pt-user-target [-w FILE] [ROUNDS]
 *   -w FILE  wait until FILE exists before the rounds (the tests start
 *            two processes, enable one of them with --pid, then go)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* Sums a round's values and writes one line with write(2). */
long ut_round(int round)
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
	len = snprintf(line, sizeof(line), "round %d sum %ld\n", round, sum);
	if (len > 0 && write(1, line, (size_t)len) != len)
		return -1;
	return sum;
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
	int rounds, r;

	if (argc > 2 && !strcmp(argv[1], "-w")) {
		wait_for(argv[2]);
		argc -= 2;
		argv += 2;
	}
	rounds = argc > 1 ? atoi(argv[1]) : 100;

	for (r = 0; r < rounds; r++)
		total += ut_round(r);
	printf("total %ld\n", total);
	return 0;
}
