// SPDX-License-Identifier: GPL-2.0
/*
 * pathregen - rebuild complete executions from trace.bin.
 *
 * trace.bin -> functions (CFG, plan) -> decoders; pages -> records ->
 * per-owner streams -> the engine -> one writer (and --verify).
 * Exit status: 0; 1 when the file is malformed or truncated (what was
 * valid before the problem is still regenerated and written), or a
 * function or stream could not be regenerated; 2 for a bad command line;
 * 3 when --verify finds a difference.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/path_codes.h>
#include <pathtrace/tracefile.h>

#include "coder/osp_core.h"
#include "edge_counts.h"
#include "out.h"
#include "streams.h"

#define EXIT_BAD_FILE 1
#define EXIT_USAGE 2
#define EXIT_MISMATCH 3

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: pathregen TRACE.BIN [--paths|--edges|--blocks|--stats|--hits|--words|--json|--streams|\n"
		"                 --format text|din|champsim] [--stream ID] [--line BYTES] [--top N]\n"
		"                 [--verify] [-o FILE|DIR/]\n"
		"  (default)        each stream's execution, nested calls, blocks as symbol+0xoff\n"
		"  --paths          Ball-Larus path profile: hottest paths per function (--top N, 10)\n"
		"  --paths --path-seqs  also the exact counts of runs of 2, 4, 8 consecutive paths\n"
		"                   per stream (what pathtracectl subpaths estimates in the kernel)\n"
		"  --paths --path-codes heuristic|profile|paths [--path-codes-k K]  also what these\n"
		"                   path numbers cost coded by where each path starts (a prefix code\n"
		"                   over the K (64) likeliest paths of each start: by the heuristic,\n"
		"                   by these edge counts, or by these path counts) against their\n"
		"                   fixed width\n"
		"  --edges/--blocks edge and block profiles\n"
		"  --stats          streams, functions, blocks, trace bits per predicate, losses\n"
		"  --hits           probe hits per plan site kind, per function (--top N, 10) and\n"
		"                   in all, beside a bound: ENTER probes plus the chords of the\n"
		"                   spanning tree best for the regenerated counts; and why each\n"
		"                   site that is no jump-optimized probe is not one\n"
		"  --hits --replan heuristic|profile [--calls-quiet|--calls-framed]  the same for\n"
		"                   plans of each function's mode (paths; witness or bits) made\n"
		"                   now from the recorded CFGs (by the heuristic, or by these\n"
		"                   counts), with every call planned as quiet, or the witness\n"
		"                   plans' calls framed, if asked: what a placement change would\n"
		"                   fire on this execution\n"
		"  --words [--replan heuristic|profile]  witness words read, per function and in\n"
		"                   all: their bits beside the entropy of each context row's reads,\n"
		"                   what words adapting within a segment would take (each row's\n"
		"                   last word swapped with its shortest), and what words made now\n"
		"                   (by the heuristic, or by these counts) would take on the same reads\n"
		"  --format din     Dinero IV input: '2 <hex address>' per executed instruction\n"
		"  --format champsim  ChampSim binary trace (64-byte input_instr records)\n"
		"                   (din, champsim: one stream each; -o DIR/ writes every stream)\n"
		"  --streams        list the streams (one per task, interrupt context, CPU) by ID\n"
		"  --stream ID      regenerate only stream ID\n"
		"  --line BYTES     din: cache line size whose every touched line gets a reference (64)\n"
		"  --json           the execution as JSON\n"
		"  --dot [--func NAME]  each executed function's CFG for Graphviz: blocks and edges\n"
		"                   shaded by count, hottest path in red, probe sites marked\n"
		"  --svg [--func NAME]  the same drawn as SVG by Graphviz's dot\n"
		"  --subpaths [--osp-memory N] [--exact] [--top K]  hottest subpaths (2..64 blocks,\n"
		"                   across calls): online subpath profiling, a hot list of at most N\n"
		"                   (2048) sampled subpaths with estimated counts; --exact counts all\n"
		"  --verify         compare with the every-block records of a verify-mode run\n"
		"exit: 0 ok, 1 malformed input or regeneration failure, 2 usage, 3 verify mismatch\n");
}

static void err_msg(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void err_msg(const char *what, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pathregen: %s: ", what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

struct options {
	const char *trace;
	const char *out;
	const struct out_writer_ops *ops;	/* NULL: verify only */
	int verify;
	int list_streams;
	int out_dir;			/* -o names a directory: one file per stream */
	int one_stream;			/* --stream given */
	uint32_t stream;
	uint32_t top;
	uint32_t line;			/* --line (din) */
	const char *func;		/* --func (dot) */
	int svg;			/* --svg: the dot output through dot -Tsvg */
	int sp_exact;			/* --exact (subpaths) */
	uint32_t sp_memory;		/* --osp-memory (subpaths) */
	int path_seqs;			/* --path-seqs (paths) */
	int path_codes;			/* --path-codes (paths): OUT_REPLAN_* */
	uint32_t path_codes_k;		/* --path-codes-k */
	int replan;			/* --replan (hits): OUT_REPLAN_* */
	int calls_quiet;		/* --calls-quiet (hits --replan) */
	int calls_framed;		/* --calls-framed (hits --replan) */
};

