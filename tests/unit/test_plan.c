// SPDX-License-Identifier: GPL-2.0
/*
 * Plans: built for hand-made CFGs in every mode, executed instruction by
 * instruction as the kernel's probes would run them, and checked against
 * an oracle: path numbers decode (with the path decoder) to the walk that
 * ran; counters equal the true counts of their edges; trace bits equal the
 * encoding's bits along the walk. Then the blob round trip and every
 * validation error of plan_parse.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/plan.h>

#include "decode_paths.h"
#include "out.h"
#include "plan_fixture.h"
#include "unit.h"

typedef void (*fx_make)(struct cfg *c);

/*
 * Binds a decoder to the serialized plan the way pathregen does
 * (pr_bind_decoder: emissions read back from the blob's sites) and decodes
 * run's bits with it; compares with the walk.
 */
/* Appends code's word as the module writes it in context row *row, then moves the row on. */
static void want_word(const struct encoding *enc, uint32_t *row, uint32_t code, uint8_t nbits,
		      uint64_t value, struct fx_run *want)
{
	uint32_t b;

	if (enc->ctx_next) {
		encoding_ctx_word(enc, *row, code, &nbits, &value);	/* else the emission's */
		*row = enc->ctx_next[code];
	}
	for (b = 0; b < nbits; b++, want->nbits++)
		if (value >> b & 1)
			want->bits[want->nbits / 64] |= 1ull << (want->nbits % 64);
}

static int trace_decodes_back(const struct cfg *c, const struct plan *pl,
			      const struct fx_run *run, const uint32_t *walk, uint32_t n)
{
	struct pr_func f;
	struct regen_func rf = { 0 };
	struct regen_bitreader br = { .bits = run->bits, .nbits = run->nbits,
				      .ctx_row = REGEN_CTX_NONE };
	uint64_t state[REGEN_STATE_WORDS];
	int64_t partial = 0;
	void *blob = NULL;
	size_t len = 0;
	uint32_t v, k;
	int ok = 0;

	if (plan_serialize(pl, &blob, &len) || pr_func_init(&f, pl->hdr.func_id, "f", 1)) {
		free(blob);
		return 0;
	}
	f.cfg = *c;	/* borrowed: zeroed again before pr_func_free */
	f.addr = c->addr;
	f.cold_addr = c->cold_addr;
	f.mode = pl->hdr.mode;
	f.encoding = pl->hdr.encoding;
	if (pr_func_derive(&f) || pr_bind_decoder(&f, blob, (uint32_t)len, NULL))
		goto out;
	rf.func_id = pl->hdr.func_id;
	rf.g = &f.g;
	rf.model = f.model;
	rf.ops = f.ops;
	rf.ops->begin(&rf, state);
	regen_ctx_set(&br, rf.func_id, REGEN_CTX_ENTRY, 0);	/* as the engine's ENTER */
	for (k = 0, v = f.g.entry; k < n; k++) {
		int64_t e = rf.ops->next_edge(&rf, state, &br, v, &partial);

		if (e != walk[k])
			goto out;
		v = f.g.edges[e].dst;
	}
	ok = v == f.g.exit && br.pos == run->nbits && !br.eof;
out:
	memset(&f.cfg, 0, sizeof(f.cfg));
	pr_func_free(&f);
	free(blob);
	return ok;
}

/* Decodes run's bits with the path decoder and compares with the walk. */
static int decode_matches(const struct plan *pl, const struct fx_run *run,
			  const uint32_t *walk, uint32_t n)
{
	struct regen_func f = { 0 };
	struct regen_bitreader br = { .bits = run->bits, .nbits = run->nbits,
				      .ctx_row = REGEN_CTX_NONE };
	uint64_t state[REGEN_STATE_WORDS];
	int64_t partial = 0;
	uint32_t v = 0, k;

	f.g = &pl->g;
	f.model = &pl->pn;
	f.ops = &regen_decode_paths_ops;
	f.ops->begin(&f, state);
	for (k = 0; k < n; k++) {
		int64_t e = f.ops->next_edge(&f, state, &br, v, &partial);

		if (e != walk[k])
			return 0;
		v = pl->g.edges[e].dst;
	}
	return v == pl->g.exit && br.pos == run->nbits && !br.eof;
}

