// SPDX-License-Identifier: GPL-2.0
/*
 * The pathregen program itself (built next to unit-tests): on synthetic
 * traces it reproduces the run up to each stream's last evidence (--verify
 * finds every regenerated block equal and the unproven tails' blocks
 * unverified; the default output, --stats, din, champsim and JSON count
 * what the trace proves ran, checked against the truth); bad
 * command lines exit 2; missing, truncated and corrupted files exit 1
 * with a message, never crash or hang, and a file truncated in its pages
 * still has the execution before the cut printed.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pathtrace/error.h>

#include "pathtrace_abi.h"
#include "regen_trace.h"
#include "unit.h"

static char prog[4200];
static char out[64] = "/tmp/pt-pathregen-out-XXXXXX";
static char err_out[80];	/* the last run's stderr: out + ".err" */

static int find_prog(void)
{
	return unit_sibling_prog("pathregen", prog, sizeof(prog));
}

/* Runs pathregen with args (a shell fragment), stdout to `out`. Returns the exit code, or -signal, or -124 for a hang. */
static int run(const char *args)
{
	char cmd[8192];
	int st;

	snprintf(err_out, sizeof(err_out), "%s.err", out);
	snprintf(cmd, sizeof(cmd), "timeout -s KILL 30 %s %s > %s 2>%s", prog, args, out, err_out);
	st = system(cmd);
	if (st == -1)
		return -1000;
	if (WIFSIGNALED(st))
		return -WTERMSIG(st);
	if (WEXITSTATUS(st) == 137 || WEXITSTATUS(st) == 124)
		return -124;
	if (WEXITSTATUS(st) >= 128)
		return -(WEXITSTATUS(st) - 128);	/* the shell reports the child's signal */
	return WEXITSTATUS(st);
}

/* Occurrences of s in file path. */
static uint64_t count_in(const char *path, const char *s)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	uint64_t n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = line;

		while ((p = strstr(p, s))) {
			n++;
			p += strlen(s);
		}
	}
	fclose(f);
	return n;
}

/* Occurrences of s in the output file. */
static uint64_t count_in_out(const char *s)
{
	return count_in(out, s);
}

/* The first line of the last run's stderr that contains s, into line; 0 if none. */
static int err_line(const char *s, char *line, size_t len)
{
	FILE *f = fopen(err_out, "r");
	int found = 0;

	while (f && !found && fgets(line, (int)len, f))
		found = strstr(line, s) != NULL;
	if (f)
		fclose(f);
	return found;
}

static uint64_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

struct trace {
	struct sim_program p;
	struct sim_kmod_run r;
	struct sim_truth tr;
	char path[64];
	/*
	 * What the trace proves (regen.h: nothing after a stream's last
	 * evidence): the truth's blocks and instructions but those of each
	 * task's unproven tail; the truth's ENTERs and EXITs likewise.
	 */
	uint64_t blocks, insns, enters, exits, tail_blocks, truncated;
};

/*
 * Regenerates t's trace in-process (the library pipeline) and checks that
 * every task's events are the truth's, in order, up to at most one
 * TRUNCATED tail that leaves out BLOCKs and EXITs only; fills the counts.
 * Returns 0, or -1 when the regenerated events are not such a prefix.
 */
