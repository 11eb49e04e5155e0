// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "plan_fixture.h"

void fx_cfg(struct cfg *c, const char *name, uint64_t addr, uint32_t len, uint64_t cold_addr,
	    uint32_t cold_len, const struct fx_insn *in, uint32_t nin, const struct fx_edge *e,
	    uint32_t ne, uint32_t call_mask)
{
	uint32_t i, nb = 0;

	memset(c, 0, sizeof(*c));
	c->name = strdup(name);
	c->addr = addr;
	c->len = len;
	c->cold_addr = cold_addr;
	c->cold_len = cold_len;
	for (i = 0; i < nin; i++)
		if (in[i].block + 1 > nb)
			nb = in[i].block + 1;
	c->nblocks = nb;
	c->ninsns = nin;
	c->nedges = ne;
	c->blocks = calloc(nb, sizeof(*c->blocks));
	c->insns = calloc(nin, sizeof(*c->insns));
	c->edges = calloc(ne, sizeof(*c->edges));
	for (i = 0; i < nin; i++) {
		struct cfg_insn *x = &c->insns[i];
		struct cfg_block *b = &c->blocks[in[i].block];

		x->addr = in[i].addr;
		x->len = in[i].len;
		x->kind = in[i].kind;
		x->cc = in[i].cc;
		x->flags = in[i].flags;
		x->block = in[i].block;
		if (!b->ninsn) {
			b->addr = x->addr;
			b->first_insn = i;
		}
		b->ninsn++;
		b->size += x->len;
	}
	for (i = 0; i < nb; i++) {
		c->blocks[i].first_succ = UINT32_MAX;
		if (call_mask >> i & 1)
			c->blocks[i].flags |= CFG_BF_CALL;
		if (cold_addr && c->blocks[i].addr >= cold_addr)
			c->blocks[i].flags |= CFG_BF_COLD;
	}
	c->blocks[0].flags |= CFG_BF_ENTRY;
	for (i = 0; i < ne; i++) {
		struct cfg_block *b = &c->blocks[e[i].src];

		c->edges[i].src = e[i].src;
		c->edges[i].dst = e[i].dst;
		c->edges[i].kind = e[i].kind;
		if (b->first_succ == UINT32_MAX)
			b->first_succ = i;
		b->nsucc++;
	}
	for (i = 0; i < nb; i++)
		if (c->blocks[i].first_succ == UINT32_MAX)
			c->blocks[i].first_succ = 0;
}

void fx_cfg_free(struct cfg *c)
{
	free(c->name);
	free(c->blocks);
	free(c->insns);
	free(c->edges);
	memset(c, 0, sizeof(*c));
}

#define T CFG_IF_BRANCH_TARGET

void fx_call_diamond(struct cfg *c)
{
	static const struct fx_insn in[] = {
		{ 0x1000, 5, CFG_I_FENTRY, 0, 0, 0 },
		{ 0x1005, 3, CFG_I_PLAIN, 0, 0, 0 },
		{ 0x1008, 3, CFG_I_PLAIN, 0, 0, 0 },
		{ 0x100b, 2, CFG_I_JCC, 4, 0, 0 },
		{ 0x100d, 4, CFG_I_PLAIN, 0, 0, 1 },
		{ 0x1011, 3, CFG_I_PLAIN, 0, 0, 1 },
		{ 0x1014, 5, CFG_I_CALL, 0, 0, 1 },
		{ 0x1019, 4, CFG_I_PLAIN, 0, T, 2 },
		{ 0x101d, 4, CFG_I_PLAIN, 0, 0, 2 },
		{ 0x1021, 1, CFG_I_RET, 0, 0, 2 },
	};
	static const struct fx_edge e[] = {
		{ 0, 2, CFG_E_TAKEN }, { 0, 1, CFG_E_FALL }, { 1, 2, CFG_E_CALL_RETURN },
		{ 2, 3, CFG_E_EXIT },
	};

	fx_cfg(c, "call_diamond", 0x1000, 0x22, 0, 0, in, 10, e, 4, 1u << 1);
}

