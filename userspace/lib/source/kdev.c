// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/kdev.h>

int kdev_open(void)
{
	int fd = open(KDEV_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -PT_EIO : fd;
}

int kdev_version(int fd, struct pt_version *v)
{
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	if (ioctl(fd, PT_IOC_GET_VERSION, v) < 0)
		return -PT_EKERNEL;
	return 0;
}

int kdev_check_version(const struct pt_version *v)
{
	return v->major == PT_ABI_MAJOR ? 0 : -PT_EVERSION;
}
