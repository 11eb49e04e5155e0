// SPDX-License-Identifier: GPL-2.0
/*
 * out_din - --format din: Dinero IV's "din" input, one reference per line:
 * "<label> <hex address>\n" (label 0 data read, 1 data write, 2
 * instruction fetch; address in hex without 0x; Dinero ignores the rest of
 * a line). Addresses are 64-bit kernel addresses, so the cache simulator
 * must be built with 64-bit addresses.
 *
 * Dinero reads a din reference as a few bytes at an aligned address, not
 * as the instruction's length, so an instruction that crosses a cache
 * line would touch one line only. Each instruction is therefore its fetch
 * at its own address plus one more fetch at the start of every further
 * line (of --line bytes, 64 by default) its bytes reach; a data reference
 * likewise per line its operand reaches. Data references are the exact
 * ones only (insn_mem.h: RIP-relative and absolute addresses), after the
 * instruction's fetch; register-, stack- and fs/gs-addressed operands are
 * left out and counted.
 *
 * Each block's text is made once at open from the recorded code as the
 * CFG decoded it, so the hot loop only copies bytes.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <pathtrace/error.h>

#include "insn_mem.h"
#include "out.h"

/* Longest reference line: label, space, 16 hex digits, newline. */
#define DIN_LINE_MAX 20

struct din_block {
	char *text;
	uint32_t len;
	uint32_t fetches, crossings;	/* fetch lines; those past an instruction's first line */
	uint32_t data, unknown;		/* data reference lines; operands left out */
};

struct din {
	struct din_block **blocks;	/* per function, per block */
	uint64_t line;
	uint64_t fetches, crossings, data, unknown;
	ZydisDecoder dec;
};

static uint32_t format_line(char *p, char label, uint64_t addr)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[16];
	uint32_t n = 0, i = 0;

	do {
		tmp[n++] = hex[addr & 15];
		addr >>= 4;
	} while (addr);
	p[i++] = label;
	p[i++] = ' ';
	while (n)
		p[i++] = tmp[--n];
	p[i++] = '\n';
	return i;
}

/* Lines past the first that [addr, addr + size) reaches. */
static uint64_t extra_lines(uint64_t addr, uint64_t size, uint64_t line)
{
	return size ? ((addr + size - 1) & ~(line - 1)) / line - (addr & ~(line - 1)) / line : 0;
}

/* One reference at addr and one per further line; returns the bytes written to p. */
static uint32_t format_ref(char *p, char label, uint64_t addr, uint64_t size, uint64_t line,
			   uint32_t *extra)
{
	uint64_t k, more = extra_lines(addr, size, line);
	uint32_t n = format_line(p, label, addr);

	for (k = 1; k <= more; k++)
		n += format_line(p + n, label, (addr & ~(line - 1)) + k * line);
	*extra += (uint32_t)more;
	return n;
}

static int build_function(struct din *d, const struct pr_func *f)
{
	uint32_t b, i, k;

	d->blocks[f->index] = calloc(f->cfg.nblocks + 1, sizeof(struct din_block));
	if (!d->blocks[f->index])
		return -PT_ENOMEM;
	for (b = 0; b < f->cfg.nblocks; b++) {
		const struct cfg_block *bl = &f->cfg.blocks[b];
		struct din_block *db = &d->blocks[f->index][b];
		size_t cap = (size_t)bl->ninsn * 2 * DIN_LINE_MAX + 1, need;

		db->text = malloc(cap);
		if (!db->text)
			return -PT_ENOMEM;
		for (i = 0; i < bl->ninsn; i++) {
			const struct cfg_insn *in = &f->cfg.insns[bl->first_insn + i];
			struct insn_mem mem[INSN_MEM_MAX];
			unsigned int nmem, unk;
			uint32_t data_extra = 0;

			nmem = insn_mem_exact(&d->dec, f, in, mem, &unk);
			/* worst case: an instruction or operand spans (size / line + 2) lines */
			need = db->len + (size_t)(in->len / d->line + 2) * DIN_LINE_MAX;
			for (k = 0; k < nmem; k++)
				need += (size_t)(mem[k].size / d->line + 2) * DIN_LINE_MAX;
			if (need + 1 > cap) {
				char *t = realloc(db->text, need * 2);

				if (!t)
					return -PT_ENOMEM;
				db->text = t;
				cap = need * 2;
			}
			db->len += format_ref(db->text + db->len, '2', in->addr, in->len, d->line,
					      &db->crossings);
			db->fetches++;
			for (k = 0; k < nmem; k++)
				db->len += format_ref(db->text + db->len, mem[k].write ? '1' : '0',
						      mem[k].addr, mem[k].size, d->line, &data_extra);
			db->data += nmem + data_extra;
			db->unknown += unk;
		}
		db->fetches += db->crossings;
	}
	return 0;
}

static void din_free(const struct pr_model *m, struct din *d)
{
	uint32_t i, b;

	if (!d)
		return;
	for (i = 0; i < m->nfuncs && d->blocks; i++) {
		if (!d->blocks[i])
			continue;
		for (b = 0; b < m->funcs[i].cfg.nblocks; b++)
			free(d->blocks[i][b].text);
		free(d->blocks[i]);
	}
	free(d->blocks);
	free(d);
}

static int din_open(struct out_writer *w)
{
	struct din *d = calloc(1, sizeof(*d));
	uint32_t i;
	int err;

	if (!d)
		return -PT_ENOMEM;
	d->line = w->line ? w->line : 64;
	ZydisDecoderInit(&d->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	d->blocks = calloc(w->m->nfuncs + 1, sizeof(*d->blocks));
	if (!d->blocks) {
		din_free(w->m, d);
		return -PT_ENOMEM;
	}
	for (i = 0; i < w->m->nfuncs; i++) {
		err = build_function(d, &w->m->funcs[i]);
		if (err) {
			din_free(w->m, d);
			return err;
		}
	}
	w->priv = d;
	return 0;
}

static int din_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	struct din *d = w->priv;
	const struct din_block *db;

	(void)st;
	if (sp->ev->type != REGEN_EV_BLOCK || !sp->f || sp->ev->block >= sp->f->cfg.nblocks)
		return 0;
	db = &d->blocks[sp->f->index][sp->ev->block];
	d->fetches += db->fetches;
	d->crossings += db->crossings;
	d->data += db->data;
	d->unknown += db->unknown;
	if (fwrite(db->text, 1, db->len, w->fp) != db->len)
		return -PT_EIO;
	return 0;
}

static int din_close(struct out_writer *w)
{
	struct din *d = w->priv;

	if (d && d->fetches)
		fprintf(stderr, "pathregen: din: %" PRIu64 " instruction fetches (%" PRIu64
			" of them for the further %" PRIu64 "-byte line an instruction crosses), %" PRIu64
			" data references with exact addresses; %" PRIu64
			" memory operands addressed through registers, the stack or fs/gs left out\n",
			d->fetches, d->crossings, d->line, d->data, d->unknown);
	din_free(w->m, d);
	w->priv = NULL;
	return fflush(w->fp) ? -PT_EIO : 0;
}

const struct out_writer_ops out_din_ops = {
	.name = "din",
	.open = din_open,
	.step = din_step,
	.close = din_close,
};
