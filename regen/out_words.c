// SPDX-License-Identifier: GPL-2.0
/*
 * out_words - --words: what the witness words cost on this execution. The
 * decoders count each word they read (regen_word_reads): per word by
 * context, and the words read with no context. Per function and in all:
 * the bits those reads took, the empirical entropy of each context row's
 * reads (what any code by row, however it is shaped, cannot beat on this
 * execution: the arithmetic coder's floor), what the same words would take
 * if they adapted (PT_PLAN_CTX_SWAP: a row's last member since the last
 * reset trading words with its shortest; regen_word_reads), and with
 * --replan the bits the same reads would take with words made now from
 * the recorded CFG, by the heuristic (the words a plan without a profile
 * gets today) or by this execution's own edge counts, every site where it
 * is. The words
 * with no context are counted as read in the forecast and the replan.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>
#include <pathtrace/plan.h>

#include "out.h"
#include "pathtrace_abi.h"

/* One function's figures. */
struct words_func {
	uint32_t index;		/* in the model */
	uint64_t reads, ctx_reads;
	uint64_t bits;		/* all its reads took */
	double entropy;		/* of its context reads, by row */
	uint64_t swap_bits;	/* the forecast for adapting words, plus plain bits */
	uint64_t replan_bits;	/* with words made now (--replan): context reads, plus plain bits */
};

/* Whether f's decoder reads witness words by context. */
static const struct encoding *ctx_encoding(const struct pr_func *f)
{
	const struct encoding *enc = f->model;

	if (!enc || f->mode != PT_MODE_TRACE || f->encoding != PT_ENC_WITNESS ||
	    enc->kind != PT_ENC_WITNESS || !enc->ctx_next)
		return NULL;
	return enc;
}

/*
 * Has the decoders of m's functions with words by context count what they
 * read (regen_word_reads), before any stream is regenerated. Returns 0;
 * -PT_ENOMEM.
 */
static int words_arm(struct pr_model *m)
{
	uint32_t i, k;

	/* the engine's functions are those with a decoder, in the model's order */
	for (i = 0, k = 0; i < m->nfuncs && k < m->fs.nfuncs; i++) {
		struct pr_func *f = &m->funcs[i];
		const struct encoding *enc = ctx_encoding(f);
		struct regen_word_reads *wr;

		if (!f->ops || m->rfuncs[k++].model != f->model || !enc || f->word_reads)
			continue;
		wr = calloc(1, sizeof(*wr));
		if (!wr)
			return -PT_ENOMEM;
		f->word_reads = wr;	/* pr_func_free frees it */
		wr->ctx = calloc((size_t)enc->ctx_start[enc->nctx_rows] + 1, sizeof(*wr->ctx));
		wr->last = calloc((size_t)enc->nctx_rows + 1, sizeof(*wr->last));
		if (!wr->ctx || !wr->last)
			return -PT_ENOMEM;
		m->rfuncs[k - 1].word_reads = wr;
	}
	return 0;
}

static int words_open(struct out_writer *w)
{
	struct out_counts *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return -PT_ENOMEM;
	/* the counters are the writer's: it arms them here and reads them at close */
	err = words_arm((struct pr_model *)w->m);
	if (!err)
		err = out_counts_open(h, w);
	if (err) {
		free(h);
		return err;
	}
	w->priv = h;
	return 0;
}

static int words_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	return out_counts_step(w->priv, st, sp);
}

static int words_stream_end(struct out_writer *w, const struct out_stream *st)
{
	return out_counts_stream_end(w->priv, st);
}

/*
 * What f's context reads take with words made now (--replan) into
 * wf->replan_bits. f's model is rebuilt with them: --words is the last
 * thing that reads it. Returns 0; -PT_ENOENT when the words cannot be
 * made (no counts for the profile; rows that differ); -PT_ENOMEM.
 */
static int replan_words(const struct out_writer *w, struct pr_func *f, struct words_func *wf)
{
	struct encoding *enc = f->model;
	uint32_t n = enc->ctx_start[enc->nctx_rows], r, i, k;
	uint32_t *row = malloc(((size_t)n + 1) * sizeof(*row));
	uint32_t *code = malloc(((size_t)n + 1) * sizeof(*code));
	uint64_t *weight = malloc(((size_t)f->g.ne + 1) * sizeof(*weight));
	const uint64_t *edge = out_profile_edges(&((struct out_counts *)w->priv)->prof, f->index);
	uint32_t nrows = enc->nctx_rows;
	int err = -PT_ENOMEM;

	if (!row || !code || !weight)
		goto out;
	for (r = 0; r < nrows; r++)
		for (i = enc->ctx_start[r]; i < enc->ctx_start[r + 1]; i++) {
			row[i] = r;
			code[i] = enc->ctx_code[i];
		}
	if (w->hits_replan == OUT_REPLAN_PROFILE) {
		err = -PT_ENOENT;
		if (!edge)
			goto out;
		for (k = 0; k < f->g.ne; k++)
			weight[k] = k < f->cfg.nedges ? edge[k] : 0;
	} else {
		err = plan_weights_words(&f->cfg, &f->g, weight);
		if (err)
			goto out;
	}
	err = encoding_ctx_build(&f->g, enc, weight);
	if (err)
		goto out;
	err = -PT_ENOENT;
	wf->replan_bits = f->word_reads->plain_bits;
	for (i = 0; i < n; i++) {
		uint8_t nbits;
		uint64_t value;

		if (!f->word_reads->ctx[i])
			continue;
		if (encoding_ctx_word(enc, row[i], code[i], &nbits, &value))
			goto out;	/* the rows came out otherwise */
		wf->replan_bits += f->word_reads->ctx[i] * nbits;
	}
	err = 0;
out:
	if (err == -PT_ENOENT || err == -PT_EINVAL) {
		fprintf(stderr, "pathregen: --replan: %s: no words made (%s)\n", f->name,
			edge || w->hits_replan != OUT_REPLAN_PROFILE ? "its rows came out otherwise" :
			"no counts");
		err = -PT_ENOENT;
	}
	free(row);
	free(code);
	free(weight);
	return err;
}

