// SPDX-License-Identifier: GPL-2.0
/*
 * out_paths - --paths: the Ball-Larus path profile. Every executed acyclic
 * path is numbered exactly as the planner numbers it (pathnum.h: paths end
 * at EXIT, at back edges and at call vertices), so the numbers mean the
 * same here as in a PT_MODE_PATHS trace. Per function, the hottest paths
 * with their counts and blocks. A path cut by a gap or by the end of the
 * stream is not counted (it is reported as incomplete).
 *
 * --path-seqs adds the exact counts of path-end sequences: every run of
 * 2, 4 or 8 consecutive completed paths of one stream (across calls,
 * never across a gap or a cut path), what the kernel's online subpath
 * profiling samples (kmod/osp.c): the oracle its estimates are checked
 * against.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/path_codes.h>
#include <pathtrace/pathnum.h>
#include <pathtrace/plan.h>
#include <pathtrace/tracefile.h>

#include "out.h"
#include "pathtrace_abi.h"

struct path_count {
	uint64_t id;
	uint64_t count;
};

/* Open addressing, id -> count; slot empty when count == 0. */
struct path_table {
	struct path_count *slots;
	uint64_t cap, used;
};

struct paths_func {
	struct pathnum pn;
	int ok;			/* pathnum_build succeeded */
	int err;
	struct path_table t;
	uint64_t completed;
	/* a path profile counted in the kernel (PT_PLAN_PROFILE): its PT_REC_PATHS */
	uint64_t records, lost, overflow, beyond;
	uint64_t other;		/* PT_PLAN_PPP: path ends of the paths it does not number */
};

struct paths_frame {
	uint32_t fi;		/* function index, UINT32_MAX if unknown */
	uint64_t sum;		/* Val sum of the path so far */
	int open;		/* a path is being walked */
};

#define SEQ_MAX 8	/* PT_OSP_MAX_LEN */

struct seq_end {
	uint32_t func;		/* func_id */
	uint64_t path;
};

struct seq_count {
	uint64_t h;		/* 0: empty slot */
	uint64_t count;
	uint32_t len;
	struct seq_end e[SEQ_MAX];
};

/* The exact path-end sequence counts (--path-seqs). */
struct seqs {
	struct seq_end win[SEQ_MAX];	/* the stream's last path ends, oldest first */
	uint32_t nwin;
	struct seq_count *tab;		/* open addressing */
	uint64_t cap, used;
};

