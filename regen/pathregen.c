// SPDX-License-Identifier: GPL-2.0
/*
 * pathregen - rebuild complete executions from trace.bin: the command line
 * around the library pipeline (pipeline.h: trace.bin -> functions (CFG,
 * plan) -> decoders; pages -> records -> per-owner streams -> the engine ->
 * one writer, and --verify).
 * Exit status: 0; 1 when the file is malformed or truncated (what was
 * valid before the problem is still regenerated and written), or a
 * function or stream could not be regenerated; 2 for a bad command line;
 * 3 when --verify finds a difference; 4 when --verify is given a trace no
 * function of which was recorded with --verify.
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
#include "pipeline.h"

#define EXIT_BAD_FILE 1
#define EXIT_USAGE 2
#define EXIT_MISMATCH 3
#define EXIT_NO_VERIFY 4	/* --verify of a trace no function of which was recorded with --verify */

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: pathregen TRACE.BIN [--paths|--edges|--blocks|--stats|--hits|--words|--json|--streams|\n"
		"                 --format text|din|champsim|perfetto] [--stream ID] [--line BYTES] [--top N]\n"
		"                 [--verify] [-o FILE|DIR/] [-j N]\n"
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
		"  --hits --inline-sites [--replan ...]  the same with each site run as an inline\n"
		"                   copy runs it (on the one edge its actions apply on, if any),\n"
		"                   the bound for code on edges, and replans made for copies\n"
		"  --words [--replan heuristic|profile]  witness words read, per function and in\n"
		"                   all: their bits beside the entropy of each context row's reads,\n"
		"                   what words adapting within a segment would take (each row's\n"
		"                   last word swapped with its shortest), and what words made now\n"
		"                   (by the heuristic, or by these counts) would take on the same reads\n"
		"  --format din     Dinero IV input: '2 <hex address>' per executed instruction\n"
		"  --format champsim  ChampSim binary trace (64-byte input_instr records)\n"
		"                   (din, champsim: one stream each; -o DIR/ writes every stream)\n"
		"  --format perfetto [--blocks]  Trace Event JSON for the Perfetto UI or speedscope:\n"
		"                   a track per task and interrupt context, a slice per activation,\n"
		"                   with --blocks every block an instant event; time from the\n"
		"                   segment stamps spread over the blocks between them\n"
		"  --streams        list the streams (one per task, interrupt context, CPU) by ID\n"
		"  --stream ID      regenerate only stream ID\n"
		"  -j, --jobs N     threads loading and regenerating streams (default: the online\n"
		"                   CPUs); the output is the same for any N (loading uses them\n"
		"                   always; text, --stats, --edges and --blocks to regenerate,\n"
		"                   the other outputs one)\n"
		"  --line BYTES     din: cache line size whose every touched line gets a reference (64)\n"
		"  --json           the execution as JSON\n"
		"  --dot [--func NAME]  each executed function's CFG for Graphviz: blocks and edges\n"
		"                   shaded by count, hottest path in red, probe sites marked\n"
		"  --svg [--func NAME]  the same drawn as SVG by Graphviz's dot\n"
		"  --subpaths [--osp-memory N] [--exact] [--top K]  hottest subpaths (2..64 blocks,\n"
		"                   across calls): online subpath profiling, a hot list of at most N\n"
		"                   (2048) sampled subpaths with estimated counts; --exact counts all\n"
		"  --verify         compare the blocks of the functions enabled with --verify with\n"
		"                   their every-block records (the others are counted, not compared)\n"
		"  --version        the trace.bin format this pathregen writes and reads\n"
		"exit: 0 ok, 1 malformed, corrupt (checksum) or truncated input or regeneration\n"
		"      failure (what is valid is still regenerated), 2 usage, 3 verify mismatch,\n"
		"      4 --verify of a trace with no function recorded with --verify\n");
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
	int inline_sites;		/* --inline-sites (hits) */
	int line_set;			/* --line given */
	int blocks;			/* --blocks: the block profile, or perfetto's blocks */
	uint32_t jobs;			/* -j: threads regenerating streams */
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

