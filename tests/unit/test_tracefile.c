// SPDX-License-Identifier: GPL-2.0
/*
 * trace.bin writer and reader: round trip, every malformed header and
 * section giving its error and offset, truncation at every byte giving an
 * error with a valid prefix, and CFG blobs both ways.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "rbpage.h"
#include "tf_sample.h"
#include "unit.h"

static void check_sample_function(const struct tf_function *fn)
{
	struct cfg c, want;
	uint32_t plan_len, i;
	const void *plan = sample_plan(&plan_len);

	CU_ASSERT_EQUAL(fn->func_id, SAMPLE_FUNC_ID);
	CU_ASSERT_EQUAL(fn->addr, SAMPLE_ADDR);
	CU_ASSERT_EQUAL(fn->len, SAMPLE_LEN);
	CU_ASSERT_EQUAL(fn->cold_len, 0);
	CU_ASSERT_EQUAL_FATAL(fn->name_len, 9);
	CU_ASSERT_EQUAL(memcmp(fn->name, "sample_fn", 9), 0);
	CU_ASSERT_EQUAL(memcmp(fn->code, sample_code, SAMPLE_LEN), 0);
	CU_ASSERT_EQUAL_FATAL(fn->plan_len, plan_len);
	CU_ASSERT_EQUAL(memcmp(fn->plan, plan, plan_len), 0);
	CU_ASSERT_EQUAL_FATAL(cfg_blob_decode(fn->cfg, fn->cfg_len, &c), 0);
	sample_cfg(&want);
	CU_ASSERT_STRING_EQUAL(c.name, "sample_fn");
	CU_ASSERT_EQUAL(c.addr, want.addr);
	CU_ASSERT_EQUAL(c.len, want.len);
	CU_ASSERT_EQUAL_FATAL(c.nblocks, 3);
	CU_ASSERT_EQUAL_FATAL(c.ninsns, 5);
	CU_ASSERT_EQUAL_FATAL(c.nedges, 4);
	CU_ASSERT_EQUAL(memcmp(c.blocks, want.blocks, 3 * sizeof(*c.blocks)), 0);
	CU_ASSERT_EQUAL(memcmp(c.edges, want.edges, 4 * sizeof(*c.edges)), 0);
	for (i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(c.insns[i].addr, want.insns[i].addr);
		CU_ASSERT_EQUAL(c.insns[i].len, want.insns[i].len);
		CU_ASSERT_EQUAL(c.insns[i].kind, want.insns[i].kind);
		CU_ASSERT_EQUAL(c.insns[i].cc, want.insns[i].cc);
		CU_ASSERT_EQUAL(c.insns[i].flags, want.insns[i].flags);
		CU_ASSERT_EQUAL(c.insns[i].block, want.insns[i].block);
		CU_ASSERT_EQUAL(c.insns[i].target, want.insns[i].target);
		CU_ASSERT_EQUAL(!c.insns[i].target_name, !want.insns[i].target_name);
	}
	CU_ASSERT_STRING_EQUAL(c.insns[3].target_name, "helper");
	cfg_blob_free(&c);
}

static void test_round_trip(void)
{
	struct tracefile tf;
	size_t size;
	uint8_t *b = sample_bytes(&size);

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL(size % 8, 0);
	CU_ASSERT_EQUAL_FATAL(tracefile_parse(b, size, &tf), 0);
	CU_ASSERT(tf.complete);
	CU_ASSERT_EQUAL(tf.err, 0);
	CU_ASSERT_EQUAL(tf.major, PT_FILE_MAJOR);
	CU_ASSERT(tf.has_system);
	CU_ASSERT_EQUAL(tf.nr_cpus, 2);
	CU_ASSERT_EQUAL(tf.page_size, SAMPLE_PAGE);
	CU_ASSERT_STRING_EQUAL(tf.release, "6.1.0-56-amd64");
	CU_ASSERT_EQUAL(tf.start_ns, 1700000000000000000ull);
	CU_ASSERT_EQUAL_FATAL(tf.nfuncs, 1);
	check_sample_function(&tf.funcs[0]);
	CU_ASSERT_PTR_EQUAL(tracefile_func(&tf, SAMPLE_FUNC_ID), &tf.funcs[0]);
	CU_ASSERT_PTR_NULL(tracefile_func(&tf, 8));
	CU_ASSERT_EQUAL_FATAL(tf.npages, 3);
	CU_ASSERT_EQUAL(tf.pages[0].cpu, 0);
	CU_ASSERT_EQUAL(tf.pages[1].cpu, 1);
	CU_ASSERT_EQUAL(tf.pages[2].cpu, 0);
	CU_ASSERT_EQUAL(tf.pages[2].nr_pages, 1);
	CU_ASSERT_EQUAL(tf.unknown_sections, 1);
	CU_ASSERT(tf.has_loss);
	CU_ASSERT_EQUAL(tf.missed, 2);
	CU_ASSERT_EQUAL(tf.dropped, 0);
	tracefile_free(&tf);
	free(b);
}

/* Parses a patched copy; returns the error and fills *off with the reported offset. */
static int parse_patched(const uint8_t *b, size_t size, size_t at, const void *bytes, size_t n,
			 uint64_t *off, uint32_t *nfuncs)
{
	uint8_t *c = malloc(size);
	struct tracefile tf;
	int err;

	memcpy(c, b, size);
	memcpy(c + at, bytes, n);
	err = tracefile_parse(c, size, &tf);
	CU_ASSERT_EQUAL(err, tf.err);
	*off = tf.err_off;
	if (nfuncs)
		*nfuncs = tf.nfuncs;
	if (err)
		CU_ASSERT(tf.err_msg[0] != 0);
	tracefile_free(&tf);
	free(c);
	return err;
}

