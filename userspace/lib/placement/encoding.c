// SPDX-License-Identifier: GPL-2.0
/*
 * Encoding tables shared by the witness and bit-tracing encodings: the
 * Fig. 15 witness sets as a next-edge table, the strong blocking check,
 * the timing rule, and rebuilding all of it from per-edge (and per-vertex)
 * emissions (encoding.h).
 *
 * With vertex emissions a path is emission-free when none of its edges
 * emits and none of the vertices it enters emits; entering the target of a
 * vertex witness is the emission of that witness. An entry witness (a call
 * vertex whose traced callee's ENTER names it) counts as such a vertex.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>
#include <pathtrace/huffman.h>
#include <pathtrace_abi.h>

#include "encoding_internal.h"

unsigned int enc_bits_for(uint64_t n)
{
	unsigned int b = 0;

	/* ceil(log2(n)) for n >= 1 */
	while (b < 64 && (1ull << b) < n)
		b++;
	return b;
}

int encoding_edge_can_emit(const struct graph *g, uint32_t e)
{
	uint32_t d = g->edges[e].dst;

	if (!(g->vflags[g->edges[e].src] & GRAPH_V_CALL))
		return 1;
	return d != g->exit && graph_in_degree(g, d) == 1;
}

void enc_spread_floor(uint64_t *w, uint32_t n)
{
	uint64_t top = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		top = w[i] > top ? w[i] : top;
	for (i = 0; i < n; i++)
		w[i] = w[i] < top >> ENC_WORD_SPREAD ? top >> ENC_WORD_SPREAD : w[i];
}

int enc_may_emit(const struct graph *g, const uint8_t *no, uint32_t e)
{
	return encoding_edge_can_emit(g, e) && !(no && no[e]);
}

int enc_refuse(struct encoding_opts *o, uint32_t where, const char *why)
{
	if (o) {
		o->why = why;
		o->where = where;
	}
	return -PT_EREFUSED;
}

/* Any emission the timing rule forbids (vertex emissions: not at ENTRY/EXIT). */
static int bad_timing(const struct graph *g, const uint8_t *nbits, const uint8_t *vnbits)
{
	uint32_t e;

	for (e = 0; e < g->ne; e++)
		if (nbits[e] && !encoding_edge_can_emit(g, e))
			return 1;
	return vnbits && (vnbits[g->entry] || vnbits[g->exit]);
}

/* Frees the words by the last witness (built by last_witness_words.c). */
void enc_ctx_free(struct encoding *enc)
{
	free(enc->ctx_next);
	free(enc->ctx_start);
	free(enc->ctx_nbits);
	free(enc->ctx_value);
	free(enc->ctx_code);
	enc->ctx_next = NULL;
	enc->ctx_start = NULL;
	enc->ctx_nbits = NULL;
	enc->ctx_value = NULL;
	enc->ctx_code = NULL;
	enc->nctx_rows = 0;
}

void encoding_free(struct encoding *enc)
{
	free(enc->edge_nbits);
	free(enc->edge_value);
	free(enc->edge_role);
	free(enc->vertex_nbits);
	free(enc->vertex_value);
	free(enc->enter_code);
	free(enc->call_entered);
	free(enc->call_framed);
	free(enc->wit_edge);
	free(enc->wit_vertex);
	free(enc->pred_row);
	free(enc->next);
	free(enc->edge_code);
	free(enc->vertex_code);
	free(enc->word_start);
	free(enc->word_nbits);
	free(enc->word_value);
	free(enc->word_code);
	enc_ctx_free(enc);
	memset(enc, 0, sizeof(*enc));
}

int enc_alloc(const struct graph *g, uint32_t kind, uint32_t flags, struct encoding *enc)
{
	memset(enc, 0, sizeof(*enc));
	enc->kind = kind;
	enc->nv = g->nv;
	enc->ne = g->ne;
	enc->edge_nbits = calloc(g->ne + 1, sizeof(*enc->edge_nbits));
	enc->edge_value = calloc(g->ne + 1, sizeof(*enc->edge_value));
	enc->edge_role = calloc(g->ne + 1, sizeof(*enc->edge_role));
	if (flags & ENC_F_VERTEX_EMIT) {
		enc->vertex_nbits = calloc(g->nv + 1, sizeof(*enc->vertex_nbits));
		enc->vertex_value = calloc(g->nv + 1, sizeof(*enc->vertex_value));
		if (!enc->vertex_nbits || !enc->vertex_value) {
			encoding_free(enc);
			return -PT_ENOMEM;
		}
	}
	if (!enc->edge_nbits || !enc->edge_value || !enc->edge_role) {
		encoding_free(enc);
		return -PT_ENOMEM;
	}
	return 0;
}

