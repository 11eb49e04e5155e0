// SPDX-License-Identifier: GPL-2.0
/* The kernel's online subpath profile, merged over CPUs; see osp_live.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <pathtrace/error.h>

#include "osp_live.h"

static int same(const struct pt_subpath *a, const struct pt_subpath *b)
{
	return a->len == b->len && !memcmp(a->func, b->func, a->len * sizeof(a->func[0])) &&
	       !memcmp(a->path, b->path, a->len * sizeof(a->path[0]));
}

static int by_estimate(const void *a, const void *b)
{
	const struct osp_estimate *x = a, *y = b;

	if (x->estimate != y->estimate)
		return x->estimate < y->estimate ? 1 : -1;
	return x->sp.len < y->sp.len ? -1 : x->sp.len > y->sp.len;
}

/* Adds one CPU's entry: a subpath sampled on several CPUs is one estimate. */
static int add(struct osp_live *o, const struct pt_subpath *s, uint32_t *cap)
{
	double scale = ldexp(PT_OSP_LENGTHS, (int)s->tau_log2);
	struct osp_estimate *e;
	uint32_t i;

	for (i = 0; i < o->n && !same(&o->e[i].sp, s); i++)
		;
	if (i == o->n) {
		if (o->n == *cap) {
			uint32_t ncap = *cap ? *cap * 2 : 256;
			struct osp_estimate *ne = realloc(o->e, ncap * sizeof(*ne));

			if (!ne)
				return -PT_ENOMEM;
			o->e = ne;
			*cap = ncap;
		}
		memset(&o->e[i], 0, sizeof(o->e[i]));
		o->e[i].sp = *s;
		o->e[i].sp.count = 0;
		o->n++;
	}
	e = &o->e[i];
	e->sp.count += s->count;
	e->estimate += (double)s->count * scale;
	/* variance of count * scale: count * scale^2, summed; stderr_ holds it until the end */
	e->stderr_ += (double)s->count * scale * scale;
	if (scale > e->scale)
		e->scale = scale;
	return 0;
}

int osp_live_read(int fd, struct osp_live *out)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	struct pt_subpath *buf = calloc(PT_OSP_MAX_ENTRIES, sizeof(*buf));
	uint32_t cap = 0, i;
	long cpu;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!buf)
		return -PT_ENOMEM;
	for (cpu = 0; cpu < ncpu && !err; cpu++) {
		struct pt_subpaths_read r;

		memset(&r, 0, sizeof(r));
		r.size = sizeof(r);
		r.cpu = (uint32_t)cpu;
		r.entries = (uint64_t)(uintptr_t)buf;
		r.max = PT_OSP_MAX_ENTRIES;
		r.entry_size = sizeof(*buf);
		if (ioctl(fd, PT_IOC_SUBPATHS_READ, &r) < 0) {
			if (errno == ENODATA)
				err = -PT_ENOENT;
			else if (errno != EINVAL && errno != ENXIO)	/* offline: skip */
				err = -PT_EIO;
			continue;
		}
		out->cpus++;
		out->capacity = r.capacity;
		out->positions += r.positions;
		out->samples += r.samples;
		out->cut += r.cut;
		if (r.tau_log2 > out->tau_log2_max)
			out->tau_log2_max = r.tau_log2;
		for (i = 0; i < r.n && !err; i++)
			err = add(out, &buf[i], &cap);
	}
	free(buf);
	if (err) {
		osp_live_free(out);
		return err;
	}
	for (i = 0; i < out->n; i++)
		out->e[i].stderr_ = sqrt(out->e[i].stderr_);
	qsort(out->e, out->n, sizeof(*out->e), by_estimate);
	return 0;
}

static const char *name_of(const struct pt_func_info *info, int n, uint32_t id)
{
	int i;

	for (i = 0; i < n; i++)
		if (info[i].func_id == id)
			return info[i].name;
	return "?";
}

void osp_live_print(FILE *fp, const struct osp_live *o, const struct pt_func_info *info, int n,
		    uint32_t k)
{
	uint32_t i, j;

	for (i = 0; i < o->n && i < k; i++) {
		const struct osp_estimate *e = &o->e[i];

		fprintf(fp, "%12.0f ±%-8.0f %u:", e->estimate, e->stderr_, e->sp.len);
		for (j = 0; j < e->sp.len && j < PT_OSP_MAX_LEN; j++)
			fprintf(fp, " %s:%" PRIu64, name_of(info, n, e->sp.func[j]),
				(uint64_t)e->sp.path[j]);
		fputc('\n', fp);
	}
}

void osp_live_free(struct osp_live *o)
{
	free(o->e);
	memset(o, 0, sizeof(*o));
}
