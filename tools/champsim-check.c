// SPDX-License-Identifier: GPL-2.0
/*
 * champsim-check - reads `pathregen --format champsim` output back the way
 * ChampSim does and checks that a simulator can trust it.
 *
 *   champsim-check TRACE.BIN FILE|DIR...
 *
 * Each FILE (or every *.champsim in DIR) is one stream. Every record is
 * classified by ChampSim's rules (inc/instruction.h: a branch's type from
 * the registers it reads and writes, rsp 6, flags 25, rip 26; its target
 * is the next record's ip) and checked against the traced code it claims
 * to be, decoded from TRACE.BIN:
 *  - no record is BRANCH_OTHER; a record outside the traced code (a
 *    synthetic one, for untraced code) is a return, a direct jump or a
 *    non-branch;
 *  - a Jcc is a conditional branch whose taken flag matches the next ip
 *    (its target when taken, its fall-through when not);
 *  - a call is a call or a non-branch; an indirect call through a
 *    register (a retpoline thunk's too) reads that register, so ChampSim
 *    sees BRANCH_INDIRECT_CALL; a direct call's next record is its target;
 *  - a direct jump's next record is its target;
 *  - calls and returns balance on ChampSim's return-address stack: no
 *    return without a call, and every return lands on the instruction
 *    after its call. Calls still open when the stream ends (truncation,
 *    gaps) are counted, not errors.
 * Prints the count of each branch type per stream and in total; exit 0
 * when nothing is wrong, 1 with the first problems listed, 2 for a bad
 * command line or unreadable input.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <Zydis/Zydis.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "champsim_record.h"
#include "insn_mem.h"
#include "out.h"

#define REC CS_RECORD_SIZE
#define MAX_SHOWN 10

#define NTYPES CS_NBRANCH_TYPES

static const char *const type_names[NTYPES] = {
	"BRANCH_DIRECT_JUMP", "BRANCH_INDIRECT", "BRANCH_CONDITIONAL", "BRANCH_DIRECT_CALL",
	"BRANCH_INDIRECT_CALL", "BRANCH_RETURN", "BRANCH_OTHER", "NOT_BRANCH",
};

struct code_insn {
	uint64_t addr;
	const struct cfg_insn *in;
	const struct pr_func *f;
};

struct checker {
	struct code_insn *code;
	size_t ncode;
	ZydisDecoder dec;
	uint64_t *ras;			/* return addresses of the open calls */
	size_t depth, cap;
	uint64_t count[NTYPES], synthetic, records, open_calls, errors;
	const char *file;
};

static int cmp_code(const void *a, const void *b)
{
	const struct code_insn *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct code_insn *lookup(const struct checker *c, uint64_t ip)
{
	size_t lo = 0, hi = c->ncode;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (c->code[m].addr < ip)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < c->ncode && c->code[lo].addr == ip ? &c->code[lo] : NULL;
}

static void problem(struct checker *c, uint64_t index, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct checker *c, uint64_t index, const char *fmt, ...)
{
	va_list ap;

	if (c->errors++ >= MAX_SHOWN)
		return;
	fprintf(stderr, "champsim-check: %s: record %" PRIu64 ": ", c->file, index);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* An indirect call through a register (or a thunk for one), not through a fixed address. */
static int call_reads_register(const struct checker *c, const struct code_insn *ci)
{
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	const uint8_t *bytes = insn_bytes(ci->f, ci->in);

	if (insn_thunk_reg(ci->in->target_name))
		return 1;
	if (!bytes || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&c->dec, bytes, ci->in->len, &zi, ops)))
		return 0;
	if (ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER)
		return 1;
	return ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY &&
	       ((ops[0].mem.base != ZYDIS_REGISTER_NONE && ops[0].mem.base != ZYDIS_REGISTER_RIP) ||
		ops[0].mem.index != ZYDIS_REGISTER_NONE);
}

static int push(struct checker *c, uint64_t ret)
{
	if (c->depth == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		uint64_t *r = realloc(c->ras, cap * sizeof(*r));

		if (!r)
			return -PT_ENOMEM;
		c->ras = r;
		c->cap = cap;
	}
	c->ras[c->depth++] = ret;
	return 0;
}