static void check_mode(fx_make make, uint16_t mode, uint16_t enc, uint32_t *nsites)
{
	struct cfg c;
	struct plan pl;
	struct plan_opts o = {
		.mode = mode, .trace.encoding = enc,
		.func_id = 7, .flags = PT_PLAN_VERIFY
	};
	unsigned int seed = 12345;
	uint32_t walk[64], n, k, t, e;
	int err;

	make(&c);
	err = plan_build(&c, &o, &pl);
	CU_ASSERT_EQUAL_FATAL(err, 0);
	*nsites = pl.hdr.nr_sites;
	/* verify sites for every block with a probeable instruction */
	for (k = 0, t = 0; k < c.nblocks; k++)
		for (e = c.blocks[k].first_insn; e < c.blocks[k].first_insn + c.blocks[k].ninsn; e++)
			if (probesite_probeable(&c, e)) {
				t++;
				break;
			}
	CU_ASSERT_EQUAL(pl.hdr.nr_verify, t);
	/* ENTER first, at the function's first instruction; edges mode counts activations there */
	CU_ASSERT_EQUAL(pl.sites[0].offset, 0);
	CU_ASSERT_EQUAL(pl.sites[0].region, PT_REGION_MAIN);
	if (mode == PT_MODE_EDGES) {
		CU_ASSERT_EQUAL(pl.actions[0].op, PT_OP_COUNT);
		CU_ASSERT_EQUAL(pl.actions[0].arg, c.nedges);
		CU_ASSERT_EQUAL(pl.hdr.nr_counters, c.nedges + 1);
		CU_ASSERT_FATAL(c.nedges < 63);
	} else {
		CU_ASSERT_EQUAL(pl.actions[0].op, PT_OP_ENTER);
	}
	for (t = 0; t < 300; t++) {
		struct fx_run run;

		n = fx_random_walk(&c, walk, 64, &seed);
		CU_ASSERT_FATAL(n > 0);
		fx_execute(&c, &pl.hdr, pl.sites, pl.actions, pl.ctx_next, pl.ctx_words, walk, n,
					   &run);
		CU_ASSERT_EQUAL(run.bad, 0);
		if (mode == PT_MODE_EDGES) {
			/* no record per activation: its counter instead */
			CU_ASSERT_EQUAL(run.enters, 0);
			CU_ASSERT_EQUAL(run.counters[c.nedges], 1);
		} else {
			CU_ASSERT_EQUAL(run.enters, 1);
			CU_ASSERT_EQUAL(run.enter_pos[0], 0);
		}
		if (mode == PT_MODE_PATHS) {
			CU_ASSERT_EQUAL(run.reg, 0);
			CU_ASSERT(decode_matches(&pl, &run, walk, n));
		} else if (mode == PT_MODE_EDGES) {
			uint64_t truth[64] = { 0 };

			for (k = 0; k < n; k++)
				truth[walk[k]]++;
			for (e = 0; e < c.nedges; e++)
				CU_ASSERT_EQUAL(run.counters[e], pl.in_tree[e] ? 0 : truth[e]);
		} else {
			struct fx_run want;

			/*
			 * the encoding's contract: edge bits, then the vertex
			 * entered; with context words each word of its row
			 */
			uint32_t row = pl.enc.ctx_next ? pl.enc.ctx_next[0] : ENC_CTX_NONE;

			memset(&want, 0, sizeof(want));
			for (k = 0; k < n; k++) {
				uint32_t d = pl.g.edges[walk[k]].dst;
				uint32_t xn = pl.enc.vertex_nbits ? pl.enc.vertex_nbits[d] : 0;

				if (pl.enc.edge_nbits[walk[k]])
					want_word(&pl.enc, &row,
						  pl.enc.edge_code ? pl.enc.edge_code[walk[k]] : 0,
						  pl.enc.edge_nbits[walk[k]],
						  pl.enc.edge_value[walk[k]], &want);
				if (xn)
					want_word(&pl.enc, &row,
						  pl.enc.vertex_code ? pl.enc.vertex_code[d] : 0, xn,
						  pl.enc.vertex_value[d], &want);
			}
			CU_ASSERT_EQUAL(run.nbits, want.nbits);
			CU_ASSERT(!memcmp(run.bits, want.bits, sizeof(want.bits)));
			CU_ASSERT(trace_decodes_back(&c, &pl, &run, walk, n));
		}
	}
	plan_free(&pl);
	fx_cfg_free(&c);
}

static void test_paths_mode(void)
{
	uint32_t n;

	check_mode(fx_call_diamond, PT_MODE_PATHS, 0, &n);
	check_mode(fx_loop_cold, PT_MODE_PATHS, 0, &n);
	/* the ud2 block's exit cannot be probed: its path ends on the way in */
	check_mode(fx_bug_exit, PT_MODE_PATHS, 0, &n);
	/* nor a call block that is only a static call: its path end moves onto
	 * the edge into it (once a refusal) */
	check_mode(fx_static_call_block, PT_MODE_PATHS, 0, &n);
}

static void test_edges_mode(void)
{
	uint32_t n;

	check_mode(fx_call_diamond, PT_MODE_EDGES, 0, &n);
	check_mode(fx_loop_cold, PT_MODE_EDGES, 0, &n);
	check_mode(fx_bug_exit, PT_MODE_EDGES, 0, &n);
}

static void test_trace_modes(void)
{
	uint32_t n;

	check_mode(fx_call_diamond, PT_MODE_TRACE, PT_ENC_WITNESS, &n);
	check_mode(fx_loop_cold, PT_MODE_TRACE, PT_ENC_WITNESS, &n);
	check_mode(fx_call_diamond, PT_MODE_TRACE, PT_ENC_BITS, &n);
	check_mode(fx_loop_cold, PT_MODE_TRACE, PT_ENC_BITS, &n);
}

/* Number of PT_OP_EMIT actions at the site on insn i (-1: no site there). */
static int emits_at(const struct cfg *c, const struct plan *pl, uint32_t i)
{
	uint32_t s, a;
	int n = 0;

	for (s = 0; s < pl->hdr.nr_sites; s++) {
		if (pl->site_insn[s] != i)
			continue;
		for (a = pl->sites[s].first_action;
		     a < pl->sites[s].first_action + pl->sites[s].nr_actions; a++)
			n += pl->actions[a].op == PT_OP_EMIT && pl->actions[a].when == PT_WHEN_ALWAYS;
		return n;
	}
	(void)c;
	return -1;
}

/*
 * A call straight into a call vertex with other predecessors: the plan
 * puts a vertex emission before that vertex's call (its first
 * instruction), and executed runs decode back through pathregen's binding.
 */
static void test_trace_vertex_emission(void)
{
	struct cfg c;
	struct plan pl;
	struct plan_opts o = {
		.mode = PT_MODE_TRACE, .trace.encoding = PT_ENC_WITNESS,
		.func_id = 7, .flags = 0
	};
	uint32_t n, enc;

	for (enc = PT_ENC_WITNESS; enc <= PT_ENC_BITS; enc++) {
		check_mode(fx_call_chain, PT_MODE_TRACE, enc, &n);
		fx_call_chain(&c);
		o.trace.encoding = enc;
		CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
		CU_ASSERT_FATAL(pl.enc.vertex_nbits != NULL);
		CU_ASSERT(pl.enc.vertex_nbits[2] > 0);	/* B2, entered from B1's call */
		CU_ASSERT_EQUAL(pl.enc.vertex_nbits[1], 0);
		/* B2's first instruction (insn 5) carries exactly that emission */
		CU_ASSERT_EQUAL(emits_at(&c, &pl, 5), 1);
		plan_free(&pl);
		fx_cfg_free(&c);
	}
}

