// SPDX-License-Identifier: GPL-2.0
/*
 * forks - what each forked child inherits (streams.h regen_forks_resolve;
 * docs/user.md, "Fork, exec and signals"): the user activations its parent
 * had open at the fork, taken from the engine's walk of the parent's
 * stream (REGEN_EV_FORK) before any stream is regenerated for output, so
 * that streams can then be walked in any order, one alone or on several
 * threads.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "streams.h"

#define WALK_DONE 1	/* the callback's "stop": every fork of the stream seen */

struct resolve {
	struct regen_streams *ss;
	uint32_t left;		/* the stream's forks not yet passed */
	int err;
};

static int on_event(void *ctx, const struct regen_event *ev)
{
	struct resolve *r = ctx;
	struct regen_fork *fk;

	if (ev->type != REGEN_EV_FORK || !ev->marker || ev->marker->arg >= r->ss->nforks)
		return 0;
	fk = &r->ss->forks[ev->marker->arg];
	free(fk->frames);
	fk->frames = NULL;
	fk->nframes = 0;
	fk->known = !ev->reason;
	if (fk->known && ev->nframes) {
		fk->frames = malloc(ev->nframes * sizeof(*fk->frames));
		if (!fk->frames) {
			fk->known = 0;
			r->err = -PT_ENOMEM;
			return r->err;
		}
		memcpy(fk->frames, ev->frames, ev->nframes * sizeof(*fk->frames));
		fk->nframes = ev->nframes;
	}
	return --r->left ? 0 : WALK_DONE;
}

/* FORK markers of stream s. */
static uint32_t forks_in(const struct regen_stream *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < s->nmarkers; i++)
		n += s->markers[i].type == REGEN_M_FORK;
	return n;
}

static int by_stamp(const void *a, const void *b, void *forks)
{
	const struct regen_fork *f = forks;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (f[x].stamp != f[y].stamp)
		return f[x].stamp < f[y].stamp ? -1 : 1;
	return x < y ? -1 : x > y;
}

int regen_forks_resolve(const struct regen_funcs *fs, struct regen_streams *ss)
{
	uint32_t *order, i;
	uint8_t *walked;
	int err = 0;

	if (!ss->nforks)
		return 0;
	order = malloc(ss->nforks * sizeof(*order));
	walked = calloc(ss->nstreams ? ss->nstreams : 1, 1);
	if (!order || !walked) {
		free(order);
		free(walked);
		return -PT_ENOMEM;
	}
	for (i = 0; i < ss->nforks; i++)
		order[i] = i;
	/* a parent's own inheritance comes from a fork stamped before its forks */
	qsort_r(order, ss->nforks, sizeof(*order), by_stamp, ss->forks);
	for (i = 0; i < ss->nforks && !err; i++) {
		uint32_t p = ss->forks[order[i]].parent_stream;
		struct resolve r = { .ss = ss };
		int rc;

		if (p >= ss->nstreams || walked[p])
			continue;
		walked[p] = 1;
		r.left = forks_in(&ss->streams[p]);
		if (!r.left)
			continue;
		rc = regen_stream(fs, &ss->streams[p], on_event, &r);
		if (r.err)
			err = r.err;
		else if (rc < 0)
			err = rc;
	}
	free(order);
	free(walked);
	return err;
}