struct paths {
	struct seqs *seq;		/* --path-seqs, or NULL */
	const struct pr_model *m;
	struct paths_func *f;
	struct paths_frame *stack;
	uint32_t depth, cap;
	uint64_t incomplete;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* Adds n to path id's count. */
static int table_add_n(struct path_table *t, uint64_t id, uint64_t n)
{
	uint64_t i;

	if ((t->used + 1) * 2 > t->cap) {
		uint64_t ncap = t->cap ? t->cap * 2 : 64, j;
		struct path_count *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -PT_ENOMEM;
		for (j = 0; j < t->cap; j++) {
			if (!t->slots[j].count)
				continue;
			for (i = mix(t->slots[j].id) & (ncap - 1); ns[i].count; i = (i + 1) & (ncap - 1))
				;
			ns[i] = t->slots[j];
		}
		free(t->slots);
		t->slots = ns;
		t->cap = ncap;
	}
	for (i = mix(id) & (t->cap - 1); t->slots[i].count; i = (i + 1) & (t->cap - 1)) {
		if (t->slots[i].id == id) {
			t->slots[i].count += n;
			return 0;
		}
	}
	t->slots[i].id = id;
	t->slots[i].count = n;
	t->used++;
	return 0;
}

static int table_add(struct path_table *t, uint64_t id)
{
	return table_add_n(t, id, 1);
}

/*
 * Path profiles counted in the kernel (PT_PLAN_PROFILE functions): their
 * PT_REC_PATHS records' (path, count) pairs, summed over every CPU and
 * flush, are the counts; the planner numbered the paths as pathnum does
 * here. A number beyond the function's paths is counted apart (beyond).
 */
static int add_kernel_counts(struct out_writer *w, struct paths *p)
{
	const struct tr_records *rs = w->records;
	size_t r;
	uint32_t k;
	int err;

	for (r = 0; rs && r < rs->n; r++) {
		const struct tr_rec *rec = &rs->recs[r];
		const struct pr_func *f;
		struct paths_func *pf;
		const uint64_t *b;

		if (rec->type != PT_REC_PATHS || rec->nwords < 2)
			continue;
		f = pr_model_func(w->m, rec->arg);
		if (!f || !(f->plan_flags & PT_PLAN_PROFILE))
			continue;
		pf = &p->f[f->index];
		b = tr_body(rs, rec);
		pf->records++;
		pf->lost += b[0];
		pf->overflow += b[1];
		for (k = 2; k + 1 < rec->nwords; k += 2) {
			if ((f->plan_flags & PT_PLAN_PPP) && b[k] == PT_PATH_OTHER) {
				pf->other += b[k + 1];
				continue;
			}
			if (!pf->ok || b[k] >= pf->pn.npaths) {
				pf->beyond += b[k + 1];
				continue;
			}
			err = table_add_n(&pf->t, b[k], b[k + 1]);
			if (err)
				return err;
			pf->completed += b[k + 1];
		}
	}
	return 0;
}

static int paths_open(struct out_writer *w)
{
	struct paths *p = calloc(1, sizeof(*p));
	uint32_t i;

	if (!p)
		return -PT_ENOMEM;
	w->priv = p;
	p->m = w->m;
	p->f = calloc(w->m->nfuncs + 1, sizeof(*p->f));
	if (!p->f)
		return -PT_ENOMEM;
	if (w->path_seqs && !(p->seq = calloc(1, sizeof(*p->seq))))
		return -PT_ENOMEM;
	for (i = 0; i < w->m->nfuncs; i++) {
		p->f[i].err = pathnum_build(&p->f[i].pn, &w->m->funcs[i].g, NULL, NULL);
		p->f[i].ok = !p->f[i].err;
		if (p->f[i].err == -PT_ENOMEM)
			return -PT_ENOMEM;
	}
	return add_kernel_counts(w, p);
}

static uint64_t seq_hash(const struct seq_end *e, uint32_t len)
{
	uint64_t h = len;
	uint32_t i;

	for (i = 0; i < len; i++)
		h = mix(h ^ mix(((uint64_t)e[i].func << 40) ^ e[i].path ^ (uint64_t)i << 60));
	return h ? h : 1;
}

static int seq_count(struct seqs *q, const struct seq_end *e, uint32_t len)
{
	uint64_t h = seq_hash(e, len), i;

	if ((q->used + 1) * 2 > q->cap) {
		uint64_t ncap = q->cap ? q->cap * 2 : 1024, j;
		struct seq_count *nt = calloc(ncap, sizeof(*nt));

		if (!nt)
			return -PT_ENOMEM;
		for (j = 0; j < q->cap; j++) {
			if (!q->tab[j].h)
				continue;
			for (i = q->tab[j].h & (ncap - 1); nt[i].h; i = (i + 1) & (ncap - 1))
				;
			nt[i] = q->tab[j];
		}
		free(q->tab);
		q->tab = nt;
		q->cap = ncap;
	}
	for (i = h & (q->cap - 1); q->tab[i].h; i = (i + 1) & (q->cap - 1)) {
		if (q->tab[i].h == h && q->tab[i].len == len &&
		    !memcmp(q->tab[i].e, e, len * sizeof(*e))) {
			q->tab[i].count++;
			return 0;
		}
	}
	q->tab[i].h = h;
	q->tab[i].len = len;
	memcpy(q->tab[i].e, e, len * sizeof(*e));
	q->tab[i].count = 1;
	q->used++;
	return 0;
}

/* A completed path of function func: counts the runs of 2, 4, 8 that end with it. */
static int seq_push(struct seqs *q, uint32_t func, uint64_t path)
{
	uint32_t len;
	int err;

	if (q->nwin == SEQ_MAX) {
		memmove(q->win, q->win + 1, (SEQ_MAX - 1) * sizeof(q->win[0]));
		q->nwin--;
	}
	q->win[q->nwin].func = func;
	q->win[q->nwin++].path = path;
	for (len = 2; len <= SEQ_MAX; len *= 2) {
		if (len > q->nwin)
			break;
		err = seq_count(q, q->win + q->nwin - len, len);
		if (err)
			return err;
	}
	return 0;
}

static int end_path(struct paths *p, struct paths_frame *fr, uint64_t last_val)
{
	int err;

	fr->sum += last_val;
	fr->open = 0;
	err = table_add(&p->f[fr->fi].t, fr->sum);
	p->f[fr->fi].completed++;
	if (!err && p->seq)
		err = seq_push(p->seq, p->m->funcs[fr->fi].func_id, fr->sum);
	return err;
}

static void start_path(const struct pathnum *pn, struct paths_frame *fr, uint32_t start)
{
	fr->sum = start == GRAPH_NONE ? 0 : pn->val[start];
	fr->open = 1;
}

/* Follows CFG edge e of the frame's function. */
static int take_edge(struct paths *p, struct paths_frame *fr, uint32_t e)
{
	const struct pathnum *pn = &p->f[fr->fi].pn;
	const struct pathnum_cfg_edge *ce = &pn->cfg[e];
	int err;

	switch (ce->role) {
	case PATHNUM_ROLE_REAL:
		if (!fr->open)
			return 0;
		fr->sum += pn->val[ce->dag];
		if (pn->dag.edges[ce->dag].dst == pn->dag.exit)
			return end_path(p, fr, 0);
		return 0;
	case PATHNUM_ROLE_BACK:
		if (fr->open) {
			err = end_path(p, fr, pn->val[ce->dag]);
			if (err)
				return err;
		}
		start_path(pn, fr, ce->start);
		return 0;
	default:		/* out of a call vertex: that path ended at the call */
		start_path(pn, fr, ce->start);
		return 0;
	}
}

static int paths_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	struct paths *p = w->priv;
	struct paths_frame *fr = p->depth ? &p->stack[p->depth - 1] : NULL;
	const struct pathnum *pn;
	uint32_t v;
	int err;

