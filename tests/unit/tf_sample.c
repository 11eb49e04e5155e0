// SPDX-License-Identifier: GPL-2.0
/* tf_sample - the hand-made sample trace (see tf_sample.h). */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "rbpage.h"
#include "tf_sample.h"

/*
 * sample_fn:  0: cmp; jne 8      block 0 -> 1 (fall), 2 (taken)
 *             6: call helper     block 1 (call vertex) -> 2
 *             8: ret             block 2 -> EXIT
 */
const uint8_t sample_code[SAMPLE_LEN] = {
	0x48, 0x39, 0xf7, 0x75, 0x03, 0x90, 0xe8, 0x00,
	0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
};

static struct cfg_block blocks[3] = {
	{ .addr = SAMPLE_ADDR, .size = 5, .first_insn = 0, .ninsn = 2, .flags = CFG_BF_ENTRY,
	  .first_succ = 0, .nsucc = 2 },
	{ .addr = SAMPLE_ADDR + 5, .size = 3, .first_insn = 2, .ninsn = 2, .flags = CFG_BF_CALL,
	  .first_succ = 2, .nsucc = 1 },
	{ .addr = SAMPLE_ADDR + 8, .size = 1, .first_insn = 4, .ninsn = 1, .flags = 0,
	  .first_succ = 3, .nsucc = 1 },
};

static struct cfg_insn insns[5] = {
	{ .addr = SAMPLE_ADDR, .len = 3, .kind = CFG_I_PLAIN, .block = 0 },
	{ .addr = SAMPLE_ADDR + 3, .len = 2, .kind = CFG_I_JCC, .cc = 5,
	  .flags = CFG_IF_OPTPROBE_UNSAFE, .block = 0, .target = SAMPLE_ADDR + 8 },
	{ .addr = SAMPLE_ADDR + 5, .len = 1, .kind = CFG_I_PLAIN, .block = 1 },
	{ .addr = SAMPLE_ADDR + 6, .len = 2, .kind = CFG_I_CALL, .block = 1,
	  .target = 0xffffffff81000000ull, .target_name = "helper" },
	{ .addr = SAMPLE_ADDR + 8, .len = 1, .kind = CFG_I_RET, .flags = CFG_IF_BRANCH_TARGET,
	  .block = 2 },
};

static struct cfg_edge edges[4] = {
	{ .src = 0, .dst = 1, .kind = CFG_E_FALL },
	{ .src = 0, .dst = 2, .kind = CFG_E_TAKEN },
	{ .src = 1, .dst = 2, .kind = CFG_E_CALL_RETURN },
	{ .src = 2, .dst = 3, .kind = CFG_E_EXIT },
};

void sample_cfg(struct cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->name = (char *)"sample_fn";
	c->addr = SAMPLE_ADDR;
	c->len = SAMPLE_LEN;
	c->nblocks = 3;
	c->ninsns = 5;
	c->nedges = 4;
	c->blocks = blocks;
	c->insns = insns;
	c->edges = edges;
}

static struct {
	struct pt_plan plan;
	struct pt_site site[2];
	struct pt_action action[3];
} plan_blob;

const void *sample_plan(uint32_t *len)
{
	memset(&plan_blob, 0, sizeof(plan_blob));
	plan_blob.plan = (struct pt_plan){
		.size = sizeof(struct pt_plan), .total_len = sizeof(plan_blob),
		.abi_major = PT_ABI_MAJOR, .abi_minor = PT_ABI_MINOR,
		.func_id = SAMPLE_FUNC_ID, .mode = PT_MODE_TRACE, .encoding = PT_ENC_BITS,
		.addr = SAMPLE_ADDR, .len = SAMPLE_LEN,
		.nr_sites = 2, .site_size = sizeof(struct pt_site),
		.nr_actions = 3, .action_size = sizeof(struct pt_action),
		.verify_size = sizeof(struct pt_verify_site),
	};
	strcpy(plan_blob.plan.name, "sample_fn");
	plan_blob.site[0] = (struct pt_site){ .offset = 0, .insn_len = 3, .cond = PT_COND_NONE,
					      .first_action = 0, .nr_actions = 1 };
	plan_blob.site[1] = (struct pt_site){ .offset = 3, .insn_len = 2, .cond = 5,
					      .first_action = 1, .nr_actions = 2 };
	plan_blob.action[0] = (struct pt_action){ .op = PT_OP_ENTER };
	plan_blob.action[1] = (struct pt_action){ .op = PT_OP_EMIT, .when = PT_WHEN_TAKEN,
						  .nbits = 1, .value = 1 };
	plan_blob.action[2] = (struct pt_action){ .op = PT_OP_EMIT, .when = PT_WHEN_NOT_TAKEN,
						  .nbits = 1, .value = 0 };
	*len = sizeof(plan_blob);
	return &plan_blob;
}