static int proven_counts(struct trace *t)
{
	struct rt_result res;
	uint64_t owner, i, j;
	int ok = 0;

	if (rt_regen(t->path, &res, NULL, 0, NULL))
		return -1;
	if (res.bad_input) {	/* every record the module wrote reads */
		rt_result_free(&res);
		return -1;
	}
	t->truncated = res.truncated;
	for (owner = PT_OWNER(PT_OWNER_TASK, 100); owner < PT_OWNER(PT_OWNER_TASK, 102); owner++) {
		for (i = 0, j = 0;; i++, j++) {
			while (i < t->tr.nev && t->tr.ev[i].owner != owner)
				i++;
			while (j < res.nev && res.ev[j].owner != owner)
				j++;
			if (j < res.nev && res.ev[j].type == REGEN_EV_TRUNCATED) {
				for (; i < t->tr.nev; i++) {
					if (t->tr.ev[i].owner != owner)
						continue;
					if (t->tr.ev[i].type == REGEN_EV_ENTER)
						goto out;
					t->tail_blocks += t->tr.ev[i].type == REGEN_EV_BLOCK;
				}
				break;
			}
			if (i == t->tr.nev || j == res.nev) {
				if (i != t->tr.nev || j != res.nev)
					goto out;
				break;
			}
			if (t->tr.ev[i].type != res.ev[j].type ||
			    (res.ev[j].type == REGEN_EV_BLOCK && t->tr.ev[i].block != res.ev[j].block))
				goto out;
			if (res.ev[j].type == REGEN_EV_BLOCK) {
				t->blocks++;
				t->insns += t->p.funcs[0].cfg.blocks[res.ev[j].block].ninsn;
			}
			t->enters += res.ev[j].type == REGEN_EV_ENTER;
			t->exits += res.ev[j].type == REGEN_EV_EXIT;
		}
	}
	ok = t->blocks + t->tail_blocks == t->tr.blocks;
out:
	rt_result_free(&res);
	return ok ? 0 : -1;
}

/*
 * A trace of plans with plan_flags; with no_block_records, a module that
 * wrote no BLOCK record though the plans verify (every block a difference).
 */
static int make_trace_plans(struct trace *t, uint64_t seed, uint32_t plan_flags,
			    int no_block_records)
{
	/* closed: champsim's records are then exactly the instructions */
	struct sim_gen_opts go = { .nfuncs = 1, .max_stmts = 10, .closed = 1 };
	struct sim_lower_opts lo = { .mode = PT_MODE_TRACE, .encoding = PT_ENC_WITNESS,
				     .plan_flags = plan_flags };
	struct sim_kmod_opts ko = { .nr_cpus = 2, .ntasks = 2, .activations = 40, .max_steps = 80,
				    .migrate_pct = 10, .irq_pct = 100 };
	uint64_t rng = seed;
	const char *path;

	memset(t, 0, sizeof(*t));
	if (sim_generate_lowered(&t->p, &rng, &go, &lo))
		return -1;
	if (no_block_records && t->p.funcs[0].verify_of_insn)
		memset(t->p.funcs[0].verify_of_insn, 0,
		       (t->p.funcs[0].cfg.ninsns + 1) * sizeof(uint32_t));
	if (sim_truth_init(&t->tr, &t->p) || sim_kmod_execute(&t->p, &ko, &rng, &t->r, &t->tr))
		return -1;
	path = rt_write_tmp(&t->p, &t->r, 2);
	if (!path)
		return -1;
	strcpy(t->path, path);
	return proven_counts(t);
}

static int make_trace(struct trace *t, uint64_t seed)
{
	return make_trace_plans(t, seed, PT_PLAN_VERIFY, 0);
}

static void free_trace(struct trace *t)
{
	unlink(t->path);
	sim_truth_free(&t->tr, &t->p);
	sim_kmod_run_free(&t->r);
	sim_free(&t->p);
}

static int setup(void)
{
	int fd = mkstemp(out);

	if (fd >= 0)
		close(fd);
	return fd < 0;
}

