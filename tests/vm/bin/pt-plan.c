// SPDX-License-Identifier: GPL-2.0
/*
 * pt-plan - build plans by hand and drive /dev/pathtrace for the VM tests,
 * without the planner: every site comes from /proc/kallsyms and from
 * decoding the live bytes of /proc/kcore with Zydis.
 *
 *   pt-plan add [--enter] [--bits] [--verify] [--id N] [--map FILE] FUNC...
 *       one plan per FUNC: --enter: ENTER at the entry; --bits: at every
 *       Jcc emit 1 when taken, 0 when not; --verify: a BLOCK probe on every
 *       block leader (blocks found by recursive traversal from the entry).
 *       --map appends the blocks' successors for `check`. Prints
 *       "added ID NAME sites=S verify=V" or "refused NAME ERRNO".
 *   pt-plan bad FIELD FUNC   add a plan for FUNC with FIELD broken; print
 *       the errno name (or "accepted").
 *   pt-plan config KB | start | stop | flush | del ID|all
 *   pt-plan stats            "funcs= tracing= records= dropped= missed="
 *   pt-plan fstats ID        "probes= optimized= hits= missed= bytes="
 *   pt-plan list             "ID NAME ADDR LEN PLANLEN" per function
 *   pt-plan dump DIR         read every CPU's pages into DIR/cpuN.pages
 *   pt-plan check [--map FILE] DIR
 *       parse DIR/cpu*.pages with the library's reader (libtraceevent's
 *       kbuffer underneath), print record
 *       counts, and with --map check every BLOCK transition and every Jcc
 *       bit against the static successors (per owner stream).
 *   pt-plan counters DIR FUNC_ID
 *       FUNC_ID's edge counters summed over DIR's COUNTERS records.
 *   pt-plan bitseq DIR FUNC_ID
 *       print the bits of each activation of FUNC_ID (task owners only).
 * Exit status: 0 when the command did what it printed, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <Zydis/Zydis.h>

#include <pathtrace/tracefile.h>

#include "pathtrace_abi.h"

#define PT_MAX_COUNTERS_TOOL 512

static int dev = -1;

static const char *errname(int e)
{
	static char buf[32];

	switch (e) {
#define E(x) case x: return #x
	E(EINVAL); E(E2BIG); E(EPROTONOSUPPORT); E(ENOENT); E(ERANGE);
	E(EPERM); E(EEXIST); E(EBUSY); E(EILSEQ); E(EFAULT); E(ENOMEM);
	E(ENOSPC); E(ENOTTY); E(ENODATA); E(EACCES);
#undef E
	default:
		snprintf(buf, sizeof(buf), "errno%d", e);
		return buf;
	}
}

static void die(const char *what)
{
	fprintf(stderr, "pt-plan: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void open_dev(void)
{
	if (dev < 0) {
		dev = open("/dev/" PT_DEVICE_NAME, O_RDWR);
		if (dev < 0)
			die("/dev/" PT_DEVICE_NAME);
	}
}

/* ------------------------------------------------------------ symbols */

struct sym {
	uint64_t addr;
	char name[PT_NAME_MAX];
};

static struct sym *syms;
static size_t nsyms;

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_syms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long a;
	size_t cap = 0;

	if (!f)
		die("/proc/kallsyms");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !a)
			continue;
		if (nsyms == cap) {
			cap = cap ? cap * 2 : 65536;
			syms = realloc(syms, cap * sizeof(*syms));
			if (!syms)
				die("realloc");
		}
		syms[nsyms].addr = a;
		snprintf(syms[nsyms].name, PT_NAME_MAX, "%.127s", name);
		nsyms++;
	}
	fclose(f);
	qsort(syms, nsyms, sizeof(*syms), sym_cmp);
}

/* A function's address and size (up to the next higher symbol, as kallsyms does). */
static int find_sym(const char *name, uint64_t *addr, uint32_t *len)
{
	size_t i, j;

	if (!syms)
		load_syms();
	for (i = 0; i < nsyms; i++) {
		if (strcmp(syms[i].name, name))
			continue;
		for (j = i + 1; j < nsyms && syms[j].addr == syms[i].addr; j++)
			;
		if (j == nsyms)
			return -1;
		*addr = syms[i].addr;
		*len = (uint32_t)(syms[j].addr - syms[i].addr);
		return 0;
	}
	return -1;
}

/* -------------------------------------------------------------- kcore */

static int read_kcore(uint64_t addr, void *buf, size_t len)
{
	static Elf *elf;
	static int fd = -1;
	size_t n, i;
	GElf_Phdr ph;

	if (!elf) {
		elf_version(EV_CURRENT);
		fd = open("/proc/kcore", O_RDONLY);
		if (fd < 0)
			die("/proc/kcore");
		elf = elf_begin(fd, ELF_C_READ, NULL);
		if (!elf) {
			fprintf(stderr, "pt-plan: kcore: %s\n", elf_errmsg(-1));
			exit(1);
		}
	}
	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr >= ph.p_vaddr && addr + len <= ph.p_vaddr + ph.p_memsz)
			return pread(fd, buf, len, (off_t)(ph.p_offset + addr - ph.p_vaddr)) ==
			       (ssize_t)len ? 0 : -1;
	}
	return -1;
}

/* ------------------------------------------------------------- blocks */

enum { K_OTHER = 0, K_JCC = 1, K_FALL = 2 };

struct fn {
	char name[PT_NAME_MAX];
	uint64_t addr, cold_addr;
	uint32_t len, cold_len;
	uint8_t *code;			/* len + cold_len bytes */
	/* per byte position (main then cold): */
	uint8_t *insn_len;		/* 0: not an instruction start we reached */
	uint8_t *leader;
	uint8_t *cc;			/* Jcc condition, 0xff otherwise */
	uint64_t *target;		/* branch target, 0 if none */
	uint8_t *kind;			/* how the instruction ends a block */
	uint32_t total;
};

static long pos_of(const struct fn *f, uint64_t a)
{
	if (a >= f->addr && a < f->addr + f->len)
		return (long)(a - f->addr);
	if (f->cold_addr && a >= f->cold_addr && a < f->cold_addr + f->cold_len)
		return (long)(f->len + a - f->cold_addr);
	return -1;
}

static uint64_t addr_of(const struct fn *f, uint32_t pos)
{
	return pos < f->len ? f->addr + pos : f->cold_addr + pos - f->len;
}

