// SPDX-License-Identifier: GPL-2.0
/*
 * tcg_cost.c - what single kernel-mode instructions cost under QEMU's TCG:
 * loops of 200,000 iterations of each body, timed with ktime_get_ns(), three
 * rounds, printed per iteration. The module's init prints and fails, so
 * insmod leaves nothing loaded (README).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/module.h>

#define ITERS 200000

u64 tcg_cost_var;

#define TCG_COST_LOOP(name, body) do {						\
	u64 t0 = ktime_get_ns();						\
	for (i = 0; i < ITERS; i++)						\
		asm volatile(body ::: "rax", "rcx", "memory", "cc");		\
	pr_info("%-32s %5llu ns\n", name, (ktime_get_ns() - t0) / ITERS);	\
} while (0)

#define LOAD "mov tcg_cost_var(%%rip), %%rax;"
#define ADD "add $1, %%rax;"

static int __init tcg_cost_init(void)
{
	int i, r;

	for (r = 0; r < 3; r++) {
		TCG_COST_LOOP("empty", "");
		TCG_COST_LOOP("10 adds", ADD ADD ADD ADD ADD ADD ADD ADD ADD ADD);
		TCG_COST_LOOP("10 loads", LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD);
		TCG_COST_LOOP("pushfq; pop", "pushfq; pop %%rax");
		TCG_COST_LOOP("pushfq; popfq", "pushfq; popfq");
		TCG_COST_LOOP("pushfq; cli; popfq", "pushfq; cli; popfq");
		TCG_COST_LOOP("pushfq; cli; pop; sti", "pushfq; cli; pop %%rax; sti");
		TCG_COST_LOOP("pushfq; pop; flags back with sahf",
			      "pushfq; pop %%rax; mov %%eax, %%ecx; shr $11, %%ecx; and $1, %%ecx;"
			      "shl $8, %%eax; or %%ecx, %%eax; add $0x7f, %%al; sahf");
		TCG_COST_LOOP("lahf; seto; add; sahf", "lahf; seto %%al; add $0x7f, %%al; sahf");
		TCG_COST_LOOP("incl; decl (memory)", "incl tcg_cost_var(%%rip); decl tcg_cost_var(%%rip)");
		TCG_COST_LOOP("cmpxchg (memory)",
			      LOAD "mov %%rax, %%rcx; cmpxchg %%rcx, tcg_cost_var(%%rip)");
	}
	return -EAGAIN;
}
module_init(tcg_cost_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pathtrace experiment: kernel-mode instruction costs under TCG");
