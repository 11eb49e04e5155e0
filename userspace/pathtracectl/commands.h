/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pathtracectl subcommands. Each lives in cmd_NAME.c and registers
 * itself with CTL_COMMAND, so adding a command touches no shared table.
 */
#ifndef PATHTRACECTL_COMMANDS_H
#define PATHTRACECTL_COMMANDS_H

struct ctl_command {
	const char *name;
	/* Returns the exit status; argv[0] is the command's name. */
	int (*run)(int argc, char **argv);
	const char *usage;	/* one line: "NAME ARGS   what it does" */
	struct ctl_command *next;
};

void ctl_register(struct ctl_command *cmd);

#define CTL_COMMAND(id, fn, text)                                          \
	static struct ctl_command ctl_cmd_##id = {                          \
		.name = #id, .run = fn, .usage = text,                      \
	};                                                                  \
	__attribute__((constructor)) static void ctl_register_##id(void)    \
	{                                                                   \
		ctl_register(&ctl_cmd_##id);                                \
	}

/* Prints "pathtracectl: <what>: <why>" to stderr. */
void ctl_err(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Says why elfobj_open(path) failed with err (errno as it left it). */
void ctl_elf_err(const char *path, int err);

#endif