/* Recursive traversal from the entry; returns 0 or -1 (refused, reason printed). */
static int decode_fn(struct fn *f)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	uint32_t *work, nwork = 0, p;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	f->total = f->len + f->cold_len;
	f->insn_len = calloc(f->total, 1);
	f->leader = calloc(f->total, 1);
	f->cc = malloc(f->total);
	f->kind = calloc(f->total, 1);
	f->target = calloc(f->total, sizeof(uint64_t));
	work = calloc(f->total + 1, sizeof(uint32_t));
	if (!f->insn_len || !f->leader || !f->cc || !f->kind || !f->target || !work)
		die("calloc");
	memset(f->cc, 0xff, f->total);
	work[nwork++] = 0;
	f->leader[0] = 1;
	while (nwork) {
		p = work[--nwork];
		while (p < f->total && !f->insn_len[p]) {
			uint32_t end = p < f->len ? f->len : f->total;
			uint64_t a = addr_of(f, p), t = 0;
			long tp;
			bool stop = false;

			if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&dec, NULL, f->code + p,
								    end - p, &in))) {
				fprintf(stderr, "refused %s: undecodable at +%#x\n", f->name, p);
				return -1;
			}
			f->insn_len[p] = in.length;
			if (in.mnemonic == ZYDIS_MNEMONIC_INT3)
				break;
			if (in.raw.imm[0].is_relative)
				t = a + in.length + (uint64_t)in.raw.imm[0].value.s;
			if (in.meta.category == ZYDIS_CATEGORY_COND_BR) {
				if (in.mnemonic == ZYDIS_MNEMONIC_JRCXZ ||
				    in.mnemonic == ZYDIS_MNEMONIC_JECXZ ||
				    in.mnemonic == ZYDIS_MNEMONIC_LOOP ||
				    in.mnemonic == ZYDIS_MNEMONIC_LOOPE ||
				    in.mnemonic == ZYDIS_MNEMONIC_LOOPNE) {
					fprintf(stderr, "refused %s: counter branch at +%#x\n", f->name, p);
					return -1;
				}
				f->cc[p] = in.opcode & 0xf;
				f->kind[p] = K_JCC;
				f->target[p] = t;
				tp = pos_of(f, t);
				if (tp < 0) {
					fprintf(stderr, "refused %s: Jcc leaves the function at +%#x\n",
						f->name, p);
					return -1;
				}
				f->leader[tp] = 1;
				work[nwork++] = (uint32_t)tp;
				if (p + in.length < f->total)
					f->leader[p + in.length] = 1;
			} else if (in.meta.category == ZYDIS_CATEGORY_UNCOND_BR) {
				tp = t ? pos_of(f, t) : -1;
				f->target[p] = t;
				if (tp >= 0) {
					f->kind[p] = K_FALL;
					f->leader[tp] = 1;
					work[nwork++] = (uint32_t)tp;
				}
				stop = true;
			} else if (in.meta.category == ZYDIS_CATEGORY_RET ||
				   in.mnemonic == ZYDIS_MNEMONIC_UD2) {
				stop = true;
			} else if (in.meta.category == ZYDIS_CATEGORY_CALL && p) {
				/* Calls end blocks (a traced callee's records come between). */
				if (p + in.length < f->total)
					f->leader[p + in.length] = 1;
			}
			if (stop)
				break;
			p += in.length;
		}
	}
	free(work);
	return 0;
}

/* The leader that starts the block containing instruction position p. */
static uint32_t *block_ids(const struct fn *f, uint32_t *nblocks)
{
	uint32_t *id = malloc(f->total * sizeof(uint32_t)), p, b = 0;

	if (!id)
		die("malloc");
	for (p = 0; p < f->total; p++) {
		if (f->leader[p] && f->insn_len[p])
			b++;
		id[p] = b - 1;
	}
	*nblocks = b;
	return id;
}

/* ------------------------------------------------------------- plans */

/* Block ids count the leaders in address order (main part, then cold). */
static uint32_t block_of(const struct fn *f, uint32_t pos)
{
	uint32_t p, b = 0;

	for (p = 0; p < pos; p++)
		if (f->leader[p] && f->insn_len[p])
			b++;
	return b;
}

struct planbuf {
	struct pt_plan pl;
	struct pt_site *sites;
	struct pt_action *acts;
	struct pt_verify_site *ver;
	uint32_t ns, na, nv;
};

static void build_plan(struct fn *f, struct planbuf *b, uint32_t id, bool enter,
		       bool bits, bool verify)
{
	uint32_t p;

	memset(b, 0, sizeof(*b));
	b->sites = calloc(f->total + 1, sizeof(*b->sites));
	b->acts = calloc(2 * f->total + 2, sizeof(*b->acts));
	b->ver = calloc(f->total + 1, sizeof(*b->ver));
	if (!b->sites || !b->acts || !b->ver)
		die("calloc");
	for (p = 0; p < f->total; p++) {
		struct pt_site *s;
		uint16_t region = p < f->len ? PT_REGION_MAIN : PT_REGION_COLD;
		uint32_t off = p < f->len ? p : p - f->len;

		if (!f->insn_len[p])
			continue;
		/* The kernel refuses probes on a BUG/WARN ud2 (find_bug): no BLOCK there. */
		if (verify && f->leader[p] &&
		    !(p + 1 < f->total && f->code[p] == 0x0f && f->code[p + 1] == 0x0b)) {
			struct pt_verify_site *v = &b->ver[b->nv];

			v->offset = off;
			v->region = region;
			v->block = block_of(f, p);
			b->nv++;
		}
		if (!(p == 0 && enter) && !(bits && f->kind[p] == K_JCC))
			continue;
		s = &b->sites[b->ns++];
		s->offset = off;
		s->region = region;
		s->insn_len = f->insn_len[p];
		s->cond = PT_COND_NONE;
		s->first_action = b->na;
		if (p == 0 && enter) {
			b->acts[b->na++].op = PT_OP_ENTER;
			s->nr_actions++;
		}
		if (bits && f->kind[p] == K_JCC) {
			s->cond = f->cc[p];
			b->acts[b->na] = (struct pt_action){ .op = PT_OP_EMIT,
				.when = PT_WHEN_TAKEN, .nbits = 1, .value = 1 };
			b->acts[b->na + 1] = (struct pt_action){ .op = PT_OP_EMIT,
				.when = PT_WHEN_NOT_TAKEN, .nbits = 1, .value = 0 };
			b->na += 2;
			s->nr_actions += 2;
		}
	}
	b->pl.size = sizeof(b->pl);
	b->pl.abi_major = PT_ABI_MAJOR;
	b->pl.abi_minor = PT_ABI_MINOR;
	b->pl.flags = verify ? PT_PLAN_VERIFY : 0;
	b->pl.func_id = id;
	b->pl.mode = PT_MODE_TRACE;
	b->pl.encoding = PT_ENC_BITS;
	b->pl.addr = f->addr;
	b->pl.cold_addr = f->cold_addr;
	b->pl.len = f->len;
	b->pl.cold_len = f->cold_len;
	b->pl.site_size = sizeof(struct pt_site);
	b->pl.action_size = sizeof(struct pt_action);
	b->pl.verify_size = sizeof(struct pt_verify_site);
	snprintf(b->pl.name, sizeof(b->pl.name), "%s", f->name);
}

/* Serializes b; returns the blob (caller frees) and its size in *len. */
static uint8_t *serialize(struct planbuf *b, uint32_t *len)
{
	size_t s = b->ns * sizeof(*b->sites), a = b->na * sizeof(*b->acts),
	       v = b->nv * sizeof(*b->ver);
	uint8_t *blob;

	b->pl.nr_sites = b->ns;
	b->pl.nr_actions = b->na;
	b->pl.nr_verify = b->nv;
	*len = (uint32_t)(sizeof(b->pl) + s + a + v);
	b->pl.total_len = *len;
	blob = calloc(1, *len);
	if (!blob)
		die("calloc");
	memcpy(blob, &b->pl, sizeof(b->pl));
	memcpy(blob + sizeof(b->pl), b->sites, s);
	memcpy(blob + sizeof(b->pl) + s, b->acts, a);
	memcpy(blob + sizeof(b->pl) + s + a, b->ver, v);
	return blob;
}

