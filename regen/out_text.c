// SPDX-License-Identifier: GPL-2.0
/*
 * out_text - the default output: each stream's execution, nested like
 * ftrace's function_graph. Blocks print as symbol+0xoff; entries carry
 * the CPU and the stamp of the segment they were recorded in; gaps,
 * resynchronizations and truncation are marked, never smoothed over.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "out.h"
#include "out_line.h"

#define INDENT_LEVELS 64	/* deeper lines are indented as this level's */

/* One function's block names (pr_block_name), each followed by a newline. */
struct block_names {
	char *text;
	uint32_t *at;			/* cfg.nblocks + 1: where each name starts in text */
};

struct text {
	uint32_t depth;
	char pad[2 * INDENT_LEVELS];	/* spaces */
	struct block_names *names;	/* per index in the model's funcs, built at first use */
	uint32_t nnames;
	struct out_line line;		/* blocks', entries' and returns' lines (out_line.h) */
};

static void line_indent(struct text *t, FILE *fp)
{
	out_line_put(&t->line, fp, t->pad, 2 * (t->depth < INDENT_LEVELS ? t->depth : INDENT_LEVELS));
}

static void indent(struct text *t, FILE *fp)
{
	fwrite_unlocked(t->pad, 1, 2 * (t->depth < INDENT_LEVELS ? t->depth : INDENT_LEVELS), fp);
}

/* f's names (struct block_names), built the first time. Returns them, or NULL without memory. */
static const struct block_names *names_of(struct text *t, const struct pr_model *m,
					  const struct pr_func *f)
{
	size_t k, size = 0, len;
	struct block_names *bn;
	char buf[192];
	uint32_t b, nb = f->cfg.nblocks;

	/* a function of the model's (the walk's are), else named block by block */
	if (!m->nfuncs || f < m->funcs || f >= m->funcs + m->nfuncs)
		return NULL;
	k = (size_t)(f - m->funcs);
	if (!t->names) {
		t->names = calloc(m->nfuncs, sizeof(*t->names));
		if (!t->names)
			return NULL;
		t->nnames = m->nfuncs;
	}
	bn = &t->names[k];
	if (bn->at)
		return bn;
	bn->at = malloc(((size_t)nb + 1) * sizeof(*bn->at));
	for (b = 0; bn->at && b < nb; b++)
		size += strlen(pr_block_name(f, b, buf, sizeof(buf))) + 1;
	bn->text = bn->at && size <= UINT32_MAX ? malloc(size ? size : 1) : NULL;
	if (!bn->text) {
		free(bn->at);
		bn->at = NULL;
		return NULL;
	}
	for (b = 0, size = 0; b < nb; b++) {
		len = strlen(pr_block_name(f, b, buf, sizeof(buf)));
		bn->at[b] = (uint32_t)size;
		memcpy(bn->text + size, buf, len);
		bn->text[size + len] = '\n';
		size += len + 1;
	}
	bn->at[nb] = (uint32_t)size;
	return bn;
}

/* A block's line: its name (symbol+0xoff) at the activation's depth. */
static void block_line(struct text *t, const struct out_writer *w, const struct pr_func *f,
		       uint32_t block)
{
	const struct block_names *bn = f && block < f->cfg.nblocks ? names_of(t, w->m, f) : NULL;
	char buf[192];

	line_indent(t, w->fp);
	if (bn) {
		out_line_put(&t->line, w->fp, bn->text + bn->at[block], bn->at[block + 1] - bn->at[block]);
	} else {
		out_line_str(&t->line, w->fp, pr_block_name(f, block, buf, sizeof(buf)));
		out_line_put(&t->line, w->fp, "\n", 1);
	}
	out_line_end(&t->line, w->fp);
}

static const char *loss_name(uint32_t kind)
{
	switch (kind) {
	case PT_LOSS_OVERRUN:
		return "ring buffer overrun";
	case PT_LOSS_MISSED:
		return "missed probe hits";
	case PT_LOSS_STATE:
		return "state lost";
	default:
		return "corrupt or unknown loss";
	}
}

/* Where the event ev of stream s was recorded, if it has a marker: "[cpu C @ S.NNNNNNNNN] ". */
static void line_where(struct out_line *l, FILE *fp, const struct regen_stream *s,
		       const struct regen_event *ev)
{
	uint64_t stamp;
	uint32_t cpu;

	if (!ev->marker)
		return;
	regen_where(s, ev->where, &cpu, &stamp);
	out_line_put(l, fp, "[cpu ", 5);
	out_line_dec(l, fp, cpu, 1);
	out_line_put(l, fp, " @ ", 3);
	out_line_dec(l, fp, stamp / 1000000000u, 1);
	out_line_put(l, fp, ".", 1);
	out_line_dec(l, fp, stamp % 1000000000u, 9);
	out_line_put(l, fp, "] ", 2);
}

static int text_open(struct out_writer *w)
{
	struct text *t = calloc(1, sizeof(*t));

	if (!t)
		return -PT_ENOMEM;
	memset(t->pad, ' ', sizeof(t->pad));
	w->priv = t;
	return 0;
}

static int text_stream_begin(struct out_writer *w, const struct out_stream *st)
{
	struct text *t = w->priv;
	char own[48];

	t->depth = 0;
	fprintf(w->fp, "%s# stream %u: %s, %" PRIu64 " trace bits, %u markers\n",
		st->index ? "\n" : "", st->index, pr_owner_name(st->s->owner, own, sizeof(own)),
		st->s->nbits, st->s->nmarkers);
	return 0;
}