/* A number for option what; returns 0, or -1 after saying why. */
static int parse_u32(const char *what, const char *arg, uint32_t *v)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(arg, &end, 0);
	if (errno || *end || !*arg || *arg == '-' || n > UINT32_MAX) {
		err_msg(what, "'%s' is not a number", arg);
		return -1;
	}
	*v = (uint32_t)n;
	return 0;
}

static int is_instruction_format(const struct out_writer_ops *ops)
{
	return ops == &out_din_ops || ops == &out_champsim_ops;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "paths", no_argument, NULL, 'P' },
		{ "edges", no_argument, NULL, 'E' },
		{ "blocks", no_argument, NULL, 'B' },
		{ "stats", no_argument, NULL, 'S' },
		{ "hits", no_argument, NULL, 'H' },
		{ "words", no_argument, NULL, 'O' },
		{ "json", no_argument, NULL, 'J' },
		{ "format", required_argument, NULL, 'F' },
		{ "verify", no_argument, NULL, 'V' },
		{ "top", required_argument, NULL, 'T' },
		{ "streams", no_argument, NULL, 'L' },
		{ "stream", required_argument, NULL, 'I' },
		{ "line", required_argument, NULL, 'C' },
		{ "dot", no_argument, NULL, 'D' },
		{ "svg", no_argument, NULL, 'G' },
		{ "func", required_argument, NULL, 'N' },
		{ "subpaths", no_argument, NULL, 'U' },
		{ "exact", no_argument, NULL, 'X' },
		{ "osp-memory", required_argument, NULL, 'M' },
		{ "path-seqs", no_argument, NULL, 'Q' },
		{ "path-codes", required_argument, NULL, 'W' },
		{ "path-codes-k", required_argument, NULL, 'Y' },
		{ "replan", required_argument, NULL, 'R' },
		{ "calls-quiet", no_argument, NULL, 'K' },
		{ "calls-framed", no_argument, NULL, 'Z' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct out_writer_ops *chosen = NULL;
	int c, nout = 0, line_set = 0;
	struct stat sb;

	memset(o, 0, sizeof(*o));
	o->top = 10;
	o->line = 64;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		const struct out_writer_ops *ops = NULL;

		switch (c) {
		case 'P':
			ops = &out_paths_ops;
			break;
		case 'E':
			ops = &out_edges_ops;
			break;
		case 'B':
			ops = &out_blocks_ops;
			break;
		case 'S':
			ops = &out_stats_ops;
			break;
		case 'J':
			ops = &out_json_ops;
			break;
		case 'F':
			if (!strcmp(optarg, "din"))
				ops = &out_din_ops;
			else if (!strcmp(optarg, "champsim"))
				ops = &out_champsim_ops;
			else if (!strcmp(optarg, "text"))
				ops = &out_text_ops;
			else {
				err_msg("--format", "unknown format '%s' (text, din, champsim)", optarg);
				return -1;
			}
			break;
		case 'V':
			o->verify = 1;
			break;
		case 'T':
			if (parse_u32("--top", optarg, &o->top))
				return -1;
			if (!o->top) {
				err_msg("--top", "'%s' is not a positive number", optarg);
				return -1;
			}
			break;
		case 'L':
			o->list_streams = 1;
			break;
		case 'D':
			ops = &out_dot_ops;
			break;
		case 'G':
			ops = &out_dot_ops;
			o->svg = 1;
			break;
		case 'N':
			o->func = optarg;
			break;
		case 'H':
			ops = &out_hits_ops;
			break;
		case 'O':
			ops = &out_words_ops;
			break;
		case 'U':
			ops = &out_subpaths_ops;
			break;
		case 'X':
			o->sp_exact = 1;
			break;
		case 'Q':
			o->path_seqs = 1;
			break;
		case 'R':
			if (!strcmp(optarg, "heuristic")) {
				o->replan = OUT_REPLAN_HEURISTIC;
			} else if (!strcmp(optarg, "profile")) {
				o->replan = OUT_REPLAN_PROFILE;
			} else {
				err_msg("--replan", "'%s' is neither heuristic nor profile", optarg);
				return -1;
			}
			break;
		case 'K':
			o->calls_quiet = 1;
			break;
		case 'Z':
			o->calls_framed = 1;
			break;
		case 'W':
			if (!strcmp(optarg, "heuristic")) {
				o->path_codes = OUT_REPLAN_HEURISTIC;
			} else if (!strcmp(optarg, "profile")) {
				o->path_codes = OUT_REPLAN_PROFILE;
			} else if (!strcmp(optarg, "paths")) {
				o->path_codes = OUT_REPLAN_PATHS;
			} else {
				err_msg("--path-codes", "'%s' is not heuristic, profile or paths", optarg);
				return -1;
			}
			break;
		case 'Y':
			if (parse_u32("--path-codes-k", optarg, &o->path_codes_k))
				return -1;
			if (!o->path_codes_k || o->path_codes_k > PATH_CODES_K_MAX) {
				err_msg("--path-codes-k", "must be 1..1024");
				return -1;
			}
			break;
		case 'M':
			if (parse_u32("--osp-memory", optarg, &o->sp_memory))
				return -1;
			if (o->sp_memory < 16 || o->sp_memory > OSP_MAX_ENTRIES) {
				err_msg("--osp-memory", "%s: 16 to %u subpaths", optarg,
					OSP_MAX_ENTRIES);
				return -1;
			}
			break;
		case 'I':
			if (parse_u32("--stream", optarg, &o->stream))
				return -1;
			o->one_stream = 1;
			break;
		case 'C':
			if (parse_u32("--line", optarg, &o->line))
				return -1;
			if (o->line < 4 || (o->line & (o->line - 1))) {
				err_msg("--line", "%s is not a power of two of at least 4", optarg);
				return -1;
			}
			line_set = 1;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			if (optopt)
				err_msg("usage", "option '-%c' is unknown or needs an argument", optopt);
			else
				err_msg("usage", "option '%s' is unknown or needs an argument",
					argv[optind - 1]);
			return -1;
		}
		if (ops) {
			if (nout++ && ops != chosen) {
				err_msg("usage", "choose one output (%s or %s)", chosen->name, ops->name);
				return -1;
			}
			chosen = ops;
		}
	}
	if (optind != argc - 1) {
		err_msg("usage", optind >= argc ? "no trace file given" : "more than one trace file");
		return -1;
	}
	o->trace = argv[optind];
	if (o->list_streams) {
		if (chosen || o->verify || o->one_stream) {
			err_msg("--streams", "lists the streams: no output, --verify or --stream with it");
			return -1;
		}
		return 0;
	}
	o->ops = chosen ? chosen : (o->verify ? NULL : &out_text_ops);
	if (line_set && o->ops != &out_din_ops) {
		err_msg("--line", "only --format din uses a line size");
		return -1;
	}
	if ((o->sp_exact || o->sp_memory) && o->ops != &out_subpaths_ops) {
		err_msg("--exact/--osp-memory", "only --subpaths takes them");
		return -1;
	}
	if (o->replan && o->ops != &out_hits_ops && o->ops != &out_words_ops) {
		err_msg("--replan", "only with --hits or --words");
		return -1;
	}
	if (o->calls_quiet && o->ops != &out_hits_ops) {
		err_msg("--calls-quiet", "only with --hits");
		return -1;
	}
	if (o->calls_quiet && !o->replan) {
		err_msg("--calls-quiet", "only with --replan");
		return -1;
	}
	if (o->calls_framed && (o->ops != &out_hits_ops || !o->replan || o->calls_quiet)) {
		err_msg("--calls-framed", "only with --hits --replan, without --calls-quiet");
		return -1;
	}
	if ((o->path_codes || o->path_codes_k) && o->ops != &out_paths_ops) {
		err_msg(o->path_codes ? "--path-codes" : "--path-codes-k", "only with --paths");
		return -1;
	}
	if (o->path_codes_k && !o->path_codes) {
		err_msg("--path-codes-k", "only with --path-codes");
		return -1;
	}
	if (o->path_seqs && o->ops != &out_paths_ops) {
		err_msg("--path-seqs", "only --paths counts path sequences");
		return -1;
	}
	if (o->func && o->ops != &out_dot_ops) {
		err_msg("--func", "only --dot and --svg draw one function");
		return -1;
	}
	if (o->out) {
		size_t n = strlen(o->out);

		o->out_dir = (n && o->out[n - 1] == '/') ||
			     (!stat(o->out, &sb) && S_ISDIR(sb.st_mode));
		if (o->out_dir && !is_instruction_format(o->ops)) {
			err_msg(o->out, "a directory: only --format din and champsim write one file per stream");
			return -1;
		}
	}
	if (o->ops == &out_champsim_ops && !o->out && isatty(STDOUT_FILENO)) {
		err_msg("--format champsim", "binary output: redirect it or use -o FILE");
		return -1;
	}
	return 0;
}

