// SPDX-License-Identifier: GPL-2.0
/* One function's plan: probe sites and actions for every mode; see plan.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/path_codes.h>
#include <pathtrace/plan.h>
#include <pathtrace/ppp.h>
#include <pathtrace/spantree.h>
#include <pathtrace/weight.h>

/* Order of actions at one site (plan.h). */
enum { CLS_ENTER, CLS_INTO, CLS_OUT, CLS_BLOCK, CLS_BRANCH };

struct entry {
	uint32_t insn;
	uint32_t cls;
	uint32_t seq;
	struct pt_action a;
};

struct entries {
	struct entry *v;
	uint32_t n, cap;
};

static int __attribute__((format(printf, 3, 4)))
refuse(struct plan *pl, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pl->reason, sizeof(pl->reason), fmt, ap);
	va_end(ap);
	return err;
}

static int push(struct entries *es, uint32_t insn, uint32_t cls, uint16_t op, uint8_t when,
		uint8_t nbits, uint32_t arg, uint64_t value)
{
	struct entry *x;

	if (es->n == es->cap) {
		uint32_t ncap = es->cap * 2 + 32;
		struct entry *nv = realloc(es->v, (size_t)ncap * sizeof(*nv));

		if (!nv)
			return -PT_ENOMEM;
		es->v = nv;
		es->cap = ncap;
	}
	x = &es->v[es->n];
	memset(x, 0, sizeof(*x));
	x->insn = insn;
	x->cls = cls;
	x->seq = es->n++;
	x->a.op = op;
	x->a.when = when;
	x->a.nbits = nbits;
	x->a.arg = arg;
	x->a.value = value;
	return 0;
}

static const struct cfg *sort_cfg;

