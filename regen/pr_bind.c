// SPDX-License-Identifier: GPL-2.0
/*
 * pr_bind - chooses a traced function's decoder from its plan (mode and
 * encoding recorded in trace.bin) and builds the decoder's tables.
 *
 * Path mode: the model (pathnum) depends only on the graph; the plan's
 * PATH_EMIT width is checked against it. Trace mode (witness or bit
 * codes): the plan's EMIT actions are mapped back to CFG edges and call
 * vertices (vertex emissions) and the decoder tables rebuilt from those
 * emissions (encoding_from_emissions_v),
 * which refuses emissions that cannot be decoded exactly (-PT_EREFUSED:
 * e.g. a plan that breaks the blocking rule, or one planned with entry
 * witnesses whose callees this trace does not trace). Edge mode has
 * no stream to regenerate.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>
#include <pathtrace/plan.h>

#include "decode_paths.h"
#include "pathtrace_abi.h"
#include "model.h"

/* A plan blob's header, sites and actions, every size checked against the blob. */
struct plan_parts {
	struct pt_plan hdr;
	const uint8_t *sites, *actions;
};

static int plan_split(const uint8_t *blob, uint32_t len, struct plan_parts *pp)
{
	uint64_t off;

	if (!blob || len < offsetof(struct pt_plan, name))
		return -PT_ETRUNC;
	memset(&pp->hdr, 0, sizeof(pp->hdr));
	memcpy(&pp->hdr, blob, len < sizeof(pp->hdr) ? len : sizeof(pp->hdr));
	if (pp->hdr.size < offsetof(struct pt_plan, name) || pp->hdr.size > len ||
	    pp->hdr.action_size < sizeof(struct pt_action) ||
	    pp->hdr.site_size < sizeof(struct pt_site))
		return -PT_EFORMAT;
	off = (uint64_t)pp->hdr.size + (uint64_t)pp->hdr.nr_sites * pp->hdr.site_size;
	if (off > len || (uint64_t)pp->hdr.nr_actions * pp->hdr.action_size > len - off)
		return -PT_EFORMAT;
	pp->sites = blob + pp->hdr.size;
	pp->actions = blob + off;
	return 0;
}

static struct pt_action plan_action(const struct plan_parts *pp, uint32_t i)
{
	struct pt_action a;

	memcpy(&a, pp->actions + (size_t)i * pp->hdr.action_size, sizeof(a));
	return a;
}

/* The width of the plan's PT_OP_PATH_EMIT actions (-1: none), or -PT_EFORMAT if they differ. */
static int plan_path_width(const struct plan_parts *pp, int *width)
{
	uint32_t i;

	*width = -1;
	for (i = 0; i < pp->hdr.nr_actions; i++) {
		struct pt_action a = plan_action(pp, i);

		if (a.op != PT_OP_PATH_EMIT)
			continue;
		if (*width >= 0 && *width != a.nbits)
			return -PT_EFORMAT;
		*width = a.nbits;
	}
	return 0;
}

/* The cfg insn at addr, or UINT32_MAX. */
static uint32_t insn_at(const struct cfg *c, uint64_t addr)
{
	uint32_t b = cfg_block_at(c, addr), i;
	const struct cfg_block *bl;

	if (b == UINT32_MAX || b >= c->nblocks)
		return UINT32_MAX;
	bl = &c->blocks[b];
	for (i = 0; i < bl->ninsn; i++)
		if (c->insns[bl->first_insn + i].addr == addr)
			return bl->first_insn + i;
	return UINT32_MAX;
}

static uint32_t in_degree(const struct cfg *c, uint32_t b)
{
	uint32_t e, n = 0;

	for (e = 0; e < c->nedges; e++)
		n += c->edges[e].dst == b;
	return n;
}

/* Puts one emission on edge e; -PT_EFORMAT if e already has one. */
static int put_emission(uint8_t *nbits, uint64_t *value, uint32_t e, const struct pt_action *a)
{
	if (e == UINT32_MAX || nbits[e])
		return -PT_EFORMAT;
	nbits[e] = a->nbits ? a->nbits : 0xff;	/* 0-bit emissions are meaningless: refused below */
	value[e] = a->value;
	return nbits[e] == 0xff ? -PT_EFORMAT : 0;
}