/* Says why a function is not regenerated (pr_model_load's report). */
static void report_func(void *ctx, const struct tf_function *fn, const struct pr_func *f, int err)
{
	char what[PT_NAME_MAX + 32];

	(void)ctx;
	snprintf(what, sizeof(what), "function %.*s (id %u)",
		 (int)(fn->name_len < PT_NAME_MAX ? fn->name_len : PT_NAME_MAX), fn->name,
		 fn->func_id);
	if (!f)
		err_msg(what, "unusable CFG or plan: %s", pt_strerror(err));
	else if (err == -PT_ENOTSUP)
		err_msg(what, "no decoder for mode %u encoding %u: not regenerated", f->mode,
			f->encoding);
	else if (err == -PT_EREFUSED)
		err_msg(what, "not regenerated: %s", f->refusal[0] ? f->refusal :
			"its plan's emissions cannot be decoded exactly");
	else
		err_msg(what, "cannot build its decoder from its plan: %s", pt_strerror(err));
}

/* Reports what the page decoder and the stream builder had to skip; returns 1 if the input was malformed. */
static int report_records(const struct tr_records *rs, const struct regen_streams *ss)
{
	int bad = 0;

	if (rs->bad_pages || rs->bad_events || rs->bad_records) {
		err_msg("pages", "%" PRIu64 " corrupt pages, %" PRIu64 " bad events, %" PRIu64
			" bad records skipped (marked as gaps)", rs->bad_pages, rs->bad_events,
			rs->bad_records);
		bad = 1;
	}
	if (rs->unknown_records)
		err_msg("pages", "%" PRIu64 " records of unknown types skipped (newer format)",
			rs->unknown_records);
	if (ss->unowned_records)
		err_msg("streams", "%" PRIu64 " records (%" PRIu64 " bits) belong to no owner: not regenerated",
			ss->unowned_records, ss->unowned_bits);
	return bad;
}