/*
 * A static key whose jump edge no probe can observe: witness mode puts no
 * witness on it (the blocker moves to the next observable edge) and runs
 * decode back; bit tracing, which needs every branch's bits, refuses with
 * the reason.
 */
static void test_trace_unobservable(void)
{
	struct cfg c;
	struct plan pl;
	struct plan_opts o = {
		.mode = PT_MODE_TRACE, .trace.encoding = PT_ENC_WITNESS,
		.func_id = 7, .flags = 0
	};
	uint32_t n, e;

	check_mode(fx_key_critical, PT_MODE_TRACE, PT_ENC_WITNESS, &n);
	fx_key_critical(&c);
	CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
	for (e = 0; e < c.nedges; e++)
		if (pl.edge_site[e].how == PROBESITE_NONE)
			CU_ASSERT_EQUAL(pl.enc.edge_nbits[e], 0);
	CU_ASSERT_EQUAL(pl.edge_site[1].how, PROBESITE_NONE);	/* B0 -> B2 */
	/*
	 * B2 -> B3 blocks B3's call instead, or (cheaper by the heuristic's
	 * weights: cut_blockers) a vertex witness at B3's entry does
	 */
	CU_ASSERT(pl.enc.edge_nbits[3] > 0 || (pl.enc.vertex_nbits && pl.enc.vertex_nbits[3] > 0));
	CU_ASSERT(!(pl.enc.edge_nbits[3] > 0 && pl.enc.vertex_nbits && pl.enc.vertex_nbits[3] > 0));
	plan_free(&pl);
	o.trace.encoding = PT_ENC_BITS;
	CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EREFUSED);
	CU_ASSERT(strstr(pl.reason, "every branch") != NULL);
	plan_free(&pl);
	fx_cfg_free(&c);

	/*
	 * A call returning into a lone ud2: the only site for B1 -> B2 is in
	 * B1, before the call, so it cannot observe that edge; nothing after
	 * the call can block EXIT, and both encodings refuse.
	 */
	fx_call_bug(&c);
	for (o.trace.encoding = PT_ENC_WITNESS; o.trace.encoding <= PT_ENC_BITS;
	     o.trace.encoding++) {
		CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EREFUSED);
		CU_ASSERT(strstr(pl.reason, "EXIT") != NULL);
		plan_free(&pl);
	}
	fx_cfg_free(&c);
}

/* The placement itself on the call diamond, in paths mode. */
static void test_paths_placement(void)
{
	struct cfg c;
	struct plan pl;
	struct plan_opts o = { .mode = PT_MODE_PATHS, .func_id = 1, .flags = 0 };
	uint32_t k, call_site = UINT32_MAX;

	fx_call_diamond(&c);
	CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
	/* paths: B0 B1|call, B0 B2 ret, start B2 ret: 3 paths, 2 bits */
	CU_ASSERT_EQUAL(pl.pn.npaths, 3);
	CU_ASSERT_EQUAL(pl.bits, 2);
	/* the call vertex's path end sits in B1, before its call at 0x1014 */
	for (k = 0; k < pl.hdr.nr_sites; k++) {
		uint32_t a;

		for (a = pl.sites[k].first_action;
		     a < pl.sites[k].first_action + pl.sites[k].nr_actions; a++)
			if (pl.actions[a].op == PT_OP_PATH_EMIT &&
			    c.insns[pl.site_insn[k]].block == 1)
				call_site = pl.sites[k].offset;
	}
	CU_ASSERT(call_site >= 0xd && call_site < 0x14);
	/* no verify sites unless asked */
	CU_ASSERT_EQUAL(pl.hdr.nr_verify, 0);
	/* every-block baseline: 3 blocks */
	CU_ASSERT_EQUAL(pl.every_block_probes, 3);
	plan_free(&pl);
	fx_cfg_free(&c);
}

static void test_refusals(void)
{
	struct cfg c;
	struct plan pl;
	struct plan_opts o = { .mode = PT_MODE_PATHS, .func_id = 1, .flags = 0 };

	fx_loop_cold(&c);
	c.edges[3].dst = 0;	/* the back edge now jumps to the fentry site */
	CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EREFUSED);
	CU_ASSERT(strstr(pl.reason, "ENTER") != NULL);
	plan_free(&pl);
	fx_cfg_free(&c);

	/* a critical edge out of a static key that must carry a counter */
	fx_loop_cold(&c);
	c.insns[4].kind = CFG_I_KEY;
	c.edges[1].kind = CFG_E_KEY_JUMP;
	c.edges[2].kind = CFG_E_KEY_FALL;
	c.edges[3].dst = 2;	/* B2 self loop: B2 now has two predecessors */
	o.mode = PT_MODE_EDGES;
	/* the tree takes the unobservable edge first, so this still works */
	CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), 0);
	CU_ASSERT(pl.in_tree[2]);
	plan_free(&pl);
	fx_cfg_free(&c);

	fx_call_diamond(&c);
	o.mode = 9;
	CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EINVAL);
	plan_free(&pl);
	/* a path profile is a paths plan, without verify sites */
	o.flags = PT_PLAN_PROFILE;
	o.mode = PT_MODE_TRACE;
	CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EINVAL);
	plan_free(&pl);
	o.mode = PT_MODE_PATHS;
	o.flags = PT_PLAN_PROFILE | PT_PLAN_VERIFY;
	CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EINVAL);
	plan_free(&pl);
	o.flags = PT_PLAN_PROFILE;
	CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), 0);
	{
		struct plan_view v;
		void *b = NULL;
		size_t len = 0;

		CU_ASSERT_EQUAL_FATAL(plan_serialize(&pl, &b, &len), 0);
		CU_ASSERT_EQUAL(plan_parse(b, len, &v, NULL, 0), 0);
		CU_ASSERT_EQUAL(v.hdr.flags, PT_PLAN_PROFILE);
		plan_view_free(&v);
		free(b);
	}
	plan_free(&pl);
	o.flags = 0;
	o.mode = PT_MODE_TRACE;
	o.trace.encoding = PT_ENC_PATH;
	CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EINVAL);
	plan_free(&pl);
	fx_cfg_free(&c);
}