static int by_site(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	uint64_t xa = sort_cfg->insns[a->insn].addr, xb = sort_cfg->insns[b->insn].addr;
	int ca = !!(sort_cfg->cold_addr && xa >= sort_cfg->cold_addr &&
		    xa < sort_cfg->cold_addr + sort_cfg->cold_len);
	int cb = !!(sort_cfg->cold_addr && xb >= sort_cfg->cold_addr &&
		    xb < sort_cfg->cold_addr + sort_cfg->cold_len);

	if (ca != cb)
		return ca - cb;
	if (xa != xb)
		return xa < xb ? -1 : 1;
	if (a->cls != b->cls)
		return a->cls < b->cls ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Region and offset of an instruction. */
static void locate(const struct cfg *c, uint32_t insn, uint16_t *region, uint32_t *offset)
{
	uint64_t a = c->insns[insn].addr;

	if (a >= c->addr && a < c->addr + c->len) {
		*region = PT_REGION_MAIN;
		*offset = (uint32_t)(a - c->addr);
	} else {
		*region = PT_REGION_COLD;
		*offset = (uint32_t)(a - c->cold_addr);
	}
}

/* The actions of CFG edge e at its site. */
static int edge_action(struct plan *pl, struct entries *es, const struct cfg *c, uint32_t e,
		       uint16_t op, uint8_t nbits, uint32_t arg, uint64_t value)
{
	const struct probesite *s = &pl->edge_site[e];
	uint32_t cls;

	if (s->how == PROBESITE_NONE)
		return refuse(pl, -PT_EREFUSED,
			      "edge %u (block %u -> %s%u) must be instrumented but no probe "
			      "can observe it (critical edge without a conditional jump)",
			      e, c->edges[e].src, c->edges[e].dst == c->nblocks ? "EXIT " : "",
			      c->edges[e].dst);
	cls = s->how == PROBESITE_DST ? CLS_INTO : s->how == PROBESITE_SRC ? CLS_OUT : CLS_BRANCH;
	pl->edge_probed[e] = 1;
	return push(es, s->insn, cls, op, s->when, nbits, arg, value);
}

/*
 * PT_PLAN_PPP: numbers the interesting paths (given, or the most likely by
 * the plan's weights) compactly and adds the PPP register beside the path
 * register (pathnum_second); the slots map each id back to its path.
 */
static int plan_ppp(struct plan *pl, const struct plan_opts *o)
{
	struct pathnum *p = &pl->pn;
	uint64_t *bl = NULL, span, i;
	uint32_t n = 0, k;
	struct ppp pp;
	int err;

	if (o->paths.ppp_paths) {
		bl = malloc(((size_t)o->paths.nppp_paths + 1) * sizeof(*bl));
		if (!bl)
			return -PT_ENOMEM;
		/* paths a profile of other code named: keep those that exist, once */
		for (k = 0; k < o->paths.nppp_paths; k++) {
			uint32_t j;

			if (o->paths.ppp_paths[k] >= p->npaths)
				continue;
			for (j = 0; j < n && bl[j] != o->paths.ppp_paths[k]; j++)
				;
			if (j == n)
				bl[n++] = o->paths.ppp_paths[k];
		}
	} else {
		k = o->paths.ppp_hottest ? o->paths.ppp_hottest : PLAN_PPP_DEFAULT;
		if (k > PPP_HOTTEST_MAX)
			k = PPP_HOTTEST_MAX;
		bl = malloc((size_t)k * sizeof(*bl));
		if (!bl)
			return -PT_ENOMEM;
		err = ppp_hottest(p, pl->weight, k, bl, &n);
		if (err) {
			free(bl);
			return refuse(pl, err, "ppp: choosing the hottest paths: %s",
				      pt_strerror(err));
		}
	}
	if (!n) {
		free(bl);
		return refuse(pl, -PT_EREFUSED, "ppp: none of the %u interesting paths given is "
			      "a path of this function (%llu paths)", o->paths.nppp_paths,
			      (unsigned long long)p->npaths);
	}
	err = ppp_build(&pp, p, bl, n);
	free(bl);
	if (err)
		return refuse(pl, err, "ppp: numbering %u interesting paths: %s", n,
			      pt_strerror(err));
	span = (uint64_t)(pp.max_id - pp.min_id) + 1;
	if (span > PT_PPP_MAX) {
		ppp_free(&pp);
		return refuse(pl, -PT_EREFUSED, "ppp: %u interesting paths need %llu slots "
			      "(at most %u)", n, (unsigned long long)span, PT_PPP_MAX);
	}
	pl->ppp_slots = malloc(span * sizeof(*pl->ppp_slots));
	err = pl->ppp_slots ? pathnum_second(p, (const uint64_t *)pp.inc) : -PT_ENOMEM;
	if (err) {
		ppp_free(&pp);
		return refuse(pl, err, "ppp: the second register: %s", pt_strerror(err));
	}
	for (i = 0; i < span; i++)
		pl->ppp_slots[i].path = pp.slot_bl[i] == UINT64_MAX ? PT_PATH_OTHER :
					pp.slot_bl[i];
	pl->hdr.nr_ppp = (uint32_t)span;
	pl->hdr.ppp_min = pp.min_id;
	pl->hdr.ppp_size = sizeof(struct pt_ppp_slot);
	pl->ppp_interesting = n;
	ppp_free(&pp);
	return 0;
}

/* A path-register action and, in a PPP plan, the PPP register's beside it. */
static int path_actions(struct plan *pl, struct entries *es, const struct cfg *c, uint32_t e,
			uint32_t d)
{
	const struct pathnum *p = &pl->pn;
	int err = 0;

	if (p->act[d] & PATHNUM_ACT_ADD) {
		if (p->add[d])
			err = edge_action(pl, es, c, e, PT_OP_PATH_ADD, 0, 0, p->add[d]);
		if (!err && p->inc2 && p->add2[d])
			err = edge_action(pl, es, c, e, PT_OP_PPP_ADD, 0, 0, p->add2[d]);
	} else if (p->act[d] & PATHNUM_ACT_EMIT) {
		/* the count reads the PPP register as it is: add first */
		if (p->inc2 && p->emit2[d])
			err = edge_action(pl, es, c, e, PT_OP_PPP_ADD, 0, 0, p->emit2[d]);
		if (!err)
			err = edge_action(pl, es, c, e, PT_OP_PATH_EMIT, p->width, 0, p->emit[d]);
	}
	if (!err && (p->act[d] & PATHNUM_ACT_SET)) {
		if (p->set[d])
			err = edge_action(pl, es, c, e, PT_OP_PATH_SET, 0, 0, p->set[d]);
		if (!err && p->inc2 && p->set2[d])
			err = edge_action(pl, es, c, e, PT_OP_PPP_SET, 0, 0, p->set2[d]);
	}
	return err;
}

/*
 * Path numbers coded by start (path_codes.h): the plan's
 * weights rank each start's paths. None where path_codes_fit says no, and
 * none when the tables outgrow PT_PATH_CODES_MAX.
 */
static int plan_path_codes(struct plan *pl, const struct plan_opts *o)
{
	const struct pathnum *p = &pl->pn;
	struct path_codes pc;
	double *w;
	int err;

	if (!path_codes_fit(p))
		return 0;
	w = calloc((size_t)p->dag.ne + 1, sizeof(*w));
	if (!w)
		return -PT_ENOMEM;
	path_codes_dag_weights(p, pl->weight, w);
	err = path_codes_build(&pc, p, w, o->paths.codes_k ? o->paths.codes_k : PLAN_PATH_CODES_K);
	free(w);
	if (err)
		return err;
	if (pc.ncodes > PT_PATH_CODES_MAX || pc.nrange > PT_PATH_CODES_MAX) {
		path_codes_free(&pc);
		return 0;	/* more than a plan may carry: full-width numbers */
	}
	pl->path_codes = calloc((size_t)pc.ncodes + 1, sizeof(*pl->path_codes));
	pl->path_ranges = calloc((size_t)pc.nrange + 1, sizeof(*pl->path_ranges));
	if (!pl->path_codes || !pl->path_ranges) {
		path_codes_free(&pc);
		return -PT_ENOMEM;
	}
	path_codes_to_plan(&pc, pl->path_codes, pl->path_ranges);
	pl->hdr.nr_path_codes = pc.ncodes;
	pl->hdr.path_code_size = pc.ncodes ? sizeof(struct pt_path_code) : 0;
	pl->hdr.nr_path_ranges = pc.nrange;
	pl->hdr.path_range_size = sizeof(struct pt_path_range);
	pl->hdr.nr_paths = p->npaths;
	path_codes_free(&pc);
	return 0;
}

/* A site's cost under PLAN_COSTS_EDGES: its edge's (or block's) weight, 1 at least. */
static uint64_t edge_cost(uint64_t weight)
{
	if (!weight)
		return 1;
	return weight > PROBESITE_COST_NONE / 16 ? PROBESITE_COST_NONE / 16 : weight;
}

static int plan_paths(struct plan *pl, struct entries *es, const struct cfg *c,
		      const uint64_t *cost, const struct plan_opts *o)
{
	struct pathnum *p = &pl->pn;
	uint64_t *call_cost = malloc(((size_t)pl->g.nv + 1) * sizeof(*call_cost));
	struct probesite site;
	uint32_t e, v;
	int err;

	if (!call_cost)
		return -PT_ENOMEM;
	/*
	 * What a call vertex's path end costs: its probe in the call block,
	 * or, in a block no probe can sit on (a lone static call), as much as
	 * an unobservable edge, so that the end moves onto the edges into it
	 * wherever they can carry it.
	 */
	for (v = 0; v < pl->g.nv; v++)
		call_cost[v] = v >= c->nblocks ? 1 :
			       probesite_in_block(c, v, pl->weight, &site) ? PROBESITE_COST_NONE :
			       o->costs == PLAN_COSTS_EDGES ?
			       edge_cost(probesite_block_freq(c, pl->weight, v)) : site.cost;
	err = pathnum_build(p, &pl->g, cost, call_cost);
	free(call_cost);
	if (err)
		return refuse(pl, err, "path numbering: %s", p->reason);
	pl->have_pn = 1;
	pl->bits = p->width;
	if (o->flags & PT_PLAN_PPP) {
		err = plan_ppp(pl, o);
		if (err)
			return err;
	}
	/* Path ends no probe can see (out of a ud2 block): emit on the way in. */
	for (e = 0; e < c->nedges; e++) {
		uint32_t d = p->cfg[e].dag;

		if (p->cfg[e].role != PATHNUM_ROLE_CALL && d != GRAPH_NONE &&
		    (p->act[d] & PATHNUM_ACT_EMIT) && pl->edge_site[e].how == PROBESITE_NONE)
			pathnum_emit_earlier(p, d);	/* if it cannot, edge_action refuses */
	}
	for (e = 0; e < c->nedges; e++) {
		uint32_t d = p->cfg[e].dag;

		if (p->cfg[e].role == PATHNUM_ROLE_CALL || d == GRAPH_NONE)
			continue;
		err = path_actions(pl, es, c, e, d);
		if (err)
			return err;
	}
	for (v = 0; v < c->nblocks; v++) {
		uint32_t d = p->call_end[v];
		struct probesite s;

		if (d == GRAPH_NONE || p->kind[d] != PATHNUM_CALL_END || !p->act[d])
			continue;
		if (probesite_in_block(c, v, pl->weight, &s))
			return refuse(pl, -PT_EREFUSED,
				      "call block %u has no instruction a probe can sit on "
				      "for its path end", v);
		if (p->inc2 && p->emit2[d])
			err = push(es, s.insn, CLS_BLOCK, PT_OP_PPP_ADD, PT_WHEN_ALWAYS, 0, 0,
				   p->emit2[d]);
		if (!err)
			err = push(es, s.insn, CLS_BLOCK, PT_OP_PATH_EMIT, PT_WHEN_ALWAYS,
				   p->width, 0, p->emit[d]);
		if (err)
			return err;
	}
	if (!(o->flags & PT_PLAN_PROFILE) && o->paths.numbers == PLAN_PATH_NUMBERS_CODED)
		return plan_path_codes(pl, o);
	return 0;
}

static int plan_edges(struct plan *pl, struct entries *es, const struct cfg *c,
		      const uint64_t *cost)
{
	uint32_t e;
	int err;

	pl->in_tree = calloc((size_t)c->nedges + 1, 1);
	if (!pl->in_tree)
		return -PT_ENOMEM;
	err = spantree_max(&pl->g, cost, NULL, pl->in_tree);
	if (err)
		return err;
	for (e = 0; e < c->nedges; e++) {
		if (pl->in_tree[e])
			continue;
		err = edge_action(pl, es, c, e, PT_OP_COUNT, 0, e, 0);
		if (err)
			return err;
	}
	pl->hdr.nr_counters = c->nedges + 1;	/* the chords' edge ids, and the activations */
	return 0;
}

/*
 * Witness words by context: the encoding's ctx_next[] and its
 * context rows' words, sorted by (row, code) for the module's search.
 */
static int plan_ctx(struct plan *pl)
{
	const struct encoding *enc = &pl->enc;
	uint32_t n = enc->ctx_start[enc->nctx_rows], r, i, k = 0, j;

	pl->ctx_next = malloc(((size_t)enc->nemit + 1) * sizeof(*pl->ctx_next));
	pl->ctx_words = calloc((size_t)n + 1, sizeof(*pl->ctx_words));
	if (!pl->ctx_next || !pl->ctx_words)
		return -PT_ENOMEM;
	memcpy(pl->ctx_next, enc->ctx_next, ((size_t)enc->nemit + 1) * sizeof(*pl->ctx_next));
	for (r = 0; r < enc->nctx_rows; r++) {
		uint32_t first = k;

		for (i = enc->ctx_start[r]; i < enc->ctx_start[r + 1]; i++) {
			struct pt_ctx_word w = { .row = r, .code = enc->ctx_code[i],
						 .value = (uint32_t)enc->ctx_value[i],
						 .nbits = enc->ctx_nbits[i] };

			/* insertion by code: rows are short */
			for (j = k++; j > first && pl->ctx_words[j - 1].code > w.code; j--)
				pl->ctx_words[j] = pl->ctx_words[j - 1];
			pl->ctx_words[j] = w;
		}
	}
	pl->hdr.nr_ctx_codes = enc->nemit + 1;
	pl->hdr.nr_ctx_words = n;
	pl->hdr.ctx_word_size = n ? sizeof(struct pt_ctx_word) : 0;
	return 0;
}

/* Block b's first instruction a probe can sit on, or UINT32_MAX. */
static uint32_t first_probeable(const struct cfg *c, uint32_t b)
{
	const struct cfg_block *bl = &c->blocks[b];
	uint32_t i;

	for (i = bl->first_insn; i < bl->first_insn + bl->ninsn; i++)
		if (probesite_probeable(c, i))
			return i;
	return UINT32_MAX;
}

/*
 * Trace mode: the encoding with vertex emissions allowed and the edges no
 * probe can observe marked, so that no witness or separator lands on one.
 * A vertex emission fires on entering its block, before the block's call:
 * an unconditional EMIT at the block's first probeable instruction, after
 * the actions of the edge into it (CLS_BLOCK).
 */
/*
 * word_weight: the edge weights that shape the witness words within each
 * predicate's row (encoding_opts.code_weight): measured counts from a
 * profile, else the heuristic's guesses. Guesses lost against equal words
 * in one code over the function (3.09 -> 3.78 payload bits per Jcc on
 * bench-vm) but win within rows, where they mostly rank a loop's exit
 * against its back edge (2.20 -> 2.11).
 */
static int plan_trace(struct plan *pl, struct entries *es, const struct cfg *c,
		      const uint64_t *cost, uint16_t encoding, const uint8_t *ewit,
		      const uint64_t *word_weight, const uint64_t *ctx_weight, int ctx_words)
{
	struct encoding_opts eo = { .flags = ENC_F_VERTEX_EMIT, .enter_witnessed = ewit,
				    .code_weight = word_weight, .ctx_words = ctx_words,
				    .ctx_weight = ctx_weight };
	uint8_t *unobservable = calloc((size_t)c->nedges + 1, 1);
	uint64_t *vcost = malloc(((size_t)pl->g.nv + 1) * sizeof(*vcost));
	uint32_t e, v, i;
	int err;

	if (!unobservable || !vcost) {
		free(unobservable);
		free(vcost);
		return -PT_ENOMEM;
	}
	/*
	 * What a vertex witness would cost in each block: its first probeable
	 * instruction (where the emission goes, below) on every run of the
	 * block, at the probe factor of that instruction's window.
	 */
	for (v = 0; v < pl->g.nv; v++) {
		vcost[v] = UINT64_MAX;
		if (v >= c->nblocks)
			continue;
		i = first_probeable(c, v);
		if (i != UINT32_MAX) {
			uint64_t f = probesite_block_freq(c, pl->weight, v);
			uint64_t k = probesite_window(c, i) ? 1 : PROBESITE_INT3_FACTOR;

			vcost[v] = f > UINT64_MAX / 16 ? UINT64_MAX / 16 : f * k;
		}
	}
	eo.vertex_cost = vcost;
	/*
	 * A call vertex's out-edge is taken after the call returns: a site
	 * in the call block (SRC, when the target's first instruction cannot
	 * be probed, e.g. a ud2) fires before the call, so it cannot observe
	 * that edge either.
	 */
	for (e = 0; e < c->nedges; e++)
		unobservable[e] = pl->edge_site[e].how == PROBESITE_NONE ||
				  (pl->edge_site[e].how == PROBESITE_SRC &&
				   (c->blocks[c->edges[e].src].flags & CFG_BF_CALL));
	eo.unobservable = unobservable;
	if (encoding == PT_ENC_BITS)
		err = encoding_bits_opts(&pl->g, &eo, &pl->enc);
	else
		err = encoding_witness_opts(&pl->g, cost, &eo, &pl->enc);
	free(unobservable);
	free(vcost);
	if (err == -PT_EREFUSED && eo.why)
		return refuse(pl, err, "encoding: %s (at block %u)", eo.why, eo.where);
	if (err)
		return refuse(pl, err, "encoding: %s", pt_strerror(err));
	pl->have_enc = 1;
	pl->bits = pl->enc.width;
	for (e = 0; e < c->nedges; e++) {
		if (!pl->enc.edge_nbits[e])
			continue;
		err = edge_action(pl, es, c, e, PT_OP_EMIT, pl->enc.edge_nbits[e],
				  pl->enc.ctx_next ? pl->enc.edge_code[e] : 0,
				  pl->enc.edge_value[e]);
		if (err)
			return err;
	}
	for (v = 0; pl->enc.vertex_nbits && v < c->nblocks; v++) {
		if (!pl->enc.vertex_nbits[v])
			continue;
		i = first_probeable(c, v);
		if (i == UINT32_MAX)
			return refuse(pl, -PT_EREFUSED, "block %u needs a vertex emission "
				      "but has no instruction a probe can sit on", v);
		err = push(es, i, CLS_BLOCK, PT_OP_EMIT, PT_WHEN_ALWAYS, pl->enc.vertex_nbits[v],
			   pl->enc.ctx_next ? pl->enc.vertex_code[v] : 0,
			   pl->enc.vertex_value[v]);
		if (err)
			return err;
	}
	return pl->enc.ctx_next ? plan_ctx(pl) : 0;
}

/* Groups the sorted entries into sites and actions. */
static int build_sites(struct plan *pl, struct entries *es, const struct cfg *c)
{
	uint32_t i, n = 0;

	sort_cfg = c;
	qsort(es->v, es->n, sizeof(*es->v), by_site);
	pl->sites = calloc((size_t)es->n + 1, sizeof(*pl->sites));
	pl->site_insn = calloc((size_t)es->n + 1, sizeof(*pl->site_insn));
	pl->actions = calloc((size_t)es->n + 1, sizeof(*pl->actions));
	if (!pl->sites || !pl->site_insn || !pl->actions)
		return -PT_ENOMEM;
	for (i = 0; i < es->n; i++) {
		struct pt_site *s;

		if (!i || es->v[i].insn != es->v[i - 1].insn) {
			s = &pl->sites[n];
			pl->site_insn[n++] = es->v[i].insn;
			locate(c, es->v[i].insn, &s->region, &s->offset);
			s->insn_len = c->insns[es->v[i].insn].len;
			s->cond = PT_COND_NONE;
			s->first_action = i;
		}
		s = &pl->sites[n - 1];
		s->nr_actions++;
		if (es->v[i].a.when != PT_WHEN_ALWAYS)
			s->cond = c->insns[es->v[i].insn].cc;
		pl->actions[i] = es->v[i].a;
	}
	pl->hdr.nr_sites = n;
	pl->hdr.nr_actions = es->n;
	return 0;
}

/*
 * One verify site per block at its first probeable instruction. A block
 * made only of unprobeable instructions (a lone ud2) gets none: the plan's
 * verify list names the blocks it covers, so the verifier knows.
 */
static int build_verify(struct plan *pl, const struct cfg *c)
{
	uint32_t b, i, n = 0;

	pl->verify = calloc((size_t)c->nblocks + 1, sizeof(*pl->verify));
	pl->verify_insn = calloc((size_t)c->nblocks + 1, sizeof(*pl->verify_insn));
	if (!pl->verify || !pl->verify_insn)
		return -PT_ENOMEM;
	for (b = 0; b < c->nblocks; b++) {
		i = first_probeable(c, b);
		if (i == UINT32_MAX)
			continue;
		locate(c, i, &pl->verify[n].region, &pl->verify[n].offset);
		pl->verify[n].block = b;
		pl->verify_insn[n++] = i;
	}
	pl->hdr.nr_verify = n;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t site_cost(const struct cfg *c, const uint64_t *w, uint32_t insn, int opt)
{
	uint64_t f = probesite_block_freq(c, w, c->insns[insn].block);
	uint64_t k = probesite_ftrace(c, insn) ? PROBESITE_FTRACE_FACTOR :
		     opt ? 1 : PROBESITE_INT3_FACTOR;

	return f > UINT64_MAX / 16 ? UINT64_MAX / 16 : f * k;
}

/* Optimizability (with the verify probes, which are armed too) and costs. */
static int figures(struct plan *pl, const struct cfg *c)
{
	uint32_t n = pl->hdr.nr_sites + pl->hdr.nr_verify, k, m = 0, i;
	uint32_t *all = malloc(((size_t)n + 1) * sizeof(*all));
	uint8_t *opt = malloc((size_t)(n > c->nblocks ? n : c->nblocks) + 1);
	uint32_t *blocks = malloc(((size_t)c->nblocks + 1) * sizeof(*blocks));

	if (!all || !opt || !blocks) {
		free(all);
		free(opt);
		free(blocks);
		return -PT_ENOMEM;
	}
	for (k = 0; k < pl->hdr.nr_sites; k++)
		all[m++] = pl->site_insn[k];
	for (k = 0; k < pl->hdr.nr_verify; k++)
		all[m++] = pl->verify_insn[k];
	qsort(all, m, sizeof(*all), cmp_u32);
	for (k = 0, i = 0; k < m; k++)
		if (!i || all[k] != all[i - 1])
			all[i++] = all[k];
	m = i;
	probesite_mark_optimizable(c, all, m, opt);
	for (k = 0; k < pl->hdr.nr_sites; k++) {
		uint32_t *hit = bsearch(&pl->site_insn[k], all, m, sizeof(*all), cmp_u32);
		int o = hit && opt[hit - all];

		if (o) {
			pl->sites[k].flags |= PT_SITE_OPTIMIZABLE;
			pl->noptimizable++;
		}
		pl->cost += site_cost(c, pl->weight, pl->site_insn[k], o);
	}
	/* The baseline: a probe at every block's first probeable instruction. */
	for (k = 0, m = 0; k < c->nblocks; k++) {
		i = first_probeable(c, k);
		if (i != UINT32_MAX)
			blocks[m++] = i;
	}
	probesite_mark_optimizable(c, blocks, m, opt);
	pl->every_block_probes = m;
	for (k = 0; k < m; k++) {
		pl->every_block_optimizable += opt[k];
		pl->every_block_cost += site_cost(c, pl->weight, blocks[k], opt[k]);
	}
	free(all);
	free(opt);
	free(blocks);
	return 0;
}

static int by_ret(const void *a, const void *b)
{
	const struct pt_implicit *x = a, *y = b;

	return x->ret < y->ret ? -1 : x->ret > y->ret;
}

/*
 * Branch priors for the heuristic weighting (weight_heuristic_prior): what
 * the code itself says about which way a branch goes, so that the plan's
 * guessed frequencies steer the spanning tree and the sites as a profile
 * would. A static key runs the way its live code goes until it flips, and
 * an edge into a WARN, a BUG, a noreturn call, an exception fixup or the
 * .cold part runs nearly never (bench-vm's edge profile: none of them ran).
 * Not a prior: a Jcc's fall-through, although bench-vm's forward Jcc fell
 * through 68% of the time. Weighting it 2:1 cut the witness payload by a
 * further 3% there but put one loop-nest function of the module corpus
 * (xfs_iext_destroy_node) at 4.4 times every-block cost, and bench-plan's
 * aggregate from 1.70 to 3.21: a guess that is wrong in a hot loop costs
 * more than it saves elsewhere. The words by context take it
 * (layout): they change no site, and a row's words by the shares on the
 * way cost 1.07 payload bits per Jcc with it against 1.11 without.
 */
#define PRIOR_RARE (1.0 / 256)

static double edge_prior(const struct cfg *c, const struct cfg_edge *ce, int layout)
{
	const struct cfg_block *b = &c->blocks[ce->src], *d;
	const struct cfg_insn *last = b->ninsn ? &c->insns[b->first_insn + b->ninsn - 1] : NULL;
	double p = 1.0;

	switch (ce->kind) {
	case CFG_E_KEY_JUMP:
		p = last && last->cc == CFG_KEY_ON ? 1.0 : PRIOR_RARE;
		break;
	case CFG_E_KEY_FALL:
		p = last && last->cc == CFG_KEY_ON ? PRIOR_RARE : 1.0;
		break;
	case CFG_E_FIXUP:
		p = PRIOR_RARE;
		break;
	case CFG_E_TAKEN:
		/* words only (see above): a forward Jcc falls through 2:1 */
		if (layout && ce->dst < c->nblocks && last &&
		    c->insns[c->blocks[ce->dst].first_insn].addr > last->addr)
			p = 0.5;
		break;
	}
	if (ce->dst >= c->nblocks)
		return p;
	d = &c->blocks[ce->dst];
	if (d->flags & CFG_BF_COLD)
		return p * PRIOR_RARE;
	if (d->ninsn) {
		uint8_t k = c->insns[d->first_insn + d->ninsn - 1].kind;

		if (k == CFG_I_WARN || k == CFG_I_BUG || k == CFG_I_CALL_NORETURN)
			return p * PRIOR_RARE;
	}
	return p;
}

/* The Section 5 heuristic with the branch priors above. Returns as weight_heuristic. */
static int heuristic_weights(const struct cfg *c, const struct graph *g, int layout,
			     uint64_t *weight)
{
	double *prior = malloc(((size_t)g->ne + 1) * sizeof(*prior));
	uint32_t e;
	int err;

	if (!prior)
		return -PT_ENOMEM;
	for (e = 0; e < g->ne; e++)
		prior[e] = e < c->nedges ? edge_prior(c, &c->edges[e], layout) : 1.0;
	err = weight_heuristic_prior(g, prior, weight);
	free(prior);
	return err;
}

int plan_weights_heuristic(const struct cfg *c, const struct graph *g, uint64_t *weight)
{
	if (!c || !g || !weight)
		return -PT_EINVAL;
	return heuristic_weights(c, g, 0, weight);
}

int plan_weights_words(const struct cfg *c, const struct graph *g, uint64_t *weight)
{
	if (!c || !g || !weight)
		return -PT_EINVAL;
	return heuristic_weights(c, g, 1, weight);
}

/*
 * PT_PLAN_FRAMED: ewit (may be NULL) with every other call framed
 * (encoding.h): its callees' ENTERs name it, so it blocks nothing. NULL on
 * ENOMEM.
 */
static uint8_t *framed_calls(const struct cfg *c, const uint8_t *ewit)
{
	uint8_t *f = calloc((size_t)c->nblocks + 1, 1);
	uint32_t b;

	for (b = 0; f && b < c->nblocks; b++) {
		f[b] = ewit ? ewit[b] : ENC_CALL_LOUD;
		if (f[b] == ENC_CALL_LOUD && (c->blocks[b].flags & CFG_BF_CALL))
			f[b] = ENC_CALL_FRAMED;
	}
	return f;
}

/* The implicit entries, sorted by return address, each address once. */
static int build_implicit(struct plan *pl, const struct plan_opts *o)
{
	uint32_t i, n = 0;

	pl->implicit = malloc(o->nimplicit * sizeof(*pl->implicit));
	if (!pl->implicit)
		return -PT_ENOMEM;
	memcpy(pl->implicit, o->implicit, o->nimplicit * sizeof(*pl->implicit));
	qsort(pl->implicit, o->nimplicit, sizeof(*pl->implicit), by_ret);
	for (i = 0; i < o->nimplicit; i++) {
		if (!pl->implicit[i].ret || pl->implicit[i].caller_id >= PT_IMPLICIT_MAX_ID ||
		    (n && pl->implicit[n - 1].ret == pl->implicit[i].ret))
			continue;
		pl->implicit[n] = pl->implicit[i];
		pl->implicit[n++].reserved = 0;
	}
	pl->hdr.nr_implicit = n;
	pl->hdr.implicit_size = n ? sizeof(struct pt_implicit) : 0;
	return 0;
}

/*
 * Whether c has a call its traced callee's ENTER witnesses (entry
 * witnesses, enter_witnessed: may be NULL). Such a plan takes no context
 * words: an entry witness is read from the callee's ENTER, which moves no
 * row in the module (the caller's next word would be written in the row
 * of the predicate before the call, and read in the row of the one after
 * it): with `enable --explicit-entries` every such caller lost its words
 * to gaps (bench-vm: 744 gaps) until plans with entry witnesses went back
 * to words per predicate.
 */
static int has_entry_witness(const struct cfg *c, const uint8_t *ewit)
{
	uint32_t b;

	for (b = 0; ewit && b < c->nblocks; b++)
		if (ewit[b] == ENC_CALL_WITNESS && (c->blocks[b].flags & CFG_BF_CALL))
			return 1;
	return 0;
}

/* Whether o's witness words by context adapt within a segment (PT_PLAN_CTX_SWAP). */
static int adapting_words(const struct plan_opts *o)
{
	switch (o->trace.adapting_words) {
	case PLAN_ADAPTING_ALWAYS:
		return 1;
	case PLAN_ADAPTING_NEVER:
		return 0;
	default:
		return !o->weight;
	}
}

int plan_build(const struct cfg *c, const struct plan_opts *o, struct plan *pl)
{
	struct entries es = { 0 };
	uint64_t *cost = NULL, *ctx_weight = NULL;
	uint8_t *framed = NULL;
	uint32_t e, entry_insn;
	int err, ctx_words;

	memset(pl, 0, sizeof(*pl));
	graph_init(&pl->g);
	graph_init(&pl->pn.dag);
	if (!c || !c->nblocks || !c->ninsns || !o)
		return refuse(pl, -PT_EINVAL, "empty cfg");
	if (o->flags & ~(PT_PLAN_VERIFY | PT_PLAN_PROFILE | PT_PLAN_PPP | PT_PLAN_FRAMED |
			 PT_PLAN_USER))
		return refuse(pl, -PT_EINVAL, "unknown plan flags 0x%x", o->flags);
	if ((o->flags & PT_PLAN_FRAMED) &&
	    (o->mode != PT_MODE_TRACE || (o->trace.encoding && o->trace.encoding != PT_ENC_WITNESS)))
		return refuse(pl, -PT_EINVAL, "framed calls are the witness encoding's");
	if ((o->flags & PT_PLAN_PPP) && !(o->flags & PT_PLAN_PROFILE))
		return refuse(pl, -PT_EINVAL, "preferential path profiling is a path profile");
	if ((o->flags & PT_PLAN_PROFILE) &&
	    (o->mode != PT_MODE_PATHS || (o->flags & PT_PLAN_VERIFY) || o->nimplicit))
		return refuse(pl, -PT_EINVAL, "a path profile is a paths plan without verify sites "
			      "or implicit entries");
	if (o->mode != PT_MODE_TRACE && o->mode != PT_MODE_PATHS && o->mode != PT_MODE_EDGES)
		return refuse(pl, -PT_EINVAL, "unknown mode %u", o->mode);
	if (o->mode == PT_MODE_TRACE && o->trace.encoding && o->trace.encoding != PT_ENC_WITNESS &&
	    o->trace.encoding != PT_ENC_BITS)
		return refuse(pl, -PT_EINVAL, "trace mode needs the witness or bits encoding");
	if (o->trace.words > PLAN_WORDS_BY_ROW ||
	    o->trace.adapting_words > PLAN_ADAPTING_NEVER ||
	    o->paths.numbers > PLAN_PATH_NUMBERS_FULL_WIDTH || o->costs > PLAN_COSTS_EDGES)
		return refuse(pl, -PT_EINVAL, "unknown words, adapting words, path numbers or costs "
			      "option");
	err = cfg_to_graph(c, &pl->g);
	if (err)
		return refuse(pl, err, "cfg_to_graph: %s", pt_strerror(err));
	for (e = 0; e < c->nedges; e++)
		if (c->edges[e].dst == 0)
			return refuse(pl, -PT_EREFUSED,
				      "block %u jumps back to the function's first instruction: "
				      "its ENTER probe would fire again", c->edges[e].src);
	entry_insn = c->blocks[0].first_insn;
	if (c->insns[entry_insn].addr != c->addr)
		return refuse(pl, -PT_EREFUSED, "block 0 does not start at the function");
	pl->weight = malloc(((size_t)c->nedges + 1) * sizeof(*pl->weight));
	pl->edge_site = calloc((size_t)c->nedges + 1, sizeof(*pl->edge_site));
	pl->edge_probed = calloc((size_t)c->nedges + 1, 1);
	cost = malloc(((size_t)c->nedges + 1) * sizeof(*cost));
	if (!pl->weight || !pl->edge_site || !pl->edge_probed || !cost) {
		err = -PT_ENOMEM;
		goto out;
	}
	if (o->weight)
		memcpy(pl->weight, o->weight, (size_t)c->nedges * sizeof(*pl->weight));
	else if ((err = heuristic_weights(c, &pl->g, 0, pl->weight)))
		goto out;
	err = probesite_edges(c, pl->weight, pl->edge_site);
	if (err)
		goto out;
	for (e = 0; e < c->nedges; e++)
		cost[e] = o->costs == PLAN_COSTS_EDGES && pl->edge_site[e].how != PROBESITE_NONE ?
			  edge_cost(pl->weight[e]) : pl->edge_site[e].cost;

	pl->hdr.size = sizeof(pl->hdr);
	pl->hdr.abi_major = PT_ABI_MAJOR;
	pl->hdr.abi_minor = PT_ABI_MINOR;
	pl->hdr.flags = o->flags;
	pl->hdr.func_id = o->func_id;
	pl->hdr.mode = o->mode;
	pl->hdr.addr = c->addr;
	pl->hdr.cold_addr = c->cold_addr;
	pl->hdr.len = c->len;
	pl->hdr.cold_len = c->cold_len;
	pl->hdr.site_size = sizeof(struct pt_site);
	pl->hdr.action_size = sizeof(struct pt_action);
	pl->hdr.verify_size = sizeof(struct pt_verify_site);
	snprintf(pl->hdr.name, sizeof(pl->hdr.name), "%s", c->name ? c->name : "");

	/*
	 * Edges mode counts activations in a counter of their own (index
	 * nedges) instead of writing an ENTER record each: a profile costs
	 * nothing per event in the ring buffer.
	 */
	if (o->mode == PT_MODE_EDGES)
		err = push(&es, entry_insn, CLS_ENTER, PT_OP_COUNT, PT_WHEN_ALWAYS, 0, c->nedges, 0);
	else
		err = push(&es, entry_insn, CLS_ENTER, PT_OP_ENTER, PT_WHEN_ALWAYS, 0, 0, 0);
	if (err)
		goto out;
	switch (o->mode) {
	case PT_MODE_PATHS:
		pl->hdr.encoding = PT_ENC_PATH;
		err = plan_paths(pl, &es, c, cost, o);
		break;
	case PT_MODE_EDGES:
		pl->hdr.encoding = 0;
		err = plan_edges(pl, &es, c, cost);
		break;
	default:
		pl->hdr.encoding = o->trace.encoding ? o->trace.encoding : PT_ENC_WITNESS;
		ctx_words = o->trace.words == PLAN_WORDS_BY_CONTEXT &&
			    !has_entry_witness(c, o->trace.enter_witnessed);
		/* guessed weights: the context words get the layout guess too */
		if (!o->weight && ctx_words) {
			ctx_weight = malloc(((size_t)c->nedges + 1) * sizeof(*ctx_weight));
			err = ctx_weight ? heuristic_weights(c, &pl->g, 1, ctx_weight) : -PT_ENOMEM;
			if (err)
				break;
		}
		if (o->flags & PT_PLAN_FRAMED) {
			framed = framed_calls(c, o->trace.enter_witnessed);
			if (!framed) {
				err = -PT_ENOMEM;
				break;
			}
			pl->hdr.flags |= PT_PLAN_FRAMED;
		}
		err = plan_trace(pl, &es, c, cost, pl->hdr.encoding,
				 framed ? framed : o->trace.enter_witnessed,
				 pl->weight, ctx_weight ? ctx_weight : pl->weight, ctx_words);
		if (!err && adapting_words(o) && pl->hdr.nr_ctx_words &&
		    pl->ctx_words[pl->hdr.nr_ctx_words - 1].row < PT_CTX_SWAP_ROWS_MAX)
			pl->hdr.flags |= PT_PLAN_CTX_SWAP;
		/* a caller's row outlives its traced callees */
		if (!err && pl->hdr.nr_ctx_words)
			pl->hdr.flags |= PT_PLAN_CTX_RESTORE;
		break;
	}
	if (err)
		goto out;
	err = build_sites(pl, &es, c);
	if (!err && (o->flags & PT_PLAN_VERIFY))
		err = build_verify(pl, c);
	if (!err)
		err = figures(pl, c);
	if (!err && o->nimplicit && o->mode != PT_MODE_EDGES)
		err = build_implicit(pl, o);
	pl->hdr.total_len = sizeof(pl->hdr) + pl->hdr.nr_sites * sizeof(struct pt_site) +
			    pl->hdr.nr_actions * sizeof(struct pt_action) +
			    pl->hdr.nr_verify * sizeof(struct pt_verify_site) +
			    pl->hdr.nr_implicit * sizeof(struct pt_implicit) +
			    pl->hdr.nr_ppp * sizeof(struct pt_ppp_slot) +
			    pl->hdr.nr_ctx_codes * sizeof(uint32_t) +
			    pl->hdr.nr_ctx_words * sizeof(struct pt_ctx_word) +
			    pl->hdr.nr_path_codes * sizeof(struct pt_path_code) +
			    pl->hdr.nr_path_ranges * sizeof(struct pt_path_range);
out:
	if (err && !pl->reason[0])
		refuse(pl, err, "%s", pt_strerror(err));
	free(es.v);
	free(cost);
	free(ctx_weight);
	free(framed);
	return err;
}

uint8_t plan_site_edge(const struct pt_site *s, const struct pt_action *actions)
{
	uint32_t j;
	uint8_t when;

	if (s->cond == PT_COND_NONE || !s->nr_actions)
		return PT_WHEN_ALWAYS;
	when = actions[s->first_action].when;
	for (j = 1; j < s->nr_actions; j++)
		if (actions[s->first_action + j].when != when)
			return PT_WHEN_ALWAYS;
	return when;
}

void plan_free(struct plan *pl)
{
	free(pl->implicit);
	free(pl->ppp_slots);
	free(pl->ctx_next);
	free(pl->ctx_words);
	free(pl->path_codes);
	free(pl->path_ranges);
	free(pl->sites);
	free(pl->actions);
	free(pl->verify);
	free(pl->site_insn);
	free(pl->verify_insn);
	free(pl->weight);
	free(pl->edge_site);
	free(pl->edge_probed);
	free(pl->in_tree);
	graph_free(&pl->g);
	if (pl->have_pn)
		pathnum_free(&pl->pn);
	if (pl->have_enc)
		encoding_free(&pl->enc);
	memset(pl, 0, sizeof(*pl));
}