/*
 * The LOSS section counts every record a full ring buffer refused and every
 * probe hit the kernel skipped; LOSS records place them in the streams. A
 * count the records do not account for was lost somewhere unknown: say so.
 * Returns 1 when that happened.
 */
static int report_unlocated_losses(const struct tracefile *tf, const struct tr_records *rs,
				   uint64_t *located_dropped, uint64_t *located_missed)
{
	uint64_t dropped = 0, missed = 0;
	size_t i;
	int bad = 0;

	*located_dropped = *located_missed = 0;
	if (!tf->has_loss)
		return 0;
	for (i = 0; i < rs->n; i++) {
		const struct tr_rec *r = &rs->recs[i];

		if (r->type != PT_REC_LOSS || r->synthetic || !r->nwords)
			continue;
		if (r->arg == PT_LOSS_OVERRUN)
			dropped += tr_body(rs, r)[0];
		else if (r->arg == PT_LOSS_MISSED)
			missed += tr_body(rs, r)[0];
	}
	*located_dropped = dropped;
	*located_missed = missed;
	if (tf->dropped > dropped) {
		err_msg("losses", "%" PRIu64 " records refused by full ring buffers, only %" PRIu64
			" of them located by LOSS records: streams may miss records without a marked gap",
			tf->dropped, dropped);
		bad = 1;
	}
	if (tf->missed > missed) {
		err_msg("losses", "%" PRIu64 " probe hits skipped by the kernel, only %" PRIu64
			" of them located by LOSS records", tf->missed, missed);
		bad = 1;
	}
	return bad;
}