static int add_blob(const void *blob, uint32_t len)
{
	struct pt_plan_arg a = { .size = sizeof(a), .plan = (uintptr_t)blob,
				 .plan_len = len };

	open_dev();
	return ioctl(dev, PT_IOC_ADD_PLAN, &a) ? -errno : 0;
}

static int load_fn(const char *name, struct fn *f)
{
	char cold[PT_NAME_MAX + 8];

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	if (find_sym(name, &f->addr, &f->len)) {
		fprintf(stderr, "refused %s: not in /proc/kallsyms\n", name);
		return -1;
	}
	snprintf(cold, sizeof(cold), "%s.cold", name);
	if (find_sym(cold, &f->cold_addr, &f->cold_len))
		f->cold_addr = f->cold_len = 0;
	f->code = malloc(f->len + f->cold_len);
	if (!f->code || read_kcore(f->addr, f->code, f->len) ||
	    (f->cold_len && read_kcore(f->cold_addr, f->code + f->len, f->cold_len))) {
		fprintf(stderr, "refused %s: cannot read its bytes from /proc/kcore\n", name);
		return -1;
	}
	return decode_fn(f);
}

static void write_map(FILE *m, struct fn *f, uint32_t id)
{
	uint32_t nb, p, *bid = block_ids(f, &nb);
	uint32_t last = UINT32_MAX;

	fprintf(m, "F %u %s %u\n", id, f->name, nb);
	/* Each block's successors follow from its last instruction. */
	for (p = 0; p < f->total; p++) {
		uint32_t next, b;
		long tp;

		if (!f->insn_len[p])
			continue;
		b = bid[p];
		next = p + f->insn_len[p];
		if (next < f->total && f->insn_len[next] && !f->leader[next] &&
		    !(p < f->len && next >= f->len))
			continue;	/* not the block's last instruction */
		if (b == last)
			continue;
		last = b;
		tp = f->target[p] ? pos_of(f, f->target[p]) : -1;
		if (f->kind[p] == K_JCC && next < f->total && f->insn_len[next])
			fprintf(m, "B %u %u J %u %u\n", id, b, bid[tp], bid[next]);
		else if (f->kind[p] == K_FALL && tp >= 0)
			fprintf(m, "B %u %u F %u 0\n", id, b, bid[tp]);
		else	/* calls, returns, exits: the next block is not known here */
			fprintf(m, "B %u %u X 0 0\n", id, b);
	}
	free(bid);
}

static int cmd_add(int argc, char **argv)
{
	bool enter = false, bits = false, verify = false;
	uint32_t id = 1;
	const char *map = NULL;
	FILE *m = NULL;
	int i, bad = 0;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--enter"))
			enter = true;
		else if (!strcmp(argv[i], "--bits"))
			bits = true;
		else if (!strcmp(argv[i], "--verify"))
			verify = true;
		else if (!strcmp(argv[i], "--id") && i + 1 < argc)
			id = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--map") && i + 1 < argc)
			map = argv[++i];
		else
			return fprintf(stderr, "pt-plan add: bad option %s\n", argv[i]), 1;
	}
	if (map && !(m = fopen(map, "a")))
		die(map);
	for (; i < argc; i++, id++) {
		struct fn f;
		struct planbuf b;
		uint8_t *blob;
		uint32_t len;
		int err;

		if (load_fn(argv[i], &f)) {
			bad++;
			continue;
		}
		build_plan(&f, &b, id, enter, bits, verify);
		blob = serialize(&b, &len);
		err = add_blob(blob, len);
		if (err) {
			printf("refused %s %s\n", f.name, errname(-err));
			bad++;
		} else {
			printf("added %u %s sites=%u verify=%u\n", id, f.name, b.ns, b.nv);
			if (m)
				write_map(m, &f, id);
		}
		free(blob);
	}
	if (m)
		fclose(m);
	return bad ? 1 : 0;
}

/*
 * blob (len bytes) with arrays a (na bytes) and b (nb bytes) appended and
 * total_len grown to match, in a new allocation (NULL: out of memory).
 */
static uint8_t *appended(const uint8_t *blob, uint32_t len, const void *a, size_t na,
			 const void *b, size_t nb)
{
	uint8_t *big = calloc(1, len + na + nb);

	if (!big)
		return NULL;
	memcpy(big, blob, len);
	memcpy(big + len, a, na);
	if (nb)
		memcpy(big + len + na, b, nb);
	((struct pt_plan *)big)->total_len = len + na + nb;
	return big;
}