static void add(struct rbpage *pg, uint64_t ts, uint16_t type, uint32_t arg, uint64_t w0,
		uint64_t w1, uint32_t nw)
{
	uint64_t body[4] = { w0, w1 };
	uint8_t rec[40];

	rbpage_add(pg, ts, rec, rbrec(rec, type, arg, body, nw));
}

/* LOSS(MISSED): count hits of sample_fn's probes skipped during (since, until]. */
static void add_missed(struct rbpage *pg, uint64_t ts, uint64_t count, uint64_t since,
		       uint64_t until)
{
	struct pt_rec_loss l = { .count = count, .func_id = SAMPLE_FUNC_ID, .since = since,
				 .until = until };
	uint64_t body[4];
	uint8_t rec[40];

	memcpy(body, &l, sizeof(body));
	rbpage_add(pg, ts, rec, rbrec(rec, PT_REC_LOSS, PT_LOSS_MISSED, body, 4));
}

/*
 * The recorded story: task 42 enters sample_fn on CPU 0 (bit 1: taken),
 * migrates to CPU 1 mid-function (its partial bits 0b10 flushed late on CPU
 * 0, after an interrupt), continues on CPU 1; a softirq runs on CPU 1.
 */
static void sample_pages(uint8_t *cpu0, uint8_t *cpu1)
{
	struct rbpage pg;

	rbpage_init(&pg, cpu0, SAMPLE_PAGE, 1000);
	add(&pg, 1000, PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_TASK, 42), 500, 2);
	add(&pg, 1001, PT_REC_ENTER_AT, SAMPLE_FUNC_ID, 0x81001234ull, 0, 1);	/* ret_lo, pending 0 */
	add(&pg, 1002, PT_REC_BITS, 1, 1, 0, 1);
	rbpage_pad(&pg);
	rbpage_init(&pg, cpu0 + SAMPLE_PAGE, SAMPLE_PAGE, 3000);
	/* Task 42's bits flushed when the hardirq arrives, after it left CPU 0. */
	add(&pg, 3000, PT_REC_BITS, 2, 0x2, 0, 1);
	add(&pg, 3001, PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_HARDIRQ, 0), 900, 2);
	add(&pg, 3002, PT_REC_ENTER_AT, SAMPLE_FUNC_ID, 0x81005678ull, 0, 1);
	add(&pg, 3003, PT_REC_BITS, 1, 0, 0, 1);

	rbpage_init(&pg, cpu1, SAMPLE_PAGE, 2000);
	add(&pg, 2000, PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_TASK, 42), 700, 2);
	add(&pg, 2001, PT_REC_BITS, 3, 0x5, 0, 1);
	add(&pg, 2002, PT_REC_OWNER, 0, PT_OWNER(PT_OWNER_SOFTIRQ, 1), 800, 2);
	add(&pg, 2003, PT_REC_BITS, PT_BITS_PARTIAL, 4, 0, 1);
	add_missed(&pg, 2004, 2, 750, 850);
}

