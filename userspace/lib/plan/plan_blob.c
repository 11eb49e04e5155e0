// SPDX-License-Identifier: GPL-2.0
/*
 * The plan blob: serialization and the validating parser pathregen uses on
 * the plans stored in trace.bin (the module validates its own copy). It
 * follows the ABI growth rules: a larger struct is accepted when the bytes
 * this build does not know are zero; a different major version is refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/plan.h>

#include "../base/abi_struct.h"

int plan_serialize(const struct plan *pl, void **blob, size_t *len)
{
	size_t n = pl->hdr.total_len;
	uint8_t *b = calloc(1, n), *q = b;

	if (!b)
		return -PT_ENOMEM;
	memcpy(q, &pl->hdr, sizeof(pl->hdr));
	q += sizeof(pl->hdr);
	memcpy(q, pl->sites, pl->hdr.nr_sites * sizeof(struct pt_site));
	q += pl->hdr.nr_sites * sizeof(struct pt_site);
	memcpy(q, pl->actions, pl->hdr.nr_actions * sizeof(struct pt_action));
	q += pl->hdr.nr_actions * sizeof(struct pt_action);
	if (pl->hdr.nr_verify)
		memcpy(q, pl->verify, pl->hdr.nr_verify * sizeof(struct pt_verify_site));
	q += pl->hdr.nr_verify * sizeof(struct pt_verify_site);
	if (pl->hdr.nr_implicit)
		memcpy(q, pl->implicit, pl->hdr.nr_implicit * sizeof(struct pt_implicit));
	q += pl->hdr.nr_implicit * sizeof(struct pt_implicit);
	if (pl->hdr.nr_ppp)
		memcpy(q, pl->ppp_slots, pl->hdr.nr_ppp * sizeof(struct pt_ppp_slot));
	q += pl->hdr.nr_ppp * sizeof(struct pt_ppp_slot);
	if (pl->hdr.nr_ctx_codes)
		memcpy(q, pl->ctx_next, pl->hdr.nr_ctx_codes * sizeof(uint32_t));
	q += pl->hdr.nr_ctx_codes * sizeof(uint32_t);
	if (pl->hdr.nr_ctx_words)
		memcpy(q, pl->ctx_words, pl->hdr.nr_ctx_words * sizeof(struct pt_ctx_word));
	q += pl->hdr.nr_ctx_words * sizeof(struct pt_ctx_word);
	if (pl->hdr.nr_path_codes)
		memcpy(q, pl->path_codes, pl->hdr.nr_path_codes * sizeof(struct pt_path_code));
	q += pl->hdr.nr_path_codes * sizeof(struct pt_path_code);
	if (pl->hdr.nr_path_ranges)
		memcpy(q, pl->path_ranges, pl->hdr.nr_path_ranges * sizeof(struct pt_path_range));
	*blob = b;
	*len = n;
	return 0;
}

struct why {
	char *buf;
	size_t len;
};

static int __attribute__((format(printf, 3, 4)))
bad(struct why *w, int err, const char *fmt, ...)
{
	va_list ap;

	if (w->buf && w->len) {
		va_start(ap, fmt);
		vsnprintf(w->buf, w->len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* Copies count elements of in_size bytes into out (known bytes only). */
static int copy_elems(void **out, const uint8_t *in, uint32_t count, uint32_t in_size,
		      size_t known)
{
	uint8_t *o = calloc((size_t)count + 1, known);
	uint32_t i;

	if (!o)
		return -PT_ENOMEM;
	for (i = 0; i < count; i++)
		if (abi_struct_load(o + (size_t)i * known, known, in + (size_t)i * in_size, in_size)) {
			free(o);
			return -PT_EFORMAT;
		}
	*out = o;
	return 0;
}

static uint32_t region_len(const struct pt_plan *h, uint16_t region)
{
	return region == PT_REGION_MAIN ? h->len : h->cold_len;
}