static int first_marker_cpu(const struct regen_stream *s, uint32_t *cpu, uint64_t *stamp)
{
	*cpu = UINT32_MAX;
	*stamp = 0;
	if (s->nmarkers) {
		*cpu = s->markers[0].cpu;
		*stamp = s->markers[0].stamp;
	}
	return 0;
}

/*
 * --svg: Graphviz's dot reading the --dot text from the returned stream and
 * writing SVG to out. Returns the stream, or NULL after saying why; *pid
 * gets dot's process for finish_svg.
 */
static FILE *start_svg(FILE *out, pid_t *pid)
{
	char *const argv[] = { "dot", "-Tsvg", NULL };
	posix_spawn_file_actions_t fa;
	int p[2], err;
	FILE *fp;

	fflush(out);
	if (pipe(p)) {
		err_msg("--svg", "pipe: %s", strerror(errno));
		return NULL;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, fileno(out), STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, p[1]);
	err = posix_spawnp(pid, "dot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[0]);
	if (err) {
		err_msg("--svg", "cannot run Graphviz's dot: %s (install graphviz, or use --dot)",
			strerror(err));
		close(p[1]);
		return NULL;
	}
	fp = fdopen(p[1], "w");
	if (!fp) {
		close(p[1]);
		waitpid(*pid, NULL, 0);
	}
	return fp;
}

/* Closes dot's input and waits for it. Returns 0, or -1 after saying why. */
static int finish_svg(FILE *fp, pid_t pid)
{
	int st = 0, bad = fclose(fp) != 0;

	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		err_msg("--svg", "dot failed (status %d)", st);
		return -1;
	}
	return bad ? -1 : 0;
}

/* --streams: one line per stream, by the ID --stream takes. */
static void list_streams(FILE *fp, const char *trace, const struct regen_streams *ss)
{
	uint32_t i, k;

	fprintf(fp, "# streams of %s: ID OWNER CPU ENTERS BITS\n", trace);
	for (i = 0; i < ss->nstreams; i++) {
		const struct regen_stream *s = &ss->streams[i];
		uint64_t enters = 0, stamp;
		uint32_t cpu;
		char own[48];

		for (k = 0; k < s->nmarkers; k++)
			enters += s->markers[k].type == REGEN_M_ENTER;
		first_marker_cpu(s, &cpu, &stamp);
		fprintf(fp, "%u %s ", i, pr_owner_name(s->owner, own, sizeof(own)));
		if (cpu == UINT32_MAX)
			fputs("- ", fp);
		else
			fprintf(fp, "%u ", cpu);
		fprintf(fp, "%" PRIu64 " %" PRIu64 "\n", enters, s->nbits);
	}
}

/* DIR/stream-ID-OWNER.EXT for -o DIR/, into buf. */
static const char *stream_path(char *buf, size_t len, const struct options *o, uint32_t id,
			       const struct regen_stream *s)
{
	size_t n = strlen(o->out);
	char own[48], *p;

	pr_owner_name(s->owner, own, sizeof(own));
	for (p = own; *p; p++)
		if (*p == '/')
			*p = '-';
	snprintf(buf, len, "%s%sstream-%u-%s.%s", o->out, n && o->out[n - 1] == '/' ? "" : "/",
		 id, own, o->ops->name);
	return buf;
}