/* Offsets of the sample's sections: header 40, then SYSTEM. */
static size_t section_at(const uint8_t *b, size_t size, uint32_t id)
{
	size_t off = sizeof(struct pt_file_header);

	while (off + 16 <= size) {
		struct pt_section s;

		memcpy(&s, b + off, sizeof(s));
		if (s.id == id)
			return off;
		off += 16 + ((s.size + 7) & ~7ull);
	}
	return 0;
}

static void test_malformed_header(void)
{
	size_t size;
	uint8_t *b = sample_bytes(&size);
	uint64_t off;
	uint32_t v32;
	uint16_t v16;
	struct tracefile tf;

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL(parse_patched(b, size, 0, "PTTRACF", 8, &off, NULL), -PT_EFORMAT);
	CU_ASSERT_EQUAL(off, 0);
	v32 = 0x04030201;	/* written by the other endianness */
	CU_ASSERT_EQUAL(parse_patched(b, size, 16, &v32, 4, &off, NULL), -PT_EVERSION);
	CU_ASSERT_EQUAL(off, 16);
	v16 = PT_FILE_MAJOR + 1;
	CU_ASSERT_EQUAL(parse_patched(b, size, 12, &v16, 2, &off, NULL), -PT_EVERSION);
	CU_ASSERT_EQUAL(off, 12);
	v16 = PT_FILE_MINOR + 5;	/* a newer minor is fine */
	CU_ASSERT_EQUAL(parse_patched(b, size, 14, &v16, 2, &off, NULL), 0);
	v32 = 1;
	CU_ASSERT_EQUAL(parse_patched(b, size, 20, &v32, 4, &off, NULL), -PT_EFORMAT);	/* flags */
	v32 = 12;
	CU_ASSERT_EQUAL(parse_patched(b, size, 8, &v32, 4, &off, NULL), -PT_EFORMAT);	/* size */
	v32 = 0x7fffffff;
	CU_ASSERT_EQUAL(parse_patched(b, size, 8, &v32, 4, &off, NULL), -PT_ETRUNC);
	CU_ASSERT_EQUAL(tracefile_parse(b, 7, &tf), -PT_ETRUNC);
	tracefile_free(&tf);
	CU_ASSERT_EQUAL(tracefile_parse(b, 0, &tf), -PT_ETRUNC);
	tracefile_free(&tf);
	free(b);
}