	(void)st;
	switch (sp->ev->type) {
	case REGEN_EV_ENTER:
		if (p->depth == p->cap) {
			uint32_t cap = p->cap ? p->cap * 2 : 64;
			struct paths_frame *s = realloc(p->stack, cap * sizeof(*s));

			if (!s)
				return -PT_ENOMEM;
			p->stack = s;
			p->cap = cap;
		}
		fr = &p->stack[p->depth++];
		fr->fi = sp->f && p->f[sp->f->index].ok ? sp->f->index : UINT32_MAX;
		fr->sum = 0;
		/* a path starts at ENTRY; an activation inherited at a fork began elsewhere */
		fr->open = !(sp->ev->marker && sp->ev->marker->type == REGEN_M_FORKED);
		return 0;
	case REGEN_EV_BLOCK:
	case REGEN_EV_EXIT:
		if (!fr || fr->fi == UINT32_MAX || !sp->f || sp->f->index != fr->fi)
			break;
		pn = &p->f[fr->fi].pn;
		if (sp->edge != UINT32_MAX) {
			err = take_edge(p, fr, sp->edge);
			if (err)
				return err;
		} else if (sp->ev->type == REGEN_EV_BLOCK && sp->prev_block != UINT32_MAX) {
			fr->open = 0;	/* no edge between the blocks: cannot number */
		}
		v = sp->ev->block;
		if (sp->ev->type == REGEN_EV_BLOCK && v < pn->dag.nv && fr->open &&
		    pn->call_end[v] != GRAPH_NONE && pn->kind[pn->call_end[v]] == PATHNUM_CALL_END) {
			err = end_path(p, fr, pn->val[pn->call_end[v]]);
			if (err)
				return err;
		}
		break;
	default:
		break;
	}
	if ((sp->ev->type == REGEN_EV_EXIT || sp->ev->type == REGEN_EV_REPLACED) && p->depth) {
		/* an activation an execve replaced ends inside its path */
		if (p->stack[p->depth - 1].open)
			p->incomplete++;
		p->depth--;
	} else if (sp->ev->type == REGEN_EV_GAP || sp->ev->type == REGEN_EV_TRUNCATED ||
		   sp->ev->type == REGEN_EV_RESYNC) {
		for (v = 0; v < p->depth; v++)
			p->incomplete += p->stack[v].open;
		p->depth = 0;
		if (p->seq)
			p->seq->nwin = 0;	/* no run across a gap */
	}
	return 0;
}

static int paths_stream_end(struct out_writer *w, const struct out_stream *st)
{
	struct paths *p = w->priv;
	uint32_t v;

	(void)st;
	for (v = 0; v < p->depth; v++)
		p->incomplete += p->stack[v].open;
	p->depth = 0;
	if (p->seq)
		p->seq->nwin = 0;
	return 0;
}

