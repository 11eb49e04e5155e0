// SPDX-License-Identifier: GPL-2.0
/*
 * quiet_calls - the bounded proof that a direct callee cannot run traced
 * code before it returns (see pathtrace/quiet_calls.h for the rules).
 *
 * Each function looked at becomes a node: its verdict and the callees the
 * proof followed. A node still being examined when the search meets it
 * again (recursion) counts as loud, which is conservative and keeps every
 * remembered verdict independent of the path that found it.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/quiet_calls.h>

/* Bounds: deeper or wider than this is loud (unproven). */
#define QUIET_MAX_DEPTH 8
#define QUIET_MAX_NODES 20000

enum { Q_BUSY, Q_QUIET, Q_LOUD };

/* Why a node is loud (quiet_call_why): at is an instruction, or a callee for Q_VIA..Q_BOUNDS. */
enum {
	Q_WHY_NONE,
	Q_TRACED,		/* the function is traced */
	Q_INDIRECT_CALL,
	Q_INDIRECT_JUMP,	/* an indirect tail call or jump */
	Q_WARN,
	Q_FIXUP,		/* an instruction with an exception-table fixup */
	Q_UNREADABLE,		/* no symbol starts there, its code is unreadable or refused */
	Q_VIA,			/* a callee is loud */
	Q_RECURSION,		/* a callee is being examined (recursion) */
	Q_BOUNDS,		/* a callee past the search's bounds */
};

static const char *const q_why[] = {
	[Q_WHY_NONE] = "no reason recorded",
	[Q_TRACED] = "traced",
	[Q_INDIRECT_CALL] = "an indirect call",
	[Q_INDIRECT_JUMP] = "an indirect jump or tail call",
	[Q_WARN] = "a WARN",
	[Q_FIXUP] = "an exception-table fixup",
	[Q_UNREADABLE] = "its code is unknown or refused",
	[Q_VIA] = "calls a loud function",
	[Q_RECURSION] = "recursion",
	[Q_BOUNDS] = "past the search's bounds",
};

struct qnode {
	uint64_t addr;
	int state;
	uint32_t first, n;	/* callees in q->callees */
	uint8_t why;		/* Q_LOUD: Q_TRACED .. Q_BOUNDS */
	uint64_t at;
};

struct quiet_calls {
	struct klive *k;
	uint64_t *traced;
	size_t ntraced;
	uint64_t sched_lo, sched_hi;	/* .sched.text */
	struct qnode *nodes;
	uint32_t nnodes, capnodes;
	uint32_t *slot;			/* open addressing: node index + 1, 0 empty */
	uint32_t nslots;
	uint64_t *callees;
	uint32_t ncallees, capcallees;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int quiet_calls_open(struct klive *k, const uint64_t *traced, size_t ntraced,
		     struct quiet_calls **out)
{
	const struct ksyms *ks = klive_ksyms(k);
	struct quiet_calls *q = calloc(1, sizeof(*q));

	*out = NULL;
	if (!q)
		return -PT_ENOMEM;
	q->k = k;
	q->nslots = 1u << 16;
	q->slot = calloc(q->nslots, sizeof(*q->slot));
	q->traced = malloc((ntraced + 1) * sizeof(*q->traced));
	if (!q->slot || !q->traced) {
		quiet_calls_close(q);
		return -PT_ENOMEM;
	}
	if (ntraced)
		memcpy(q->traced, traced, ntraced * sizeof(*traced));
	q->ntraced = ntraced;
	qsort(q->traced, ntraced, sizeof(*q->traced), cmp_u64);
	q->sched_lo = ksyms_addr(ks, "__sched_text_start");
	q->sched_hi = ksyms_addr(ks, "__sched_text_end");
	*out = q;
	return 0;
}

void quiet_calls_close(struct quiet_calls *q)
{
	if (!q)
		return;
	free(q->traced);
	free(q->nodes);
	free(q->slot);
	free(q->callees);
	free(q);
}

static uint32_t hash(uint64_t a, uint32_t nslots)
{
	return (uint32_t)((a * 0x9e3779b97f4a7c15ull) >> 40) & (nslots - 1);
}

static struct qnode *find(const struct quiet_calls *q, uint64_t addr)
{
	uint32_t h = hash(addr, q->nslots);

