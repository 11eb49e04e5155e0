// SPDX-License-Identifier: GPL-2.0
/*
 * func_model - a traced function as pathregen needs it (model.h): its CFG and
 * graph, the call-vertex tables of struct regen_func (return addresses,
 * direct traced callees), its tail-call edges, per-block exit edges and
 * names.
 *
 * The decoder tables (rf.ops, rf.model) are bound by the caller
 * (pr_bind.c for trace.bin plans, tests with their own encodings), because
 * they depend on the plan's mode and encoding, not on the CFG.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/entry_witness.h>
#include <pathtrace/error.h>
#include <pathtrace/plan.h>
#include <pathtrace/tracefile.h>

#include "model.h"

const struct pr_func *pr_model_func(const struct pr_model *m, uint32_t func_id)
{
	uint32_t lo, hi;

	if (m->by_id) {
		if (func_id >= m->by_id_len || !m->by_id[func_id])
			return NULL;
		return &m->funcs[m->by_id[func_id] - 1];
	}
	/* funcs are sorted by func_id when there is no table (pr_model_finish). */
	lo = 0;
	hi = m->nfuncs;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->funcs[mid].func_id == func_id)
			return &m->funcs[mid];
		if (m->funcs[mid].func_id < func_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *pr_block_name(const struct pr_func *f, uint32_t block, char *buf, size_t len)
{
	if (!f) {
		snprintf(buf, len, "?#%u", block);
		return buf;
	}
	return cfg_block_name(&f->cfg, f->name, f->addr, f->cold_addr, block, buf, len);
}

const char *pr_owner_name(uint64_t owner, char *buf, size_t len)
{
	static const char *const kinds[] = { "task", "idle", "softirq", "hardirq", "nmi" };
	uint32_t kind = (uint32_t)(owner >> 56);

	if (kind < sizeof(kinds) / sizeof(kinds[0]))
		snprintf(buf, len, "%s/%u", kinds[kind], (uint32_t)owner);
	else
		snprintf(buf, len, "owner-%#" PRIx64, owner);
	return buf;
}

int pr_func_init(struct pr_func *f, uint32_t func_id, const char *name, size_t name_len)
{
	memset(f, 0, sizeof(*f));
	f->func_id = func_id;
	f->name = strndup(name ? name : "?", name ? name_len : 1);
	graph_init(&f->g);
	return f->name ? 0 : -PT_ENOMEM;
}

int pr_func_derive(struct pr_func *f)
{
	const struct cfg *c = &f->cfg;
	uint32_t b, i;
	int err;

	if (!c->nblocks)
		return -PT_EFORMAT;
	err = cfg_to_graph(c, &f->g);
	if (err)
		return err;
	if (f->g.nv != c->nblocks + 1 || f->g.ne != c->nedges)
		return -PT_EFORMAT;
	f->exit_edge = malloc(c->nblocks * sizeof(*f->exit_edge));
	f->call_ret_addr = calloc(f->g.nv, sizeof(*f->call_ret_addr));
	f->call_callee = malloc(f->g.nv * sizeof(*f->call_callee));
	f->call_implicit = calloc(f->g.nv, sizeof(*f->call_implicit));
	if (!f->exit_edge || !f->call_ret_addr || !f->call_callee || !f->call_implicit)
		return -PT_ENOMEM;
	for (i = 0; i < c->nedges; i++) {
		uint64_t target;

		if (!cfg_tail_call(c, i, &target))
			continue;
		if (!f->tail_callee) {
			uint32_t j;

			f->tail_callee = malloc(c->nedges * sizeof(*f->tail_callee));
			if (!f->tail_callee)
				return -PT_ENOMEM;
			for (j = 0; j < c->nedges; j++)
				f->tail_callee[j] = REGEN_TAIL_NONE;
		}
		f->tail_callee[i] = REGEN_TAIL_OTHER;	/* pr_model_finish names traced targets */
	}
	for (i = 0; i < f->g.nv; i++)
		f->call_callee[i] = UINT32_MAX;
	for (b = 0; b < c->nblocks; b++) {
		const struct cfg_block *bl = &c->blocks[b];

		f->exit_edge[b] = UINT32_MAX;
		for (i = 0; i < bl->nsucc; i++)
			if (c->edges[bl->first_succ + i].dst == c->nblocks &&
			    f->exit_edge[b] == UINT32_MAX)
				f->exit_edge[b] = bl->first_succ + i;
		if ((bl->flags & CFG_BF_CALL) && bl->ninsn) {
			const struct cfg_insn *in = &c->insns[bl->first_insn + bl->ninsn - 1];

			f->call_ret_addr[b] = in->addr + in->len;
		}
	}
	return 0;
}

void pr_func_free(struct pr_func *f)
{
	if (f->cfg_from_blob)
		cfg_blob_free(&f->cfg);
	else
		cfg_free(&f->cfg);
	graph_free(&f->g);
	if (f->model && f->model_free)
		f->model_free(f->model);
	free(f->name);
	free((void *)f->code);
	free(f->exit_edge);
	free(f->call_ret_addr);
	free(f->call_callee);
	free(f->call_implicit);
	free(f->call_kind);
	free(f->implicit);
	free(f->tail_callee);
	free(f->verify_block);
	if (f->word_reads) {
		free(f->word_reads->ctx);
		free(f->word_reads->last);
	}
	free(f->word_reads);
	if (f->ctx_swap)
		free(f->ctx_swap->row);
	free(f->ctx_swap);
	free(f->ctx_saved);
	regen_word_lookup_free(f->lookup);
	free(f->free_edge);
	memset(f, 0, sizeof(*f));
}

/*
 * Which blocks have a verify site (f->verify_block), and the plan's
 * implicit entries (f->implicit). A plan that does not parse leaves them
 * NULL: the decoder binding reports that plan.
 */
static int plan_tables(struct pr_func *f, const struct tf_function *fn)
{
	struct plan_view pv;
	uint32_t i;
	int err;

	memset(&pv, 0, sizeof(pv));
	err = plan_parse(fn->plan, fn->plan_len, &pv, NULL, 0);
	if (!err && (pv.hdr.flags & PT_PLAN_VERIFY)) {
		f->verify_block = calloc(f->cfg.nblocks + 1, 1);
		if (!f->verify_block)
			err = -PT_ENOMEM;
		for (i = 0; f->verify_block && i < pv.hdr.nr_verify; i++)
			if (pv.verify[i].block < f->cfg.nblocks)
				f->verify_block[pv.verify[i].block] = 1;
	}
	if (!err) {
		/* Its implicit entries, for the callers' call vertices. */
		f->implicit = pv.implicit;
		f->nimplicit = pv.hdr.nr_implicit;
		pv.implicit = NULL;
		pv.hdr.nr_implicit = 0;
	}
	plan_view_free(&pv);
	return err == -PT_ENOMEM ? err : 0;
}

int pr_func_from_tf(struct pr_func *f, const struct tf_function *fn)
{
	struct pt_plan plan;
	int err;

	err = pr_func_init(f, fn->func_id, fn->name, fn->name_len);
	if (err)
		return err;
	f->addr = fn->addr;
	f->cold_addr = fn->cold_addr;
	f->len = fn->len;
	f->cold_len = fn->cold_len;
	if (fn->len + (uint64_t)fn->cold_len) {
		uint8_t *code = malloc((size_t)fn->len + fn->cold_len);

		if (!code)
			return -PT_ENOMEM;
		memcpy(code, fn->code, (size_t)fn->len + fn->cold_len);
		f->code = code;
	}
	err = tf_function_cfg(fn, &f->cfg);
	f->cfg_from_blob = 1;
	if (err)
		return err;
	if (fn->plan_len < offsetof(struct pt_plan, addr))
		return fn->plan_len ? -PT_ETRUNC : -PT_EFORMAT;
	memset(&plan, 0, sizeof(plan));
	memcpy(&plan, fn->plan, fn->plan_len < sizeof(plan) ? fn->plan_len : sizeof(plan));
	if (plan.func_id != fn->func_id)
		return -PT_EFORMAT;
	f->mode = plan.mode;
	f->encoding = plan.encoding;
	f->plan_flags = plan.flags;
	err = pr_func_derive(f);
	if (!err)
		err = plan_tables(f, fn);
	return err;
}

static int cmp_func_id(const void *a, const void *b)
{
	const struct pr_func *x = a, *y = b;

	return x->func_id < y->func_id ? -1 : x->func_id > y->func_id;
}

/* See model.h. Bind decoders (f->ops, f->model) before: they are copied. */
int pr_model_finish(struct pr_model *m)
{
	uint32_t i, max_id = 0;

	qsort(m->funcs, m->nfuncs, sizeof(*m->funcs), cmp_func_id);
	for (i = 0; i < m->nfuncs; i++) {
		m->funcs[i].index = i;
		if (i && m->funcs[i].func_id == m->funcs[i - 1].func_id)
			return -PT_EFORMAT;
		if (m->funcs[i].func_id > max_id)
			max_id = m->funcs[i].func_id;
	}
	free(m->by_id);
	m->by_id = NULL;
	if (m->nfuncs && max_id < (1u << 20)) {
		m->by_id_len = max_id + 1;
		m->by_id = calloc(m->by_id_len, sizeof(*m->by_id));
		if (!m->by_id)
			return -PT_ENOMEM;
		for (i = 0; i < m->nfuncs; i++)
			m->by_id[m->funcs[i].func_id] = i + 1;
	}
	for (i = 0; i < m->nfuncs; i++) {
		struct pr_func *f = &m->funcs[i];
		uint32_t b, j;

		for (b = 0; b < f->cfg.nblocks; b++) {
			const struct cfg_block *bl = &f->cfg.blocks[b];
			const struct cfg_insn *in;

			if (!(bl->flags & CFG_BF_CALL) || !bl->ninsn)
				continue;
			in = &f->cfg.insns[bl->first_insn + bl->ninsn - 1];
			if (in->kind != CFG_I_CALL || !in->target)
				continue;
			for (j = 0; j < m->nfuncs; j++) {
				const struct pr_func *g = &m->funcs[j];

				if (g->addr != in->target)
					continue;
				f->call_callee[b] = g->func_id;
				/* The callee's plan says this call writes no ENTER. */
				f->call_implicit[b] = plan_implicit_has(g->implicit, g->nimplicit,
									f->call_ret_addr[b], f->func_id);
			}
		}
		for (b = 0; f->tail_callee && b < f->cfg.nedges; b++) {
			uint64_t target;

			if (f->tail_callee[b] == REGEN_TAIL_NONE ||
			    !cfg_tail_call(&f->cfg, b, &target) || !target)
				continue;
			f->tail_callee[b] = REGEN_TAIL_OTHER;
			for (j = 0; j < m->nfuncs; j++)
				if (m->funcs[j].addr == target)
					f->tail_callee[b] = m->funcs[j].func_id;
		}
	}
	free(m->rfuncs);
	m->rfuncs = calloc(m->nfuncs ? m->nfuncs : 1, sizeof(*m->rfuncs));
	if (!m->rfuncs)
		return -PT_ENOMEM;
	m->fs.nfuncs = 0;
	m->fs.ctx_swap = 0;
	/* Only functions with a decoder go to the engine: an ENTER of another is a gap. */
	for (i = 0; i < m->nfuncs; i++) {
		struct pr_func *f = &m->funcs[i];
		struct regen_func *rf = &m->rfuncs[m->fs.nfuncs];

		if (!f->ops)
			continue;
		m->fs.nfuncs++;

		rf->func_id = f->func_id;
		rf->name = f->name;
		rf->g = &f->g;
		rf->call_ret_addr = f->call_ret_addr;
		rf->call_callee = f->call_callee;
		rf->call_implicit = f->call_implicit;
		rf->tail_callee = f->tail_callee;
		rf->ops = f->ops;
		rf->model = f->model;
		rf->ctx_swap = f->ctx_swap;
		rf->ctx_saved = f->ctx_saved;
		rf->lookup = f->lookup;
		rf->free_edge = f->free_edge;
		rf->framed = (f->plan_flags & PT_PLAN_FRAMED) != 0;
		rf->user = (f->plan_flags & PT_PLAN_USER) != 0;
		m->fs.ctx_swap |= f->ctx_swap != NULL;
	}
	m->fs.funcs = m->rfuncs;
	regen_index_free(m->fs.index);
	return regen_index_build(&m->fs, &m->fs.index);
}

/* n bytes, zeroed, on cache lines of their own; NULL without memory. */
static void *zalloc_lines(size_t n)
{
	size_t line = 64, size = (n + line - 1) / line * line;
	void *p = aligned_alloc(line, size ? size : line);

	if (p)
		memset(p, 0, size ? size : line);
	return p;
}

struct regen_ctx_swap *pr_ctx_swap_alloc(uint32_t nrows)
{
	struct regen_ctx_swap *sw = zalloc_lines(sizeof(*sw));

	if (!sw)
		return NULL;
	sw->row = zalloc_lines((size_t)nrows * sizeof(*sw->row));
	if (!sw->row) {
		free(sw);
		return NULL;
	}
	sw->nrows = nrows;
	return sw;
}

struct regen_ctx_saved *pr_ctx_saved_alloc(void)
{
	return zalloc_lines(sizeof(struct regen_ctx_saved));
}

int pr_model_engine_copy(const struct pr_model *m, struct regen_funcs *fs)
{
	struct regen_func *rf = calloc(m->fs.nfuncs ? m->fs.nfuncs : 1, sizeof(*rf));
	uint32_t i;

	memset(fs, 0, sizeof(*fs));
	if (!rf)
		return -PT_ENOMEM;
	fs->funcs = rf;
	fs->ctx_swap = m->fs.ctx_swap;
	for (i = 0; i < m->fs.nfuncs; i++) {
		const struct regen_func *f = &m->fs.funcs[i];

		rf[i] = *f;
		rf[i].word_reads = NULL;
		rf[i].ctx_swap = NULL;
		rf[i].ctx_saved = NULL;
		fs->nfuncs++;
		if (f->ctx_swap) {
			rf[i].ctx_swap = pr_ctx_swap_alloc(f->ctx_swap->nrows);
			if (!rf[i].ctx_swap)
				return -PT_ENOMEM;
		}
		if (f->ctx_saved) {
			rf[i].ctx_saved = pr_ctx_saved_alloc();
			if (!rf[i].ctx_saved)
				return -PT_ENOMEM;
		}
	}
	return regen_index_build(fs, &fs->index);
}

void pr_model_engine_free(struct regen_funcs *fs)
{
	struct regen_func *rf = (struct regen_func *)fs->funcs;
	uint32_t i;

	for (i = 0; rf && i < fs->nfuncs; i++) {
		if (rf[i].ctx_swap)
			free(rf[i].ctx_swap->row);
		free(rf[i].ctx_swap);
		free(rf[i].ctx_saved);
	}
	free(rf);
	regen_index_free(fs->index);
	memset(fs, 0, sizeof(*fs));
}

void pr_model_free(struct pr_model *m)
{
	uint32_t i;

	for (i = 0; i < m->nfuncs; i++)
		pr_func_free(&m->funcs[i]);
	free(m->funcs);
	free(m->rfuncs);
	regen_index_free(m->fs.index);
	free(m->by_id);
	memset(m, 0, sizeof(*m));
}

/*
 * Entry witnesses (entry_witness.h) over every function the trace holds,
 * by address addr[i] (0: none, its calls witness nothing): closed[i] for
 * m->funcs[i]. Returns 0 or -PT_ENOMEM.
 */
static int model_closed(const struct pr_model *m, const uint64_t *addr, uint8_t *closed)
{
	const struct cfg **c = malloc(((size_t)m->nfuncs + 1) * sizeof(*c));
	uint32_t i;
	int err = -PT_ENOMEM;

	if (c) {
		for (i = 0; i < m->nfuncs; i++)
			c[i] = &m->funcs[i].cfg;
		err = entry_closed_cfgs(m->nfuncs, c, addr, closed);
	}
	free(c);
	return err;
}

/*
 * ewit[b] (entry_witnessed_calls: a direct call to a traced, closed
 * function) as enum enc_call: a call whose callee's plan lists it among its
 * implicit entries writes no ENTER, so it is an entered call (blocked, no
 * branch point); any other is witnessed by the ENTER its callee writes.
 * A framed plan (PT_PLAN_FRAMED, encoding.h) takes no entry witnesses:
 * its calls are framed (the ENTERs below them name them), whatever the
 * trace holds, but for those its callees' plans list as implicit entries
 * (no ENTER names them): entered calls when closed, else blocked.
 */
static void call_kinds(const struct pr_model *m, const struct pr_func *f, uint8_t *ewit)
{
	int framed = (f->plan_flags & PT_PLAN_FRAMED) != 0;
	uint32_t b, j;

	for (b = 0; b < f->cfg.nblocks; b++) {
		const struct cfg_block *bl = &f->cfg.blocks[b];
		uint64_t target;
		int listed = 0;

		if (!(bl->flags & CFG_BF_CALL) || !bl->ninsn || (!ewit[b] && !framed))
			continue;
		target = f->cfg.insns[bl->first_insn + bl->ninsn - 1].target;
		for (j = 0; target && j < m->nfuncs && !listed; j++)
			listed = m->funcs[j].addr == target &&
				 plan_implicit_has(m->funcs[j].implicit, m->funcs[j].nimplicit,
						   f->call_ret_addr[b], f->func_id);
		if (framed)
			ewit[b] = !listed ? ENC_CALL_FRAMED :
				  ewit[b] ? ENC_CALL_ENTERED : ENC_CALL_BLOCKED;
		else
			ewit[b] = listed ? ENC_CALL_ENTERED : ENC_CALL_WITNESS;
	}
}

int pr_model_load(const struct tracefile *tf, struct pr_model *m, pr_report_fn report, void *ctx)
{
	uint32_t i, bad = 0, *from = NULL;
	uint64_t *addr = NULL;
	uint8_t *closed = NULL;
	int err = -PT_ENOMEM;

	memset(m, 0, sizeof(*m));
	m->funcs = calloc(tf->nfuncs + 1, sizeof(*m->funcs));
	from = calloc(tf->nfuncs + 1, sizeof(*from));
	if (!m->funcs || !from)
		goto out;
	for (i = 0; i < tf->nfuncs; i++) {
		const struct tf_function *fn = &tf->funcs[i];
		struct pr_func *f = &m->funcs[m->nfuncs];

		err = pr_func_from_tf(f, fn);
		if (err) {
			pr_func_free(f);
			if (err == -PT_ENOMEM)
				goto out;
			if (report)
				report(ctx, fn, NULL, err);
			bad++;
			continue;
		}
		from[m->nfuncs++] = i;	/* kept for names and profiles even without a decoder */
	}
	/* A decoder needs the entry witnesses, which need every function. */
	closed = calloc(m->nfuncs + 1, 1);
	addr = calloc(m->nfuncs + 1, sizeof(*addr));
	err = -PT_ENOMEM;
	if (!closed || !addr)
		goto out;
	/* a call is witnessed by its callee's ENTER: edges-mode plans need not write one */
	for (i = 0; i < m->nfuncs; i++)
		addr[i] = m->funcs[i].mode == PT_MODE_EDGES ? 0 : m->funcs[i].addr;
	err = model_closed(m, addr, closed);
	if (err)
		goto out;
	for (i = 0; i < m->nfuncs; i++) {
		const struct tf_function *fn = &tf->funcs[from[i]];
		struct pr_func *f = &m->funcs[i];

		f->call_kind = malloc(f->cfg.nblocks + 1);
		if (!f->call_kind) {
			err = -PT_ENOMEM;
			goto out;
		}
		entry_witnessed_calls(&f->cfg, m->nfuncs, addr, closed, f->call_kind);
		call_kinds(m, f, f->call_kind);
		err = pr_bind_decoder(f, fn->plan, fn->plan_len, f->call_kind);
		if (err == -PT_ENOMEM)
			goto out;
		if (err && !(err == -PT_ENOTSUP && f->mode == PT_MODE_EDGES)) {
			if (report)
				report(ctx, fn, f, err);
			bad++;
		}
	}
	err = pr_model_finish(m);
out:
	free(from);
	free(addr);
	free(closed);
	return err ? err : (int)bad;
}