/* The structure alone: a file without checksums (2.0), whose patches no sum catches. */
static void test_malformed_sections(void)
{
	size_t size;
	uint8_t *b = sample_bytes(&size);
	size_t sys, fn, pages, loss, end;
	uint64_t off, v64;
	uint32_t v32, nfuncs;

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	size = tf_strip_checksums(b, size);
	sys = section_at(b, size, PT_SEC_SYSTEM);
	fn = section_at(b, size, PT_SEC_FUNCTION);
	pages = section_at(b, size, PT_SEC_PAGES_TRIMMED);
	loss = section_at(b, size, PT_SEC_LOSS);
	end = section_at(b, size, PT_SEC_END);
	CU_ASSERT_EQUAL_FATAL(sys, sizeof(struct pt_file_header));
	CU_ASSERT_FATAL(fn && pages && loss && end == size - 16);

	v32 = 1;	/* section flags must be zero */
	CU_ASSERT_EQUAL(parse_patched(b, size, fn + 4, &v32, 4, &off, &nfuncs), -PT_EFORMAT);
	CU_ASSERT_EQUAL(off, fn);
	v64 = size;	/* a section larger than the file */
	CU_ASSERT_EQUAL(parse_patched(b, size, pages + 8, &v64, 8, &off, &nfuncs), -PT_ETRUNC);
	CU_ASSERT_EQUAL(off, pages);
	CU_ASSERT_EQUAL(nfuncs, 1);	/* the FUNCTION before it is kept */
	v64 = ~0ull;	/* size overflow */
	CU_ASSERT_EQUAL(parse_patched(b, size, pages + 8, &v64, 8, &off, NULL), -PT_ETRUNC);
	v32 = 10;	/* FUNCTION name_len no longer adds up */
	CU_ASSERT_EQUAL(parse_patched(b, size, fn + 16 + offsetof(struct pt_sec_function, name_len),
				      &v32, 4, &off, &nfuncs), -PT_EFORMAT);
	CU_ASSERT_EQUAL(off, fn);
	CU_ASSERT_EQUAL(nfuncs, 0);
	v32 = 8;	/* struct size too small for its fields */
	CU_ASSERT_EQUAL(parse_patched(b, size, fn + 16, &v32, 4, &off, NULL), -PT_EFORMAT);
	v32 = 0;	/* CFG blob magic */
	CU_ASSERT_EQUAL(parse_patched(b, size, fn + 16 + sizeof(struct pt_sec_function) + 9 +
				      SAMPLE_LEN, &v32, 4, &off, NULL), -PT_EFORMAT);
	v32 = 100;	/* SYSTEM release_len */
	CU_ASSERT_EQUAL(parse_patched(b, size, sys + 16 + offsetof(struct pt_sec_system, release_len),
				      &v32, 4, &off, NULL), -PT_EFORMAT);
	v32 = 17;	/* PAGES page_size */
	CU_ASSERT_EQUAL(parse_patched(b, size, pages + 16 + offsetof(struct pt_sec_pages, page_size),
				      &v32, 4, &off, NULL), -PT_EFORMAT);
	v32 = 2;	/* PAGES cpu beyond SYSTEM's nr_cpus */
	CU_ASSERT_EQUAL(parse_patched(b, size, pages + 16 + offsetof(struct pt_sec_pages, cpu),
				      &v32, 4, &off, NULL), -PT_EFORMAT);
	v32 = TR_CPUS_MAX + 1;	/* SYSTEM: more CPUs than a kernel has */
	CU_ASSERT_EQUAL(parse_patched(b, size, sys + 16 + offsetof(struct pt_sec_system, nr_cpus),
				      &v32, 4, &off, NULL), -PT_EFORMAT);
	CU_ASSERT_EQUAL(off, sys);
	v32 = 2;	/* nr_pages no longer fills the section */
	CU_ASSERT_EQUAL(parse_patched(b, size, pages + 16 + offsetof(struct pt_sec_pages, nr_pages),
				      &v32, 4, &off, NULL), -PT_EFORMAT);
	v32 = PT_SEC_SYSTEM;	/* LOSS turned into a second SYSTEM */
	CU_ASSERT_EQUAL(parse_patched(b, size, loss, &v32, 4, &off, NULL), -PT_EFORMAT);
	CU_ASSERT_EQUAL(off, loss);
	v32 = 1234;	/* an unknown id is skipped, not an error */
	CU_ASSERT_EQUAL(parse_patched(b, size, loss, &v32, 4, &off, NULL), 0);
	v64 = 8;	/* END with a payload */
	CU_ASSERT_EQUAL(parse_patched(b, size, end + 8, &v64, 8, &off, NULL), -PT_ETRUNC);
	v32 = PT_SEC_END;	/* END early: bytes after it */
	CU_ASSERT_EQUAL(parse_patched(b, size, loss, &v32, 4, &off, NULL), -PT_EFORMAT);
	free(b);
}

/* Cutting the file anywhere: an error, never a crash, and what was read is a valid prefix. */
static void test_truncation_everywhere(void)
{
	size_t size, k;
	uint8_t *b = sample_bytes(&size);
	struct tracefile full, tf;

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL_FATAL(tracefile_parse(b, size, &full), 0);
	for (k = 0; k < size; k++) {
		uint8_t *cut = malloc(k ? k : 1);
		uint32_t i;
		int err;

		memcpy(cut, b, k);
		err = tracefile_parse(cut, k, &tf);
		CU_ASSERT(err == -PT_ETRUNC || err == -PT_EFORMAT);
		CU_ASSERT(tf.err_off <= k);
		CU_ASSERT(!tf.complete);
		CU_ASSERT(tf.nfuncs <= full.nfuncs);
		CU_ASSERT(tf.npages <= full.npages);
		CU_ASSERT_EQUAL(tf.corrupt_pages + tf.corrupt_sections, 0);
		for (i = 0; i < tf.nfuncs; i++)
			check_sample_function(&tf.funcs[i]);
		/* every page before the cut, whole; only the last section may be cut */
		for (i = 0; i < tf.npages; i++) {
			uint32_t p;

			CU_ASSERT_EQUAL(tf.pages[i].cpu, full.pages[i].cpu);
			CU_ASSERT(tf.pages[i].cut == (i + 1 == tf.npages &&
						      tf.pages[i].nr_pages < full.pages[i].nr_pages));
			CU_ASSERT_FATAL(tf.pages[i].nr_pages <= full.pages[i].nr_pages);
			for (p = 0; p < tf.pages[i].nr_pages; p++) {
				CU_ASSERT_EQUAL_FATAL(tf.pages[i].page[p].len,
						      full.pages[i].page[p].len);
				CU_ASSERT_EQUAL(memcmp(tf.pages[i].page[p].data,
						       full.pages[i].page[p].data,
						       full.pages[i].page[p].len), 0);
				CU_ASSERT(tf.pages[i].page[p].data + tf.pages[i].page[p].len <=
					  tf.buf + k);
			}
		}
		/* a page the cut spares is kept */
		if (tf.npages && tf.pages[tf.npages - 1].cut) {
			const struct tf_pages *ps = &tf.pages[tf.npages - 1];
			const uint8_t *next = ps->nr_pages ?
				ps->page[ps->nr_pages - 1].data + ps->page[ps->nr_pages - 1].len :
				ps->data;

			CU_ASSERT(next + full.pages[tf.npages - 1].page[ps->nr_pages].len > tf.buf + k);
		}
		tracefile_free(&tf);
		free(cut);
	}
	tracefile_free(&full);
	free(b);
}