/* A valid blob to mutate. */
static void *valid_blob(size_t *len, uint16_t mode)
{
	struct cfg c;
	struct plan pl;
	struct plan_opts o = { .mode = mode, .func_id = 3, .flags = PT_PLAN_VERIFY };
	void *b = NULL;

	fx_loop_cold(&c);
	CU_ASSERT_FATAL(plan_build(&c, &o, &pl) == 0);
	CU_ASSERT_FATAL(plan_serialize(&pl, &b, len) == 0);
	plan_free(&pl);
	fx_cfg_free(&c);
	return b;
}

static void test_blob_round_trip(void)
{
	uint16_t modes[3] = { PT_MODE_TRACE, PT_MODE_PATHS, PT_MODE_EDGES };
	int m;

	for (m = 0; m < 3; m++) {
		struct cfg c;
		struct plan pl;
		struct plan_opts o = {
			.mode = modes[m],
			.func_id = 3, .flags = PT_PLAN_VERIFY
		};
		struct plan_view v;
		char why[200];
		void *b;
		size_t len;

		fx_loop_cold(&c);
		CU_ASSERT_FATAL(plan_build(&c, &o, &pl) == 0);
		CU_ASSERT_FATAL(plan_serialize(&pl, &b, &len) == 0);
		CU_ASSERT_EQUAL(len, pl.hdr.total_len);
		CU_ASSERT_EQUAL(plan_parse(b, len, &v, why, sizeof(why)), 0);
		CU_ASSERT(!memcmp(&v.hdr, &pl.hdr, sizeof(v.hdr)));
		CU_ASSERT(!memcmp(v.sites, pl.sites, pl.hdr.nr_sites * sizeof(*v.sites)));
		CU_ASSERT(!memcmp(v.actions, pl.actions, pl.hdr.nr_actions * sizeof(*v.actions)));
		CU_ASSERT(!memcmp(v.verify, pl.verify, pl.hdr.nr_verify * sizeof(*v.verify)));
		if (modes[m] == PT_MODE_PATHS)
			CU_ASSERT_EQUAL(plan_view_path_nbits(&v), (int)pl.bits);
		plan_view_free(&v);
		free(b);
		plan_free(&pl);
		fx_cfg_free(&c);
	}
}

/* Applies one mutation to a fresh blob, expects err and a reason containing what. */
struct mutation {
	const char *name;
	uint16_t mode;
	void (*apply)(uint8_t *b, size_t *len);
	int err;
	const char *what;
};

#define H(b) ((struct pt_plan *)(b))
#define SITES(b) ((struct pt_site *)((b) + sizeof(struct pt_plan)))
#define ACTS(b) ((struct pt_action *)((b) + sizeof(struct pt_plan) + \
				       H(b)->nr_sites * sizeof(struct pt_site)))
#define VER(b) ((struct pt_verify_site *)((uint8_t *)ACTS(b) + \
					  H(b)->nr_actions * sizeof(struct pt_action)))

static void m_short(uint8_t *b, size_t *len) { (void)b; *len = 4; }
static void m_hdr_small(uint8_t *b, size_t *len) { (void)len; H(b)->size = 100; }
static void m_trunc(uint8_t *b, size_t *len) { (void)b; *len -= 8; }
static void m_major(uint8_t *b, size_t *len) { (void)len; H(b)->abi_major = PT_ABI_MAJOR + 1; }
static void m_flags(uint8_t *b, size_t *len) { (void)len; H(b)->flags |= 0x100; }
/* a path profile cannot have verify sites (valid_blob's have), nor be a trace */
static void m_profile(uint8_t *b, size_t *len) { (void)len; H(b)->flags |= PT_PLAN_PROFILE; }
static void m_mode(uint8_t *b, size_t *len) { (void)len; H(b)->mode = 9; }
static void m_enc(uint8_t *b, size_t *len) { (void)len; H(b)->encoding = PT_ENC_BITS; }
static void m_counters(uint8_t *b, size_t *len) { (void)len; H(b)->nr_counters = 3; }
static void m_len0(uint8_t *b, size_t *len) { (void)len; H(b)->len = 0; }
static void m_cold(uint8_t *b, size_t *len) { (void)len; H(b)->cold_addr = 0; }
static void m_name(uint8_t *b, size_t *len) { (void)len; memset(H(b)->name, 'x', PT_NAME_MAX); }
static void m_res(uint8_t *b, size_t *len) { (void)len; H(b)->reserved[0] = 1; }
/* PPP only in a path profile, its fields zero without it, its ops only with it */
static void m_ppp_flag(uint8_t *b, size_t *len) { (void)len; H(b)->flags |= PT_PLAN_PPP; }
static void m_ppp_min(uint8_t *b, size_t *len) { (void)len; H(b)->ppp_min = -3; }
static void m_ppp_op(uint8_t *b, size_t *len) { (void)len; ACTS(b)[1].op = PT_OP_PPP_ADD; }
static void m_res0(uint8_t *b, size_t *len) { (void)len; H(b)->reserved0 = 1; }
static void m_sitesz(uint8_t *b, size_t *len) { (void)len; H(b)->site_size = 8; }
static void m_noverify(uint8_t *b, size_t *len) { (void)len; H(b)->flags = 0; }
static void m_region(uint8_t *b, size_t *len) { (void)len; SITES(b)[1].region = 5; }
static void m_offset(uint8_t *b, size_t *len) { (void)len; SITES(b)[1].offset = 0x1000; }
static void m_order(uint8_t *b, size_t *len)
{
	(void)len;
	SITES(b)[2].offset = SITES(b)[1].offset;
}
static void m_cond(uint8_t *b, size_t *len) { (void)len; SITES(b)[1].cond = 16; }
static void m_sflags(uint8_t *b, size_t *len) { (void)len; SITES(b)[1].flags = 0x80; }
static void m_sres(uint8_t *b, size_t *len) { (void)len; SITES(b)[1].reserved = 1; }
static void m_first(uint8_t *b, size_t *len) { (void)len; SITES(b)[1].first_action += 1; }
static void m_nact(uint8_t *b, size_t *len) { (void)len; SITES(b)[0].nr_actions = 0; }
static void m_op(uint8_t *b, size_t *len) { (void)len; ACTS(b)[1].op = 77; }
static void m_when(uint8_t *b, size_t *len) { (void)len; ACTS(b)[1].when = 3; }
static void m_nbits(uint8_t *b, size_t *len) { (void)len; ACTS(b)[1].nbits = 65; }
static void m_enter2(uint8_t *b, size_t *len) { (void)len; ACTS(b)[1] = ACTS(b)[0]; }
static void m_noenter(uint8_t *b, size_t *len) { (void)len; ACTS(b)[0].op = PT_OP_PATH_ADD; }
static void m_arg(uint8_t *b, size_t *len) { (void)len; ACTS(b)[1].arg = 1; }
static void m_vres(uint8_t *b, size_t *len) { (void)len; VER(b)[0].reserved1 = 1; }
static void m_voff(uint8_t *b, size_t *len) { (void)len; VER(b)[0].offset = 0x7000; }

