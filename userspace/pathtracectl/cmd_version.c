// SPDX-License-Identifier: GPL-2.0
/* pathtracectl version: the module's ABI against the tool's; another major is refused. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/kdev.h>

#include "commands.h"

static int cmd_version(int argc, char **argv)
{
	struct pt_version v;
	int fd, err;

	if (ctl_no_args(argc, argv))
		return 2;
	printf("pathtracectl ABI %u.%u\n", PT_ABI_MAJOR, PT_ABI_MINOR);
	fd = kdev_open();
	if (fd < 0) {
		ctl_err(KDEV_PATH, "%s%s", strerror(errno),
			errno == ENOENT ? " (is pathtrace.ko loaded?)" : "");
		return 1;
	}
	err = kdev_version(fd, &v);
	close(fd);
	if (err) {
		ctl_err("GET_VERSION", "%s", strerror(errno));
		return 1;
	}
	printf("pathtrace.ko ABI %u.%u (%u cpus, %u-byte pages)\n", v.major, v.minor,
	       v.nr_cpus, v.page_size);
	if (kdev_check_version(&v)) {
		ctl_err("version", "module ABI %u.%u is incompatible with tool ABI %u.%u",
			v.major, v.minor, PT_ABI_MAJOR, PT_ABI_MINOR);
		return 1;
	}
	return 0;
}

CTL_COMMAND(version, cmd_version, "", "the module's ABI version against the tool's", NULL)