/* An option that chooses the output: its writer, or NULL (*bad set when its argument is bad). */
static const struct out_writer_ops *output_option(int c, const char *arg, struct options *o,
						  int *bad)
{
	switch (c) {
	case 'P':
		return &out_paths_ops;
	case 'E':
		return &out_edges_ops;
	case 'B':
		o->blocks = 1;	/* an output of its own, or perfetto's blocks (parse_args) */
		return NULL;
	case 'S':
		return &out_stats_ops;
	case 'J':
		return &out_json_ops;
	case 'D':
		return &out_dot_ops;
	case 'G':
		o->svg = 1;
		return &out_dot_ops;
	case 'H':
		return &out_hits_ops;
	case 'O':
		return &out_words_ops;
	case 'U':
		return &out_subpaths_ops;
	case 'F':
		if (!strcmp(arg, "din"))
			return &out_din_ops;
		if (!strcmp(arg, "champsim"))
			return &out_champsim_ops;
		if (!strcmp(arg, "text"))
			return &out_text_ops;
		if (!strcmp(arg, "perfetto"))
			return &out_perfetto_ops;
		err_msg("--format", "unknown format '%s' (text, din, champsim, perfetto)", arg);
		*bad = 1;
		return NULL;
	}
	return NULL;
}

/* --replan and --path-codes: how the plans or codes are made (OUT_REPLAN_*), or -1 after saying why. */
static int replan_option(int c, const char *arg)
{
	if (!strcmp(arg, "heuristic"))
		return OUT_REPLAN_HEURISTIC;
	if (!strcmp(arg, "profile"))
		return OUT_REPLAN_PROFILE;
	if (c == 'W' && !strcmp(arg, "paths"))
		return OUT_REPLAN_PATHS;
	if (c == 'R')
		err_msg("--replan", "'%s' is neither heuristic nor profile", arg);
	else
		err_msg("--path-codes", "'%s' is not heuristic, profile or paths", arg);
	return -1;
}

/* The options with a number. Returns 0, or -1 after saying why. */
static int number_option(int c, const char *arg, struct options *o)
{
	switch (c) {
	case 'T':
		if (parse_u32("--top", arg, &o->top))
			return -1;
		if (!o->top) {
			err_msg("--top", "'%s' is not a positive number", arg);
			return -1;
		}
		return 0;
	case 'Y':
		if (parse_u32("--path-codes-k", arg, &o->path_codes_k))
			return -1;
		if (!o->path_codes_k || o->path_codes_k > PATH_CODES_K_MAX) {
			err_msg("--path-codes-k", "must be 1..1024");
			return -1;
		}
		return 0;
	case 'M':
		if (parse_u32("--osp-memory", arg, &o->sp_memory))
			return -1;
		if (o->sp_memory < 16 || o->sp_memory > OSP_MAX_ENTRIES) {
			err_msg("--osp-memory", "%s: 16 to %u subpaths", arg, OSP_MAX_ENTRIES);
			return -1;
		}
		return 0;
	case 'I':
		if (parse_u32("--stream", arg, &o->stream))
			return -1;
		o->one_stream = 1;
		return 0;
	case 'j':
		if (parse_u32("-j", arg, &o->jobs))
			return -1;
		if (!o->jobs || o->jobs > 1024) {
			err_msg("-j", "%s: 1 to 1024 threads", arg);
			return -1;
		}
		return 0;
	case 'C':
		if (parse_u32("--line", arg, &o->line))
			return -1;
		if (o->line < 4 || (o->line & (o->line - 1))) {
			err_msg("--line", "%s is not a power of two of at least 4", arg);
			return -1;
		}
		o->line_set = 1;
		return 0;
	}
	return -1;
}

/* -j's default: the online CPUs (1 when unknown). */
static uint32_t online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 1024 ? 1024 : (uint32_t)n;
}

