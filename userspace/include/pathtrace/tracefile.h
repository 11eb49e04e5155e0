/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracefile - the trace.bin container (trace-format/FORMAT.md): writer,
 * reader, CFG blobs and ring-buffer page decoding.
 *
 * The reader never trusts a size: every length is checked against the
 * bytes that remain, so malformed or truncated input gives a negative PT_E*
 * and the offset of the problem, never a crash or a hang. What was valid
 * before the problem stays usable (tf->nfuncs, tf->npages, ...).
 */
#ifndef PATHTRACE_TRACEFILE_H
#define PATHTRACE_TRACEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pathtrace/cfg.h>
#include "pathtrace_abi.h"

/* One PT_SEC_FUNCTION section; pointers into the reader's copy of the file. */
struct tf_function {
	uint32_t func_id;
	uint64_t addr;
	uint64_t cold_addr;
	uint32_t len;
	uint32_t cold_len;
	const char *name;		/* not NUL-terminated: name_len bytes */
	uint32_t name_len;
	const uint8_t *code;		/* len bytes of the main part, then cold_len */
	const uint8_t *cfg;		/* the CFG blob (struct pt_cfg_hdr ...) */
	uint32_t cfg_len;
	const uint8_t *plan;		/* the plan blob (struct pt_plan ...) */
	uint32_t plan_len;
	uint64_t offset;		/* of the section header in the file */
};

/* One page of a PAGES section as the file stores it. */
struct tf_page {
	const uint8_t *data;		/* its stored bytes */
	uint32_t len;
	uint32_t bad;			/* it fails its checksum: a gap where it was */
};

/*
 * One PT_SEC_PAGES section (nr_pages pages of page_size bytes of one CPU),
 * or PT_SEC_PAGES_TRIMMED (each page its first tf_page_stored_len bytes).
 * A section the file's end cuts keeps its complete pages (cut set).
 */
struct tf_pages {
	uint32_t cpu;
	uint32_t page_size;
	uint32_t nr_pages;		/* in page[]: complete pages */
	uint32_t trimmed;		/* PT_SEC_PAGES_TRIMMED */
	const uint8_t *data;
	uint64_t bytes;			/* of page data in the file */
	uint64_t offset;		/* of the section header in the file */
	struct tf_page *page;		/* nr_pages (owned by the tracefile) */
	uint32_t checked;		/* a CHECKSUM section covers it */
	uint32_t cut;			/* the file ends inside it: pages after page[] are lost */
};

/*
 * Where a ring-buffer page's data ends (page_size bytes, at least 32): its
 * 16-byte header, its committed events and a stored lost-events count
 * (FORMAT.md, "Page checks"); 0 when its commit field is not one the reader accepts
 * (unknown bits, a stored count without missed events, data beyond the
 * page). Reads the first 16 bytes of page only.
 */
uint32_t tf_page_data_end(const void *page, uint32_t page_size);

/*
 * Bytes of a ring-buffer page (page_size bytes, at least 32) that a
 * PT_SEC_PAGES_TRIMMED section stores (FORMAT.md "PAGES_TRIMMED"): its 16-byte header,
 * its committed data and a stored lost-events count, rounded up to 8; the
 * whole page when its commit field is not one the reader accepts. Reads
 * the first 16 bytes of page only.
 */
uint32_t tf_page_stored_len(const void *page, uint32_t page_size);


struct tracefile {
	uint8_t *buf;			/* the file's bytes (owned; read-only when mapped) */
	size_t size;
	int mapped;			/* tracefile_read mapped the file (mmap) */
	uint16_t major, minor;

	int has_system;
	uint32_t nr_cpus;
	uint32_t page_size;
	char *release;			/* NUL-terminated copy */
	uint64_t start_ns;

	struct tf_function *funcs;
	uint32_t nfuncs;
	struct tf_pages *pages;		/* in file order (a CPU's pages may be split) */
	uint32_t npages;

	int has_loss;
	uint64_t dropped;
	uint64_t missed;