/*
 * Turns a trace-mode plan's PT_OP_EMIT actions back into per-edge
 * emissions (encoding.h's contract), following probesite.h's placement:
 *  - at a conditional site, `when` names the branch's TAKEN or FALL edge;
 *  - at a block's first instruction, when the block has one predecessor,
 *    the first unconditional emission is the edge into it (emitted as the
 *    block is entered, which is what the decoder must see relative to
 *    ENTER markers), a second one the block's single out-edge;
 *  - anywhere else, the block's single out-edge, unless the block is a call
 *    vertex: its probe fires before the call, so the emission cannot be
 *    the out-edge's (taken after the callee's records); it is the block's
 *    vertex emission (encoding.h, ENC_F_VERTEX_EMIT: entering the block
 *    emits, after the bits of the edge into it), one per block, never at
 *    the entry block;
 *  - in a block of several predecessors and several successors (no edge
 *    of it has an unconditional site there), the block's vertex emission
 *    too: a witness on its entry in place of one on a critical edge into
 *    it (witness.c, vertex_chord_candidate).
 * Anything else is refused (-PT_EFORMAT): no guessing.
 */
static int plan_emissions(const struct pr_func *f, const struct plan_parts *pp, uint8_t *nbits,
			  uint64_t *value, uint8_t *vnbits, uint64_t *vvalue, uint32_t *ecode,
			  uint32_t *vcode)
{
	const struct cfg *c = &f->cfg;
	uint32_t s, k;
	int err;

	for (s = 0; s < pp->hdr.nr_sites; s++) {
		struct pt_site site;
		const struct cfg_block *bl;
		uint32_t i, b, in_edge = UINT32_MAX, out_edge = UINT32_MAX, e;
		uint64_t base;
		int in_used = 0;

		memcpy(&site, pp->sites + (size_t)s * pp->hdr.site_size, sizeof(site));
		if ((uint64_t)site.first_action + site.nr_actions > pp->hdr.nr_actions)
			return -PT_EFORMAT;
		base = site.region == PT_REGION_COLD ? f->cold_addr : f->addr;
		i = insn_at(c, base + site.offset);
		if (i == UINT32_MAX)
			return -PT_EFORMAT;
		b = c->insns[i].block;
		bl = &c->blocks[b];
		if (bl->first_insn == i && b != 0 && in_degree(c, b) == 1)
			for (e = 0; e < c->nedges; e++)
				if (c->edges[e].dst == b)
					in_edge = e;
		if (bl->nsucc == 1)
			out_edge = bl->first_succ;
		for (k = 0; k < site.nr_actions; k++) {
			struct pt_action a = plan_action(pp, site.first_action + k);

			if (a.op != PT_OP_EMIT)
				continue;
			if (a.when == PT_WHEN_TAKEN || a.when == PT_WHEN_NOT_TAKEN) {
				uint8_t want = a.when == PT_WHEN_TAKEN ? CFG_E_TAKEN : CFG_E_FALL;

				if (i != bl->first_insn + bl->ninsn - 1 || c->insns[i].kind != CFG_I_JCC)
					return -PT_EFORMAT;
				for (e = bl->first_succ, out_edge = UINT32_MAX;
				     e < bl->first_succ + bl->nsucc; e++)
					if (c->edges[e].kind == want)
						out_edge = e;
				e = out_edge;
			} else if (in_edge != UINT32_MAX && !in_used) {
				in_used = 1;
				e = in_edge;
			} else if ((bl->flags & CFG_BF_CALL) ||
				   (bl->nsucc >= 2 && in_degree(c, b) >= 2)) {
				/* Before the call, or entering a merging predicate: a vertex emission of b. */
				if (b == 0 || vnbits[b] || !a.nbits || a.nbits > 64)
					return -PT_EFORMAT;
				vnbits[b] = a.nbits;
				vvalue[b] = a.value;
				vcode[b] = a.arg;
				continue;
			} else {
				e = out_edge;
			}
			err = put_emission(nbits, value, e, &a);
			if (err)
				return err;
			ecode[e] = a.arg;
		}
	}
	return 0;
}

/*
 * Witness words by context. The plan numbers witness codes in
 * the order of its own CFG's edges, which need not be the recorded CFG's:
 * each EMIT's arg maps the plan's code of its edge or vertex to this
 * encoding's, one to one, and the plan's rows and words, so mapped, must be
 * those this encoding gives (encoding_ctx_bind). Returns 0, -PT_EREFUSED
 * (f->refusal says why), -PT_ENOMEM.
 */
