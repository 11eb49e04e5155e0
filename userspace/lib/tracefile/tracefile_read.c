// SPDX-License-Identifier: GPL-2.0
/*
 * tracefile_read - parses trace.bin (trace-format/FORMAT.md) without
 * trusting any size in it: every length is checked against what remains of
 * its section and of the file, so counts are bounded by the file size.
 * CHECKSUM sections (format 2.1) are checked against the section after
 * them: a page that fails its sum is marked bad (a gap where it was), a
 * section that fails it is skipped; a file cut short keeps every whole
 * page before the cut.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <xxhash.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "../base/abi_struct.h"

#define PAGE_SIZE_MIN 32u
#define PAGE_SIZE_MAX (1u << 20)
/* Page bytes summed through a mapping before they are released (tracefile_release). */
#define RELEASE_BYTES (1u << 20)
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
	if (s.nr_cpus > TR_CPUS_MAX)
		return fail(tf, -PT_EFORMAT, off, "SYSTEM: %u cpus, more than %u", s.nr_cpus,
			    TR_CPUS_MAX);
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

/* A CHECKSUM section read, waiting for the section it covers (FORMAT.md 2.8). */
struct pending_sum {
	int have;			/* the next section is covered */
	struct pt_sec_checksum c;
	const uint8_t *entries;		/* c.nr_pages struct pt_page_sum */
	uint64_t off;			/* of the CHECKSUM section */
};

/*
 * Where the pages' sums read their bytes: a mapped file's through pread
 * into buf, which holds the file's bytes [lo, hi), so that summing does
 * not fault the mapping in (the decoder reads it later, a window at a
 * time); else (fd -1, or a read that fails) the bytes themselves.
 */
struct sum_source {
	int fd;
	uint8_t *buf;
	size_t cap;
	uint64_t lo, hi;
};

#define SUM_READ_BYTES (1u << 20)

