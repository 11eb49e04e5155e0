// SPDX-License-Identifier: GPL-2.0
/*
 * tracefile_read - parses trace.bin (trace-format/FORMAT.md) without
 * trusting any size in it: every length is checked against what remains of
 * its section and of the file, so counts are bounded by the file size.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "../base/abi_struct.h"

#define PAGE_SIZE_MIN 32u
#define PAGE_SIZE_MAX (1u << 20)
#define NAME_MAX_LEN 4096u
#define RELEASE_MAX_LEN 4096u

static int fail(struct tracefile *tf, int err, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct tracefile *tf, int err, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	tf->err = err;
	tf->err_off = off;
	va_start(ap, fmt);
	vsnprintf(tf->err_msg, sizeof(tf->err_msg), fmt, ap);
	va_end(ap);
	return err;
}

/*
 * Loads a self-sized struct (first u32 is its size) from avail bytes into
 * dst (dst_size bytes) by the growth rules: a smaller size reads missing
 * fields as zero, a larger one is accepted only if the extra bytes are zero.
 * min is the smallest size that still has every field this reader needs.
 * Returns its size in the input, or a negative PT_E*.
 */
static int64_t load_sized(void *dst, size_t dst_size, const uint8_t *src, uint64_t avail,
			  size_t min)
{
	uint32_t size;

	if (avail < 4)
		return -PT_EFORMAT;
	memcpy(&size, src, 4);
	if (size < min || size > avail)
		return -PT_EFORMAT;
	if (abi_struct_load(dst, dst_size, src, size))
		return -PT_EFORMAT;
	return size;
}

static int parse_system(struct tracefile *tf, const uint8_t *p, uint64_t n, uint64_t off)
{
	struct pt_sec_system s;
	int64_t used = load_sized(&s, sizeof(s), p, n, offsetof(struct pt_sec_system, start_ns));
	uint32_t i;

	if (used < 0)
		return fail(tf, -PT_EFORMAT, off, "SYSTEM: bad struct size");
	if (tf->has_system)
		return fail(tf, -PT_EFORMAT, off, "SYSTEM: duplicate section");
	if (s.release_len > RELEASE_MAX_LEN || (uint64_t)used + s.release_len != n)
		return fail(tf, -PT_EFORMAT, off, "SYSTEM: release_len %u does not fill the section",
			    s.release_len);
	if (s.page_size && (s.page_size < PAGE_SIZE_MIN || s.page_size > PAGE_SIZE_MAX))
		return fail(tf, -PT_EFORMAT, off, "SYSTEM: page_size %u", s.page_size);
	if (memchr(p + used, 0, s.release_len))
		return fail(tf, -PT_EFORMAT, off, "SYSTEM: NUL in release");
	for (i = 0; i < tf->npages; i++)	/* PAGES written before SYSTEM */
		if (tf->pages[i].cpu >= s.nr_cpus)
			return fail(tf, -PT_EFORMAT, off, "SYSTEM: %u cpus, but PAGES of cpu %u",
				    s.nr_cpus, tf->pages[i].cpu);
	tf->release = malloc(s.release_len + 1);
	if (!tf->release)
		return fail(tf, -PT_ENOMEM, off, "out of memory");
	memcpy(tf->release, p + used, s.release_len);
	tf->release[s.release_len] = 0;
	tf->has_system = 1;
	tf->nr_cpus = s.nr_cpus;
	tf->page_size = s.page_size;
	tf->start_ns = s.start_ns;
	return 0;
}

static int check_plan(const uint8_t *plan, uint32_t len)
{
	uint32_t size, total;

	if (len < 8)
		return -1;
	memcpy(&size, plan, 4);
	memcpy(&total, plan + 4, 4);
	return size <= len && total == len ? 0 : -1;
}

static int check_cfg(const uint8_t *cfg, uint32_t len)
{
	uint32_t magic, size, total;

	if (len < 12)
		return -1;
	memcpy(&magic, cfg, 4);
	memcpy(&size, cfg + 4, 4);
	memcpy(&total, cfg + 8, 4);
	return magic == PT_CFG_MAGIC && size <= len && total == len ? 0 : -1;
}