int main(int argc, char **argv)
{
	struct options o;
	struct tracefile tf;
	struct pr_model m = { 0 };
	struct tr_records rs = { 0 };
	struct regen_streams ss = { 0 };
	struct out_writer out = { 0 }, ver = { 0 };
	struct out_writer *ws[2];
	struct verify_result vr = { 0 };
	struct edge_counts ec = { 0 };
	unsigned int nws = 0;
	FILE *fp = stdout;
	int status = 0, err, fatal;
	FILE *svg = NULL;
	pid_t svg_pid = 0;
	uint32_t i;

	if (parse_args(argc, argv, &o)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	memset(&tf, 0, sizeof(tf));
	err = tracefile_read(o.trace, &tf);
	if (err == -PT_EIO) {
		err_msg(o.trace, "%s", strerror(errno));
		tracefile_free(&tf);
		return EXIT_BAD_FILE;
	}
	if (err == -PT_ENOMEM)
		goto nomem;
	if (err) {
		err_msg(o.trace, "%s at offset %" PRIu64 " (%s); regenerating what came before",
			tf.err_msg[0] ? tf.err_msg : pt_strerror(err), tf.err_off, pt_strerror(err));
		status = EXIT_BAD_FILE;
	}
	fatal = pr_model_load(&tf, &m, report_func, NULL);
	if (fatal > 0)
		status = EXIT_BAD_FILE;
	if (fatal == -PT_ENOMEM)
		goto nomem;
	if (fatal < 0) {
		err_msg("functions", "%s", fatal == -PT_EFORMAT ? "two functions share a func_id" :
			pt_strerror(fatal));
		status = EXIT_BAD_FILE;
		goto out;
	}
	if (o.verify) {
		uint32_t nver = 0;

		for (i = 0; i < m.nfuncs; i++)
			nver += (m.funcs[i].plan_flags & PT_PLAN_VERIFY) != 0;
		if (!nver && m.nfuncs) {
			err_msg("--verify", "%s was not recorded in verify mode (no plan has PT_PLAN_VERIFY)",
				o.trace);
			status = EXIT_BAD_FILE;
			goto out;
		}
	}
	err = tr_decode_tracefile(&rs, &tf);
	if (err == -PT_ENOMEM)
		goto nomem;
	if (err) {
		err_msg("pages", "%s", pt_strerror(err));
		status = EXIT_BAD_FILE;
	}
	err = regen_streams_build(&rs, &ss);
	if (err == -PT_ENOMEM)
		goto nomem;
	if (err) {
		err_msg("streams", "%s", pt_strerror(err));
		status = EXIT_BAD_FILE;
		goto out;
	}
	if (report_records(&rs, &ss))
		status = EXIT_BAD_FILE;
	if (report_unlocated_losses(&tf, &rs, &out.located_dropped, &out.located_missed))
		status = EXIT_BAD_FILE;

	if (o.list_streams) {
		list_streams(stdout, o.trace, &ss);
		goto out;
	}
	if (o.func) {
		for (i = 0; i < m.nfuncs && strcmp(m.funcs[i].name, o.func); i++)
			;
		if (i == m.nfuncs) {
			err_msg("--func", "%s traced no function %s", o.trace, o.func);
			status = EXIT_USAGE;
			goto out;
		}
	}
	if (o.one_stream && o.stream >= ss.nstreams) {
		err_msg("--stream", "no stream %u: %s has %u (--streams lists them)", o.stream, o.trace,
			ss.nstreams);
		status = EXIT_USAGE;
		goto out;
	}
	if (is_instruction_format(o.ops) && !o.one_stream && !o.out_dir && ss.nstreams > 1) {
		/* a simulator reads one instruction stream: never join two tasks' */
		err_msg(o.ops->name, "%s has %u streams (tasks, interrupt contexts, CPUs): choose one "
			"with --stream ID (--streams lists them) or write each to its file with -o DIR/",
			o.trace, ss.nstreams);
		status = EXIT_USAGE;
		goto out;
	}
	if (o.out_dir) {
		if (mkdir(o.out, 0777) && errno != EEXIST) {
			err_msg(o.out, "%s", strerror(errno));
			status = EXIT_BAD_FILE;
			goto out;
		}
	} else if (o.out) {
		fp = fopen(o.out, o.ops == &out_champsim_ops ? "wb" : "w");
		if (!fp) {
			err_msg(o.out, "%s", strerror(errno));
			status = EXIT_BAD_FILE;
			goto out;
		}
	}
	if (o.ops == &out_edges_ops || o.ops == &out_blocks_ops || o.ops == &out_dot_ops ||
	    o.ops == &out_hits_ops) {
		/* edges-mode functions: counts from their COUNTERS records */
		err = edge_counts_build(&m, &tf, &rs, &ec);
		if (err == -PT_ENOMEM)
			goto nomem;
		for (i = 0; i < ec.nfuncs; i++)
			if (ec.f[i].status && ec.f[i].status != -PT_ENOENT) {
				err_msg(m.funcs[i].name, "edge counters not counted (see the profile)");
				status = EXIT_BAD_FILE;
			}
		if (ec.stray)
			err_msg("counters", "%" PRIu64 " COUNTERS records of no edges-mode function",
				ec.stray);
		out.counts = &ec;
	}
	if (o.svg) {
		svg = start_svg(fp, &svg_pid);
		if (!svg) {
			status = EXIT_BAD_FILE;
			goto close_fp;
		}
	}
	if (o.ops) {
		out.ops = o.ops;
		out.fp = svg ? svg : fp;
		out.m = &m;
		out.top = o.top;
		out.line = o.line;
		out.func = o.func;
		out.tf = &tf;
		out.sp_exact = o.sp_exact;
		out.sp_memory = o.sp_memory;
		out.path_seqs = o.path_seqs;
		out.path_codes = o.path_codes;
		out.path_codes_k = o.path_codes_k ? o.path_codes_k : 64;
		out.hits_replan = o.replan;
		out.hits_calls_quiet = o.calls_quiet;
		out.hits_calls_framed = o.calls_framed;
		out.trace_name = o.trace;
		out.have_loss_section = tf.has_loss;
		out.loss_dropped = tf.dropped;
		out.loss_missed = tf.missed;
		out.records = &rs;
		ws[nws++] = &out;
	}
	if (o.verify) {
		ver.ops = &verify_ops;
		ver.fp = stderr;
		ver.m = &m;
		ver.priv = &vr;
		ws[nws++] = &ver;
	}
	err = out_open_all(ws, nws);
	if (err) {
		err_msg("output", "%s", pt_strerror(err));
		status = EXIT_BAD_FILE;
		goto close_fp;
	}
	for (i = 0; i < ss.nstreams; i++) {
		struct out_stream st = { .s = &ss.streams[i], .index = i };
		char path[4096];
		FILE *sfp = NULL;

		if (o.one_stream && i != o.stream)
			continue;
		if (o.out_dir && o.ops) {
			sfp = fopen(stream_path(path, sizeof(path), &o, i, st.s), "wb");
			if (!sfp) {
				err_msg(path, "%s", strerror(errno));
				status = EXIT_BAD_FILE;
				break;
			}
			out.fp = sfp;
		}
		first_marker_cpu(st.s, &st.cpu, &st.stamp);
		err = out_walk_stream(&m, &st, ws, nws);
		if (sfp) {
			out.fp = stdout;
			if (fclose(sfp) && !err) {
				err_msg(path, "%s", strerror(errno));
				status = EXIT_BAD_FILE;
			}
		}
		if (err == -PT_EMISMATCH)
			break;
		if (err) {
			char own[48];

			err_msg(pr_owner_name(st.s->owner, own, sizeof(own)), "%s", pt_strerror(err));
			status = EXIT_BAD_FILE;
			if (err == -PT_ENOMEM || err == -PT_EIO)
				break;
		}
	}
	/* verify's result must be read before close frees nothing of ours (vr is ours). */
	err = out_close_all(ws, nws);
	if (err) {
		err_msg("output", "%s", pt_strerror(err));
		status = EXIT_BAD_FILE;
	}
	if (svg && finish_svg(svg, svg_pid))
		status = EXIT_BAD_FILE;
	svg = NULL;
	if (o.verify) {
		if (vr.mismatch) {
			err_msg("verify", "%s", vr.detail);
			status = EXIT_MISMATCH;
		} else {
			fprintf(o.ops ? stderr : fp,
				"verify: %" PRIu64 " blocks equal to the recorded blocks, %" PRIu64
				" in gaps, %" PRIu64 " after truncation, %" PRIu64
				" without a verify site, 0 differences\n",
				vr.compared, vr.skipped, vr.unverified, vr.no_site);
		}
	}
close_fp:
	if (svg)
		finish_svg(svg, svg_pid);
	if (fp != stdout && fclose(fp)) {
		err_msg(o.out, "%s", strerror(errno));
		status = EXIT_BAD_FILE;
	}
out:
	edge_counts_free(&ec);
	regen_streams_free(&ss);
	tr_records_free(&rs);
	pr_model_free(&m);
	tracefile_free(&tf);
	return status;
nomem:
	err_msg(o.trace, "%s", pt_strerror(-PT_ENOMEM));
	status = EXIT_BAD_FILE;
	goto out;
}