/* Mode-specific: first non-ENTER action of a paths plan becomes a COUNT. */
static void m_count_in_paths(uint8_t *b, size_t *len)
{
	(void)len;
	ACTS(b)[1].op = PT_OP_COUNT;
	ACTS(b)[1].value = 0;
	ACTS(b)[1].nbits = 0;
}

static void m_emit_value(uint8_t *b, size_t *len)
{
	uint32_t k;

	(void)len;
	for (k = 0; k < H(b)->nr_actions; k++)
		if (ACTS(b)[k].op == PT_OP_EMIT) {
			ACTS(b)[k].value = 1ull << ACTS(b)[k].nbits;
			return;
		}
}

static void m_count_arg(uint8_t *b, size_t *len)
{
	uint32_t k;

	(void)len;
	for (k = 0; k < H(b)->nr_actions; k++)
		if (ACTS(b)[k].op == PT_OP_COUNT) {
			ACTS(b)[k].arg = H(b)->nr_counters;
			return;
		}
}

static void m_width(uint8_t *b, size_t *len)
{
	uint32_t k, seen = 0;

	(void)len;
	for (k = 0; k < H(b)->nr_actions; k++)
		if (ACTS(b)[k].op == PT_OP_PATH_EMIT && seen++)
			ACTS(b)[k].nbits++;
}

static void m_uncond(uint8_t *b, size_t *len)
{
	uint32_t k, a;

	(void)len;
	for (k = 0; k < H(b)->nr_sites; k++)
		for (a = SITES(b)[k].first_action;
		     a < SITES(b)[k].first_action + SITES(b)[k].nr_actions; a++)
			if (ACTS(b)[a].when) {
				SITES(b)[k].cond = PT_COND_NONE;
				return;
			}
}

/* Path codes sit last: codes, then ranges. */
#define PRANGES(b) ((struct pt_path_range *)((b) + H(b)->total_len - \
					     H(b)->nr_path_ranges * sizeof(struct pt_path_range)))
#define PCODES(b) ((struct pt_path_code *)((uint8_t *)PRANGES(b) - \
					   H(b)->nr_path_codes * sizeof(struct pt_path_code)))

static void m_pcode_bits(uint8_t *b, size_t *len) { (void)len; PCODES(b)[0].nbits = 33; }
static void m_pcode_value(uint8_t *b, size_t *len)
{
	(void)len;
	PCODES(b)[0].value = 1u << PCODES(b)[0].nbits;
}
static void m_pcode_order(uint8_t *b, size_t *len) { (void)len; PCODES(b)[1].path = 0; }
static void m_pcode_res(uint8_t *b, size_t *len) { (void)len; PCODES(b)[1].reserved0 = 1; }
static void m_prange_lo(uint8_t *b, size_t *len) { (void)len; PRANGES(b)[0].lo = 1; }
static void m_prange_res(uint8_t *b, size_t *len) { (void)len; PRANGES(b)[0].reserved1 = 1; }
static void m_pcode_beyond(uint8_t *b, size_t *len) { (void)len; PCODES(b)[0].path = 1000; }
/* the last code goes: its range has no escape, so one of its paths has no word */
static void m_pcode_drop(uint8_t *b, size_t *len)
{
	struct pt_path_range *r = PRANGES(b);

	memmove((uint8_t *)r - sizeof(struct pt_path_code), r,
		H(b)->nr_path_ranges * sizeof(*r));
	H(b)->nr_path_codes--;
	H(b)->total_len -= sizeof(struct pt_path_code);
	*len -= sizeof(struct pt_path_code);
}
static void m_pcode_npaths(uint8_t *b, size_t *len) { (void)len; H(b)->nr_paths = 0; }
static void m_pcode_trace(uint8_t *b, size_t *len)
{
	(void)len;
	H(b)->nr_paths = 1;	/* a witness trace with path-code fields */
}

/* A bigger header from a newer minor: fine with zero tail, refused otherwise. */
static void grow_header(uint8_t *b, size_t *len, uint8_t fill)
{
	size_t rest = *len - sizeof(struct pt_plan);

	memmove(b + sizeof(struct pt_plan) + 8, b + sizeof(struct pt_plan), rest);
	memset(b + sizeof(struct pt_plan), fill, 8);
	H(b)->size += 8;
	H(b)->total_len += 8;
	*len += 8;
}

