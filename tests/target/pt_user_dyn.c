// SPDX-License-Identifier: GPL-2.0
/*
 * pt-user-dyn - a dynamically linked program for the user-space tests
 * (docs/user.md, "Shared libraries"): each round formats a line, has
 * libptuser.so's ul_checksum (called through the PLT) sum it, and writes
 * it with write(2). Found at run time beside the program ($ORIGIN).
 *
 * Usage: pt-user-dyn [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

unsigned int ul_checksum(const unsigned char *buf, size_t n);

int dyn_round(int round)
{
	char line[64];
	unsigned int sum;
	int len;

	len = snprintf(line, sizeof(line), "line %d of %d", round, round * 7 % 13);
	if (len <= 0)
		return -1;
	sum = ul_checksum((const unsigned char *)line, (size_t)len);
	if (round % 3 == 0)
		sum += ul_checksum((const unsigned char *)"0 1", 3);
	len = snprintf(line, sizeof(line), "round %d checksum %u\n", round, sum);
	if (len <= 0 || write(1, line, (size_t)len) != len)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	int r;

	for (r = 0; r < rounds; r++)
		if (dyn_round(r))
			return 1;
	return 0;
}
