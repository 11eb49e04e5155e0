// SPDX-License-Identifier: GPL-2.0
/*
 * CFG recovery over every function of large Debian modules, checked by
 * invariants that do not depend on how recovery works:
 *  - blocks cover every instruction exactly once, in order, contiguously;
 *  - every instruction decodes (Zydis, independently) to its recorded length;
 *  - every internal branch, key and fixup target starts a block;
 *  - every edge joins two blocks of the function or goes to EXIT, and
 *    each block's successors match its last instruction's kind;
 *  - every block reaches EXIT or a cycle (no dead end), and is reachable;
 *  - every refusal carries a reason and a detail.
 * Missing modules (another kernel installed) are skipped with a note.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include <pathtrace/cfg.h>
#include <pathtrace/elfobj.h>
#include <pathtrace/error.h>

#include "unit.h"

static const char *const modules[] = {
	"fs/ext4/ext4.ko", "fs/btrfs/btrfs.ko", "fs/xfs/xfs.ko", "net/netfilter/nf_tables.ko",
};

static ZydisDecoder dec;
static unsigned long violations;

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond)) {                                            \
			if (violations++ < 10) {                          \
				fprintf(stderr, "\n  %s: ", c->name);     \
				fprintf(stderr, __VA_ARGS__);             \
			}                                                 \
			return;                                           \
		}                                                         \
	} while (0)

static int in_fn(const struct cfg *c, uint64_t a)
{
	return (a >= c->addr && a - c->addr < c->len) ||
	       (c->cold_len && a >= c->cold_addr && a - c->cold_addr < c->cold_len);
}

static const uint8_t *code_of(const struct cfg_input *in, uint64_t a)
{
	if (a >= in->addr && a - in->addr < in->len)
		return in->code + (a - in->addr);
	return in->cold_code + (a - in->cold_addr);
}

static uint32_t remaining(const struct cfg_input *in, uint64_t a)
{
	if (a >= in->addr && a - in->addr < in->len)
		return in->len - (a - in->addr);
	return in->cold_len - (a - in->cold_addr);
}

static void check(const struct cfg_input *in, const struct cfg *c)
{
	uint32_t i, b, e, nb = c->nblocks;
	uint8_t *reach;
	uint32_t *stack, sp;

	CHECK(nb > 0 && c->blocks[0].addr == c->addr, "block 0 is not the entry\n");
	/* Cover: blocks partition insns[] in order, and each block is contiguous. */
	for (b = 0, i = 0; b < nb; b++) {
		const struct cfg_block *bl = &c->blocks[b];
		uint64_t a = bl->addr;
		uint32_t k;

		CHECK(bl->first_insn == i && bl->ninsn > 0, "block %u does not follow\n", b);
		for (k = 0; k < bl->ninsn; k++, i++) {
			const struct cfg_insn *ins = &c->insns[i];
			ZydisDecodedInstruction zi;
			ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

			CHECK(ins->addr == a && ins->block == b && in_fn(c, a),
			      "insn %u not where block %u says\n", i, b);
			CHECK(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code_of(in, a),
								  remaining(in, a), &zi, ops)) &&
			      zi.length == ins->len, "insn at 0x%lx length\n", (unsigned long)a);
			a += ins->len;
		}
		CHECK(a - bl->addr == bl->size, "block %u size\n", b);
		CHECK(!(b && (bl->flags & CFG_BF_COLD) < (c->blocks[b - 1].flags & CFG_BF_COLD)),
		      "cold run not last\n");
		CHECK(!b || (bl->flags & CFG_BF_COLD) != (c->blocks[b - 1].flags & CFG_BF_COLD) ||
		      bl->addr >= c->blocks[b - 1].addr + c->blocks[b - 1].size,
		      "blocks overlap or unsorted at %u\n", b);
	}
	CHECK(i == c->ninsns, "blocks do not cover all %u insns\n", c->ninsns);
	/* Targets start blocks; edges well formed and consistent with the kind. */
	for (i = 0; i < c->ninsns; i++) {
		const struct cfg_insn *ins = &c->insns[i];
		int branch = ins->kind == CFG_I_JCC || ins->kind == CFG_I_JMP ||
			     ins->kind == CFG_I_KEY || (ins->flags & CFG_IF_FAULT_FIXUP);

		if (branch && !(ins->flags & CFG_IF_LEAVES)) {
			uint32_t t = cfg_block_at(c, ins->target);

			CHECK(t != UINT32_MAX && c->blocks[t].addr == ins->target,
			      "target 0x%lx does not start a block\n", (unsigned long)ins->target);
		}
	}
	for (b = 0; b < nb; b++) {
		const struct cfg_block *bl = &c->blocks[b];
		const struct cfg_insn *last = &c->insns[bl->first_insn + bl->ninsn - 1];
		uint32_t want = 1;

		if (last->kind == CFG_I_JCC || last->kind == CFG_I_KEY ||
		    (last->flags & CFG_IF_FAULT_FIXUP))
			want = 2;
		CHECK(bl->nsucc == want, "block %u has %u successors, want %u\n", b, bl->nsucc,
		      want);
		for (e = bl->first_succ; e < bl->first_succ + bl->nsucc; e++) {
			const struct cfg_edge *ed = &c->edges[e];

			CHECK(e < c->nedges && ed->src == b && ed->dst <= nb, "edge %u bad\n", e);
			CHECK((ed->kind == CFG_E_EXIT) == (ed->dst == nb) ||
			      (ed->kind == CFG_E_TAKEN && (last->flags & CFG_IF_LEAVES)),
			      "edge %u kind/exit mismatch\n", e);
			if (ed->kind == CFG_E_FALL || ed->kind == CFG_E_KEY_FALL ||
			    ed->kind == CFG_E_CALL_RETURN)
				CHECK(ed->dst < nb && c->blocks[ed->dst].addr == last->addr + last->len,
				      "fall edge %u does not go to the next insn\n", e);
		}
	}
	/*
	 * Every block has a successor (checked above), so every block reaches
	 * EXIT or a cycle; check each is reachable from the entry.
	 */
	reach = calloc(nb + 1, 1);
	stack = malloc((nb + 1) * sizeof(*stack));
	if (!reach || !stack)
		abort();
	sp = 0;
	stack[sp++] = 0;
	reach[0] = 1;
	while (sp) {
		b = stack[--sp];
		if (b == nb)
			continue;
		for (e = c->blocks[b].first_succ; e < c->blocks[b].first_succ + c->blocks[b].nsucc; e++)
			if (!reach[c->edges[e].dst]) {
				reach[c->edges[e].dst] = 1;
				stack[sp++] = c->edges[e].dst;
			}
	}
	for (b = 0; b < nb; b++)
		if (!reach[b])
			break;
	free(stack);
	free(reach);
	CHECK(b == nb, "block %u unreachable from entry\n", b);
}

