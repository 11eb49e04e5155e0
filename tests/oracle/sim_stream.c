// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's stream back end (sim.h): what the kernel would emit for
 * one owner under docs/runtime.md, as a bitstring plus ENTER markers,
 * without machine code or records; the property tests regenerate it.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include "sim.h"

void sim_stream_emit(struct sim_stream *s, unsigned int nbits, uint64_t value)
{
	uint64_t need = (s->nbits + nbits + 63) / 64 + 1, w, off;

	if (!nbits || s->nomem)
		return;
	if (need > s->cap_words) {
		uint64_t ncap = s->cap_words ? s->cap_words * 2 : 16, *nb;

		while (ncap < need)
			ncap *= 2;
		nb = realloc(s->bits, ncap * sizeof(*nb));
		if (!nb) {
			s->nomem = 1;
			return;
		}
		memset(nb + s->cap_words, 0, (ncap - s->cap_words) * sizeof(*nb));
		s->bits = nb;
		s->cap_words = ncap;
	}
	if (nbits < 64)
		value &= (1ull << nbits) - 1;
	w = s->nbits >> 6;
	off = s->nbits & 63;
	s->bits[w] |= value << off;
	if (off && off + nbits > 64)
		s->bits[w + 1] |= value >> (64 - off);
	s->nbits += nbits;
}

void sim_stream_marker(struct sim_stream *s, uint32_t type, uint32_t func, uint32_t arg,
		       uint64_t value)
{
	struct regen_marker *m;

	if (s->nomem)
		return;
	if (s->nmarkers == s->cap_markers) {
		uint32_t ncap = s->cap_markers ? s->cap_markers * 2 : 16;
		struct regen_marker *nm = realloc(s->markers, ncap * sizeof(*nm));

		if (!nm) {
			s->nomem = 1;
			return;
		}
		s->markers = nm;
		s->cap_markers = ncap;
	}
	m = &s->markers[s->nmarkers++];
	memset(m, 0, sizeof(*m));
	m->pos = s->nbits;
	m->type = type;
	m->func = func;
	m->arg = arg;
	m->value = value;
}

void sim_stream_segment(struct sim_stream *s)
{
	if (s->nomem)
		return;
	if (s->nseg_starts == s->cap_seg_starts) {
		uint32_t ncap = s->cap_seg_starts ? s->cap_seg_starts * 2 : 16;
		uint64_t *n = realloc(s->seg_starts, ncap * sizeof(*n));

		if (!n) {
			s->nomem = 1;
			return;
		}
		s->seg_starts = n;
		s->cap_seg_starts = ncap;
	}
	s->seg_starts[s->nseg_starts++] = s->nbits;
}

void sim_stream_view(const struct sim_stream *s, uint64_t owner, struct regen_stream *out)
{
	memset(out, 0, sizeof(*out));	/* one segment unless marked */
	out->owner = owner;
	out->bits = s->bits;
	out->nbits = s->nbits;
	out->markers = s->markers;
	out->nmarkers = s->nmarkers;
	out->seg_starts = s->seg_starts;
	out->nseg_starts = s->nseg_starts;
}

void sim_stream_free(struct sim_stream *s)
{
	free(s->bits);
	free(s->markers);
	free(s->seg_starts);
	memset(s, 0, sizeof(*s));
}

void sim_emit_encoding(void *ctx, const struct sim_func *f, uint32_t e, uint64_t *state,
		       struct sim_stream *s)
{
	uint32_t d = f->g.edges[e].dst;

	(void)ctx;
	(void)state;
	if (f->enc.edge_nbits && f->enc.edge_nbits[e])
		sim_stream_emit(s, f->enc.edge_nbits[e], f->enc.edge_value[e]);
	/* a vertex emission fires on entering d, before d's call */
	if (f->enc.vertex_nbits && f->enc.vertex_nbits[d])
		sim_stream_emit(s, f->enc.vertex_nbits[d], f->enc.vertex_value[d]);
}

struct stream_backend {
	const struct sim_emitter *em;
	struct sim_stream *s;
	int frames;		/* sim_program.frames */
};

/*
 * An ENTER's marker: its return address; naming frames (sim_program.frames),
 * for an untraced caller the innermost traced frame, or none (value 0, as
 * the reader has an untraced caller's ENTER).
 */
static void sb_enter(void *ctx, const struct sim_func *f, uint64_t ret, uint64_t frame)
{
	struct stream_backend *sb = ctx;

	if (!sb->frames || frame == ret)
		sim_stream_marker(sb->s, REGEN_M_ENTER, f->func_id, REGEN_ENTER_RET, ret);
	else if (frame)
		sim_stream_marker(sb->s, REGEN_M_ENTER, f->func_id, REGEN_ENTER_NESTED, frame);
	else
		sim_stream_marker(sb->s, REGEN_M_ENTER, f->func_id, REGEN_ENTER_RET, 0);
}

static void sb_vertex(void *ctx, const struct sim_func *f, uint32_t v, uint32_t e, uint64_t ret,
		      uint64_t frame, uint64_t *state)
{
	struct stream_backend *sb = ctx;

	(void)e;
	(void)ret;
	(void)frame;
	if (sb->em && sb->em->vertex)
		sb->em->vertex(sb->em->ctx, f, v, state, sb->s);
}

static void sb_edge(void *ctx, const struct sim_func *f, uint32_t e, uint64_t *state)
{
	struct stream_backend *sb = ctx;

	if (sb->em && sb->em->edge)
		sb->em->edge(sb->em->ctx, f, e, state, sb->s);
}

static uint64_t sb_pos(void *ctx)
{
	const struct stream_backend *sb = ctx;

	return sb->s->nbits;
}

int sim_run(const struct sim_program *p, const struct sim_run_opts *opts, uint64_t *rng,
	    const struct sim_emitter *em, struct sim_stream *s, struct sim_truth *t)
{
	struct stream_backend sb = { em, s, p->frames };
	const struct sim_backend be = { &sb, sb_enter, sb_vertex, sb_edge, sb_pos };
	int err = sim_exec(p, opts, rng, &be, t);

	return err ? err : s->nomem ? -PT_ENOMEM : 0;
}