/* One record r (index k) with the next one n (NULL at the end). */
static int check_one(struct checker *c, uint64_t k, const struct cs_record *r, const struct cs_record *n)
{
	const struct code_insn *ci = lookup(c, r->ip);
	enum cs_branch t = cs_record_branch(r);
	const struct cfg_insn *in = ci ? ci->in : NULL;
	uint64_t next_fall = in ? in->addr + in->len : 0;

	c->count[t]++;
	c->records++;
	if (t == CS_OTHER)
		problem(c, k, "ip %#" PRIx64 " is BRANCH_OTHER", r->ip);
	if (!ci) {
		c->synthetic++;
		if (t != CS_RETURN && t != CS_NOT_BRANCH && t != CS_DIRECT_JUMP)
			problem(c, k, "ip %#" PRIx64 " outside the traced code is %s", r->ip,
				type_names[t]);
	} else {
		switch (in->kind) {
		case CFG_I_JCC:
			if (t != CS_CONDITIONAL)
				problem(c, k, "Jcc at %#" PRIx64 " is %s", r->ip, type_names[t]);
			else if (n && n->ip != (r->branch_taken ? in->target : next_fall))
				problem(c, k, "Jcc at %#" PRIx64 " %s, but the next ip is %#" PRIx64,
					r->ip, r->branch_taken ? "taken" : "not taken", n->ip);
			break;
		case CFG_I_CALL:
		case CFG_I_CALL_NORETURN:
		case CFG_I_CALL_INDIRECT:
		case CFG_I_FENTRY:
			if (t != CS_DIRECT_CALL && t != CS_INDIRECT_CALL && t != CS_NOT_BRANCH)
				problem(c, k, "call at %#" PRIx64 " is %s", r->ip, type_names[t]);
			else if (t == CS_DIRECT_CALL && in->kind == CFG_I_CALL_INDIRECT &&
				 call_reads_register(c, ci))
				problem(c, k, "indirect call at %#" PRIx64 " reads no register", r->ip);
			else if (t == CS_INDIRECT_CALL && in->kind != CFG_I_CALL_INDIRECT)
				problem(c, k, "direct call at %#" PRIx64 " reads a register", r->ip);
			else if (t == CS_DIRECT_CALL && in->target && n && n->ip != in->target)
				problem(c, k, "call at %#" PRIx64 " to %#" PRIx64 ", next ip %#" PRIx64,
					r->ip, in->target, n->ip);
			break;
		case CFG_I_RET:
			if (t != CS_RETURN && t != CS_NOT_BRANCH)
				problem(c, k, "return at %#" PRIx64 " is %s", r->ip, type_names[t]);
			break;
		case CFG_I_JMP:
			if (t != CS_DIRECT_JUMP)
				problem(c, k, "jmp at %#" PRIx64 " is %s", r->ip, type_names[t]);
			else if (n && n->ip != in->target)
				problem(c, k, "jmp at %#" PRIx64 " to %#" PRIx64 ", next ip %#" PRIx64,
					r->ip, in->target, n->ip);
			break;
		case CFG_I_TAIL_CALL:
			if (t != CS_DIRECT_JUMP && t != CS_INDIRECT && t != CS_RETURN && t != CS_NOT_BRANCH)
				problem(c, k, "tail call at %#" PRIx64 " is %s", r->ip, type_names[t]);
			else if (t == CS_DIRECT_JUMP && in->target && n && n->ip != in->target)
				problem(c, k, "tail call at %#" PRIx64 " to %#" PRIx64 ", next ip %#"
					PRIx64, r->ip, in->target, n->ip);
			break;
		case CFG_I_KEY:
			if (t != CS_DIRECT_JUMP && t != CS_NOT_BRANCH)
				problem(c, k, "static key at %#" PRIx64 " is %s", r->ip, type_names[t]);
			break;
		default:
			if (t != CS_NOT_BRANCH)
				problem(c, k, "instruction at %#" PRIx64 " is %s", r->ip, type_names[t]);
			break;
		}
	}
	if (t == CS_DIRECT_CALL || t == CS_INDIRECT_CALL) {
		if (!ci) {
			problem(c, k, "call at %#" PRIx64 " outside the traced code", r->ip);
			return 0;
		}
		return push(c, next_fall);
	}
	if (t == CS_RETURN) {
		if (!c->depth) {
			problem(c, k, "return at %#" PRIx64 " without a call", r->ip);
			return 0;
		}
		c->depth--;
		if (n && n->ip != c->ras[c->depth])
			problem(c, k, "return at %#" PRIx64 " lands at %#" PRIx64
				", its call returns to %#" PRIx64, r->ip, n->ip, c->ras[c->depth]);
	}
	return 0;
}

static void print_counts(const char *what, const uint64_t *count, uint64_t records,
			 uint64_t synthetic, uint64_t open, uint64_t errors)
{
	unsigned int t;

	printf("%s: %" PRIu64 " records (%" PRIu64 " synthetic):", what, records, synthetic);
	for (t = 0; t < NTYPES; t++)
		printf(" %s %" PRIu64, type_names[t], count[t]);
	printf("; calls open at the end %" PRIu64 "; errors %" PRIu64 "\n", open, errors);
}