/* Any option but the output's. Returns 0, or -1 after saying why. */
static int setting_option(int c, const char *arg, struct options *o, char **argv)
{
	switch (c) {
	case 'V':
		o->verify = 1;
		return 0;
	case 'B':
		return 0;
	case 'L':
		o->list_streams = 1;
		return 0;
	case 'N':
		o->func = arg;
		return 0;
	case 'X':
		o->sp_exact = 1;
		return 0;
	case 'Q':
		o->path_seqs = 1;
		return 0;
	case 'K':
		o->calls_quiet = 1;
		return 0;
	case 'Z':
		o->calls_framed = 1;
		return 0;
	case 'A':
		o->inline_sites = 1;
		return 0;
	case 'o':
		o->out = arg;
		return 0;
	case 'R':
		o->replan = replan_option(c, arg);
		return o->replan < 0 ? -1 : 0;
	case 'W':
		o->path_codes = replan_option(c, arg);
		return o->path_codes < 0 ? -1 : 0;
	case 'T': case 'Y': case 'M': case 'I': case 'C': case 'j':
		return number_option(c, arg, o);
	case 'h':
		usage(stdout);
		exit(0);
	case 'v':
		printf("pathregen: trace.bin format %u.%u (reads %u.x)\n", PT_FILE_MAJOR,
		       PT_FILE_MINOR, PT_FILE_MAJOR);
		exit(0);
	case ':':	/* ":" leads the short options: a value is missing */
		if (!strncmp(argv[optind - 1], "--", 2))
			err_msg("usage", "%s needs a value", argv[optind - 1]);
		else
			err_msg("usage", "-%c needs a value", optopt);
		return -1;
	}
	if (optopt)
		err_msg("usage", "unknown option '-%c'", optopt);
	else
		err_msg("usage", "unknown option '%s'", argv[optind - 1]);
	return -1;
}

