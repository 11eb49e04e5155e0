// SPDX-License-Identifier: GPL-2.0
/*
 * out_text - the default output: each stream's execution, nested like
 * ftrace's function_graph. Blocks print as symbol+0xoff; entries carry
 * the CPU and the stamp of the segment they were recorded in; gaps,
 * resynchronizations and truncation are marked, never smoothed over.
 */
#include <inttypes.h>
#include <stdlib.h>

#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "out.h"

struct text {
	uint32_t depth;
};

static void indent(FILE *fp, uint32_t depth)
{
	uint32_t i;

	for (i = 0; i < depth && i < 64; i++)
		fputs("  ", fp);
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

/* Where the event ev of stream s was recorded, if it has a marker. */
static void print_where(FILE *fp, const struct regen_stream *s, const struct regen_event *ev)
{
	uint64_t stamp;
	uint32_t cpu;

	if (!ev->marker)
		return;
	regen_where(s, ev->where, &cpu, &stamp);
	fprintf(fp, "[cpu %u @ %" PRIu64 ".%09" PRIu64 "] ", cpu, stamp / 1000000000u,
		stamp % 1000000000u);
}

static int text_open(struct out_writer *w)
{
	w->priv = calloc(1, sizeof(struct text));
	return w->priv ? 0 : -PT_ENOMEM;
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
		indent(w->fp, t->depth);
		print_where(w->fp, st->s, ev);
		if (mk && mk->type == REGEN_M_FORKED)
			fprintf(w->fp, "%s() { /* inherited at fork from %s */\n", name,
				pr_owner_name(mk->value, buf, sizeof(buf)));
		else
			fprintf(w->fp, "%s() {\n", name);
		t->depth++;
		break;
	case REGEN_EV_FORK:
		indent(w->fp, t->depth);
		fprintf(w->fp, "# fork at bit %" PRIu64 ": %s ", ev->pos,
			pr_owner_name(mk ? mk->value : 0, buf, sizeof(buf)));
		if (ev->reason)
			fputs("inherits no activation the regeneration can name\n", w->fp);
		else
			fprintf(w->fp, "inherits %u open activation(s)\n", ev->nframes);
		break;
	case REGEN_EV_EXEC:
		indent(w->fp, t->depth);
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
		indent(w->fp, t->depth);
		fprintf(w->fp, "%s\n", pr_block_name(sp->f, ev->block, buf, sizeof(buf)));
		break;
	case REGEN_EV_EXIT:
	case REGEN_EV_REPLACED:	/* an execve ended it: no return */
		if (t->depth)
			t->depth--;
		indent(w->fp, t->depth);
		fprintf(w->fp, "} /* %s%s */\n", name,
			ev->type == REGEN_EV_REPLACED ? ": replaced by execve" : "");
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
	return ferror(w->fp) ? -PT_EIO : 0;
}

static int text_close(struct out_writer *w)
{
	free(w->priv);
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
