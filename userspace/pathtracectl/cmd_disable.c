// SPDX-License-Identifier: GPL-2.0
/*
 * pathtracectl disable FUNC...|--all: remove the plans (and their probes)
 * of the named functions (shell globs allowed) or of all, and forget what
 * enable stored for them. When no plan remains and enable --inline's copies
 * are live, they go too: the livepatch is disabled, every task has left
 * the copies (up to --wait seconds), the module is unloaded
 * (docs/inline.md, "Switching over and back"); with pathtrace.ko unloaded
 * no plan can remain, and --all removes the copies alone. Exit status: 0
 * every name matched something, 1 a name matched nothing, the module
 * refused or tasks stayed inside the copies, 2 bad command line.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <pathtrace/funcstore.h>
#include <pathtrace/kdev.h>

#include "commands.h"
#include "inline_ctl.h"
#include "loaded.h"

static int del_one(int fd, const struct pt_func_info *f)
{
	struct pt_del_arg d;

	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.func_id = f->func_id;
	if (ioctl(fd, PT_IOC_DEL_PLAN, &d) < 0) {
		ctl_err(f->name, "PT_IOC_DEL_PLAN: %s", strerror(errno));
		return 1;
	}
	funcstore_remove(f->func_id);
	printf("disabled %s\n", f->name);
	return 0;
}

static int cmd_disable(int argc, char **argv)
{
	struct pt_func_info *f;
	struct ctl_args ca;
	int fd, n, i, a, r, all = 0, ret = 0, nfuncs = 0, wait_s = INLINE_WAIT_S;
	char *end;
	long v;

	ctl_args_init(&ca, argc, argv);
	while ((r = ctl_next(&ca)) != CTL_END) {
		if (r == CTL_BAD)
			return 2;
		if (r == CTL_OPERAND) {
			argv[1 + nfuncs++] = (char *)ca.val;	/* the functions, in order */
		} else if (ctl_is(&ca, "--wait")) {
			errno = 0;
			v = strtol(ca.val, &end, 10);
			if (errno || *end || v < 1 || v > 86400)
				return ctl_usage_err("disable", "--wait %s: seconds between 1 and "
						     "86400", ca.val);
			wait_s = (int)v;
		} else {
			all = 1;
		}
	}
	for (; ca.i < argc; ca.i++)	/* after "--" */
		argv[1 + nfuncs++] = argv[ca.i];
	argc = 1 + nfuncs;
	if (!nfuncs == !all)
		return ctl_usage_err("disable", all ? "--all or functions, not both" :
				     "no function named (or --all)");
	if (all && inline_loaded() && access(KDEV_PATH, F_OK) && errno == ENOENT)
		return inline_remove(wait_s);	/* pathtrace.ko is gone, and its plans with it */
	fd = loaded_open("disable");
	if (fd < 0)
		return 1;
	n = loaded_list(fd, "disable", &f);
	if (n < 0) {
		close(fd);
		return 1;
	}
	if (all) {
		for (i = 0; i < n; i++)
			ret |= del_one(fd, &f[i]);
	} else {
		for (a = 1; a < argc; a++) {
			int matched = 0;

			for (i = 0; i < n; i++) {
				if (!f[i].size || fnmatch(argv[a], f[i].name, 0))
					continue;
				matched = 1;
				ret |= del_one(fd, &f[i]);
				f[i].size = 0;	/* done: a later pattern must not delete it again */
			}
			if (!matched) {
				ctl_err(argv[a], "not enabled");
				ret = 1;
			}
		}
	}
	free(f);
	if (inline_loaded()) {
		n = loaded_list(fd, "disable", &f);
		if (n == 0)
			ret |= inline_remove(wait_s);
		if (n >= 0)
			free(f);
	}
	close(fd);
	return ret;
}

static const struct ctl_opt disable_opts[] = {
	{ "--all", 0, NULL, "every function with a plan" },
	{ "--wait", 0, "SECONDS", "how long to wait for tasks to leave the inline copies (default 120)" },
	{ NULL, 0, NULL, NULL },
};

CTL_COMMAND(disable, cmd_disable, "FUNC...", "remove the plans and probes of functions (names "
	    "or globs)", disable_opts)