static int parse_function(struct tracefile *tf, const uint8_t *p, uint64_t n, uint64_t off)
{
	struct pt_sec_function s;
	int64_t used = load_sized(&s, sizeof(s), p, n, offsetof(struct pt_sec_function, reserved0));
	struct tf_function *fn, *grown;
	uint64_t need;
	uint32_t i;

	if (used < 0)
		return fail(tf, -PT_EFORMAT, off, "FUNCTION: bad struct size");
	need = (uint64_t)used + s.name_len + s.len + s.cold_len + s.cfg_len + s.plan_len;
	if (need != n)
		return fail(tf, -PT_EFORMAT, off,
			    "FUNCTION: lengths add up to %llu bytes, section has %llu",
			    (unsigned long long)need, (unsigned long long)n);
	if (!s.name_len || s.name_len > NAME_MAX_LEN || memchr(p + used, 0, s.name_len))
		return fail(tf, -PT_EFORMAT, off, "FUNCTION: bad name (length %u)", s.name_len);
	if ((s.cold_len == 0) != (s.cold_addr == 0))
		return fail(tf, -PT_EFORMAT, off, "FUNCTION: cold_addr and cold_len disagree");
	for (i = 0; i < tf->nfuncs; i++)
		if (tf->funcs[i].func_id == s.func_id)
			return fail(tf, -PT_EFORMAT, off, "FUNCTION: duplicate func_id %u",
				    s.func_id);
	grown = realloc(tf->funcs, (tf->nfuncs + 1) * sizeof(*grown));
	if (!grown)
		return fail(tf, -PT_ENOMEM, off, "out of memory");
	tf->funcs = grown;
	fn = &grown[tf->nfuncs];
	memset(fn, 0, sizeof(*fn));
	fn->func_id = s.func_id;
	fn->addr = s.addr;
	fn->cold_addr = s.cold_addr;
	fn->len = s.len;
	fn->cold_len = s.cold_len;
	fn->name = (const char *)p + used;
	fn->name_len = s.name_len;
	fn->code = p + used + s.name_len;
	fn->cfg = fn->code + s.len + s.cold_len;
	fn->cfg_len = s.cfg_len;
	fn->plan = fn->cfg + s.cfg_len;
	fn->plan_len = s.plan_len;
	fn->offset = off;
	if (s.cfg_len && check_cfg(fn->cfg, s.cfg_len))
		return fail(tf, -PT_EFORMAT, off, "FUNCTION %u: bad CFG blob header", s.func_id);
	if (s.plan_len && check_plan(fn->plan, s.plan_len))
		return fail(tf, -PT_EFORMAT, off, "FUNCTION %u: bad plan blob header", s.func_id);
	tf->nfuncs++;
	return 0;
}

/*
 * PAGES, or PAGES_TRIMMED: each page its tf_page_stored_len bytes, which
 * its own header says; the pages must fill the section exactly.
 */