#define TP 256u	/* the pages of test_pages_trimmed */

/* Writes nr pages of TP bytes as one PAGES_TRIMMED section (or PAGES) and END into a buffer. */
static uint8_t *write_pages(const uint8_t *pages, uint32_t nr, int whole, size_t *size,
			    uint64_t *stored)
{
	struct pt_sec_pages s = { .size = sizeof(s), .cpu = 0, .page_size = TP, .nr_pages = nr };
	char *buf = NULL;
	FILE *f = open_memstream(&buf, size);
	struct tf_writer w;
	uint8_t sec[sizeof(s) + 3 * TP];

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	tfw_init(&w, f);
	if (whole) {
		memcpy(sec, &s, sizeof(s));
		memcpy(sec + sizeof(s), pages, (size_t)nr * TP);
		tfw_section(&w, PT_SEC_PAGES, sec, sizeof(s) + (size_t)nr * TP);
	} else {
		CU_ASSERT_EQUAL(tfw_pages(&w, 0, TP, nr, pages, stored), 0);
	}
	CU_ASSERT_EQUAL(tfw_close(&w), 0);
	fclose(f);
	return (uint8_t *)buf;
}

/* The records of a file's pages, as tr_decode_tracefile reads them. */
static int decode_file(const uint8_t *b, size_t size, struct tr_records *rs, struct tracefile *tf)
{
	int err = tracefile_parse(b, size, tf);

	memset(rs, 0, sizeof(*rs));
	return err ? err : tr_decode_tracefile(rs, tf);
}

/*
 * PAGES_TRIMMED: each page stored up to the end of its data (a
 * stored lost-events count included, 8-aligned), so what follows the data
 * on the page never reaches the file; a page whose commit the decoder
 * refuses is stored whole. The records read back equal those of the
 * whole pages (as PAGES, which readers still take). A page whose stored
 * bytes the section does not hold, or bytes left after the last page, are
 * malformed.
 */
