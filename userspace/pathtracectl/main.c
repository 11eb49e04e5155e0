// SPDX-License-Identifier: GPL-2.0
/* pathtracectl - control the pathtrace kernel tracer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <pathtrace/error.h>

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

void ctl_err(const char *what, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pathtracectl: %s: ", what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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

static void usage(FILE *f)
{
	const struct ctl_command *c;

	fprintf(f, "usage: pathtracectl COMMAND [ARGS]\n\ncommands:\n");
	for (c = commands; c; c = c->next)
		fprintf(f, "  %s\n", c->usage);
}

int main(int argc, char **argv)
{
	const struct ctl_command *c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (c = commands; c; c = c->next)
		if (!strcmp(argv[1], c->name))
			return c->run(argc - 1, argv + 1);
	ctl_err(argv[1], "unknown command (see pathtracectl --help)");
	return 2;
}