	uint32_t unknown_sections;	/* skipped: ids this reader does not know */
	/*
	 * Integrity (CHECKSUM sections, format 2.1): sections verified; pages
	 * that fail their sum (each a gap, tf_page.bad); sections whose header
	 * or payload fails it (skipped); sections of a 2.1 file with no
	 * usable CHECKSUM before them (read unverified).
	 */
	uint32_t checked_sections;
	uint32_t corrupt_pages;
	uint32_t corrupt_sections;
	uint32_t unchecked_sections;
	uint64_t corrupt_offset;	/* of the first corrupt page or section */
	int complete;			/* PT_SEC_END seen */
	int err;			/* 0, or the negative PT_E* that stopped reading */
	uint64_t err_off;		/* where */
	char err_msg[96];		/* what, for a human */
};

/*
 * Parses size bytes (copied; data may be freed afterwards). Returns 0 for a
 * complete, valid file; -PT_EFORMAT (malformed), -PT_ETRUNC (ends early,
 * including a missing PT_SEC_END), -PT_EVERSION (another major version or
 * endianness), -PT_ENOMEM. On every error except -PT_ENOMEM tf is still
 * filled with the sections before the problem, and tf->err, tf->err_off,
 * tf->err_msg describe it; free tf with tracefile_free either way. A file
 * cut inside a PAGES section keeps that section's complete pages (cut set).
 * Checksums (2.1) that fail are no error: the page is marked bad, the
 * section skipped, and counted (corrupt_pages, corrupt_sections).
 */
int tracefile_parse(const void *data, size_t size, struct tracefile *tf);

/*
 * Reads path and parses it: as tracefile_parse, plus -PT_EIO (errno set).
 * A regular file is mapped read-only (mapped set), not copied: it must not
 * shrink while tf holds it.
 */
int tracefile_read(const char *path, struct tracefile *tf);

/*
 * Tells the kernel the len bytes at p (inside tf->buf) are not needed now:
 * a mapped file's whole pages among them leave resident memory (they are
 * clean: reading them again reads the file). Nothing for a copy.
 */
void tracefile_release(const struct tracefile *tf, const void *p, size_t len);

void tracefile_free(struct tracefile *tf);

/* The function with func_id, or NULL. */
const struct tf_function *tracefile_func(const struct tracefile *tf, uint32_t func_id);

/* ------------------------------------------------------------ writer */

struct tf_writer {
	FILE *f;
	uint64_t off;		/* bytes written */
	int err;		/* first error (sticky) */
	int owns;		/* tfw_open opened f: tfw_close closes it */
};

/*
 * Opens path for writing and writes the file header. Returns 0, -PT_EIO
 * (errno set). Every tfw_* call returns 0 or the sticky first error. Every
 * section but END comes after a CHECKSUM section of its sums (FORMAT.md 2.8).
 */
int tfw_open(struct tf_writer *w, const char *path);
/* As tfw_open on an already open stream (not closed by tfw_close). */
int tfw_init(struct tf_writer *w, FILE *f);

int tfw_system(struct tf_writer *w, uint32_t nr_cpus, uint32_t page_size,
	       const char *release, uint64_t start_ns);
/* fn->name/name_len, code (len + cold_len bytes), cfg and plan blobs. -PT_EINVAL for NULLs with non-zero lengths. */
int tfw_function(struct tf_writer *w, const struct tf_function *fn);
/*
 * nr_pages pages of one CPU, page_size bytes each, as read from the ring
 * buffer, written as PT_SEC_PAGES_TRIMMED (each page up to its data's end);
 * *bytes (if not NULL) gets the page bytes it stored.
 */
int tfw_pages(struct tf_writer *w, uint32_t cpu, uint32_t page_size, uint32_t nr_pages,
	      const void *data, uint64_t *bytes);
int tfw_loss(struct tf_writer *w, uint32_t nr_cpus, uint64_t dropped, uint64_t missed);
/*
 * Any section (tests; future ids): its CHECKSUM section, then id, size
 * payload bytes and padding.
 */
int tfw_section(struct tf_writer *w, uint32_t id, const void *payload, uint64_t size);
/*
 * Hands what was written to the kernel (fflush): a process killed after it
 * leaves the file's sections up to here readable. Returns 0 or the error.
 */
