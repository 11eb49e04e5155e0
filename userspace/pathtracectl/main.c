// SPDX-License-Identifier: GPL-2.0
/* pathtracectl - control the pathtrace kernel tracer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "commands.h"

static struct ctl_command *commands;

/* Keeps the list sorted by name so --help reads alphabetically. */
void ctl_register(struct ctl_command *cmd)
{
	struct ctl_command **p = &commands;

	while (*p && strcmp((*p)->name, cmd->name) < 0)
		p = &(*p)->next;
	cmd->next = *p;
	*p = cmd;
}

static const struct ctl_command *find(const char *name)
{
	const struct ctl_command *c;

	for (c = commands; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* "pathtracectl: <what>: <why><tail>" on stderr. */
static void say(const char *what, const char *tail, const char *fmt, va_list ap)
{
	fprintf(stderr, "pathtracectl: %s: ", what);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "%s\n", tail);
}

double ctl_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void ctl_err(const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(what, "", fmt, ap);
	va_end(ap);
}

int ctl_usage_err(const char *cmd, const char *fmt, ...)
{
	char tail[96];
	va_list ap;

	snprintf(tail, sizeof(tail), " (usage: pathtracectl %s --help)", cmd);
	va_start(ap, fmt);
	say(cmd, tail, fmt, ap);
	va_end(ap);
	return 2;
}

void ctl_elf_err(const char *path, int err)
{
	if (err == -PT_EIO)
		ctl_err(path, "%s", strerror(errno));
	else if (err == -PT_EFORMAT)
		ctl_err(path, "not an x86-64 ELF object with symbols (or a compressed module that "
			"does not decompress), or one of its kernel tables is malformed");
	else
		ctl_err(path, "%s", pt_strerror(err));
}

int ctl_mode(const char *v, uint16_t *mode, uint32_t *flags)
{
	if (!strcmp(v, "trace"))
		*mode = PT_MODE_TRACE;
	else if (!strcmp(v, "paths") || !strcmp(v, "path-profile"))
		*mode = PT_MODE_PATHS;
	else if (!strcmp(v, "edges"))
		*mode = PT_MODE_EDGES;
	else
		return -1;
	/* a path profile: the paths plan, counted in the kernel */
	if (!strcmp(v, "path-profile"))
		*flags |= PT_PLAN_PROFILE;
	else
		*flags &= ~PT_PLAN_PROFILE;
	return 0;
}

/* One option as the synopsis shows it: "-o FILE", "--mode trace|paths", "--dot". */
static int opt_text(const struct ctl_opt *o, char *buf, size_t n)
{
	if (o->short_name)
		return snprintf(buf, n, "-%c|%s%s%s", o->short_name, o->name, o->arg ? " " : "",
				o->arg ? o->arg : "");
	return snprintf(buf, n, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* "NAME [OPTION]... OPERANDS", every option from the table. */
static void synopsis(FILE *f, const struct ctl_command *c, const char *indent)
{
	const struct ctl_opt *o;
	char buf[256];
	int col = fprintf(f, "%s%s", indent, c->name);

	for (o = c->opts; o && o->name; o++) {
		int n = opt_text(o, buf, sizeof(buf)) + 3;

		if (col + n > 100)
			col = fprintf(f, "\n%s   ", indent) - 1;
		col += fprintf(f, " [%s]", buf);
	}
	if (c->operands[0])
		fprintf(f, "%s%s", col + strlen(c->operands) > 99 ? "\n    " : " ", c->operands);
	fputc('\n', f);
}

static void command_usage(FILE *f, const struct ctl_command *c)
{
	const struct ctl_opt *o;
	char buf[256];

	fprintf(f, "usage: pathtracectl ");
	synopsis(f, c, "");
	fprintf(f, "%s\n", c->what);
	if (c->opts && c->opts->name)
		fprintf(f, "\noptions:\n");
	for (o = c->opts; o && o->name; o++) {
		opt_text(o, buf, sizeof(buf));
		fprintf(f, "  %-30s %s\n", buf, o->help);
	}
	fprintf(f, "  %-30s %s\n", "-h, --help", "this text");
}

void ctl_args_init(struct ctl_args *a, int argc, char **argv)
{
	memset(a, 0, sizeof(*a));
	a->cmd = find(argv[0]);
	a->argc = argc;
	a->argv = argv;
	a->i = 1;
}

int ctl_is(const struct ctl_args *a, const char *name)
{
	return a->opt && !strcmp(a->opt->name, name);
}

int ctl_next(struct ctl_args *a)
{
	const struct ctl_opt *o;
	const char *arg, *eq;
	size_t len;

	a->opt = NULL;
	a->val = NULL;
	if (a->i >= a->argc)
		return CTL_END;
	arg = a->argv[a->i];
	if (!strcmp(arg, "--")) {
		a->i++;
		return CTL_END;
	}
	if (arg[0] != '-' || !arg[1]) {
		if (a->stop_at_operand)
			return CTL_END;
		a->val = arg;
		a->i++;
		return CTL_OPERAND;
	}
	a->i++;
	if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
		command_usage(stdout, a->cmd);
		exit(0);
	}
	if (!strcmp(arg, "--list-options")) {
		for (o = a->cmd->opts; o && o->name; o++)
			if (o->short_name)
				printf("%s\n-%c\n", o->name, o->short_name);
			else
				printf("%s\n", o->name);
		printf("--help\n");
		exit(0);
	}
	if (arg[1] != '-') {		/* -c, -cVALUE */
		for (o = a->cmd->opts; o && o->name && o->short_name != arg[1]; o++)
			;
		if (!o || !o->name) {
			ctl_usage_err(a->cmd->name, "unknown option '-%c'", arg[1]);
			return CTL_BAD;
		}
		a->opt = o;
		if (!o->arg) {
			if (arg[2])
				return ctl_usage_err(a->cmd->name, "-%c takes no value", arg[1]), CTL_BAD;
			return CTL_OPT;
		}
		if (arg[2]) {
			a->val = arg + 2;
			return CTL_OPT;
		}
	} else {			/* --name, --name=VALUE */
		eq = strchr(arg, '=');
		len = eq ? (size_t)(eq - arg) : strlen(arg);
		for (o = a->cmd->opts; o && o->name; o++)
			if (strlen(o->name) == len && !strncmp(o->name, arg, len))
				break;
		if (!o || !o->name) {
			ctl_usage_err(a->cmd->name, "unknown option '%.*s'", (int)len, arg);
			return CTL_BAD;
		}
		a->opt = o;
		if (!o->arg) {
			if (eq)
				return ctl_usage_err(a->cmd->name, "%s takes no value", o->name), CTL_BAD;
			return CTL_OPT;
		}
		if (eq) {
			a->val = eq + 1;
			return CTL_OPT;
		}
	}
	if (a->i >= a->argc) {
		ctl_usage_err(a->cmd->name, "%s needs a value (%s)", o->name, o->arg);
		return CTL_BAD;
	}
	a->val = a->argv[a->i++];
	return CTL_OPT;
}

int ctl_no_args(int argc, char **argv)
{
	struct ctl_args a;
	int r;

	ctl_args_init(&a, argc, argv);
	r = ctl_next(&a);
	if (r == CTL_BAD)
		return 2;
	if (r != CTL_END || a.i < argc)
		return ctl_usage_err(argv[0], "takes no arguments");
	return 0;
}

static void usage(FILE *f)
{
	const struct ctl_command *c;

	fprintf(f, "usage: pathtracectl COMMAND [ARGS]   (pathtracectl COMMAND --help: its options)\n"
		"       pathtracectl --version\n\ncommands:\n");
	for (c = commands; c; c = c->next) {
		synopsis(f, c, "  ");
		fprintf(f, "      %s\n", c->what);
	}
}

int main(int argc, char **argv)
{
	const struct ctl_command *c;

	if (argc < 2) {
		fprintf(stderr, "usage: pathtracectl COMMAND [ARGS] (pathtracectl --help lists them)\n");
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("pathtracectl: module ABI %u.%u, trace.bin format %u.%u\n", PT_ABI_MAJOR,
		       PT_ABI_MINOR, PT_FILE_MAJOR, PT_FILE_MINOR);
		return 0;
	}
	if (!strcmp(argv[1], "--list-commands")) {	/* for the bash completion */
		for (c = commands; c; c = c->next)
			printf("%s\n", c->name);
		return 0;
	}
	c = find(argv[1]);
	if (c)
		return c->run(argc - 1, argv + 1);
	ctl_err(argv[1], argv[1][0] == '-' ? "unknown option (pathtracectl --help)" :
		"unknown command (pathtracectl --help lists them)");
	return 2;
}