static int parse_pages(struct tracefile *tf, const uint8_t *p, uint64_t n, uint64_t off,
		       int trimmed)
{
	const char *what = trimmed ? "PAGES_TRIMMED" : "PAGES";
	struct pt_sec_pages s;
	int64_t used = load_sized(&s, sizeof(s), p, n, offsetof(struct pt_sec_pages, reserved));
	struct tf_pages *grown;
	uint64_t at;
	uint32_t i;

	if (used < 0)
		return fail(tf, -PT_EFORMAT, off, "%s: bad struct size", what);
	if (s.page_size < PAGE_SIZE_MIN || s.page_size > PAGE_SIZE_MAX || s.page_size % 8)
		return fail(tf, -PT_EFORMAT, off, "%s: page_size %u", what, s.page_size);
	if (!trimmed && (uint64_t)used + (uint64_t)s.page_size * s.nr_pages != n)
		return fail(tf, -PT_EFORMAT, off, "PAGES: %u pages of %u bytes do not fill %llu",
			    s.nr_pages, s.page_size, (unsigned long long)n);
	for (i = 0, at = used; trimmed && i < s.nr_pages; i++) {
		/* a page's header says how much of it is stored */
		uint32_t len = n - at < 16 ? 0 : tf_page_stored_len(p + at, s.page_size);

		if (!len || n - at < len)
			return fail(tf, -PT_EFORMAT, off + 16 + at,
				    "PAGES_TRIMMED: page %u of %u cut short", i, s.nr_pages);
		at += len;
	}
	if (trimmed && at != n)
		return fail(tf, -PT_EFORMAT, off, "PAGES_TRIMMED: %u pages leave %llu of %llu bytes",
			    s.nr_pages, (unsigned long long)(n - at), (unsigned long long)n);
	if (tf->has_system && s.cpu >= tf->nr_cpus)
		return fail(tf, -PT_EFORMAT, off, "PAGES: cpu %u of %u", s.cpu, tf->nr_cpus);
	grown = realloc(tf->pages, (tf->npages + 1) * sizeof(*grown));
	if (!grown)
		return fail(tf, -PT_ENOMEM, off, "out of memory");
	tf->pages = grown;
	grown[tf->npages] = (struct tf_pages){
		.cpu = s.cpu, .page_size = s.page_size, .nr_pages = s.nr_pages,
		.trimmed = trimmed, .data = p + used, .bytes = n - used, .offset = off,
	};
	tf->npages++;
	return 0;
}

static int parse_loss(struct tracefile *tf, const uint8_t *p, uint64_t n, uint64_t off)
{
	struct pt_sec_loss s;
	int64_t used = load_sized(&s, sizeof(s), p, n, offsetof(struct pt_sec_loss, reserved));

	if (used < 0 || (uint64_t)used != n)
		return fail(tf, -PT_EFORMAT, off, "LOSS: bad struct size");
	if (tf->has_loss)
		return fail(tf, -PT_EFORMAT, off, "LOSS: duplicate section");
	tf->has_loss = 1;
	tf->dropped = s.dropped;
	tf->missed = s.missed;
	return 0;
}

static int parse_header(struct tracefile *tf)
{
	struct pt_file_header h;
	uint32_t size;

	if (tf->size < 16)
		return fail(tf, -PT_ETRUNC, tf->size, "file header: %zu bytes", tf->size);
	if (memcmp(tf->buf, PT_FILE_MAGIC, 8))
		return fail(tf, -PT_EFORMAT, 0, "not a trace.bin (bad magic)");
	memcpy(&size, tf->buf + 8, 4);
	if (size < offsetof(struct pt_file_header, reserved))
		return fail(tf, -PT_EFORMAT, 8, "file header: size %u", size);
	if (size > tf->size)
		return fail(tf, -PT_ETRUNC, tf->size, "file header: size %u", size);
	/* The size field sits after the magic, so load by hand (growth rules). */
	if (abi_struct_load(&h, sizeof(h), tf->buf, size))
		return fail(tf, -PT_EFORMAT, sizeof(h), "file header: unknown non-zero fields");
	if (h.endian != PT_FILE_ENDIAN)
		return fail(tf, -PT_EVERSION, offsetof(struct pt_file_header, endian),
			    "file header: endianness 0x%08x is not this host's", h.endian);
	if (h.major == 1)
		return fail(tf, -PT_EVERSION, offsetof(struct pt_file_header, major),
			    "format 1.%u: read by pathregen of commit 42e015a, not this one (2.x)",
			    h.minor);
	if (h.major != PT_FILE_MAJOR)
		return fail(tf, -PT_EVERSION, offsetof(struct pt_file_header, major),
			    "format %u.%u, this reader knows %u.x", h.major, h.minor,
			    PT_FILE_MAJOR);
	if (h.flags)
		return fail(tf, -PT_EFORMAT, offsetof(struct pt_file_header, flags),
			    "file header: flags 0x%x", h.flags);
	if (size % 8)
		return fail(tf, -PT_EFORMAT, 8, "file header: size %u not a multiple of 8", size);
	tf->major = h.major;
	tf->minor = h.minor;
	return size;
}