static int bind_ctx(struct pr_func *f, const uint8_t *blob, uint32_t len, struct encoding *enc,
		    const uint32_t *ecode, const uint32_t *vcode)
{
	uint32_t e, v, i, n = enc->nemit + 1, *map = NULL, *next = NULL;
	struct pt_ctx_word *words = NULL;
	struct plan_view pv;
	int err;

	err = plan_parse(blob, len, &pv, NULL, 0);
	if (err == -PT_ENOMEM)
		return err;
	if (!err && pv.hdr.nr_ctx_codes != n)
		err = -PT_EINVAL;
	if (!err) {
		map = calloc(n, sizeof(*map));
		next = malloc(n * sizeof(*next));
		words = malloc(((size_t)pv.hdr.nr_ctx_words + 1) * sizeof(*words));
		if (!map || !next || !words)
			err = -PT_ENOMEM;
	}
	/* plan code -> this encoding's code, through the edge or vertex that emits it */
	for (e = 0; !err && e < f->g.ne; e++)
		if (enc->edge_nbits[e]) {
			if (!ecode[e] || ecode[e] >= n || map[ecode[e]])
				err = -PT_EINVAL;
			else
				map[ecode[e]] = enc->edge_code[e];
		}
	for (v = 0; !err && enc->vertex_nbits && v < f->g.nv; v++)
		if (enc->vertex_nbits[v]) {
			if (!vcode[v] || vcode[v] >= n || map[vcode[v]])
				err = -PT_EINVAL;
			else
				map[vcode[v]] = enc->vertex_code[v];
		}
	for (i = 1; !err && i < n; i++)
		if (!map[i])
			err = -PT_EINVAL;
#define MAP_ROW(r) ((r) == ENC_CTX_NONE || (r) < enc->npred ? (r) : \
		    (r) - enc->npred + 1 < n ? enc->npred + map[(r) - enc->npred + 1] - 1 : \
		    ENC_CTX_NONE - 1)
	for (i = 0; !err && i < n; i++)
		next[i == 0 ? 0 : map[i]] = MAP_ROW(pv.ctx_next[i]);
	for (i = 0; !err && i < pv.hdr.nr_ctx_words; i++) {
		words[i] = pv.ctx_words[i];
		words[i].row = MAP_ROW(pv.ctx_words[i].row);
		words[i].code = pv.ctx_words[i].code < n ? map[pv.ctx_words[i].code] : 0;
	}
#undef MAP_ROW
	if (!err)
		err = encoding_ctx_bind(&f->g, enc, next, n, words, pv.hdr.nr_ctx_words);
	plan_view_free(&pv);
	free(map);
	free(next);
	free(words);
	if (err && err != -PT_ENOMEM) {
		snprintf(f->refusal, sizeof(f->refusal),
			 "its context words do not match its CFG (witness codes, rows or words "
			 "differ from what the emissions give)");
		err = -PT_EREFUSED;
	}
	return err;
}

/* Adapting words (PT_PLAN_CTX_SWAP): no row remembers a code yet. Returns 0; -PT_ENOMEM. */
static int swap_alloc(struct pr_func *f, const struct encoding *enc)
{
	/* walk 0: none (walks count from 1); pr_func_free frees it */
	f->ctx_swap = pr_ctx_swap_alloc(enc->nctx_rows + 1);
	return f->ctx_swap ? 0 : -PT_ENOMEM;
}

static void encoding_model_free(void *model)
{
	encoding_free(model);
	free(model);
}