	while (q->slot[h]) {
		if (q->nodes[q->slot[h] - 1].addr == addr)
			return &q->nodes[q->slot[h] - 1];
		h = (h + 1) & (q->nslots - 1);
	}
	return NULL;
}

/* A new node for addr (the table holds at most QUIET_MAX_NODES < nslots / 2). */
static int add_node(struct quiet_calls *q, uint64_t addr, uint32_t *idx)
{
	uint32_t h = hash(addr, q->nslots);

	if (q->nnodes == q->capnodes) {
		uint32_t cap = q->capnodes ? q->capnodes * 2 : 256;
		struct qnode *n = realloc(q->nodes, cap * sizeof(*n));

		if (!n)
			return -PT_ENOMEM;
		q->nodes = n;
		q->capnodes = cap;
	}
	while (q->slot[h])
		h = (h + 1) & (q->nslots - 1);
	q->nodes[q->nnodes] = (struct qnode){ .addr = addr, .state = Q_BUSY };
	q->slot[h] = ++q->nnodes;
	*idx = q->nnodes - 1;
	return 0;
}

static int push_callee(struct quiet_calls *q, uint64_t addr)
{
	if (q->ncallees == q->capcallees) {
		uint32_t cap = q->capcallees ? q->capcallees * 2 : 1024;
		uint64_t *n = realloc(q->callees, cap * sizeof(*n));

		if (!n)
			return -PT_ENOMEM;
		q->callees = n;
		q->capcallees = cap;
	}
	q->callees[q->ncallees++] = addr;
	return 0;
}

static int is_traced(const struct quiet_calls *q, uint64_t addr)
{
	return bsearch(&addr, q->traced, q->ntraced, sizeof(addr), cmp_u64) != NULL;
}

/* Index of the last text symbol starting at or below addr, or KSYMS_NONE. */
static uint32_t sym_below(const struct ksyms *ks, uint64_t addr)
{
	uint32_t lo = 0, hi = ksyms_count(ks);

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ksyms_get(ks, mid)->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : KSYMS_NONE;
}

/* Index of the text symbol starting exactly at addr, or KSYMS_NONE. */
static uint32_t sym_at(const struct ksyms *ks, uint64_t addr)
{
	uint32_t i = sym_below(ks, addr);

	return i != KSYMS_NONE && ksyms_get(ks, i)->addr == addr ? i : KSYMS_NONE;
}

/*
 * The callees of the function at addr into q->callees (from *first on):
 * 0 when its code allows quiet, 1 when the code itself is loud (*why and
 * *at say why and where), or a negative error.
 */
static int scan_code(struct quiet_calls *q, uint64_t addr, uint8_t *why, uint64_t *at)
{
	const struct ksyms *ks = klive_ksyms(q->k);
	uint32_t i = sym_at(ks, addr);
	struct cfg_input in;
	struct cfg c;
	const char *tag;
	char detail[160];
	int err, loud = 0;

	*why = Q_UNREADABLE;
	*at = addr;
	if (i == KSYMS_NONE)
		return 1;
	err = klive_input_sym(q->k, i, &in, &tag, detail, sizeof(detail));
	if (err)
		return err == -PT_ENOMEM ? err : 1;
	err = cfg_build(&in, &c);
	if (err) {
		cfg_free(&c);
		return err == -PT_ENOMEM ? err : 1;
	}
	for (i = 0; i < c.ninsns && !loud && !err; i++) {
		const struct cfg_insn *ins = &c.insns[i];

		*at = ins->addr;
		if (ins->flags & CFG_IF_FAULT_FIXUP) {
			loud = 1;
			*why = Q_FIXUP;
			continue;
		}
		switch (ins->kind) {
		case CFG_I_CALL_INDIRECT:
			loud = 1;
			*why = Q_INDIRECT_CALL;
			break;
		case CFG_I_WARN:
			loud = 1;
			*why = Q_WARN;
			break;
		case CFG_I_CALL:
			err = push_callee(q, ins->target);
			break;
		case CFG_I_TAIL_CALL:
			if (!ins->target) {
				loud = 1;
				*why = Q_INDIRECT_JUMP;
			} else {
				err = push_callee(q, ins->target);
			}
			break;
		case CFG_I_JCC:
			if ((ins->flags & CFG_IF_LEAVES) && !cfg_is_return_thunk(ins->target_name)) {
				if (!ins->target) {
					loud = 1;
					*why = Q_INDIRECT_JUMP;
				} else {
					err = push_callee(q, ins->target);
				}
			}
			break;
		default:
			/*
			 * Plain, jumps, static keys, fentry, returns; and the
			 * noreturn ones (a noreturn call, BUG): the caller never
			 * resumes after them, so nothing can be misplaced in it.
			 */
			break;
		}
	}
	cfg_free(&c);
	return err ? err : loud;
}

static int quiet_at(struct quiet_calls *q, uint64_t addr, unsigned int depth)
{
	struct qnode *nd = find(q, addr);
	uint32_t idx, first, n, j;
	uint8_t why;
	uint64_t at;
	int r;

	if (nd)
		return nd->state == Q_QUIET;	/* busy: recursion, taken as loud */
	if (q->nnodes >= QUIET_MAX_NODES || depth > QUIET_MAX_DEPTH)
		return 0;
	r = add_node(q, addr, &idx);
	if (r)
		return r;
	if (is_traced(q, addr)) {
		q->nodes[idx].state = Q_LOUD;
		q->nodes[idx].why = Q_TRACED;
		q->nodes[idx].at = addr;
		return 0;
	}
	if (q->sched_lo && addr >= q->sched_lo && addr < q->sched_hi) {
		q->nodes[idx].state = Q_QUIET;
		return 1;
	}
	first = q->ncallees;
	r = scan_code(q, addr, &why, &at);
	if (r < 0)
		return r;
	n = q->ncallees - first;
	q->nodes[idx].first = first;
	q->nodes[idx].n = n;
	if (r) {
		q->nodes[idx].state = Q_LOUD;
		q->nodes[idx].why = why;
		q->nodes[idx].at = at;
		return 0;
	}
	for (j = 0; j < n; j++) {
		uint64_t callee = q->callees[first + j];

		r = quiet_at(q, callee, depth + 1);
		if (r <= 0) {
			const struct qnode *cn = find(q, callee);

			q->nodes[idx].state = Q_LOUD;
			q->nodes[idx].why = !cn ? Q_BOUNDS : cn->state == Q_BUSY ? Q_RECURSION : Q_VIA;
			q->nodes[idx].at = callee;
			return r;
		}
	}
	q->nodes[idx].state = Q_QUIET;
	return 1;
}

int quiet_call(struct quiet_calls *q, uint64_t target)
{
	return target ? quiet_at(q, target, 0) : 0;
}

/* "name+0xoff" of the text symbol holding a, or its address. */
static void where(const struct ksyms *ks, uint64_t a, char *buf, size_t len)
{
	uint32_t i = sym_below(ks, a);
	const struct ksym *s = i != KSYMS_NONE ? ksyms_get(ks, i) : NULL;

	if (s && a - s->addr < s->size)
		snprintf(buf, len, "%s+0x%" PRIx64, s->name, a - s->addr);
	else
		snprintf(buf, len, "0x%" PRIx64, a);
}

/* Appends to buf (len bytes, *used of them taken), truncating. */
static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= len - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used = *used + (size_t)n < len - 1 ? *used + (size_t)n : len - 1;
}