static int cmp_seq_desc(const void *a, const void *b)
{
	const struct seq_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->h < y->h ? -1 : x->h > y->h;
}

static const char *func_name(const struct pr_model *m, uint32_t func_id)
{
	const struct pr_func *f = pr_model_func(m, func_id);

	return f ? f->name : "?";
}

/*
 * The hottest path-end sequences, as `pathtracectl subpaths` prints the
 * kernel's estimates: "COUNT  LEN: NAME:PATH ...".
 */
static void print_seqs(struct out_writer *w, struct seqs *q)
{
	uint64_t i, n = 0, top = w->top ? w->top : 10;
	struct seq_count *all = malloc((q->used + 1) * sizeof(*all));
	uint32_t k;

	if (!all) {
		fprintf(w->fp, "  (out of memory)\n");
		return;
	}
	for (i = 0; i < q->cap; i++)
		if (q->tab[i].h)
			all[n++] = q->tab[i];
	qsort(all, n, sizeof(*all), cmp_seq_desc);
	fprintf(w->fp, "# path-end sequences (exact): runs of 2, 4 and 8 consecutive paths of a "
		"stream, %" PRIu64 " distinct\n", n);
	for (i = 0; i < n && i < top; i++) {
		fprintf(w->fp, "%12" PRIu64 "  %u:", all[i].count, all[i].len);
		for (k = 0; k < all[i].len; k++)
			fprintf(w->fp, " %s:%" PRIu64, func_name(w->m, all[i].e[k].func),
				all[i].e[k].path);
		fputc('\n', w->fp);
	}
	free(all);
}