static int bind_trace(struct pr_func *f, const struct plan_parts *pp, const uint8_t *blob,
		      uint32_t len, const uint8_t *ewit)
{
	uint32_t ne = f->g.ne ? f->g.ne : 1, nv = f->g.nv ? f->g.nv : 1, v;
	uint8_t *nbits = calloc(ne, 1), *vnbits = calloc(nv, 1);
	uint64_t *value = calloc(ne, sizeof(*value)), *vvalue = calloc(nv, sizeof(*vvalue));
	uint32_t *ecode = calloc(ne, sizeof(*ecode)), *vcode = calloc(nv, sizeof(*vcode));
	struct encoding *enc = calloc(1, sizeof(*enc));
	int err = -PT_ENOMEM, any_v = 0;

	if (!nbits || !value || !vnbits || !vvalue || !ecode || !vcode || !enc)
		goto out;
	err = plan_emissions(f, pp, nbits, value, vnbits, vvalue, ecode, vcode);
	if (err)
		goto out;
	for (v = 0; v < f->g.nv; v++)
		any_v |= vnbits[v] != 0;
	err = encoding_from_emissions_ve(&f->g, f->encoding, nbits, value, any_v ? vnbits : NULL,
					 any_v ? vvalue : NULL, ewit, 0, enc);
	if (err) {
		if (err != -PT_ENOMEM)
			snprintf(f->refusal, sizeof(f->refusal),
				 "its emissions cannot be decoded exactly (encoding_from_emissions; "
				 "a plan that assumed callees this trace does not trace?)");
		err = err == -PT_ENOMEM ? err : -PT_EREFUSED;
		goto out;
	}
	if (pp->hdr.nr_ctx_codes && f->encoding == PT_ENC_WITNESS) {
		err = bind_ctx(f, blob, len, enc, ecode, vcode);
		if (!err && (f->plan_flags & PT_PLAN_CTX_SWAP))
			err = swap_alloc(f, enc);
		if (!err && (f->plan_flags & PT_PLAN_CTX_RESTORE)) {
			f->ctx_saved = pr_ctx_saved_alloc();	/* walk 0: none */
			err = f->ctx_saved ? 0 : -PT_ENOMEM;
		}
		if (err) {
			encoding_free(enc);
			goto out;
		}
	}
	if (f->encoding == PT_ENC_WITNESS) {
		err = regen_word_lookup_build(&f->g, enc, f->call_ret_addr, &f->lookup);
		if (!err)
			err = regen_witness_free_edges(&f->g, enc, &f->free_edge);
		if (err) {
			encoding_free(enc);
			goto out;
		}
	}
	f->ops = f->encoding == PT_ENC_WITNESS ? &regen_decode_witness_ops : &regen_decode_bits_ops;
	f->model = enc;
	f->model_free = encoding_model_free;
	enc = NULL;
out:
	free(nbits);
	free(value);
	free(vnbits);
	free(vvalue);
	free(ecode);
	free(vcode);
	free(enc);
	return err;
}

/*
 * Path codes: the plan's, checked against this numbering.
 * Returns 0 (none, or loaded), -PT_EREFUSED (f->refusal says why),
 * -PT_ENOMEM.
 */
static int bind_path_codes(struct pr_func *f, const uint8_t *blob, uint32_t len,
			   struct paths_model *pm)
{
	struct plan_view pv;
	char why[120] = "";
	int err;

	err = plan_parse(blob, len, &pv, why, sizeof(why));
	if (!err && pv.hdr.nr_path_ranges)
		err = decode_paths_codes(pm, pv.path_codes, pv.hdr.nr_path_codes, pv.path_ranges,
					 pv.hdr.nr_path_ranges, pv.hdr.nr_paths, why, sizeof(why));
	plan_view_free(&pv);
	if (err == -PT_ENOMEM)
		return err;
	if (err) {
		snprintf(f->refusal, sizeof(f->refusal), "path codes: %s", why);
		return -PT_EREFUSED;
	}
	return 0;
}

int pr_bind_decoder(struct pr_func *f, const uint8_t *plan, uint32_t plan_len,
		    const uint8_t *ewit)
{
	struct plan_parts pp;
	struct paths_model *pm = NULL;
	int width, err;

	if (f->mode == PT_MODE_EDGES)
		return -PT_ENOTSUP;
	err = plan_split(plan, plan_len, &pp);
	if (err)
		return err;
	if (f->mode == PT_MODE_PATHS && f->encoding == PT_ENC_PATH) {
		err = plan_path_width(&pp, &width);
		if (err)
			return err;
		err = decode_paths_model(&f->g, width, &pm);
		if (!err)
			err = bind_path_codes(f, plan, plan_len, pm);
		if (err) {
			decode_paths_model_free(pm);
			return err;
		}
		f->ops = &regen_decode_paths_ops;
		f->model = pm;
		f->model_free = decode_paths_model_free;
		return 0;
	}
	if (f->mode == PT_MODE_TRACE &&
	    (f->encoding == PT_ENC_WITNESS || f->encoding == PT_ENC_BITS)) {
		uint8_t *framed = NULL;
		uint32_t b;

		/* a framed plan's calls, with no call kinds given: every one framed */
		if (!ewit && (pp.hdr.flags & PT_PLAN_FRAMED)) {
			framed = calloc((size_t)f->cfg.nblocks + 1, 1);
			if (!framed)
				return -PT_ENOMEM;
			for (b = 0; b < f->cfg.nblocks; b++)
				if (f->cfg.blocks[b].flags & CFG_BF_CALL)
					framed[b] = ENC_CALL_FRAMED;
			ewit = framed;
		}
		err = bind_trace(f, &pp, plan, plan_len, ewit);
		free(framed);
		return err;
	}
	return -PT_ENOTSUP;
}