static void test_pages_trimmed(void)
{
	static uint8_t pages[3 * TP];
	uint64_t body[2] = { PT_OWNER(PT_OWNER_TASK, 7), 100 }, stored = 0, commit;
	struct tr_records ra, rb;
	struct tracefile ta, tb;
	struct rbpage pg;
	uint8_t rec[64], *a, *b;
	size_t asize, bsize, sec, i;
	uint32_t len;

	rbpage_init(&pg, pages, TP, 10);
	len = rbrec(rec, PT_REC_OWNER, 0, body, 2);
	CU_ASSERT_EQUAL_FATAL(rbpage_add(&pg, 11, rec, len), 0);
	body[0] = 0x15;
	len = rbrec(rec, PT_REC_BITS, 5, body, 1);
	CU_ASSERT_EQUAL_FATAL(rbpage_add(&pg, 12, rec, len), 0);
	memset(pages + 16 + pg.tail, 0xa5, TP - 16 - pg.tail);	/* stale bytes after the data */
	/* page 1: a commit with an unknown bit, stored whole (the decoder's loss) */
	rbpage_init(&pg, pages + TP, TP, 20);
	CU_ASSERT_EQUAL_FATAL(rbpage_add(&pg, 21, rec, len), 0);
	memcpy(&commit, pages + TP + 8, 8);
	commit |= 1ull << 28;
	memcpy(pages + TP + 8, &commit, 8);
	/* page 2: missed events, their count stored after the data */
	rbpage_init(&pg, pages + 2 * TP, TP, 30);
	CU_ASSERT_EQUAL_FATAL(rbpage_add(&pg, 31, rec, len), 0);
	rbpage_set_missed(&pg, 9);

	CU_ASSERT_EQUAL(tf_page_stored_len(pages, TP), 16 + 28 + 20);	/* two events */
	CU_ASSERT_EQUAL(tf_page_stored_len(pages + TP, TP), TP);
	CU_ASSERT_EQUAL(tf_page_stored_len(pages + 2 * TP, TP), 16 + 20 + 8 + 4);	/* aligned */
	a = write_pages(pages, 3, 0, &asize, &stored);
	b = write_pages(pages, 3, 1, &bsize, NULL);
	CU_ASSERT_EQUAL(stored, 64 + TP + 48);
	CU_ASSERT_EQUAL_FATAL(decode_file(a, asize, &ra, &ta), 0);
	CU_ASSERT_EQUAL_FATAL(decode_file(b, bsize, &rb, &tb), 0);
	CU_ASSERT_EQUAL(ta.pages[0].trimmed, 1);
	CU_ASSERT_EQUAL(ta.pages[0].bytes, stored);
	CU_ASSERT_EQUAL(tb.pages[0].bytes, 3 * TP);
	CU_ASSERT_EQUAL(ra.stored_bytes, stored);
	CU_ASSERT_EQUAL(asize + 3 * TP - stored, bsize);
	/* OWNER, BITS; a corrupt loss; LOSS(OVERRUN, 9), BITS: the same either way */
	CU_ASSERT_EQUAL_FATAL(ra.n, 5);
	CU_ASSERT_EQUAL_FATAL(rb.n, ra.n);
	CU_ASSERT_EQUAL(ra.bad_pages, 1);
	CU_ASSERT_EQUAL(ra.recs[3].type, PT_REC_LOSS);
	CU_ASSERT_EQUAL(tr_body(&ra, &ra.recs[3])[0], 9);
	for (i = 0; i < ra.n; i++) {
		CU_ASSERT_EQUAL(ra.recs[i].type, rb.recs[i].type);
		CU_ASSERT_EQUAL(ra.recs[i].arg, rb.recs[i].arg);
		CU_ASSERT_EQUAL_FATAL(ra.recs[i].nwords, rb.recs[i].nwords);
		CU_ASSERT_EQUAL(memcmp(tr_body(&ra, &ra.recs[i]), tr_body(&rb, &rb.recs[i]),
				       8 * ra.recs[i].nwords), 0);
	}
	tr_records_free(&ra);
	tr_records_free(&rb);
	tracefile_free(&ta);
	tracefile_free(&tb);

	asize = tf_strip_checksums(a, asize);	/* the page headers alone (2.0) */
	sec = section_at(a, asize, PT_SEC_PAGES_TRIMMED);
	CU_ASSERT_FATAL(sec != 0);
	{
		size_t p2 = sec + 16 + sizeof(struct pt_sec_pages) + 64 + TP;
		uint64_t off, v64;
		uint32_t v32;

		/* page 2's data 180 bytes longer: more than the section holds */
		memcpy(&v64, pages + 2 * TP + 8, 8);
		v64 = (v64 & ~0x7ffffffull) | 200;
		CU_ASSERT_EQUAL(parse_patched(a, asize, p2 + 8, &v64, 8, &off, NULL), -PT_EFORMAT);
		CU_ASSERT_EQUAL(off, p2);
		v32 = 2;	/* two pages leave the third's bytes over */
		CU_ASSERT_EQUAL(parse_patched(a, asize, sec + 16 + offsetof(struct pt_sec_pages,
									 nr_pages),
					      &v32, 4, &off, NULL), -PT_EFORMAT);
		CU_ASSERT_EQUAL(off, sec);
		v32 = 4;	/* a fourth page past the end */
		CU_ASSERT_EQUAL(parse_patched(a, asize, sec + 16 + offsetof(struct pt_sec_pages,
									 nr_pages),
					      &v32, 4, &off, NULL), -PT_EFORMAT);
	}
	free(a);
	free(b);
}

static void test_cfg_blob_malformed(void)
{
	struct cfg c, got;
	uint8_t *blob;
	uint32_t len, k;
	struct {
		size_t at;
		uint32_t value;
	} bad[] = {
		{ 0, 0 },	/* magic */
		{ offsetof(struct pt_cfg_hdr, nr_blocks), 4 },
		{ offsetof(struct pt_cfg_hdr, nr_blocks), 0 },
		{ offsetof(struct pt_cfg_hdr, block_size), 4 },
		{ offsetof(struct pt_cfg_hdr, name), 0 },
		/* block 1's first_insn beyond the instructions */
		{ sizeof(struct pt_cfg_hdr) + 32 + offsetof(struct pt_cfg_block, first_insn), 5 },
		/* block 0's successors beyond the edges */
		{ sizeof(struct pt_cfg_hdr) + offsetof(struct pt_cfg_block, nr_succ), 9 },
		/* insn 0 in block 3 */
		{ sizeof(struct pt_cfg_hdr) + 3 * 32 + offsetof(struct pt_cfg_insn, block), 3 },
		/* insn 3's target name beyond the names */
		{ sizeof(struct pt_cfg_hdr) + 3 * 32 + 3 * 32 + offsetof(struct pt_cfg_insn, target_name),
		  1000 },
		/* edge 0 from block 7 */
		{ sizeof(struct pt_cfg_hdr) + 3 * 32 + 5 * 32, 7 },
		/* edge 3 to block 4 (EXIT is 3) */
		{ sizeof(struct pt_cfg_hdr) + 3 * 32 + 5 * 32 + 3 * 16 + 4, 4 },
		/* edge 1 from block 1: not in block 0's successor range */
		{ sizeof(struct pt_cfg_hdr) + 3 * 32 + 5 * 32 + 1 * 16, 1 },
	};

	sample_cfg(&c);
	CU_ASSERT_EQUAL_FATAL(cfg_blob_encode(&c, &blob, &len), 0);
	CU_ASSERT_EQUAL(len % 8, 0);
	CU_ASSERT_EQUAL_FATAL(cfg_blob_decode(blob, len, &got), 0);
	cfg_blob_free(&got);
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		uint8_t *copy = malloc(len);

		memcpy(copy, blob, len);
		memcpy(copy + bad[k].at, &bad[k].value, 4);
		CU_ASSERT_EQUAL(cfg_blob_decode(copy, len, &got), -PT_EFORMAT);
		free(copy);
	}
	for (k = 0; k < len; k++) {
		int err = cfg_blob_decode(blob, k, &got);

		CU_ASSERT(err == -PT_ETRUNC || err == -PT_EFORMAT);
	}
	free(blob);
}

