// SPDX-License-Identifier: GPL-2.0
/*
 * cfg_blob - struct cfg <-> the CFG blob of trace.bin (struct pt_cfg_hdr and
 * arrays, trace-format/FORMAT.md), so pathregen uses the CFG that was traced.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

/* A string pool: NUL-terminated names, referenced by offset + 1. */
struct pool {
	char *buf;
	size_t len, cap;
};

static int pool_add(struct pool *p, const char *s, uint32_t *ref)
{
	size_t n;
	size_t i;

	if (!s) {
		*ref = 0;
		return 0;
	}
	n = strlen(s) + 1;
	/* Calls to one callee repeat its name; reuse an equal string. */
	for (i = 0; i < p->len; i += strlen(p->buf + i) + 1)
		if (!strcmp(p->buf + i, s)) {
			*ref = i + 1;
			return 0;
		}
	if (p->len + n > UINT32_MAX - 1)
		return -PT_EOVERFLOW;
	if (p->len + n > p->cap) {
		size_t cap = (p->len + n) * 2;
		char *g = realloc(p->buf, cap);

		if (!g)
			return -PT_ENOMEM;
		p->buf = g;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, s, n);
	*ref = p->len + 1;
	p->len += n;
	return 0;
}

int cfg_blob_encode(const struct cfg *c, uint8_t **out, uint32_t *out_len)
{
	struct pool names = { 0 };
	struct pt_cfg_hdr h;
	struct pt_cfg_insn *ins = NULL;
	uint64_t total;
	uint8_t *blob, *p;
	uint32_t i;
	int err;

	*out = NULL;
	*out_len = 0;
	memset(&h, 0, sizeof(h));
	/* The name always comes first in the pool ("" if none): decode relies on it. */
	err = pool_add(&names, c->name ? c->name : "", &h.name);
	if (c->ninsns) {
		ins = calloc(c->ninsns, sizeof(*ins));
		if (!ins)
			err = -PT_ENOMEM;
	}
	for (i = 0; !err && i < c->ninsns; i++) {
		const struct cfg_insn *s = &c->insns[i];

		ins[i].addr = s->addr;
		ins[i].target = s->target;
		ins[i].block = s->block;
		ins[i].len = s->len;
		ins[i].kind = s->kind;
		ins[i].cc = s->cc;
		ins[i].flags = s->flags;
		err = pool_add(&names, s->target_name, &ins[i].target_name);
	}
	if (err)
		goto out;
	total = sizeof(h) + (uint64_t)c->nblocks * sizeof(struct pt_cfg_block) +
		(uint64_t)c->ninsns * sizeof(struct pt_cfg_insn) +
		(uint64_t)c->nedges * sizeof(struct pt_cfg_edge) + ((names.len + 7) & ~7ul);
	if (total > UINT32_MAX) {
		err = -PT_EOVERFLOW;
		goto out;
	}
	blob = calloc(1, total);
	if (!blob) {
		err = -PT_ENOMEM;
		goto out;
	}
	h.magic = PT_CFG_MAGIC;
	h.size = sizeof(h);
	h.total_len = total;
	h.addr = c->addr;
	h.cold_addr = c->cold_addr;
	h.len = c->len;
	h.cold_len = c->cold_len;
	h.nr_blocks = c->nblocks;
	h.block_size = sizeof(struct pt_cfg_block);
	h.nr_insns = c->ninsns;
	h.insn_size = sizeof(struct pt_cfg_insn);
	h.nr_edges = c->nedges;
	h.edge_size = sizeof(struct pt_cfg_edge);
	h.names_len = (names.len + 7) & ~7ul;	/* zero padding keeps arrays 8-aligned */
	memcpy(blob, &h, sizeof(h));
	p = blob + sizeof(h);
	for (i = 0; i < c->nblocks; i++, p += sizeof(struct pt_cfg_block)) {
		const struct cfg_block *b = &c->blocks[i];
		struct pt_cfg_block o = {
			.addr = b->addr, .size = b->size, .first_insn = b->first_insn,
			.nr_insns = b->ninsn, .flags = b->flags, .first_succ = b->first_succ,
			.nr_succ = b->nsucc,
		};

		memcpy(p, &o, sizeof(o));
	}
	if (c->ninsns)
		memcpy(p, ins, c->ninsns * sizeof(*ins));
	p += (size_t)c->ninsns * sizeof(*ins);
	for (i = 0; i < c->nedges; i++, p += sizeof(struct pt_cfg_edge)) {
		struct pt_cfg_edge o = {
			.src = c->edges[i].src, .dst = c->edges[i].dst, .kind = c->edges[i].kind,
		};

		memcpy(p, &o, sizeof(o));
	}
	if (names.len)
		memcpy(p, names.buf, names.len);
	*out = blob;
	*out_len = total;
out:
	free(ins);
	free(names.buf);
	return err;
}

/* The name referenced by ref (offset + 1), NULL for 0, or -1 via *bad. */
static const char *name_ref(const char *names, uint32_t names_len, uint32_t ref, int *bad)
{
	if (!ref)
		return NULL;
	if (ref > names_len || !memchr(names + ref - 1, 0, names_len - (ref - 1))) {
		*bad = 1;
		return NULL;
	}
	return names + ref - 1;
}

