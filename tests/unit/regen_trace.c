// SPDX-License-Identifier: GPL-2.0
/* regen_trace - simulated runs to trace.bin and back (see regen_trace.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "rbpage.h"
#include "regen_trace.h"
#include "streams.h"

/* Packs one CPU's records into pages; returns the page count or -1. */
static int64_t pack_cpu(const struct sim_kmod_run *r, uint32_t cpu, uint8_t **out)
{
	uint8_t *pages = NULL;
	uint64_t i, n = 0;
	struct rbpage pg;
	int open = 0;

	for (i = 0; i < r->nrecs; i++) {
		const struct sim_rec *rec = &r->recs[i];

		if (rec->cpu != cpu)
			continue;
		if (!open || rbpage_add(&pg, rec->ts, rec->payload, rec->len)) {
			uint8_t *np;

			if (open)
				rbpage_pad(&pg);
			np = realloc(pages, (n + 1) * RT_PAGE);
			if (!np) {
				free(pages);
				return -1;
			}
			pages = np;
			memset(pages + n * RT_PAGE, 0, RT_PAGE);
			rbpage_init(&pg, pages + n * RT_PAGE, RT_PAGE, rec->ts);
			n++;
			open = 1;
			if (rbpage_add(&pg, rec->ts, rec->payload, rec->len)) {
				free(pages);
				return -1;
			}
		}
	}
	if (open)
		rbpage_pad(&pg);
	*out = pages;
	return (int64_t)n;
}

int rt_write(FILE *f, const struct sim_program *p, const struct sim_kmod_run *r, uint32_t nr_cpus)
{
	struct tf_writer w;
	uint32_t i;
	int err;

	tfw_init(&w, f);
	tfw_system(&w, nr_cpus, RT_PAGE, "synthetic", 1700000000000000000ull);
	for (i = 0; i < p->nfuncs; i++) {
		const struct sim_func *sf = &p->funcs[i];
		struct tf_function fn;

		if (!sf->traced)
			continue;
		memset(&fn, 0, sizeof(fn));
		fn.func_id = sf->func_id;
		fn.addr = sf->addr;
		fn.len = sf->len;
		fn.name = sf->name;
		fn.name_len = (uint32_t)strlen(sf->name);
		fn.code = sf->code;
		fn.cfg = sf->cfg_blob;
		fn.cfg_len = sf->cfg_len;
		fn.plan = sf->plan_blob;
		fn.plan_len = (uint32_t)sf->plan_len;
		tfw_function(&w, &fn);
	}
	for (i = 0; i < nr_cpus; i++) {
		uint8_t *pages = NULL;
		int64_t n = pack_cpu(r, i, &pages);

		if (n < 0)
			return -PT_ENOMEM;
		if (n)
			tfw_pages(&w, i, RT_PAGE, (uint32_t)n, pages, NULL);
		free(pages);
	}
	tfw_loss(&w, nr_cpus, r->dropped, 0);
	err = tfw_close(&w);
	return err;
}

const char *rt_write_tmp(const struct sim_program *p, const struct sim_kmod_run *r,
			 uint32_t nr_cpus)
{
	static char path[64];
	FILE *f;
	int fd;

	strcpy(path, "/tmp/pt-regen-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return NULL;
	}
	if (rt_write(f, p, r, nr_cpus)) {
		fclose(f);
		return NULL;
	}
	return fclose(f) ? NULL : path;
}

struct collect {
	struct rt_result *res;
};

static int collect_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	struct rt_result *res = w->priv;
	struct rt_event *e;

	if (sp->ev->type == REGEN_EV_GAP)
		res->gaps++;
	if (sp->ev->type == REGEN_EV_TRUNCATED)
		res->truncated++;
	if (sp->ev->type == REGEN_EV_RESYNC)
		return 0;	/* a GAP before it already separates */
	if (res->nev == res->cap) {
		uint64_t cap = res->cap ? res->cap * 2 : 1024;
		struct rt_event *n = realloc(res->ev, cap * sizeof(*n));

		if (!n)
			return -PT_ENOMEM;
		res->ev = n;
		res->cap = cap;
	}
	e = &res->ev[res->nev++];
	e->owner = st->s->owner;
	e->type = sp->ev->type;
	e->func = sp->ev->func;
	e->block = sp->ev->type == REGEN_EV_BLOCK ? sp->ev->block : 0;
	e->edge = sp->ev->type == REGEN_EV_BLOCK ? sp->edge : UINT32_MAX;
	return 0;
}

static const struct out_writer_ops collect_ops = {
	.name = "collect",
	.step = collect_step,
};