static int check_header(const struct pt_plan *h, size_t len, struct why *w)
{
	uint32_t i;

	if (h->total_len != len)
		return bad(w, h->total_len > len ? -PT_ETRUNC : -PT_EFORMAT,
			   "total_len %u but the blob has %zu bytes", h->total_len, len);
	if (h->flags & ~(PT_PLAN_VERIFY | PT_PLAN_PROFILE | PT_PLAN_PPP | PT_PLAN_CTX_SWAP |
			 PT_PLAN_CTX_RESTORE | PT_PLAN_FRAMED | PT_PLAN_USER))
		return bad(w, -PT_EFORMAT, "unknown flags 0x%x", h->flags);
	if ((h->flags & PT_PLAN_FRAMED) &&
	    (h->mode != PT_MODE_TRACE || h->encoding != PT_ENC_WITNESS))
		return bad(w, -PT_EFORMAT, "framed calls (flags 0x%x) in mode %u encoding %u",
			   h->flags, h->mode, h->encoding);
	if ((h->flags & (PT_PLAN_CTX_SWAP | PT_PLAN_CTX_RESTORE)) && !h->nr_ctx_words)
		return bad(w, -PT_EFORMAT, "adapting or restored words (flags 0x%x) without "
			   "context words", h->flags);
	if ((h->flags & PT_PLAN_PPP) ?
	    !(h->flags & PT_PLAN_PROFILE) || !h->nr_ppp || h->nr_ppp > PT_PPP_MAX ||
	    h->ppp_size < sizeof(struct pt_ppp_slot) :
	    h->nr_ppp || h->ppp_min || h->ppp_size)
		return bad(w, -PT_EFORMAT, "PPP: flags 0x%x with %u slots of %u bytes from id %lld",
			   h->flags, h->nr_ppp, h->ppp_size, (long long)h->ppp_min);
	switch (h->mode) {
	case PT_MODE_TRACE:
		if (h->encoding != PT_ENC_WITNESS && h->encoding != PT_ENC_BITS)
			return bad(w, -PT_EFORMAT, "trace mode with encoding %u", h->encoding);
		break;
	case PT_MODE_PATHS:
		if (h->encoding != PT_ENC_PATH)
			return bad(w, -PT_EFORMAT, "paths mode with encoding %u", h->encoding);
		break;
	case PT_MODE_EDGES:
		if (h->encoding)
			return bad(w, -PT_EFORMAT, "edges mode with encoding %u", h->encoding);
		break;
	default:
		return bad(w, -PT_EFORMAT, "unknown mode %u", h->mode);
	}
	if (h->mode != PT_MODE_EDGES && h->nr_counters)
		return bad(w, -PT_EFORMAT, "%u counters outside edges mode", h->nr_counters);
	if (!h->addr || !h->len)
		return bad(w, -PT_EFORMAT, "function address or length is zero");
	if (!h->cold_addr != !h->cold_len)
		return bad(w, -PT_EFORMAT, "cold part: address 0x%llx with length %u",
			   (unsigned long long)h->cold_addr, h->cold_len);
	if (!memchr(h->name, 0, sizeof(h->name)) || !h->name[0])
		return bad(w, -PT_EFORMAT, "name is empty or not NUL-terminated");
	if (h->reserved0)
		return bad(w, -PT_EFORMAT, "reserved0 is not zero");
	for (i = 0; i < sizeof(h->reserved) / sizeof(h->reserved[0]); i++)
		if (h->reserved[i])
			return bad(w, -PT_EFORMAT, "reserved[%u] is not zero", i);
	if (!h->nr_sites || !h->nr_actions)
		return bad(w, -PT_EFORMAT, "no sites or no actions (ENTER is required)");
	if (h->site_size < sizeof(struct pt_site) || h->action_size < sizeof(struct pt_action) ||
	    (h->nr_verify && h->verify_size < sizeof(struct pt_verify_site)))
		return bad(w, -PT_EFORMAT, "element sizes %u/%u/%u below this build's",
			   h->site_size, h->action_size, h->verify_size);
	if ((h->flags & PT_PLAN_PROFILE) &&
	    (h->mode != PT_MODE_PATHS || (h->flags & PT_PLAN_VERIFY) || h->nr_implicit))
		return bad(w, -PT_EFORMAT, "a path profile (flags 0x%x) in mode %u with verify "
			   "sites or implicit entries", h->flags, h->mode);
	if (!(h->flags & PT_PLAN_VERIFY) != !h->nr_verify)
		return bad(w, -PT_EFORMAT, "%u verify sites with flags 0x%x", h->nr_verify,
			   h->flags);
	if (h->nr_implicit && (h->implicit_size < sizeof(struct pt_implicit) ||
			       h->mode == PT_MODE_EDGES || h->nr_implicit > (1u << 16)))
		return bad(w, -PT_EFORMAT, "%u implicit entries of %u bytes in mode %u",
			   h->nr_implicit, h->implicit_size, h->mode);
	if (h->reserved1)
		return bad(w, -PT_EFORMAT, "reserved1 is not zero");
	if ((h->nr_ctx_codes || h->nr_ctx_words || h->ctx_word_size) &&
	    (h->mode != PT_MODE_TRACE || h->encoding != PT_ENC_WITNESS || h->nr_ctx_codes < 2 ||
	     (h->nr_ctx_words && h->ctx_word_size < sizeof(struct pt_ctx_word)) ||
	     (!h->nr_ctx_words && h->ctx_word_size)))
		return bad(w, -PT_EFORMAT, "context words: %u codes, %u words of %u bytes in "
			   "mode %u encoding %u", h->nr_ctx_codes, h->nr_ctx_words,
			   h->ctx_word_size, h->mode, h->encoding);
	if ((h->nr_path_codes || h->path_code_size || h->nr_path_ranges || h->path_range_size ||
	     h->nr_paths) &&
	    (h->mode != PT_MODE_PATHS || (h->flags & PT_PLAN_PROFILE) || !h->nr_paths ||
	     !h->nr_path_ranges || h->nr_path_ranges > PT_PATH_CODES_MAX ||
	     h->nr_path_codes > PT_PATH_CODES_MAX ||
	     h->path_range_size < sizeof(struct pt_path_range) ||
	     (h->nr_path_codes && h->path_code_size < sizeof(struct pt_path_code)) ||
	     (!h->nr_path_codes && h->path_code_size)))
		return bad(w, -PT_EFORMAT, "path codes: %u codes of %u bytes, %u ranges of %u "
			   "bytes, %llu paths in mode %u flags 0x%x", h->nr_path_codes,
			   h->path_code_size, h->nr_path_ranges, h->path_range_size,
			   (unsigned long long)h->nr_paths, h->mode, h->flags);
	if ((uint64_t)h->size + (uint64_t)h->nr_sites * h->site_size +
	    (uint64_t)h->nr_actions * h->action_size +
	    (uint64_t)h->nr_verify * h->verify_size +
	    (uint64_t)h->nr_implicit * h->implicit_size +
	    (uint64_t)h->nr_ppp * h->ppp_size +
	    (uint64_t)h->nr_ctx_codes * sizeof(uint32_t) +
	    (uint64_t)h->nr_ctx_words * h->ctx_word_size +
	    (uint64_t)h->nr_path_codes * h->path_code_size +
	    (uint64_t)h->nr_path_ranges * h->path_range_size != h->total_len)
		return bad(w, -PT_EFORMAT, "array sizes do not add up to total_len %u",
			   h->total_len);
	return 0;
}