static void m_grow_dirty(uint8_t *b, size_t *len) { grow_header(b, len, 0xaa); }

static void test_blob_validation(void)
{
	static const struct mutation ms[] = {
		{ "short", PT_MODE_PATHS, m_short, -PT_ETRUNC, "no header" },
		{ "header size", PT_MODE_PATHS, m_hdr_small, -PT_EFORMAT, "header size" },
		{ "truncated", PT_MODE_PATHS, m_trunc, -PT_ETRUNC, "total_len" },
		{ "major", PT_MODE_PATHS, m_major, -PT_EVERSION, "ABI major" },
		{ "flags", PT_MODE_PATHS, m_flags, -PT_EFORMAT, "unknown flags" },
		{ "mode", PT_MODE_PATHS, m_mode, -PT_EFORMAT, "unknown mode" },
		{ "encoding", PT_MODE_PATHS, m_enc, -PT_EFORMAT, "paths mode with encoding" },
		{ "counters", PT_MODE_PATHS, m_counters, -PT_EFORMAT, "counters outside" },
		{ "len 0", PT_MODE_PATHS, m_len0, -PT_EFORMAT, "length is zero" },
		{ "cold", PT_MODE_PATHS, m_cold, -PT_EFORMAT, "cold part" },
		{ "name", PT_MODE_PATHS, m_name, -PT_EFORMAT, "name" },
		{ "reserved", PT_MODE_PATHS, m_res, -PT_EFORMAT, "reserved[0]" },
		{ "PPP without profile", PT_MODE_PATHS, m_ppp_flag, -PT_EFORMAT, "PPP:" },
		{ "PPP field", PT_MODE_PATHS, m_ppp_min, -PT_EFORMAT, "PPP:" },
		{ "PPP op", PT_MODE_PATHS, m_ppp_op, -PT_EFORMAT, "PPP register op" },
		{ "reserved0", PT_MODE_PATHS, m_res0, -PT_EFORMAT, "reserved0" },
		{ "site size", PT_MODE_PATHS, m_sitesz, -PT_EFORMAT, "element sizes" },
		{ "verify flag", PT_MODE_PATHS, m_noverify, -PT_EFORMAT, "verify sites" },
		{ "region", PT_MODE_PATHS, m_region, -PT_EFORMAT, "region" },
		{ "offset", PT_MODE_PATHS, m_offset, -PT_EFORMAT, "outside its part" },
		{ "order", PT_MODE_PATHS, m_order, -PT_EFORMAT, "not sorted" },
		{ "cond", PT_MODE_PATHS, m_cond, -PT_EFORMAT, "condition" },
		{ "site flags", PT_MODE_PATHS, m_sflags, -PT_EFORMAT, "unknown flags" },
		{ "site reserved", PT_MODE_PATHS, m_sres, -PT_EFORMAT, "reserved" },
		{ "first action", PT_MODE_PATHS, m_first, -PT_EFORMAT, "expected to start" },
		{ "no actions", PT_MODE_PATHS, m_nact, -PT_EFORMAT, "expected to start" },
		{ "op", PT_MODE_PATHS, m_op, -PT_EFORMAT, "unknown op" },
		{ "when", PT_MODE_PATHS, m_when, -PT_EFORMAT, "unknown when" },
		{ "nbits", PT_MODE_PATHS, m_nbits, -PT_EFORMAT, "65 bits" },
		{ "second ENTER", PT_MODE_PATHS, m_enter2, -PT_EFORMAT, "ENTER" },
		{ "no ENTER", PT_MODE_PATHS, m_noenter, -PT_EFORMAT, "ENTER" },
		{ "arg", PT_MODE_PATHS, m_arg, -PT_EFORMAT, "arg 1" },
		{ "verify reserved", PT_MODE_PATHS, m_vres, -PT_EFORMAT, "verify site 0" },
		{ "verify offset", PT_MODE_PATHS, m_voff, -PT_EFORMAT, "verify site 0" },
		{ "COUNT in paths", PT_MODE_PATHS, m_count_in_paths, -PT_EFORMAT, "COUNT" },
		{ "PATH_EMIT widths", PT_MODE_PATHS, m_width, -PT_EFORMAT, "PATH_EMIT of" },
		{ "conditional action", PT_MODE_PATHS, m_uncond, -PT_EFORMAT, "without condition" },
		{ "EMIT value", PT_MODE_TRACE, m_emit_value, -PT_EFORMAT, "EMIT of" },
		{ "COUNT arg", PT_MODE_EDGES, m_count_arg, -PT_EFORMAT, "COUNT of counter" },
		{ "dirty header tail", PT_MODE_PATHS, m_grow_dirty, -PT_EFORMAT, "not zero" },
		{ "profile with verify", PT_MODE_PATHS, m_profile, -PT_EFORMAT, "a path profile" },
		{ "profile of a trace", PT_MODE_TRACE, m_profile, -PT_EFORMAT, "a path profile" },
		{ "path code bits", PT_MODE_PATHS, m_pcode_bits, -PT_EFORMAT, "path code 0" },
		{ "path code value", PT_MODE_PATHS, m_pcode_value, -PT_EFORMAT, "path code 0" },
		{ "path code order", PT_MODE_PATHS, m_pcode_order, -PT_EFORMAT, "path code 1" },
		{ "path code reserved", PT_MODE_PATHS, m_pcode_res, -PT_EFORMAT, "path code 1" },
		{ "path range lo", PT_MODE_PATHS, m_prange_lo, -PT_EFORMAT, "path range 0" },
		{ "path range reserved", PT_MODE_PATHS, m_prange_res, -PT_EFORMAT, "path range 0" },
		{ "path beyond", PT_MODE_PATHS, m_pcode_beyond, -PT_EFORMAT, "path code 0" },
		{ "path unlisted", PT_MODE_PATHS, m_pcode_drop, -PT_EFORMAT, "no escape" },
		{ "path codes without paths", PT_MODE_PATHS, m_pcode_npaths, -PT_EFORMAT,
		  "path codes:" },
		{ "path codes in a trace", PT_MODE_TRACE, m_pcode_trace, -PT_EFORMAT, "path codes:" },
	};
	uint32_t i;

	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		size_t len;
		uint8_t *b = valid_blob(&len, ms[i].mode), *big = calloc(1, len + 64);
		struct plan_view v;
		char why[200];
		int err;

		memcpy(big, b, len);
		ms[i].apply(big, &len);
		err = plan_parse(big, len, &v, why, sizeof(why));
		if (err != ms[i].err || !strstr(why, ms[i].what))
			fprintf(stderr, "\nmutation %s: %d \"%s\"\n", ms[i].name, err, why);
		CU_ASSERT_EQUAL(err, ms[i].err);
		CU_ASSERT(strstr(why, ms[i].what) != NULL);
		plan_view_free(&v);
		free(b);
		free(big);
	}
	/* A newer minor's larger header with a zero tail is accepted. */
	{
		size_t len;
		uint8_t *b = valid_blob(&len, PT_MODE_PATHS), *big = calloc(1, len + 64);
		struct plan_view v;
		char why[200];

		memcpy(big, b, len);
		grow_header(big, &len, 0);
		CU_ASSERT_EQUAL(plan_parse(big, len, &v, why, sizeof(why)), 0);
		CU_ASSERT_EQUAL(v.hdr.size, sizeof(struct pt_plan));
		plan_view_free(&v);
		free(b);
		free(big);
	}
}

