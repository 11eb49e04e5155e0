// SPDX-License-Identifier: GPL-2.0
/* Closed callees for entry witnesses (entry_witness.h). */
#include <stdlib.h>

#include <pathtrace/entry_witness.h>
#include <pathtrace/error.h>

int entry_closed(uint32_t n, const uint32_t *tail_start, const uint32_t *tail_to,
		 uint8_t *closed)
{
	uint32_t i, k;
	int changed = 1;

	for (i = 0; i < n; i++) {
		closed[i] = 1;
		for (k = tail_start[i]; k < tail_start[i + 1]; k++)
			if (tail_to[k] != ENTRY_TAIL_OPEN && tail_to[k] >= n)
				return -PT_EINVAL;
	}
	/* open spreads backwards along tail calls until nothing changes */
	while (changed) {
		changed = 0;
		for (i = 0; i < n; i++) {
			for (k = tail_start[i]; closed[i] && k < tail_start[i + 1]; k++) {
				if (tail_to[k] == ENTRY_TAIL_OPEN || !closed[tail_to[k]]) {
					closed[i] = 0;
					changed = 1;
				}
			}
		}
	}
	return 0;
}

uint32_t entry_index_of(uint32_t n, const uint64_t *addr, uint64_t a)
{
	uint32_t i;

	for (i = 0; a && i < n; i++)
		if (addr[i] == a)
			return i;
	return ENTRY_TAIL_OPEN;
}

int entry_closed_cfgs(uint32_t n, const struct cfg *const *c, const uint64_t *addr,
		      uint8_t *closed)
{
	uint32_t *start = malloc(((size_t)n + 1) * sizeof(*start)), *to = NULL, i, e, k = 0;
	uint64_t target;
	size_t cap = 0;
	int err;

	if (!start)
		return -PT_ENOMEM;
	for (i = 0; i < n; i++)
		cap += c[i]->nedges;
	to = malloc((cap + 1) * sizeof(*to));
	if (!to) {
		free(start);
		return -PT_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		start[i] = k;
		for (e = 0; e < c[i]->nedges; e++)
			if (cfg_tail_call(c[i], e, &target))
				to[k++] = entry_index_of(n, addr, target);
	}
	start[n] = k;
	err = entry_closed(n, start, to, closed);
	free(start);
	free(to);
	return err;
}

void entry_witnessed_calls(const struct cfg *c, uint32_t n, const uint64_t *addr,
			   const uint8_t *closed, uint8_t *ewit)
{
	uint32_t b, j;

	for (b = 0; b <= c->nblocks; b++)
		ewit[b] = 0;
	for (b = 0; b < c->nblocks; b++) {
		const struct cfg_block *bl = &c->blocks[b];
		const struct cfg_insn *in;

		if (!(bl->flags & CFG_BF_CALL) || !bl->ninsn)
			continue;
		in = &c->insns[bl->first_insn + bl->ninsn - 1];
		if (in->kind != CFG_I_CALL || !in->target)
			continue;
		j = entry_index_of(n, addr, in->target);
		ewit[b] = j != ENTRY_TAIL_OPEN && closed[j];
	}
}