static int check_action(const struct pt_plan *h, const struct pt_site *s,
			const struct pt_action *a, uint32_t k, int *path_nbits, struct why *w)
{
	if (a->when > PT_WHEN_NOT_TAKEN)
		return bad(w, -PT_EFORMAT, "action %u: unknown when %u", k, a->when);
	if (a->when != PT_WHEN_ALWAYS && s->cond == PT_COND_NONE)
		return bad(w, -PT_EFORMAT, "action %u: conditional at a site without condition",
			   k);
	if (a->nbits > 64)
		return bad(w, -PT_EFORMAT, "action %u: %u bits", k, a->nbits);
	if (a->op == PT_OP_EMIT && h->nr_ctx_codes ? !a->arg || a->arg >= h->nr_ctx_codes :
	    a->op != PT_OP_COUNT && a->arg)
		return bad(w, -PT_EFORMAT, "action %u: arg %u on op %u (%u context codes)", k,
			   a->arg, a->op, h->nr_ctx_codes);
	switch (a->op) {
	case PT_OP_ENTER:
		if (s->region != PT_REGION_MAIN || s->offset || a->when || a->nbits || a->value)
			return bad(w, -PT_EFORMAT, "action %u: ENTER must be plain, at offset 0",
				   k);
		return 1;
	case PT_OP_EMIT:
		if (h->mode != PT_MODE_TRACE || !a->nbits ||
		    (a->nbits < 64 && a->value >> a->nbits))
			return bad(w, -PT_EFORMAT, "action %u: EMIT of %u bits (value 0x%llx) "
				   "in mode %u", k, a->nbits, (unsigned long long)a->value,
				   h->mode);
		return 0;
	case PT_OP_PATH_ADD:
	case PT_OP_PATH_SET:
		if (h->mode != PT_MODE_PATHS || a->nbits)
			return bad(w, -PT_EFORMAT, "action %u: path register op outside paths "
				   "mode or with bits", k);
		return 0;
	case PT_OP_PPP_ADD:
	case PT_OP_PPP_SET:
		if (!(h->flags & PT_PLAN_PPP) || a->nbits)
			return bad(w, -PT_EFORMAT, "action %u: PPP register op outside a PPP "
				   "plan or with bits", k);
		return 0;
	case PT_OP_PATH_EMIT:
		if (h->mode != PT_MODE_PATHS)
			return bad(w, -PT_EFORMAT, "action %u: PATH_EMIT outside paths mode", k);
		if (*path_nbits >= 0 && *path_nbits != a->nbits)
			return bad(w, -PT_EFORMAT, "action %u: PATH_EMIT of %u bits, others %d",
				   k, a->nbits, *path_nbits);
		*path_nbits = a->nbits;
		return 0;
	case PT_OP_COUNT:
		if (h->mode != PT_MODE_EDGES || a->arg >= h->nr_counters || a->nbits || a->value)
			return bad(w, -PT_EFORMAT, "action %u: COUNT of counter %u (%u counters) "
				   "in mode %u", k, a->arg, h->nr_counters, h->mode);
		return 0;
	default:
		return bad(w, -PT_EFORMAT, "action %u: unknown op %u", k, a->op);
	}
}