/* Element i of an array whose elements are esize bytes on disk, read as dsize bytes. */
static void load_elem(void *dst, size_t dsize, const uint8_t *arr, uint32_t esize, uint32_t i)
{
	memset(dst, 0, dsize);
	memcpy(dst, arr + (size_t)i * esize, esize < dsize ? esize : dsize);
}

int cfg_blob_decode(const void *blob, size_t len, struct cfg *c)
{
	const uint8_t *b = blob;
	struct pt_cfg_hdr h;
	const uint8_t *blocks, *insns, *edges;
	uint64_t need;
	char *names;
	int bad = 0;
	uint32_t i;

	memset(c, 0, sizeof(*c));
	if (len < 12)
		return -PT_ETRUNC;
	memset(&h, 0, sizeof(h));
	memcpy(&h, b, len < sizeof(h) ? len : sizeof(h));
	if (h.magic != PT_CFG_MAGIC || h.size < offsetof(struct pt_cfg_hdr, reserved0))
		return -PT_EFORMAT;
	if (h.size > len || h.total_len > len)
		return -PT_ETRUNC;
	if (h.total_len != len)
		return -PT_EFORMAT;
	if (h.size < sizeof(h))
		memset((uint8_t *)&h + h.size, 0, sizeof(h) - h.size);
	/* Elements must hold at least the fields this reader uses. */
	if (h.block_size < offsetof(struct pt_cfg_block, nr_succ) + 4 ||
	    h.insn_size < offsetof(struct pt_cfg_insn, flags) + 1 ||
	    h.edge_size < offsetof(struct pt_cfg_edge, kind) + 1)
		return -PT_EFORMAT;
	need = (uint64_t)h.size + (uint64_t)h.nr_blocks * h.block_size +
	       (uint64_t)h.nr_insns * h.insn_size + (uint64_t)h.nr_edges * h.edge_size +
	       h.names_len;
	if (need != len)
		return -PT_EFORMAT;
	if (!h.nr_blocks || h.name != 1 || !h.names_len)
		return -PT_EFORMAT;
	blocks = b + h.size;
	insns = blocks + (size_t)h.nr_blocks * h.block_size;
	edges = insns + (size_t)h.nr_insns * h.insn_size;
	c->blocks = calloc(h.nr_blocks, sizeof(*c->blocks));
	c->insns = calloc(h.nr_insns ? h.nr_insns : 1, sizeof(*c->insns));
	c->edges = calloc(h.nr_edges ? h.nr_edges : 1, sizeof(*c->edges));
	/* One allocation for the names: c->name is its first string. */
	names = malloc(h.names_len + 1);
	if (!c->blocks || !c->insns || !c->edges || !names) {
		free(names);
		cfg_blob_free(c);
		return -PT_ENOMEM;
	}
	memcpy(names, edges + (size_t)h.nr_edges * h.edge_size, h.names_len);
	names[h.names_len] = 0;
	c->name = names;
	c->addr = h.addr;
	c->len = h.len;
	c->cold_addr = h.cold_addr;
	c->cold_len = h.cold_len;
	c->nblocks = h.nr_blocks;
	c->ninsns = h.nr_insns;
	c->nedges = h.nr_edges;
	for (i = 0; i < h.nr_blocks; i++) {
		struct pt_cfg_block o;

		load_elem(&o, sizeof(o), blocks, h.block_size, i);
		if ((uint64_t)o.first_insn + o.nr_insns > h.nr_insns ||
		    (uint64_t)o.first_succ + o.nr_succ > h.nr_edges)
			bad = 1;
		c->blocks[i] = (struct cfg_block){
			.addr = o.addr, .size = o.size, .first_insn = o.first_insn,
			.ninsn = o.nr_insns, .flags = o.flags, .first_succ = o.first_succ,
			.nsucc = o.nr_succ,
		};
	}
	for (i = 0; i < h.nr_insns; i++) {
		struct pt_cfg_insn o;

		load_elem(&o, sizeof(o), insns, h.insn_size, i);
		if (o.block >= h.nr_blocks)
			bad = 1;
		c->insns[i] = (struct cfg_insn){
			.addr = o.addr, .len = o.len, .kind = o.kind, .cc = o.cc,
			.flags = o.flags, .block = o.block, .target = o.target,
			.target_name = name_ref(names, h.names_len, o.target_name, &bad),
		};
	}
	for (i = 0; i < h.nr_edges; i++) {
		struct pt_cfg_edge o;

		load_elem(&o, sizeof(o), edges, h.edge_size, i);
		if (o.src >= h.nr_blocks || o.dst > h.nr_blocks)
			bad = 1;
		c->edges[i] = (struct cfg_edge){ .src = o.src, .dst = o.dst, .kind = o.kind };
	}
	/* Successors are contiguous per block: each edge lies in its source's range. */
	for (i = 0; !bad && i < h.nr_blocks; i++) {
		uint32_t e;

		for (e = 0; e < c->blocks[i].nsucc; e++)
			if (c->edges[c->blocks[i].first_succ + e].src != i)
				bad = 1;
	}
	if (bad) {
		cfg_blob_free(c);
		return -PT_EFORMAT;
	}
	return 0;
}

void cfg_blob_free(struct cfg *c)
{
	free(c->blocks);
	free(c->insns);
	free(c->edges);
	free(c->name);	/* the name pool: target names point into it */
	memset(c, 0, sizeof(*c));
}