/*
 * Per vertex: entering it is an emission (a vertex emission or an entry
 * witness: vnbits or ecode non-zero, ewit ENC_CALL_WITNESS; each may be
 * NULL). NULL on ENOMEM.
 */
static uint8_t *loud_vertices(const struct graph *g, const uint8_t *vnbits, const uint8_t *ewit,
			      const uint32_t *ecode)
{
	uint8_t *loud = calloc(g->nv + 1, 1);
	uint32_t v;

	for (v = 0; loud && v < g->nv; v++)
		loud[v] = (vnbits && vnbits[v]) || (ewit && ewit[v] == ENC_CALL_WITNESS) ||
			  (ecode && ecode[v]);
	return loud;
}

static int silent(const uint8_t *loud, uint32_t v)
{
	return !loud[v];
}

/*
 * enter[] seeds are set by the caller: entering a seed reaches what is
 * looked for. Extends enter[] to every vertex from which an emission-free
 * path (silent vertices, silent edges) enters a seed. stack: nv entries.
 */
static void enter_back(const struct graph *g, const uint8_t *nbits, const uint8_t *loud,
		       uint8_t *enter, uint32_t *stack)
{
	uint32_t sp = 0, v, k;

	for (v = 0; v < g->nv; v++)
		if (enter[v])
			stack[sp++] = v;
	while (sp) {
		v = stack[--sp];
		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
			uint32_t e = g->in_edges[k], u = g->edges[e].src;

			if (!nbits[e] && !enter[u] && silent(loud, u)) {
				enter[u] = 1;
				stack[sp++] = u;
			}
		}
	}
}

int encoding_check_blocking_ve(const struct graph *g, const uint8_t *nbits,
			       const uint8_t *vnbits, const uint8_t *ewit, uint32_t *bad_vertex)
{
	uint8_t *enter = calloc(g->nv + 1, 1), *loud = loud_vertices(g, vnbits, ewit, NULL);
	uint32_t *stack = malloc(((size_t)g->nv + 1) * sizeof(*stack));
	uint32_t v, k;
	int err = 0;

	if (!enter || !stack || !loud) {
		err = -PT_ENOMEM;
		goto out;
	}
	/*
	 * entering a silent call (not framed: its callees' ENTERs name it) or
	 * EXIT vertex is what must not happen emission-free
	 */
	for (v = 0; v < g->nv; v++)
		enter[v] = (g->vflags[v] & (GRAPH_V_CALL | GRAPH_V_EXIT)) && silent(loud, v) &&
			   !(ewit && ewit[v] == ENC_CALL_FRAMED);
	enter_back(g, nbits, loud, enter, stack);
	for (v = 0; v < g->nv && !err; v++) {
		/*
		 * an entry witness's or entered call's callee enters once: it
		 * attributes nothing after it (a framed call's may run again
		 * in a recursive activation that names the same frame)
		 */
		int call = (g->vflags[v] & GRAPH_V_CALL) &&
			   !(ewit && (ewit[v] == ENC_CALL_WITNESS || ewit[v] == ENC_CALL_ENTERED));

		if (graph_out_degree(g, v) < 2 && !call)
			continue;
		for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
			uint32_t e = g->out_edges[k];

			if (!nbits[e] && enter[g->edges[e].dst]) {
				if (bad_vertex)
					*bad_vertex = v;
				err = -PT_EINVAL;
				break;
			}
		}
	}
out:
	free(enter);
	free(loud);
	free(stack);
	return err;
}

int encoding_check_blocking_v(const struct graph *g, const uint8_t *nbits, const uint8_t *vnbits,
			      uint32_t *bad_vertex)
{
	return encoding_check_blocking_ve(g, nbits, vnbits, NULL, bad_vertex);
}