/* Breaks one field of an otherwise good plan for FUNC and tries to add it. */
static int cmd_bad(int argc, char **argv)
{
	const char *what;
	struct fn f;
	struct planbuf b;
	uint8_t *blob;
	uint32_t len, i, jcc = UINT32_MAX;
	struct pt_plan *pl;
	int err = 0;

	if (argc != 3)
		return fprintf(stderr, "usage: pt-plan bad FIELD FUNC\n"), 1;
	what = argv[1];
	if (load_fn(argv[2], &f))
		return 1;
	build_plan(&f, &b, 77, true, true, true);
	for (i = 0; i < b.ns; i++)
		if (b.sites[i].cond != PT_COND_NONE && jcc == UINT32_MAX)
			jcc = i;
	if (jcc == UINT32_MAX)
		return fprintf(stderr, "pt-plan: %s has no Jcc\n", f.name), 1;
	if (!strcmp(what, "mid_instruction")) {
		/* A site inside a multi-byte instruction, reached through verify. */
		for (i = 1; i < f.len && !(f.insn_len[i] == 0 && f.insn_len[i - 1] > 1); i++)
			;
		b.ver[b.nv - 1].offset = i;
		b.ver[b.nv - 1].region = PT_REGION_MAIN;
	} else if (!strcmp(what, "verify_ud2")) {
		for (i = 0; i + 1 < f.len && !(f.insn_len[i] && f.code[i] == 0x0f &&
					       f.code[i + 1] == 0x0b); i++)
			;
		b.ver[b.nv - 1].offset = i;
		b.ver[b.nv - 1].region = PT_REGION_MAIN;
	} else if (!strcmp(what, "site_offset")) {
		b.sites[jcc].offset = f.len;
	} else if (!strcmp(what, "site_region")) {
		b.sites[jcc].region = 7;
	} else if (!strcmp(what, "site_cold_missing")) {
		if (f.cold_len)
			return fprintf(stderr, "pt-plan: %s has a cold part\n", f.name), 1;
		b.sites[jcc].region = PT_REGION_COLD;
	} else if (!strcmp(what, "site_cond")) {
		b.sites[jcc].cond = 16;
	} else if (!strcmp(what, "site_reserved")) {
		b.sites[jcc].reserved = 1;
	} else if (!strcmp(what, "site_flags")) {
		b.sites[jcc].flags = 0x80;
	} else if (!strcmp(what, "site_no_actions")) {
		b.sites[jcc].nr_actions = 0;
	} else if (!strcmp(what, "site_action_range")) {
		b.sites[jcc].first_action = b.na - 1;
	} else if (!strcmp(what, "site_dup")) {
		b.sites[jcc + 1 < b.ns ? jcc + 1 : 0].offset = b.sites[jcc].offset;
	} else if (!strcmp(what, "action_op")) {
		b.acts[b.sites[jcc].first_action].op = 99;
	} else if (!strcmp(what, "action_when")) {
		b.acts[b.sites[jcc].first_action].when = 3;
	} else if (!strcmp(what, "action_when_no_cond")) {
		b.sites[jcc].cond = PT_COND_NONE;
	} else if (!strcmp(what, "action_nbits")) {
		b.acts[b.sites[jcc].first_action].nbits = 65;
	} else if (!strcmp(what, "action_value")) {
		b.acts[b.sites[jcc].first_action].value = 2;	/* does not fit 1 bit */
	} else if (!strcmp(what, "action_count")) {
		b.acts[b.sites[jcc].first_action] = (struct pt_action){
			.op = PT_OP_COUNT, .arg = 0 };	/* nr_counters is 0 */
	} else if (!strcmp(what, "enter_not_at_entry")) {
		b.acts[b.sites[jcc].first_action] = (struct pt_action){ .op = PT_OP_ENTER };
	} else if (!strcmp(what, "enter_not_first")) {
		/* A valid action before the entry site's ENTER (room: acts has 2 * total + 2). */
		if (b.sites[0].offset || b.sites[0].first_action ||
		    b.acts[0].op != PT_OP_ENTER)
			return fprintf(stderr, "pt-plan: entry site is not site 0\n"), 1;
		memmove(&b.acts[1], &b.acts[0], b.na * sizeof(b.acts[0]));
		b.acts[0] = (struct pt_action){ .op = PT_OP_PATH_ADD };
		b.na++;
		b.sites[0].nr_actions++;
		for (i = 1; i < b.ns; i++)
			b.sites[i].first_action++;
	} else if (!strcmp(what, "verify_dup")) {
		b.ver[1].offset = b.ver[0].offset;
	} else if (!strcmp(what, "verify_offset")) {
		b.ver[1].offset = f.len + 100;
	} else if (!strcmp(what, "verify_reserved")) {
		b.ver[1].reserved1 = 1;
	} else if (!strcmp(what, "emit_arg")) {
		b.acts[b.sites[jcc].first_action].arg = 1;	/* no context words */
	} else if (!strncmp(what, "pcode_", 6)) {
		/* path codes are a paths trace's: its EMITs become PATH_EMITs */
		b.pl.mode = PT_MODE_PATHS;
		b.pl.encoding = PT_ENC_PATH;
		for (i = 0; i < b.na; i++)
			if (b.acts[i].op == PT_OP_EMIT)
				b.acts[i] = (struct pt_action){ .op = PT_OP_PATH_EMIT,
								.when = b.acts[i].when, .nbits = 1 };
	} else if (!strncmp(what, "ctx_", 4)) {
		/* context words are a witness plan's: codes on its EMITs */
		b.pl.encoding = PT_ENC_WITNESS;
		for (i = 0; i < b.na; i++)
			if (b.acts[i].op == PT_OP_EMIT)
				b.acts[i].arg = 1;
	}
	blob = serialize(&b, &len);
	pl = (struct pt_plan *)blob;
	if (!strcmp(what, "size"))
		pl->size = 100;
	else if (!strcmp(what, "total_len"))
		pl->total_len = len + 8;
	else if (!strcmp(what, "abi_major"))
		pl->abi_major = PT_ABI_MAJOR + 1;
	else if (!strcmp(what, "flags"))
		pl->flags |= 0x100;
	else if (!strcmp(what, "reserved"))
		pl->reserved1 = 1;
	else if (!strcmp(what, "mode"))
		pl->mode = 9;
	else if (!strcmp(what, "encoding"))
		pl->encoding = PT_ENC_PATH;	/* not one of trace mode's */
	else if (!strcmp(what, "name_unterminated"))
		memset(pl->name, 'a', sizeof(pl->name));
	else if (!strcmp(what, "name_wrong"))
		snprintf(pl->name, sizeof(pl->name), "%.120s_not", f.name);
	else if (!strcmp(what, "addr_wrong"))
		pl->addr += 1;
	else if (!strcmp(what, "len_wrong"))
		pl->len += 1;
	else if (!strcmp(what, "cold_half"))
		pl->cold_len = 16, pl->cold_addr = 0;
	else if (!strcmp(what, "site_size"))
		pl->site_size = 8;
	else if (!strcmp(what, "verify_flag"))
		pl->flags &= ~PT_PLAN_VERIFY;
	else if (!strcmp(what, "counters"))
		pl->nr_counters = 100000;
	else if (!strcmp(what, "implicit_count"))
		pl->nr_implicit = 1, pl->implicit_size = sizeof(struct pt_implicit);
	if (strncmp(what, "tail_", 5) && strcmp(what, "short_blob") &&
	    strcmp(what, "bad_pointer") && strncmp(what, "implicit_", 9) &&
	    strncmp(what, "ctx_", 4) && strncmp(what, "pcode_", 6))
		err = add_blob(blob, len);
	if (!strncmp(what, "pcode_", 6)) {
		/*
		 * Two paths, each listed with a 1-bit word, one range without an
		 * escape, after the arrays; pcode_ok is accepted, each other one
		 * breaks one rule.
		 */
		struct pt_path_code c[2] = { { .path = 0, .value = 0, .nbits = 1 },
					     { .path = 1, .value = 1, .nbits = 1 } };
		struct pt_path_range r = { .lo = 0 };
		uint32_t nc = 2, extra;
		uint8_t *big;

		if (!strcmp(what, "pcode_bits"))
			c[1].nbits = PT_PATH_CODE_MAX_BITS + 1;
		else if (!strcmp(what, "pcode_value"))
			c[1].value = 2;	/* does not fit 1 bit */
		else if (!strcmp(what, "pcode_unsorted"))
			c[1].path = 0;
		else if (!strcmp(what, "pcode_beyond"))
			c[1].path = 2;	/* nr_paths is 2 */
		else if (!strcmp(what, "pcode_reserved"))
			c[1].reserved1 = 1;
		else if (!strcmp(what, "pcode_range_lo"))
			r.lo = 1;	/* the first range starts at 0 */
		else if (!strcmp(what, "pcode_unlisted"))
			nc = 1;		/* path 1 has no word and no escape */
		extra = nc * sizeof(c[0]) + sizeof(r);
		big = appended(blob, len, c, nc * sizeof(c[0]), &r, sizeof(r));
		if (!big)
			return fprintf(stderr, "pt-plan: out of memory\n"), 1;
		pl = (struct pt_plan *)big;
		pl->nr_path_codes = nc;
		pl->path_code_size = sizeof(c[0]);
		pl->nr_path_ranges = 1;
		pl->path_range_size = sizeof(r);
		pl->nr_paths = 2;
		if (!strcmp(what, "pcode_mode"))
			pl->mode = PT_MODE_TRACE, pl->encoding = PT_ENC_BITS;
		err = add_blob(big, len + extra);
		free(big);
		pl = (struct pt_plan *)blob;
	}
	if (!strncmp(what, "ctx_", 4)) {
		/*
		 * Two codes' next rows and one word after the arrays; ctx_ok is
		 * accepted, each other one breaks one rule.
		 */
		uint32_t next[2] = { 0, PT_CTX_NONE };
		struct pt_ctx_word w[2] = { { .row = 0, .code = 1, .value = 1, .nbits = 1 },
					    { .row = 1, .code = 1, .value = 0, .nbits = 2 } };
		uint32_t nw = 2, extra;
		uint8_t *big;

		if (!strcmp(what, "ctx_word_bits"))
			w[0].nbits = PT_CTX_WORD_MAX_BITS + 1;
		else if (!strcmp(what, "ctx_word_value"))
			w[0].value = 2;	/* does not fit 1 bit */
		else if (!strcmp(what, "ctx_word_code"))
			w[1].code = 2;	/* only code 1 exists */
		else if (!strcmp(what, "ctx_word_unsorted"))
			w[1].row = 0, w[1].code = 1;	/* (row, code) twice */
		else if (!strcmp(what, "ctx_word_reserved"))
			w[1].reserved1 = 1;
		else if (!strcmp(what, "ctx_emit_arg"))
			nw = 0, next[1] = 0;	/* arrays fine: EMIT args are fixed below */
		extra = sizeof(next) + nw * sizeof(w[0]);
		big = appended(blob, len, next, sizeof(next), w, nw * sizeof(w[0]));
		if (!big)
			return fprintf(stderr, "pt-plan: out of memory\n"), 1;
		pl = (struct pt_plan *)big;
		pl->nr_ctx_codes = 2;
		pl->nr_ctx_words = nw;
		pl->ctx_word_size = nw ? sizeof(w[0]) : 0;
		if (!strcmp(what, "ctx_emit_arg")) {
			struct pt_action *acts = (void *)(big + sizeof(*pl) +
							  b.ns * sizeof(*b.sites));

			for (i = 0; i < b.na; i++)
				if (acts[i].op == PT_OP_EMIT)
					acts[i].arg = 2;	/* not below nr_ctx_codes */
		}
		if (!strcmp(what, "ctx_mode"))
			pl->encoding = PT_ENC_BITS;
		err = add_blob(big, len + extra);
		free(big);
		pl = (struct pt_plan *)blob;
	}
	if (!strcmp(what, "implicit_count"))
		err = add_blob(blob, len);
	if (!strcmp(what, "implicit_unsorted") || !strcmp(what, "implicit_user")) {
		/* Two implicit entries after the arrays: out of order, or not kernel text. */
		struct pt_implicit m[2] = {
			{ .ret = f.addr + 0x20, .caller_id = 1 }, { .ret = f.addr + 0x10, .caller_id = 1 },
		};
		uint8_t *big;

		if (!strcmp(what, "implicit_user"))
			m[0].ret = 0x1000;
		big = appended(blob, len, m, sizeof(m), NULL, 0);
		if (!big)
			return fprintf(stderr, "pt-plan: out of memory\n"), 1;
		((struct pt_plan *)big)->nr_implicit = 2;
		((struct pt_plan *)big)->implicit_size = sizeof(m[0]);
		err = add_blob(big, len + sizeof(m));
		free(big);
	}
	if (!strcmp(what, "dup_func_id") && !err)
		err = add_blob(blob, len);
	if (!strcmp(what, "overlap") && !err) {
		pl->func_id = 78;
		err = add_blob(blob, len);
	}
	if (!strcmp(what, "tail_nonzero") || !strcmp(what, "tail_zero")) {
		/* A bigger header from a "newer" writer: its unknown tail must be zero. */
		uint8_t *big = calloc(1, len + 8);

		memcpy(big, blob, sizeof(*pl));
		memcpy(big + sizeof(*pl) + 8, blob + sizeof(*pl), len - sizeof(*pl));
		((struct pt_plan *)big)->size = sizeof(*pl) + 8;
		((struct pt_plan *)big)->total_len = len + 8;
		if (!strcmp(what, "tail_nonzero"))
			big[sizeof(*pl) + 3] = 1;
		err = add_blob(big, len + 8);
		free(big);
	}
	open_dev();
	if (!strcmp(what, "short_blob")) {
		struct pt_plan_arg a = { .size = sizeof(a), .plan = (uintptr_t)blob,
					 .plan_len = 64 };

		err = ioctl(dev, PT_IOC_ADD_PLAN, &a) ? -errno : 0;
	}
	if (!strcmp(what, "bad_pointer")) {
		struct pt_plan_arg a = { .size = sizeof(a), .plan = 8, .plan_len = len };

		err = ioctl(dev, PT_IOC_ADD_PLAN, &a) ? -errno : 0;
	}
	printf("%s\n", err ? errname(-err) : "accepted");
	free(blob);
	return 0;
}

