// SPDX-License-Identifier: GPL-2.0
/*
 * out_json - --json: the default output's data for other tools, as one
 * JSON document:
 *
 *   {"functions": [{"id", "name", "addr", "cold_addr",
 *                   "blocks": [{"addr", "size", "name"}]}],
 *    "streams": [{"index", "owner", "bits", "markers",
 *                 "events": [{"ev": "enter", "func", "depth", "cpu", "stamp",
 *                             and one of "ret", "frame" or "inherited_from"},
 *                            {"ev": "block", "func", "block"},
 *                            {"ev": "exit", "func"},
 *                            {"ev": "fork", "pos", "child", "inherited", "known"},
 *                            {"ev": "exec", "pos", "replaced", "known", "by"},
 *                            {"ev": "replaced", "func", "by"},
 *                            {"ev": "gap", "pos", "reason", "loss", "count", "cpu"},
 *                            {"ev": "resync", "pos"}, {"ev": "truncated", "pos"}]}]}
 *
 * An entry with a marker has its CPU and stamp, and: the return address
 * ("ret"), or for an untraced caller the traced frame below ("frame", or
 * "unknown" when the module's walk found none), or for an activation
 * inherited at a fork the parent ("inherited_from"). Addresses are strings
 * ("0x..."): JSON numbers lose 64-bit precision.
 */
#include <inttypes.h>
#include <stdlib.h>

#include <pathtrace/error.h>

#include "out.h"
#include "out_line.h"

struct json {
	int first_event;
	struct out_line line;		/* blocks', entries' and exits' objects (out_line.h) */
};

void out_json_str(FILE *fp, const char *s)
{
	struct out_line l = { .len = 0 };

	out_line_json_str(&l, fp, s);
	out_line_end(&l, fp);
}

static int json_open(struct out_writer *w)
{
	const struct pr_model *m = w->m;
	struct json *j = calloc(1, sizeof(*j));
	char buf[192];
	uint32_t i, b;

	if (!j)
		return -PT_ENOMEM;
	w->priv = j;
	fputs("{\"functions\": [", w->fp);
	for (i = 0; i < m->nfuncs; i++) {
		const struct pr_func *f = &m->funcs[i];

		fprintf(w->fp, "%s\n {\"id\": %u, \"name\": ", i ? "," : "", f->func_id);
		out_json_str(w->fp, f->name);
		fprintf(w->fp, ", \"addr\": \"0x%" PRIx64 "\", \"cold_addr\": \"0x%" PRIx64
			"\", \"blocks\": [", f->addr, f->cold_addr);
		for (b = 0; b < f->cfg.nblocks; b++) {
			fprintf(w->fp, "%s{\"addr\": \"0x%" PRIx64 "\", \"size\": %u, \"name\": ",
				b ? ", " : "", f->cfg.blocks[b].addr, f->cfg.blocks[b].size);
			out_json_str(w->fp, pr_block_name(f, b, buf, sizeof(buf)));
			fputc('}', w->fp);
		}
		fputs("]}", w->fp);
	}
	fputs("],\n\"streams\": [", w->fp);
	return ferror(w->fp) ? -PT_EIO : 0;
}

static int json_stream_begin(struct out_writer *w, const struct out_stream *st)
{
	struct json *j = w->priv;
	char own[48];

	fprintf(w->fp, "%s\n {\"index\": %u, \"owner\": \"%s\", \"bits\": %" PRIu64
		", \"markers\": %u, \"events\": [", st->index ? "," : "", st->index,
		pr_owner_name(st->s->owner, own, sizeof(own)), st->s->nbits, st->s->nmarkers);
	j->first_event = 1;
	return 0;
}

/*
 * The objects of most events, built without a format string (out_line.h):
 * a block, an exit, an entry but one inherited at a fork (json_step writes
 * the others). Returns whether ev was one.
 */
static int json_common(struct json *j, FILE *fp, const struct out_stream *st,
		       const struct regen_event *ev)
{
	const struct regen_marker *mk = ev->marker;
	struct out_line *l = &j->line;
	uint64_t stamp;
	uint32_t cpu;

	if (ev->type != REGEN_EV_BLOCK && ev->type != REGEN_EV_EXIT &&
	    (ev->type != REGEN_EV_ENTER || (mk && mk->type == REGEN_M_FORKED)))
		return 0;
	out_line_str(l, fp, j->first_event ? "\n  " : ",\n  ");
	j->first_event = 0;
	out_line_str(l, fp, ev->type == REGEN_EV_BLOCK ? "{\"ev\": \"block\", \"func\": " :
			    ev->type == REGEN_EV_EXIT ? "{\"ev\": \"exit\", \"func\": " :
			    "{\"ev\": \"enter\", \"func\": ");
	out_line_dec(l, fp, ev->func, 1);
	if (ev->type == REGEN_EV_BLOCK) {
		out_line_str(l, fp, ", \"block\": ");
		out_line_dec(l, fp, ev->block, 1);
	} else if (ev->type == REGEN_EV_ENTER) {
		out_line_str(l, fp, ", \"depth\": ");
		out_line_dec(l, fp, ev->depth, 1);
	}
	if (ev->type == REGEN_EV_ENTER && mk) {
		regen_where(st->s, ev->where, &cpu, &stamp);
		out_line_str(l, fp, ", \"cpu\": ");
		out_line_dec(l, fp, cpu, 1);
		out_line_str(l, fp, ", \"stamp\": ");
		out_line_dec(l, fp, stamp, 1);
		if (mk->arg == REGEN_ENTER_FRAME_UNKNOWN) {
			out_line_str(l, fp, ", \"frame\": \"unknown\"");
		} else {
			out_line_str(l, fp, mk->arg == REGEN_ENTER_NESTED ? ", \"frame\": \"" :
					    ", \"ret\": \"");
			out_line_hex(l, fp, mk->value);
			out_line_put(l, fp, "\"", 1);
		}
	}
	out_line_put(l, fp, "}", 1);
	out_line_end(l, fp);
	return 1;
}