int encoding_check_blocking(const struct graph *g, const uint8_t *nbits, uint32_t *bad_vertex)
{
	return encoding_check_blocking_v(g, nbits, NULL, bad_vertex);
}

int enc_silent_cycle(const struct graph *g, const uint8_t *nbits, const uint8_t *loud)
{
	uint32_t *indeg = calloc((size_t)g->nv + 1, sizeof(*indeg));
	uint32_t *queue = malloc(((size_t)g->nv + 1) * sizeof(*queue));
	uint32_t head = 0, tail = 0, nsilent = 0, v, k;
	int err = 0;

	if (!indeg || !queue) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (v = 0; v < g->nv; v++) {
		if (!silent(loud, v))
			continue;
		nsilent++;
		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
			uint32_t e = g->in_edges[k];

			indeg[v] += !nbits[e] && silent(loud, g->edges[e].src);
		}
		if (!indeg[v])
			queue[tail++] = v;
	}
	while (head < tail) {
		v = queue[head++];
		for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
			uint32_t e = g->out_edges[k], d = g->edges[e].dst;

			if (!nbits[e] && silent(loud, d) && !--indeg[d])
				queue[tail++] = d;
		}
	}
	if (tail != nsilent)
		err = -PT_EINVAL;
out:
	free(indeg);
	free(queue);
	return err;
}

/* Witness sets as the next[] table; -PT_EINVAL when two out-edges share a witness. */
static int witness_tables(const struct graph *g, struct encoding *enc)
{
	uint32_t cols = enc->nwit + 1, v, w, k, row;
	uint8_t *enter = malloc(g->nv + 1);
	uint8_t *loud = loud_vertices(g, enc->vertex_nbits, NULL, enc->enter_code);
	uint32_t *stack = malloc(((size_t)g->nv + 1) * sizeof(*stack));
	int err = 0;

	enc->pred_row = malloc(((size_t)g->nv + 1) * sizeof(*enc->pred_row));
	if (!enter || !stack || !enc->pred_row || !loud) {
		err = -PT_ENOMEM;
		goto out;
	}
	enc->npred = 0;
	for (v = 0; v < g->nv; v++)
		enc->pred_row[v] = graph_out_degree(g, v) >= 2 ? enc->npred++ : GRAPH_NONE;
	enc->next = malloc(((size_t)enc->npred * cols + 1) * sizeof(*enc->next));
	if (!enc->next) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (w = 0; w < cols; w++) {
		uint32_t we = w ? enc->wit_edge[w] : GRAPH_NONE;

		memset(enter, 0, g->nv);
		/*
		 * Column 0 (EOF): entering EXIT. An edge witness x->y: entering
		 * x silently (then taking x->y). A vertex witness t (or an
		 * entry witness): entering t.
		 */
		if (!w)
			enter[g->exit] = silent(loud, g->exit);
		else if (we != GRAPH_NONE)
			enter[g->edges[we].src] = silent(loud, g->edges[we].src);
		else
			enter[enc->wit_vertex[w]] = 1;
		enter_back(g, enc->edge_nbits, loud, enter, stack);
		for (v = 0; v < g->nv; v++) {
			uint32_t found = GRAPH_NONE;

			row = enc->pred_row[v];
			if (row == GRAPH_NONE)
				continue;
			for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
				uint32_t e = g->out_edges[k];
				int ok = e == we;

				if (!enc->edge_nbits[e] && enter[g->edges[e].dst])
					ok = 1;
				if (!ok)
					continue;
				if (found != GRAPH_NONE) {
					err = -PT_EINVAL;	/* witness sets overlap */
					goto out;
				}
				found = e;
			}
			enc->next[(size_t)row * cols + w] = found;
		}
	}
out:
	free(enter);
	free(loud);
	free(stack);
	return err;
}

struct word {
	uint8_t nbits;
	uint64_t value;
	uint32_t code;
	uint64_t key;	/* value's bits in reading order, from the top */
};

static int by_word(const void *a, const void *b)
{
	const struct word *x = a, *y = b;

	if (x->nbits != y->nbits)
		return x->nbits < y->nbits ? -1 : 1;
	return x->value < y->value ? -1 : x->value > y->value;
}