/*
 * Preferential path profiling in a plan: on random walks of each fixture
 * the executed PPP_ADD/PPP_SET actions leave the PPP register, at every
 * PATH_EMIT, on the slot of the path just ended exactly when that path is
 * one of the interesting ones (what the kernel counts densely), and the
 * slots survive the blob round trip.
 */
static void test_ppp_plan(void)
{
	void (*const fixtures[])(struct cfg *) = { fx_call_diamond, fx_loop_cold, fx_call_chain,
						   fx_key_critical };
	uint64_t interesting = 0, other = 0;
	unsigned int seed = 777;
	uint32_t f, k, t, j, i;

	for (f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		for (k = 1; k <= 3; k++) {
			struct plan_opts o = { .mode = PT_MODE_PATHS, .func_id = 3,
					       .flags = PT_PLAN_PROFILE | PT_PLAN_PPP,
					       .paths.ppp_hottest = k };
			struct plan_view v;
			struct plan pl;
			struct cfg c;
			uint32_t walk[64], n;
			void *b = NULL;
			size_t len = 0;

			fixtures[f](&c);
			CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
			CU_ASSERT(pl.hdr.nr_ppp >= pl.ppp_interesting);
			CU_ASSERT_EQUAL(pl.ppp_interesting, k < pl.pn.npaths ? k : pl.pn.npaths);
			CU_ASSERT_EQUAL_FATAL(plan_serialize(&pl, &b, &len), 0);
			CU_ASSERT_EQUAL_FATAL(plan_parse(b, len, &v, NULL, 0), 0);
			CU_ASSERT_EQUAL(v.hdr.nr_ppp, pl.hdr.nr_ppp);
			CU_ASSERT_EQUAL(v.hdr.ppp_min, pl.hdr.ppp_min);
			CU_ASSERT(!memcmp(v.ppp_slots, pl.ppp_slots,
					  pl.hdr.nr_ppp * sizeof(*pl.ppp_slots)));
			plan_view_free(&v);
			free(b);
			for (t = 0; t < 200; t++) {
				struct fx_run run;

				n = fx_random_walk(&c, walk, 64, &seed);
				CU_ASSERT_FATAL(n > 0);
				fx_execute(&c, &pl.hdr, pl.sites, pl.actions, pl.ctx_next, pl.ctx_words, walk, n,
					   &run);
				CU_ASSERT_EQUAL(run.bad, 0);
				CU_ASSERT_EQUAL(run.reg2, 0);
				for (j = 0; j < run.nends && j < 16; j++) {
					uint64_t slot = run.end_ppp[j] - (uint64_t)pl.hdr.ppp_min;
					int want = 0, got;

					for (i = 0; i < pl.hdr.nr_ppp; i++)
						want |= pl.ppp_slots[i].path == run.end_path[j];
					got = slot < pl.hdr.nr_ppp &&
					      pl.ppp_slots[slot].path == run.end_path[j];
					CU_ASSERT_EQUAL(got, want);
					interesting += want;
					other += !want;
				}
			}
			plan_free(&pl);
			fx_cfg_free(&c);
		}
	}
	CU_ASSERT(interesting > 0 && other > 0);
	{
		uint64_t beyond[2] = { 1ull << 40, 1ull << 41 };
		struct plan_opts o = { .mode = PT_MODE_PATHS, .func_id = 3,
				       .flags = PT_PLAN_PPP, .paths.ppp_hottest = 2 };
		struct plan pl;
		struct cfg c;

		fx_call_diamond(&c);
		/* PPP is a path profile */
		CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EINVAL);
		plan_free(&pl);
		/* interesting paths of other code: none here */
		o.flags = PT_PLAN_PROFILE | PT_PLAN_PPP;
		o.paths.ppp_paths = beyond;
		o.paths.nppp_paths = 2;
		CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EREFUSED);
		CU_ASSERT(strstr(pl.reason, "ppp:") != NULL);
		plan_free(&pl);
		fx_cfg_free(&c);
	}
}

/*
 * Each mode's options (struct plan_trace_opts, plan_paths_opts): their zero
 * values are the defaults (words by context that adapt when the weights
 * are guessed; path numbers coded by start), each other value turns its
 * feature off or on, and a value no enum has is refused.
 */