static int json_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	const struct regen_event *ev = sp->ev;
	const struct regen_marker *mk = ev->marker;
	uint64_t stamp;
	uint32_t cpu;
	struct json *j = w->priv;
	FILE *fp = w->fp;
	char own[48];

	if (json_common(j, fp, st, ev))
		return ferror_unlocked(fp) ? -PT_EIO : 0;
	fputs(j->first_event ? "\n  " : ",\n  ", fp);
	j->first_event = 0;
	regen_where(st->s, ev->where, &cpu, &stamp);
	switch (ev->type) {
	case REGEN_EV_ENTER:	/* inherited at a fork (json_common has the others) */
		fprintf(fp, "{\"ev\": \"enter\", \"func\": %u, \"depth\": %u, \"cpu\": %u, "
			"\"stamp\": %" PRIu64 ", \"inherited_from\": ", ev->func, ev->depth, cpu, stamp);
		out_json_str(fp, pr_owner_name(mk->value, own, sizeof(own)));
		fputc('}', fp);
		break;
	case REGEN_EV_FORK:
		fprintf(fp, "{\"ev\": \"fork\", \"pos\": %" PRIu64 ", \"child\": ", ev->pos);
		out_json_str(fp, pr_owner_name(mk ? mk->value : 0, own, sizeof(own)));
		fprintf(fp, ", \"inherited\": %u, \"known\": %s}", ev->nframes,
			ev->reason ? "false" : "true");
		break;
	case REGEN_EV_EXEC:
		fprintf(fp, "{\"ev\": \"exec\", \"pos\": %" PRIu64 ", \"replaced\": %u, \"known\": %s",
			ev->pos, ev->nframes, ev->reason ? "false" : "true");
		if (mk && mk->value != st->s->owner) {
			fputs(", \"by\": ", fp);
			out_json_str(fp, pr_owner_name(mk->value, own, sizeof(own)));
		}
		fputc('}', fp);
		break;
	case REGEN_EV_REPLACED:
		fprintf(fp, "{\"ev\": \"replaced\", \"func\": %u, \"by\": \"execve\"}", ev->func);
		break;
	case REGEN_EV_BLOCK:
		fprintf(fp, "{\"ev\": \"block\", \"func\": %u, \"block\": %u}", ev->func, ev->block);
		break;
	case REGEN_EV_EXIT:
		fprintf(fp, "{\"ev\": \"exit\", \"func\": %u}", ev->func);
		break;
	case REGEN_EV_GAP:
		fprintf(fp, "{\"ev\": \"gap\", \"pos\": %" PRIu64 ", \"reason\": ", ev->pos);
		out_json_str(fp, pt_strerror(ev->reason));
		if (mk && regen_marker_is_loss(mk))
			fprintf(fp, ", \"loss\": %u, \"count\": %" PRIu64 ", \"cpu\": %u", mk->arg,
				mk->value, cpu);
		fputc('}', fp);
		break;
	case REGEN_EV_RESYNC:
		fprintf(fp, "{\"ev\": \"resync\", \"pos\": %" PRIu64 "}", ev->pos);
		break;
	case REGEN_EV_TRUNCATED:
		fprintf(fp, "{\"ev\": \"truncated\", \"pos\": %" PRIu64 "}", ev->pos);
		break;
	default:
		fprintf(fp, "{\"ev\": \"unknown\", \"type\": %u}", ev->type);
		break;
	}
	return ferror(fp) ? -PT_EIO : 0;
}

static int json_stream_end(struct out_writer *w, const struct out_stream *st)
{
	(void)st;
	fputs("]}", w->fp);
	return 0;
}

static int json_close(struct out_writer *w)
{
	if (w->priv)
		fputs("]}\n", w->fp);
	free(w->priv);
	w->priv = NULL;
	return fflush(w->fp) ? -PT_EIO : 0;
}

const struct out_writer_ops out_json_ops = {
	.name = "json",
	.open = json_open,
	.stream_begin = json_stream_begin,
	.step = json_step,
	.stream_end = json_stream_end,
	.close = json_close,
};