static int check_body(const struct plan_view *v, struct why *w)
{
	const struct pt_plan *h = &v->hdr;
	uint32_t i, k, next_action = 0, enters = 0;
	int path_nbits = -1, r;

	for (i = 0; i < h->nr_sites; i++) {
		const struct pt_site *s = &v->sites[i];

		if (s->region > PT_REGION_COLD || (s->region == PT_REGION_COLD && !h->cold_len))
			return bad(w, -PT_EFORMAT, "site %u: region %u", i, s->region);
		if (!s->insn_len || s->insn_len > 15 ||
		    (uint64_t)s->offset + s->insn_len > region_len(h, s->region))
			return bad(w, -PT_EFORMAT, "site %u: offset %u + %u bytes outside its part",
				   i, s->offset, s->insn_len);
		if (i && (s->region < v->sites[i - 1].region ||
			  (s->region == v->sites[i - 1].region &&
			   s->offset <= v->sites[i - 1].offset)))
			return bad(w, -PT_EFORMAT, "site %u: not sorted after site %u", i, i - 1);
		if (s->cond > 15 && s->cond != PT_COND_NONE)
			return bad(w, -PT_EFORMAT, "site %u: condition %u", i, s->cond);
		if (s->flags & ~PT_SITE_OPTIMIZABLE)
			return bad(w, -PT_EFORMAT, "site %u: unknown flags 0x%x", i, s->flags);
		if (s->reserved)
			return bad(w, -PT_EFORMAT, "site %u: reserved is not zero", i);
		if (!s->nr_actions || s->first_action != next_action)
			return bad(w, -PT_EFORMAT, "site %u: actions %u+%u, expected to start at %u",
				   i, s->first_action, s->nr_actions, next_action);
		if ((uint64_t)s->first_action + s->nr_actions > h->nr_actions)
			return bad(w, -PT_EFORMAT, "site %u: actions beyond the %u present", i,
				   h->nr_actions);
		next_action += s->nr_actions;
		for (k = s->first_action; k < s->first_action + s->nr_actions; k++) {
			r = check_action(h, s, &v->actions[k], k, &path_nbits, w);
			if (r < 0)
				return r;
			if (r == 1 && (k != s->first_action || enters++))
				return bad(w, -PT_EFORMAT, "action %u: a second ENTER, or ENTER "
					   "not first at its site", k);
		}
	}
	if (next_action != h->nr_actions)
		return bad(w, -PT_EFORMAT, "%u actions belong to no site",
			   h->nr_actions - next_action);
	/*
	 * Edges mode counts activations (a COUNT first at the first
	 * instruction) instead of recording them; plans before that had an
	 * ENTER there, as every other mode has.
	 */
	if (h->mode == PT_MODE_EDGES && !enters &&
	    (!h->nr_sites || v->sites[0].region != PT_REGION_MAIN || v->sites[0].offset ||
	     v->actions[0].op != PT_OP_COUNT || v->actions[0].arg + 1 != h->nr_counters))
		return bad(w, -PT_EFORMAT, "edges mode: no activation counter (COUNT of the last "
			   "counter) first at the function's first instruction");
	if (enters != 1 && h->mode != PT_MODE_EDGES)
		return bad(w, -PT_EFORMAT, "no ENTER action at the function's first instruction");
	/* A PPP slot names a path the PATH_EMITs can count, or none. */
	for (i = 0; i < h->nr_ppp; i++) {
		uint64_t p = v->ppp_slots[i].path;

		if (p != PT_PATH_OTHER && path_nbits >= 0 && path_nbits < 64 &&
		    p >> path_nbits)
			return bad(w, -PT_EFORMAT, "PPP slot %u: path %llu beyond %d-bit numbers",
				   i, (unsigned long long)p, path_nbits);
	}
	for (i = 0; i < h->nr_verify; i++) {
		const struct pt_verify_site *s = &v->verify[i];

		if (s->region > PT_REGION_COLD || s->offset >= region_len(h, s->region))
			return bad(w, -PT_EFORMAT, "verify site %u: region %u offset %u outside",
				   i, s->region, s->offset);
		if (s->reserved0 || s->reserved1)
			return bad(w, -PT_EFORMAT, "verify site %u: reserved is not zero", i);
	}
	return 0;
}

