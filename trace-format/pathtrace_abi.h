/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pathtrace_abi.h - the one header shared by pathtrace.ko and userspace.
 *
 * It defines three things, all little-endian, fixed-width, 8-byte aligned:
 *   1. the ioctl ABI of /dev/pathtrace (plans in, pages and statistics out);
 *   2. the records the module writes into its per-CPU ring buffers;
 *   3. the trace.bin container (FORMAT.md specifies it byte by byte).
 *
 * Growth rules (as perf_event_attr): every struct that crosses the boundary
 * starts with its own size; a reader accepts a smaller size (missing fields
 * read as zero) and a larger one only if the bytes it does not know are
 * zero. Reserved fields must be zero. A different major version is refused;
 * a minor version only adds fields or record types old readers may skip.
 * An ioctl's number carries its struct's size as the tool was built; the
 * module (from ABI 2.11) matches the number without it and writes back no
 * more than the tool's size field says, so a grown struct is the same
 * command to it.
 */
#ifndef PATHTRACE_ABI_H
#define PATHTRACE_ABI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PT_ABI_MAJOR 2
#define PT_ABI_MINOR 11

#define PT_DEVICE_NAME "pathtrace"
#define PT_NAME_MAX 128		/* function names, NUL-terminated */

/* ---------------------------------------------------------------- ioctls */

#define PT_IOC_MAGIC 0xB7

/* PT_IOC_GET_VERSION: the module's ABI version. */
struct pt_version {
	__u32 size;		/* in: sizeof as the caller knows it */
	__u16 major;		/* out */
	__u16 minor;		/* out */
	__u32 nr_cpus;		/* out: possible CPUs (ring buffers) */
	__u32 page_size;	/* out: ring-buffer page size */
	__u64 reserved[2];	/* out: zero */
};

/* Tracing modes: what the plan's actions compute. */
enum pt_mode {
	PT_MODE_TRACE = 1,	/* witness codes or predicate bits (1994 paper) */
	PT_MODE_PATHS = 2,	/* Ball-Larus path numbers (1996 paper) */
	PT_MODE_EDGES = 3,	/* chord counters (profiling only) */
};

enum pt_encoding {
	PT_ENC_WITNESS = 1,	/* ceil(log2(|Ewit|+1))-bit witness codes */
	PT_ENC_BITS = 2,	/* one bit per executed binary predicate */
	PT_ENC_PATH = 3,	/* ceil(log2(NumPaths))-bit path numbers */
};

/*
 * A plan is one blob: struct pt_plan, then nr_sites struct pt_site, then
 * nr_actions struct pt_action, then nr_blocks struct pt_verify_site when
 * PT_PLAN_VERIFY is set, then nr_implicit struct pt_implicit, then nr_ppp
 * struct pt_ppp_slot, then nr_ctx_codes __u32 (ctx_next) and nr_ctx_words
 * struct pt_ctx_word, then nr_path_codes struct pt_path_code and
 * nr_path_ranges struct pt_path_range. Element sizes are given
 * so arrays can grow.
 */
#define PT_PLAN_VERIFY	(1u << 0)	/* also record every block's id */
/*
 * PT_MODE_PATHS only, without PT_PLAN_VERIFY: a path profile in
 * the kernel. Each PT_OP_PATH_EMIT counts path number register + value in
 * per-CPU counters instead of writing it; the module writes them as
 * PT_REC_PATHS records when it flushes (stop, plan removal), nothing per
 * event.
 */
#define PT_PLAN_PROFILE	(1u << 1)
/*
 * With PT_PLAN_PROFILE only: preferential path profiling (Vaswani,
 * Nori & Chilimbi 2007). PT_OP_PPP_* keep a second register beside the path
 * register, whose value at a path end is the path's PPP id; ids
 * ppp_min .. ppp_min + nr_ppp - 1 number the interesting paths densely. A
 * path end counts in slot id - ppp_min of a per-CPU array of nr_ppp
 * counters when that slot's pt_ppp_slot.path equals the path register (an
 * uninteresting path may alias an id: the Ball-Larus number tells), and in
 * one counter for every other path otherwise. The counts are reported by
 * Ball-Larus number, the others as PT_PATH_OTHER.
 */
#define PT_PLAN_PPP	(1u << 2)
/*
 * With witness words by context only (FORMAT.md, "Adapting witness
 * words"): the words adapt within a segment. See PT_CTX_SWAP_ENTERS below.
 */
#define PT_PLAN_CTX_SWAP	(1u << 3)
/*
 * With witness words by context only (FORMAT.md, "Restored contexts"): a
 * CPU keeps a context row per function, so that a caller's next word after
 * its traced callee returned is still read in its row. See PT_CTX_NONE
 * below.
 */
#define PT_PLAN_CTX_RESTORE	(1u << 4)
/*
 * PT_MODE_TRACE with PT_ENC_WITNESS only: the plan's calls are
 * framed, not blocked (docs/runtime.md, "Framed calls"). While a plan with
 * this flag is installed, every ENTER whose return address is outside the
 * traced code names the innermost traced frame of its context instead:
 * the module walks the stack (ORC) from the probe to the first return
 * address inside traced code, stopping where the probed context's stack
 * ends (another stack, user regs), and writes in the ENTER's return
 * address the low half of that address with bit 31 cleared
 * (PT_ENTER_FRAME), or PT_ENTER_FRAME_UNKNOWN when the walk failed; with
 * none, the ENTER is an untraced caller's, without an address. Text lies in the top 2 GiB, so a return address's low half
 * always has bit 31 set.
 */
#define PT_PLAN_FRAMED		(1u << 5)
/*
 * A user-space function (ABI 2.2, docs/user.md): addr and cold_addr are
 * the virtual addresses of an ELF file's code, the name is "BINARY!FUNC",
 * and PT_IOC_ADD_PLAN gives the file (pt_plan_arg.user_fd) and the delta
 * from virtual address to file offset: the probes are uprobes on the
 * file's inode, in every process that maps it. Its ENTERs carry no return
 * address (ret_lo 0, an untraced caller's); it is not framed and has no
 * implicit entries, so its calls are blocked.
 */
#define PT_PLAN_USER		(1u << 6)
#define PT_ENTER_FRAME(ret_lo)		((__u32)(ret_lo) & 0x7fffffffu)
#define PT_ENTER_FRAME_UNKNOWN		0x7fffffffu
#define PT_ENTER_IS_FRAME(ret_lo)	((ret_lo) && !((__u32)(ret_lo) & 0x80000000u))