int tfw_flush(struct tf_writer *w);
/* Writes PT_SEC_END, flushes and closes (unless tfw_init). Returns 0 or the first error. */
int tfw_close(struct tf_writer *w);

/* ----------------------------------------------------------- CFG blob */

/* Serializes c. Returns the blob (malloc'd) in *out and its length, 0; -PT_ENOMEM; -PT_EOVERFLOW. */
int cfg_blob_encode(const struct cfg *c, uint8_t **out, uint32_t *out_len);

/*
 * Parses a blob into c (zeroed first), checking every index: blocks'
 * instruction and edge ranges, edge ends, insn blocks, name offsets.
 * Returns 0; -PT_EFORMAT (malformed); -PT_ETRUNC (too short); -PT_ENOMEM.
 * Free c with cfg_blob_free (not cfg_free: the strings live in one pool).
 */
int cfg_blob_decode(const void *blob, size_t len, struct cfg *c);
void cfg_blob_free(struct cfg *c);

/*
 * The CFG recorded with fn (trace.bin or the function store) into c, as
 * cfg_blob_decode; also -PT_EFORMAT when it is not fn's (it starts
 * elsewhere than fn->addr). Free c with cfg_blob_free either way.
 */
int tf_function_cfg(const struct tf_function *fn, struct cfg *c);

/* ---------------------------------------------------- records from pages */

/* A loss kind the reader adds (never written by the module): bad input. */
#define TR_LOSS_CORRUPT 0x100u

/* CPU numbers a file may name: x86-64's largest NR_CPUS (MAXSMP). */
#define TR_CPUS_MAX 8192u

/*
 * One ring-buffer record (a pt_rec payload) with where and when it was
 * recorded. The body (len - 8 bytes) is in the set's word pool.
 * Records the reader synthesizes (losses from page flags or corrupt input)
 * have synthetic = 1.
 */
struct tr_rec {
	uint64_t ts;		/* ring-buffer timestamp (CPU-local clock) */
	uint64_t body;		/* index of the first body word in words[] */
	uint32_t cpu;
	uint32_t arg;
	uint16_t type;		/* enum pt_rec_type */
	uint16_t len;
	uint16_t nwords;	/* body words */
	uint16_t synthetic;
	/*
	 * ENTER, BLOCK, FORK and EXEC: bits of this owner emitted before the record that
	 * the next BITS records of its segment carry.
	 * An ENTER_AT record is read as an ENTER with its full return address.
	 */
	uint32_t pending;
};

/* A CPU's coding tables as the reader keeps them (private: pages.c). */
struct tr_cpu_tables;

struct tr_records {
	struct tr_rec *recs;	/* every CPU's records; one CPU's in recording order */
	size_t n, cap;
	uint64_t *words;
	size_t nwords, capw;
	uint32_t max_cpu;	/* largest cpu seen + 1 */
	/* Diagnostics. */
	uint64_t pages;
	uint64_t bad_pages;	/* commit size impossible: page skipped */
	uint64_t bad_events;	/* event framing beyond the page: rest skipped */
	uint64_t bad_records;	/* pt_rec that fails validation */
	uint64_t unknown_records; /* valid framing, type this reader does not know: skipped */
	uint64_t missed_pages;	/* pages flagged with missed events */
	uint64_t sum_pages;	/* pages that failed their checksum: each a gap */
	uint32_t cut_cpus;	/* CPUs whose records a cut file ends with a gap */
	/* Where the bytes go: pages, their committed event bytes, pt_rec bytes. */
	uint64_t page_bytes;
	uint64_t stored_bytes;		/* of those, in trace.bin (PT_SEC_PAGES_TRIMMED) */
	uint64_t committed_bytes;	/* ring-buffer events: headers, records, padding */
	uint64_t record_bytes;		/* pt_rec records, their 8-byte headers included */
	uint64_t records_read;		/* ring-buffer events that were records */
	uint64_t header_bytes;		/* of record_bytes: pt_rec headers */
	uint64_t enter_bytes;		/* of record_bytes: ENTERs, alone or packed with bits */
	/*
	 * Bits of the coded framing: packed segments' heads (owners and stamp
	 * deltas) and lengths, and the ENTER codes by part (kind, function,
	 * return address, advance).
	 */
	uint64_t seg_coded;		/* packed segments read */
	uint64_t seg_owner_bits, seg_delta_bits, seg_len_bits;
	uint64_t enter_codes;		/* ENTER codes read */
	uint64_t enter_kind_bits, enter_func_bits, enter_ret_bits, enter_adv_bits;
	/* Reused between pages (private). */
	void *kb;		/* struct kbuffer */
	uint8_t *scratch;	/* zero-padded page copy */
	uint32_t scratch_size;
	/* Per CPU: its ENTER and segment tables, each allocated at its first use. */
	struct tr_cpu_tables **cpu_tables;
	uint32_t cpu_tables_n;
	size_t *cpu_last;	/* per CPU: index + 1 of its last record, 0 if none */
	uint32_t cpu_last_n;
};