/* ------------------------------------------------------------ control */

static int simple_ioctl(unsigned long req, void *arg, const char *what)
{
	open_dev();
	if (ioctl(dev, req, arg)) {
		printf("%s %s\n", what, errname(errno));
		return 1;
	}
	return 0;
}

static int cmd_stats(void)
{
	struct pt_stats s = { .size = sizeof(s) };

	if (simple_ioctl(PT_IOC_STATS, &s, "stats"))
		return 1;
	printf("funcs=%u tracing=%u records=%llu dropped=%llu missed=%llu\n", s.nr_funcs,
	       s.tracing, (unsigned long long)s.records, (unsigned long long)s.dropped,
	       (unsigned long long)s.missed);
	return 0;
}

static int cmd_fstats(const char *id)
{
	struct pt_func_stats s = { .size = sizeof(s), .func_id = (uint32_t)atoi(id) };

	if (simple_ioctl(PT_IOC_FUNC_STATS, &s, "fstats"))
		return 1;
	printf("probes=%u optimized=%u hits=%llu missed=%llu bytes=%llu\n", s.nr_probes,
	       s.nr_optimized, (unsigned long long)s.hits, (unsigned long long)s.missed,
	       (unsigned long long)s.bytes);
	return 0;
}

static int cmd_list(void)
{
	struct pt_func_info fi;
	uint32_t i;

	open_dev();
	for (i = 0;; i++) {
		memset(&fi, 0, sizeof(fi));
		fi.size = sizeof(fi);
		fi.index = i;
		if (ioctl(dev, PT_IOC_LIST_FUNCS, &fi)) {
			if (errno == ENOENT)
				return 0;
			die("PT_IOC_LIST_FUNCS");
		}
		printf("%u %s %#llx %u %u\n", fi.func_id, fi.name,
		       (unsigned long long)fi.addr, fi.len, fi.plan_len);
	}
}