static int cmp_count_desc(const void *a, const void *b)
{
	const struct path_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void print_function(struct out_writer *w, const struct pr_func *f, struct paths_func *pf)
{
	struct path_count *all;
	uint32_t *blocks;
	uint64_t i, n = 0, top = w->top ? w->top : 10;
	char buf[192];

	if (!pf->ok) {
		fprintf(w->fp, "%s (func %u): paths not numbered: %s\n", f->name, f->func_id,
			pf->pn.reason[0] ? pf->pn.reason : pt_strerror(pf->err));
		return;
	}
	fprintf(w->fp, "%s (func %u): %" PRIu64 " paths executed, %" PRIu64 " distinct of %" PRIu64
		" possible (%u-bit numbers)", f->name, f->func_id, pf->completed, pf->t.used,
		pf->pn.npaths, pf->pn.width);
	if (f->plan_flags & PT_PLAN_PROFILE)
		fprintf(w->fp, " (counted in the kernel: %" PRIu64 " PATHS records; %" PRIu64
			" path ends lost to a context switch mid-path, %" PRIu64 " to a full table, %"
			PRIu64 " beyond the numbering)", pf->records, pf->lost, pf->overflow,
			pf->beyond);
	/* PPP counts its interesting paths one by one, the rest together */
	if (f->plan_flags & PT_PLAN_PPP)
		fprintf(w->fp, " (PPP: the interesting paths only; %" PRIu64 " ends of other paths)",
			pf->other);
	fputc('\n', w->fp);
	all = malloc((pf->t.used + 1) * sizeof(*all));
	blocks = malloc(((size_t)pf->pn.dag.nv + 1) * sizeof(*blocks));
	if (!all || !blocks) {
		fprintf(w->fp, "  (out of memory)\n");
		free(all);
		free(blocks);
		return;
	}
	for (i = 0; i < pf->t.cap; i++)
		if (pf->t.slots[i].count)
			all[n++] = pf->t.slots[i];
	qsort(all, n, sizeof(*all), cmp_count_desc);
	for (i = 0; i < n && i < top; i++) {
		int nb = pathnum_blocks(&pf->pn, all[i].id, blocks, pf->pn.dag.nv + 1), k;

		fprintf(w->fp, "%12" PRIu64 "  path %" PRIu64 ":", all[i].count, all[i].id);
		for (k = 0; k < nb; k++)
			fprintf(w->fp, " %s", pr_block_name(f, blocks[k], buf, sizeof(buf)));
		if (nb < 0)
			fprintf(w->fp, " (cannot decode: %s)", pt_strerror(nb));
		fputc('\n', w->fp);
	}
	free(all);
	free(blocks);
}

/* --path-codes: what one function's path numbers cost. */
struct codes_cost {
	uint64_t ends, fixed, coded, escaped;
};

/*
 * The per-DAG-edge weights function i's codes come from: the plan's
 * heuristic guesses, or this execution's DAG edge counts (each counted
 * path adds its count to its edges). Returns 0; a negative PT_E*.
 */
static int codes_weights(const struct out_writer *w, const struct paths_func *pf, uint32_t i,
			 double *dag_w)
{
	const struct pr_func *f = &w->m->funcs[i];
	uint32_t *edges = NULL;
	uint64_t *cw = NULL, s;
	int err = 0, n, k;

	if (w->path_codes != OUT_REPLAN_PROFILE) {	/* the path counts' classes rank by them */
		cw = malloc(((size_t)f->g.ne + 1) * sizeof(*cw));
		err = cw ? plan_weights_heuristic(&f->cfg, &f->g, cw) : -PT_ENOMEM;
		if (!err)
			path_codes_dag_weights(&pf->pn, cw, dag_w);
		free(cw);
		return err;
	}
	edges = malloc(((size_t)pf->pn.dag.nv + 1) * sizeof(*edges));
	if (!edges)
		return -PT_ENOMEM;
	for (s = 0; s < pf->t.cap; s++) {
		if (!pf->t.slots[s].count)
			continue;
		n = pathnum_decode(&pf->pn, pf->t.slots[s].id, edges, pf->pn.dag.nv + 1);
		for (k = 0; k < n; k++)
			dag_w[edges[k]] += (double)pf->t.slots[s].count;
	}
	for (n = 0; (uint32_t)n < pf->pn.dag.ne; n++)
		dag_w[n] += 1e-9;	/* as path_codes_dag_weights: unrun edges still rank */
	free(edges);
	return 0;
}

/* Function i's path numbers coded as path_codes.h codes them; 0 or a negative PT_E*. */
static int codes_cost(const struct out_writer *w, const struct paths_func *pf, uint32_t i,
		      struct codes_cost *cc)
{
	double *dag_w = calloc((size_t)pf->pn.dag.ne + 1, sizeof(*dag_w));
	uint64_t *ids = malloc((pf->t.used + 1) * sizeof(*ids));
	uint64_t *counts = malloc((pf->t.used + 1) * sizeof(*counts));
	struct path_codes pc;
	uint32_t n = 0;
	uint64_t s;
	int err;

	memset(cc, 0, sizeof(*cc));
	err = dag_w && ids && counts ? codes_weights(w, pf, i, dag_w) : -PT_ENOMEM;
	for (s = 0; !err && w->path_codes == OUT_REPLAN_PATHS && s < pf->t.cap; s++)
		if (pf->t.slots[s].count) {
			ids[n] = pf->t.slots[s].id;
			counts[n++] = pf->t.slots[s].count;
		}
	if (!err)
		err = path_codes_build_counted(&pc, &pf->pn, dag_w, w->path_codes_k, ids, counts, n);
	free(dag_w);
	free(ids);
	free(counts);
	if (err)
		return err;
	for (s = 0; s < pf->t.cap; s++) {
		uint64_t id = pf->t.slots[s].id, n = pf->t.slots[s].count, value;
		unsigned int nbits;
		int raw;

		if (!n)
			continue;
		if (path_codes_word(&pc, id, &value, &nbits, &raw)) {
			err = -PT_EFORMAT;	/* a counted number beyond the numbering */
			break;
		}
		cc->ends += n;
		cc->fixed += n * pf->pn.width;
		cc->coded += n * (nbits + (raw ? pc.width : 0));
		cc->escaped += raw ? n : 0;
	}
	path_codes_free(&pc);
	return err;
}

static void print_path_codes(struct out_writer *w, struct paths *p)
{
	static const char *const code_names[] = { "", "heuristic", "profile", "paths" };
	struct codes_cost all = { 0 }, cc;
	uint32_t i, nf = 0;

	fprintf(w->fp, "# path numbers coded by where each path starts (--path-codes %s, the %u "
		"likeliest paths of each start listed, the rest escaped): bits\n",
		code_names[w->path_codes], w->path_codes_k);
	for (i = 0; i < w->m->nfuncs; i++) {
		struct paths_func *pf = &p->f[i];
		int err;

		if (!pf->ok || !pf->completed || (w->m->funcs[i].plan_flags & PT_PLAN_PROFILE))
			continue;
		err = codes_cost(w, pf, i, &cc);
		if (err) {
			fprintf(w->fp, "%s: no codes: %s\n", w->m->funcs[i].name, pt_strerror(err));
			continue;
		}
		fprintf(w->fp, "%s: %" PRIu64 " path ends, %" PRIu64 " bits fixed-width, %" PRIu64
			" coded (%" PRIu64 " escaped)\n", w->m->funcs[i].name, cc.ends, cc.fixed,
			cc.coded, cc.escaped);
		all.ends += cc.ends;
		all.fixed += cc.fixed;
		all.coded += cc.coded;
		all.escaped += cc.escaped;
		nf++;
	}
	fprintf(w->fp, "path_codes=%s k=%u functions=%u path_ends=%" PRIu64 " fixed_bits=%" PRIu64
		" coded_bits=%" PRIu64 " escaped=%" PRIu64 "\n",
		code_names[w->path_codes], w->path_codes_k, nf,
		all.ends, all.fixed, all.coded, all.escaped);
}

static int paths_close(struct out_writer *w)
{
	struct paths *p = w->priv;
	uint32_t i;

	if (!p)
		return 0;
	if (p->f) {
		fprintf(w->fp, "# Ball-Larus path profile: hottest paths per function\n");
		for (i = 0; i < w->m->nfuncs; i++)
			print_function(w, &w->m->funcs[i], &p->f[i]);
		if (w->path_codes)
			print_path_codes(w, p);
		for (i = 0; i < w->m->nfuncs; i++) {
			pathnum_free(&p->f[i].pn);
			free(p->f[i].t.slots);
		}
		if (p->incomplete)
			fprintf(w->fp, "# %" PRIu64 " paths cut by a gap or the end of a stream: not counted\n",
				p->incomplete);
		if (p->seq)
			print_seqs(w, p->seq);
	}
	if (p->seq)
		free(p->seq->tab);
	free(p->seq);
	free(p->f);
	free(p->stack);
	free(p);
	w->priv = NULL;
	return ferror(w->fp) ? -PT_EIO : 0;
}

/* For tests: the count of path id of function index fi while open (0 if none). */
uint64_t out_paths_count(const struct out_writer *w, uint32_t fi, uint64_t id)
{
	const struct paths *p = w->priv;
	const struct path_table *t;
	uint64_t i;

	if (!p || fi >= w->m->nfuncs)
		return 0;
	t = &p->f[fi].t;
	if (!t->cap)
		return 0;
	for (i = mix(id) & (t->cap - 1); t->slots[i].count; i = (i + 1) & (t->cap - 1))
		if (t->slots[i].id == id)
			return t->slots[i].count;
	return 0;
}

uint64_t out_paths_completed(const struct out_writer *w)
{
	const struct paths *p = w->priv;
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; p && i < w->m->nfuncs; i++)
		n += p->f[i].completed;
	return n;
}