struct pt_plan {
	__u32 size;		/* sizeof(struct pt_plan) */
	__u32 total_len;	/* bytes of the whole blob */
	__u16 abi_major;
	__u16 abi_minor;
	__u32 flags;		/* PT_PLAN_* */
	__u32 func_id;		/* caller-chosen, unique among loaded plans */
	__u16 mode;		/* enum pt_mode */
	__u16 encoding;		/* enum pt_encoding; 0 for PT_MODE_EDGES */
	__u64 addr;		/* function start (its symbol's address) */
	__u64 cold_addr;	/* start of the .cold part, or 0 */
	__u32 len;		/* bytes of the function */
	__u32 cold_len;		/* bytes of the .cold part, or 0 */
	__u32 nr_sites;
	__u32 site_size;	/* sizeof(struct pt_site) */
	__u32 nr_actions;
	__u32 action_size;	/* sizeof(struct pt_action) */
	__u32 nr_verify;	/* verify sites (PT_PLAN_VERIFY) */
	__u32 verify_size;	/* sizeof(struct pt_verify_site) */
	__u32 nr_counters;	/* PT_OP_COUNT indices are < nr_counters */
	__u32 nr_implicit;	/* implicit entries, after the verify sites */
	char name[PT_NAME_MAX];	/* symbol name, checked against the kernel's */
	__u32 implicit_size;	/* sizeof(struct pt_implicit), or 0 with none */
	__u32 nr_ppp;		/* PT_PLAN_PPP: PPP slots after the implicit entries */
	__s64 ppp_min;		/* PT_PLAN_PPP: the PPP id of slot 0 */
	__u32 ppp_size;		/* PT_PLAN_PPP: sizeof(struct pt_ppp_slot) */
	__u32 reserved0;
	__u64 reserved[1];
	/* Witness words by context (all zero: none). */
	__u32 nr_ctx_codes;	/* ctx_next entries: witness codes + 1 */
	__u32 nr_ctx_words;	/* struct pt_ctx_word entries */
	__u32 ctx_word_size;	/* sizeof(struct pt_ctx_word), or 0 with none */
	__u32 reserved1;
	/* Path numbers coded by where each path starts (all zero: none). */
	__u32 nr_path_codes;	/* struct pt_path_code entries, sorted by path */
	__u32 path_code_size;	/* sizeof(struct pt_path_code), or 0 with none */
	__u32 nr_path_ranges;	/* struct pt_path_range entries, sorted by lo */
	__u32 path_range_size;	/* sizeof(struct pt_path_range), or 0 with none */
	__u64 nr_paths;		/* NumPaths(ENTRY): the last range ends there */
};

/*
 * Path numbers coded by start (PT_MODE_PATHS traces without
 * PT_PLAN_PROFILE; FORMAT.md, "Path numbers coded by start"). The path
 * numbers 0 .. nr_paths - 1 fall into ranges (one per DAG out-edge of
 * ENTRY, first lo 0) and ranges into classes by where their paths start; each class's words (its listed
 * paths' and its escape) are prefix-free among themselves, 1 .. 32 bits,
 * LSB first. A PT_OP_PATH_EMIT of number n (register + value, its low
 * nbits bits) writes, when a bit of the open segment precedes it, n's
 * word if n is listed, else its range's escape word and then n in nbits
 * bits; when none precedes it (the first bits of a segment: the number may
 * be what is left of a path a PARTIAL sum split), n in nbits bits. A
 * range with esc_nbits 0 has every number in it listed.
 */
#define PT_PATH_CODE_MAX_BITS	32
#define PT_PATH_CODES_MAX	65536u	/* nr_path_codes, nr_path_ranges at most */

struct pt_path_code {
	__u64 path;		/* Ball-Larus number */
	__u32 value;		/* its word, LSB first */
	__u8 nbits;		/* 1 .. PT_PATH_CODE_MAX_BITS */
	__u8 reserved0;
	__u16 reserved1;
};

struct pt_path_range {
	__u64 lo;		/* its first path number */
	__u32 esc_value;	/* its class's escape word, LSB first */
	__u8 esc_nbits;		/* 0: every number of the range is listed */
	__u8 reserved0;
	__u16 reserved1;
};

/*
 * Witness words by context (PT_MODE_TRACE with PT_ENC_WITNESS;
 * FORMAT.md, "Witness words by context"). A CPU keeps a context (function, row): ENTER of f sets
 * (f, ctx_next[0]), except as the first thing of a segment (no bits of the
 * segment before it: then none); EMIT of witness code c (the action's arg,
 * 1 <= c < nr_ctx_codes) sets (f, ctx_next[c]); an owner switch and a
 * refused write set none. An EMIT of f whose context is (f, row) writes the
 * pt_ctx_word of (row, c) when there is one, else its own nbits/value.
 * ctx_next[c] is a row, or PT_CTX_NONE. Words are sorted by (row, code),
 * each pair once, 1..PT_CTX_WORD_MAX_BITS bits.
 */
#define PT_CTX_NONE		0xffffffffu
#define PT_CTX_WORD_MAX_BITS	32

/*
 * PT_PLAN_CTX_SWAP: a CPU also keeps, per function and context
 * row, the code whose word it wrote last in that row, forgotten at an
 * owner switch, a refused write, and the first ENTER it writes after
 * either and every PT_CTX_SWAP_ENTERS-th after that one (implicit entries
 * write none). An EMIT of code c in row r, whose last
 * code l is remembered and is not the row's top (the code whose word has
 * the fewest bits, of those the lowest value), writes the top's word when
 * c is l, l's word when c is the top, else c's own; then r's last code is
 * c. Rows: every pt_ctx_word's row is below PT_CTX_SWAP_ROWS_MAX.
 */
/*
 * PT_PLAN_CTX_RESTORE: the CPU keeps the context above per
 * function instead of one: ENTER of f sets f's row (ctx_next[0], or none
 * as the first thing of a segment), EMIT of c sets f's row to
 * ctx_next[c], and an EMIT of f writes the word of (f's row, c) when f has
 * a row; an owner switch and a refused write forget every function's row.
 * Without the flag an EMIT of f has a row only when the CPU's last ENTER or
 * EMIT was f's.
 */
#define PT_CTX_SWAP_ENTERS	256
#define PT_CTX_SWAP_ROWS_MAX	2048

struct pt_ctx_word {
	__u32 row;
	__u32 code;
	__u32 value;		/* the word, LSB first */
	__u8 nbits;
	__u8 reserved0;
	__u16 reserved1;
};

/*
 * A PPP slot: the Ball-Larus number of the interesting path whose
 * PPP id is ppp_min + its index, or PT_PATH_OTHER for an id no interesting
 * path has (PPP numbering is compact, not always perfect).
 */
struct pt_ppp_slot {
	__u64 path;
};

#define PT_PPP_MAX		4000u		/* nr_ppp at most (the counts fit a per-CPU unit) */
#define PT_PATH_OTHER		(~0ull)		/* every path PPP does not number */

/*
 * An implicit entry: the function's ENTER is not written when its
 * return address is ret, a direct call site in traced function caller_id,
 * while that function's plan is installed: the regenerator, walking the
 * caller, knows the entry is there. Sorted by ret, each ret once; the
 * kernel writes the ENTER anyway whenever the caller is not installed.
 */
struct pt_implicit {
	__u64 ret;
	__u32 caller_id;	/* < PT_IMPLICIT_MAX_ID */
	__u32 reserved;
};

