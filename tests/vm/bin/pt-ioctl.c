// SPDX-License-Identifier: GPL-2.0
/*
 * pt-ioctl - poke /dev/pathtrace the way a VM test needs to:
 *   pt-ioctl open        open the device; print "ok" or the errno name
 *   pt-ioctl bad         issue an unknown ioctl; print the errno name
 *   pt-ioctl hold SECS   keep the device open for SECS seconds
 *   pt-ioctl stats SIZE  PT_IOC_STATS as a tool whose struct pt_stats is SIZE
 *                        bytes issues it (the command's number carries the
 *                        size); print "ok" when it succeeded and wrote
 *                        nothing past SIZE, else what went wrong
 * Before the command, --as-nobody switches to uid/gid 65534 and --drop-caps
 * keeps uid 0 but clears every capability (so the module's own check, not
 * the file mode, must refuse the open).
 * Exits 0 when the call did what it printed, 1 on a usage or setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pathtrace_abi.h"

static const char *errname(int e)
{
	switch (e) {
	case ENOTTY: return "ENOTTY";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case E2BIG: return "E2BIG";
	default: return strerror(e);
	}
}

static int drop_caps(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	return (int)syscall(SYS_capset, &hdr, data);
}

/* PT_IOC_STATS with a struct of @size bytes, guard bytes after it. */
static void stats_of_size(int fd, unsigned int size)
{
	unsigned char buf[512];
	uint32_t got;
	unsigned int i;

	memset(buf, 0xa5, sizeof(buf));
	memset(buf, 0, size);
	memcpy(buf, &size, sizeof(size));
	if (ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, PT_IOC_MAGIC, _IOC_NR(PT_IOC_STATS), size),
		  buf) < 0) {
		printf("%s\n", errname(errno));
		return;
	}
	for (i = size; i < sizeof(buf); i++)
		if (buf[i] != 0xa5) {
			printf("wrote past %u bytes (at %u)\n", size, i);
			return;
		}
	memcpy(&got, buf, sizeof(got));
	if (got != sizeof(struct pt_stats) && got != size)
		printf("size field %u\n", got);
	else
		printf("ok\n");
}

int main(int argc, char **argv)
{
	int fd;

	if (argc >= 2 && !strcmp(argv[1], "--as-nobody")) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
			perror("pt-ioctl: --as-nobody");
			return 1;
		}
		argc--;
		argv++;
	} else if (argc >= 2 && !strcmp(argv[1], "--drop-caps")) {
		if (drop_caps()) {
			perror("pt-ioctl: --drop-caps");
			return 1;
		}
		argc--;
		argv++;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: pt-ioctl open|bad|hold SECS|stats SIZE\n");
		return 1;
	}
	fd = open("/dev/" PT_DEVICE_NAME, O_RDWR);
	if (fd < 0) {
		printf("%s\n", errname(errno));
		return 0;
	}
	if (!strcmp(argv[1], "open")) {
		printf("ok\n");
	} else if (!strcmp(argv[1], "bad")) {
		if (ioctl(fd, _IO(PT_IOC_MAGIC, 0x7f), 0) < 0)
			printf("%s\n", errname(errno));
		else
			printf("succeeded\n");
	} else if (!strcmp(argv[1], "stats") && argc == 3 && atoi(argv[2]) >= 8 &&
		   atoi(argv[2]) <= 256) {
		stats_of_size(fd, (unsigned int)atoi(argv[2]));
	} else if (!strcmp(argv[1], "hold") && argc == 3) {
		printf("holding\n");
		fflush(stdout);
		sleep((unsigned int)atoi(argv[2]));
	} else {
		fprintf(stderr, "usage: pt-ioctl open|bad|hold SECS|stats SIZE\n");
		return 1;
	}
	close(fd);
	return 0;
}