/* Checks one stream file. Returns 0, or -1 when it cannot be read. */
static int check_file(struct checker *c, const char *path, uint64_t *tot)
{
	uint8_t buf[2][REC];
	struct cs_record r[2];
	uint64_t k = 0, before[NTYPES], recs0 = c->records, syn0 = c->synthetic, err0 = c->errors;
	FILE *fp = fopen(path, "rb");
	size_t got;
	int have, cur = 0, t;

	if (!fp) {
		fprintf(stderr, "champsim-check: %s: %s\n", path, strerror(errno));
		return -1;
	}
	c->file = path;
	c->depth = 0;
	memcpy(before, c->count, sizeof(before));
	have = fread(buf[cur], REC, 1, fp) == 1;
	if (have)
		cs_record_decode(buf[cur], &r[cur]);
	while (have) {
		int nx = !cur;

		got = fread(buf[nx], REC, 1, fp);
		if (got == 1)
			cs_record_decode(buf[nx], &r[nx]);
		if (check_one(c, k++, &r[cur], got == 1 ? &r[nx] : NULL)) {
			fclose(fp);
			return -1;
		}
		have = got == 1;
		cur = nx;
	}
	if (ferror(fp) || ftell(fp) % REC) {
		fprintf(stderr, "champsim-check: %s: %s\n", path,
			ferror(fp) ? strerror(errno) : "not a whole number of 64-byte records");
		fclose(fp);
		return -1;
	}
	fclose(fp);
	c->open_calls += c->depth;
	for (t = 0; t < NTYPES; t++) {
		before[t] = c->count[t] - before[t];
		tot[t] += before[t];
	}
	print_counts(path, before, c->records - recs0, c->synthetic - syn0, c->depth,
		     c->errors - err0);
	return 0;
}

static int is_champsim(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 9 && !strcmp(d->d_name + n - 9, ".champsim");
}

static int check_path(struct checker *c, const char *path, uint64_t *tot)
{
	struct dirent **list;
	struct stat sb;
	int n, i, bad = 0;

	if (stat(path, &sb) || !S_ISDIR(sb.st_mode))
		return check_file(c, path, tot);
	n = scandir(path, &list, is_champsim, alphasort);
	if (n < 0) {
		fprintf(stderr, "champsim-check: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!n)
		fprintf(stderr, "champsim-check: %s: no *.champsim file\n", path);
	for (i = 0; i < n; i++) {
		char file[4096];

		snprintf(file, sizeof(file), "%s/%s", path, list[i]->d_name);
		bad |= check_file(c, file, tot);
		free(list[i]);
	}
	free(list);
	return n ? bad : -1;
}

static int build_code(struct checker *c, const struct pr_model *m)
{
	uint32_t i, j;
	size_t n = 0;

	for (i = 0; i < m->nfuncs; i++)
		n += m->funcs[i].cfg.ninsns;
	c->code = calloc(n + 1, sizeof(*c->code));
	if (!c->code)
		return -PT_ENOMEM;
	for (i = 0; i < m->nfuncs; i++)
		for (j = 0; j < m->funcs[i].cfg.ninsns; j++)
			c->code[c->ncode++] = (struct code_insn){
				.addr = m->funcs[i].cfg.insns[j].addr,
				.in = &m->funcs[i].cfg.insns[j],
				.f = &m->funcs[i],
			};
	qsort(c->code, c->ncode, sizeof(*c->code), cmp_code);
	return 0;
}

int main(int argc, char **argv)
{
	struct checker c = { 0 };
	struct tracefile tf;
	struct pr_model m = { 0 };
	uint64_t tot[NTYPES] = { 0 };
	int i, bad = 0, err;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return puts("usage: champsim-check TRACE.BIN FILE|DIR..."), 0;
	if (argc < 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: champsim-check TRACE.BIN FILE|DIR...\n");
		return 2;
	}
	memset(&tf, 0, sizeof(tf));
	err = tracefile_read(argv[1], &tf);
	if (err) {
		fprintf(stderr, "champsim-check: %s: %s\n", argv[1],
			err == -PT_EIO ? strerror(errno) : pt_strerror(err));
		tracefile_free(&tf);
		return 2;
	}
	if (pr_model_load(&tf, &m, NULL, NULL) < 0 || build_code(&c, &m)) {
		fprintf(stderr, "champsim-check: %s: cannot load its functions\n", argv[1]);
		bad = -1;
		goto out;
	}
	ZydisDecoderInit(&c.dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (i = 2; i < argc; i++)
		bad |= check_path(&c, argv[i], tot);
	if (!bad)
		print_counts("total", tot, c.records, c.synthetic, c.open_calls, c.errors);
	if (c.errors > MAX_SHOWN)
		fprintf(stderr, "champsim-check: %" PRIu64 " more problems not shown\n",
			c.errors - MAX_SHOWN);
out:
	free(c.code);
	free(c.ras);
	pr_model_free(&m);
	tracefile_free(&tf);
	if (bad)
		return 2;
	return c.errors ? 1 : 0;
}