#define PT_IMPLICIT_MAX_ID	65536u

/* Where a site is: which part of the function its offset is relative to. */
enum pt_region {
	PT_REGION_MAIN = 0,
	PT_REGION_COLD = 1,
};

/*
 * How a site decides between its branch's two edges: x86 condition codes
 * (the low nibble of Jcc, 0 = O ... 15 = G) evaluated on the saved flags,
 * decoded when the plan is made, never in the handler.
 */
#define PT_COND_NONE 0xff

struct pt_site {
	__u32 offset;		/* from addr (or cold_addr) */
	__u16 region;		/* enum pt_region */
	__u8 insn_len;		/* length of the probed instruction */
	__u8 cond;		/* x86 cc, or PT_COND_NONE */
	__u32 first_action;	/* index into the action array */
	__u16 nr_actions;
	__u16 flags;		/* PT_SITE_* */
	__u64 reserved;
};

#define PT_SITE_OPTIMIZABLE (1u << 0)	/* the planner expects a jump-optimized probe */

enum pt_op {
	PT_OP_ENTER = 1,	/* write ENTER(func_id, return address); first action of the offset-0 site */
	PT_OP_EMIT = 2,		/* append value's low nbits bits (FORMAT.md, "Witness words");
				 * arg: witness code with context words, else 0 */
	PT_OP_PATH_ADD = 3,	/* path register += value */
	PT_OP_PATH_EMIT = 4,	/* append (register + value) in nbits bits; register = 0
				 * (PT_PLAN_PPP: counts it with the PPP register as
				 * it is, then zeroes both) */
	PT_OP_PATH_SET = 5,	/* register = value */
	PT_OP_COUNT = 6,	/* counters[arg] += 1 */
	PT_OP_PPP_ADD = 7,	/* PT_PLAN_PPP: PPP register += value (mod 2^64) */
	PT_OP_PPP_SET = 8,	/* PT_PLAN_PPP: PPP register = value */
};

/* When an action applies at a conditional site. */
enum pt_when {
	PT_WHEN_ALWAYS = 0,
	PT_WHEN_TAKEN = 1,	/* cond holds: the branch is taken */
	PT_WHEN_NOT_TAKEN = 2,	/* cond fails: fall-through */
};

struct pt_action {
	__u16 op;		/* enum pt_op */
	__u8 when;		/* enum pt_when */
	__u8 nbits;		/* PT_OP_EMIT / PT_OP_PATH_EMIT: 0..64 */
	__u32 arg;		/* PT_OP_COUNT: counter index */
	__u64 value;
};

/*
 * Verify mode: one probe per basic block, writing BLOCK(func_id, block).
 * Where a site and a verify site share an address the module runs ENTER
 * first, then the BLOCK record, then the site's other actions in order.
 */
struct pt_verify_site {
	__u32 offset;
	__u16 region;
	__u16 reserved0;
	__u32 block;		/* block id as the CFG numbers it */
	__u32 reserved1;
};

/*
 * PT_IOC_ADD_PLAN: validate and install one function's plan (disarmed).
 *
 * PT_ADD_INLINE (ABI 2.1): an edges plan (PT_MODE_EDGES, counts only) whose
 * counting is code inside an inline copy of the function (docs/inline.md,
 * "Counters (edges mode)"): no probe is placed; the plan's nr_counters
 * counters are the u64 per-CPU counters at inline_counters bytes into the
 * loaded inline module's counter space, which pt_inline_counters() maps:
 * per-CPU pieces of PT_INLINE_PIECE_BYTES, each copy's counters in one. The
 * module zeroes them at START and writes them as COUNTERS records as it
 * does its own, and holds the inline module until the plan is removed.
 */
#define PT_ADD_INLINE	(1u << 0)
#define PT_INLINE_PIECE_BYTES 16384u

/*
 * PT_ADD_INLINE_SITES (ABI 2.3): a plan for the original function (not an
 * edges plan, not a profile) whose sites are calls in its inline copy
 * (docs/inline.md, "Sites as calls"): no kprobe is registered; the copy
 * calls pt_inline_hit before each site's instruction. The copy spans
 * inline_copy_len bytes from inline_copy; inline_map points at
 * inline_map_len struct pt_inline_addr, sorted by copy address: the
 * addresses in the copy a call returns to, each with the original's
 * address it stands for (return addresses in ENTERs are the original's),
 * and with PT_INLINE_ADDR_SITE the address a site's call returns to, with
 * the site's address in the plan.
 */
#define PT_ADD_INLINE_SITES	(1u << 1)
#define PT_INLINE_ADDR_SITE	(1u << 0)

/*
 * PT_ADD_INLINE_FRAMES (ABI 2.7), with PT_ADD_INLINE_SITES: the copy keeps
 * pathtrace.ko's per-CPU pt_inline_frame at its calls (docs/inline.md,
 * "Frames the copies keep"): it stores its stack pointer there right before
 * each call that returns and zeroes it where the call returns, so an ENTER
 * from untraced code below the call names its frame without unwinding; and
 * it counts its activation in pt_inline_depth (up at its entry, down on
 * every way out), so an ENTER alone in flight knows it runs under none.
 * An activation at depth d (1 to PT_INLINE_FRAMES_SAVED, the count with
 * it) also saves pt_inline_frame as it begins in slot d - 1 of
 * pathtrace.ko's per-CPU pt_inline_frames_saved and puts it back on every
 * way out (ABI 2.8), so the call its caller's frame keeps is kept again
 * once it ends.
 */
#define PT_ADD_INLINE_FRAMES	(1u << 2)
#define PT_INLINE_FRAMES_SAVED	32

struct pt_inline_addr {
	__u64 copy;
	__u64 orig;
	__u32 flags;		/* PT_INLINE_ADDR_* */
	__u32 reserved;
};

struct pt_plan_arg {
	__u32 size;
	__u32 flags;		/* PT_ADD_* */
	__u64 plan;		/* user pointer to the blob */
	__u32 plan_len;
	__s32 user_fd;		/* PT_PLAN_USER: an open descriptor of the ELF file; else 0 */
	__u64 inline_counters;	/* PT_ADD_INLINE: offset of the counters, bytes; else 0 */
	__u64 user_off_delta;	/* PT_PLAN_USER: virtual address - file offset; else 0 */
	__s32 user_pid;		/* PT_PLAN_USER (ABI 2.3): only this process's address
				 * space (a pid in the caller's namespace); 0: every process */
	__u32 reserved0;
	/* PT_ADD_INLINE_SITES (ABI 2.3); else 0 */
	__u64 inline_copy;	/* the copy's address */
	__u32 inline_copy_len;
	__u32 inline_map_len;	/* entries */
	__u64 inline_map;	/* user pointer to struct pt_inline_addr[] */
};

/* PT_IOC_DEL_PLAN: remove one function (func_id) or all (PT_DEL_ALL). */
#define PT_DEL_ALL (1u << 0)
struct pt_del_arg {
	__u32 size;
	__u32 flags;
	__u32 func_id;
	__u32 reserved0;
};

