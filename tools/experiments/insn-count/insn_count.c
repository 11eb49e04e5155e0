// SPDX-License-Identifier: GPL-2.0
/*
 * insn_count.c - a QEMU TCG plugin (QEMU 7.2's plugin API, version 1):
 * counts every guest instruction executed at each address of the kernel's
 * module space, and all instructions in kernel and user mode, and writes
 * them at exit: "insn ADDR COUNT" lines, then "total kernel N user N".
 * Each time user code executes the marker instruction (mark.c: a long
 * nop no compiler emits) it also takes the totals then, written at exit
 * as "mark N kernel N user N module N" lines: the instructions of a
 * phase of the guest's are the difference of two marks.
 *
 *   gcc -shared -fPIC -O2 -o insn_count.so insn_count.c
 *   qemu-system-x86_64 ... -plugin ./insn_count.so,out=FILE
 *
 * The declarations below are the few of QEMU's qemu-plugin.h it uses
 * (Debian ships no header; the API is QEMU's documented one).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
						enum qemu_plugin_op op, void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_mem_inline(struct qemu_plugin_insn *insn,
					  enum qemu_plugin_mem_rw rw, enum qemu_plugin_op op,
					  void *ptr, uint64_t imm);
typedef uint32_t qemu_plugin_meminfo_t;
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
					  uint64_t vaddr, void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
				      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw,
				      void *userdata);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MOD_LO 0xffffffffc0000000ull	/* MODULES_VADDR with KASLR on */
#define MOD_HI 0xffffffffff000000ull
#define SLOTS (1u << 22)	/* open addressing, addresses of module code */

struct slot {
	uint64_t addr;
	uint64_t count;
};

/* nopl 0x50544d4b(%rax): "KMTP" */
static const unsigned char mark_insn[] = { 0x0f, 0x1f, 0x80, 0x4b, 0x4d, 0x54, 0x50 };
#define MARKS 64

static struct slot *slots;
static uint64_t kernel_insns, user_insns, module_insns;
static uint64_t marks[MARKS][3];
static uint64_t cost[32];
static uint64_t cost_marks[MARKS][32];

/*
 * What a kernel instruction costs under TCG beyond being one: translation
 * blocks entered, memory accesses (each a soft-TLB probe), returns and
 * indirect branches (each a lookup of the next block), and popf, sti and
 * iret (each ends its block and goes back to the main loop).
 */
enum { K_TB, K_MEM, K_RET, K_IND, K_POPF, K_STI, K_IRET, K_PUSHF, K_CLI, K_CR3,
       K_DMISS256, K_DMISS1K, K_PAGEJMP, K_IMISS256, K_KTRANS, K_UTRANS, K_HLT, K_COST };
static const char *const cost_name[K_COST] = {
	"tbs", "mem", "ret", "indirect", "popf", "sti", "iret", "pushf", "cli", "cr3",
	"dmiss256", "dmiss1k", "pagejmp", "imiss256", "ktrans", "utrans", "hlt"
};

/*
 * A model of QEMU's soft TLB for the kernel's accesses: direct-mapped by
 * virtual page, flushed at each write of CR3 (QEMU flushes it whole then).
 */
#define VCPUS 8
static uint64_t tlb256[VCPUS][256], tlb1k[VCPUS][1024], itlb[VCPUS][256];
static uint64_t last_tb_page[VCPUS];

static void tlb_flush_cb(unsigned int vcpu, void *p)
{
	(void)p;
	vcpu %= VCPUS;
	memset(tlb256[vcpu], 0, sizeof(tlb256[vcpu]));
	memset(tlb1k[vcpu], 0, sizeof(tlb1k[vcpu]));
	memset(itlb[vcpu], 0, sizeof(itlb[vcpu]));
	__atomic_add_fetch(&cost[K_CR3], 1, __ATOMIC_RELAXED);
}

static void mem_cb(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t va, void *p)
{
	uint64_t page = (va >> 12) | 1;

	(void)info;
	(void)p;
	vcpu %= VCPUS;
	if (tlb256[vcpu][page & 255] != page) {
		tlb256[vcpu][page & 255] = page;
		cost[K_DMISS256]++;
	}
	if (tlb1k[vcpu][page & 1023] != page) {
		tlb1k[vcpu][page & 1023] = page;
		cost[K_DMISS1K]++;
	}
}

static void tb_cb(unsigned int vcpu, void *p)
{
	uint64_t page = ((uint64_t)(uintptr_t)p >> 12) | 1;

	vcpu %= VCPUS;
	if (last_tb_page[vcpu] != page) {
		last_tb_page[vcpu] = page;
		cost[K_PAGEJMP]++;
		if (itlb[vcpu][page & 255] != page) {
			itlb[vcpu][page & 255] = page;
			cost[K_IMISS256]++;
		}
	}
}

