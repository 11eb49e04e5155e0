// SPDX-License-Identifier: GPL-2.0
/*
 * libptuser.so - a shared library for the user-space tests (docs/user.md,
 * "Shared libraries"): position-independent code with known paths, called
 * by pt-user-dyn through the PLT. Built without jump tables (an indirect
 * jump is refused in user code).
 */
#include <stddef.h>

unsigned int ul_checksum(const unsigned char *buf, size_t n)
{
	unsigned int sum = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (buf[i] >= '0' && buf[i] <= '9')
			sum = sum * 3 + (buf[i] - '0');
		else if (buf[i] == ' ')
			sum ^= (unsigned int)i;
		else
			sum += buf[i];
	}
	return sum;
}