/* Context words: sorted by (row, code), each pair once, words that fit. */
static int check_ctx(const struct plan_view *v, struct why *w)
{
	uint32_t i;

	for (i = 0; i < v->hdr.nr_ctx_words; i++) {
		const struct pt_ctx_word *x = &v->ctx_words[i], *p = x - 1;

		if (!x->code || x->code >= v->hdr.nr_ctx_codes || !x->nbits ||
		    x->nbits > PT_CTX_WORD_MAX_BITS ||
		    (x->nbits < 32 && x->value >> x->nbits) || x->reserved0 || x->reserved1 ||
		    (i && (p->row > x->row || (p->row == x->row && p->code >= x->code))))
			return bad(w, -PT_EFORMAT, "context word %u: row %u code %u, %u bits "
				   "0x%x", i, x->row, x->code, x->nbits, x->value);
		if ((v->hdr.flags & PT_PLAN_CTX_SWAP) && x->row >= PT_CTX_SWAP_ROWS_MAX)
			return bad(w, -PT_EFORMAT, "context word %u: row %u of adapting words "
				   "(at most %u rows)", i, x->row, PT_CTX_SWAP_ROWS_MAX);
	}
	return 0;
}

/*
 * Path codes as the module checks them (kmod/plan.c): codes sorted by
 * path below nr_paths, ranges sorted by lo from 0, words that fit, and a
 * range without an escape listing every number in it. Whether the words
 * are this numbering's classes, prefix-free, is the reader's to check
 * (path_codes_load).
 */