static int cmd_dump(const char *dir)
{
	struct pt_version v = { .size = sizeof(v) };
	uint32_t cpu;
	char path[256];

	if (simple_ioctl(PT_IOC_GET_VERSION, &v, "version"))
		return 1;
	mkdir(dir, 0755);
	for (cpu = 0; cpu < v.nr_cpus; cpu++) {
		uint8_t *page = malloc(v.page_size);
		unsigned int n = 0;
		FILE *out;

		snprintf(path, sizeof(path), "%s/cpu%u.pages", dir, cpu);
		out = fopen(path, "a");
		if (!out || !page)
			die(path);
		for (;;) {
			struct pt_read_arg r = { .size = sizeof(r), .cpu = cpu,
						 .buf = (uintptr_t)page, .buf_len = v.page_size };

			if (ioctl(dev, PT_IOC_READ_PAGE, &r))
				die("PT_IOC_READ_PAGE");
			if (!r.out_len)
				break;
			fwrite(page, 1, r.out_len, out);
			n++;
		}
		fclose(out);
		free(page);
		printf("cpu%u pages=%u\n", cpu, n);
	}
	return 0;
}

/* --------------------------------------------------------------- check */

struct blk {
	uint32_t func, block;
	char kind;
	uint32_t s1, s2;
};

static struct blk *blks;
static size_t nblks;

static const struct blk *find_blk(uint32_t func, uint32_t block)
{
	size_t i;

	for (i = 0; i < nblks; i++)
		if (blks[i].func == func && blks[i].block == block)
			return &blks[i];
	return NULL;
}

static void load_map(const char *path)
{
	FILE *m = fopen(path, "r");
	char line[256];
	size_t cap = 0;

	if (!m)
		die(path);
	while (fgets(line, sizeof(line), m)) {
		struct blk b;

		if (sscanf(line, "B %u %u %c %u %u", &b.func, &b.block, &b.kind, &b.s1, &b.s2) != 5)
			continue;
		if (nblks == cap) {
			cap = cap ? cap * 2 : 1024;
			blks = realloc(blks, cap * sizeof(*blks));
		}
		blks[nblks++] = b;
	}
	fclose(m);
}

/* One record, as read from a page. */
struct rec {
	uint32_t cpu;
	uint64_t seq;		/* position in the cpu's stream */
	uint64_t ts;
	struct pt_rec h;
	uint8_t body[4096];
};

/* Per-owner checking state. */
struct owner_state {
	uint64_t owner;
	uint64_t last_stamp;
	const struct blk *pending;	/* last BLOCK whose successor is known */
	int bits;			/* bits seen since that BLOCK */
	uint64_t bitval;
};

static struct owner_state *owners;
static size_t nowners;

static struct owner_state *owner_get(uint64_t o)
{
	size_t i;

	for (i = 0; i < nowners; i++)
		if (owners[i].owner == o)
			return &owners[i];
	owners = realloc(owners, (nowners + 1) * sizeof(*owners));
	memset(&owners[nowners], 0, sizeof(*owners));
	owners[nowners].owner = o;
	return &owners[nowners++];
}

static unsigned long counts[8], bad_len, checked, mismatches, gaps, owner_switches,
	loss_overrun, loss_missed, loss_missed_count, order_violations;

static void check_block(struct owner_state *os, uint32_t func, uint32_t block)
{
	const struct blk *p = os->pending;

	if (p) {
		uint32_t want = p->kind == 'J' ? ((os->bitval & 1) ? p->s1 : p->s2) : p->s1;
		int want_bits = p->kind == 'J' ? 1 : 0;

		checked++;
		if (p->func != func || os->bits != want_bits || block != want) {
			if (mismatches < 10)
				fprintf(stderr, "mismatch: owner %#llx func %u block %u (%c %u/%u) "
					"bits %d=%llu then func %u block %u\n",
					(unsigned long long)os->owner, p->func, p->block, p->kind,
					p->s1, p->s2, os->bits, (unsigned long long)os->bitval,
					func, block);
			mismatches++;
		}
	}
	p = find_blk(func, block);
	os->pending = p && (p->kind == 'J' || p->kind == 'F') ? p : NULL;
	os->bits = 0;
	os->bitval = 0;
}

/*
 * nbits of bits as BITS records of at most 512 bits each: seg_rec holds 64
 * bytes, while a bits record carries up to 2048.
 */
static void emit_bits(const struct rec *tmpl, const uint8_t *bits, uint32_t nbits,
		      void (*fn)(const struct rec *r, void *ctx), void *ctx, uint64_t *seq)
{
	static struct rec b;
	uint32_t at;

	b = *tmpl;
	for (at = 0; at < nbits; at += 512) {
		uint32_t n = nbits - at < 512 ? nbits - at : 512;

		b.h.type = PT_REC_BITS;
		b.h.arg = n;
		b.h.len = sizeof(b.h) + (n + 63) / 64 * 8;
		memcpy(b.body, bits + at / 8, (n + 63) / 64 * 8);
		b.seq = (*seq)++;
		fn(&b, ctx);
	}
}

/*
 * Each record of DIR/cpuCPU.pages in order, through fn, as the library's
 * reader takes it (pathtrace/tracefile.h: packed segments and ENTER codes
 * read the way pathregen reads them). An ENTER is
 * given as the ENTER_AT it stands for (ret_lo, pending), bits as BITS
 * records of at most 512 bits; what the reader synthesizes (a page or
 * record it cannot read) counts in bad_len. Returns the pages read, or -1
 * when the file does not open.
 */
static int for_each_record(const char *dir, uint32_t cpu,
			   void (*fn)(const struct rec *r, void *ctx), void *ctx)
{
	struct tr_records rs = { 0 };
	char path[256];
	FILE *in;
	static uint8_t page[65536];
	long psz = sysconf(_SC_PAGESIZE);
	static struct rec r;
	uint64_t seq = 0;
	int pages = 0;
	size_t i;

	snprintf(path, sizeof(path), "%s/cpu%u.pages", dir, cpu);
	in = fopen(path, "r");
	if (!in)
		return -1;
	while (psz > 0 && psz <= (long)sizeof(page) &&
	       fread(page, 1, (size_t)psz, in) == (size_t)psz) {
		pages++;
		if (tr_decode_page(&rs, cpu, page, (uint32_t)psz))
			bad_len++;
	}
	fclose(in);
	bad_len += rs.bad_pages + rs.bad_events + rs.bad_records + rs.unknown_records;
	for (i = 0; i < rs.n; i++) {
		const struct tr_rec *t = &rs.recs[i];
		const uint64_t *body = tr_body(&rs, t);

		if (t->synthetic)
			continue;
		memset(&r.h, 0, sizeof(r.h));
		r.cpu = cpu;
		r.ts = t->ts;
		r.h.type = t->type;
		r.h.arg = t->arg;
		r.h.len = t->len;
		if (t->type == PT_REC_ENTER) {
			uint32_t e[2] = { (uint32_t)body[0], t->pending };

			r.h.type = PT_REC_ENTER_AT;
			r.h.len = sizeof(r.h) + sizeof(e);
			memcpy(r.body, e, sizeof(e));
		} else if (t->type == PT_REC_BITS && t->arg != PT_BITS_PARTIAL) {
			emit_bits(&r, (const uint8_t *)body, t->arg, fn, ctx, &seq);
			continue;
		} else {
			if ((size_t)t->nwords * 8 > sizeof(r.body)) {
				bad_len++;
				continue;
			}
			memcpy(r.body, body, (size_t)t->nwords * 8);
		}
		r.seq = seq++;
		fn(&r, ctx);
	}
	tr_records_free(&rs);
	return pages;
}

