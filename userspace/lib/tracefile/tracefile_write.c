// SPDX-License-Identifier: GPL-2.0
/* tracefile_write - writes trace.bin sections (trace-format/FORMAT.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	section_header(w, id, size);
	put(w, payload, size);
	return pad8(w);
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
	section_header(w, PT_SEC_SYSTEM, sizeof(s) + rlen);
	put(w, &s, sizeof(s));
	put(w, release, rlen);
	return pad8(w);
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
	section_header(w, PT_SEC_FUNCTION,
		       sizeof(s) + fn->name_len + code_len + fn->cfg_len + fn->plan_len);
	put(w, &s, sizeof(s));
	put(w, fn->name, fn->name_len);
	put(w, fn->code, code_len);
	put(w, fn->cfg, fn->cfg_len);
	put(w, fn->plan, fn->plan_len);
	return pad8(w);
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

int tfw_close(struct tf_writer *w)
{
	int err = tfw_section(w, PT_SEC_END, NULL, 0);

	if (w->f && fflush(w->f) && !err)
		err = -PT_EIO;
	if (w->owns && w->f && fclose(w->f) && !err)
		err = -PT_EIO;
	w->f = NULL;
	return err;
}