static int check_path_codes(const struct plan_view *v, struct why *w)
{
	const struct pt_plan *h = &v->hdr;
	int nbits = plan_view_path_nbits(v);
	uint32_t i, k = 0;

	/* an escaped number follows in the PATH_EMIT's bits */
	if (h->nr_path_ranges && (nbits < 1 || (nbits < 64 && h->nr_paths > 1ull << nbits)))
		return bad(w, -PT_EFORMAT, "path codes for %llu paths, numbers of %d bits",
			   (unsigned long long)h->nr_paths, nbits);
	for (i = 0; i < h->nr_path_codes; i++) {
		const struct pt_path_code *c = &v->path_codes[i];

		if (c->path >= h->nr_paths || (i && c->path <= v->path_codes[i - 1].path) ||
		    !c->nbits || c->nbits > PT_PATH_CODE_MAX_BITS ||
		    (c->nbits < 32 && c->value >> c->nbits) || c->reserved0 || c->reserved1)
			return bad(w, -PT_EFORMAT, "path code %u: path %llu, %u bits 0x%x", i,
				   (unsigned long long)c->path, c->nbits, c->value);
	}
	for (i = 0; i < h->nr_path_ranges; i++) {
		const struct pt_path_range *r = &v->path_ranges[i];
		uint64_t end = i + 1 < h->nr_path_ranges ? v->path_ranges[i + 1].lo : h->nr_paths;
		uint64_t listed = 0;

		if ((i ? r->lo <= v->path_ranges[i - 1].lo : r->lo != 0) || r->lo >= h->nr_paths ||
		    r->esc_nbits > PT_PATH_CODE_MAX_BITS ||
		    (r->esc_nbits < 32 && r->esc_value >> r->esc_nbits) || r->reserved0 ||
		    r->reserved1)
			return bad(w, -PT_EFORMAT, "path range %u: from %llu, escape of %u bits 0x%x",
				   i, (unsigned long long)r->lo, r->esc_nbits, r->esc_value);
		for (; k < h->nr_path_codes && v->path_codes[k].path < end; k++)
			listed++;
		if (!r->esc_nbits && listed != end - r->lo)
			return bad(w, -PT_EFORMAT, "path range %u: no escape, %llu of its %llu paths "
				   "listed", i, (unsigned long long)listed,
				   (unsigned long long)(end - r->lo));
	}
	return 0;
}

/* Implicit entries: sorted by return address, each once, reserved zero. */
static int check_implicit(const struct plan_view *v, struct why *w)
{
	uint32_t i;

	for (i = 0; i < v->hdr.nr_implicit; i++) {
		const struct pt_implicit *m = &v->implicit[i];

		if (!m->ret || m->reserved || m->caller_id >= PT_IMPLICIT_MAX_ID ||
		    (i && m->ret <= v->implicit[i - 1].ret))
			return bad(w, -PT_EFORMAT, "implicit entry %u: ret 0x%llx caller %u", i,
				   (unsigned long long)m->ret, m->caller_id);
	}
	return 0;
}

/* The smallest plan header a reader takes: up to reserved[], the rest reads as zero. */
#define PLAN_HDR_MIN offsetof(struct pt_plan, nr_ctx_codes)