void fx_static_call_block(struct cfg *c)
{
	static const struct fx_insn in[] = {
		{ 0x1000, 5, CFG_I_FENTRY, 0, 0, 0 },
		{ 0x1005, 3, CFG_I_PLAIN, 0, 0, 0 },
		{ 0x1008, 3, CFG_I_PLAIN, 0, 0, 0 },
		{ 0x100b, 2, CFG_I_JCC, 4, 0, 0 },
		{ 0x100d, 5, CFG_I_CALL, 0, CFG_IF_STATIC_CALL, 1 },
		{ 0x1012, 4, CFG_I_PLAIN, 0, T, 2 },
		{ 0x1016, 4, CFG_I_PLAIN, 0, 0, 2 },
		{ 0x101a, 1, CFG_I_RET, 0, 0, 2 },
	};
	static const struct fx_edge e[] = {
		{ 0, 2, CFG_E_TAKEN }, { 0, 1, CFG_E_FALL }, { 1, 2, CFG_E_CALL_RETURN },
		{ 2, 3, CFG_E_EXIT },
	};

	fx_cfg(c, "static_call_block", 0x1000, 0x1b, 0, 0, in, 8, e, 4, 1u << 1);
}

void fx_loop_cold(struct cfg *c)
{
	static const struct fx_insn in[] = {
		{ 0x2000, 5, CFG_I_FENTRY, 0, 0, 0 },
		{ 0x2005, 3, CFG_I_PLAIN, 0, 0, 0 },
		{ 0x2008, 4, CFG_I_PLAIN, 0, T, 1 },
		{ 0x200c, 3, CFG_I_PLAIN, 0, 0, 1 },
		{ 0x200f, 2, CFG_I_JCC, 5, 0, 1 },
		{ 0x2011, 3, CFG_I_PLAIN, 0, 0, 2 },
		{ 0x2014, 3, CFG_I_PLAIN, 0, 0, 2 },
		{ 0x2017, 2, CFG_I_JCC, 0xc, 0, 2 },
		{ 0x2019, 4, CFG_I_PLAIN, 0, T, 3 },
		{ 0x201d, 1, CFG_I_RET, 0, 0, 3 },
		{ 0x3000, 4, CFG_I_PLAIN, 0, T, 4 },
		{ 0x3004, 5, CFG_I_JMP, 0, 0, 4 },
	};
	static const struct fx_edge e[] = {
		{ 0, 1, CFG_E_FALL }, { 1, 4, CFG_E_TAKEN }, { 1, 2, CFG_E_FALL },
		{ 2, 1, CFG_E_TAKEN }, { 2, 3, CFG_E_FALL }, { 3, 5, CFG_E_EXIT },
		{ 4, 3, CFG_E_JUMP },
	};

	fx_cfg(c, "loop_cold", 0x2000, 0x1e, 0x3000, 9, in, 12, e, 7, 0);
}

void fx_bug_exit(struct cfg *c)
{
	static const struct fx_insn in[] = {
		{ 0x4000, 5, CFG_I_FENTRY, 0, 0, 0 },
		{ 0x4005, 3, CFG_I_PLAIN, 0, 0, 0 },
		{ 0x4008, 2, CFG_I_JCC, 4, 0, 0 },
		{ 0x400a, 4, CFG_I_PLAIN, 0, 0, 1 },
		{ 0x400e, 1, CFG_I_RET, 0, 0, 1 },
		{ 0x400f, 2, CFG_I_BUG, 0, T, 2 },
	};
	static const struct fx_edge e[] = {
		{ 0, 2, CFG_E_TAKEN }, { 0, 1, CFG_E_FALL }, { 1, 3, CFG_E_EXIT },
		{ 2, 3, CFG_E_EXIT },
	};

	fx_cfg(c, "bug_exit", 0x4000, 0x11, 0, 0, in, 6, e, 4, 0);
}

