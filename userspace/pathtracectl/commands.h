/* SPDX-License-Identifier: GPL-2.0 */
/* The pathtracectl subcommands; each lives in cmd_NAME.c. */
#ifndef PATHTRACECTL_COMMANDS_H
#define PATHTRACECTL_COMMANDS_H

#include <stdarg.h>

/* Each returns the process exit status; argv[0] is the command's name. */
int cmd_version(int argc, char **argv);

/* Prints "pathtracectl: <what>: <why>" to stderr. */
void ctl_err(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