/* The len bytes at p of tf->buf, to be summed: from src's buffer when it can read them. */
static const uint8_t *sum_bytes(const struct tracefile *tf, struct sum_source *src,
				const uint8_t *p, uint32_t len)
{
	uint64_t off = (uint64_t)(p - tf->buf), want, got = 0;
	ssize_t n;

	if (src->fd < 0)
		return p;
	if (off >= src->lo && off + len <= src->hi)
		return src->buf + (off - src->lo);
	want = tf->size - off < SUM_READ_BYTES ? tf->size - off : SUM_READ_BYTES;
	if (want < len)
		want = len;
	if (want > src->cap) {
		free(src->buf);
		src->buf = malloc(want);
		src->cap = src->buf ? want : 0;
	}
	src->lo = src->hi = 0;
	while (src->buf && got < want) {
		n = pread(src->fd, src->buf + got, want - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (uint64_t)n;
	}
	if (got < len)
		return p;
	src->lo = off;
	src->hi = off + got;
	return src->buf;
}

/* One more corrupt page or section (*count), at off. */
static void corrupt_at(struct tracefile *tf, uint32_t *count, uint64_t off)
{
	if ((!tf->corrupt_pages && !tf->corrupt_sections) || off < tf->corrupt_offset)
		tf->corrupt_offset = off;
	++*count;
}

static int parse_checksum(struct tracefile *tf, const uint8_t *p, uint64_t n, uint64_t off,
			  struct pending_sum *ps)
{
	int64_t used = load_sized(&ps->c, sizeof(ps->c), p, n,
				  offsetof(struct pt_sec_checksum, reserved));

	memset(ps, 0, offsetof(struct pending_sum, c));
	if (used < 0 || (n - used) / sizeof(struct pt_page_sum) != ps->c.nr_pages ||
	    (n - used) % sizeof(struct pt_page_sum)) {
		/* a sum that cannot be read: the section it covers is not trusted */
		corrupt_at(tf, &tf->corrupt_sections, off);
		return 0;
	}
	ps->have = 1;
	ps->entries = p + used;
	ps->off = off;
	return 0;
}

/* Page i's entry of ps: its stored length and sum. */
static void page_sum(const struct pending_sum *ps, uint32_t i, struct pt_page_sum *e)
{
	memcpy(e, ps->entries + (size_t)i * sizeof(*e), sizeof(*e));
}

/*
 * The pages' lengths as ps stores them, when they are lengths of pages of
 * s and add up to avail bytes (at most, when cut): 1 and lens filled; else 0.
 */
static int sum_lengths(const struct pending_sum *ps, const struct pt_sec_pages *s, int trimmed,
		       uint64_t avail, int cut, struct tf_page *pg, uint32_t *complete)
{
	struct pt_page_sum e;
	uint64_t at = 0;
	uint32_t i;

	if (!ps->have || ps->c.nr_pages != s->nr_pages)
		return 0;
	for (i = 0; i < s->nr_pages; i++) {
		page_sum(ps, i, &e);
		if (e.len < 16 || e.len > s->page_size || e.len % 8 || (!trimmed && e.len != s->page_size))
			return 0;
		if (cut && avail - at < e.len)
			break;
		if (avail - at < e.len)
			return 0;
		pg[i].len = e.len;
		at += e.len;
	}
	if (!cut && at != avail)
		return 0;
	*complete = i;
	return 1;
}

/*
 * PAGES, or PAGES_TRIMMED: each page its tf_page_stored_len bytes, which
 * its own header says (or its CHECKSUM entry, which a bad page's header
 * cannot mislead); the pages must fill the section exactly, but for a
 * section the file's end cuts (cut: n is what remains), which keeps its
 * complete pages. Each page covered by a sum is checked against it.
 */
static int parse_pages(struct tracefile *tf, const uint8_t *p, uint64_t n, uint64_t off,
		       int trimmed, const struct pending_sum *ps, struct sum_source *src, int cut)
{
	const char *what = trimmed ? "PAGES_TRIMMED" : "PAGES";
	struct pt_sec_pages s;
	int64_t used = load_sized(&s, sizeof(s), p, n, offsetof(struct pt_sec_pages, reserved));
	struct tf_pages *grown;
	struct tf_page *pg;
	uint32_t i, complete = 0;
	uint64_t at, rel;

	if (used < 0 && cut)
		return fail(tf, -PT_ETRUNC, off, "the file ends inside %s's header", what);
	if (used < 0)
		return fail(tf, -PT_EFORMAT, off, "%s: bad struct size", what);
	if (s.page_size < PAGE_SIZE_MIN || s.page_size > PAGE_SIZE_MAX || s.page_size % 8)
		return fail(tf, -PT_EFORMAT, off, "%s: page_size %u", what, s.page_size);
	if (!cut && !trimmed && (uint64_t)used + (uint64_t)s.page_size * s.nr_pages != n)
		return fail(tf, -PT_EFORMAT, off, "PAGES: %u pages of %u bytes do not fill %llu",
			    s.nr_pages, s.page_size, (unsigned long long)n);
	if (s.cpu >= TR_CPUS_MAX)
		return fail(tf, -PT_EFORMAT, off, "PAGES: cpu %u, more than %u cpus", s.cpu,
			    TR_CPUS_MAX);
	if (tf->has_system && s.cpu >= tf->nr_cpus)
		return fail(tf, -PT_EFORMAT, off, "PAGES: cpu %u of %u", s.cpu, tf->nr_cpus);
	/* every stored page has its 16-byte header: the bytes bound how many are whole */
	pg = calloc((size_t)(s.nr_pages < (n - used) / 16 ? s.nr_pages : (n - used) / 16) + 1,
		    sizeof(*pg));
	if (!pg)
		return fail(tf, -PT_ENOMEM, off, "out of memory");
	if (!sum_lengths(ps, &s, trimmed, n - used, cut, pg, &complete)) {
		for (i = 0, at = used; i < s.nr_pages; i++) {
			/* a page's header says how much of it is stored */
			uint32_t len = n - at < 16 ? 0 :
				       trimmed ? tf_page_stored_len(p + at, s.page_size) : s.page_size;

			if (!len || n - at < len) {
				if (cut)
					break;
				free(pg);
				return fail(tf, -PT_EFORMAT, off + 16 + at,
					    "PAGES_TRIMMED: page %u of %u cut short", i, s.nr_pages);
			}
			pg[i].len = len;
			at += len;
		}
		if (!cut && at != n) {
			free(pg);
			return fail(tf, -PT_EFORMAT, off,
				    "PAGES_TRIMMED: %u pages leave %llu of %llu bytes", s.nr_pages,
				    (unsigned long long)(n - at), (unsigned long long)n);
		}
		complete = i;
	}
	for (i = 0, at = used, rel = used; i < complete; i++) {
		struct pt_page_sum e;

		/* summed: a mapped file's pages may leave memory, a MiB at a time */
		if (at - rel >= RELEASE_BYTES) {
			tracefile_release(tf, p + rel, at - rel);
			rel = at;
		}
		pg[i].data = p + at;
		if (ps->have && i < ps->c.nr_pages) {
			page_sum(ps, i, &e);
			if (e.len != pg[i].len ||
			    e.sum != XXH3_64bits(sum_bytes(tf, src, pg[i].data, pg[i].len), pg[i].len)) {
				pg[i].bad = 1;
				corrupt_at(tf, &tf->corrupt_pages, off + 16 + at);
			}
		}
		at += pg[i].len;
	}
	tracefile_release(tf, p + rel, at - rel);
	grown = realloc(tf->pages, (tf->npages + 1) * sizeof(*grown));
	if (!grown) {
		free(pg);
		return fail(tf, -PT_ENOMEM, off, "out of memory");
	}
	tf->pages = grown;
	grown[tf->npages] = (struct tf_pages){
		.cpu = s.cpu, .page_size = s.page_size, .nr_pages = complete,
		.trimmed = trimmed, .data = p + used, .bytes = at - used, .offset = off,
		.page = pg, .checked = ps->have, .cut = cut,
	};
	tf->npages++;
	if (cut)
		return fail(tf, -PT_ETRUNC, off,
			    "the file ends inside %s of cpu %u: %u of its %u pages whole", what,
			    s.cpu, complete, s.nr_pages);
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

	if (tf->size < 8 && memcmp(tf->buf, PT_FILE_MAGIC, tf->size))
		return fail(tf, -PT_EFORMAT, 0, "not a trace.bin (it does not start with PTTRACE)");
	if (tf->size < 16)
		return fail(tf, -PT_ETRUNC, tf->size, "file header: %zu bytes", tf->size);
	if (memcmp(tf->buf, PT_FILE_MAGIC, 8))
		return fail(tf, -PT_EFORMAT, 0, "not a trace.bin (it does not start with PTTRACE)");
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

/*
 * Whether ps's head sum matches the section at off (header s): its header
 * and payload, or for pages their struct (FORMAT.md 2.8). avail: payload
 * bytes in the file.
 */
static int head_matches(const struct tracefile *tf, const struct pending_sum *ps, uint64_t off,
			const struct pt_section *s, uint64_t avail)
{
	uint64_t n = s->size;
	uint32_t ssize;

	if (s->id == PT_SEC_PAGES || s->id == PT_SEC_PAGES_TRIMMED) {
		if (avail < 4)
			return 0;
		memcpy(&ssize, tf->buf + off + sizeof(*s), 4);
		n = ssize;
	}
	if (n > avail)
		return 0;
	return XXH3_64bits(tf->buf + off, sizeof(*s) + n) == ps->c.head;
}

/* Parses tf->buf's sections (parse_owned), the pages' sums from src. */
static int parse_sections(struct tracefile *tf, struct sum_source *src)
{
	struct pending_sum ps = { .have = 0 };
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
		uint64_t padded, avail;
		int pages, cut;

		if (size - off < sizeof(s))
			return fail(tf, -PT_ETRUNC, off, "the file ends inside a section header");
		memcpy(&s, tf->buf + off, sizeof(s));
		if (s.flags)
			return fail(tf, -PT_EFORMAT, off, "section %u: flags 0x%x", s.id, s.flags);
		p = tf->buf + off + sizeof(s);
		avail = size - off - sizeof(s);
		pages = s.id == PT_SEC_PAGES || s.id == PT_SEC_PAGES_TRIMMED;
		cut = s.size > avail;
		if (s.id == PT_SEC_CHECKSUM) {
			if (cut)
				return fail(tf, -PT_ETRUNC, off, "the file ends inside a CHECKSUM section");
			if (ps.have) {	/* two in a row: the first covers nothing */
				corrupt_at(tf, &tf->corrupt_sections, ps.off);
			}
			parse_checksum(tf, p, s.size, off, &ps);
			off += sizeof(s) + ((s.size + 7) & ~7ull);
			continue;
		}
		if (cut && !pages)
			return fail(tf, -PT_ETRUNC, off,
				    "the file ends inside section %u (%llu of its %llu bytes)", s.id,
				    (unsigned long long)avail, (unsigned long long)s.size);
		if (cut && (avail < 4 || avail < *(const uint32_t *)p))
			return fail(tf, -PT_ETRUNC, off, "the file ends inside %s's header",
				    s.id == PT_SEC_PAGES ? "PAGES" : "PAGES_TRIMMED");
		if (ps.have && s.id != PT_SEC_END && !head_matches(tf, &ps, off, &s, avail)) {
			/* the header or what it describes is not what was written */
			corrupt_at(tf, &tf->corrupt_sections, off);
			ps.have = 0;
			if (cut)
				return fail(tf, -PT_EFORMAT, off,
					    "section %u fails its checksum, and its size runs past the file",
					    s.id);
			off += sizeof(s) + ((s.size + 7) & ~7ull);
			continue;
		}
		if (ps.have && s.id != PT_SEC_END)
			tf->checked_sections++;
		else if (tf->minor >= 1 && s.id != PT_SEC_END)
			tf->unchecked_sections++;	/* a 2.1 writer sums every section */
		if (cut)
			return parse_pages(tf, p, avail, off, s.id == PT_SEC_PAGES_TRIMMED, &ps, src,
					   1);
		padded = (s.size + 7) & ~7ull;
		switch (s.id) {
		case PT_SEC_SYSTEM:
			err = parse_system(tf, p, s.size, off);
			break;
		case PT_SEC_FUNCTION:
			err = parse_function(tf, p, s.size, off);
			break;
		case PT_SEC_PAGES:
		case PT_SEC_PAGES_TRIMMED:
			err = parse_pages(tf, p, s.size, off, s.id == PT_SEC_PAGES_TRIMMED, &ps,
					  src, 0);
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
			if (ps.have) {	/* a CHECKSUM of nothing: END's id was another's */
				corrupt_at(tf, &tf->corrupt_sections, ps.off);
			}
			tf->complete = 1;
			return 0;
		default:
			tf->unknown_sections++;
			err = 0;
			break;
		}
		ps.have = 0;
		if (err)
			return err;
		if (padded > avail)
			return fail(tf, -PT_ETRUNC, off + sizeof(s) + s.size,
				    "the file ends inside section %u's padding", s.id);
		off += sizeof(s) + padded;
	}
	return fail(tf, -PT_ETRUNC, size, "no END section (file cut short?)");
}

/*
 * Parses tf->buf (tf->size bytes), which tf owns: the file open as fd when
 * tf->buf maps it (else -1), for the pages' sums (struct sum_source).
 */
static int parse_owned(struct tracefile *tf, int fd)
{
	struct sum_source src = { .fd = fd };
	int err = parse_sections(tf, &src);

	free(src.buf);
	return err;
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
	return parse_owned(tf, -1);
}

/* Reads f to its end into a buffer tf owns (a pipe, or a file that cannot be mapped). */
static int read_all(FILE *f, struct tracefile *tf)
{
	uint8_t *buf = NULL, *grown;
	size_t n = 0, cap = 0, got;
	int err;

	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 16;
			grown = realloc(buf, cap);
			if (!grown) {
				free(buf);
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
		errno = err;
		return fail(tf, -PT_EIO, n, "%s", strerror(err));
	}
	tf->buf = buf;		/* no second copy: tf owns the bytes read */
	tf->size = n;
	return 0;
}

int tracefile_read(const char *path, struct tracefile *tf)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	void *map;
	int err;

	memset(tf, 0, sizeof(*tf));
	if (!f)
		return fail(tf, -PT_EIO, 0, "%s", strerror(errno));
	/*
	 * A regular file is mapped read-only, not copied: its pages are clean,
	 * so the kernel can drop them (tracefile_release) and read them again.
	 */
	if (!fstat(fileno(f), &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
		if (map != MAP_FAILED) {
			tf->buf = map;
			tf->size = (size_t)st.st_size;
			tf->mapped = 1;
			err = parse_owned(tf, fileno(f));
			fclose(f);
			/* what parsing read through the mapping: the decoder reads it again */
			tracefile_release(tf, tf->buf, tf->size);
			return err;
		}
	}
	err = read_all(f, tf);
	fclose(f);
	return err ? err : parse_owned(tf, -1);
}

void tracefile_release(const struct tracefile *tf, const void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(page - 1);

	if (!tf->mapped || page & (page - 1) || hi <= lo)
		return;
	/* advice only: a range it does not take stays resident, nothing else changes */
	madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void tracefile_free(struct tracefile *tf)
{
	uint32_t i;

	for (i = 0; i < tf->npages; i++)
		free(tf->pages[i].page);
	if (tf->mapped)
		munmap(tf->buf, tf->size);
	else
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