void fx_call_chain(struct cfg *c)
{
	static const struct fx_insn in[] = {
		{ 0x5000, 5, CFG_I_FENTRY, 0, 0, 0 },
		{ 0x5005, 3, CFG_I_PLAIN, 0, 0, 0 },
		{ 0x5008, 2, CFG_I_JCC, 4, 0, 0 },
		{ 0x500a, 3, CFG_I_PLAIN, 0, 0, 1 },
		{ 0x500d, 5, CFG_I_CALL, 0, 0, 1 },
		{ 0x5012, 4, CFG_I_PLAIN, 0, T, 2 },
		{ 0x5016, 5, CFG_I_CALL, 0, 0, 2 },
		{ 0x501b, 3, CFG_I_PLAIN, 0, 0, 3 },
		{ 0x501e, 1, CFG_I_RET, 0, 0, 3 },
	};
	static const struct fx_edge e[] = {
		{ 0, 2, CFG_E_TAKEN }, { 0, 1, CFG_E_FALL }, { 1, 2, CFG_E_CALL_RETURN },
		{ 2, 3, CFG_E_CALL_RETURN }, { 3, 4, CFG_E_EXIT },
	};

	fx_cfg(c, "call_chain", 0x5000, 0x1f, 0, 0, in, 9, e, 5, (1u << 1) | (1u << 2));
}

void fx_key_critical(struct cfg *c)
{
	static const struct fx_insn in[] = {
		{ 0x6000, 5, CFG_I_FENTRY, 0, 0, 0 },
		{ 0x6005, 3, CFG_I_PLAIN, 0, 0, 0 },
		{ 0x6008, 5, CFG_I_KEY, 0, 0, 0 },
		{ 0x600d, 4, CFG_I_PLAIN, 0, 0, 1 },
		{ 0x6011, 3, CFG_I_PLAIN, 0, 0, 1 },
		{ 0x6014, 4, CFG_I_PLAIN, 0, T, 2 },
		{ 0x6018, 3, CFG_I_PLAIN, 0, 0, 2 },
		{ 0x601b, 5, CFG_I_CALL, 0, 0, 3 },
		{ 0x6020, 3, CFG_I_PLAIN, 0, 0, 4 },
		{ 0x6023, 1, CFG_I_RET, 0, 0, 4 },
	};
	static const struct fx_edge e[] = {
		{ 0, 1, CFG_E_KEY_FALL }, { 0, 2, CFG_E_KEY_JUMP }, { 1, 2, CFG_E_FALL },
		{ 2, 3, CFG_E_FALL }, { 3, 4, CFG_E_CALL_RETURN }, { 4, 5, CFG_E_EXIT },
	};

	fx_cfg(c, "key_critical", 0x6000, 0x24, 0, 0, in, 10, e, 6, 1u << 3);
}

void fx_call_bug(struct cfg *c)
{
	static const struct fx_insn in[] = {
		{ 0x7000, 5, CFG_I_FENTRY, 0, 0, 0 },
		{ 0x7005, 3, CFG_I_PLAIN, 0, 0, 0 },
		{ 0x7008, 2, CFG_I_JCC, 4, 0, 0 },
		{ 0x700a, 3, CFG_I_PLAIN, 0, 0, 1 },
		{ 0x700d, 5, CFG_I_CALL, 0, 0, 1 },
		{ 0x7012, 2, CFG_I_BUG, 0, 0, 2 },
		{ 0x7014, 4, CFG_I_PLAIN, 0, T, 3 },
		{ 0x7018, 1, CFG_I_RET, 0, 0, 3 },
	};
	static const struct fx_edge e[] = {
		{ 0, 3, CFG_E_TAKEN }, { 0, 1, CFG_E_FALL }, { 1, 2, CFG_E_CALL_RETURN },
		{ 2, 4, CFG_E_EXIT }, { 3, 4, CFG_E_EXIT },
	};

	fx_cfg(c, "call_bug", 0x7000, 0x19, 0, 0, in, 8, e, 5, 1u << 1);
}

static void put_bits(struct fx_run *r, uint64_t v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++, r->nbits++) {
		if (r->nbits >= 64 * 64) {
			r->bad = 1;
			return;
		}
		if (v >> i & 1)
			r->bits[r->nbits / 64] |= 1ull << (r->nbits % 64);
	}
}