static int by_reading(const void *a, const void *b)
{
	const struct word *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->nbits < y->nbits ? -1 : x->nbits > y->nbits;
}

/* The word of emitted code c (1..nemit). */
static struct word code_word(const struct encoding *enc, uint32_t c)
{
	uint32_t e = enc->wit_edge[c], v = enc->wit_vertex[c];

	if (e != GRAPH_NONE)
		return (struct word){ enc->edge_nbits[e], enc->edge_value[e], c, 0 };
	return (struct word){ enc->vertex_nbits[v], enc->vertex_value[v], c, 0 };
}

int enc_witness_words(struct encoding *enc)
{
	size_t cols = (size_t)enc->nwit + 1, n = 0;
	uint32_t row, c, i, m;
	struct word *w;

	free(enc->word_start);
	free(enc->word_nbits);
	free(enc->word_value);
	free(enc->word_code);
	enc->word_nbits = NULL;
	enc->word_value = NULL;
	enc->word_code = NULL;
	for (row = 0; row < enc->npred; row++)
		for (c = 1; c <= enc->nemit; c++)
			n += enc->next[row * cols + c] != GRAPH_NONE;
	enc->word_start = malloc(((size_t)enc->npred + 1) * sizeof(*enc->word_start));
	enc->word_nbits = malloc((n + 1) * sizeof(*enc->word_nbits));
	enc->word_value = malloc((n + 1) * sizeof(*enc->word_value));
	enc->word_code = malloc((n + 1) * sizeof(*enc->word_code));
	w = malloc(((size_t)enc->nemit + 1) * sizeof(*w));
	if (!enc->word_start || !enc->word_nbits || !enc->word_value || !enc->word_code || !w) {
		free(w);
		return -PT_ENOMEM;
	}
	enc->word_min = enc->nemit ? 64 : 0;
	enc->width = 0;
	for (c = 1; c <= enc->nemit; c++) {
		struct word x = code_word(enc, c);

		if (x.nbits < enc->word_min)
			enc->word_min = x.nbits;
		if (x.nbits > enc->width)
			enc->width = x.nbits;
	}
	n = 0;
	for (row = 0; row < enc->npred; row++) {
		enc->word_start[row] = (uint32_t)n;
		for (m = 0, c = 1; c <= enc->nemit; c++) {
			if (enc->next[row * cols + c] == GRAPH_NONE)
				continue;
			w[m] = code_word(enc, c);
			w[m].key = huffman_reading_order(w[m].value, 64);
			m++;
		}
		qsort(w, m, sizeof(*w), by_reading);
		for (i = 1; i < m; i++) {
			uint64_t mask = ~0ull << (64 - w[i - 1].nbits);	/* nbits 1..64 */

			if ((w[i].key & mask) == w[i - 1].key) {
				free(w);
				return -PT_EINVAL;
			}
		}
		qsort(w, m, sizeof(*w), by_word);
		for (i = 0; i < m; i++, n++) {
			enc->word_nbits[n] = w[i].nbits;
			enc->word_value[n] = w[i].value;
			enc->word_code[n] = w[i].code;
		}
	}
	enc->word_start[enc->npred] = (uint32_t)n;
	free(w);
	return 0;
}

/* The blocking check with enc's entry witnesses and entered calls. */
static int check_blocking_calls(const struct graph *g, const struct encoding *enc)
{
	uint8_t *ewit = calloc(g->nv + 1, 1);
	uint32_t v;
	int err;

	for (v = 0; ewit && v < g->nv; v++)
		ewit[v] = enc->enter_code && enc->enter_code[v] ? ENC_CALL_WITNESS :
			  enc->call_entered && enc->call_entered[v] ? ENC_CALL_ENTERED :
			  enc->call_framed && enc->call_framed[v] ? ENC_CALL_FRAMED :
			  ENC_CALL_LOUD;
	err = ewit ? encoding_check_blocking_ve(g, enc->edge_nbits, enc->vertex_nbits, ewit,
						NULL) : -PT_ENOMEM;
	free(ewit);
	return err;
}