/* PT_IOC_CONFIG: set before tracing starts. */
struct pt_config {
	__u32 size;
	__u32 flags;		/* zero */
	__u32 buffer_kb;	/* per-CPU ring buffer size */
	__u32 osp_entries;	/* online subpath profiling's hot list, subpaths
				 * per CPU (0: off; at most PT_OSP_MAX_ENTRIES) */
	__u64 reserved[2];
};

/*
 * Online subpath profiling (Oren, Matias & Sagiv 2002): while a
 * path profile (PT_PLAN_PROFILE) runs, each CPU samples subpaths, runs of
 * 2, 4 or 8 consecutive path ends of one owner (across loop iterations and
 * calls), into a hot list of at most osp_entries of them: a path end starts
 * a sample with probability 2^-tau_log2 and a length drawn uniformly; when
 * the list is full, tau_log2 grows by one and every count is thinned
 * (each sampled occurrence kept with probability 1/2), the concise samples
 * of Gibbons & Matias. A subpath's count is estimated as count * 2^tau_log2
 * * PT_OSP_LENGTHS. A sample whose owner changes (a task switch on its CPU)
 * is not taken (cut); an NMI handler's path ends are not sampled.
 */
#define PT_OSP_MAX_LEN		8
#define PT_OSP_LENGTHS		3	/* 2, 4, 8 */
#define PT_OSP_MAX_ENTRIES	4096

struct pt_subpath {
	__u32 len;		/* path ends in it: 2, 4 or 8 */
	__u32 tau_log2;		/* its CPU's sampling when read */
	__u64 count;		/* sampled occurrences */
	__u32 func[PT_OSP_MAX_LEN];	/* func_id of each path end (len used) */
	__u64 path[PT_OSP_MAX_LEN];	/* Ball-Larus number of each */
};

/*
 * PT_IOC_SUBPATHS_READ: one CPU's OSP hot list as it is now (read
 * on that CPU, nothing reset): up to @max entries at user address
 * @entries. The lists start empty at PT_IOC_START and stay after STOP.
 * -ENODATA: OSP not configured; -EINVAL: offline or impossible CPU, an
 * entry size below this ABI's or above a page, reserved fields not zero.
 */
struct pt_subpaths_read {
	__u32 size;
	__u32 cpu;		/* in */
	__u64 entries;		/* in: user address of struct pt_subpath[max] */
	__u32 max;		/* in: room, in entries */
	__u32 entry_size;	/* in: sizeof(struct pt_subpath) */
	__u32 n;		/* out: entries written */
	__u32 tau_log2;		/* out: the CPU's sampling: 1 in 2^tau_log2 path ends */
	__u64 positions;	/* out: path ends it saw */
	__u64 samples;		/* out: samples taken into the hot list */
	__u64 cut;		/* out: samples not taken (owner changed, NMI) */
	__u32 capacity;		/* out: osp_entries */
	__u32 reserved0;
	__u64 reserved[2];
};

/*
 * PT_IOC_READ_PAGE: copy one ring-buffer page of @cpu into @buf (as
 * ring_buffer_read_page() produces it: the layout libtraceevent's kbuffer
 * reads). out_len 0 means the CPU has nothing to read now.
 *
 * poll() on the device (ABI 2.10): readable (POLLIN) while some CPU's
 * buffer holds half its size or more unread, so a reader can sleep between
 * drains; while tracing, the module looks every 10 ms.
 */
struct pt_read_arg {
	__u32 size;
	__u32 cpu;
	__u64 buf;
	__u32 buf_len;		/* at least the page size */
	__u32 flags;		/* zero */
	__u32 out_len;		/* out: bytes written, 0 if empty */
	__u32 reserved0;
	__u64 reserved[2];
};

/* PT_IOC_FUNC_STATS: statistics of one loaded function. */
struct pt_func_stats {
	__u32 size;
	__u32 func_id;		/* in */
	__u32 nr_probes;	/* out: probes registered */
	__u32 nr_optimized;	/* out: of those, jump-optimized by the kernel */
	__u64 hits;		/* out: handler runs */
	__u64 missed;		/* out: hits the kernel skipped since START, as
				 * placed by LOSS(MISSED) records */
	__u64 bytes;		/* out: record bytes this function caused */
	__u64 dropped;		/* out: its records a full ring buffer refused */
	__u64 counter_bytes;	/* out: bytes of its counters on one CPU
				 * (edges counters, path counts, PPP slots) */
};

/* PT_IOC_STATS: global statistics. */
struct pt_stats {
	__u32 size;
	__u32 nr_funcs;		/* out: loaded plans */
	__u32 tracing;		/* out: 1 while armed */
	__u32 reserved0;
	__u64 records;		/* out: records written since START */
	__u64 dropped;		/* out: records the full ring buffer refused since START */
	__u64 missed;		/* out: probe hits the kernel skipped since START,
				 * all placed by LOSS(MISSED) records */
	__u64 frame_walks;	/* out: stacks an ENTER unwound since START (framed
				 * plans: the traced frame an untraced caller runs under) */
	__u64 frame_walk_ns;	/* out: the time those walks took, summed */
	__u64 frames_kept;	/* out (ABI 2.7): frames ENTERs named since START from
				 * what the copies keep (PT_ADD_INLINE_FRAMES: their calls,
				 * their count), unwinding nothing; not in frame_walks */
	__u64 hits_staged;	/* out (ABI 2.9): hits of sites the copies staged
				 * (pt_inline_stage) since START, run in batches */
	__u64 frames_kept_softirq; /* out (ABI 2.11): of frames_kept, those of
				    * ENTERs that served a softirq */
};

/*
 * PT_IOC_PATHS_READ: a PT_PLAN_PROFILE function's path counts
 * since its last flush, read live (for pathtracectl top) without flushing
 * or writing anything: up to @max {__u64 path; __u64 count} pairs at user
 * address @pairs, one per CPU that counted the path (a path may appear
 * once per CPU: add them). -ENOENT: no such function; -EINVAL: not a path
 * profile, or reserved fields not zero.
 */
struct pt_paths_read {
	__u32 size;
	__u32 func_id;		/* in */
	__u64 pairs;		/* in: user address of the pairs */
	__u32 max;		/* in: room, in pairs */
	__u32 n;		/* out: pairs written */
	__u64 lost;		/* out: summed over CPUs (struct pt_rec_paths) */
	__u64 overflow;		/* out: summed over CPUs */
	__u64 more;		/* out: pairs that did not fit */
	__u64 reserved[2];
};

/*
 * PT_IOC_LIST_FUNCS: the installed plan at position @index (0..,
 * in the order they were added; -ENOENT past the last). With @plan non-zero
 * and @plan_len large enough, the module's own copy of the plan blob is
 * copied there; @plan_len is set to the blob's size either way (-ENOSPC
 * when the buffer is too small; the other fields are still filled in).
 * @carrier (ABI 2.2; 0 from an older module): what runs the plan,
 * PT_CARRIER_PROBES (kprobes on the code at @addr: the original's, or an
 * inline copy's) or PT_CARRIER_INLINE (no probe: counters as code in an
 * inline copy, PT_ADD_INLINE).
 */
