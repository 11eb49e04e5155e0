// SPDX-License-Identifier: GPL-2.0
/*
 * tests/fixtures/trace-v1.0.bin (format 1.0, written once by
 * tf_sample.c's sample_write and committed) must keep decoding to the same
 * sections, records and streams in every later version of the reader. The
 * expected values are the story the sample recorded, spelled out here.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "streams.h"
#include "unit.h"

static const char *fixture_path(void)
{
	const char *dir = getenv("PT_FIXTURES");
	static char path[512];

	snprintf(path, sizeof(path), "%s/trace-v1.0.bin", dir ? dir : "tests/fixtures");
	return path;
}

static void test_v1_0(void)
{
	struct tracefile tf;
	struct tr_records rs = { 0 };
	struct regen_streams ss;
	const struct tf_function *fn;
	const struct regen_stream *t;
	struct cfg c;
	static const struct {
		uint32_t cpu;
		uint16_t type;
		uint32_t arg;
		uint64_t w0;
	} want[] = {
		{ 0, PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_TASK, 42) },
		{ 0, PT_REC_ENTER, 7, 0xffffffff81001234ull },
		{ 0, PT_REC_BITS, 1, 1 },
		{ 1, PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_TASK, 42) },
		{ 1, PT_REC_BITS, 3, 5 },
		{ 1, PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_SOFTIRQ, 1) },
		{ 1, PT_REC_BITS, PT_BITS_PARTIAL, 4 },
		{ 1, PT_REC_LOSS, PT_LOSS_MISSED, 2 },
		{ 0, PT_REC_BITS, 2, 2 },
		{ 0, PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_HARDIRQ, 0) },
		{ 0, PT_REC_ENTER, 7, 0xffffffff81005678ull },
		{ 0, PT_REC_BITS, 1, 0 },
	};
	uint32_t i;

	CU_ASSERT_EQUAL_FATAL(tracefile_read(fixture_path(), &tf), 0);
	CU_ASSERT_EQUAL(tf.major, 1);
	CU_ASSERT_EQUAL(tf.minor, 0);
	CU_ASSERT_EQUAL(tf.nr_cpus, 2);
	CU_ASSERT_EQUAL(tf.page_size, 4096);
	CU_ASSERT_STRING_EQUAL(tf.release, "6.1.0-56-amd64");
	CU_ASSERT_EQUAL(tf.missed, 2);
	CU_ASSERT_EQUAL(tf.unknown_sections, 1);
	CU_ASSERT_EQUAL_FATAL(tf.nfuncs, 1);
	fn = tracefile_func(&tf, 7);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fn);
	CU_ASSERT_EQUAL(fn->addr, 0xffffffffc0001000ull);
	CU_ASSERT_EQUAL(fn->len, 16);
	CU_ASSERT_EQUAL(fn->code[0], 0x48);
	CU_ASSERT_EQUAL(fn->code[8], 0xc3);
	CU_ASSERT_EQUAL(fn->plan_len, offsetof(struct pt_plan, nr_ctx_codes) /* the 1.0 header */ + 2 * sizeof(struct pt_site) +
				       3 * sizeof(struct pt_action));
	CU_ASSERT_EQUAL_FATAL(cfg_blob_decode(fn->cfg, fn->cfg_len, &c), 0);
	CU_ASSERT_STRING_EQUAL(c.name, "sample_fn");
	CU_ASSERT_EQUAL(c.nblocks, 3);
	CU_ASSERT_EQUAL(c.nedges, 4);
	CU_ASSERT_EQUAL(c.edges[1].kind, CFG_E_TAKEN);
	CU_ASSERT_EQUAL(c.blocks[1].flags, CFG_BF_CALL);
	CU_ASSERT_STRING_EQUAL(c.insns[3].target_name, "helper");
	cfg_blob_free(&c);

	CU_ASSERT_EQUAL_FATAL(tr_decode_tracefile(&rs, &tf), 0);
	CU_ASSERT_EQUAL_FATAL(rs.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < rs.n; i++) {
		CU_ASSERT_EQUAL(rs.recs[i].cpu, want[i].cpu);
		CU_ASSERT_EQUAL(rs.recs[i].type, want[i].type);
		CU_ASSERT_EQUAL(rs.recs[i].arg, want[i].arg);
		CU_ASSERT_EQUAL(tr_body(&rs, &rs.recs[i])[0], want[i].w0);
	}
	CU_ASSERT_EQUAL(rs.recs[0].ts, 1000);
	CU_ASSERT_EQUAL(rs.recs[3].ts, 2000);
	CU_ASSERT_EQUAL(rs.recs[11].ts, 3003);

	CU_ASSERT_EQUAL_FATAL(regen_streams_build(&rs, &ss), 0);
	CU_ASSERT_EQUAL(ss.nstreams, 3);
	t = regen_streams_find(&ss, PT_OWNER(PT_OWNER_TASK, 42));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL(t->nbits, 6);
	CU_ASSERT_EQUAL(t->bits[0], 0x2d);	/* 1, then 0 1 (late flush), then 1 0 1 */
	CU_ASSERT_EQUAL(t->nmarkers, 1);
	regen_streams_free(&ss);
	tr_records_free(&rs);
	tracefile_free(&tf);
}

UNIT_SUITE(fixture, { "trace-v1.0.bin keeps decoding", test_v1_0 })