static void test_corpus(void)
{
	struct utsname u;
	char path[512];
	unsigned long funcs = 0, ok = 0, refused = 0, blocks = 0;
	struct { const char *tag; unsigned long n; } why[32];
	unsigned int nwhy = 0, m, k;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	uname(&u);
	for (m = 0; m < sizeof(modules) / sizeof(modules[0]); m++) {
		struct elfobj *o;
		uint32_t i;

		/* as installed: plain or compressed (elfobj reads both) */
		if (!unit_module_file(modules[m], path, sizeof(path)))
			snprintf(path, sizeof(path), "/lib/modules/%s/kernel/%s", u.release,
				 modules[m]);
		if (access(path, R_OK)) {
			fprintf(stderr, "\n  corpus: %s not installed, skipped", modules[m]);
			continue;
		}
		CU_ASSERT_EQUAL_FATAL(elfobj_open(path, &o), 0);
		for (i = 0; i < elfobj_nfuncs(o); i++) {
			struct cfg_input in;
			struct cfg c;
			int err;

			if (elfobj_func(o, i)->parent != ELFOBJ_NONE)
				continue;
			CU_ASSERT_EQUAL_FATAL(elfobj_input(o, i, &in), 0);
			funcs++;
			err = cfg_build(&in, &c);
			if (!err) {
				ok++;
				blocks += c.nblocks;
				check(&in, &c);
			} else {
				CU_ASSERT_EQUAL(err, -PT_EREFUSED);
				CU_ASSERT(c.refusal && c.refusal[0] && c.detail[0]);
				refused++;
				for (k = 0; k < nwhy && strcmp(why[k].tag, c.refusal); k++)
					;
				if (k == nwhy && nwhy < 32)
					why[nwhy++] = (typeof(why[0])){ c.refusal, 0 };
				if (k < 32)
					why[k].n++;
			}
			cfg_free(&c);
		}
		elfobj_close(o);
	}
	fprintf(stderr, "\n  corpus: %lu functions, %lu recovered (%lu blocks), %lu refused",
		funcs, ok, blocks, refused);
	for (k = 0; k < nwhy; k++)
		fprintf(stderr, "%s %s=%lu", k ? "," : ":", why[k].tag, why[k].n);
	fprintf(stderr, "; %lu invariant violations\n", violations);
	CU_ASSERT_EQUAL(violations, 0);
	/* The corpus is installed by tools/install-deps: a run that read none proves nothing. */
	CU_ASSERT(funcs > 0);
	CU_ASSERT(refused * 100 < funcs);	/* under 1% refused */
}

UNIT_SUITE(cfg_corpus, { "every function of ext4, btrfs, xfs, nf_tables", test_corpus })