#define PT_CARRIER_PROBES	0
#define PT_CARRIER_INLINE	1
#define PT_CARRIER_INLINE_CALLS	2	/* ABI 2.3: its sites as calls in an inline copy */

struct pt_func_info {
	__u32 size;
	__u32 index;		/* in */
	__u32 func_id;		/* out */
	__u16 mode;		/* out: enum pt_mode */
	__u16 encoding;		/* out: enum pt_encoding */
	__u64 addr;		/* out */
	__u64 cold_addr;	/* out */
	__u32 len;		/* out */
	__u32 cold_len;		/* out */
	__u64 plan;		/* in: user buffer for the blob, or 0 */
	__u32 plan_len;		/* in: buffer bytes; out: blob bytes */
	__u32 flags;		/* out: the plan's PT_PLAN_* flags */
	char name[PT_NAME_MAX];	/* out */
	__u32 carrier;		/* out: PT_CARRIER_* (ABI 2.2) */
	__u32 reserved0;
	__u64 reserved[1];
};

#define PT_IOC_GET_VERSION	_IOWR(PT_IOC_MAGIC, 0x00, struct pt_version)
#define PT_IOC_CONFIG		_IOW(PT_IOC_MAGIC, 0x01, struct pt_config)
#define PT_IOC_ADD_PLAN		_IOW(PT_IOC_MAGIC, 0x02, struct pt_plan_arg)
#define PT_IOC_DEL_PLAN		_IOW(PT_IOC_MAGIC, 0x03, struct pt_del_arg)
#define PT_IOC_START		_IO(PT_IOC_MAGIC, 0x04)
#define PT_IOC_STOP		_IO(PT_IOC_MAGIC, 0x05)
#define PT_IOC_FLUSH		_IO(PT_IOC_MAGIC, 0x06)
#define PT_IOC_READ_PAGE	_IOWR(PT_IOC_MAGIC, 0x07, struct pt_read_arg)
#define PT_IOC_FUNC_STATS	_IOWR(PT_IOC_MAGIC, 0x08, struct pt_func_stats)
#define PT_IOC_STATS		_IOWR(PT_IOC_MAGIC, 0x09, struct pt_stats)
#define PT_IOC_LIST_FUNCS	_IOWR(PT_IOC_MAGIC, 0x0a, struct pt_func_info)
#define PT_IOC_PATHS_READ	_IOWR(PT_IOC_MAGIC, 0x0b, struct pt_paths_read)
#define PT_IOC_SUBPATHS_READ	_IOWR(PT_IOC_MAGIC, 0x0c, struct pt_subpaths_read)

/* ------------------------------------------------- ring-buffer records */

/*
 * Each ring-buffer event's payload is one record: a pt_rec header, then a
 * type-specific body. On x86-64 the kernel aligns event payloads to 4 bytes
 * only: read records with memcpy, not through u64 pointers. A CPU's stream
 * is a sequence of segments, each opened by an owner (an OWNER record, or
 * the head of a segment in a SEGMENTS record); BITS, ENTER, BLOCK and LOSS
 * records that follow belong to that owner. An owner's segments, taken
 * from all CPUs and ordered by their stamps, form its stream: a bitstring
 * (the bits concatenated) with ENTER and BLOCK markers at bit positions.
 * trace-format/coder/ is the one writer of these records.
 */
enum pt_rec_type {
	PT_REC_OWNER = 1,	/* arg: cpu;     body: pt_rec_owner */
	PT_REC_BITS = 2,	/* arg: nbits;   body: ceil(nbits/64) __u64, LSB first */
	PT_REC_ENTER = 3,	/* never in a ring buffer: a reader's form of an ENTER,
				 * arg: func_id; body: pt_rec_enter */
	PT_REC_BLOCK = 4,	/* arg: func_id; body: pt_rec_block */
	PT_REC_LOSS = 5,	/* arg: enum pt_loss; body: pt_rec_loss */
	PT_REC_COUNTERS = 6,	/* arg: func_id; body: nr_counters __u64, counts since the
				 * previous COUNTERS record of func_id on this cpu */
	PT_REC_ENTER_AT = 7,	/* arg: func_id; body: pt_rec_enter_at */
	PT_REC_PATHS = 8,	/* arg: func_id; body: pt_rec_paths */
	PT_REC_BITS_ENTERS = 9,	/* arg: PT_BITS_ENTERS_ARG; body: bits, then ENTER codes */
	PT_REC_SEGMENTS = 10,	/* arg: segments; body: segments back to back */
	PT_REC_FORK = 11,	/* arg: 0; body: pt_rec_fork (ABI 2.4) */
	PT_REC_EXEC = 12,	/* arg: 0; body: pt_rec_exec (ABI 2.5) */
};

/*
 * PT_REC_BITS_ENTERS: the ENTERs a CPU's owner made since its last bits
 * record, coded into a bitstring of their own (ENTER codes, below) and
 * written with the bits they sit in, instead of a record each.
 * arg: nbits | nebits << 16 (nbits < 32768, nebits < 65536); body:
 * ceil(nbits / 64) __u64 of bits as in PT_REC_BITS, then ceil(nebits / 64)
 * __u64 of ENTER codes (LSB first, bits above nebits zero). The ENTERs
 * follow each other in the order they happened. A position counts pending
 * bits from the start of this record's bits, and may point past nbits
 * (into the owner's next bits) when the ENTERs were written alone, before
 * a BLOCK. A reader takes the record as its ENTERs, then a BITS record of
 * the nbits (when nbits > 0).
 */
#define PT_BITS_ENTERS_ARG(nbits, nebits) ((__u32)(nbits) | (__u32)(nebits) << 16)
#define PT_BITS_ENTERS_NBITS(arg)	((arg) & 0x7fffu)
#define PT_BITS_ENTERS_NEBITS(arg)	((arg) >> 16)

