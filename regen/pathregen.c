// SPDX-License-Identifier: GPL-2.0
/* pathregen - rebuild complete executions from trace.bin. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: pathregen TRACE.BIN\n");
		return 0;
	}
	fprintf(stderr, "pathregen: regeneration is not built yet (issue 6)\n");
	return 1;
}