/* Records of all cpus, each cpu's segments tagged with their OWNER stamp. */
struct seg_rec {
	uint64_t owner, stamp;
	uint32_t cpu;
	uint64_t seq;
	struct pt_rec h;
	uint8_t body[64];
};

static struct seg_rec *all;
static size_t nall, capall;
static uint64_t cur_owner[256], cur_stamp[256];

static void collect(const struct rec *r, void *ctx)
{
	struct seg_rec *s;

	(void)ctx;
	counts[r->h.type == PT_REC_ENTER_AT ? PT_REC_ENTER : r->h.type]++;
	if (r->h.type == PT_REC_OWNER) {
		struct pt_rec_owner o;

		memcpy(&o, r->body, sizeof(o));
		cur_owner[r->cpu] = o.owner;
		cur_stamp[r->cpu] = o.stamp;
		owner_switches++;
		return;
	}
	if (r->h.type == PT_REC_LOSS) {
		if (r->h.arg == PT_LOSS_OVERRUN) {
			struct pt_rec_loss l;

			memcpy(&l, r->body, sizeof(l));
			loss_overrun += l.count;
		} else if (r->h.arg == PT_LOSS_MISSED) {
			struct pt_rec_loss l;

			memcpy(&l, r->body, sizeof(l));
			loss_missed++;
			loss_missed_count += l.count;
		}
	}
	if (nall == capall) {
		capall = capall ? capall * 2 : 65536;
		all = realloc(all, capall * sizeof(*all));
		if (!all)
			die("realloc");
	}
	s = &all[nall++];
	s->owner = cur_owner[r->cpu];
	s->stamp = cur_stamp[r->cpu];
	s->cpu = r->cpu;
	s->seq = r->seq;
	s->h = r->h;
	memcpy(s->body, r->body, r->h.len - sizeof(r->h) < sizeof(s->body) ?
	       r->h.len - sizeof(r->h) : sizeof(s->body));
}