/*
 * ENTER codes. An ENTER is an item, its function and caller:
 * PT_ENTERS_ITEM(func_id + 1, traced, slot), traced = 1 with the slot
 * (PT_ENTER_SLOT) of its return address when the caller is traced code,
 * traced = 0 and slot 0 when it is not (for an untraced caller under a
 * framed plan, the frame it names, PT_ENTER_FRAME, stands where a return
 * address would). Each CPU keeps the low halves of the return addresses
 * its ENTERs gave in PT_ENTER_SLOTS slots, its last three ENTERs'
 * functions (pprev, prev, last; func_id + 1, 0 none), the
 * PT_ENTERS_RECENT functions it entered most recently (most recent first),
 * and tables of PT_ENTERS_CTXS entries: at x = PT_ENTERS_CTX(pprev, prev,
 * last) the PT_ENTERS_CANDS items that followed those three, most recent
 * first, and the advance + 1 the most recent of them had; at
 * y = PT_ENTERS_CTX(prev, last, f) the last PT_ENTERS_ADVS advances + 1
 * that f's ENTER had after those two, most recent first (0: none). Each
 * ENTER, with a = the advance of its position over the previous ENTER of
 * the record (the first: over 0):
 *   1   the item is the first candidate at x, a + 1 its advance (nothing
 *       follows);
 *   0, then the item: r zero bits and a one for the r-th candidate at x
 *       (r < PT_ENTERS_CANDS), or PT_ENTERS_CANDS zeros for a new one:
 *       its caller (1 untraced; 01 traced, return address in its slot;
 *       00 traced, 32 bits of ret_lo after the function, which fill the
 *       slot), its function (4 bits r < PT_ENTERS_RECENT: the r-th most
 *       recent; r = PT_ENTERS_RECENT: the Elias gamma code of func_id + 1,
 *       k zero bits, a one, then the k low bits), then the slot's 6 bits
 *       or the ret_lo;
 *   then a: r zeros and a one for the r-th advance at y, or PT_ENTERS_ADVS
 *       zeros and its Rice(PT_ENTERS_RICE_K) code (q one bits, a zero,
 *       the low bits).
 * A traced item names its return address by slot: the module codes it
 * from the candidates only while the slot holds that address. Then the
 * tables learn it: the item moves to the front of x's candidates (the
 * others after it in their order, the last dropping out when it was not
 * among them) and a + 1 becomes x's advance, a + 1 moves to the front of
 * y's advances (likewise), f to the front of the recent functions, and
 * (pprev, prev, last) = (prev, last, f). Naming an empty candidate, rank
 * or advance, or a code cut off, makes the record corrupt (in SEGMENTS:
 * that segment and the rest). A CPU empties its slots, tables and recent
 * functions at START and at any refused write (the ENTERs pending then are
 * dropped with it, counted); a reader empties them at every LOSS(OVERRUN)
 * and every loss it places. ENTERs of func_id PT_ENTERS_FUNC_MAX and above
 * are ENTER_AT records (they fill the slot of a ret_lo they give).
 */
#define PT_ENTER_SLOTS		64
#define PT_ENTER_SLOT(ret_lo)	((__u32)((__u32)(ret_lo) * 0x9e3779b1u) >> 26)
#define PT_ENTERS_CTXS		1024
#define PT_ENTERS_RECENT	15	/* 4-bit ranks */
#define PT_ENTERS_RICE_K	4
#define PT_ENTERS_CANDS		4
#define PT_ENTERS_ADVS		4
#define PT_ENTERS_FUNC_MAX	((1u << 20) - 1)
#define PT_ENTERS_MIX(a, b) \
	((__u32)(((__u32)(a) * 0x9e3779b1u ^ (__u32)(b)) * 0x9e3779b1u) >> 22)
#define PT_ENTERS_CTX(a, b, c)	PT_ENTERS_MIX(PT_ENTERS_MIX(a, b), c)
#define PT_ENTERS_ITEM(f, traced, slot) \
	((__u32)(f) | (__u32)(traced) << 20 | (__u32)(slot) << 21)
#define PT_ENTERS_ITEM_FUNC(item)	((item) & 0xfffffu)
#define PT_ENTERS_ITEM_TRACED(item)	(((item) >> 20) & 1u)
#define PT_ENTERS_ITEM_SLOT(item)	((item) >> 21)

/*
 * PT_REC_SEGMENTS: consecutive segments of one CPU in one record, each an
 * owner's OWNER fused with the bits (and ENTER codes) that came right
 * after it, so that a segment of a few hundred bits pays no record header,
 * event header or padding of its own. arg: the number of segments (>= 1).
 * Body: whole __u32 (len a multiple of 4) of one bitstring, LSB first: the
 * segments back to back, each
 *   owner: 2 bits r; r < 3 names the owner of the CPU's (r + 2)-th most
 *          recent segment (its last PT_SEG_OWNERS segments' owners, most
 *          recent first, each owner once: every OWNER record and segment
 *          moves its owner to the front); r = 3 is followed by 32 bits,
 *          PT_SEG_OWNER_CODE(owner): kind << 28 | id (id < 2^28);
 *   delta: the ns its stamp lies after the stamp of the CPU's previous
 *          OWNER or segment (< 2^32), Exp-Golomb of order PT_SEG_DELTA_K:
 *          the Elias gamma code of (delta >> k) + 1, then the k low bits;
 *   nbits and nebits, Exp-Golomb of orders PT_SEG_NBITS_K and
 *          PT_SEG_NEBITS_K (each at most PT_SEG_LEN_MAX);
 *   the nbits trace bits, then the nebits ENTER codes;
 * and after the last one fewer than 32 bits, all zero. A reader takes each
 * segment as an OWNER (arg: the CPU of the page; stamp: the previous stamp
 * + delta), then as a BITS_ENTERS of its bits and codes. The module opens
 * a segment without writing anything; its first record carries the owner
 * when it is its bits (the usual case), else a plain OWNER goes before that
 * record. It writes a plain OWNER instead when the delta has no base or
 * does not fit, after any refused write and any LOSS(OVERRUN) it writes
 * (the CPU forgets its stamp and recent owners, as a reader does at every
 * LOSS(OVERRUN) and every loss it places), and for every
 * PT_SEG_FULL_EVERY-th segment of a CPU, so that a reader that lost a page
 * finds a base again. It keeps a CPU's segments back while the record
 * still fits the rest of its ring-buffer page and writes them before any
 * other record of that CPU and at stop; a refused SEGMENTS counts one
 * dropped record per segment. A segment with no stamp to add to, or one
 * that cannot be read, makes it and the rest of the record corrupt (one
 * loss per segment).
 */
#define PT_SEG_OWNER_CODE(owner) \
	((__u32)PT_OWNER_KIND(owner) << 28 | PT_OWNER_ID(owner))
#define PT_SEG_OWNER(code)	PT_OWNER((__u32)(code) >> 28, (__u32)(code) & 0x0fffffffu)
#define PT_SEG_ID_MAX		0x0fffffffu	/* larger ids: a plain OWNER */
#define PT_SEG_FULL_EVERY	64
#define PT_SEG_OWNERS		4	/* recent owners a CPU keeps */
#define PT_SEG_DELTA_K		16
#define PT_SEG_NBITS_K		6
#define PT_SEG_NEBITS_K		4
#define PT_SEG_LEN_MAX		4095	/* nbits and nebits at most */

/* PT_REC_BITS with this arg: a partial path-register sum (one u64), not bits. */
#define PT_BITS_PARTIAL 0x80000000u

struct pt_rec {
	__u16 type;		/* enum pt_rec_type */
	__u16 len;		/* bytes of the record, header included, multiple of 8 */
	__u32 arg;
};

