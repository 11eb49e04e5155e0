// SPDX-License-Identifier: GPL-2.0
/*
 * out_stats - --stats: how much was traced and how compactly. The figure
 * of merit of the 1994 paper is trace bits per executed conditional
 * branch; here a "predicate" is any executed block with two or more
 * out-edges (Jcc, static key, faulting instruction with a fixup), and
 * Jcc-ended blocks are also counted on their own.
 */
#include <inttypes.h>
#include <stdlib.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "pathtrace_abi.h"
#include "out.h"

struct stats {
	uint64_t streams, bits, markers;
	uint64_t activations, blocks, exits;
	uint64_t predicates, jcc;
	uint64_t gaps, resyncs, truncated;
	uint64_t loss_markers[4];	/* by enum pt_loss; [0]: other (corrupt input) */
	uint64_t loss_counts[4];
	uint64_t *func_entries;		/* per function index */
};

static int stats_open(struct out_writer *w)
{
	struct stats *s = calloc(1, sizeof(*s));

	if (!s)
		return -PT_ENOMEM;
	w->priv = s;
	s->func_entries = calloc(w->m->nfuncs + 1, sizeof(uint64_t));
	return s->func_entries ? 0 : -PT_ENOMEM;
}

static int stats_stream_begin(struct out_writer *w, const struct out_stream *st)
{
	struct stats *s = w->priv;
	uint32_t i;

	s->streams++;
	s->bits += st->s->nbits;
	s->markers += st->s->nmarkers;
	for (i = 0; i < st->s->nmarkers; i++) {
		const struct regen_marker *mk = &st->s->markers[i];
		uint32_t k;

		if (!regen_marker_is_loss(mk))
			continue;
		k = mk->arg >= 1 && mk->arg <= 3 ? mk->arg : 0;
		s->loss_markers[k]++;
		s->loss_counts[k] += mk->value;
	}
	return 0;
}

static void count_edge(struct stats *s, const struct out_step *sp)
{
	const struct cfg *c = &sp->f->cfg;
	const struct cfg_block *b;

	if (sp->edge == UINT32_MAX)
		return;
	b = &c->blocks[c->edges[sp->edge].src];
	if (b->nsucc >= 2)
		s->predicates++;
	if (b->ninsn && c->insns[b->first_insn + b->ninsn - 1].kind == CFG_I_JCC)
		s->jcc++;
}

static int stats_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	struct stats *s = w->priv;

	(void)st;
	switch (sp->ev->type) {
	case REGEN_EV_ENTER:
		s->activations++;
		if (sp->f)
			s->func_entries[sp->f->index]++;
		break;
	case REGEN_EV_BLOCK:
		s->blocks++;
		if (sp->f)
			count_edge(s, sp);
		break;
	case REGEN_EV_EXIT:
		s->exits++;
		if (sp->f)
			count_edge(s, sp);
		break;
	case REGEN_EV_GAP:
		s->gaps++;
		break;
	case REGEN_EV_RESYNC:
		s->resyncs++;
		break;
	case REGEN_EV_TRUNCATED:
		s->truncated++;
		break;
	}
	return 0;
}