static void test_mode_opts(void)
{
	uint64_t weight[64];
	struct plan pl;
	struct cfg c;
	uint32_t e;

	fx_loop_cold(&c);
	{
		struct plan_opts o = { .mode = PT_MODE_TRACE, .func_id = 3 };

		CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
		CU_ASSERT(pl.hdr.nr_ctx_words > 0);
		CU_ASSERT(pl.hdr.flags & PT_PLAN_CTX_SWAP);
		CU_ASSERT(pl.hdr.flags & PT_PLAN_CTX_RESTORE);
		plan_free(&pl);
		o.trace.words = PLAN_WORDS_BY_ROW;
		CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
		CU_ASSERT_EQUAL(pl.hdr.nr_ctx_words, 0);
		CU_ASSERT_EQUAL(pl.hdr.flags & (PT_PLAN_CTX_SWAP | PT_PLAN_CTX_RESTORE), 0);
		plan_free(&pl);
		o.trace.words = PLAN_WORDS_BY_CONTEXT;
		o.trace.adapting_words = PLAN_ADAPTING_NEVER;
		CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
		CU_ASSERT(pl.hdr.nr_ctx_words > 0);
		CU_ASSERT_EQUAL(pl.hdr.flags & PT_PLAN_CTX_SWAP, 0);
		plan_free(&pl);
		/* measured weights: the words adapt only when asked */
		CU_ASSERT_FATAL(c.nedges <= 64);
		for (e = 0; e < c.nedges; e++)
			weight[e] = 1000 + e;
		o.weight = weight;
		o.trace.adapting_words = PLAN_ADAPTING_WHEN_GUESSED;
		CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
		CU_ASSERT(pl.hdr.nr_ctx_words > 0);
		CU_ASSERT_EQUAL(pl.hdr.flags & PT_PLAN_CTX_SWAP, 0);
		plan_free(&pl);
		o.trace.adapting_words = PLAN_ADAPTING_ALWAYS;
		CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
		CU_ASSERT(pl.hdr.flags & PT_PLAN_CTX_SWAP);
		plan_free(&pl);
		o.trace.adapting_words = PLAN_ADAPTING_NEVER + 1;
		CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EINVAL);
		plan_free(&pl);
	}
	{
		struct plan_opts o = { .mode = PT_MODE_PATHS, .func_id = 3 };
		uint32_t codes;

		CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
		codes = pl.hdr.nr_path_codes;
		CU_ASSERT(codes > 1);
		CU_ASSERT(pl.hdr.nr_path_ranges > 0);
		plan_free(&pl);
		o.paths.codes_k = 1;
		CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
		CU_ASSERT(pl.hdr.nr_path_codes > 0 && pl.hdr.nr_path_codes < codes);
		plan_free(&pl);
		o.paths.numbers = PLAN_PATH_NUMBERS_FULL_WIDTH;
		CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
		CU_ASSERT_EQUAL(pl.hdr.nr_path_codes, 0);
		CU_ASSERT_EQUAL(pl.hdr.nr_path_ranges, 0);
		plan_free(&pl);
		o.paths.numbers = PLAN_PATH_NUMBERS_FULL_WIDTH + 1;
		CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EINVAL);
		plan_free(&pl);
	}
	fx_cfg_free(&c);
}

/*
 * plan_opts.costs on the call diamond, B0's taken edge rare (1 of 100
 * runs): for kprobes its site, an int3 at the Jcc firing on every run of
 * B0, is the dearest, so the tree keeps it; for code on edges it costs its
 * own single run, so it is a chord and its one site applies on the taken
 * edge only (plan_site_edge), where an inline copy runs it.
 */
static void test_costs(void)
{
	static const uint64_t w[4] = { 1, 99, 99, 100 };
	struct plan_opts o = { .mode = PT_MODE_EDGES, .func_id = 1, .weight = w };
	struct plan pl;
	struct cfg c;
	uint32_t s, branch = 0;

	fx_call_diamond(&c);
	CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
	CU_ASSERT(pl.in_tree[0]);
	CU_ASSERT(!pl.in_tree[1] || !pl.in_tree[2]);
	CU_ASSERT(!pl.in_tree[3] || !pl.in_tree[2]);
	plan_free(&pl);

	o.costs = PLAN_COSTS_EDGES;
	CU_ASSERT_EQUAL_FATAL(plan_build(&c, &o, &pl), 0);
	CU_ASSERT(!pl.in_tree[0]);
	CU_ASSERT(pl.in_tree[1]);
	CU_ASSERT(!pl.in_tree[2]);
	CU_ASSERT(pl.in_tree[3]);
	for (s = 0; s < pl.hdr.nr_sites; s++) {
		if (pl.sites[s].cond == PT_COND_NONE)
			continue;
		branch++;
		CU_ASSERT_EQUAL(plan_site_edge(&pl.sites[s], pl.actions), PT_WHEN_TAKEN);
	}
	CU_ASSERT_EQUAL(branch, 1);
	plan_free(&pl);
	o.costs = PLAN_COSTS_EDGES + 1;
	CU_ASSERT_EQUAL(plan_build(&c, &o, &pl), -PT_EINVAL);
	plan_free(&pl);
	fx_cfg_free(&c);
}

UNIT_SUITE(plan,
	   { "paths mode: executed probes decode to the walk", test_paths_mode },
	   { "edges mode: counters equal true counts", test_edges_mode },
	   { "trace modes: emitted bits equal the encoding", test_trace_modes },
	   { "trace modes: vertex emission before a shared call vertex", test_trace_vertex_emission },
	   { "trace modes: no witness on an unobservable edge", test_trace_unobservable },
	   { "paths placement on the call diamond", test_paths_placement },
	   { "refusals", test_refusals },
	   { "blob round trip", test_blob_round_trip },
	   { "blob validation errors", test_blob_validation },
	   { "PPP: the second register counts the interesting paths", test_ppp_plan },
	   { "each mode's options and their defaults", test_mode_opts },
	   { "costs: kprobes keep a rare branch edge in the tree, code on edges counts it",
	     test_costs })