int sample_write(FILE *f)
{
	static uint8_t cpu0[2 * SAMPLE_PAGE], cpu1[SAMPLE_PAGE];
	struct tf_writer w;
	struct tf_function fn;
	struct cfg c;
	uint8_t *cfg_blob;
	uint32_t cfg_len;
	const char unknown[5] = "later";
	int err;

	sample_cfg(&c);
	err = cfg_blob_encode(&c, &cfg_blob, &cfg_len);
	if (err)
		return err;
	sample_pages(cpu0, cpu1);
	memset(&fn, 0, sizeof(fn));
	fn.func_id = SAMPLE_FUNC_ID;
	fn.addr = SAMPLE_ADDR;
	fn.len = SAMPLE_LEN;
	fn.name = "sample_fn";
	fn.name_len = 9;
	fn.code = sample_code;
	fn.cfg = cfg_blob;
	fn.cfg_len = cfg_len;
	fn.plan = sample_plan(&fn.plan_len);
	tfw_init(&w, f);
	tfw_system(&w, 2, SAMPLE_PAGE, "6.1.0-56-amd64", 1700000000000000000ull);
	tfw_function(&w, &fn);
	tfw_pages(&w, 0, SAMPLE_PAGE, 1, cpu0, NULL);
	tfw_pages(&w, 1, SAMPLE_PAGE, 1, cpu1, NULL);
	tfw_section(&w, 99, unknown, sizeof(unknown));
	tfw_pages(&w, 0, SAMPLE_PAGE, 1, cpu0 + SAMPLE_PAGE, NULL);
	tfw_loss(&w, 2, 0, 2);
	err = tfw_close(&w);
	free(cfg_blob);
	return err;
}

uint8_t *sample_bytes(size_t *size)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, size);

	if (!f)
		return NULL;
	if (sample_write(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return (uint8_t *)buf;
}

size_t tf_strip_checksums(uint8_t *b, size_t size)
{
	size_t in = sizeof(struct pt_file_header), out = in;
	uint16_t minor = 0;

	memcpy(b + offsetof(struct pt_file_header, minor), &minor, 2);
	while (in + sizeof(struct pt_section) <= size) {
		struct pt_section s;
		size_t n;

		memcpy(&s, b + in, sizeof(s));
		n = sizeof(s) + ((s.size + 7) & ~7ull);
		if (n > size - in)
			n = size - in;
		if (s.id != PT_SEC_CHECKSUM) {
			memmove(b + out, b + in, n);
			out += n;
		}
		in += n;
	}
	memmove(b + out, b + in, size - in);
	return out + size - in;
}

uint8_t *tf_rewrite(const struct tracefile *tf, uint64_t until, uint64_t gap_cpus, size_t *size)
{
	uint64_t gap_at[64];
	struct tf_writer w;
	uint8_t *page, *buf = NULL;
	uint32_t i, p, cpu, ngaps = 0;
	FILE *f = open_memstream((char **)&buf, size);

	if (!f)
		return NULL;
	page = calloc(1, tf->page_size ? tf->page_size : SAMPLE_PAGE);
	tfw_init(&w, f);
	if (tf->has_system)
		tfw_system(&w, tf->nr_cpus, tf->page_size, tf->release, tf->start_ns);
	for (i = 0; i < tf->nfuncs; i++)
		tfw_function(&w, &tf->funcs[i]);
	for (i = 0; i < tf->npages && page; i++) {
		const struct tf_pages *s = &tf->pages[i];

		for (p = 0; p < s->nr_pages; p++) {
			const struct tf_page *pg = &s->page[p];

			if ((uint64_t)(pg->data - tf->buf) + pg->len > until || s->page_size > tf->page_size)
				break;
			/* a stored page is the whole page with zeros after it */
			memset(page, 0, s->page_size);
			memcpy(page, pg->data, pg->len);
			tfw_pages(&w, s->cpu, s->page_size, 1, page, NULL);
		}
	}
	for (cpu = 0; cpu < 64 && page; cpu++) {
		if (!(gap_cpus >> cpu & 1))
			continue;
		memset(page, 0, tf->page_size);	/* an empty page, its stamp flipped below */
		tfw_pages(&w, cpu, tf->page_size, 1, page, NULL);
		gap_at[ngaps++] = w.off - 16;
	}
	if (tf->has_loss && until >= tf->size)
		tfw_loss(&w, tf->nr_cpus, tf->dropped, tf->missed);
	if (tfw_close(&w) || !page) {
		fclose(f);
		free(buf);
		free(page);
		return NULL;
	}
	fclose(f);
	free(page);
	for (i = 0; i < ngaps; i++)
		buf[gap_at[i]] ^= 1;
	return buf;
}