/* Parses tf->buf (tf->size bytes), which tf owns. */
static int parse_owned(struct tracefile *tf)
{
	size_t size = tf->size;
	uint64_t off;
	int err;

	err = parse_header(tf);
	if (err < 0)
		return err;
	off = err;
	while (off < size) {
		struct pt_section s;
		const uint8_t *p;
		uint64_t padded;

		if (size - off < sizeof(s))
			return fail(tf, -PT_ETRUNC, off, "section header cut short");
		memcpy(&s, tf->buf + off, sizeof(s));
		if (s.flags)
			return fail(tf, -PT_EFORMAT, off, "section %u: flags 0x%x", s.id, s.flags);
		if (s.size > size - off - sizeof(s))
			return fail(tf, -PT_ETRUNC, off, "section %u: %llu bytes, %llu remain",
				    s.id, (unsigned long long)s.size,
				    (unsigned long long)(size - off - sizeof(s)));
		padded = (s.size + 7) & ~7ull;
		if (padded > size - off - sizeof(s))
			return fail(tf, -PT_ETRUNC, off, "section %u: padding cut short", s.id);
		p = tf->buf + off + sizeof(s);
		switch (s.id) {
		case PT_SEC_SYSTEM:
			err = parse_system(tf, p, s.size, off);
			break;
		case PT_SEC_FUNCTION:
			err = parse_function(tf, p, s.size, off);
			break;
		case PT_SEC_PAGES:
		case PT_SEC_PAGES_TRIMMED:
			err = parse_pages(tf, p, s.size, off, s.id == PT_SEC_PAGES_TRIMMED);
			break;
		case PT_SEC_LOSS:
			err = parse_loss(tf, p, s.size, off);
			break;
		case PT_SEC_END:
			if (s.size)
				return fail(tf, -PT_EFORMAT, off, "END: %llu payload bytes",
					    (unsigned long long)s.size);
			if (off + sizeof(s) != size)
				return fail(tf, -PT_EFORMAT, off + sizeof(s),
					    "%llu bytes after END",
					    (unsigned long long)(size - off - sizeof(s)));
			tf->complete = 1;
			return 0;
		default:
			tf->unknown_sections++;
			err = 0;
			break;
		}
		if (err)
			return err;
		off += sizeof(s) + padded;
	}
	return fail(tf, -PT_ETRUNC, size, "no END section (file cut short?)");
}

int tracefile_parse(const void *data, size_t size, struct tracefile *tf)
{
	memset(tf, 0, sizeof(*tf));
	tf->buf = malloc(size ? size : 1);
	if (!tf->buf)
		return fail(tf, -PT_ENOMEM, 0, "out of memory");
	if (size)
		memcpy(tf->buf, data, size);
	tf->size = size;
	return parse_owned(tf);
}

int tracefile_read(const char *path, struct tracefile *tf)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL, *grown;
	size_t n = 0, cap = 0, got;
	int err;

	memset(tf, 0, sizeof(*tf));
	if (!f)
		return fail(tf, -PT_EIO, 0, "%s", strerror(errno));
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 16;
			grown = realloc(buf, cap);
			if (!grown) {
				free(buf);
				fclose(f);
				return fail(tf, -PT_ENOMEM, n, "out of memory");
			}
			buf = grown;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		err = errno;
		free(buf);
		fclose(f);
		errno = err;
		return fail(tf, -PT_EIO, n, "%s", strerror(err));
	}
	fclose(f);
	tf->buf = buf;		/* no second copy: tf owns the bytes read */
	tf->size = n;
	return parse_owned(tf);
}

void tracefile_free(struct tracefile *tf)
{
	free(tf->buf);
	free(tf->release);
	free(tf->funcs);
	free(tf->pages);
	memset(tf, 0, sizeof(*tf));
}

const struct tf_function *tracefile_func(const struct tracefile *tf, uint32_t func_id)
{
	uint32_t i;

	for (i = 0; i < tf->nfuncs; i++)
		if (tf->funcs[i].func_id == func_id)
			return &tf->funcs[i];
	return NULL;
}

int tf_function_cfg(const struct tf_function *fn, struct cfg *c)
{
	int err = cfg_blob_decode(fn->cfg, fn->cfg_len, c);

	if (!err && c->addr != fn->addr)
		err = -PT_EFORMAT;
	return err;
}
