// SPDX-License-Identifier: GPL-2.0
/*
 * The regeneration engine (regen.h): walks one owner's stream with a call
 * stack of traced activations, asks each function's decoder for the edges,
 * and applies docs/runtime.md's rules:
 *  - at a call vertex standing at bit position p, descend into every ENTER
 *    marker at p, in order (one only, with the right return address, when
 *    the call is direct to a traced callee; none that returns after another
 *    direct call of this function: that one is the later call's; none that
 *    names another traced frame; in a framed function only those that name
 *    this call); after a callee left through a tail call, the ENTERs its
 *    jump leads to, at the same position (regen.h, "Tail calls");
 *  - a LOSS marker, an ENTER left behind, an impossible code or a wrong
 *    return address is a GAP: the stack is dropped and the engine resyncs
 *    at the next ENTER;
 *  - bits nobody can own (before the first ENTER, between activations) are
 *    a GAP with -PT_ENOENT: they belong to an activation whose ENTER is not
 *    in the stream (e.g. tracing started inside it, or a loss took it);
 *    so is an outermost activation's return into a traced function's call
 *    site when another activation follows: that caller ran on unseen;
 *  - running out of bits inside an activation is TRUNCATED, never EXIT;
 *  - a fork (REGEN_M_FORK) reports the user activations open at it, the
 *    innermost at the call vertex whose call forked (REGEN_EV_FORK); a
 *    child's stream (REGEN_M_FORKED) starts inside them (regen.h struct
 *    regen_fork; docs/user.md, "Fork, exec and signals");
 *  - an execve (REGEN_M_EXEC) ends the old image's user activations
 *    (REGEN_EV_REPLACED each, no EXIT): at once when the innermost user
 *    activation stands at its call vertex there, else once the kernel
 *    activations open there (the execve's own) returned into them; the
 *    new image's activations then start at top level;
 *  - at the end of the stream nothing is guessed: once every bit and
 *    ENTER marker is consumed and the decoder holds no evidence read ahead
 *    (regen_decoder_ops.pending), the engine stops where it stands with
 *    TRUNCATED (regen.h says which blocks that reports).
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "bitreader.h"

struct frame {
	const struct regen_func *f;
	uint32_t v;		/* current vertex */
	uint32_t entered;	/* ENTERs consumed at the current call vertex */
	uint32_t last_edge;	/* the edge that led to v, GRAPH_NONE at entry */
	/*
	 * At a call vertex, set when a callee's activation returned: the
	 * traced function its tail call jumped to (its ENTER comes next), or
	 * REGEN_TAIL_NONE.
	 */
	uint32_t tail;
	uint64_t tail_ret;	/* the return address (or frame) its ENTER must carry */
	uint32_t tail_kind;	/* ... and its enum regen_enter_kind */
	uint64_t ret;		/* its ENTER's value: return address or frame (kind) */
	uint32_t kind;		/* its ENTER's enum regen_enter_kind */
	const struct regen_marker *enter;	/* its ENTER */
	int open;		/* a callee tail-called untraced code: any ENTER at v's position is v's */
	uint64_t state[REGEN_STATE_WORDS];
};

/*
 * The engine's tables of a set of functions (regen_index_build): built
 * once, read by every walk over them.
 */
struct regen_index {
	const struct regen_func **index;	/* sorted by func_id */
	const struct regen_func **byid;		/* indexed by func_id (ids up to maxid), or NULL */
	uint32_t maxid;
	uint64_t *rets;		/* every traced call site's return address, sorted */
	size_t nrets;
	struct regen_call_slot *calls;	/* br_call_vertex's hash: calls_mask + 1 slots */
	uint64_t calls_mask;
};

struct engine {
	const struct regen_funcs *fs;
	const struct regen_stream *s;
	regen_event_fn fn;
	void *ctx;
	struct regen_bitreader br;
	uint32_t mi;		/* next marker not yet consumed (mi_set) */
	uint64_t mi_pos;	/* its position, UINT64_MAX when none is left */
	uint64_t mi_lim;	/* the lesser of mi_pos and the stream's bits */
	struct frame *stack;
	uint32_t depth, cap;
	int gapped;		/* after a GAP, until the next ENTER */
	/*
	 * The outermost activation returned into a traced caller that is not
	 * on the stack (its ENTER, else NULL): whatever follows is not
	 * contiguous with it.
	 */
	const struct regen_marker *orphaned;
	const struct regen_index *ix;	/* fs->index, or own */
	struct regen_index *own;	/* built for this walk when fs has none */
	int64_t partial;
	struct regen_marker implicit;	/* the ENTER an implicit entry stands for */
	uint32_t implicit_where;	/* the marker before it (regen_event.where) */
	struct regen_inherited *snap;	/* a fork's user activations (REGEN_EV_FORK) */
	uint32_t snapcap;
	/*
	 * An execve under kernel activations: the user activations at the
	 * stack's bottom it replaced (0: none), ended when the walk returns
	 * to them, and its marker.
	 */
	uint32_t replaced;
	const struct regen_marker *exec_m;
	/*
	 * The BLOCK event, its fields that never change set once, its
	 * function and depth the innermost activation's (blocks_of): a
	 * block's event fills in only what differs (emit_block).
	 */
	struct regen_event blk;
	/*
	 * The ENTER and EXIT events of activations (emit_activation): the
	 * fields they leave empty set once.
	 */
	struct regen_event act;
	struct regen_walk walk;		/* the decoder's walk: to fn, its blocks in blk */
};

const struct regen_func *regen_find(const struct regen_funcs *fs, uint32_t func_id)
{
	uint32_t i;

	for (i = 0; i < fs->nfuncs; i++)
		if (fs->funcs[i].func_id == func_id)
			return &fs->funcs[i];
	return NULL;
}


