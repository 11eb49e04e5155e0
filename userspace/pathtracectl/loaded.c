// SPDX-License-Identifier: GPL-2.0
/* loaded - the installed plans as the module lists them (see loaded.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/inline.h>
#include <pathtrace/kdev.h>

#include "commands.h"
#include "loaded.h"

int loaded_open(const char *who)
{
	struct pt_version v;
	int fd = kdev_open();

	if (fd < 0) {
		ctl_err(who, "%s: %s%s", KDEV_PATH, strerror(errno),
			errno == ENOENT ? " (is pathtrace.ko loaded?)" : "");
		return -1;
	}
	if (kdev_version(fd, &v) || kdev_check_version(&v) ||
	    (v.major == 1 && v.minor < 1)) {
		ctl_err(who, "pathtrace.ko ABI %u.%u, this tool needs %u.1 or a later minor",
			v.major, v.minor, PT_ABI_MAJOR);
		close(fd);
		return -1;
	}
	return fd;
}

int loaded_list(int fd, const char *who, struct pt_func_info **out)
{
	struct pt_func_info *v = NULL, *nv;
	int n = 0;

	for (;;) {
		struct pt_func_info fi;

		memset(&fi, 0, sizeof(fi));
		fi.size = sizeof(fi);
		fi.index = (uint32_t)n;
		if (ioctl(fd, PT_IOC_LIST_FUNCS, &fi) < 0) {
			if (errno == ENOENT)
				break;
			ctl_err(who, "PT_IOC_LIST_FUNCS: %s", strerror(errno));
			free(v);
			return -1;
		}
		fi.name[PT_NAME_MAX - 1] = 0;
		nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv) {
			ctl_err(who, "out of memory");
			free(v);
			return -1;
		}
		v = nv;
		v[n++] = fi;
	}
	*out = v;
	return n;
}

const char *loaded_mode_name(uint16_t mode, uint16_t encoding, uint32_t flags)
{
	switch (mode) {
	case PT_MODE_TRACE:
		return encoding == PT_ENC_BITS ? "trace/bits" : "trace/witness";
	case PT_MODE_PATHS:
		return flags & PT_PLAN_PPP ? "ppp-profile" :
		       flags & PT_PLAN_PROFILE ? "path-profile" : "paths";
	case PT_MODE_EDGES:
		return "edges";
	default:
		return "?";
	}
}

int loaded_carriers(int fd, const char *who, struct loaded_carriers *c)
{
	struct pt_version v;
	char line[512], name[64];
	uint64_t size, base;
	FILE *fp;

	memset(c, 0, sizeof(*c));
	if (kdev_version(fd, &v)) {
		ctl_err(who, "PT_IOC_VERSION: %s", strerror(errno));
		return -1;
	}
	c->known = v.major > 2 || (v.major == 2 && v.minor >= 2);
	fp = fopen("/proc/modules", "r");
	if (!fp) {
		ctl_err(who, "/proc/modules: %s", strerror(errno));
		return -1;
	}
	/* "NAME SIZE REFS DEPS STATE BASE ...": the module's core memory */
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "%63s %" SCNu64 " %*s %*s %*s %" SCNx64, name, &size, &base) == 3 &&
		    !strcmp(name, INLINE_MODULE)) {
			c->copies_lo = base;
			c->copies_hi = base + size;
		}
	fclose(fp);
	if (c->copies_hi && !c->copies_lo) {
		ctl_err(who, "/proc/modules hides %s's address (not root?)", INLINE_MODULE);
		return -1;
	}
	return 0;
}

const char *loaded_carrier(const struct pt_func_info *f, const struct loaded_carriers *c)
{
	if (!c->known)
		return "?";
	if (f->carrier == PT_CARRIER_INLINE)
		return "inline-counters";
	if (f->carrier == PT_CARRIER_INLINE_CALLS)
		return "inline-calls";
	if (f->addr >= c->copies_lo && f->addr < c->copies_hi)
		return "copy+probes";
	return "probes";
}