/* PT_DEBUG: why pathregen's model refused a function */
static void debug_report(void *ctx, const struct tf_function *fn, const struct pr_func *f, int err)
{
	(void)ctx;
	fprintf(stderr, "rt_regen: %s refused: %s (%s)\n", fn->name ? fn->name : "?",
		f && f->refusal[0] ? f->refusal : "", pt_strerror(err));
}

int rt_regen(const char *path, struct rt_result *res, struct out_writer *const *extra,
	     unsigned int nextra, struct pr_model *keep_model)
{
	struct tracefile tf;
	struct pr_model m;
	struct tr_records rs = { 0 };
	struct regen_streams ss = { 0 };
	struct out_writer col = { .ops = &collect_ops, .priv = res };
	struct out_writer *ws[8];
	unsigned int n = 0, i;
	int err, opened = 0, err2;

	memset(res, 0, sizeof(*res));
	memset(&tf, 0, sizeof(tf));
	res->file_err = tracefile_read(path, &tf);
	res->load_bad = pr_model_load(&tf, &m, getenv("PT_DEBUG") ? debug_report : NULL, NULL);
	err = res->load_bad < 0 ? res->load_bad : 0;
	if (!err)
		err = tr_decode_tracefile(&rs, &tf);
	res->bad_input = rs.bad_pages + rs.bad_events + rs.bad_records + rs.unknown_records;
	if (!err)
		err = regen_streams_build(&rs, &ss);
	col.m = &m;
	ws[n++] = &col;
	for (i = 0; i < nextra && n < 8; i++) {
		extra[i]->m = &m;
		ws[n++] = extra[i];
	}
	if (!err) {
		err = out_open_all(ws, n);
		opened = !err;
	}
	for (i = 0; !err && i < ss.nstreams; i++) {
		struct out_stream st = { .s = &ss.streams[i], .index = i };

		err = out_walk_stream(&m, &st, ws, n);
	}
	if (opened) {
		err2 = out_close_all(ws, n);
		if (!err)
			err = err2;
	}
	regen_streams_free(&ss);
	tr_records_free(&rs);
	if (keep_model)
		*keep_model = m;
	else
		pr_model_free(&m);
	tracefile_free(&tf);
	return err;
}

void rt_result_free(struct rt_result *res)
{
	free(res->ev);
	memset(res, 0, sizeof(*res));
}

/*
 * Generates p (go), lowers it (lo), runs it on the simulated module (ko)
 * into r and t, and writes it to a temporary trace.bin named in path
 * (64 bytes). Returns 0 or a negative PT_E*.
 */
static int record(struct sim_program *p, struct sim_kmod_run *r, struct sim_truth *t, char *path,
		  uint64_t *rng, const struct sim_gen_opts *go, const struct sim_lower_opts *lo,
		  const struct sim_kmod_opts *ko)
{
	const char *tmp;
	int err = sim_generate_lowered(p, rng, go, lo);

	if (err)
		return err;
	err = sim_truth_init(t, p);
	if (!err)
		err = sim_kmod_execute(p, ko, rng, r, t);
	if (err)
		return err;
	tmp = rt_write_tmp(p, r, ko->nr_cpus);
	if (!tmp)
		return -PT_EIO;
	strcpy(path, tmp);
	return 0;
}

int rt_run_make(struct rt_run *x, uint64_t *rng, const struct sim_gen_opts *go,
		const struct sim_lower_opts *lo, const struct sim_kmod_opts *ko)
{
	memset(x, 0, sizeof(*x));
	return record(&x->p, &x->r, &x->t, x->path, rng, go, lo, ko);
}

void rt_run_free(struct rt_run *x)
{
	sim_truth_free(&x->t, &x->p);
	sim_kmod_run_free(&x->r);
	sim_free(&x->p);
	if (x->path[0])
		unlink(x->path);
}

int rt_case_make(struct rt_case *c, uint64_t seed, uint32_t nfuncs, uint16_t mode,
		 uint16_t encoding, uint32_t plan_flags)
{
	struct sim_gen_opts go = { .nfuncs = nfuncs, .max_stmts = 6, .closed = 1 };
	struct sim_lower_opts lo = { .mode = mode, .encoding = encoding, .plan_flags = plan_flags };
	struct sim_kmod_opts ko = { .nr_cpus = 1, .ntasks = RT_NTASKS, .activations = 12,
				    .max_steps = 60 };
	struct tracefile tf;
	uint64_t rng = seed;
	int err;

	memset(c, 0, sizeof(*c));
	err = record(&c->p, &c->r, &c->t, c->path, &rng, &go, &lo, &ko);
	if (err)
		return err;
	memset(&tf, 0, sizeof(tf));
	err = tracefile_read(c->path, &tf);
	if (!err) {
		err = pr_model_load(&tf, &c->m, NULL, NULL);
		err = err < 0 ? err : 0;
	}
	tracefile_free(&tf);	/* the model has its own copies */
	return err;
}