/* Owner ids: kind in the top byte, pid or cpu below. */
enum pt_owner_kind {
	PT_OWNER_TASK = 0,	/* low 32 bits: pid (never 0) */
	PT_OWNER_IDLE = 1,	/* low 32 bits: cpu (pid 0 on that cpu) */
	PT_OWNER_SOFTIRQ = 2,	/* low 32 bits: cpu */
	PT_OWNER_HARDIRQ = 3,	/* low 32 bits: cpu */
	PT_OWNER_NMI = 4,	/* low 32 bits: cpu */
};
#define PT_OWNER(kind, id)	(((__u64)(kind) << 56) | (__u32)(id))
#define PT_OWNER_KIND(o)	((__u32)((o) >> 56))
#define PT_OWNER_ID(o)		((__u32)(o))

struct pt_rec_owner {
	__u64 owner;
	__u64 stamp;		/* ktime_get_mono_fast_ns(): orders an owner's segments across CPUs */
};

struct pt_rec_enter {
	__u64 ret_addr;		/* the return address at entry (who called) */
};

/*
 * An ENTER written as a record of its own. The owner's bits are not
 * flushed for it: pending says how many of its bits, emitted before the
 * entry, are still to come in the next BITS records of this segment (they
 * are written at the latest when the owner changes). The return address
 * is in the top 2 GiB, as kernel and module text are: ret_lo is its low
 * half (0: unknown).
 */
struct pt_rec_enter_at {
	__u32 ret_lo;
	__u32 pending;
};

/*
 * PT_REC_PATHS: a PT_PLAN_PROFILE function's path counts on
 * this CPU since its previous PT_REC_PATHS there: lost and overflow, then
 * (path number, count) pairs to the end of the body. A flush writes as
 * many records as its pairs need; lost and overflow are in the first.
 */
/*
 * In a PT_PLAN_PPP function's record the pairs are its interesting paths'
 * counts (by Ball-Larus number) and at most one PT_PATH_OTHER pair: the
 * path ends of every other path.
 */
struct pt_rec_paths {
	__u64 lost;		/* path ends not counted: a context switch cut the path */
	__u64 overflow;		/* path ends not counted: the counter table was full */
	/* then: { __u64 path; __u64 count; } pairs */
};

struct pt_rec_block {
	__u32 block;
	__u32 pending;		/* as in pt_rec_enter_at */
};

/*
 * PT_REC_FORK (ABI 2.4): the owner, a task, forked here a child that runs
 * on in a copy of its address space from the same user stack pointer, so
 * that the child continues the user activations open in the parent
 * (docs/user.md, "Fork, exec and signals"). child: the child's owner
 * (PT_OWNER(PT_OWNER_TASK, pid)); stamp: ktime_get_mono_fast_ns() at the
 * fork, before the child can run: the child's stream continues the parent's
 * activations at its first segment stamped after it. pending as in
 * pt_rec_enter_at.
 */
struct pt_rec_fork {
	__u64 child;
	__u64 stamp;
	__u32 pending;
	__u32 reserved;		/* zero */
};

/*
 * PT_REC_EXEC (ABI 2.5): the owner, a task, completed an execve here: its
 * old image's user frames are gone, the new image starts at its entry
 * point with no user activation open, and the kernel activations of the
 * execve itself go on and return to the new image (docs/user.md, "Fork,
 * exec and signals"). old_owner: the task's owner before the exec
 * (PT_OWNER(PT_OWNER_TASK, old pid)): the segment's owner but when a thread
 * other than the group leader exec'd and took the leader's pid. pending as
 * in pt_rec_enter_at.
 */
struct pt_rec_exec {
	__u64 old_owner;
	__u32 pending;
	__u32 reserved;		/* zero */
};

enum pt_loss {
	PT_LOSS_OVERRUN = 1,	/* records the full ring buffer refused on this cpu */
	PT_LOSS_MISSED = 2,	/* probe hits the kernel skipped (nmissed) */
	PT_LOSS_STATE = 3,	/* state lost (e.g. tracing stopped mid-function) */
};

/*
 * PT_LOSS_MISSED: count hits of func_id's probes that the kernel skipped
 * during (since, until], ktime_get_mono_fast_ns() like OWNER stamps, on
 * any CPU. kprobes skips a hit only while another probe's handling runs on
 * the same CPU, so each skipped hit belongs to a whole execution nested in
 * that handling (an interrupt or NMI, or code the handler called): such an
 * execution is absent, no recorded activation is cut. Other kinds: since
 * and until are 0, and the record sits where the loss happened.
 */
struct pt_rec_loss {
	__u64 count;
	__u32 func_id;		/* PT_LOSS_MISSED: whose probe; else 0 */
	__u32 reserved;
	__u64 since;
	__u64 until;
};

/* ------------------------------------------------------------- trace.bin */

#define PT_FILE_MAGIC "PTTRACE"	/* 8 bytes with its NUL */
#define PT_FILE_MAJOR 2
#define PT_FILE_MINOR 3	/* 2.1: CHECKSUM sections; 2.2: FORK records; 2.3: EXEC records */
#define PT_FILE_ENDIAN 0x01020304u

struct pt_file_header {
	char magic[8];
	__u32 size;		/* sizeof(struct pt_file_header) */
	__u16 major;
	__u16 minor;
	__u32 endian;		/* PT_FILE_ENDIAN as written */
	__u32 flags;		/* zero */
	__u64 reserved[2];
};

/* After the header: sections, each a pt_section then size bytes, padded to 8. */
enum pt_section_id {
	PT_SEC_SYSTEM = 1,	/* pt_sec_system, then the kernel release string */
	PT_SEC_FUNCTION = 2,	/* pt_sec_function, then name, code, cold code, cfg, plan */
	PT_SEC_PAGES = 3,	/* pt_sec_pages, then nr_pages ring-buffer pages of one cpu */
	PT_SEC_LOSS = 4,	/* pt_sec_loss */
	PT_SEC_END = 5,		/* empty; last section of a complete file */
	PT_SEC_PAGES_TRIMMED = 6, /* as PAGES, each page stored up to its data's end */
	PT_SEC_CHECKSUM = 7,	/* pt_sec_checksum: sums of the section that follows (2.1) */
};

struct pt_section {
	__u32 id;		/* enum pt_section_id; unknown ids are skipped */
	__u32 flags;		/* zero */
	__u64 size;		/* payload bytes, excluding padding */
};

struct pt_sec_system {
	__u32 size;
	__u32 nr_cpus;
	__u32 page_size;
	__u32 release_len;	/* bytes of the release string that follows, no NUL */
	__u64 start_ns;		/* CLOCK_REALTIME at record start */
	__u64 reserved[2];
};

struct pt_sec_function {
	__u32 size;
	__u32 func_id;
	__u64 addr;
	__u64 cold_addr;
	__u32 len;
	__u32 cold_len;
	__u32 name_len;		/* then the name, no NUL */
	__u32 cfg_len;		/* then len + cold_len code bytes, then the cfg blob */
	__u32 plan_len;		/* then the plan blob (struct pt_plan ...) */
	__u32 reserved0;
	__u64 reserved[2];
};