/* An owner's stream: by owner, then segment stamp, then position on its cpu. */
static int seg_cmp(const void *a, const void *b)
{
	const struct seg_rec *x = a, *y = b;

	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	if (x->stamp != y->stamp)
		return x->stamp < y->stamp ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * An ENTER (ENTER_AT) or BLOCK record says how many of its owner's bits
 * emitted before it are still to come (pending), and a BITS record carries
 * up to 2048 bits. The checks below read a simpler form of the stream:
 * BITS of at most 64 bits, each marker right after the bits that precede
 * it. norm_* rewrites `all` into that form, per segment.
 */
static struct seg_rec *norm;
static size_t nnorm, capnorm;
static struct seg_rec *held;	/* markers waiting for their bits */
static uint32_t *held_left, nheld, capheld;

static void norm_put(const struct seg_rec *r)
{
	if (nnorm == capnorm) {
		capnorm = capnorm ? capnorm * 2 : 65536;
		norm = realloc(norm, capnorm * sizeof(*norm));
		if (!norm)
			die("realloc");
	}
	norm[nnorm++] = *r;
}

static void norm_bits(const struct seg_rec *tmpl, const uint64_t *w, uint32_t from, uint32_t n)
{
	struct seg_rec b = *tmpl;
	uint64_t v = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		v |= ((w[(from + i) / 64] >> ((from + i) % 64)) & 1) << i;
	b.h.type = PT_REC_BITS;
	b.h.arg = n;
	b.h.len = sizeof(b.h) + 8;
	memset(b.body, 0, sizeof(b.body));
	memcpy(b.body, &v, sizeof(v));
	norm_put(&b);
}

/* Emits the held markers whose bits have all come. */
static void norm_release(bool all_of_them)
{
	uint32_t i, k = 0;

	for (i = 0; i < nheld; i++) {
		if (held_left[i] && !all_of_them) {
			held[k] = held[i];
			held_left[k++] = held_left[i];
			continue;
		}
		norm_put(&held[i]);
	}
	nheld = k;
}

static void normalize(void)
{
	size_t k;

	for (k = 0; k < nall; k++) {
		struct seg_rec r = all[k];
		bool same = k && all[k - 1].owner == r.owner && all[k - 1].stamp == r.stamp &&
			    all[k - 1].cpu == r.cpu;

		if (!same)
			norm_release(true);
		if (r.h.type == PT_REC_ENTER_AT || r.h.type == PT_REC_BLOCK) {
			uint32_t pend, lo;
			uint64_t ret;

			memcpy(&lo, r.body, sizeof(lo));
			memcpy(&pend, r.body + 4, sizeof(pend));
			if (r.h.type == PT_REC_ENTER_AT) {
				ret = lo ? 0xffffffff00000000ull | lo : 0;
				r.h.type = PT_REC_ENTER;
				memcpy(r.body, &ret, sizeof(ret));
			}
			if (nheld == capheld) {
				capheld = capheld ? capheld * 2 : 256;
				held = realloc(held, capheld * sizeof(*held));
				held_left = realloc(held_left, capheld * sizeof(*held_left));
				if (!held || !held_left)
					die("realloc");
			}
			held[nheld] = r;
			held_left[nheld++] = pend;
			norm_release(false);
		} else if (r.h.type == PT_REC_BITS && r.h.arg != PT_BITS_PARTIAL) {
			uint64_t w[8] = { 0 };
			uint32_t n = r.h.arg, at = 0, i;

			memcpy(w, r.body, r.h.len - sizeof(r.h) < sizeof(w) ?
			       r.h.len - sizeof(r.h) : sizeof(w));
			while (at < n) {
				/* Up to the first held marker still waiting, at most 64 bits. */
				uint32_t take = n - at < 64 ? n - at : 64;

				for (i = 0; i < nheld; i++)
					if (held_left[i] && held_left[i] < take)
						take = held_left[i];
				norm_bits(&r, w, at, take);
				at += take;
				for (i = 0; i < nheld; i++)
					held_left[i] -= held_left[i] < take ? held_left[i] : take;
				norm_release(false);
			}
		} else {
			norm_release(true);
			norm_put(&r);
		}
	}
	norm_release(true);
	free(all);
	all = norm;
	nall = nnorm;
	capall = capnorm;
	norm = NULL;
	nnorm = capnorm = 0;
}

static int load_all(const char *dir, int *cpus_with_pages, bool verbose)
{
	uint32_t cpu;
	int pages;

	*cpus_with_pages = 0;
	for (cpu = 0; cpu < 256; cpu++) {
		pages = for_each_record(dir, cpu, collect, NULL);
		if (pages < 0)
			break;
		if (pages > 0)
			(*cpus_with_pages)++;
		if (verbose)
			printf("cpu%u pages=%d\n", cpu, pages);
	}
	qsort(all, nall, sizeof(*all), seg_cmp);
	normalize();
	return 0;
}

static int cmd_check(int argc, char **argv)
{
	const char *map = NULL, *dir;
	int cpus, i = 1;
	size_t k;

	if (argc > 3 && !strcmp(argv[1], "--map")) {
		map = argv[2];
		i = 3;
	}
	if (i >= argc)
		return fprintf(stderr, "usage: pt-plan check [--map FILE] DIR\n"), 1;
	dir = argv[i];
	if (map)
		load_map(map);
	load_all(dir, &cpus, true);
	for (k = 0; k < nall; k++) {
		struct seg_rec *s = &all[k];
		struct owner_state *os = owner_get(s->owner);

		if (os->last_stamp > s->stamp)
			order_violations++;
		os->last_stamp = s->stamp;
		switch (s->h.type) {
		case PT_REC_BITS:
			if (s->h.arg == PT_BITS_PARTIAL)
				break;
			if (os->pending) {
				uint64_t w;

				memcpy(&w, s->body, sizeof(w));
				if (os->bits < 64)
					os->bitval |= w << os->bits;
				os->bits += (int)s->h.arg;
			}
			break;
		case PT_REC_BLOCK: {
			struct pt_rec_block b;

			memcpy(&b, s->body, sizeof(b));
			check_block(os, s->h.arg, b.block);
			break;
		}
		case PT_REC_ENTER:
			if (os->pending) {
				mismatches++;
				fprintf(stderr, "mismatch: ENTER %u inside a block transition\n",
					s->h.arg);
			}
			os->pending = NULL;
			break;
		case PT_REC_LOSS:
			/* A gap: resynchronize every stream on this cpu's next BLOCK. */
			gaps++;
			for (size_t j = 0; j < nowners; j++)
				owners[j].pending = NULL;
			break;
		}
	}
	printf("cpus_with_pages=%d records=%zu owners=%zu owner_switches=%lu\n", cpus, nall,
	       nowners, owner_switches);
	printf("bits=%lu enter=%lu block=%lu loss=%lu counters=%lu bad=%lu\n",
	       counts[PT_REC_BITS], counts[PT_REC_ENTER], counts[PT_REC_BLOCK],
	       counts[PT_REC_LOSS], counts[PT_REC_COUNTERS], bad_len);
	printf("loss_overrun_count=%lu loss_missed_records=%lu loss_missed_count=%lu\n",
	       loss_overrun, loss_missed, loss_missed_count);
	if (map)
		printf("checked=%lu mismatches=%lu gaps=%lu\n", checked, mismatches, gaps);
	return bad_len || mismatches || order_violations ? 1 : 0;
}

/* Prints the concatenated bits of FUNC_ID's activations, one line per ENTER. */
static int cmd_bitseq(const char *dir, const char *id)
{
	uint32_t func = (uint32_t)atoi(id);
	int cpus;
	size_t k;
	bool in = false;

	load_all(dir, &cpus, false);
	for (k = 0; k < nall; k++) {
		struct seg_rec *s = &all[k];

		if (PT_OWNER_KIND(s->owner) != PT_OWNER_TASK)
			continue;
		if (s->h.type == PT_REC_ENTER) {
			if (in)
				putchar('\n');
			in = s->h.arg == func;
			if (in)
				printf("A ");
		} else if (s->h.type == PT_REC_BITS && in && s->h.arg != PT_BITS_PARTIAL) {
			uint64_t w;
			uint32_t b;

			memcpy(&w, s->body, sizeof(w));
			for (b = 0; b < s->h.arg; b++)
				putchar('0' + (int)((w >> b) & 1));
		}
	}
	if (in)
		putchar('\n');
	return 0;
}

/* Prints FUNC_ID's edge counters summed over every COUNTERS record of DIR. */
static uint64_t csum[PT_MAX_COUNTERS_TOOL];
static uint32_t cfunc, cmax;

static void sum_counters(const struct rec *r, void *ctx)
{
	uint32_t n = (r->h.len - sizeof(r->h)) / 8, i;

	(void)ctx;
	if (r->h.type != PT_REC_COUNTERS || r->h.arg != cfunc)
		return;
	for (i = 0; i < n && i < PT_MAX_COUNTERS_TOOL; i++) {
		uint64_t v;

		memcpy(&v, r->body + 8 * i, 8);
		csum[i] += v;
	}
	if (n > cmax)
		cmax = n;
}

static int cmd_counters(const char *dir, const char *id)
{
	uint32_t cpu, i;

	cfunc = (uint32_t)atoi(id);
	for (cpu = 0; cpu < 256; cpu++)
		if (for_each_record(dir, cpu, sum_counters, NULL) < 0)
			break;
	for (i = 0; i < cmax; i++)
		printf("%s%llu", i ? " " : "", (unsigned long long)csum[i]);
	printf("\n");
	return cmax ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		goto usage;
	argc--;
	argv++;
	if (!strcmp(argv[0], "add"))
		return cmd_add(argc, argv);
	if (!strcmp(argv[0], "bad"))
		return cmd_bad(argc, argv);
	if (!strcmp(argv[0], "config") && argc == 2) {
		struct pt_config c = { .size = sizeof(c), .buffer_kb = (uint32_t)atoi(argv[1]) };

		return simple_ioctl(PT_IOC_CONFIG, &c, "config");
	}
	if (!strcmp(argv[0], "start"))
		return simple_ioctl(PT_IOC_START, NULL, "start");
	if (!strcmp(argv[0], "stop"))
		return simple_ioctl(PT_IOC_STOP, NULL, "stop");
	if (!strcmp(argv[0], "flush"))
		return simple_ioctl(PT_IOC_FLUSH, NULL, "flush");
	if (!strcmp(argv[0], "del") && argc == 2) {
		struct pt_del_arg d = { .size = sizeof(d) };

		if (!strcmp(argv[1], "all"))
			d.flags = PT_DEL_ALL;
		else
			d.func_id = (uint32_t)atoi(argv[1]);
		return simple_ioctl(PT_IOC_DEL_PLAN, &d, "del");
	}
	if (!strcmp(argv[0], "stats"))
		return cmd_stats();
	if (!strcmp(argv[0], "fstats") && argc == 2)
		return cmd_fstats(argv[1]);
	if (!strcmp(argv[0], "list"))
		return cmd_list();
	if (!strcmp(argv[0], "dump") && argc == 2)
		return cmd_dump(argv[1]);
	if (!strcmp(argv[0], "check"))
		return cmd_check(argc, argv);
	if (!strcmp(argv[0], "counters") && argc == 3)
		return cmd_counters(argv[1], argv[2]);
	if (!strcmp(argv[0], "bitseq") && argc == 3)
		return cmd_bitseq(argv[1], argv[2]);
usage:
	fprintf(stderr, "usage: see the comment at the top of tests/vm/bin/pt-plan.c\n");
	return 1;
}