int enc_finish_witness(const struct graph *g, struct encoding *enc, uint32_t flags)
{
	uint32_t e, v, nentry = 0;
	int err;

	/* enter_code[] holds marks: an entry witness gets no code where it emits itself */
	for (v = 0; enc->enter_code && v < g->nv; v++) {
		if (enc->enter_code[v] && !(g->vflags[v] & GRAPH_V_CALL))
			return -PT_EINVAL;
		if (enc->vertex_nbits && enc->vertex_nbits[v])
			enc->enter_code[v] = 0;
		nentry += enc->enter_code[v] != 0;
	}
	for (v = 0; enc->call_entered && v < g->nv; v++)
		if (enc->call_entered[v] && !(g->vflags[v] & GRAPH_V_CALL))
			return -PT_EINVAL;
	enc->wit_edge = malloc(((size_t)enc->nwit + nentry + 1) * sizeof(*enc->wit_edge));
	enc->wit_vertex = malloc(((size_t)enc->nwit + nentry + 1) * sizeof(*enc->wit_vertex));
	if (!enc->wit_edge || !enc->wit_vertex)
		return -PT_ENOMEM;
	for (e = 0; e <= enc->nwit + nentry; e++)
		enc->wit_edge[e] = enc->wit_vertex[e] = GRAPH_NONE;
	enc->edge_code = calloc(g->ne + 1, sizeof(*enc->edge_code));
	if (enc->vertex_nbits)
		enc->vertex_code = calloc(g->nv + 1, sizeof(*enc->vertex_code));
	if (!enc->edge_code || (enc->vertex_nbits && !enc->vertex_code))
		return -PT_ENOMEM;
	/* codes 1..nemit in edge order, then vertices: each emitted word names one */
	enc->nemit = 0;
	for (e = 0; e < g->ne + g->nv; e++) {
		int is_v = e >= g->ne;
		uint32_t x = is_v ? e - g->ne : e;
		uint8_t nb = is_v ? (enc->vertex_nbits ? enc->vertex_nbits[x] : 0) :
				    enc->edge_nbits[x];
		uint32_t c;

		if (!nb)
			continue;
		if (nb > 64 || enc->nemit == enc->nwit)
			return -PT_EINVAL;
		c = ++enc->nemit;
		if (is_v) {
			enc->wit_vertex[c] = x;
			enc->vertex_code[x] = c;
		} else {
			enc->wit_edge[c] = x;
			enc->edge_code[x] = c;
		}
	}
	if (enc->nemit != enc->nwit)
		return -PT_EINVAL;
	if (bad_timing(g, enc->edge_nbits, enc->vertex_nbits))
		return -PT_EINVAL;
	/* entry witnesses: the codes after the emitted ones, never in the bits */
	for (v = 0; nentry && v < g->nv; v++) {
		if (!enc->enter_code[v])
			continue;
		enc->enter_code[v] = ++enc->nwit;
		enc->wit_vertex[enc->nwit] = v;
	}
	if (!(flags & ENC_F_SINGLE_PROCEDURE)) {
		err = check_blocking_calls(g, enc);
		if (err)
			return err;
	}
	{
		uint8_t *loud = loud_vertices(g, enc->vertex_nbits, NULL, enc->enter_code);

		err = loud ? enc_silent_cycle(g, enc->edge_nbits, loud) : -PT_ENOMEM;
		free(loud);
	}
	if (!err)
		err = witness_tables(g, enc);
	return err ? err : enc_witness_words(enc);
}

int enc_finish_bits(const struct graph *g, struct encoding *enc, uint32_t flags)
{
	uint32_t v, k, e;

	enc->width = 0;
	enc->nemit = 0;
	for (v = 0; v < g->nv; v++) {
		uint32_t deg = graph_out_degree(g, v);
		unsigned int nb = enc_bits_for(deg);

		if (enc->vertex_nbits && enc->vertex_nbits[v] > 64)
			return -PT_EINVAL;
		for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
			e = g->out_edges[k];
			if (deg >= 2 && (enc->edge_nbits[e] != nb ||
					 enc->edge_value[e] != k - g->out_start[v]))
				return -PT_EINVAL;
			if (enc->edge_nbits[e] > 64)
				return -PT_EINVAL;
			if (enc->edge_nbits[e]) {
				enc->nemit++;
				if (enc->edge_nbits[e] > enc->width)
					enc->width = enc->edge_nbits[e];
			}
		}
	}
	if (bad_timing(g, enc->edge_nbits, enc->vertex_nbits))
		return -PT_EINVAL;
	for (v = 0; enc->call_entered && v < g->nv; v++)
		if (enc->call_entered[v] && !(g->vflags[v] & GRAPH_V_CALL))
			return -PT_EINVAL;
	if (!(flags & ENC_F_SINGLE_PROCEDURE))
		return check_blocking_calls(g, enc);
	return 0;
}