static int by_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int by_id(const void *a, const void *b)
{
	uint32_t x = (*(const struct regen_func *const *)a)->func_id;
	uint32_t y = (*(const struct regen_func *const *)b)->func_id;

	return x < y ? -1 : x > y;
}

/* The next marker not yet consumed is s->markers[mi] (mi up to nmarkers). */
static inline void mi_set(struct engine *en, uint32_t mi)
{
	en->mi = mi;
	en->mi_pos = mi < en->s->nmarkers ? en->s->markers[mi].pos : UINT64_MAX;
	en->mi_lim = en->mi_pos < en->s->nbits ? en->mi_pos : en->s->nbits;
}

static inline const struct regen_func *lookup(const struct engine *en, uint32_t func_id)
{
	const struct regen_index *ix = en->ix;
	uint32_t lo = 0, hi = en->fs->nfuncs;

	if (ix->byid)
		return func_id <= ix->maxid ? ix->byid[func_id] : NULL;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ix->index[mid]->func_id == func_id)
			return ix->index[mid];
		if (ix->index[mid]->func_id < func_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* An event's where (regen_event.where) for its marker m (NULL: none). */
static inline uint32_t where_of(const struct engine *en, const struct regen_marker *m)
{
	if (!m)
		return REGEN_WHERE_NONE;
	if (m == &en->implicit)
		return en->implicit_where;
	return (uint32_t)(m - en->s->markers);
}

static int emit(struct engine *en, uint32_t type, const struct regen_func *f, uint32_t block,
		uint32_t edge, uint32_t depth, int reason, const struct regen_marker *m)
{
	struct regen_event ev = {
		.type = type,
		.func = f ? f->func_id : UINT32_MAX,
		.block = block,
		.depth = depth,
		.pos = en->br.pos,
		.reason = reason,
		.marker = m,
		.where = where_of(en, m),
		.edge = edge,
	};

	return en->fn(en->ctx, &ev);
}

/* The block events that follow are of f's activation, at the top of the stack. */
static inline void blocks_of(struct engine *en, const struct regen_func *f)
{
	en->blk.func = f->func_id;
	en->blk.depth = en->depth - 1;
}

/* REGEN_EV_BLOCK: block v, entered by edge (GRAPH_NONE: the entry), of blocks_of's activation. */
static inline int emit_block(struct engine *en, uint32_t v, uint32_t edge)
{
	en->blk.block = v;
	en->blk.pos = en->br.pos;
	en->blk.edge = edge;
	return en->fn(en->ctx, &en->blk);
}

/* REGEN_EV_ENTER (m, its marker) or REGEN_EV_EXIT (m NULL) of the innermost activation, of f. */
static inline int emit_activation(struct engine *en, uint32_t type, const struct regen_func *f,
				  const struct regen_marker *m)
{
	en->act.type = type;
	en->act.func = f->func_id;
	en->act.depth = en->depth - 1;
	en->act.pos = en->br.pos;
	en->act.marker = m;
	en->act.where = where_of(en, m);
	return en->fn(en->ctx, &en->act);
}

/* Drops every activation; the engine resyncs at the next ENTER. */
static int gap(struct engine *en, int reason, const struct regen_marker *m)
{
	const struct regen_func *f = en->depth ? en->stack[en->depth - 1].f : NULL;
	int rc = emit(en, REGEN_EV_GAP, f, 0, GRAPH_NONE, en->depth ? en->depth - 1 : 0,
		      reason, m);

	en->depth = 0;
	en->gapped = 1;
	en->orphaned = NULL;
	en->partial = 0;
	en->replaced = 0;
	return rc;
}

/* A new frame on top of the stack, or NULL (no memory). */
static inline struct frame *push_frame(struct engine *en)
{
	if (en->depth == en->cap) {
		uint32_t ncap = en->cap ? en->cap * 2 : 16;
		struct frame *ns = realloc(en->stack, ncap * sizeof(*ns));

		if (!ns)
			return NULL;
		en->stack = ns;
		en->cap = ncap;
	}
	return &en->stack[en->depth++];
}

/* Starts an activation of m's function (ENTER event and its entry block). */
static int enter(struct engine *en, const struct regen_marker *m)
{
	const struct regen_func *f = lookup(en, m->func);
	struct frame *fr;
	int rc;

	if (!f)
		return gap(en, -PT_ENOENT, m);
	fr = push_frame(en);
	if (!fr)
		return -PT_ENOMEM;
	fr->f = f;
	fr->v = f->g->entry;
	fr->entered = 0;
	fr->last_edge = GRAPH_NONE;
	fr->tail = REGEN_TAIL_NONE;
	fr->tail_ret = 0;
	fr->tail_kind = REGEN_ENTER_RET;
	fr->ret = m->value;
	fr->kind = m->arg;
	fr->enter = m;
	fr->open = 0;
	memset(fr->state, 0, sizeof(fr->state));
	/* as the module's ENTER action, implicit entries too */
	br_ctx_set(&en->br, f->func_id, REGEN_CTX_ENTRY, m->pos);
	regen_ctx_save(f, &en->br);
	if (f->ops->begin)
		f->ops->begin(f, fr->state);
	rc = emit_activation(en, REGEN_EV_ENTER, f, m);
	blocks_of(en, f);
	if (!rc && fr->v != f->g->exit)
		rc = emit_block(en, fr->v, GRAPH_NONE);
	return rc;
}

/*
 * An implicit entry (regen.h call_implicit): the callee's activation starts
 * here though no ENTER record says so. Any marker at this position stays
 * for the callee (its own callees' ENTERs come after its entry).
 */
static int enter_implicit(struct engine *en, struct frame *fr, uint32_t callee)
{
	memset(&en->implicit, 0, sizeof(en->implicit));
	en->implicit.pos = en->br.pos;
	en->implicit.type = REGEN_M_ENTER;
	en->implicit.func = callee;
	en->implicit.value = fr->f->call_ret_addr ? fr->f->call_ret_addr[fr->v] : 0;
	/* recorded where the marker before it was */
	en->implicit_where = en->mi ? en->mi - 1 : REGEN_WHERE_NONE;
	fr->entered++;
	return enter(en, &en->implicit);
}

/*
 * The user activations at the bottom of the stack, below any kernel one
 * (kernel code calls no user function): none once an execve replaced them.
 */
static uint32_t user_frames(const struct engine *en)
{
	uint32_t n = 0;

	while (!en->replaced && n < en->depth && en->stack[n].f->user)
		n++;
	return n;
}

/*
 * REGEN_EV_FORK for fork marker m: the user activations open (the stack's
 * user frames from the outermost; the innermost stands at the call vertex
 * whose call forked, its before_call done), or with known 0 none the walk
 * can name.
 */
static int forked(struct engine *en, const struct regen_marker *m, int known)
{
	struct regen_event ev = {
		.type = REGEN_EV_FORK, .func = UINT32_MAX, .pos = en->br.pos, .marker = m,
		.where = where_of(en, m), .edge = GRAPH_NONE,
	};
	uint32_t n = known ? user_frames(en) : 0, i;

	if (n && !(en->stack[n - 1].f->g->vflags[en->stack[n - 1].v] & GRAPH_V_CALL))
		known = 0;
	if (!known)
		n = 0;
	if (n > en->snapcap) {
		struct regen_inherited *ns = realloc(en->snap, n * sizeof(*ns));

		if (!ns)
			return -PT_ENOMEM;
		en->snap = ns;
		en->snapcap = n;
	}
	for (i = 0; i < n; i++) {
		const struct frame *fr = &en->stack[i];
		struct regen_inherited *h = &en->snap[i];

		memset(h, 0, sizeof(*h));
		h->func = fr->f->func_id;
		h->v = fr->v;
		h->last_edge = fr->last_edge;
		h->entered = fr->entered;
		h->tail = fr->tail;
		h->tail_kind = fr->tail_kind;
		h->tail_ret = fr->tail_ret;
		h->ret = fr->ret;
		h->kind = fr->kind;
		h->open = fr->open;
		memcpy(h->state, fr->state, sizeof(h->state));
	}
	/* the innermost's before_call has run: the child must not read it again */
	if (n && !en->snap[n - 1].entered)
		en->snap[n - 1].entered = 1;
	ev.reason = known ? 0 : -PT_ENOENT;
	ev.frames = en->snap;
	ev.nframes = n;
	if (n) {
		ev.func = en->snap[n - 1].func;
		ev.depth = n - 1;
	}
	return en->fn(en->ctx, &ev);
}

/*
 * A child's stream starts at m (REGEN_M_FORKED) inside the user activations
 * its parent had open at the fork, when the parent's walk named them: each
 * an ENTER event (marker m) and a frame where the parent's stood. Returns
 * the callback's value or -PT_ENOMEM.
 */
static int inherit(struct engine *en, const struct regen_marker *m)
{
	const struct regen_fork *fk = m->arg < en->s->nforks ? &en->s->forks[m->arg] : NULL;
	uint32_t i;
	int rc;

	if (!fk || !fk->known || !fk->nframes)
		return 0;
	for (i = 0; i < fk->nframes; i++)
		if (!lookup(en, fk->frames[i].func))
			return 0;
	if (en->gapped) {
		en->gapped = 0;
		rc = emit(en, REGEN_EV_RESYNC, lookup(en, fk->frames[0].func), 0, GRAPH_NONE, 0, 0, m);
		if (rc)
			return rc;
	}
	en->orphaned = NULL;
	en->partial = 0;
	for (i = 0; i < fk->nframes; i++) {
		const struct regen_inherited *h = &fk->frames[i];
		struct frame *fr = push_frame(en);

		if (!fr)
			return -PT_ENOMEM;
		fr->f = lookup(en, h->func);
		fr->v = h->v;
		fr->entered = h->entered;
		fr->last_edge = h->last_edge;
		fr->tail = h->tail;
		fr->tail_ret = h->tail_ret;
		fr->tail_kind = h->tail_kind;
		fr->ret = h->ret;
		fr->kind = h->kind;
		fr->enter = m;
		fr->open = h->open;
		memcpy(fr->state, h->state, sizeof(fr->state));
		rc = emit(en, REGEN_EV_ENTER, fr->f, h->v, GRAPH_NONE, en->depth - 1, 0, m);
		if (rc)
			return rc;
	}
	return 0;
}

/* At a call vertex, after its before_call: the forks made by its call. */
static int fork_at_call(struct engine *en)
{
	const struct regen_stream *s = en->s;
	int rc;

	while (en->mi_pos == en->br.pos && s->markers[en->mi].type == REGEN_M_FORK) {
		mi_set(en, en->mi + 1);
		rc = forked(en, &s->markers[en->mi - 1], 1);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * The old image's user activations end (REGEN_EV_REPLACED each, innermost
 * first): the walk is back in them after an execve, and they are all the
 * stack holds.
 */
static int replace_image(struct engine *en)
{
	int rc = 0;

	while (!rc && en->depth) {
		const struct frame *fr = &en->stack[en->depth - 1];

		rc = emit(en, REGEN_EV_REPLACED, fr->f, fr->v, GRAPH_NONE, en->depth - 1, 0,
			  en->exec_m);
		en->depth--;
	}
	en->depth = 0;
	en->replaced = 0;
	en->orphaned = NULL;
	return rc;
}

/*
 * REGEN_EV_EXEC for the task's execve at marker m (known 0: after a gap,
 * nothing open is known). The user activations open end: now when the
 * innermost is one of them (at its call vertex), else when the kernel
 * activations above them return (step).
 */
static int exec_point(struct engine *en, const struct regen_marker *m, int known)
{
	uint32_t n = known ? user_frames(en) : 0;
	struct regen_event ev = {
		.type = REGEN_EV_EXEC, .func = UINT32_MAX, .pos = en->br.pos, .marker = m,
		.where = where_of(en, m), .edge = GRAPH_NONE, .reason = known ? 0 : -PT_ENOENT,
		.nframes = n,
	};
	int rc;

	if (n) {
		ev.func = en->stack[n - 1].f->func_id;
		ev.depth = n - 1;
	}
	rc = en->fn(en->ctx, &ev);
	if (rc || !n)
		return rc;
	en->exec_m = m;
	en->replaced = n;
	return n == en->depth ? replace_image(en) : 0;
}

/*
 * An EXEC whose old owner is not the stream's: a thread other than the
 * group leader exec'd and took this pid, so what this stream had open was
 * the leader's, which the exec ended (TRUNCATED, as a task that exits);
 * the thread's own activations are in its old owner's stream.
 */
static int exec_other_task(struct engine *en, const struct regen_marker *m)
{
	int rc = 0;

	if (en->depth)
		rc = emit(en, REGEN_EV_TRUNCATED, en->stack[en->depth - 1].f,
			  en->stack[en->depth - 1].v, GRAPH_NONE, en->depth - 1, -PT_ETRUNC, NULL);
	en->depth = 0;
	en->replaced = 0;
	return rc ? rc : exec_point(en, m, !en->gapped);
}

/* At the innermost user activation's call vertex: an execve its call made. */
static int exec_at_call(struct engine *en)
{
	const struct regen_stream *s = en->s;
	const struct regen_marker *m;

	if (en->mi_pos != en->br.pos)
		return 0;
	m = &s->markers[en->mi];
	if (m->type != REGEN_M_EXEC || m->value != s->owner || !en->stack[en->depth - 1].f->user)
		return 0;
	mi_set(en, en->mi + 1);
	return exec_point(en, m, 1);
}

/* Outside any activation: find the next ENTER (resyncing after a gap). */
static int top_level(struct engine *en, int *done)
{
	const struct regen_stream *s = en->s;
	int rc;

	while (en->mi < s->nmarkers) {
		const struct regen_marker *m = &s->markers[en->mi];

		if (m->type == REGEN_M_LOSS) {
			mi_set(en, en->mi + 1);
			if (!en->gapped && (rc = gap(en, -PT_EKERNEL, m)))
				return rc;
			continue;
		}
		if (m->type == REGEN_M_HIDDEN) {
			mi_set(en, en->mi + 1);	/* between executions: nothing open to cut */
			continue;
		}
		if (m->type == REGEN_M_FORK) {
			/* nothing open: the child inherits nothing (after a gap: unknown) */
			mi_set(en, en->mi + 1);
			rc = forked(en, m, !en->gapped);
			if (rc)
				return rc;
			continue;
		}
		if (m->type == REGEN_M_EXEC) {
			/* nothing open: no user activation ends (after a gap: unknown) */
			mi_set(en, en->mi + 1);
			rc = m->value != s->owner ? exec_other_task(en, m) :
			     exec_point(en, m, !en->gapped);
			if (rc)
				return rc;
			continue;
		}
		if (m->type == REGEN_M_FORKED && m->pos >= en->br.pos) {
			if ((m->pos > en->br.pos || en->orphaned) && !en->gapped) {
				rc = gap(en, -PT_ENOENT, en->orphaned);
				if (rc)
					return rc;
			}
			en->br.pos = m->pos;
			mi_set(en, en->mi + 1);
			rc = inherit(en, m);
			if (rc || en->depth)
				return rc;
			continue;
		}
		if (m->type != REGEN_M_ENTER || m->pos < en->br.pos) {
			mi_set(en, en->mi + 1);	/* BLOCK, PARTIAL outside, or left behind */
			continue;
		}
		if ((m->pos > en->br.pos || en->orphaned) && !en->gapped) {
			rc = gap(en, -PT_ENOENT, en->orphaned);
			if (rc)
				return rc;
		}
		/*
		 * Adapting words: the bits skipped since the gap moved the
		 * module's last codes; they are known again where forgotten.
		 */
		if (en->gapped && en->fs->ctx_swap &&
		    br_reset_limit(&en->br, m->pos) != m->pos) {
			mi_set(en, en->mi + 1);
			continue;
		}
		en->br.pos = m->pos;
		mi_set(en, en->mi + 1);
		if (en->gapped) {
			en->gapped = 0;
			rc = emit(en, REGEN_EV_RESYNC, lookup(en, m->func), 0, GRAPH_NONE, 0, 0, m);
			if (rc)
				return rc;
		}
		return enter(en, m);
	}
	if (en->br.pos < s->nbits && !en->gapped) {
		rc = gap(en, -PT_ENOENT, en->orphaned);
		if (rc)
			return rc;
	}
	*done = 1;
	return 0;
}

/*
 * Consumes the markers at or before the current position that do not wait
 * for a call vertex. Returns 1 when a GAP was taken (rc in *rc), else 0.
 * An ENTER at the current position waits: it belongs to this activation's
 * next call vertex (reached without emitting) or to a callee of it.
 */
static int scan_markers(struct engine *en, int *rc)
{
	const struct regen_stream *s = en->s;

	while (en->mi_pos <= en->br.pos) {
		const struct regen_marker *m = &s->markers[en->mi];

		switch (m->type) {
		case REGEN_M_PARTIAL:
			en->partial += (int64_t)m->value;
			mi_set(en, en->mi + 1);
			break;
		case REGEN_M_LOSS:
			mi_set(en, en->mi + 1);
			*rc = gap(en, -PT_EKERNEL, m);
			return 1;
		case REGEN_M_HIDDEN:
			/*
			 * The open activations must end here without another
			 * bit: wait, and crossed() gaps them if they read on.
			 */
			if (m->pos == en->br.pos)
				return 0;
			mi_set(en, en->mi + 1);
			*rc = gap(en, -PT_EKERNEL, m);
			return 1;
		case REGEN_M_ENTER:
			if (m->pos == en->br.pos)
				return 0;	/* for this or a later call vertex */
			mi_set(en, en->mi + 1);
			*rc = gap(en, -PT_EFORMAT, m);
			return 1;
		case REGEN_M_FORK:
			/*
			 * Made by a call of the innermost user activation: it
			 * waits for its call vertex (fork_at_call). Under a
			 * kernel activation the user ones stand still.
			 */
			if (en->stack[en->depth - 1].f->user && m->pos == en->br.pos)
				return 0;
			mi_set(en, en->mi + 1);
			*rc = forked(en, m, !en->stack[en->depth - 1].f->user);
			if (*rc)
				return 1;
			break;
		case REGEN_M_EXEC:
			/* the old image's innermost activation: its call vertex ends it */
			if (m->value == s->owner && en->stack[en->depth - 1].f->user &&
			    m->pos == en->br.pos)
				return 0;	/* exec_at_call */
			mi_set(en, en->mi + 1);
			if (m->value != s->owner) {
				*rc = exec_other_task(en, m);
				return 1;
			}
			if (en->stack[en->depth - 1].f->user) {
				/* not bits it read past its execve: the new image's */
				*rc = gap(en, -PT_EFORMAT, m);
				return 1;
			}
			/* under the execve's kernel activations: they go on */
			*rc = exec_point(en, m, 1);
			if (*rc)
				return 1;
			break;
		case REGEN_M_FORKED:
			/*
			 * Another task with this pid: the earlier one ended
			 * inside activations (it exited); top_level starts the
			 * child.
			 */
			*rc = emit(en, REGEN_EV_TRUNCATED, en->stack[en->depth - 1].f,
				   en->stack[en->depth - 1].v, GRAPH_NONE, en->depth - 1, -PT_ETRUNC,
				   NULL);
			en->depth = 0;
			return 1;
		default:
			mi_set(en, en->mi + 1);	/* BLOCK: the verifier's business */
			break;
		}
	}
	return 0;
}

/* scan_markers, when a marker lies at or before the position. */
static inline int scan(struct engine *en, int *rc)
{
	const struct regen_marker *m;

	if (en->mi_pos > en->br.pos)
		return 0;
	m = &en->s->markers[en->mi];
	/* the common case at a call vertex: an ENTER at the position, which waits */
	if (m->type == REGEN_M_ENTER && m->pos == en->br.pos)
		return 0;
	return scan_markers(en, rc);
}

/*
 * Whether ENTER m at call vertex v (its callee untraced, indirect, or
 * tail-called away) is v's callee: 1, 0 (a later call's, or after this
 * activation), or -1 (a gap: nothing tells).
 *  - A framed function (regen_func.framed): m names its call: its return
 *    address (a traced caller) or its frame (the innermost traced one)
 *    is v's; none (an untraced caller's, value 0: no traced frame below
 *    it, as ENTERs are walked while a framed plan is installed) is not;
 *    one the module could not walk cannot be placed.
 *  - Otherwise every ENTER at v's position is v's (the blocking rule),
 *    except that untraced or indirect code cannot return into this
 *    function after another of its direct calls (that one is the later
 *    call vertex's: an entry witness, encoding.h). V's own return address
 *    is V's (its callee tail-called untraced code, which jumped back to
 *    V's callee). A frame contradicts the rule when it is another call's
 *    (this activation is on the stack): a missed entry, a gap.
 */
static int frame_match(const struct engine *en, const struct regen_func *f, uint32_t v,
		       const struct regen_marker *m)
{
	uint64_t ret = f->call_ret_addr ? f->call_ret_addr[v] : 0;
	uint32_t w;

	if (f->framed) {
		if (m->arg == REGEN_ENTER_FRAME_UNKNOWN || !ret)
			return -1;
		return m->value == ret;
	}
	if (m->arg == REGEN_ENTER_NESTED)
		return m->value == ret ? 1 : -1;
	if (m->arg != REGEN_ENTER_RET)
		return 1;
	w = br_call_vertex(&en->br, f, m->func, m->value);
	return w == GRAPH_NONE || w == v;
}

/* At call vertex fr->v: the next ENTER to descend into, or NULL. */
static inline const struct regen_marker *next_enter(struct engine *en)
{
	const struct regen_stream *s = en->s;
	uint32_t i;

	if (en->mi_pos != en->br.pos)
		return NULL;
	if (s->markers[en->mi].type == REGEN_M_ENTER)
		return &s->markers[en->mi];

	for (i = en->mi; i < s->nmarkers && s->markers[i].pos == en->br.pos; i++) {
		if (s->markers[i].type == REGEN_M_ENTER)
			return &s->markers[i];
		if (s->markers[i].type != REGEN_M_BLOCK && s->markers[i].type != REGEN_M_FORK)
			return NULL;
	}
	return NULL;
}

/*
 * Nothing left that proves the activation went on: no bit, no ENTER
 * marker (a LOSS or PARTIAL at the end was consumed by scan), no evidence
 * the decoder read ahead.
 */
static int exhausted(const struct engine *en, const struct frame *fr)
{
	const struct regen_stream *s = en->s;
	uint32_t i;

	if (en->br.pos < s->nbits)
		return 0;
	for (i = en->mi; i < s->nmarkers; i++)
		if (s->markers[i].type == REGEN_M_ENTER || s->markers[i].type == REGEN_M_EXEC)
			return 0;
	return !(fr->f->ops->pending && fr->f->ops->pending(fr->f, fr->state));
}

/* The stream ends inside activations: TRUNCATED at the innermost one's vertex. */
static int truncated(struct engine *en, const struct frame *fr)
{
	int rc = emit(en, REGEN_EV_TRUNCATED, fr->f, fr->v, GRAPH_NONE, en->depth - 1, -PT_ETRUNC,
		      NULL);

	en->depth = 0;
	en->replaced = 0;
	en->br.pos = en->s->nbits;
	mi_set(en, en->s->nmarkers);
	return rc;
}

/*
 * Bits read across a LOSS, or past an ENTER (or, by a user activation,
 * past its execve), are not this activation's: returns 1 with the GAP's rc
 * in *rc, else 0.
 */
static inline int crossed(struct engine *en, int *rc)
{
	int user;
	uint32_t i;

	if (en->mi_pos >= en->br.pos)
		return 0;
	user = en->stack[en->depth - 1].f->user;

	for (i = en->mi; i < en->s->nmarkers && en->s->markers[i].pos < en->br.pos; i++) {
		const struct regen_marker *m = &en->s->markers[i];
		int format = m->type == REGEN_M_ENTER || m->type == REGEN_M_FORKED ||
			     (m->type == REGEN_M_EXEC && user);

		if (m->type == REGEN_M_LOSS || m->type == REGEN_M_HIDDEN || format) {
			mi_set(en, i + 1);
			*rc = gap(en, format ? -PT_EFORMAT : -PT_EKERNEL, m);
			return 1;
		}
	}
	return 0;
}

/* Bits remain, and the first marker not consumed is an ENTER at the position. */
static inline int enter_waits(const struct engine *en)
{
	const struct regen_stream *s = en->s;

	return en->br.pos < s->nbits && en->mi_pos == en->br.pos &&
	       s->markers[en->mi].type == REGEN_M_ENTER;
}

/* No marker waits at or before the position, and bits remain. */
static inline int quiet(const struct engine *en)
{
	return en->br.pos < en->mi_lim;
}

/* The innermost activation goes on by edges[0..n). Stops at EXIT. Returns the callback's value. */
static inline int take_edges(struct engine *en, struct frame *fr, const uint32_t *edges,
			     uint32_t n)
{
	const struct graph *g = fr->f->g;
	uint32_t i;
	int rc;

	for (i = 0; i < n; i++) {
		fr->v = g->edges[edges[i]].dst;
		fr->last_edge = edges[i];
		if (fr->v == g->exit)
			return 0;
		rc = emit_block(en, fr->v, edges[i]);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Where no marker waits at or before the position and bits remain
 * (br.enter NULL), the decoder's walk (regen_decoder_ops.walk) up to the
 * next marker or the end of the bits: 1 in *walked when it took an edge.
 * Else (an ENTER waits) its run. Returns the callback's value.
 */
static inline int take_run(struct engine *en, struct frame *fr, int *walked)
{
	const struct regen_decoder_ops *ops = fr->f->ops;
	const uint32_t *edges;
	uint32_t n;
	int rc;

	*walked = 0;
	if (!en->br.enter && ops->walk) {
		en->walk.v = fr->v;
		en->walk.last_edge = fr->last_edge;
		en->walk.limit = en->mi_lim;
		*walked = ops->walk(fr->f, fr->state, &en->br, &en->walk, &rc) != 0;
		/* entered, tail and open: left 0 at fr->v, which is no call vertex */
		fr->v = en->walk.v;
		fr->last_edge = en->walk.last_edge;
		return rc;
	}
	n = ops->run ? ops->run(fr->f, fr->state, fr->v, &edges) : 0;
	return take_edges(en, fr, edges, n);
}

static int step(struct engine *en)
{
	struct frame *fr = &en->stack[en->depth - 1];
	const struct regen_func *f = fr->f;
	const struct graph *g = f->g;
	const struct regen_marker *m;
	int64_t e;
	int rc = 0;

	/*
	 * Free edges (regen_func.free_edge): no marker waits at or before
	 * the position and bits remain, so scan, exhausted, next_enter and
	 * crossed have nothing to do, and the decoder would take the edge.
	 * At a call vertex: once its call is done (a callee returned with no
	 * tail call's ENTER due, or the callee is untraced and nothing is
	 * read before it), as the call vertex's step would find no ENTER.
	 */
	blocks_of(en, f);
	if (f->free_edge && quiet(en)) {
		uint32_t fe = f->free_edge[fr->v];

		if (fe != GRAPH_NONE && (fe & REGEN_FREE_CALL) && fr->tail == REGEN_TAIL_NONE &&
		    (fr->entered || (!f->ops->before_call &&
				     (!f->call_callee || f->call_callee[fr->v] == UINT32_MAX))))
			fe &= ~REGEN_FREE_CALL;
		for (; !(fe & REGEN_FREE_CALL); fe = f->free_edge[fr->v]) {
			fr->v = g->edges[fe].dst;
			fr->last_edge = fe;
			fr->entered = 0;
			fr->tail = REGEN_TAIL_NONE;
			fr->open = 0;
			if (fr->v == g->exit)
				return 0;
			rc = emit_block(en, fr->v, fe);
			if (rc)
				return rc;
		}
		/* then the decoder's walk, which asks the decoder as below would */
		if (fr->v != g->exit && !(g->vflags[fr->v] & GRAPH_V_CALL) && f->ops->walk) {
			int walked;

			en->br.enter = NULL;
			rc = take_run(en, fr, &walked);
			if (rc || fr->v == g->exit || (g->vflags[fr->v] & GRAPH_V_CALL))
				return rc;
		}
	}
	if (scan(en, &rc))
		return rc;
	if (fr->v == g->exit) {
		uint32_t tail = f->tail_callee && fr->last_edge < g->ne ?
				f->tail_callee[fr->last_edge] : REGEN_TAIL_NONE;

		rc = emit_activation(en, REGEN_EV_EXIT, f, NULL);
		en->depth--;
		if (!en->depth && fr->ret && fr->kind == REGEN_ENTER_RET &&
		    bsearch(&fr->ret, en->ix->rets, en->ix->nrets, sizeof(*en->ix->rets), by_addr))
			en->orphaned = fr->enter;
		if (en->depth) {	/* the caller stands at its call vertex */
			struct frame *up = &en->stack[en->depth - 1];

			up->tail = tail == REGEN_TAIL_OTHER ? REGEN_TAIL_NONE : tail;
			up->tail_ret = en->stack[en->depth].ret;
			up->tail_kind = en->stack[en->depth].kind;
			if (tail == REGEN_TAIL_OTHER)
				up->open = 1;
		}
		/* the execve's kernel activations returned into the replaced image */
		if (!rc && en->replaced && en->depth == en->replaced)
			rc = replace_image(en);
		return rc;
	}
	if (exhausted(en, fr))
		return truncated(en, fr);
	if (g->vflags[fr->v] & GRAPH_V_CALL) {
		uint32_t callee = f->call_callee ? f->call_callee[fr->v] : UINT32_MAX;

		if (!fr->entered && f->ops->before_call) {
			int err = f->ops->before_call(f, fr->state, &en->br, fr->v, &en->partial);

			if (err == -PT_ETRUNC || (err < 0 && en->br.eof))
				return truncated(en, fr);
			if (err < 0)
				return gap(en, err, NULL);
			/* the markers up to the new position, as at the top of a step */
			if (scan(en, &rc))
				return rc;
		}
		rc = fork_at_call(en);
		if (!rc)
			rc = exec_at_call(en);
		if (rc || !en->depth)
			return rc;
		m = next_enter(en);
		if (fr->entered && fr->tail != REGEN_TAIL_NONE) {
			/*
			 * The callee jumped to a traced function: its ENTER is
			 * next, with the callee's own return address (V's when it
			 * was V's direct callee; one inside untraced code when
			 * that code called it).
			 */
			if (!m || m->func != fr->tail || m->value != fr->tail_ret ||
			    m->arg != fr->tail_kind)
				return gap(en, -PT_EMISMATCH, m);
			fr->tail = REGEN_TAIL_NONE;
		} else if (callee != UINT32_MAX && !fr->open) {
			if (!fr->entered) {
				/* a user callee's ENTER names no caller (regen_func.user) */
				int match = m && m->func == callee && m->arg == REGEN_ENTER_RET &&
					    (!f->call_ret_addr || m->value == (f->user ? 0 :
					     f->call_ret_addr[fr->v]));

				if (!match && f->call_implicit && f->call_implicit[fr->v])
					return enter_implicit(en, fr, callee);
				if (!match)
					return gap(en, -PT_EMISMATCH, m);
			} else {
				m = NULL;	/* a direct call enters once */
			}
		} else if (m && f->framed && f->ops->pending && f->ops->pending(f, fr->state)) {
			/*
			 * A code read ahead at a predicate before this framed
			 * call: nothing ran under it (an ENTER there would have
			 * been walked to), and the ENTERs at this position, after
			 * that code's bits, belong to what follows it.
			 */
			m = NULL;
		} else if (m) {
			int k = frame_match(en, f, fr->v, m);

			if (k < 0)
				return gap(en, -PT_EMISMATCH, m);
			if (!k)
				m = NULL;
		}
		if (m) {
			mi_set(en, (uint32_t)(m - en->s->markers) + 1);
			fr->entered++;
			return enter(en, m);
		}
	}
	en->br.enter = next_enter(en);
	for (;;) {
		int walked;

		e = f->ops->next_edge(f, fr->state, &en->br, fr->v, &en->partial);
		if (e == -PT_ETRUNC || (e < 0 && en->br.eof))
			return truncated(en, fr);
		if (e < 0)
			return gap(en, (int)e, NULL);
		if ((uint64_t)e >= g->ne || g->edges[e].src != fr->v)
			return gap(en, -PT_EFORMAT, NULL);
		if (crossed(en, &rc))
			return rc;
		fr->v = g->edges[e].dst;
		fr->last_edge = (uint32_t)e;
		fr->entered = 0;
		fr->tail = REGEN_TAIL_NONE;
		fr->open = 0;
		if (fr->v == g->exit)
			return 0;
		rc = emit_block(en, fr->v, (uint32_t)e);
		if (rc)
			return rc;
		/*
		 * An ENTER waits at the position (for a call ahead, walked to
		 * emission-free), or no marker waits at or before it, and bits
		 * remain, and this is no call vertex: the next step would
		 * consume nothing and ask the decoder, with that ENTER or none.
		 * Done here: the decoder's walk or run first, then the decoder,
		 * up to a call vertex or EXIT; anything else is the next step's.
		 */
		do {
			if (g->vflags[fr->v] & GRAPH_V_CALL)
				return 0;
			if (quiet(en))
				en->br.enter = NULL;
			else if (enter_waits(en))
				en->br.enter = &en->s->markers[en->mi];
			else
				return 0;
			rc = take_run(en, fr, &walked);
			if (rc || fr->v == g->exit || (g->vflags[fr->v] & GRAPH_V_CALL))
				return rc;
		} while (walked);
	}
}

/*
 * ix->rets: the return addresses of every traced function's call vertices;
 * ix->calls: their direct calls, for br_call_vertex (the first vertex of
 * each). Returns 0 or -PT_ENOMEM.
 */
static int collect_calls(const struct regen_funcs *fs, struct regen_index *ix)
{
	struct regen_bitreader br = { 0 };
	size_t n = 0, i;
	uint32_t v;

	for (i = 0; i < fs->nfuncs; i++)
		if (fs->funcs[i].call_ret_addr)
			n += fs->funcs[i].g->nv;
	ix->rets = malloc((n ? n : 1) * sizeof(*ix->rets));
	if (!ix->rets)
		return -PT_ENOMEM;
	for (ix->calls_mask = 15; ix->calls_mask < 2 * n; ix->calls_mask = ix->calls_mask * 2 + 1)
		;
	ix->calls = calloc(ix->calls_mask + 1, sizeof(*ix->calls));
	if (!ix->calls)
		return -PT_ENOMEM;
	br.calls = ix->calls;
	br.calls_mask = ix->calls_mask;
	for (i = 0; i < fs->nfuncs; i++) {
		const struct regen_func *f = &fs->funcs[i];

		for (v = 0; f->call_ret_addr && v < f->g->nv; v++) {
			uint64_t ret = f->call_ret_addr[v], k;

			if (ret)
				ix->rets[ix->nrets++] = ret;
			if (!f->call_callee || !(f->g->vflags[v] & GRAPH_V_CALL) ||
			    br_call_vertex(&br, f, f->call_callee[v], ret) != GRAPH_NONE)
				continue;	/* the first vertex of a call is its */
			k = br_call_hash(f, f->call_callee[v], ret) & ix->calls_mask;
			while (ix->calls[k].f)
				k = (k + 1) & ix->calls_mask;
			ix->calls[k] = (struct regen_call_slot){ ret, f, f->call_callee[v], v };
		}
	}
	qsort(ix->rets, ix->nrets, sizeof(*ix->rets), by_addr);
	return 0;
}

void regen_index_free(struct regen_index *ix)
{
	if (!ix)
		return;
	free(ix->index);
	free(ix->byid);
	free(ix->rets);
	free(ix->calls);
	free(ix);
}

int regen_index_build(const struct regen_funcs *fs, struct regen_index **out)
{
	struct regen_index *ix = calloc(1, sizeof(*ix));
	uint32_t i;

	*out = NULL;
	if (!ix)
		return -PT_ENOMEM;
	ix->index = malloc(((size_t)fs->nfuncs + 1) * sizeof(*ix->index));
	if (!ix->index)
		goto nomem;
	for (i = 0; i < fs->nfuncs; i++)
		ix->index[i] = &fs->funcs[i];
	qsort(ix->index, fs->nfuncs, sizeof(*ix->index), by_id);
	/* func_ids are dense in practice: a table by id, when it is small */
	for (i = 0; i < fs->nfuncs; i++)
		ix->maxid = fs->funcs[i].func_id > ix->maxid ? fs->funcs[i].func_id : ix->maxid;
	if (fs->nfuncs && ix->maxid <= 4 * fs->nfuncs + 1024) {
		ix->byid = calloc((size_t)ix->maxid + 1, sizeof(*ix->byid));
		if (!ix->byid)
			goto nomem;
		for (i = fs->nfuncs; i-- > 0;)	/* the first of equal ids, as regen_find */
			ix->byid[fs->funcs[i].func_id] = &fs->funcs[i];
	}
	if (collect_calls(fs, ix))
		goto nomem;
	*out = ix;
	return 0;
nomem:
	regen_index_free(ix);
	return -PT_ENOMEM;
}

/*
 * Walks so far: adapting words' state names its walk (regen_ctx_swap).
 * Atomic: threads may walk streams at once, each over a model of its own.
 */
static uint64_t walks;

int regen_stream(const struct regen_funcs *fs, const struct regen_stream *s,
		 regen_event_fn fn, void *ctx)
{
	struct engine en;
	int rc = 0, done = 0;

	memset(&en, 0, sizeof(en));
	en.ix = fs->index;
	if (!en.ix) {
		rc = regen_index_build(fs, &en.own);
		if (rc)
			return rc;
		en.ix = en.own;
	}
	en.fs = fs;
	en.s = s;
	mi_set(&en, 0);
	en.fn = fn;
	en.ctx = ctx;
	en.br.bits = s->bits;
	en.br.nbits = s->nbits;
	en.br.ctx_row = REGEN_CTX_NONE;
	en.br.seg_starts = s->seg_starts;
	en.br.nseg_starts = s->nseg_starts;
	en.br.resets = s->resets;
	en.br.nresets = s->nresets;
	en.br.walk = __atomic_add_fetch(&walks, 1, __ATOMIC_RELAXED);
	en.br.calls = en.ix->calls;
	en.br.calls_mask = en.ix->calls_mask;
	en.blk.type = REGEN_EV_BLOCK;
	en.blk.where = REGEN_WHERE_NONE;
	en.act.edge = GRAPH_NONE;
	en.walk.fn = fn;
	en.walk.ctx = ctx;
	en.walk.blk = &en.blk;
	while (!rc && !done) {
		if (en.depth == 0)
			rc = top_level(&en, &done);
		else
			rc = step(&en);
	}
	free(en.stack);
	free(en.snap);
	regen_index_free(en.own);
	return rc;
}
