// SPDX-License-Identifier: GPL-2.0
/*
 * pr_bind - chooses a traced function's decoder from its plan (mode and
 * encoding recorded in trace.bin) and builds the decoder's tables.
 *
 * Path mode: the model (pathnum) depends only on the graph; the plan's
 * PATH_EMIT width is checked against it. Trace mode (witness or bit
 * codes) needs the plan's per-edge emissions turned back into an
 * encoding; until a decoder for it is linked in, such functions are
 * refused with -PT_ENOTSUP rather than regenerated wrongly.
 */
#include <stddef.h>
#include <string.h>

#include <pathtrace/error.h>

#include "decode_paths.h"
#include "pathtrace_abi.h"
#include "out.h"

/*
 * The width of the plan's PT_OP_PATH_EMIT actions: -1 if it has none,
 * -PT_EFORMAT (as a negative below -1) if they disagree or the blob is
 * malformed. Every size is checked against the blob.
 */
static int plan_path_width(const uint8_t *blob, uint32_t len, int *width)
{
	struct pt_plan p;
	uint64_t off, i;

	*width = -1;
	if (len < offsetof(struct pt_plan, name))
		return -PT_ETRUNC;
	memset(&p, 0, sizeof(p));
	memcpy(&p, blob, len < sizeof(p) ? len : sizeof(p));
	if (p.size < offsetof(struct pt_plan, name) || p.size > len ||
	    p.action_size < sizeof(struct pt_action) || p.site_size < 8)
		return -PT_EFORMAT;
	off = (uint64_t)p.size + (uint64_t)p.nr_sites * p.site_size;
	if (off > len || (uint64_t)p.nr_actions * p.action_size > len - off)
		return -PT_EFORMAT;
	for (i = 0; i < p.nr_actions; i++) {
		struct pt_action a;

		memcpy(&a, blob + off + i * p.action_size, sizeof(a));
		if (a.op != PT_OP_PATH_EMIT)
			continue;
		if (*width >= 0 && *width != a.nbits)
			return -PT_EFORMAT;
		*width = a.nbits;
	}
	return 0;
}

int pr_bind_decoder(struct pr_func *f, const uint8_t *plan, uint32_t plan_len)
{
	struct pathnum *pn = NULL;
	int width, err;

	if (f->mode == PT_MODE_PATHS && f->encoding == PT_ENC_PATH) {
		err = plan_path_width(plan, plan_len, &width);
		if (err)
			return err;
		err = decode_paths_model(&f->g, width, &pn);
		if (err)
			return err;
		f->ops = &regen_decode_paths_ops;
		f->model = pn;
		f->model_free = decode_paths_model_free;
		return 0;
	}
	return -PT_ENOTSUP;
}