/* tf_function_cfg: the recorded CFG, refused when it is another function's; block names. */
static void test_function_cfg(void)
{
	struct tracefile tf;
	struct tf_function fn;
	struct cfg c;
	size_t size;
	uint8_t *b = sample_bytes(&size);
	char buf[64];

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL_FATAL(tracefile_parse(b, size, &tf), 0);
	CU_ASSERT_EQUAL_FATAL(tf.nfuncs, 1);
	fn = tf.funcs[0];
	CU_ASSERT_EQUAL_FATAL(tf_function_cfg(&fn, &c), 0);
	CU_ASSERT_EQUAL(c.addr, SAMPLE_ADDR);
	CU_ASSERT_EQUAL(c.nblocks, 3);
	CU_ASSERT_STRING_EQUAL(cfg_block_name(&c, "f", SAMPLE_ADDR, 0, 0, buf, sizeof(buf)),
			       "f+0x0");
	CU_ASSERT_STRING_EQUAL(cfg_block_name(&c, "f", SAMPLE_ADDR, 0, 2, buf, sizeof(buf)),
			       "f+0x8");
	CU_ASSERT_STRING_EQUAL(cfg_block_name(&c, "f", SAMPLE_ADDR, 0, 3, buf, sizeof(buf)), "f#3");
	/* a block in the .cold part is named from it */
	c.blocks[2].flags |= CFG_BF_COLD;
	CU_ASSERT_STRING_EQUAL(cfg_block_name(&c, "f", SAMPLE_ADDR, SAMPLE_ADDR + 4, 2, buf,
					      sizeof(buf)), "f.cold+0x4");
	cfg_blob_free(&c);
	fn.addr = SAMPLE_ADDR + 1;	/* the blob is not this function's */
	CU_ASSERT_EQUAL(tf_function_cfg(&fn, &c), -PT_EFORMAT);
	cfg_blob_free(&c);
	fn.cfg_len = 8;
	fn.addr = SAMPLE_ADDR;
	CU_ASSERT_EQUAL(tf_function_cfg(&fn, &c), -PT_ETRUNC);
	cfg_blob_free(&c);
	tracefile_free(&tf);
	free(b);
}

/* Writes a file with one section (id, payload) and END into memory; returns its bytes. */
static uint8_t *one_section_file(uint32_t id, const void *payload, size_t n, size_t *size)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, size);
	struct tf_writer w;

	tfw_init(&w, f);
	tfw_section(&w, id, payload, n);
	tfw_close(&w);
	fclose(f);
	*size = tf_strip_checksums((uint8_t *)buf, *size);
	return (uint8_t *)buf;
}

/* Growth rules: smaller structs read missing fields as zero; larger ones only with zero tails. */
static void test_growth_rules(void)
{
	uint8_t payload[256];
	struct pt_sec_system sys = { .size = 16, .nr_cpus = 3, .page_size = 4096, .release_len = 2 };
	struct pt_sec_loss loss = { .size = sizeof(loss) + 8, .nr_cpus = 2, .dropped = 5, .missed = 6 };
	struct tracefile tf;
	size_t size;
	uint8_t *b;

	/* SYSTEM of 16 bytes, no start_ns (the growth rules: it reads as 0). */
	memcpy(payload, &sys, 16);
	memcpy(payload + 16, "ab", 2);
	b = one_section_file(PT_SEC_SYSTEM, payload, 18, &size);
	CU_ASSERT_EQUAL(tracefile_parse(b, size, &tf), 0);
	CU_ASSERT_EQUAL(tf.nr_cpus, 3);
	CU_ASSERT_EQUAL(tf.start_ns, 0);
	CU_ASSERT_STRING_EQUAL(tf.release, "ab");
	tracefile_free(&tf);
	free(b);
	/* Too small to hold release_len: refused. */
	sys.size = 12;
	memcpy(payload, &sys, 16);
	b = one_section_file(PT_SEC_SYSTEM, payload, 18, &size);
	CU_ASSERT_EQUAL(tracefile_parse(b, size, &tf), -PT_EFORMAT);
	tracefile_free(&tf);
	free(b);

	/* LOSS of a newer writer: 8 more bytes, zero: accepted. */
	memset(payload, 0, sizeof(payload));
	memcpy(payload, &loss, sizeof(loss));
	b = one_section_file(PT_SEC_LOSS, payload, sizeof(loss) + 8, &size);
	CU_ASSERT_EQUAL(tracefile_parse(b, size, &tf), 0);
	CU_ASSERT_EQUAL(tf.dropped, 5);
	CU_ASSERT_EQUAL(tf.missed, 6);
	tracefile_free(&tf);
	free(b);
	/* The same with a field this reader does not know set: refused. */
	payload[sizeof(loss) + 3] = 1;
	b = one_section_file(PT_SEC_LOSS, payload, sizeof(loss) + 8, &size);
	CU_ASSERT_EQUAL(tracefile_parse(b, size, &tf), -PT_EFORMAT);
	CU_ASSERT_EQUAL(tf.err_off, sizeof(struct pt_file_header));
	tracefile_free(&tf);
	free(b);
}

