// SPDX-License-Identifier: GPL-2.0
/* Test support: assemble at test time and describe CFGs (see cfg_asm.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "cfg_asm.h"

static char dir[64];

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cfg_asm: could not remove %s\n", dir);
}

const char *cfg_asm_dir(void)
{
	if (!dir[0]) {
		strcpy(dir, "/tmp/pt-cfgtest-XXXXXX");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			exit(1);
		}
		atexit(remove_dir);
	}
	return dir;
}

struct elfobj *cfg_asm_object(const char *name, const char *text)
{
	char src[256], obj[256], cmd[700];
	struct elfobj *o;
	FILE *f;

	snprintf(src, sizeof(src), "%s/%s.s", cfg_asm_dir(), name);
	snprintf(obj, sizeof(obj), "%s/%s.o", cfg_asm_dir(), name);
	f = fopen(src, "w");
	if (!f)
		return NULL;
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gcc -c -o %s %s", obj, src);
	if (system(cmd) != 0)
		return NULL;
	if (elfobj_open(obj, &o))
		return NULL;
	return o;
}

int cfg_asm_build(const char *text, const char *func, struct cfg *c)
{
	struct elfobj *o = cfg_asm_object(func, text);
	struct cfg_input in;
	int64_t i;
	int err;

	memset(c, 0, sizeof(*c));
	if (!o)
		return -1;
	i = elfobj_find(o, func);
	if (i < 0 || elfobj_input(o, i, &in)) {
		elfobj_close(o);
		return -1;
	}
	err = cfg_build(&in, c);
	/* Names point into the object: keep the CFG readable by dropping them. */
	for (uint32_t k = 0; k < c->ninsns; k++)
		c->insns[k].target_name = c->insns[k].target_name ?
			(strncmp(c->insns[k].target_name, "__x86_return_thunk", 18) ?
			 "named" : "__x86_return_thunk") : NULL;
	elfobj_close(o);
	return err;
}

const char *cfg_asm_describe(const struct cfg *c, char *buf, size_t n)
{
	static const char kind[] = { 'F', 'T', 'J', 'K', 'k', 'C', 'X', 'E' };
	size_t used = 0;
	uint32_t i, e;

	buf[0] = 0;
	for (i = 0; i < c->nblocks && used < n; i++) {
		const struct cfg_block *b = &c->blocks[i];

		if (b->flags & CFG_BF_COLD)
			used += snprintf(buf + used, n - used, "%sc%" PRIx64 ":", i ? "; " : "",
					 b->addr - c->cold_addr);
		else
			used += snprintf(buf + used, n - used, "%s%" PRIx64 ":", i ? "; " : "",
					 b->addr - c->addr);
		for (e = b->first_succ; e < b->first_succ + b->nsucc && used < n; e++) {
			const struct cfg_edge *ed = &c->edges[e];

			if (ed->kind == CFG_E_EXIT)
				used += snprintf(buf + used, n - used, " E%s",
						 ed->dst == c->nblocks ? "" : "?");
			else if (ed->dst == c->nblocks)
				used += snprintf(buf + used, n - used, " %cE", kind[ed->kind]);
			else
				used += snprintf(buf + used, n - used, " %c%u", kind[ed->kind],
						 ed->dst);
		}
	}
	return buf;
}