/* Function i's figures into *wf. Returns 0; -PT_ENOENT: no counted reads; -PT_ENOMEM. */
static int func_words(const struct out_writer *w, uint32_t i, struct words_func *wf)
{
	/* the model is the writer's to rebuild at close (replan_words) */
	struct pr_func *f = (struct pr_func *)&w->m->funcs[i];
	const struct encoding *enc = ctx_encoding(f);
	const struct regen_word_reads *wr = f->word_reads;
	uint32_t r, k;

	memset(wf, 0, sizeof(*wf));
	wf->index = i;
	if (!enc || !wr)
		return -PT_ENOENT;
	wf->reads = wr->plain;
	wf->bits = wr->plain_bits + wr->ctx_bits;
	wf->swap_bits = wr->plain_bits + wr->swap_bits;
	for (r = 0; r < enc->nctx_rows; r++) {
		uint64_t n = 0;

		for (k = enc->ctx_start[r]; k < enc->ctx_start[r + 1]; k++) {
			n += wr->ctx[k];
			if (wr->ctx[k])
				wf->entropy -= (double)wr->ctx[k] * log2((double)wr->ctx[k]);
		}
		if (n)
			wf->entropy += (double)n * log2((double)n);
		wf->ctx_reads += n;
	}
	wf->reads += wf->ctx_reads;
	if (!wf->reads)
		return -PT_ENOENT;
	return w->hits_replan ? replan_words(w, f, wf) : 0;
}

static double per(uint64_t n, uint64_t d)
{
	return d ? (double)n / (double)d : 0.0;
}

static int by_bits(const void *a, const void *b)
{
	const struct words_func *x = a, *y = b;

	if (x->bits != y->bits)
		return x->bits < y->bits ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int words_close(struct out_writer *w)
{
	struct out_counts *h = w->priv;
	struct words_func *wf = calloc(w->m->nfuncs + 1, sizeof(*wf)), t = { 0 };
	uint32_t i, n = 0, shown;
	int err = wf ? 0 : -PT_ENOMEM, cerr;

	for (i = 0; !err && i < w->m->nfuncs; i++) {
		err = func_words(w, i, &wf[n]);
		if (err == -PT_ENOENT) {
			err = 0;
			continue;
		}
		if (err)
			break;
		t.reads += wf[n].reads;
		t.ctx_reads += wf[n].ctx_reads;
		t.bits += wf[n].bits;
		t.entropy += wf[n].entropy;
		t.swap_bits += wf[n].swap_bits;
		t.replan_bits += wf[n].replan_bits;
		n++;
	}
	if (!err) {
		qsort(wf, n, sizeof(*wf), by_bits);
		fprintf(w->fp, "witness words read: bits they took, the entropy of each context "
			"row's reads (the floor for codes by row)%s\n",
			w->hits_replan == OUT_REPLAN_PROFILE ? ", words made from these counts" :
			w->hits_replan ? ", words made now by the heuristic" : "");
		fprintf(w->fp, "%-32s %10s %10s %10s %7s %10s %10s", "function", "reads", "in-ctx",
			"bits", "/read", "entropy", "adaptive");
		fprintf(w->fp, w->hits_replan ? " %10s\n" : "\n", "replanned");
		shown = w->top && w->top < n ? w->top : n;
		for (i = 0; i < shown; i++) {
			fprintf(w->fp, "%-32.32s %10" PRIu64 " %10" PRIu64 " %10" PRIu64
				" %7.3f %10.0f %10" PRIu64, w->m->funcs[wf[i].index].name, wf[i].reads,
				wf[i].ctx_reads, wf[i].bits, per(wf[i].bits, wf[i].reads),
				wf[i].entropy, wf[i].swap_bits);
			if (w->hits_replan)
				fprintf(w->fp, " %10" PRIu64, wf[i].replan_bits);
			fputc('\n', w->fp);
		}
		if (shown < n)
			fprintf(w->fp, "(%u more functions; --top N)\n", n - shown);
		fprintf(w->fp, "functions=%u reads=%" PRIu64 " ctx_reads=%" PRIu64 " bits=%" PRIu64
			" bits_per_read=%.3f entropy_bits=%.0f adaptive_bits=%" PRIu64, n, t.reads,
			t.ctx_reads, t.bits, per(t.bits, t.reads), t.entropy, t.swap_bits);
		if (w->hits_replan)
			fprintf(w->fp, " replan_bits=%" PRIu64, t.replan_bits);
		fputc('\n', w->fp);
	}
	free(wf);
	cerr = out_counts_close(h);
	err = err ? err : cerr;
	free(h);
	w->priv = NULL;
	return err ? err : (ferror(w->fp) ? -PT_EIO : 0);
}

const struct out_writer_ops out_words_ops = {
	.name = "words",
	.open = words_open,
	.step = words_step,
	.stream_end = words_stream_end,
	.close = words_close,
};
