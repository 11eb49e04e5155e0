// SPDX-License-Identifier: GPL-2.0
/* cfg_graph - the algorithms' view of a recovered CFG, and address lookup. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <pathtrace/cfg.h>
#include <pathtrace/error.h>

/* Binary search of blocks [lo, hi), which are sorted by address. */
static uint32_t search(const struct cfg *c, uint32_t lo, uint32_t hi, uint64_t addr)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct cfg_block *b = &c->blocks[mid];

		if (addr < b->addr)
			hi = mid;
		else if (addr - b->addr >= b->size)
			lo = mid + 1;
		else
			return mid;
	}
	return UINT32_MAX;
}

uint32_t cfg_block_at(const struct cfg *c, uint64_t addr)
{
	uint32_t lo = 0, hi = c->nblocks, ncold;

	/* Main-part blocks come first, then the cold run: find where it starts. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->blocks[mid].flags & CFG_BF_COLD)
			hi = mid;
		else
			lo = mid + 1;
	}
	ncold = lo;
	if (c->cold_len && addr >= c->cold_addr && addr - c->cold_addr < c->cold_len)
		return search(c, ncold, c->nblocks, addr);
	return search(c, 0, ncold, addr);
}

int cfg_to_graph(const struct cfg *c, struct graph *g)
{
	uint32_t i;
	int64_t r;

	graph_init(g);
	for (i = 0; i <= c->nblocks; i++) {
		r = graph_add_vertex(g, i < c->nblocks && (c->blocks[i].flags & CFG_BF_CALL) ?
				     GRAPH_V_CALL : 0);
		if (r < 0)
			goto fail;
	}
	for (i = 0; i < c->nedges; i++) {
		r = graph_add_edge(g, c->edges[i].src, c->edges[i].dst);
		if (r < 0)
			goto fail;
	}
	r = graph_finish(g, 0, c->nblocks);
	if (r < 0)
		goto fail;
	return 0;
fail:
	graph_free(g);
	return (int)r;
}

int cfg_tail_call(const struct cfg *c, uint32_t ei, uint64_t *target)
{
	const struct cfg_edge *ce = &c->edges[ei];
	const struct cfg_block *bl = &c->blocks[ce->src];
	const struct cfg_insn *in;

	if (ce->dst != c->nblocks || !bl->ninsn)
		return 0;
	in = &c->insns[bl->first_insn + bl->ninsn - 1];
	*target = in->target;
	if (in->kind == CFG_I_TAIL_CALL)
		return 1;
	if (in->kind != CFG_I_JCC || !(in->flags & CFG_IF_LEAVES) || ce->kind != CFG_E_TAKEN)
		return 0;
	return !cfg_is_return_thunk(in->target_name);
}

int cfg_is_return_thunk(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	return n >= 12 && !strcmp(name + n - 12, "return_thunk");
}

const char *cfg_edge_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[CFG_E_FALL] = "fall", [CFG_E_TAKEN] = "taken", [CFG_E_JUMP] = "jump",
		[CFG_E_KEY_JUMP] = "key-jump", [CFG_E_KEY_FALL] = "key-fall",
		[CFG_E_CALL_RETURN] = "call-return", [CFG_E_FIXUP] = "fixup", [CFG_E_EXIT] = "exit",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

const char *cfg_block_name(const struct cfg *c, const char *name, uint64_t addr,
			   uint64_t cold_addr, uint32_t block, char *buf, size_t len)
{
	const struct cfg_block *b;

	if (block >= c->nblocks) {
		snprintf(buf, len, "%s#%u", name, block);
		return buf;
	}
	b = &c->blocks[block];
	if ((b->flags & CFG_BF_COLD) && cold_addr && b->addr >= cold_addr)
		snprintf(buf, len, "%s.cold+0x%" PRIx64, name, b->addr - cold_addr);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, name, b->addr - addr);
	return buf;
}
