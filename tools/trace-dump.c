// SPDX-License-Identifier: GPL-2.0
/*
 * trace-dump - a human dump of a trace.bin: sections, functions (CFG and
 * plan sizes), pages per CPU, loss totals, a record summary, and with
 * --records every record, with --streams every owner's stream.
 *
 *   trace-dump [--records] [--streams] FILE
 *
 * The last line is always "summary: ..." (tests grep it). Exit status 0
 * for a complete valid file, 1 when the reader reported a problem (the
 * valid prefix is still dumped), 2 for a bad command line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "streams.h"

static const char *rec_name(uint16_t type)
{
	static const char *names[] = {
		[PT_REC_OWNER] = "OWNER", [PT_REC_BITS] = "BITS", [PT_REC_ENTER] = "ENTER",
		[PT_REC_BLOCK] = "BLOCK", [PT_REC_LOSS] = "LOSS", [PT_REC_COUNTERS] = "COUNTERS",
		[PT_REC_ENTER_AT] = "ENTER_AT", [PT_REC_PATHS] = "PATHS", [PT_REC_FORK] = "FORK",
		[PT_REC_EXEC] = "EXEC",
	};

	return type < sizeof(names) / sizeof(names[0]) && names[type] ? names[type] : "?";
}

static const char *loss_name(uint32_t kind)
{
	switch (kind) {
	case PT_LOSS_OVERRUN:
		return "overrun";
	case PT_LOSS_MISSED:
		return "missed";
	case PT_LOSS_STATE:
		return "state";
	case TR_LOSS_CORRUPT:
		return "corrupt-input";
	default:
		return "?";
	}
}

static void owner_name(uint64_t owner, char *buf, size_t n)
{
	static const char *kinds[] = { "task", "idle", "softirq", "hardirq", "nmi" };
	uint32_t k = PT_OWNER_KIND(owner);

	if (k < 5)
		snprintf(buf, n, "%s/%u", kinds[k], PT_OWNER_ID(owner));
	else
		snprintf(buf, n, "0x%" PRIx64, owner);
}

static void dump_function(const struct tf_function *fn)
{
	struct cfg c;
	int err;

	printf("FUNCTION id=%u name=%.*s addr=0x%" PRIx64 " len=%u", fn->func_id,
	       (int)fn->name_len, fn->name, fn->addr, fn->len);
	if (fn->cold_len)
		printf(" cold=0x%" PRIx64 "+%u", fn->cold_addr, fn->cold_len);
	if (fn->plan_len >= sizeof(struct pt_plan)) {
		struct pt_plan p;

		memcpy(&p, fn->plan, sizeof(p));
		printf(" plan=%u bytes (mode %u encoding %u, %u sites, %u actions, %u verify)",
		       fn->plan_len, p.mode, p.encoding, p.nr_sites, p.nr_actions, p.nr_verify);
	} else {
		printf(" plan=%u bytes", fn->plan_len);
	}
	if (!fn->cfg_len) {
		printf(" cfg=none\n");
		return;
	}
	err = cfg_blob_decode(fn->cfg, fn->cfg_len, &c);
	if (err) {
		printf(" cfg=INVALID (%s)\n", pt_strerror(err));
		return;
	}
	printf(" cfg=%u blocks %u insns %u edges\n", c.nblocks, c.ninsns, c.nedges);
	cfg_blob_free(&c);
}

static void dump_record(const struct tr_records *rs, const struct tr_rec *r)
{
	const uint64_t *b = tr_body(rs, r);
	char on[48];

	printf("  cpu%u ts=%" PRIu64 " %s%s", r->cpu, r->ts, rec_name(r->type),
	       r->synthetic ? "(reader)" : "");
	switch (r->type) {
	case PT_REC_OWNER:
		owner_name(b[0], on, sizeof(on));
		printf(" %s stamp=%" PRIu64, on, b[1]);
		break;
	case PT_REC_BITS:
		if (r->arg == PT_BITS_PARTIAL) {
			printf(" partial=%" PRIu64, b[0]);
		} else {
			uint32_t i;

			printf(" n=%u ", r->arg);
			for (i = 0; i < r->arg && i < 128; i++)
				putchar('0' + (int)((b[i / 64] >> (i % 64)) & 1));
			if (r->arg > 128)
				printf("...");
		}
		break;
	case PT_REC_ENTER:
		printf(" func=%u ret=0x%" PRIx64, r->arg, b[0]);
		break;
	case PT_REC_BLOCK:
		printf(" func=%u block=%u", r->arg, (uint32_t)b[0]);
		break;
	case PT_REC_LOSS:
		printf(" %s count=%" PRIu64 " func=%u", loss_name(r->arg), b[0], (uint32_t)b[1]);
		if (r->nwords >= 4 && r->arg == PT_LOSS_MISSED)
			printf(" since=%" PRIu64 " until=%" PRIu64, b[2], b[3]);
		break;
	case PT_REC_FORK:
		printf(" child=0x%" PRIx64 " stamp=%" PRIu64 " pending=%u", b[0], b[1], r->pending);
		break;
	case PT_REC_EXEC:
		printf(" old_owner=0x%" PRIx64 " pending=%u", b[0], r->pending);
		break;
	case PT_REC_COUNTERS:
		printf(" func=%u counters=%u", r->arg, r->nwords);
		break;
	case PT_REC_PATHS:
		printf(" func=%u lost=%" PRIu64 " overflow=%" PRIu64 " paths=%u", r->arg, b[0], b[1],
		       (r->nwords - 2) / 2);
		break;
	}
	putchar('\n');
}

static void dump_streams(const struct regen_streams *ss)
{
	uint32_t i, k;
	char on[48];

	for (i = 0; i < ss->nstreams; i++) {
		const struct regen_stream *s = &ss->streams[i];

		owner_name(s->owner, on, sizeof(on));
		printf("STREAM %s bits=%" PRIu64 " markers=%u\n", on, s->nbits, s->nmarkers);
		for (k = 0; k < s->nmarkers; k++) {
			const struct regen_marker *m = &s->markers[k];
			uint64_t stamp;
			uint32_t cpu;

			regen_where(s, k, &cpu, &stamp);
			printf("  @%" PRIu64 " cpu%u stamp=%" PRIu64 " ", m->pos, cpu, stamp);
			switch (m->type) {
			case REGEN_M_ENTER:
				printf("ENTER func=%u ret=0x%" PRIx64 "\n", m->func, m->value);
				break;
			case REGEN_M_BLOCK:
				printf("BLOCK func=%u block=%u\n", m->func, m->arg);
				break;
			case REGEN_M_LOSS:
				printf("LOSS %s count=%" PRIu64 "\n", loss_name(m->arg), m->value);
				break;
			case REGEN_M_PARTIAL:
				printf("PARTIAL %" PRIu64 "\n", m->value);
				break;
			case REGEN_M_HIDDEN:
				printf("HIDDEN %s count=%" PRIu64 "\n", loss_name(m->arg), m->value);
				break;
			}
		}
	}
}

int main(int argc, char **argv)
{
	int records = 0, streams = 0, i, err, status;
	const char *path = NULL;
	struct tracefile tf;
	struct tr_records rs;
	struct regen_streams ss;
	uint64_t by_type[16] = { 0 }, cpus_with_pages = 0, *pages_per_cpu;
	uint32_t k, max_cpu = 0;
	size_t r;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return puts("usage: trace-dump [--records] [--streams] FILE"), 0;
		if (!strcmp(argv[i], "--records"))
			records = 1;
		else if (!strcmp(argv[i], "--streams"))
			streams = 1;
		else if (argv[i][0] == '-' || path)
			return fprintf(stderr, "usage: trace-dump [--records] [--streams] FILE\n"), 2;
		else
			path = argv[i];
	}
	if (!path)
		return fprintf(stderr, "usage: trace-dump [--records] [--streams] FILE\n"), 2;
	err = tracefile_read(path, &tf);
	status = err ? 1 : 0;
	if (err)
		fprintf(stderr, "trace-dump: %s: %s at offset %" PRIu64 ": %s\n", path,
			pt_strerror(err), tf.err_off, tf.err_msg);
	if (err == -PT_ENOMEM || err == -PT_EIO || !tf.buf) {
		tracefile_free(&tf);
		return 1;
	}
	printf("trace.bin %u.%u, %zu bytes%s\n", tf.major, tf.minor, tf.size,
	       tf.complete ? "" : " (INCOMPLETE)");
	if (tf.has_system)
		printf("SYSTEM release=%s cpus=%u page_size=%u start_ns=%" PRIu64 "\n", tf.release,
		       tf.nr_cpus, tf.page_size, tf.start_ns);
	for (k = 0; k < tf.nfuncs; k++)
		dump_function(&tf.funcs[k]);
	for (k = 0; k < tf.npages; k++)
		if (tf.pages[k].cpu + 1 > max_cpu)
			max_cpu = tf.pages[k].cpu + 1;
	pages_per_cpu = calloc(max_cpu + 1, sizeof(*pages_per_cpu));
	if (!pages_per_cpu)
		return 1;
	for (k = 0; k < tf.npages; k++)
		pages_per_cpu[tf.pages[k].cpu] += tf.pages[k].nr_pages;
	for (k = 0; k < max_cpu; k++) {
		if (pages_per_cpu[k])
			cpus_with_pages++;
		printf("PAGES cpu%u pages=%" PRIu64 "\n", k, pages_per_cpu[k]);
	}
	if (tf.has_loss)
		printf("LOSS dropped=%" PRIu64 " missed=%" PRIu64 "\n", tf.dropped, tf.missed);
	if (tf.unknown_sections)
		printf("(%u sections of unknown ids skipped)\n", tf.unknown_sections);

	memset(&rs, 0, sizeof(rs));
	memset(&ss, 0, sizeof(ss));
	err = tr_decode_tracefile(&rs, &tf);
	if (err) {
		fprintf(stderr, "trace-dump: pages: %s\n", pt_strerror(err));
		status = 1;
	}
	if (records)
		printf("RECORDS\n");
	for (r = 0; r < rs.n; r++) {
		if (rs.recs[r].type < 16)
			by_type[rs.recs[r].type]++;
		if (records)
			dump_record(&rs, &rs.recs[r]);
	}
	err = regen_streams_build(&rs, &ss);
	if (err) {
		fprintf(stderr, "trace-dump: streams: %s\n", pt_strerror(err));
		status = 1;
	} else if (streams) {
		dump_streams(&ss);
	}
	if (rs.bad_pages || rs.bad_events || rs.bad_records)
		status = 1;
	printf("summary: complete=%d functions=%u cpus_with_pages=%" PRIu64 " pages=%" PRIu64
	       " records=%zu owner=%" PRIu64 " bits=%" PRIu64 " enter=%" PRIu64 " block=%" PRIu64
	       " loss=%" PRIu64 " counters=%" PRIu64 " paths=%" PRIu64 " bad_pages=%" PRIu64 " bad_events=%" PRIu64
	       " bad_records=%" PRIu64 " unknown_records=%" PRIu64 " streams=%u unowned=%" PRIu64
	       "\n", tf.complete, tf.nfuncs, cpus_with_pages, rs.pages, rs.n,
	       by_type[PT_REC_OWNER], by_type[PT_REC_BITS], by_type[PT_REC_ENTER],
	       by_type[PT_REC_BLOCK], by_type[PT_REC_LOSS], by_type[PT_REC_COUNTERS],
	       by_type[PT_REC_PATHS],
	       rs.bad_pages, rs.bad_events, rs.bad_records, rs.unknown_records, ss.nstreams,
	       ss.unowned_records);
	regen_streams_free(&ss);
	tr_records_free(&rs);
	free(pages_per_cpu);
	tracefile_free(&tf);
	return status;
}
