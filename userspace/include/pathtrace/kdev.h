/* SPDX-License-Identifier: GPL-2.0 */
/* kdev - talking to /dev/pathtrace. */
#ifndef PATHTRACE_KDEV_H
#define PATHTRACE_KDEV_H

#include "pathtrace_abi.h"

#define KDEV_PATH "/dev/" PT_DEVICE_NAME

/*
 * Opens the control device. Returns a descriptor, or -PT_EIO with errno set
 * (ENOENT: module not loaded; EACCES/EPERM: needs CAP_SYS_ADMIN or CAP_PERFMON).
 */
int kdev_open(void);

/*
 * Asks the module for its ABI version. Returns 0, or -PT_EKERNEL with errno
 * set by the ioctl.
 */
int kdev_version(int fd, struct pt_version *v);

/*
 * Checks that the module's ABI can be used by this tool: returns 0 when the
 * majors match, -PT_EVERSION when they differ.
 */
int kdev_check_version(const struct pt_version *v);

#endif