uint64_t out_paths_seq_total(const struct out_writer *w, uint32_t len)
{
	const struct paths *p = w->priv;
	uint64_t i, n = 0;

	for (i = 0; p && p->seq && i < p->seq->cap; i++)
		if (p->seq->tab[i].h && p->seq->tab[i].len == len)
			n += p->seq->tab[i].count;
	return n;
}

int out_paths_hottest(const struct out_writer *w, uint32_t fi, uint32_t *blocks, uint32_t max,
		      uint64_t *count)
{
	const struct paths *p = w->priv;
	const struct path_table *t;
	const struct path_count *best = NULL;
	uint64_t i;

	*count = 0;
	if (!p || fi >= w->m->nfuncs || !p->f[fi].ok)
		return 0;
	t = &p->f[fi].t;
	for (i = 0; i < t->cap; i++)
		if (t->slots[i].count && (!best || cmp_count_desc(&t->slots[i], best) < 0))
			best = &t->slots[i];
	if (!best)
		return 0;
	*count = best->count;
	return pathnum_blocks(&p->f[fi].pn, best->id, blocks, max);
}

const struct out_writer_ops out_paths_ops = {
	.name = "paths",
	.open = paths_open,
	.step = paths_step,
	.stream_end = paths_stream_end,
	.close = paths_close,
};