/*
 * Checksums (2.1): every section but END after its CHECKSUM; a flipped
 * page byte marks that page alone bad and decodes as a LOSS(CORRUPT) in
 * its place; a flipped FUNCTION byte skips that section; both counted.
 */
static void test_checksums(void)
{
	size_t size;
	uint8_t *b = sample_bytes(&size), *c;
	struct tracefile tf, full;
	struct tr_records ra, rb;
	size_t fn, i, k;
	uint32_t p;

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL_FATAL(decode_file(b, size, &ra, &full), 0);
	CU_ASSERT_EQUAL(full.minor, PT_FILE_MINOR);
	CU_ASSERT_EQUAL(full.checked_sections, 7);	/* SYSTEM, FUNCTION, 3 PAGES, section 99, LOSS */
	CU_ASSERT_EQUAL(full.checked_sections + full.unchecked_sections + full.corrupt_sections, 7);
	CU_ASSERT_EQUAL(full.corrupt_pages, 0);
	for (i = 0; i < full.npages; i++)
		CU_ASSERT(full.pages[i].checked);

	/* each page's last stored byte flipped: that page, and no other, is a gap */
	for (i = 0; i < full.npages; i++) {
		const struct tf_page *pg = &full.pages[i].page[0];
		size_t at = pg->data - full.buf + pg->len - 1;
		uint32_t cpu = full.pages[i].cpu, n = 0;

		c = malloc(size);
		memcpy(c, b, size);
		c[at] ^= 0x10;
		CU_ASSERT_EQUAL(decode_file(c, size, &rb, &tf), 0);
		CU_ASSERT_EQUAL(tf.corrupt_pages, 1);
		CU_ASSERT_EQUAL(tf.corrupt_offset, pg->data - full.buf);
		for (k = 0; k < tf.npages; k++)
			for (p = 0; p < tf.pages[k].nr_pages; p++)
				CU_ASSERT_EQUAL(tf.pages[k].page[p].bad, k == i);
		CU_ASSERT_EQUAL(rb.sum_pages, 1);
		for (k = 0; k < rb.n; k++)
			n += rb.recs[k].cpu == cpu && rb.recs[k].synthetic &&
			     rb.recs[k].arg == TR_LOSS_CORRUPT;
		CU_ASSERT_EQUAL(n, 1);
		tr_records_free(&rb);
		tracefile_free(&tf);
		free(c);
	}
	/* a FUNCTION byte (its name): the section is skipped and counted */
	fn = section_at(b, size, PT_SEC_FUNCTION);
	b[fn + 16 + sizeof(struct pt_sec_function)] ^= 1;
	CU_ASSERT_EQUAL(tracefile_parse(b, size, &tf), 0);
	CU_ASSERT_EQUAL(tf.nfuncs, 0);
	CU_ASSERT_EQUAL(tf.corrupt_sections, 1);
	CU_ASSERT_EQUAL(tf.corrupt_offset, fn);
	tracefile_free(&tf);
	b[fn + 16 + sizeof(struct pt_sec_function)] ^= 1;
	/* the CHECKSUM before it unreadable: the section is read unverified, said */
	b[fn - 48 + 16 + 4] ^= 1;	/* its nr_pages: 1 */
	CU_ASSERT_EQUAL(tracefile_parse(b, size, &tf), 0);
	CU_ASSERT_EQUAL(tf.nfuncs, 1);
	CU_ASSERT_EQUAL(tf.corrupt_sections, 1);
	CU_ASSERT_EQUAL(tf.unchecked_sections, 1);
	tracefile_free(&tf);
	tr_records_free(&ra);
	tracefile_free(&full);
	free(b);
}

/* Every page's bytes, as read through tf (each page's stored length). */
static int same_pages(const struct tracefile *a, const struct tracefile *b)
{
	uint32_t i, p;

	if (a->npages != b->npages)
		return 0;
	for (i = 0; i < a->npages; i++) {
		if (a->pages[i].nr_pages != b->pages[i].nr_pages || a->pages[i].cpu != b->pages[i].cpu)
			return 0;
		for (p = 0; p < a->pages[i].nr_pages; p++)
			if (a->pages[i].page[p].len != b->pages[i].page[p].len ||
			    a->pages[i].page[p].bad != b->pages[i].page[p].bad ||
			    memcmp(a->pages[i].page[p].data, b->pages[i].page[p].data,
				   a->pages[i].page[p].len))
				return 0;
	}
	return 1;
}