void rt_case_free(struct rt_case *c)
{
	pr_model_free(&c->m);
	sim_truth_free(&c->t, &c->p);
	sim_kmod_run_free(&c->r);
	sim_free(&c->p);
	if (c->path[0])
		unlink(c->path);
}

struct regen_event *rt_truth_events(const struct sim_truth *t, uint64_t owner, uint64_t *n)
{
	struct regen_event *ev = malloc(((uint64_t)t->nev + 1) * sizeof(*ev));
	uint64_t i;

	*n = 0;
	if (!ev)
		return NULL;
	for (i = 0; i < t->nev; i++) {
		const struct sim_event *x = &t->ev[i];
		struct regen_event *e;

		if (x->owner != owner)
			continue;
		e = &ev[(*n)++];
		memset(e, 0, sizeof(*e));
		e->type = x->type;
		e->func = x->func;
		e->block = x->block;
		e->edge = x->edge;
		e->depth = x->depth;
	}
	return ev;
}

int rt_feed_truth(const struct rt_case *c, struct out_writer *const *ws, unsigned int n)
{
	uint64_t t, nev;
	int err = out_open_all(ws, n);

	for (t = 0; t < RT_NTASKS && !err; t++) {
		struct regen_stream s = { .owner = RT_TASK(t) };
		struct out_stream st = { .s = &s, .index = (uint32_t)t };
		struct regen_event *ev = rt_truth_events(&c->t, RT_TASK(t), &nev);

		err = out_walk_events(&c->m, &st, ev, nev, ws, n);
		free(ev);
	}
	return err;
}

int rt_truth_output(const struct rt_case *c, struct out_writer *w, char **text, size_t *len)
{
	struct out_writer *ws[1] = { w };
	int err, cerr;

	*text = NULL;
	*len = 0;
	w->m = &c->m;
	w->fp = open_memstream(text, len);
	if (!w->fp)
		return -PT_ENOMEM;
	err = rt_feed_truth(c, ws, 1);
	cerr = out_close_all(ws, 1);
	fclose(w->fp);
	w->fp = NULL;
	return err ? err : cerr;
}

uint64_t rt_truth_insns(const struct rt_case *c)
{
	uint64_t i, n = 0;

	for (i = 0; i < c->t.nev; i++)
		if (c->t.ev[i].type == REGEN_EV_BLOCK)
			n += pr_model_func(&c->m, c->t.ev[i].func)->cfg.blocks[c->t.ev[i].block].ninsn;
	return n;
}

/* Whether streams a and b hold the same: owners, bits, markers, segments, resets, forks. */
int rt_same_streams(const struct regen_streams *a, const struct regen_streams *b)
{
	uint32_t i;

	if (a->nstreams != b->nstreams || a->nforks != b->nforks ||
	    a->unowned_records != b->unowned_records || a->unowned_bits != b->unowned_bits ||
	    a->counters_records != b->counters_records || a->loss_records != b->loss_records)
		return 0;
	for (i = 0; i < a->nforks; i++)
		if (a->forks[i].parent != b->forks[i].parent ||
		    a->forks[i].child != b->forks[i].child ||
		    a->forks[i].stamp != b->forks[i].stamp ||
		    a->forks[i].parent_stream != b->forks[i].parent_stream)
			return 0;
	for (i = 0; i < a->nstreams; i++) {
		const struct regen_stream *x = &a->streams[i], *y = &b->streams[i];
		uint64_t k;

		if (x->owner != y->owner || x->nbits != y->nbits || x->nmarkers != y->nmarkers ||
		    x->nseg_starts != y->nseg_starts || x->nresets != y->nresets ||
		    memcmp(x->markers, y->markers, x->nmarkers * sizeof(*x->markers)) ||
		    memcmp(x->seg_starts, y->seg_starts, x->nseg_starts * sizeof(*x->seg_starts)) ||
		    memcmp(x->resets, y->resets, x->nresets * sizeof(*x->resets)))
			return 0;
		for (k = 0; k < x->nbits; k++)
			if (((x->bits[k / 64] ^ y->bits[k / 64]) >> (k % 64)) & 1)
				return 0;
		/* each marker recorded where the other's was */
		for (k = 0; k < x->nmarkers; k++) {
			uint64_t sx, sy;
			uint32_t cx, cy;

			regen_where(x, (uint32_t)k, &cx, &sx);
			regen_where(y, (uint32_t)k, &cy, &sy);
			if (cx != cy || sx != sy)
				return 0;
		}
	}
	return 1;
}