static void test_outputs(void)
{
	struct trace t;
	char args[1024], expect[192], f2[80], dir[96], line[1024];
	unsigned long long fetches = 0, crossings = 0, records = 0, n, i, nstreams;

	if (!find_prog()) {
		CU_FAIL("pathregen is not built next to unit-tests");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(make_trace(&t, unit_seed() * 3 + 1), 0);

	snprintf(args, sizeof(args), "%s --verify", t.path);
	CU_ASSERT_EQUAL(run(args), 0);
	/* the blocks of an unproven tail were recorded but not regenerated: unverified */
	snprintf(expect, sizeof(expect), "verify: %llu blocks equal", (unsigned long long)t.blocks);
	CU_ASSERT_EQUAL(count_in_out(expect), 1);
	/* every lowered block has a probeable instruction: a verify site */
	snprintf(expect, sizeof(expect), " %llu after truncation, 0 without a verify site, 0 blocks of"
		 " functions without verify plans not compared, 0 differences",
		 (unsigned long long)t.tail_blocks);
	CU_ASSERT_EQUAL(count_in_out(expect), 1);

	CU_ASSERT_EQUAL(run(t.path), 0);
	CU_ASSERT_EQUAL(count_in_out("sim_fn0+0x"), t.blocks);
	CU_ASSERT_EQUAL(count_in_out("sim_fn0() {"), t.enters);
	CU_ASSERT_EQUAL(count_in_out("} /* sim_fn0 */"), t.exits);
	CU_ASSERT_EQUAL(count_in_out("!! truncated at bit"), t.truncated);

	snprintf(args, sizeof(args), "%s --stats", t.path);
	CU_ASSERT_EQUAL(run(args), 0);
	snprintf(expect, sizeof(expect), "blocks executed                 %llu\n",
		 (unsigned long long)t.blocks);
	CU_ASSERT_EQUAL(count_in_out(expect), 1);

	/* one stream per task and interrupt context: an instruction format takes one */
	snprintf(args, sizeof(args), "%s --streams", t.path);
	CU_ASSERT_EQUAL(run(args), 0);
	nstreams = count_in_out(" task/10") + count_in_out(" hardirq/") + count_in_out(" softirq/");
	CU_ASSERT(nstreams >= 2);
	snprintf(f2, sizeof(f2), "%s.din", out);
	snprintf(args, sizeof(args), "%s --format din -o %s", t.path, f2);
	CU_ASSERT_EQUAL(run(args), 2);
	CU_ASSERT(err_line("choose one with --stream ID", line, sizeof(line)));
	snprintf(args, sizeof(args), "%s --format din --stream %llu", t.path,
		 (unsigned long long)nstreams);
	CU_ASSERT_EQUAL(run(args), 2);

	/* -o DIR/: one file per stream; every instruction fetched, plus each line it crosses */
	snprintf(dir, sizeof(dir), "%s.d/", out);
	snprintf(args, sizeof(args), "%s --format din --line 16 -o %s", t.path, dir);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT_FATAL(err_line("pathregen: din: ", line, sizeof(line)));
	CU_ASSERT_EQUAL(sscanf(strstr(line, "din: "), "din: %llu instruction fetches (%llu",
			       &fetches, &crossings), 2);
	CU_ASSERT_EQUAL(fetches - crossings, t.insns);
	n = 0;
	for (i = 0; i < nstreams; i++) {
		snprintf(args, sizeof(args), "ls %s | grep -q '^stream-%llu-.*[.]din$' && cat %sstream-%llu-*.din > %s",
			 dir, (unsigned long long)i, dir, (unsigned long long)i, f2);
		if (system(args) == 0)
			n += count_in(f2, "2 ");
	}
	CU_ASSERT_EQUAL(n, fetches);
	unlink(f2);

	/* champsim: every stream's records read back by ChampSim's rules (tools/champsim-check) */
	snprintf(args, sizeof(args), "%s --format champsim -o %s", t.path, dir);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT_FATAL(err_line("pathregen: champsim: ", line, sizeof(line)));
	CU_ASSERT_EQUAL(sscanf(strstr(line, "champsim: "), "champsim: %llu records", &records), 1);
	CU_ASSERT_EQUAL(records, t.insns);	/* closed programs call no untraced code */
	snprintf(args, sizeof(args), "%s --format champsim --stream 0 -o %s", t.path, f2);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT(size_of(f2) > 0 && size_of(f2) % 64 == 0 && size_of(f2) <= t.insns * 64);
	unlink(f2);
	{
		char check[4400], *slash;

		strcpy(check, prog);
		slash = strrchr(check, '/');
		strcpy(slash + 1, "tools/champsim-check");
		snprintf(args, sizeof(args), "%s %s %s > %s 2>&1", check, t.path, dir, f2);
		CU_ASSERT_EQUAL(system(args), 0);
		CU_ASSERT_EQUAL(count_in(f2, "; errors 0"), nstreams + 1);
		snprintf(line, sizeof(line), "total: %llu records (0 synthetic)",
			 (unsigned long long)records);
		CU_ASSERT_EQUAL(count_in(f2, line), 1);
		unlink(f2);
	}
	/* Intel PT side by side: libipt decodes what it encoded back to the same instructions */
	{
		char bench[4400], *slash;
		unsigned long long insns = 0, jcc = 0, pt_bytes = 0;
		FILE *fp;

		strcpy(bench, prog);
		slash = strrchr(bench, '/');
		strcpy(slash + 1, "tools/bench-pt");
		snprintf(args, sizeof(args), "%s %s > %s 2>&1", bench, t.path, f2);
		CU_ASSERT_EQUAL(system(args), 0);
		CU_ASSERT_EQUAL(count_in(f2, "sequences_equal=yes"), 1);
		fp = fopen(f2, "r");
		CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
		CU_ASSERT(fgets(line, sizeof(line), fp) != NULL);
		fclose(fp);
		CU_ASSERT(sscanf(line, "pt_bytes=%llu", &pt_bytes) == 1 && pt_bytes > 0);
		CU_ASSERT(strstr(line, " instructions=") &&
			  sscanf(strstr(line, " instructions="), " instructions=%llu jcc=%llu",
				 &insns, &jcc) == 2);
		/* every stream's instructions but a last branch whose outcome is not known */
		CU_ASSERT(insns + nstreams >= t.insns && insns <= t.insns && jcc <= insns);
		/* both sides timed in one unit: instructions over best seconds */
		{
			double lips = 0, rips = 0, ls = 0, rs = 0;
			const char *k = strstr(line, " libipt_insns_per_s=");

			CU_ASSERT_PTR_NOT_NULL_FATAL(k);
			CU_ASSERT_EQUAL(sscanf(k, " libipt_insns_per_s=%lf regen_insns_per_s=%lf"
					       " libipt_s=%lf regen_s=%lf", &lips, &rips, &ls, &rs), 4);
			CU_ASSERT(lips > 0 && rips > 0 && ls > 0 && rs > 0);
			/* regen's rate is the execution's instructions over its time */
			CU_ASSERT(rips * rs > 0.99 * (double)insns && rips * rs < 1.01 * (double)insns);
		}
		snprintf(args, sizeof(args), "%s /nonexistent.bin > %s 2>&1", bench, f2);
		CU_ASSERT_EQUAL(WEXITSTATUS(system(args)), 1);
		unlink(f2);
	}
	snprintf(args, sizeof(args), "rm -rf %s", dir);
	CU_ASSERT_EQUAL(system(args), 0);

	/* --dot: one cluster (the one function), every block a node, edges with counts */
	snprintf(args, sizeof(args), "%s --dot", t.path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT_EQUAL(count_in_out("digraph pathtrace {"), 1);
	CU_ASSERT_EQUAL(count_in_out("subgraph cluster_"), 1);
	CU_ASSERT_EQUAL(count_in_out(" [label=\"sim_fn0+0x"), t.p.funcs[0].cfg.nblocks);
	CU_ASSERT_EQUAL(count_in_out("\\nprobe: enter"), 1);
	CU_ASSERT(count_in_out(", color=red") > 0);	/* the hottest path */
	snprintf(args, sizeof(args), "%s --dot --func nosuch", t.path);
	CU_ASSERT_EQUAL(run(args), 2);
	/* --svg: Graphviz draws it; every block is an SVG node */
	snprintf(args, sizeof(args), "%s --svg --func sim_fn0", t.path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT_EQUAL(count_in_out("<svg"), 1);
	CU_ASSERT_EQUAL(count_in_out("class=\"node\""), t.p.funcs[0].cfg.nblocks + 1);	/* + EXIT */
	CU_ASSERT_EQUAL(count_in_out("<title>cluster_0</title>"), 1);

	/* --hits: one row per function that has a plan, then the summary line */
	snprintf(args, sizeof(args), "%s --hits", t.path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT_EQUAL(count_in_out("sim_fn0 "), 1);
	CU_ASSERT_EQUAL(count_in_out("functions=1 "), 1);
	CU_ASSERT_EQUAL(count_in_out(" hits_per_block="), 1);
	CU_ASSERT_EQUAL(count_in_out(" bound_per_block="), 1);

	/* --subpaths: the OSP header and hot subpaths; --exact counts them all */
	snprintf(args, sizeof(args), "%s --subpaths --osp-memory 32 --top 3", t.path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT_EQUAL(count_in_out("# online subpath profile (OSP): "), 1);
	CU_ASSERT_EQUAL(count_in_out(" length "), 3);
	snprintf(args, sizeof(args), "%s --subpaths --exact --top 2", t.path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT_EQUAL(count_in_out("# subpaths (exact): "), 1);
	snprintf(args, sizeof(args), "%s --subpaths --osp-memory 8", t.path);
	CU_ASSERT_EQUAL(run(args), 2);
	snprintf(args, sizeof(args), "%s --paths --exact", t.path);
	CU_ASSERT_EQUAL(run(args), 2);

	snprintf(args, sizeof(args), "%s --json", t.path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT_EQUAL(count_in_out("\"ev\": \"block\""), t.blocks);

	snprintf(args, sizeof(args), "%s --paths --top 2", t.path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT_EQUAL(count_in_out("# Ball-Larus path profile"), 1);
	free_trace(&t);
}

static void test_command_line(void)
{
	if (!find_prog()) {
		CU_FAIL("pathregen is not built next to unit-tests");
		return;
	}
	CU_ASSERT_EQUAL(run(""), 2);
	CU_ASSERT_EQUAL(run("a b"), 2);
	CU_ASSERT_EQUAL(run("x --format foo"), 2);
	CU_ASSERT_EQUAL(run("x --paths --edges"), 2);
	CU_ASSERT_EQUAL(run("x --top 0"), 2);
	CU_ASSERT_EQUAL(run("x --bogus"), 2);
	CU_ASSERT_EQUAL(run("x --stream"), 2);
	CU_ASSERT_EQUAL(run("x --stream -1"), 2);
	CU_ASSERT_EQUAL(run("x --stream 1x"), 2);
	CU_ASSERT_EQUAL(run("x --line 48 --format din"), 2);
	CU_ASSERT_EQUAL(run("x --line 64"), 2);
	CU_ASSERT_EQUAL(run("x --streams --paths"), 2);
	CU_ASSERT_EQUAL(run("x --paths -o /tmp/"), 2);
	CU_ASSERT_EQUAL(run("x --paths --func f"), 2);
	CU_ASSERT_EQUAL(run("x --paths --path-codes nope"), 2);
	CU_ASSERT_EQUAL(run("x --stats --path-codes heuristic"), 2);
	CU_ASSERT_EQUAL(run("x --paths --path-codes-k 8"), 2);
	CU_ASSERT_EQUAL(run("x --paths --path-codes paths --path-codes-k 0"), 2);
	CU_ASSERT_EQUAL(run("x --paths --path-codes paths --path-codes-k 2000"), 2);
	CU_ASSERT_EQUAL(run("--help"), 0);
	CU_ASSERT_EQUAL(run("/nonexistent/trace.bin"), 1);
}

static void test_bad_files(void)
{
	struct trace t;
	uint8_t *buf;
	uint64_t size, i, rng = unit_seed() | 1;
	char bad[80], args[256];
	int rc, crashes = 0, wrong = 0, kept = 0;
	FILE *f;

	if (!find_prog()) {
		CU_FAIL("pathregen is not built next to unit-tests");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(make_trace(&t, unit_seed() * 5 + 2), 0);
	size = size_of(t.path);
	buf = malloc(size);
	f = fopen(t.path, "rb");
	CU_ASSERT_FATAL(f && fread(buf, 1, size, f) == size);
	fclose(f);
	snprintf(bad, sizeof(bad), "%s.bad", t.path);
	snprintf(args, sizeof(args), "%s", bad);
	/* Truncated anywhere: exit 1; cut inside the last pages, the execution before it is printed. */
	for (i = 0; i < 24; i++) {
		uint64_t cut = i < 23 ? size * i / 23 : size - 1;

		f = fopen(bad, "wb");
		fwrite(buf, 1, cut, f);
		fclose(f);
		rc = run(args);
		crashes += rc < 0;
		wrong += rc != 1;
		if (cut > size * 3 / 4 && count_in_out("sim_fn0+0x") > 0)
			kept++;
	}
	CU_ASSERT_EQUAL(crashes, 0);
	CU_ASSERT_EQUAL(wrong, 0);
	CU_ASSERT(kept > 0);
	/* Random bytes changed: any verdict but a crash or a hang. */
	for (i = 0; i < 60; i++) {
		uint64_t k, n = 1 + sim_rand(&rng) % 8;

		f = fopen(bad, "wb");
		for (k = 0; k < n; k++)
			buf[sim_rand(&rng) % size] ^= (uint8_t)(1 + sim_rand(&rng) % 255);
		fwrite(buf, 1, size, f);
		fclose(f);
		snprintf(args, sizeof(args), "%s --verify", bad);
		rc = run(args);
		crashes += rc < 0;
		f = fopen(t.path, "rb");
		if (f) {
			if (fread(buf, 1, size, f) != size)
				crashes++;
			fclose(f);
		}
	}
	CU_ASSERT_EQUAL(crashes, 0);
	unlink(bad);
	free(buf);
	free_trace(&t);
}

/* Reserves a unique name for the output file the tests below write. */
static void test_setup(void)
{
	CU_ASSERT_EQUAL(setup(), 0);
}

/* Removes that output file: every run would otherwise leave one in /tmp. */
static void test_cleanup(void)
{
	CU_ASSERT_EQUAL(unlink(out), 0);
	if (err_out[0])
		CU_ASSERT_EQUAL(unlink(err_out), 0);
}

/*
 * --verify's verdicts: a trace no plan of which verifies exits 4 with its
 * message; a trace whose plans verify but which holds no BLOCK record
 * (every block a difference) exits 3 after the whole trace, with the
 * total and the first VERIFY_SHOWN located.
 */
static void test_verify_verdicts(void)
{
	struct trace t;
	char args[256], line[1024];
	unsigned long long diffs = 0, equal = 99, shown = 0;
	const char *p;

	if (!find_prog()) {
		CU_FAIL("pathregen is not built next to unit-tests");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(make_trace_plans(&t, unit_seed() * 7 + 3, 0, 0), 0);
	snprintf(args, sizeof(args), "%s --verify", t.path);
	CU_ASSERT_EQUAL(run(args), 4);
	CU_ASSERT(err_line("no function of this trace was recorded with --verify", line,
			   sizeof(line)));
	CU_ASSERT_EQUAL(count_in_out("verify:"), 0);
	/* without --verify the same trace regenerates */
	CU_ASSERT_EQUAL(run(t.path), 0);
	free_trace(&t);

	CU_ASSERT_EQUAL_FATAL(make_trace_plans(&t, unit_seed() * 7 + 4, PT_PLAN_VERIFY, 1), 0);
	snprintf(args, sizeof(args), "%s --verify", t.path);
	CU_ASSERT_EQUAL(run(args), 3);
	CU_ASSERT_EQUAL(count_in_out("verify: "), 1);
	{
		FILE *f = fopen(out, "r");

		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "verify: ", 8) && (p = strstr(line, " differences\n"))) {
				while (p > line && p[-1] != ' ')
					p--;
				diffs = strtoull(p, NULL, 10);
				equal = strtoull(line + 8, NULL, 10);
			}
		if (f)
			fclose(f);
	}
	CU_ASSERT_EQUAL(equal, 0);
	/* one per activation: each ENTER is where the comparison picks up again */
	CU_ASSERT(diffs >= t.enters);
	shown = count_in(err_out, "pathregen: verify: stream ");
	CU_ASSERT_EQUAL(shown, diffs < VERIFY_SHOWN ? diffs : VERIFY_SHOWN);
	CU_ASSERT_EQUAL(count_in(err_out, "no BLOCK record is left"), shown);
	CU_ASSERT_EQUAL(count_in(err_out, "more differences not shown"), diffs > VERIFY_SHOWN);
	free_trace(&t);
}

UNIT_SUITE(pathregen,
	   { "setup", test_setup },
	   { "outputs of a synthetic trace count what ran", test_outputs },
	   { "bad command lines exit 2", test_command_line },
	   { "truncated and corrupted files: exit 1, no crash, no hang", test_bad_files },
	   { "--verify: no verify plans exit 4, differences counted to the end, exit 3",
	     test_verify_verdicts },
	   { "cleanup", test_cleanup })