static int stats_close(struct out_writer *w)
{
	static const char *const loss_names[] = { "corrupt input", "overrun", "missed", "state" };
	struct stats *s = w->priv;
	FILE *fp = w->fp;
	uint32_t i, used = 0;

	if (!s)
		return 0;
	for (i = 0; i < w->m->nfuncs; i++)
		used += s->func_entries[i] != 0;
	fprintf(fp, "streams                         %" PRIu64 "\n", s->streams);
	fprintf(fp, "functions traced                %u\n", w->m->nfuncs);
	fprintf(fp, "functions executed              %u\n", used);
	fprintf(fp, "activations                     %" PRIu64 " (%" PRIu64 " returned)\n",
		s->activations, s->exits);
	fprintf(fp, "blocks executed                 %" PRIu64 "\n", s->blocks);
	fprintf(fp, "predicates executed             %" PRIu64 " (%" PRIu64 " Jcc)\n",
		s->predicates, s->jcc);
	fprintf(fp, "trace bits                      %" PRIu64 "\n", s->bits);
	if (s->predicates)
		fprintf(fp, "trace bits per predicate        %.3f\n",
			(double)s->bits / (double)s->predicates);
	else
		fprintf(fp, "trace bits per predicate        n/a\n");
	if (s->jcc)
		fprintf(fp, "trace bits per Jcc              %.3f\n", (double)s->bits / (double)s->jcc);
	if (w->records && w->records->page_bytes) {
		const struct tr_records *r = w->records;

		/* What the file spends on them: pages, events, record headers. */
		fprintf(fp, "trace pages                     %" PRIu64 " (%" PRIu64 " bytes), "
			"%.1f%% filled by events; %" PRIu64 " bytes in the file\n", r->pages,
			r->page_bytes, 100.0 * (double)r->committed_bytes / (double)r->page_bytes,
			r->stored_bytes);
		fprintf(fp, "record bytes                    %" PRIu64 " in %" PRIu64 " records "
			"(%" PRIu64 " in their 8-byte headers, %" PRIu64 " in ENTERs; "
			"events add %" PRIu64 ")\n",
			r->record_bytes, r->records_read, r->header_bytes, r->enter_bytes,
			r->committed_bytes > r->record_bytes ?
			r->committed_bytes - r->record_bytes : 0);
		if (r->seg_coded)
			fprintf(fp, "coded segment heads             %" PRIu64 " (bits: owner %" PRIu64
				", stamp %" PRIu64 ", lengths %" PRIu64 ")\n", r->seg_coded,
				r->seg_owner_bits, r->seg_delta_bits, r->seg_len_bits);
		if (r->enter_codes)
			fprintf(fp, "coded ENTERs                    %" PRIu64 " (bits: kind or "
				"candidate %" PRIu64 ", function %" PRIu64 ", return address %" PRIu64 ", position %"
				PRIu64 ")\n", r->enter_codes, r->enter_kind_bits,
				r->enter_func_bits, r->enter_ret_bits, r->enter_adv_bits);
		if (s->jcc)
			fprintf(fp, "on-disk bits per Jcc            %.3f (page data in the file; "
				"payload %.3f)\n", 8.0 * (double)r->stored_bytes / (double)s->jcc,
				(double)s->bits / (double)s->jcc);
	}
	fprintf(fp, "markers                         %" PRIu64 "\n", s->markers);
	fprintf(fp, "gaps                            %" PRIu64 " (%" PRIu64 " resynchronized)\n",
		s->gaps, s->resyncs);
	fprintf(fp, "truncated streams               %" PRIu64 "\n", s->truncated);
	for (i = 0; i < 4; i++)
		if (s->loss_markers[i])
			fprintf(fp, "loss markers (%-13s)    %" PRIu64 " (count %" PRIu64 ")\n",
				loss_names[i], s->loss_markers[i], s->loss_counts[i]);
	if (w->have_loss_section) {
		fprintf(fp, "trace.bin losses                dropped %" PRIu64 ", missed %" PRIu64 "\n",
			w->loss_dropped, w->loss_missed);
		fprintf(fp, "losses located by records       dropped %" PRIu64 ", missed %" PRIu64 "\n",
			w->located_dropped, w->located_missed);
	}
	free(s->func_entries);
	free(s);
	w->priv = NULL;
	return ferror(fp) ? -PT_EIO : 0;
}

/* Every count is a sum over the streams: a part's are added. */
static int stats_merge(struct out_writer *w, struct out_writer *part)
{
	struct stats *s = w->priv, *p = part->priv;
	uint32_t i;

	s->streams += p->streams;
	s->bits += p->bits;
	s->markers += p->markers;
	s->activations += p->activations;
	s->blocks += p->blocks;
	s->exits += p->exits;
	s->predicates += p->predicates;
	s->jcc += p->jcc;
	s->gaps += p->gaps;
	s->resyncs += p->resyncs;
	s->truncated += p->truncated;
	for (i = 0; i < 4; i++) {
		s->loss_markers[i] += p->loss_markers[i];
		s->loss_counts[i] += p->loss_counts[i];
	}
	for (i = 0; i < w->m->nfuncs; i++)
		s->func_entries[i] += p->func_entries[i];
	free(p->func_entries);
	free(p);
	part->priv = NULL;
	return 0;
}

const struct out_writer_ops out_stats_ops = {
	.name = "stats",
	.open = stats_open,
	.stream_begin = stats_stream_begin,
	.step = stats_step,
	.close = stats_close,
	.merge = stats_merge,
};
