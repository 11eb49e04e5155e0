// SPDX-License-Identifier: GPL-2.0
/*
 * tracefile_write - writes trace.bin sections (trace-format/FORMAT.md),
 * each but END after the CHECKSUM section that covers it (FORMAT.md 2.8).
 * Each section's header, with its size, comes before its bytes, and every
 * section is whole once written: a file cut anywhere is a readable prefix.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY	/* XXH3_state_t on the stack */
#include <xxhash.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

static int put(struct tf_writer *w, const void *p, size_t n)
{
	if (w->err)
		return w->err;
	if (n && fwrite(p, 1, n, w->f) != n) {
		w->err = -PT_EIO;
		return w->err;
	}
	w->off += n;
	return 0;
}

static int pad8(struct tf_writer *w)
{
	static const uint8_t zero[8];

	return put(w, zero, (8 - (w->off & 7)) & 7);
}

static int section_header(struct tf_writer *w, uint32_t id, uint64_t size)
{
	struct pt_section s = { .id = id, .size = size };

	return put(w, &s, sizeof(s));
}

/* A run of a section's payload bytes. */
struct piece {
	const void *p;
	uint64_t n;
};

/*
 * The CHECKSUM section of the section (id, size) whose payload starts with
 * the pieces (FORMAT.md 2.8): the sum of its header and those bytes, then
 * one pt_page_sum per page (nr_pages of page_size bytes at pages, each
 * stored as tf_page_stored_len bytes when trimmed).
 */
static int checksum_section(struct tf_writer *w, uint32_t id, uint64_t size,
			    const struct piece *pc, unsigned int npc, const uint8_t *pages,
			    uint32_t nr_pages, uint32_t page_size, int trimmed)
{
	struct pt_section hdr = { .id = id, .size = size };
	struct pt_sec_checksum c;
	XXH3_state_t st;
	unsigned int i;
	uint32_t k;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.nr_pages = nr_pages;
	if (XXH3_64bits_reset(&st) != XXH_OK || XXH3_64bits_update(&st, &hdr, sizeof(hdr)) != XXH_OK)
		return w->err = -PT_ENOMEM;
	for (i = 0; i < npc; i++)
		if (pc[i].n && XXH3_64bits_update(&st, pc[i].p, pc[i].n) != XXH_OK)
			return w->err = -PT_ENOMEM;
	c.head = XXH3_64bits_digest(&st);
	section_header(w, PT_SEC_CHECKSUM, sizeof(c) + (uint64_t)nr_pages * sizeof(struct pt_page_sum));
	put(w, &c, sizeof(c));
	for (k = 0; k < nr_pages; k++, pages += page_size) {
		struct pt_page_sum ps = { .len = page_size };

		if (trimmed)
			ps.len = tf_page_stored_len(pages, page_size);
		ps.sum = XXH3_64bits(pages, ps.len);
		put(w, &ps, sizeof(ps));
	}
	return pad8(w);
}

/* A section of the pieces, after its CHECKSUM section. */
static int covered_section(struct tf_writer *w, uint32_t id, const struct piece *pc,
			   unsigned int npc)
{
	uint64_t size = 0;
	unsigned int i;

	for (i = 0; i < npc; i++)
		size += pc[i].n;
	checksum_section(w, id, size, pc, npc, NULL, 0, 0, 0);
	section_header(w, id, size);
	for (i = 0; i < npc; i++)
		put(w, pc[i].p, pc[i].n);
	return pad8(w);
}

int tfw_init(struct tf_writer *w, FILE *f)
{
	struct pt_file_header h;

	memset(w, 0, sizeof(*w));
	w->f = f;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, PT_FILE_MAGIC, sizeof(h.magic));
	h.size = sizeof(h);
	h.major = PT_FILE_MAJOR;
	h.minor = PT_FILE_MINOR;
	h.endian = PT_FILE_ENDIAN;
	return put(w, &h, sizeof(h));
}

int tfw_open(struct tf_writer *w, const char *path)
{
	FILE *f = fopen(path, "wb");
	int err;

	if (!f) {
		memset(w, 0, sizeof(*w));
		w->err = -PT_EIO;
		return w->err;
	}
	err = tfw_init(w, f);
	w->owns = 1;
	return err;
}