int quiet_call_why(struct quiet_calls *q, uint64_t target, char *buf, size_t len)
{
	const struct ksyms *ks = klive_ksyms(q->k);
	const struct qnode *nd = target ? find(q, target) : NULL;
	unsigned int hops = 0;
	size_t used = 0;
	char w[160];

	if (!len)
		return -PT_EINVAL;
	buf[0] = 0;
	if (!nd)
		return -PT_ENOENT;
	if (nd->state == Q_QUIET)
		return 1;
	/* callee -> its loud callee -> ...: the reason where the chain ends */
	for (;;) {
		where(ks, nd->addr, w, sizeof(w));
		append(buf, len, &used, "%s%s", hops ? " -> " : "", w);
		if (nd->why != Q_VIA || ++hops > QUIET_MAX_DEPTH || !find(q, nd->at))
			break;
		nd = find(q, nd->at);
	}
	append(buf, len, &used, ": %s", q_why[nd->why]);
	if (nd->why != Q_TRACED && nd->why != Q_UNREADABLE && nd->why != Q_WHY_NONE) {
		where(ks, nd->at, w, sizeof(w));
		append(buf, len, &used, " at %s", w);
	}
	return 0;
}

int quiet_calls_mark(struct quiet_calls *q, struct cfg *c)
{
	uint32_t b;
	int marked = 0, r;

	for (b = 0; b < c->nblocks; b++) {
		struct cfg_block *bl = &c->blocks[b];
		const struct cfg_insn *last;

		if (!(bl->flags & CFG_BF_CALL) || !bl->ninsn)
			continue;
		last = &c->insns[bl->first_insn + bl->ninsn - 1];
		if (last->kind != CFG_I_CALL)
			continue;
		r = quiet_call(q, last->target);
		if (r < 0)
			return r;
		if (r) {
			bl->flags = (bl->flags & ~CFG_BF_CALL) | CFG_BF_QUIET_CALL;
			marked++;
		}
	}
	return marked;
}

int quiet_call_reaches(struct quiet_calls *q, uint64_t target, uint64_t fn)
{
	uint32_t *stack, top = 0, i, j;
	uint8_t *seen;
	int found = 0;

	if (target == fn)
		return 1;
	if (!find(q, target))
		return 0;
	stack = malloc((q->nnodes + 1) * sizeof(*stack));
	seen = calloc(q->nnodes + 1, 1);
	if (!stack || !seen) {
		free(stack);
		free(seen);
		return 1;	/* cannot tell: say it may, which refuses */
	}
	i = (uint32_t)(find(q, target) - q->nodes);
	stack[top++] = i;
	seen[i] = 1;
	while (top && !found) {
		const struct qnode *nd = &q->nodes[stack[--top]];

		for (j = 0; j < nd->n && !found; j++) {
			uint64_t a = q->callees[nd->first + j];
			const struct qnode *cn = find(q, a);

			if (a == fn) {
				found = 1;
			} else if (cn && !seen[cn - q->nodes]) {
				seen[cn - q->nodes] = 1;
				stack[top++] = (uint32_t)(cn - q->nodes);
			}
		}
	}
	free(stack);
	free(seen);
	return found;
}