static const struct pt_site *site_at(const struct cfg *c, const struct pt_plan *h,
				     const struct pt_site *sites, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < h->nr_sites; i++) {
		uint64_t base = sites[i].region == PT_REGION_COLD ? c->cold_addr : c->addr;

		if (base + sites[i].offset == addr)
			return &sites[i];
	}
	return NULL;
}

/* The word of code in context row, or NULL. */
static const struct pt_ctx_word *ctx_word(const struct pt_plan *h, const struct pt_ctx_word *w,
					  uint32_t row, uint32_t code)
{
	uint32_t i;

	for (i = 0; row != PT_CTX_NONE && i < h->nr_ctx_words; i++)
		if (w[i].row == row && w[i].code == code)
			return &w[i];
	return NULL;
}

void fx_execute(const struct cfg *c, const struct pt_plan *h, const struct pt_site *sites,
		const struct pt_action *actions, const uint32_t *ctx_next,
		const struct pt_ctx_word *ctx_words, const uint32_t *edges, uint32_t n,
		struct fx_run *run)
{
	uint32_t row = PT_CTX_NONE;
	const struct pt_ctx_word *cw;
	uint32_t b = 0, k, i;

	memset(run, 0, sizeof(*run));
	for (k = 0; k < n; k++) {
		const struct cfg_block *bl = &c->blocks[b];
		const struct cfg_edge *ce = &c->edges[edges[k]];

		if (ce->src != b) {
			run->bad = 1;
			return;
		}
		for (i = bl->first_insn; i < bl->first_insn + bl->ninsn; i++) {
			const struct pt_site *s = site_at(c, h, sites, c->insns[i].addr);
			uint32_t a;

			if (!s)
				continue;
			for (a = s->first_action; a < s->first_action + s->nr_actions; a++) {
				const struct pt_action *x = &actions[a];

				if (x->when == PT_WHEN_TAKEN && ce->kind != CFG_E_TAKEN)
					continue;
				if (x->when == PT_WHEN_NOT_TAKEN && ce->kind == CFG_E_TAKEN)
					continue;
				switch (x->op) {
				case PT_OP_ENTER:
					if (run->enters < 16)
						run->enter_pos[run->enters] = run->nbits;
					run->enters++;
					row = h->nr_ctx_codes ? ctx_next[0] : PT_CTX_NONE;
					break;
				case PT_OP_EMIT:
					cw = x->arg ? ctx_word(h, ctx_words, row, x->arg) : NULL;
					if (cw)
						put_bits(run, cw->value, cw->nbits);
					else
						put_bits(run, x->value, x->nbits);
					if (x->arg && x->arg < h->nr_ctx_codes)
						row = ctx_next[x->arg];
					break;
				case PT_OP_PATH_ADD:
					run->reg += x->value;
					break;
				case PT_OP_PATH_SET:
					run->reg = x->value;
					break;
				case PT_OP_PATH_EMIT:
					put_bits(run, run->reg + x->value, x->nbits);
					if (run->nends < 16) {
						run->end_path[run->nends] = run->reg + x->value;
						run->end_ppp[run->nends] = run->reg2;
					}
					run->nends++;
					run->reg = run->reg2 = 0;
					break;
				case PT_OP_PPP_ADD:
					run->reg2 += x->value;
					break;
				case PT_OP_PPP_SET:
					run->reg2 = x->value;
					break;
				case PT_OP_COUNT:
					if (x->arg < 64)
						run->counters[x->arg]++;
					break;
				default:
					run->bad = 1;
				}
			}
		}
		b = ce->dst;
	}
	if (b != c->nblocks)
		run->bad = 1;
}

uint32_t fx_random_walk(const struct cfg *c, uint32_t *edges, uint32_t max, unsigned int *seed)
{
	uint32_t b = 0, n = 0;

	while (b != c->nblocks) {
		const struct cfg_block *bl = &c->blocks[b];
		uint32_t e = bl->first_succ + rand_r(seed) % bl->nsucc;

		/* Leave loops eventually: near the limit prefer the exit-most edge. */
		if (n + 8 >= max)
			e = bl->first_succ + bl->nsucc - 1;
		if (n == max)
			return 0;
		edges[n++] = e;
		b = c->edges[e].dst;
	}
	return n;
}