struct pt_sec_pages {
	__u32 size;
	__u32 cpu;
	__u32 page_size;
	__u32 nr_pages;
	__u64 reserved[2];
};

struct pt_sec_loss {
	__u32 size;
	__u32 nr_cpus;
	__u64 dropped;		/* records refused by full ring buffers */
	__u64 missed;		/* probe hits the kernel skipped */
	__u64 reserved[2];
};

/*
 * PT_SEC_CHECKSUM (format 2.1; FORMAT.md 2.8) comes right before the
 * section it covers, so a file cut short keeps the sums of the pages before
 * the cut. Every sum is xxHash's XXH3_64bits (seed 0). head sums the
 * covered section's pt_section header and its payload: all of it, but for
 * PAGES and PAGES_TRIMMED only their pt_sec_pages struct, each page having
 * its own pt_page_sum (nr_pages of them follow the struct, in page order),
 * so that a bad page is a located gap. A 2.1 writer covers every section
 * but END and CHECKSUM; readers of 2.0 skip the section (unknown id).
 */
struct pt_sec_checksum {
	__u32 size;
	__u32 nr_pages;		/* pt_page_sum entries that follow: the covered section's pages, or 0 */
	__u64 head;		/* XXH3_64bits of the section header and (pages: its struct) payload */
	__u64 reserved[2];
};

struct pt_page_sum {
	__u64 sum;		/* XXH3_64bits of the page's stored bytes */
	__u32 len;		/* its stored bytes (PAGES: page_size) */
	__u32 reserved;
};

/*
 * The CFG blob of a PT_SEC_FUNCTION section: the recorded struct cfg
 * (userspace/include/pathtrace/cfg.h), so the regenerator never re-derives
 * it. struct pt_cfg_hdr, then nr_blocks pt_cfg_block, nr_insns pt_cfg_insn,
 * nr_edges pt_cfg_edge, then names_len bytes of NUL-terminated names
 * (offsets into them are +1 so that 0 means "none"). Element sizes are given
 * so arrays can grow; FORMAT.md has the byte layout.
 */
#define PT_CFG_MAGIC 0x47464354u	/* "TCFG" */

struct pt_cfg_hdr {
	__u32 magic;		/* PT_CFG_MAGIC */
	__u32 size;		/* sizeof(struct pt_cfg_hdr) */
	__u32 total_len;	/* bytes of the whole blob */
	__u32 name;		/* function name: offset + 1 into names, 0 if none */
	__u64 addr;
	__u64 cold_addr;
	__u32 len;
	__u32 cold_len;
	__u32 nr_blocks;
	__u32 block_size;	/* sizeof(struct pt_cfg_block) */
	__u32 nr_insns;
	__u32 insn_size;	/* sizeof(struct pt_cfg_insn) */
	__u32 nr_edges;
	__u32 edge_size;	/* sizeof(struct pt_cfg_edge) */
	__u32 names_len;
	__u32 reserved0;
	__u64 reserved[2];
};

struct pt_cfg_block {
	__u64 addr;
	__u32 size;
	__u32 first_insn;
	__u32 nr_insns;
	__u32 flags;		/* CFG_BF_* */
	__u32 first_succ;	/* index of its first out-edge */
	__u32 nr_succ;
};

struct pt_cfg_insn {
	__u64 addr;
	__u64 target;		/* 0 if none or indirect */
	__u32 block;
	__u32 target_name;	/* offset + 1 into names, 0 if none */
	__u8 len;
	__u8 kind;		/* enum cfg_insn_kind */
	__u8 cc;
	__u8 flags;		/* CFG_IF_* */
	__u32 reserved;
};

struct pt_cfg_edge {
	__u32 src;
	__u32 dst;		/* block, or nr_blocks for EXIT */
	__u8 kind;		/* enum cfg_edge_kind */
	__u8 reserved[7];
};

/* Size checks: the ABI must not move when a compiler or architecture does. */
_Static_assert(sizeof(struct pt_version) == 32, "pt_version");
_Static_assert(sizeof(struct pt_plan) == 280, "pt_plan");
_Static_assert(sizeof(struct pt_ctx_word) == 16, "pt_ctx_word");
_Static_assert(sizeof(struct pt_path_code) == 16, "pt_path_code");
_Static_assert(sizeof(struct pt_path_range) == 16, "pt_path_range");
_Static_assert(sizeof(struct pt_site) == 24, "pt_site");
_Static_assert(sizeof(struct pt_action) == 16, "pt_action");
_Static_assert(sizeof(struct pt_verify_site) == 16, "pt_verify_site");
_Static_assert(sizeof(struct pt_plan_arg) == 72, "pt_plan_arg");
_Static_assert(sizeof(struct pt_inline_addr) == 24, "pt_inline_addr");
_Static_assert(sizeof(struct pt_del_arg) == 16, "pt_del_arg");
_Static_assert(sizeof(struct pt_config) == 32, "pt_config");
_Static_assert(sizeof(struct pt_read_arg) == 48, "pt_read_arg");
_Static_assert(sizeof(struct pt_func_stats) == 56, "pt_func_stats");
_Static_assert(sizeof(struct pt_stats) == 80, "pt_stats");
_Static_assert(sizeof(struct pt_func_info) == 200, "pt_func_info");
_Static_assert(sizeof(struct pt_rec) == 8, "pt_rec");
_Static_assert(sizeof(struct pt_rec_owner) == 16, "pt_rec_owner");
_Static_assert(sizeof(struct pt_rec_loss) == 32, "pt_rec_loss");
_Static_assert(sizeof(struct pt_rec_enter_at) == 8, "pt_rec_enter_at");
_Static_assert(sizeof(struct pt_rec_fork) == 24, "pt_rec_fork");
_Static_assert(sizeof(struct pt_rec_exec) == 16, "pt_rec_exec");
_Static_assert(sizeof(struct pt_implicit) == 16, "pt_implicit");
_Static_assert(sizeof(struct pt_file_header) == 40, "pt_file_header");
_Static_assert(sizeof(struct pt_section) == 16, "pt_section");
_Static_assert(sizeof(struct pt_sec_system) == 40, "pt_sec_system");
_Static_assert(sizeof(struct pt_sec_function) == 64, "pt_sec_function");
_Static_assert(sizeof(struct pt_sec_pages) == 32, "pt_sec_pages");
_Static_assert(sizeof(struct pt_sec_loss) == 40, "pt_sec_loss");
_Static_assert(sizeof(struct pt_sec_checksum) == 32, "pt_sec_checksum");
_Static_assert(sizeof(struct pt_page_sum) == 16, "pt_page_sum");
_Static_assert(sizeof(struct pt_cfg_hdr) == 88, "pt_cfg_hdr");
_Static_assert(sizeof(struct pt_cfg_block) == 32, "pt_cfg_block");
_Static_assert(sizeof(struct pt_cfg_insn) == 32, "pt_cfg_insn");
_Static_assert(sizeof(struct pt_cfg_edge) == 16, "pt_cfg_edge");

#endif /* PATHTRACE_ABI_H */