/* The kind of a kernel instruction by its opcode, or K_COST for none above. */
static int insn_kind(const unsigned char *b, size_t n)
{
	size_t i = 0;

	while (i < n && ((b[i] >= 0x40 && b[i] <= 0x4f) || b[i] == 0x66 || b[i] == 0xf2 ||
			 b[i] == 0xf3 || b[i] == 0x2e || b[i] == 0x3e || b[i] == 0x26 ||
			 b[i] == 0x64 || b[i] == 0x65 || b[i] == 0x36))
		i++;
	if (i >= n)
		return K_COST;
	switch (b[i]) {
	case 0xc3: case 0xc2: return K_RET;
	case 0x9d: return K_POPF;
	case 0xfb: return K_STI;
	case 0xcf: return K_IRET;
	case 0x9c: return K_PUSHF;
	case 0xf4: return K_HLT;
	case 0xfa: return K_CLI;
	case 0xff:
		if (i + 1 < n && (((b[i + 1] >> 3) & 7) == 2 || ((b[i + 1] >> 3) & 7) == 4))
			return K_IND;
		return K_COST;
	}
	return K_COST;
}
static unsigned int nmarks;
static const char *out_path = "insn_count.out";
static int detail;	/* detail=1: the soft-TLB model too (slower) */

static struct slot *slot_of(uint64_t addr)
{
	uint64_t i = (addr * 0x9e3779b97f4a7c15ull) >> 42;

	while (slots[i].addr && slots[i].addr != addr)
		i = (i + 1) & (SLOTS - 1);
	slots[i].addr = addr;
	return &slots[i];
}

/* The marker executed: the totals now (the marker's block counted whole). */
static void mark_hit(unsigned int vcpu, void *p)
{
	(void)vcpu;
	(void)p;
	if (nmarks == MARKS)
		return;
	marks[nmarks][0] = kernel_insns;
	marks[nmarks][1] = user_insns;
	marks[nmarks][2] = module_insns;
	memcpy(cost_marks[nmarks], cost, sizeof(cost));
	nmarks++;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	uint64_t va = qemu_plugin_tb_vaddr(tb);

	(void)id;
	cost[va >> 63 ? K_KTRANS : K_UTRANS]++;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 va >> 63 ? &kernel_insns : &user_insns, n);
	if (va >> 63) {
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &cost[K_TB], 1);
		if (detail)
			qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_cb, QEMU_PLUGIN_CB_NO_REGS,
							     (void *)(uintptr_t)va);
		for (i = 0; i < n; i++) {
			struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
			int k = insn_kind(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));

			const unsigned char *b = qemu_plugin_insn_data(insn);

			qemu_plugin_register_vcpu_mem_inline(insn, QEMU_PLUGIN_MEM_RW,
							     QEMU_PLUGIN_INLINE_ADD_U64,
							     &cost[K_MEM], 1);
			if (detail)
				qemu_plugin_register_vcpu_mem_cb(insn, mem_cb, QEMU_PLUGIN_CB_NO_REGS,
								 QEMU_PLUGIN_MEM_RW, NULL);
			if (detail && qemu_plugin_insn_size(insn) >= 3 && b[0] == 0x0f &&
			    b[1] == 0x22 && ((b[2] >> 3) & 7) == 3)
				qemu_plugin_register_vcpu_insn_exec_cb(insn, tlb_flush_cb,
								       QEMU_PLUGIN_CB_NO_REGS, NULL);
			if (k != K_COST)
				qemu_plugin_register_vcpu_insn_exec_inline(insn,
						QEMU_PLUGIN_INLINE_ADD_U64, &cost[k], 1);
		}
	}
	for (i = 0; !(va >> 63) && i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (qemu_plugin_insn_size(insn) == sizeof(mark_insn) &&
		    !memcmp(qemu_plugin_insn_data(insn), mark_insn, sizeof(mark_insn)))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_hit,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
	if (va < MOD_LO || va >= MOD_HI)
		return;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &module_insns, n);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
				&slot_of(qemu_plugin_insn_vaddr(insn))->count, 1);
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	FILE *f = fopen(out_path, "w");
	uint32_t i;

	(void)id;
	(void)p;
	if (!f)
		return;
	for (i = 0; i < SLOTS; i++)
		if (slots[i].addr && slots[i].count)
			fprintf(f, "insn %" PRIx64 " %" PRIu64 "\n", slots[i].addr, slots[i].count);
	for (i = 0; i < nmarks; i++)
		fprintf(f, "mark %u kernel %" PRIu64 " user %" PRIu64 " module %" PRIu64 "\n", i,
			marks[i][0], marks[i][1], marks[i][2]);
	for (i = 0; i < nmarks; i++) {
		int k;

		fprintf(f, "cost %u", i);
		for (k = 0; k < K_COST; k++)
			fprintf(f, " %s %" PRIu64, cost_name[k], cost_marks[i][k]);
		fprintf(f, "\n");
	}
	fprintf(f, "total kernel %" PRIu64 " user %" PRIu64 "\n", kernel_insns, user_insns);
	fclose(f);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
							       const void *info, int argc,
							       char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
		else if (!strcmp(argv[i], "detail=1"))
			detail = 1;
	slots = calloc(SLOTS, sizeof(*slots));
	if (!slots)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