/* path's bytes become the size bytes at b. */
static void file_of(const char *path, const uint8_t *b, size_t size)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(write(fd, b, size), (ssize_t)size);
	close(fd);
}

/*
 * tracefile_read maps a regular file (read-only, mapped set) and reads it
 * as tracefile_parse reads its bytes; what tracefile_release gives back
 * reads the same again (from the file); an empty file and a directory are
 * told as before.
 */
static void test_read_mapped(void)
{
	char path[] = "/tmp/pt-unit-mapped-XXXXXX";
	struct tracefile byparse, mapped, empty;
	size_t size;
	uint8_t *b = sample_bytes(&size);
	int fd = mkstemp(path);

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	file_of(path, b, size);
	CU_ASSERT_EQUAL_FATAL(tracefile_parse(b, size, &byparse), 0);
	CU_ASSERT_EQUAL_FATAL(tracefile_read(path, &mapped), 0);
	CU_ASSERT(mapped.mapped);
	CU_ASSERT(!byparse.mapped);
	CU_ASSERT_EQUAL(mapped.size, size);
	CU_ASSERT_EQUAL(mapped.nfuncs, byparse.nfuncs);
	CU_ASSERT(same_pages(&mapped, &byparse));
	/* given back (the first page at least: the mapping starts on one), read again from the file */
	CU_ASSERT(size >= 4096);
	tracefile_release(&mapped, mapped.buf, mapped.size);
	CU_ASSERT(!memcmp(mapped.buf, b, size));
	CU_ASSERT(same_pages(&mapped, &byparse));
	check_sample_function(&mapped.funcs[0]);
	/* a copy: nothing given back, nothing changed */
	tracefile_release(&byparse, byparse.buf, byparse.size);
	CU_ASSERT(!memcmp(byparse.buf, b, size));
	tracefile_free(&mapped);
	tracefile_free(&byparse);
	/* an empty file is not mapped: told as a truncated header */
	fd = open(path, O_WRONLY | O_TRUNC);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL(tracefile_read(path, &empty), -PT_ETRUNC);
	CU_ASSERT(!empty.mapped);
	tracefile_free(&empty);
	CU_ASSERT_EQUAL(tracefile_read("/tmp", &empty), -PT_EIO);
	tracefile_free(&empty);
	unlink(path);
	free(b);
}

/*
 * A mapped file's page sums are read from the file (tracefile_read's
 * pread): a page whose last byte is flipped in the file is the bad one,
 * at the offset parse gives it, and the pages read are parse's.
 */
static void test_read_mapped_sums(void)
{
	char path[] = "/tmp/pt-unit-sums-XXXXXX";
	struct tracefile whole;
	size_t size;
	uint8_t *b = sample_bytes(&size);
	int fd = mkstemp(path);
	uint32_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(tracefile_parse(b, size, &whole), 0);
	CU_ASSERT_FATAL(whole.npages > 1);
	for (i = 0; i < whole.npages; i++) {
		const struct tf_page *pg = &whole.pages[i].page[0];
		size_t at = pg->data - whole.buf + pg->len - 1;
		struct tracefile parsed, mapped;

		b[at] ^= 0x10;
		file_of(path, b, size);
		CU_ASSERT_EQUAL_FATAL(tracefile_parse(b, size, &parsed), 0);
		CU_ASSERT_EQUAL_FATAL(tracefile_read(path, &mapped), 0);
		CU_ASSERT(mapped.mapped);
		CU_ASSERT_EQUAL(parsed.corrupt_pages, 1);
		CU_ASSERT_EQUAL(mapped.corrupt_pages, 1);
		CU_ASSERT_EQUAL(mapped.corrupt_offset, parsed.corrupt_offset);
		CU_ASSERT(same_pages(&mapped, &parsed));
		tracefile_free(&parsed);
		tracefile_free(&mapped);
		b[at] ^= 0x10;
	}
	tracefile_free(&whole);
	unlink(path);
	free(b);
}

UNIT_SUITE(tracefile,
	   { "round trip of every section", test_round_trip },
	   { "malformed file header", test_malformed_header },
	   { "malformed sections: error and offset, prefix kept", test_malformed_sections },
	   { "truncation at every byte", test_truncation_everywhere },
	   { "PAGES_TRIMMED: pages up to their data, read as whole pages; overruns malformed",
	     test_pages_trimmed },
	   { "CFG blob: malformed and truncated", test_cfg_blob_malformed },
	   { "a function's recorded CFG and its block names", test_function_cfg },
	   { "growth rules: older and newer struct sizes", test_growth_rules },
	   { "checksums: a bad page is a gap in its place, a bad section skipped",
	     test_checksums },
	   { "a file read is mapped, and what is given back reads the same", test_read_mapped },
	   { "a mapped file's page sums are the file's: a flipped page is the bad one",
	     test_read_mapped_sums })
