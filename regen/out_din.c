// SPDX-License-Identifier: GPL-2.0
/*
 * out_din - --format din: Dinero IV's "din" input, one instruction fetch
 * per executed instruction: "2 <hex address>\n" (label 2, address in hex
 * without 0x; Dinero ignores the rest of a line). Addresses are 64-bit
 * kernel addresses, so the cache simulator must be built with 64-bit
 * addresses.
 *
 * The instructions of a block come from the recorded code as the CFG
 * decoded it (cfg insns[]); each block's text is made once at open, so the
 * hot loop only copies bytes.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "out.h"

struct din_block {
	char *text;
	uint32_t len;
};

struct din {
	struct din_block **blocks;	/* per function, per block */
};

static uint32_t format_line(char *p, uint64_t addr)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[16];
	uint32_t n = 0, i = 0;

	do {
		tmp[n++] = hex[addr & 15];
		addr >>= 4;
	} while (addr);
	p[i++] = '2';
	p[i++] = ' ';
	while (n)
		p[i++] = tmp[--n];
	p[i++] = '\n';
	return i;
}

static int build_function(struct din *d, const struct pr_func *f)
{
	uint32_t b, i;

	d->blocks[f->index] = calloc(f->cfg.nblocks + 1, sizeof(struct din_block));
	if (!d->blocks[f->index])
		return -PT_ENOMEM;
	for (b = 0; b < f->cfg.nblocks; b++) {
		const struct cfg_block *bl = &f->cfg.blocks[b];
		struct din_block *db = &d->blocks[f->index][b];

		db->text = malloc((size_t)bl->ninsn * 20 + 1);
		if (!db->text)
			return -PT_ENOMEM;
		for (i = 0; i < bl->ninsn; i++)
			db->len += format_line(db->text + db->len, f->cfg.insns[bl->first_insn + i].addr);
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
	const struct din *d = w->priv;
	const struct din_block *db;

	(void)st;
	if (sp->ev->type != REGEN_EV_BLOCK || !sp->f || sp->ev->block >= sp->f->cfg.nblocks)
		return 0;
	db = &d->blocks[sp->f->index][sp->ev->block];
	if (fwrite(db->text, 1, db->len, w->fp) != db->len)
		return -PT_EIO;
	return 0;
}

static int din_close(struct out_writer *w)
{
	din_free(w->m, w->priv);
	w->priv = NULL;
	return fflush(w->fp) ? -PT_EIO : 0;
}

const struct out_writer_ops out_din_ops = {
	.name = "din",
	.open = din_open,
	.step = din_step,
	.close = din_close,
};
