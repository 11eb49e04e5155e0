// SPDX-License-Identifier: GPL-2.0
/*
 * out_walk - runs the engine over one stream and hands every writer each
 * event together with the CFG edge that led to it (out.h).
 *
 * The engine reports each block with the edge that led to it; for events
 * from elsewhere (no edge) the edge between two consecutive blocks of one
 * activation is looked up in the CFG, flagged when parallel edges make
 * it ambiguous. The walk keeps its own call stack because callees' events
 * come between two blocks of their caller.
 */
#include <stdlib.h>

#include <pathtrace/error.h>

#include "out.h"

struct walk_frame {
	const struct pr_func *f;
	uint32_t last;			/* last block executed, or UINT32_MAX */
};

struct walk {
	const struct pr_model *m;
	const struct out_stream *st;
	struct out_writer *const *ws;
	unsigned int n;
	struct walk_frame *stack;
	uint32_t depth, cap;
	int err;
};

/* The edge src->dst of f (dst == nblocks: EXIT); *ambiguous when several. */
static uint32_t find_edge(const struct pr_func *f, uint32_t src, uint32_t dst, int *ambiguous)
{
	const struct cfg_block *b;
	uint32_t i, found = UINT32_MAX;

	*ambiguous = 0;
	if (src >= f->cfg.nblocks)
		return UINT32_MAX;
	b = &f->cfg.blocks[src];
	for (i = 0; i < b->nsucc; i++) {
		if (f->cfg.edges[b->first_succ + i].dst != dst)
			continue;
		if (found == UINT32_MAX)
			found = b->first_succ + i;
		else
			*ambiguous = 1;
	}
	return found;
}

static int push(struct walk *w, const struct pr_func *f)
{
	if (w->depth == w->cap) {
		uint32_t cap = w->cap ? w->cap * 2 : 64;
		struct walk_frame *s = realloc(w->stack, cap * sizeof(*s));

		if (!s)
			return -PT_ENOMEM;
		w->stack = s;
		w->cap = cap;
	}
	w->stack[w->depth].f = f;
	w->stack[w->depth].last = UINT32_MAX;
	w->depth++;
	return 0;
}

static int on_event(void *ctx, const struct regen_event *ev)
{
	struct walk *w = ctx;
	struct out_step sp = { .ev = ev, .edge = UINT32_MAX, .prev_block = UINT32_MAX };
	struct walk_frame *top;
	unsigned int i;
	int err;

	switch (ev->type) {
	case REGEN_EV_ENTER:
		sp.f = pr_model_func(w->m, ev->func);
		err = push(w, sp.f);
		if (err)
			return w->err = err;
		/* inherited at a fork: it goes on from its parent's block */
		if (ev->marker && ev->marker->type == REGEN_M_FORKED)
			w->stack[w->depth - 1].last = ev->block;
		break;
	case REGEN_EV_BLOCK:
		top = w->depth ? &w->stack[w->depth - 1] : NULL;
		if (top && top->f && top->f->func_id == ev->func) {
			sp.f = top->f;
			sp.prev_block = top->last;
			if (ev->edge < sp.f->cfg.nedges && sp.f->cfg.edges[ev->edge].src == top->last &&
			    sp.f->cfg.edges[ev->edge].dst == ev->block)
				sp.edge = ev->edge;	/* the engine knows it exactly */
			else if (top->last != UINT32_MAX)
				sp.edge = find_edge(sp.f, top->last, ev->block, &sp.edge_ambiguous);
			top->last = ev->block;
		} else {
			sp.f = pr_model_func(w->m, ev->func);
		}
		break;
	case REGEN_EV_EXIT:
		top = w->depth ? &w->stack[w->depth - 1] : NULL;
		if (top) {
			sp.f = top->f;
			sp.prev_block = top->last;
			if (sp.f && top->last < sp.f->cfg.nblocks)
				sp.edge = sp.f->exit_edge[top->last];
			w->depth--;
		} else {
			sp.f = pr_model_func(w->m, ev->func);
		}
		break;
	case REGEN_EV_REPLACED:	/* ended by an execve: no return, no exit edge */
		top = w->depth ? &w->stack[w->depth - 1] : NULL;
		if (top) {
			sp.f = top->f;
			sp.prev_block = top->last;
			w->depth--;
		} else {
			sp.f = pr_model_func(w->m, ev->func);
		}
		break;
	case REGEN_EV_FORK:	/* the walk goes on in the parent */
	case REGEN_EV_EXEC:	/* ... in the task, under the execve's kernel activations */
		sp.f = ev->func != UINT32_MAX ? pr_model_func(w->m, ev->func) : NULL;
		break;
	default:	/* GAP, RESYNC, TRUNCATED: what was open is gone */
		sp.f = ev->func != UINT32_MAX ? pr_model_func(w->m, ev->func) : NULL;
		w->depth = 0;
		break;
	}
	for (i = 0; i < w->n; i++) {
		if (!w->ws[i]->ops->step)
			continue;
		err = w->ws[i]->ops->step(w->ws[i], w->st, &sp);
		if (err)
			return w->err = err;
	}
	return 0;
}

/* Every writer's stream_begin, in order. Returns the first error. */
static int begin_stream(const struct walk *w)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < w->n && !err; i++)
		if (w->ws[i]->ops->stream_begin)
			err = w->ws[i]->ops->stream_begin(w->ws[i], w->st);
	return err;
}

/* Every writer's stream_end, even after an error. Returns err, else the first error. */
static int end_stream(struct walk *w, int err)
{
	unsigned int i;
	int ret;

	for (i = 0; i < w->n; i++) {
		if (w->ws[i]->ops->stream_end) {
			ret = w->ws[i]->ops->stream_end(w->ws[i], w->st);
			if (!err)
				err = ret;
		}
	}
	free(w->stack);
	return err;
}

int out_walk_stream_fs(const struct pr_model *m, const struct regen_funcs *fs,
		       const struct out_stream *st, struct out_writer *const *ws, unsigned int n)
{
	struct walk w = { .m = m, .st = st, .ws = ws, .n = n };
	int err, ret;

	err = begin_stream(&w);
	if (!err) {
		ret = regen_stream(fs, st->s, on_event, &w);
		err = w.err ? w.err : (ret < 0 ? ret : 0);
	}
	return end_stream(&w, err);
}

int out_walk_stream(const struct pr_model *m, const struct out_stream *st,
		    struct out_writer *const *ws, unsigned int n)
{
	return out_walk_stream_fs(m, &m->fs, st, ws, n);
}

int out_walk_events(const struct pr_model *m, const struct out_stream *st,
		    const struct regen_event *ev, uint64_t n, struct out_writer *const *ws,
		    unsigned int nws)
{
	struct walk w = { .m = m, .st = st, .ws = ws, .n = nws };
	uint64_t k;
	int err;

	err = begin_stream(&w);
	for (k = 0; k < n && !err; k++)
		err = on_event(&w, &ev[k]);
	return end_stream(&w, err);
}

int out_open_all(struct out_writer *const *ws, unsigned int n)
{
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		if (!ws[i]->ops->open)
			continue;
		err = ws[i]->ops->open(ws[i]);
		if (err) {
			out_close_all(ws, i);
			return err;
		}
	}
	return 0;
}

int out_close_all(struct out_writer *const *ws, unsigned int n)
{
	unsigned int i;
	int err = 0, ret;

	for (i = 0; i < n; i++) {
		if (!ws[i]->ops->close)
			continue;
		ret = ws[i]->ops->close(ws[i]);
		if (!err)
			err = ret;
	}
	return err;
}
