/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pathtracectl subcommands. Each lives in cmd_NAME.c and registers
 * itself with CTL_COMMAND, so adding a command touches no shared table.
 * A command's options are one table (struct ctl_opt) that its parser
 * (ctl_next), its --help, pathtracectl --help's synopsis and the bash
 * completion (--list-options) all read, so they cannot disagree.
 */
#ifndef PATHTRACECTL_COMMANDS_H
#define PATHTRACECTL_COMMANDS_H

#include <stdint.h>

/* One option: "--name" (and -c), with a value named arg or none. */
struct ctl_opt {
	const char *name;	/* "--mode"; NULL ends a table */
	char short_name;	/* 'o' for -o, or 0 */
	const char *arg;	/* the value's name ("FILE", "trace|paths"), or NULL: a flag */
	const char *help;	/* one line */
};

struct ctl_command {
	const char *name;
	/* Returns the exit status; argv[0] is the command's name. */
	int (*run)(int argc, char **argv);
	const char *operands;	/* after the options: "FUNC...", or "" */
	const char *what;	/* what it does, one line */
	const struct ctl_opt *opts;
	struct ctl_command *next;
};

void ctl_register(struct ctl_command *cmd);

#define CTL_COMMAND(id, fn, operands_, what_, opts_)                        \
	static struct ctl_command ctl_cmd_##id = {                          \
		.name = #id, .run = fn, .operands = operands_,              \
		.what = what_, .opts = opts_,                               \
	};                                                                  \
	__attribute__((constructor)) static void ctl_register_##id(void)    \
	{                                                                   \
		ctl_register(&ctl_cmd_##id);                                \
	}

/* Walks a command's arguments (ctl_args_init, then ctl_next). */
struct ctl_args {
	const struct ctl_command *cmd;
	int argc;
	char **argv;
	int i;			/* the next argument */
	int stop_at_operand;	/* the options end at the first operand (ctl_next: CTL_END there) */
	const struct ctl_opt *opt;	/* CTL_OPT: which */
	const char *val;	/* CTL_OPT: its value (NULL for a flag); CTL_OPERAND: the operand */
	char short_buf[3];
};

enum { CTL_END = 0, CTL_OPT = 1, CTL_OPERAND = 2, CTL_BAD = -1 };

/* Starts walking argv (argv[0]: a registered command's name). */
void ctl_args_init(struct ctl_args *a, int argc, char **argv);

/*
 * The next argument: CTL_OPT (a->opt, a->val: "--name VALUE", "--name=VALUE",
 * "-cVALUE", "-c VALUE"), CTL_OPERAND (a->val), CTL_END (after "--", or at
 * the first operand when stop_at_operand; a->i is the next argument), or
 * CTL_BAD after saying why (unknown option, a value missing or given to a
 * flag; the caller exits 2). -h and --help print the command's usage on
 * stdout and exit 0; --list-options prints its options for completion.
 */
int ctl_next(struct ctl_args *a);

/* A command of no arguments: 0, or 2 after saying why (-h and --help as ctl_next). */
int ctl_no_args(int argc, char **argv);

/* Whether a->opt is the option called name. */
int ctl_is(const struct ctl_args *a, const char *name);

/* Seconds on the monotonic clock (what a command reports durations by). */
double ctl_now_s(void);

/* Prints "pathtracectl: <what>: <why>" to stderr. */
void ctl_err(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A bad command line of cmd: "pathtracectl: <cmd>: <why> (usage: pathtracectl
 * <cmd> --help)". Returns 2, the exit status.
 */
int ctl_usage_err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Says why elfobj_open(path) failed with err (errno as it left it). */
void ctl_elf_err(const char *path, int err);

/*
 * --mode of enable and plan: the modes both take, and the plan mode and
 * flags of one. Returns 0, or -1 for another word.
 */
#define CTL_MODES "trace|paths|path-profile|edges"
int ctl_mode(const char *v, uint16_t *mode, uint32_t *flags);

#endif