static int text_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	const struct regen_event *ev = sp->ev;
	const struct regen_marker *mk = ev->marker;
	struct text *t = w->priv;
	const char *name = sp->f ? sp->f->name : "?";
	char buf[192];

	switch (ev->type) {
	case REGEN_EV_ENTER:
		line_indent(t, w->fp);
		line_where(&t->line, w->fp, st->s, ev);
		out_line_str(&t->line, w->fp, name);
		if (mk && mk->type == REGEN_M_FORKED) {
			out_line_str(&t->line, w->fp, "() { /* inherited at fork from ");
			out_line_str(&t->line, w->fp, pr_owner_name(mk->value, buf, sizeof(buf)));
			out_line_str(&t->line, w->fp, " */\n");
		} else {
			out_line_put(&t->line, w->fp, "() {\n", 5);
		}
		out_line_end(&t->line, w->fp);
		t->depth++;
		break;
	case REGEN_EV_FORK:
		indent(t, w->fp);
		fprintf(w->fp, "# fork at bit %" PRIu64 ": %s ", ev->pos,
			pr_owner_name(mk ? mk->value : 0, buf, sizeof(buf)));
		if (ev->reason)
			fputs("inherits no activation the regeneration can name\n", w->fp);
		else
			fprintf(w->fp, "inherits %u open activation(s)\n", ev->nframes);
		break;
	case REGEN_EV_EXEC:
		indent(t, w->fp);
		fprintf(w->fp, "# execve at bit %" PRIu64, ev->pos);
		if (mk && mk->value != st->s->owner)
			fprintf(w->fp, " by %s, which took this pid",
				pr_owner_name(mk->value, buf, sizeof(buf)));
		if (ev->reason)
			fputs(": the old image's open activations are not known (a gap)\n", w->fp);
		else
			fprintf(w->fp, ": %u user activation(s) of the old image end\n", ev->nframes);
		break;
	case REGEN_EV_BLOCK:
		block_line(t, w, sp->f, ev->block);
		break;
	case REGEN_EV_EXIT:
	case REGEN_EV_REPLACED:	/* an execve ended it: no return */
		if (t->depth)
			t->depth--;
		line_indent(t, w->fp);
		out_line_put(&t->line, w->fp, "} /* ", 5);
		out_line_str(&t->line, w->fp, name);
		if (ev->type == REGEN_EV_REPLACED)
			out_line_str(&t->line, w->fp, ": replaced by execve");
		out_line_put(&t->line, w->fp, " */\n", 4);
		out_line_end(&t->line, w->fp);
		break;
	case REGEN_EV_GAP:
		t->depth = 0;
		fprintf(w->fp, "!! gap at bit %" PRIu64 ": ", ev->pos);
		if (mk && regen_marker_is_loss(mk)) {
			uint64_t stamp;
			uint32_t cpu;

			regen_where(st->s, ev->where, &cpu, &stamp);
			fprintf(w->fp, "%s (%" PRIu64 ", cpu %u)", loss_name(mk->arg), mk->value, cpu);
		} else if (mk && mk->type == REGEN_M_ENTER && ev->reason == -PT_ENOENT) {
			const struct pr_func *mf = pr_model_func(w->m, mk->func);

			fprintf(w->fp, "entry of %s (func %u), which is not regenerated", mf ? mf->name : "?",
				mk->func);
		} else if (mk && mk->type == REGEN_M_ENTER && ev->reason == -PT_EMISMATCH) {
			fprintf(w->fp, "entry of func %u (%s %#" PRIx64 ") does not match the call",
				mk->func, mk->arg == REGEN_ENTER_RET ? "return address" :
				mk->arg == REGEN_ENTER_NESTED ? "under the traced frame" :
				"under a frame the module could not find", mk->value);
		} else
			fprintf(w->fp, "%s", pt_strerror(ev->reason));
		if (ev->func != UINT32_MAX)
			fprintf(w->fp, " in %s", name);
		fputs("; nothing until the next entry\n", w->fp);
		break;
	case REGEN_EV_RESYNC:
		t->depth = 0;
		fprintf(w->fp, ">> resync at bit %" PRIu64 "\n", ev->pos);
		break;
	case REGEN_EV_TRUNCATED:
		fprintf(w->fp, "!! truncated at bit %" PRIu64 ": the stream ends inside %u open activation(s)\n",
			ev->pos, t->depth);
		t->depth = 0;
		break;
	default:
		fprintf(w->fp, "!! unknown event %u\n", ev->type);
		break;
	}
	return ferror_unlocked(w->fp) ? -PT_EIO : 0;
}

static int text_close(struct out_writer *w)
{
	struct text *t = w->priv;
	uint32_t k;

	for (k = 0; t && t->names && k < t->nnames; k++) {
		free(t->names[k].text);
		free(t->names[k].at);
	}
	if (t)
		free(t->names);
	free(t);
	w->priv = NULL;
	return 0;
}

/* A part's text is all there is: nothing to fold. */
static int text_merge(struct out_writer *w, struct out_writer *part)
{
	(void)w;
	return text_close(part);
}

const struct out_writer_ops out_text_ops = {
	.name = "text",
	.open = text_open,
	.stream_begin = text_stream_begin,
	.step = text_step,
	.close = text_close,
	.merge = text_merge,
};