int encoding_from_emissions_ve(const struct graph *g, uint32_t kind, const uint8_t *nbits,
			       const uint64_t *value, const uint8_t *vnbits,
			       const uint64_t *vvalue, const uint8_t *ewit, uint32_t flags,
			       struct encoding *enc)
{
	uint32_t e, v;
	int err;

	if (!g || !g->out_start || !nbits || !value || !enc || (vnbits && !vvalue) ||
	    (kind != PT_ENC_WITNESS && kind != PT_ENC_BITS))
		return -PT_EINVAL;
	err = enc_alloc(g, kind, vnbits ? ENC_F_VERTEX_EMIT : 0, enc);
	if (err)
		return err;
	if (ewit) {
		/* bits: entered calls only (a separator, not an ENTER, tells calls apart) */
		if (kind == PT_ENC_WITNESS)
			enc->enter_code = calloc(g->nv + 1, sizeof(*enc->enter_code));
		enc->call_entered = calloc(g->nv + 1, 1);
		if (kind == PT_ENC_WITNESS)
			enc->call_framed = calloc(g->nv + 1, 1);
		if ((kind == PT_ENC_WITNESS && (!enc->enter_code || !enc->call_framed)) ||
		    !enc->call_entered) {
			encoding_free(enc);
			return -PT_ENOMEM;
		}
		for (v = 0; v < g->nv; v++) {
			if (enc->enter_code)
				enc->enter_code[v] = ewit[v] == ENC_CALL_WITNESS;
			enc->call_entered[v] = ewit[v] == ENC_CALL_ENTERED;
			if (enc->call_framed)
				enc->call_framed[v] = ewit[v] == ENC_CALL_FRAMED;
		}
	}
	for (e = 0; e < g->ne; e++) {
		enc->edge_nbits[e] = nbits[e];
		enc->edge_value[e] = nbits[e] >= 64 ? value[e] : value[e] & ((1ull << nbits[e]) - 1);
		if (nbits[e] && enc->edge_value[e] != value[e])
			err = -PT_EINVAL;
		if (nbits[e])
			enc->nwit++;
	}
	for (v = 0; vnbits && v < g->nv; v++) {
		enc->vertex_nbits[v] = vnbits[v];
		enc->vertex_value[v] = vnbits[v] >= 64 ? vvalue[v] :
				       vvalue[v] & ((1ull << vnbits[v]) - 1);
		if (vnbits[v] && enc->vertex_value[v] != vvalue[v])
			err = -PT_EINVAL;
		if (vnbits[v])
			enc->nwit++;
	}
	if (kind == PT_ENC_BITS) {
		enc->nwit = 0;
		for (e = 0; !err && e < g->ne; e++)
			if (nbits[e])
				enc->edge_role[e] = graph_out_degree(g, g->edges[e].src) >= 2 ?
						    ENC_ROLE_BRANCH : ENC_ROLE_SEPARATOR;
	}
	if (!err)
		err = kind == PT_ENC_WITNESS ? enc_finish_witness(g, enc, flags) :
					       enc_finish_bits(g, enc, flags);
	if (err)
		encoding_free(enc);
	return err;
}

int encoding_from_emissions_v(const struct graph *g, uint32_t kind, const uint8_t *nbits,
			      const uint64_t *value, const uint8_t *vnbits,
			      const uint64_t *vvalue, uint32_t flags, struct encoding *enc)
{
	return encoding_from_emissions_ve(g, kind, nbits, value, vnbits, vvalue, NULL, flags,
					  enc);
}

int encoding_from_emissions(const struct graph *g, uint32_t kind, const uint8_t *nbits,
			    const uint64_t *value, uint32_t flags, struct encoding *enc)
{
	return encoding_from_emissions_v(g, kind, nbits, value, NULL, NULL, flags, enc);
}