int plan_parse(const void *blob, size_t len, struct plan_view *v, char *why, size_t whylen)
{
	const uint8_t *b = blob;
	struct why w = { why, whylen };
	/* The blob may sit at any alignment (inside trace.bin): read a copy. */
	const struct pt_plan *h = &v->hdr;
	uint32_t hsize;
	uint64_t off;
	int err;

	memset(v, 0, sizeof(*v));
	if (why && whylen)
		why[0] = 0;
	if (!blob || len < sizeof(uint32_t) * 2)
		return bad(&w, -PT_ETRUNC, "blob of %zu bytes has no header", len);
	memcpy(&hsize, b, sizeof(hsize));
	/* what a plan's header lacks reads as zero */
	if (hsize < PLAN_HDR_MIN)
		return bad(&w, -PT_EFORMAT, "header size %u below %zu", hsize, PLAN_HDR_MIN);
	if (len < hsize)
		return bad(&w, -PT_ETRUNC, "blob of %zu bytes, header says %u", len, hsize);
	if (abi_struct_load(&v->hdr, sizeof(v->hdr), b, hsize))
		return bad(&w, -PT_EFORMAT, "header bytes unknown to ABI %u.%u are not zero",
			   PT_ABI_MAJOR, PT_ABI_MINOR);
	if (h->abi_major != PT_ABI_MAJOR)
		return bad(&w, -PT_EVERSION, "ABI major %u, this build reads %u", h->abi_major,
			   PT_ABI_MAJOR);
	err = check_header(&v->hdr, len, &w);
	if (err)
		return err;
	off = h->size;
	err = copy_elems((void **)&v->sites, b + off, h->nr_sites, h->site_size,
			 sizeof(struct pt_site));
	off += (uint64_t)h->nr_sites * h->site_size;
	if (!err)
		err = copy_elems((void **)&v->actions, b + off, h->nr_actions, h->action_size,
				 sizeof(struct pt_action));
	off += (uint64_t)h->nr_actions * h->action_size;
	if (!err && h->nr_verify)
		err = copy_elems((void **)&v->verify, b + off, h->nr_verify, h->verify_size,
				 sizeof(struct pt_verify_site));
	off += (uint64_t)h->nr_verify * h->verify_size;
	if (!err && h->nr_implicit)
		err = copy_elems((void **)&v->implicit, b + off, h->nr_implicit,
				 h->implicit_size, sizeof(struct pt_implicit));
	off += (uint64_t)h->nr_implicit * h->implicit_size;
	if (!err && h->nr_ppp)
		err = copy_elems((void **)&v->ppp_slots, b + off, h->nr_ppp, h->ppp_size,
				 sizeof(struct pt_ppp_slot));
	off += (uint64_t)h->nr_ppp * h->ppp_size;
	if (!err && h->nr_ctx_codes)
		err = copy_elems((void **)&v->ctx_next, b + off, h->nr_ctx_codes,
				 sizeof(uint32_t), sizeof(uint32_t));
	off += (uint64_t)h->nr_ctx_codes * sizeof(uint32_t);
	if (!err && h->nr_ctx_words)
		err = copy_elems((void **)&v->ctx_words, b + off, h->nr_ctx_words,
				 h->ctx_word_size, sizeof(struct pt_ctx_word));
	off += (uint64_t)h->nr_ctx_words * h->ctx_word_size;
	if (!err && h->nr_path_codes)
		err = copy_elems((void **)&v->path_codes, b + off, h->nr_path_codes,
				 h->path_code_size, sizeof(struct pt_path_code));
	off += (uint64_t)h->nr_path_codes * h->path_code_size;
	if (!err && h->nr_path_ranges)
		err = copy_elems((void **)&v->path_ranges, b + off, h->nr_path_ranges,
				 h->path_range_size, sizeof(struct pt_path_range));
	if (err)
		return bad(&w, err, err == -PT_ENOMEM ? "out of memory" :
			   "element bytes unknown to this build are not zero");
	/* Sizes of this build from here on. */
	v->hdr.size = sizeof(struct pt_plan);
	v->hdr.site_size = sizeof(struct pt_site);
	v->hdr.action_size = sizeof(struct pt_action);
	v->hdr.verify_size = sizeof(struct pt_verify_site);
	v->hdr.implicit_size = h->nr_implicit ? sizeof(struct pt_implicit) : 0;
	v->hdr.ppp_size = h->nr_ppp ? sizeof(struct pt_ppp_slot) : 0;
	v->hdr.ctx_word_size = h->nr_ctx_words ? sizeof(struct pt_ctx_word) : 0;
	v->hdr.path_code_size = h->nr_path_codes ? sizeof(struct pt_path_code) : 0;
	v->hdr.path_range_size = h->nr_path_ranges ? sizeof(struct pt_path_range) : 0;
	err = check_implicit(v, &w);
	if (!err)
		err = check_ctx(v, &w);
	if (!err)
		err = check_path_codes(v, &w);
	return err ? err : check_body(v, &w);
}

int plan_implicit_has(const struct pt_implicit *m, uint32_t n, uint64_t ret, uint32_t caller_id)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m[mid].ret == ret)
			return m[mid].caller_id == caller_id;
		if (m[mid].ret < ret)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

void plan_view_free(struct plan_view *v)
{
	free(v->implicit);
	free(v->ppp_slots);
	free(v->ctx_next);
	free(v->ctx_words);
	free(v->path_codes);
	free(v->path_ranges);
	free(v->sites);
	free(v->actions);
	free(v->verify);
	memset(v, 0, sizeof(*v));
}

int plan_view_path_nbits(const struct plan_view *v)
{
	uint32_t k;

	for (k = 0; k < v->hdr.nr_actions; k++)
		if (v->actions[k].op == PT_OP_PATH_EMIT)
			return v->actions[k].nbits;
	return -1;
}