/*
 * Decodes one ring-buffer page (page_size bytes, as ring_buffer_read_page
 * produced it) of cpu with libtraceevent's kbuffer and appends its records.
 * A page whose header or events are impossible is not an error: it becomes
 * a synthetic LOSS(TR_LOSS_CORRUPT) record at that place, counted in the
 * diagnostics. Missed-events flags become LOSS(OVERRUN, count) before the
 * page's records (count 0: unknown). Returns 0, -PT_EINVAL (page_size < 32
 * or > 1 MiB), -PT_ENOMEM.
 */
int tr_decode_page(struct tr_records *rs, uint32_t cpu, const void *page, uint32_t page_size);

/*
 * Every PT_SEC_PAGES(_TRIMMED) section of tf, in file order. A page that
 * failed its checksum (tf_page.bad) is a LOSS(TR_LOSS_CORRUPT) where it
 * was; in a file cut short (no END) every CPU's records end with one.
 * Returns 0, -PT_EINVAL, -PT_ENOMEM.
 */
int tr_decode_tracefile(struct tr_records *rs, const struct tracefile *tf);

/* Appends a copy of src's record r (and its body) to dst. Returns 0 or -PT_ENOMEM. */
int tr_records_copy(struct tr_records *dst, const struct tr_records *src, const struct tr_rec *r);

/*
 * Records [first, first + n) of rs, handed over (tr_decode_tracefile_each).
 * Returns 0 or a negative PT_E*, which stops the decoding.
 */
typedef int (*tr_take_fn)(void *ctx, const struct tr_records *rs, size_t first, size_t n);

/*
 * As tr_decode_tracefile, but the records go to take a window at a time
 * (about window records, 0: 8192, then the rest) and leave rs: each
 * CPU's records reach take in recording order, CPUs interleaved (each
 * CPU's last record waits for the next window: a loss may merge into it);
 * at the end rs holds none, only its counts. Memory follows the window,
 * not the file. Returns 0, -PT_EINVAL, -PT_ENOMEM, or take's error.
 */
int tr_decode_tracefile_each(struct tr_records *rs, const struct tracefile *tf, size_t window,
			     tr_take_fn take, void *ctx);

/*
 * As tr_decode_tracefile_each, of the sections of the CPUs cpus marks
 * (cpus[c] non-zero for c < ncpus; NULL: every CPU) and no other: what
 * one of several threads decodes, each with a tr_records of its own, the
 * CPUs shared out among them (a CPU's pages must be read in order, by
 * one). Each thread releases the pages it read (tracefile_release).
 * tr_records_add_counts then sums their diagnostics into one.
 */
int tr_decode_tracefile_cpus(struct tr_records *rs, const struct tracefile *tf, const uint8_t *cpus,
			     uint32_t ncpus, size_t window, tr_take_fn take, void *ctx);

/* Adds src's diagnostics (its counts, max_cpu) to dst's. */
void tr_records_add_counts(struct tr_records *dst, const struct tr_records *src);

/* Checks one record payload (len bytes, 8-aligned or not): 0 or -PT_EFORMAT. */
int tr_check_record(const void *payload, size_t len);

void tr_records_free(struct tr_records *rs);

static inline const uint64_t *tr_body(const struct tr_records *rs, const struct tr_rec *r)
{
	return rs->words + r->body;
}

#endif