int tfw_section(struct tf_writer *w, uint32_t id, const void *payload, uint64_t size)
{
	struct piece pc = { payload, size };
	struct pt_sec_pages s;

	/* whole untrimmed pages after their struct: a sum per page */
	if (id == PT_SEC_PAGES && size >= sizeof(s)) {
		memcpy(&s, payload, sizeof(s));
		if (s.size == sizeof(s) && s.page_size >= 32 &&
		    size == sizeof(s) + (uint64_t)s.nr_pages * s.page_size) {
			pc.n = sizeof(s);
			checksum_section(w, id, size, &pc, 1, (const uint8_t *)payload + sizeof(s),
					 s.nr_pages, s.page_size, 0);
			section_header(w, id, size);
			put(w, payload, size);
			return pad8(w);
		}
	}
	return covered_section(w, id, &pc, 1);
}

int tfw_system(struct tf_writer *w, uint32_t nr_cpus, uint32_t page_size,
	       const char *release, uint64_t start_ns)
{
	struct pt_sec_system s;
	size_t rlen = release ? strlen(release) : 0;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.nr_cpus = nr_cpus;
	s.page_size = page_size;
	s.release_len = rlen;
	s.start_ns = start_ns;
	return covered_section(w, PT_SEC_SYSTEM,
			       (struct piece[]){ { &s, sizeof(s) }, { release, rlen } }, 2);
}

int tfw_function(struct tf_writer *w, const struct tf_function *fn)
{
	struct pt_sec_function s;
	uint64_t code_len = (uint64_t)fn->len + fn->cold_len;

	if (w->err)
		return w->err;
	if ((fn->name_len && !fn->name) || (code_len && !fn->code) ||
	    (fn->cfg_len && !fn->cfg) || (fn->plan_len && !fn->plan))
		return -PT_EINVAL;
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.func_id = fn->func_id;
	s.addr = fn->addr;
	s.cold_addr = fn->cold_addr;
	s.len = fn->len;
	s.cold_len = fn->cold_len;
	s.name_len = fn->name_len;
	s.cfg_len = fn->cfg_len;
	s.plan_len = fn->plan_len;
	return covered_section(w, PT_SEC_FUNCTION,
			       (struct piece[]){ { &s, sizeof(s) }, { fn->name, fn->name_len },
						 { fn->code, code_len }, { fn->cfg, fn->cfg_len },
						 { fn->plan, fn->plan_len } }, 5);
}

int tfw_pages(struct tf_writer *w, uint32_t cpu, uint32_t page_size, uint32_t nr_pages,
	      const void *data, uint64_t *bytes)
{
	const uint8_t *page = data;
	struct pt_sec_pages s;
	uint64_t n = 0;
	uint32_t i;

	if ((nr_pages && !data) || page_size < 32 || page_size % 8)
		return -PT_EINVAL;
	for (i = 0; i < nr_pages; i++)
		n += tf_page_stored_len(page + (size_t)i * page_size, page_size);
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.cpu = cpu;
	s.page_size = page_size;
	s.nr_pages = nr_pages;
	checksum_section(w, PT_SEC_PAGES_TRIMMED, sizeof(s) + n, &(struct piece){ &s, sizeof(s) },
			 1, data, nr_pages, page_size, 1);
	section_header(w, PT_SEC_PAGES_TRIMMED, sizeof(s) + n);
	put(w, &s, sizeof(s));
	for (i = 0; i < nr_pages; i++, page += page_size)
		put(w, page, tf_page_stored_len(page, page_size));
	if (bytes)
		*bytes = n;
	return pad8(w);
}

int tfw_loss(struct tf_writer *w, uint32_t nr_cpus, uint64_t dropped, uint64_t missed)
{
	struct pt_sec_loss s;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.nr_cpus = nr_cpus;
	s.dropped = dropped;
	s.missed = missed;
	return tfw_section(w, PT_SEC_LOSS, &s, sizeof(s));
}

int tfw_flush(struct tf_writer *w)
{
	if (!w->err && w->f && fflush(w->f))
		w->err = -PT_EIO;
	return w->err;
}

int tfw_close(struct tf_writer *w)
{
	int err = section_header(w, PT_SEC_END, 0);

	if (w->f && fflush(w->f) && !err)
		err = -PT_EIO;
	if (w->owns && w->f && fclose(w->f) && !err)
		err = -PT_EIO;
	w->f = NULL;
	return err;
}