/* The options that only some outputs take. Returns 0, or -1 after saying why. */
static int check_output_options(const struct options *o)
{
	if (o->line_set && o->ops != &out_din_ops) {
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
	if (o->inline_sites && o->ops != &out_hits_ops) {
		err_msg("--inline-sites", "only with --hits");
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
	return 0;
}

/* -o: a file, or a directory for one file per stream. Returns 0, or -1 after saying why. */
static int check_output_file(struct options *o)
{
	struct stat sb;

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
		{ "inline-sites", no_argument, NULL, 'A' },
		{ "output", required_argument, NULL, 'o' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const struct out_writer_ops *chosen = NULL;
	int c, nout = 0;

	memset(o, 0, sizeof(*o));
	o->top = 10;
	o->line = 64;
	o->jobs = online_cpus();
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:hj:", longopts, NULL)) != -1) {
		int bad = 0;
		const struct out_writer_ops *ops = output_option(c, optarg, o, &bad);

		if (bad || (!ops && setting_option(c, optarg, o, argv)))
			return -1;
		if (ops) {
			if (nout++ && ops != chosen) {
				err_msg("usage", "choose one output (%s or %s)", chosen->name, ops->name);
				return -1;
			}
			chosen = ops;
		}
	}
	if (o->blocks && chosen != &out_perfetto_ops) {
		if (chosen && chosen != &out_blocks_ops) {
			err_msg("usage", "choose one output (%s or %s)", chosen->name,
				out_blocks_ops.name);
			return -1;
		}
		chosen = &out_blocks_ops;
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
	if (check_output_options(o) || check_output_file(o))
		return -1;
	return 0;
}

/* The pipeline's problems, as pathregen's messages. */
static void diag(void *ctx, const char *what, const char *msg)
{
	(void)ctx;
	err_msg(what, "%s", msg);
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
static void list_streams(FILE *fp, const char *trace, const struct pr_trace *t)
{
	uint32_t i, k;

	fprintf(fp, "# streams of %s: ID OWNER CPU ENTERS BITS\n", trace);
	for (i = 0; i < t->ss.nstreams; i++) {
		struct out_stream st = pr_trace_stream(t, i);
		uint64_t enters = 0;
		char own[48];

		for (k = 0; k < st.s->nmarkers; k++)
			enters += st.s->markers[k].type == REGEN_M_ENTER;
		fprintf(fp, "%u %s ", i, pr_owner_name(st.s->owner, own, sizeof(own)));
		if (st.cpu == UINT32_MAX)
			fputs("- ", fp);
		else
			fprintf(fp, "%u ", st.cpu);
		fprintf(fp, "%" PRIu64 " %" PRIu64 "\n", enters, st.s->nbits);
	}
}

/* One run of pathregen: the options, the pipeline, the writers and where they write. */
struct run {
	struct options o;
	struct pr_trace t;
	struct out_writer out, ver;
	struct out_writer *ws[2];
	unsigned int nws;
	struct verify_result vr;
	struct edge_counts ec;
	FILE *fp;			/* stdout, or -o FILE */
	FILE *svg;			/* --svg: dot's input */
	pid_t svg_pid;
	int status;			/* EXIT_* of pathregen's own problems (the pipeline's: t.bad) */
	char path[4096];		/* -o DIR/: the current stream's file */
};

/*
 * The pipeline's steps up to the streams, and --verify's check that the
 * trace can be verified. Returns 0; -PT_ENOMEM; another value when
 * pathregen stops (said why).
 */
static int load(struct run *r)
{
	struct pr_trace *t = &r->t;
	uint32_t i, nver = 0;
	int err;

	err = pr_trace_read(t, r->o.trace);
	if (!err)
		err = pr_trace_model(t);
	if (err)
		return err;
	if (r->o.verify) {
		for (i = 0; i < t->m.nfuncs; i++)
			nver += (t->m.funcs[i].plan_flags & PT_PLAN_VERIFY) != 0;
		if (!nver) {
			/* a malformed file may have lost them: that stays exit 1 */
			err_msg("--verify", "%s: no function of this trace was recorded with --verify",
				r->o.trace);
			if (!r->status && !t->bad)
				r->status = EXIT_NO_VERIFY;
			return 1;
		}
	}
	return pr_trace_streams(t);
}

/*
 * What the command line chose against what the trace holds: --func names a
 * traced function, --stream one of its streams, an instruction format one
 * stream. Returns 0, or -1 after saying why (status: usage).
 */
static int check_selection(struct run *r)
{
	const struct options *o = &r->o;
	const struct pr_trace *t = &r->t;
	uint32_t i;

	if (o->func) {
		for (i = 0; i < t->m.nfuncs && strcmp(t->m.funcs[i].name, o->func); i++)
			;
		if (i == t->m.nfuncs) {
			err_msg("--func", "%s traced no function %s", o->trace, o->func);
			return -1;
		}
	}
	if (o->one_stream && o->stream >= t->ss.nstreams) {
		err_msg("--stream", "no stream %u: %s has %u (--streams lists them)", o->stream,
			o->trace, t->ss.nstreams);
		return -1;
	}
	if (is_instruction_format(o->ops) && !o->one_stream && !o->out_dir && t->ss.nstreams > 1) {
		/* a simulator reads one instruction stream: never join two tasks' */
		err_msg(o->ops->name, "%s has %u streams (tasks, interrupt contexts, CPUs): choose one "
			"with --stream ID (--streams lists them) or write each to its file with -o DIR/",
			o->trace, t->ss.nstreams);
		return -1;
	}
	return 0;
}

/* -o: makes the directory or opens the file. Returns 0, or -1 after saying why. */
static int open_output(struct run *r)
{
	const struct options *o = &r->o;

	if (o->out_dir) {
		if (mkdir(o->out, 0777) && errno != EEXIST) {
			err_msg(o->out, "%s", strerror(errno));
			return -1;
		}
	} else if (o->out) {
		r->fp = fopen(o->out, o->ops == &out_champsim_ops ? "wb" : "w");
		if (!r->fp) {
			r->fp = stdout;
			err_msg(o->out, "%s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Edges-mode functions' counts from their COUNTERS records, for the outputs that show them. */
static int count_edges(struct run *r)
{
	const struct out_writer_ops *ops = r->o.ops;
	uint32_t i;
	int err;

	if (ops != &out_edges_ops && ops != &out_blocks_ops && ops != &out_dot_ops &&
	    ops != &out_hits_ops)
		return 0;
	err = edge_counts_build(&r->t.m, &r->t.tf, &r->t.rs, &r->ec);
	if (err == -PT_ENOMEM)
		return err;
	for (i = 0; i < r->ec.nfuncs; i++)
		if (r->ec.f[i].status && r->ec.f[i].status != -PT_ENOENT) {
			err_msg(r->t.m.funcs[i].name, "edge counters not counted (see the profile)");
			r->status = EXIT_BAD_FILE;
		}
	if (r->ec.stray)
		err_msg("counters", "%" PRIu64 " COUNTERS records of no edges-mode function",
			r->ec.stray);
	r->out.counts = &r->ec;
	return 0;
}

/* The chosen writer and --verify's, into r->ws. */
static void set_writers(struct run *r)
{
	const struct options *o = &r->o;
	struct out_writer *out = &r->out;

	if (o->ops) {
		out->ops = o->ops;
		out->fp = r->svg ? r->svg : r->fp;
		out->m = &r->t.m;
		out->top = o->top;
		out->line = o->line;
		out->func = o->func;
		out->tf = &r->t.tf;
		out->sp_exact = o->sp_exact;
		out->sp_memory = o->sp_memory;
		out->path_seqs = o->path_seqs;
		out->path_codes = o->path_codes;
		out->path_codes_k = o->path_codes_k ? o->path_codes_k : 64;
		out->hits_replan = o->replan;
		out->hits_calls_quiet = o->calls_quiet;
		out->hits_calls_framed = o->calls_framed;
		out->hits_inline_sites = o->inline_sites;
		out->perfetto_blocks = o->blocks && o->ops == &out_perfetto_ops;
		out->trace_name = o->trace;
		out->have_loss_section = r->t.tf.has_loss;
		out->loss_dropped = r->t.tf.dropped;
		out->loss_missed = r->t.tf.missed;
		out->located_dropped = r->t.located_dropped;
		out->located_missed = r->t.located_missed;
		out->records = &r->t.rs;
		r->ws[r->nws++] = out;
	}
	if (o->verify) {
		r->ver.ops = &verify_ops;
		r->ver.fp = stderr;
		r->ver.m = &r->t.m;
		r->ver.priv = &r->vr;
		r->ws[r->nws++] = &r->ver;
	}
}

/* -o DIR/: stream st's file, DIR/stream-ID-OWNER.EXT, for the writer. */
static int stream_file_open(void *ctx, const struct out_stream *st)
{
	struct run *r = ctx;
	size_t n = strlen(r->o.out);
	char own[48], *p;
	FILE *sfp;

	pr_owner_name(st->s->owner, own, sizeof(own));
	for (p = own; *p; p++)
		if (*p == '/')
			*p = '-';
	snprintf(r->path, sizeof(r->path), "%s%sstream-%u-%s.%s", r->o.out,
		 n && r->o.out[n - 1] == '/' ? "" : "/", st->index, own, r->o.ops->name);
	sfp = fopen(r->path, "wb");
	if (!sfp) {
		err_msg(r->path, "%s", strerror(errno));
		r->status = EXIT_BAD_FILE;
		return -PT_EIO;
	}
	r->out.fp = sfp;
	return 0;
}

static int stream_file_close(void *ctx, const struct out_stream *st, int err)
{
	struct run *r = ctx;
	FILE *sfp = r->out.fp;

	(void)st;
	r->out.fp = stdout;
	if (fclose(sfp) && !err) {
		err_msg(r->path, "%s", strerror(errno));
		r->status = EXIT_BAD_FILE;
	}
	return 0;
}

/* Opens the writers, walks the streams, closes them. */
static void write_streams(struct run *r)
{
	struct pr_walk w = { .one_stream = r->o.one_stream, .stream = r->o.stream, .ctx = r,
			     .jobs = r->o.jobs };
	int err;

	if (r->o.out_dir && r->o.ops) {
		w.begin = stream_file_open;
		w.end = stream_file_close;
	}
	err = out_open_all(r->ws, r->nws);
	if (err) {
		err_msg("output", "%s", pt_strerror(err));
		r->status = EXIT_BAD_FILE;
		return;
	}
	pr_trace_walk(&r->t, r->ws, r->nws, &w);
	err = out_close_all(r->ws, r->nws);
	if (err) {
		err_msg("output", "%s", pt_strerror(err));
		r->status = EXIT_BAD_FILE;
	}
}

/* --verify's verdict. */
static void report_verify(struct run *r)
{
	const struct verify_result *vr = &r->vr;
	FILE *fp = r->o.ops ? stderr : r->fp;
	uint32_t i;

	for (i = 0; i < vr->shown; i++)
		err_msg("verify", "%s", vr->detail[i]);
	if (vr->differences > vr->shown)
		err_msg("verify", "%" PRIu64 " more differences not shown", vr->differences - vr->shown);
	if (vr->differences)
		r->status = EXIT_MISMATCH;	/* whatever came before */
	fprintf(fp, "verify: %" PRIu64 " blocks equal to the recorded blocks, %" PRIu64 " in gaps, %"
		PRIu64 " after truncation, %" PRIu64 " without a verify site, %" PRIu64
		" blocks of functions without verify plans not compared, ",
		vr->compared, vr->skipped, vr->unverified, vr->no_site, vr->no_plan);
	if (vr->differences)
		fprintf(fp, "%" PRIu64 " blocks after differences not compared, ", vr->after_difference);
	fprintf(fp, "%" PRIu64 " differences\n", vr->differences);
}

/* Regenerates into the chosen output. Returns 0; -PT_ENOMEM; 1 when pathregen stops (said why). */
static int regenerate(struct run *r)
{
	int err;

	if (check_selection(r)) {
		r->status = EXIT_USAGE;
		return 1;
	}
	if (open_output(r)) {
		r->status = EXIT_BAD_FILE;
		return 1;
	}
	err = count_edges(r);
	if (err)
		return err;
	if (r->o.svg) {
		r->svg = start_svg(r->fp, &r->svg_pid);
		if (!r->svg) {
			r->status = EXIT_BAD_FILE;
			return 0;
		}
	}
	set_writers(r);
	write_streams(r);
	if (r->svg && finish_svg(r->svg, r->svg_pid))
		r->status = EXIT_BAD_FILE;
	r->svg = NULL;
	if (r->o.verify)
		report_verify(r);
	return 0;
}

int main(int argc, char **argv)
{
	struct run r;
	int err;

	memset(&r, 0, sizeof(r));
	r.fp = stdout;
	if (parse_args(argc, argv, &r.o)) {
		fprintf(stderr, "usage: pathregen TRACE.BIN [OPTION]... (pathregen --help lists them)\n");
		return EXIT_USAGE;
	}
	pr_trace_init(&r.t, diag, NULL);
	r.t.jobs = r.o.jobs;	/* the pages decoded and cut on threads too */
	err = load(&r);
	if (!err && r.o.list_streams)
		list_streams(stdout, r.o.trace, &r.t);
	else if (!err)
		err = regenerate(&r);
	if (err == -PT_ENOMEM) {
		err_msg(r.o.trace, "%s", pt_strerror(-PT_ENOMEM));
		r.status = EXIT_BAD_FILE;
	}
	if (r.svg)
		finish_svg(r.svg, r.svg_pid);
	if (r.fp != stdout && fclose(r.fp)) {
		err_msg(r.o.out, "%s", strerror(errno));
		r.status = EXIT_BAD_FILE;
	}
	edge_counts_free(&r.ec);
	pr_trace_free(&r.t);
	if (!r.status && r.t.bad)
		r.status = EXIT_BAD_FILE;
	return r.status;
}
