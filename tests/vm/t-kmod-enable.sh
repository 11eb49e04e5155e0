# VM test: pathtracectl enable/list/status/disable with the real planner on
# real kernel functions (names and a glob) and on the test target module,
# record under a busybox workload on both CPUs, pathregen --verify against
# the every-block records of the same run. Prints the report's figures:
# probes per function (plan vs every-block), the share the kernel
# jump-optimized, trace bytes per second.
# vm-kernels: all
. /pt/lib/check.sh

mkdir -p /run
insmod /pt/pathtrace.ko
insmod /pt/pathtrace_target.ko
echo "pathtrace_target.ko:" > /pt/modules.dep
R=/sys/kernel/debug/pathtrace_target/run
REAL="vfs_read vfs_write ksys_read ksys_write do_sys_openat2 do_filp_open path_openat
link_path_walk getname_flags filp_close __fput vfs_getattr generic_file_read_iter
filemap_read pipe_read pipe_write do_dentry_open may_open dput walk_component lookup_fast
step_into rw_verify_area vfs_open generic_permission inode_permission path_init
complete_walk ksys_lseek do_sendfile vfs_fstatat vfs_statx iterate_dir"
TARGET="pt_target_nested pt_target_multi_exit pt_target_irreducible pt_target_switch
pt_target_recursive pt_target_inner pt_target_outer pt_target_early pt_target_bug"

# The workload, as a script record can run: ARG rounds on each CPU.
cat >/tmp/workload.sh <<'EOW'
R=/sys/kernel/debug/pathtrace_target/run
for cpu in 0 1; do
	taskset -c $cpu sh -c '
		i=0
		while [ $i -lt '"$1"' ]; do
			cat /proc/version /pt/lib/check.sh >/dev/null
			ls -l /pt /proc/self >/dev/null
			echo $i > /tmp/w.'$cpu'
			cat /tmp/w.'$cpu' | wc -c >/dev/null
			for a in 0 5 17 40 4096 7; do echo "switch $a" > '$R'; done
			echo "nested $((i % 13))" > '$R'
			echo "recursive $((i % 9))" > '$R'
			echo "outer $i" > '$R'
			echo "irreducible $i" > '$R'
			echo "multi_exit $((i * 3))" > '$R'
			echo "early $((i - 2))" > '$R'
			echo "bug $i" > '$R'
			i=$((i + 1))
		done' &
done
wait
EOW

# Phase 1: plans without verify probes, for the figures.
pathtracectl enable $REAL 'vfs_*' >/tmp/en.out 2>&1
pathtracectl enable --moddir /pt $TARGET >>/tmp/en.out 2>&1
grep -c ": enabled as" /tmp/en.out | sed 's/^/enabled: /'
grep -v ": enabled as" /tmp/en.out | grep -v "^pathtracectl: " | head -20
check "at least 20 real functions enabled" sh -c '[ $(grep -v pt_target /tmp/en.out | grep -c ": enabled as") -ge 20 ]'
check "every target function enabled" sh -c '[ $(grep pt_target_ /tmp/en.out | grep -c ": enabled as") = 9 ]'
check "refusals carry a reason" sh -c '! grep -E "^[a-z_0-9.]+: refused$" /tmp/en.out'
check "list shows them" sh -c '[ $(pathtracectl list | grep -c trace/witness) -ge 29 ]'
sleep 1
t0=$(cut -d' ' -f1 /proc/uptime)
check "record" pathtracectl record -o /tmp/plan.bin -- sh /tmp/workload.sh 20
t1=$(cut -d' ' -f1 /proc/uptime)
pathtracectl status >/tmp/status.out
head -3 /tmp/status.out
awk -v t0=$t0 -v t1=$t1 '
	/: enabled as/ { n++; p += $5; eb += $NF; sub(/\(/, "", $7); o += $7 }
	END { printf "FIGURE plan: %d functions, %.1f probes/function (%.1f planned jump-optimizable) vs every-block %.1f\n", n, p / n, o / n, eb / n }' /tmp/en.out
awk -v t0=$t0 -v t1=$t1 'NR > 2 { p += $3; o += $4; h += $5; b += $7 }
	END { printf "FIGURE kernel: %d probes, %d jump-optimized (%.0f%%), %d hits, %d bytes (%d per workload round), %.0f bytes/s over %.1f s\n", p, o, 100 * o / p, h, b, b / 20, b / (t1 - t0), t1 - t0 }' /tmp/status.out
check "optimized count agrees with debugfs" sh -c "[ $(grep -c '\[OPTIMIZED\]' /sys/kernel/debug/kprobes/list) = $(awk 'NR > 2 { o += $4 } END { print o }' /tmp/status.out) ]"
# The planner's optprobe model (probesite.h, kprobe_boost.h) against the
# kernel's decision: per function, the probes it expected jump-optimized
# are the ones the kernel optimized.
awk 'NR == FNR { if (/: enabled as/) { n = $1; sub(/:$/, "", n); o = $7; sub(/\(/, "", o); want[n] = o } next }
	FNR > 2 && ($2 in want) { if (want[$2] != $4) { printf "optprobe model: %s: planned %d, kernel %d\n", $2, want[$2], $4 } }' /tmp/en.out /tmp/status.out >/tmp/optmodel.out
cat /tmp/optmodel.out
# The model is 6.1's; 6.12 jump-optimizes more (docs/kernels.md, "kprobes,
# ftrace regs, module memory"): there the differences are printed only.
if [ "$(uname -r | cut -d. -f1-2)" = 6.1 ]; then
	check "the kernel jump-optimized as many probes as the plans expected, per function" \
		sh -c '[ ! -s /tmp/optmodel.out ]'
fi
pathregen --stats /tmp/plan.bin >/tmp/stats.out 2>&1
echo "pathregen --stats: $?"
head -20 /tmp/stats.out
check "pathregen reads the trace" grep -q "functions traced *[1-9]" /tmp/stats.out
check_champsim witness /tmp/plan.bin
check_pt witness /tmp/plan.bin
pathregen --dot /tmp/plan.bin >/tmp/plan.dot 2>/tmp/dot.err
check "--dot: exit 0" test $? -eq 0
echo "--dot: $(grep -c 'subgraph cluster_' /tmp/plan.dot) clusters, $(grep -c ' -> ' /tmp/plan.dot) edges, $(grep -c 'peripheries=2' /tmp/plan.dot) blocks with probes"
check "--dot: a cluster per executed function" sh -c '[ $(grep -c "subgraph cluster_" /tmp/plan.dot) -ge 10 ]'
check "--dot: probe sites and hottest paths drawn" sh -c 'grep -q "probe: enter" /tmp/plan.dot && grep -q "color=red" /tmp/plan.dot'
check "--dot --func: one function" sh -c '[ $(pathregen --dot --func do_sys_openat2 /tmp/plan.bin | grep -c "subgraph cluster_") = 1 ]'
echo "kprobes' refusals:"; dmesg | grep "kprobes refused" | head
check "disable --all" pathtracectl disable --all
check "nothing listed" sh -c '[ $(pathtracectl list | wc -l) = 1 ]'
check "no probes left" sh -c '! grep -q . /sys/kernel/debug/kprobes/list'

# Phase 2: the same functions with verify probes; regeneration must equal them
# (vfs_open's tail call into do_dentry_open included).
pathtracectl enable --verify $REAL >/tmp/env.out 2>&1
pathtracectl enable --verify --moddir /pt $TARGET >>/tmp/env.out 2>&1
pathtracectl enable --verify --mode paths --moddir /pt pt_target_untraced >>/tmp/env.out 2>&1
check "verify plans enabled" sh -c '[ $(grep -c ": enabled as" /tmp/env.out) -ge 28 ]'
pathtracectl record -o /tmp/verify.bin -- sh /tmp/workload.sh 10 >/tmp/rec.out 2>&1
cat /tmp/rec.out
pathtracectl status | awk 'NR > 2 { p += $3; o += $4; b += $7 }
	END { printf "FIGURE verify run (plan + every-block probes): %d probes, %d jump-optimized (%.0f%%), %d bytes (%d per workload round)\n", p, o, 100 * o / p, b, b / 10 }'
check "every CPU contributed pages" sh -c 'grep -q "cpu0 [1-9][0-9]*, cpu1 [1-9]" /tmp/rec.out'
pathregen --verify /tmp/verify.bin >/tmp/verify.out 2>&1
echo "pathregen --verify: $?"
tail -5 /tmp/verify.out
check "pathregen --verify: regeneration equals the verify records" pathregen --verify /tmp/verify.bin
check_champsim verify /tmp/verify.bin
check "disable by name and glob" pathtracectl disable vfs_read 'pt_target_*'
check "the rest" pathtracectl disable --all

# Phase 3: edge counters. The counts of 5 identical runs (spread over both
# CPUs and several flushes) must be exactly 5 times the counts of one.
check "edges plan" pathtracectl enable --mode edges --moddir /pt pt_target_switch
id=$(pathtracectl list | awk '/pt_target_switch/ { print $1 }')
edges_run() {
	pt-plan start
	for k in $(seq $1); do
		taskset -c $((k % 2)) sh -c "for a in 1 5 17 40 99 4096 3 250; do echo \"switch \$a\" > $R; done"
		[ $k = 3 ] && pt-plan flush
	done
	pt-plan stop
	rm -rf $2
	pt-plan dump $2 >/dev/null
	pt-plan counters $2 $id
}
one=$(edges_run 1 /tmp/e1)
five=$(edges_run 5 /tmp/e5)
echo "one run: $one"
echo "five runs: $five"
check "counters were written" sh -c "echo '$one' | grep -q '[1-9]'"
want=$(echo "$one" | awk '{ for (i = 1; i <= NF; i++) printf "%s%d", (i > 1 ? " " : ""), 5 * $i }')
check "five runs count exactly five times one" [ "$want" = "$five" ]
check "disable the edges plan" pathtracectl disable --all

# Phase 4: an edge profile costs nothing per event, and it is the trace's.
# The same deterministic workload (the target module runs only when
# written to) under edges plans and under witness plans: the counted edge
# profile must equal the one regenerated from the trace, while the edges
# run writes no record per activation (COUNTERS at stop only). Each task
# ends with a call of pt_target_switch, left out of the comparison: a
# stream's last activation is regenerated only up to its last evidence
# (an exit edge that emits nothing is not proven), the counters count it.
EDGEF="pt_target_nested pt_target_multi_exit pt_target_irreducible pt_target_switch
pt_target_recursive pt_target_inner pt_target_outer pt_target_early"
cat >/tmp/det.sh <<'EOD'
R=/sys/kernel/debug/pathtrace_target/run
for cpu in 0 1; do
	taskset -c $cpu sh -c '
		i=0
		while [ $i -lt 30 ]; do
			for a in 0 5 17 40 4096 7; do echo "switch $a" > '$R'; done
			echo "nested $((i % 13))" > '$R'
			echo "recursive $((i % 9))" > '$R'
			echo "outer $i" > '$R'
			echo "irreducible $i" > '$R'
			echo "multi_exit $((i * 3))" > '$R'
			echo "early $((i - 2))" > '$R'
			i=$((i + 1))
		done
		echo "switch 0" > '$R'' &
done
wait
EOD
# PROFILE's lines for TRACE (pathregen --edges or --paths, every path), without
# func ids or notes, pt_target_switch left out
profile_of() {
	pathregen $1 --top 100000 "$2" | awk '
		/ \(func [0-9]+\): / { skip = $1 == "pt_target_switch"
			sub(/ \(func [0-9]+\)/, ""); sub(/ activations.*/, " activations")
			sub(/ \(counted in the kernel.*/, "") }
		!/^#/ && !skip { print }'
}
check "edges plans" pathtracectl enable --mode edges --moddir /pt $EDGEF
check "record the edges run" pathtracectl record -o /tmp/edges.bin -- sh /tmp/det.sh
profile_of --edges /tmp/edges.bin >/tmp/edges.prof
pathregen --edges /tmp/edges.bin | grep "^pt_target" | head -3
set -- $(trace-dump /tmp/edges.bin | tail -n 1 | tr ' ' '\n' | sed -n 's/^\(enter\|counters\|records\)=//p')
echo "edges run: $1 records, $2 ENTER, $3 COUNTERS"
check "edges run: no ENTER record" test "$2" -eq 0
check "edges run: COUNTERS at most one per CPU and function per flush ($3)" test "$3" -le 16
check "edges run: every function counted" sh -c "! pathregen --edges /tmp/edges.bin | grep -q 'not counted'"
check "disable" pathtracectl disable --all
check "witness plans" pathtracectl enable --moddir /pt $EDGEF
check "record the witness run" pathtracectl record -o /tmp/wit.bin -- sh /tmp/det.sh
profile_of --edges /tmp/wit.bin >/tmp/wit.prof
check "the counted edge profile equals the regenerated one ($(grep -c . /tmp/edges.prof) lines)" \
	cmp /tmp/edges.prof /tmp/wit.prof
diff /tmp/edges.prof /tmp/wit.prof | head -10
check "disable the witness plans" pathtracectl disable --all

# Phase 5: a Ball-Larus path profile counted in the kernel (path-profile:
# PATH_EMIT counts per CPU, PATHS records at stop) equals the path profile
# regenerated from a paths trace of the same deterministic workload.
check "paths plans" pathtracectl enable --mode paths --moddir /pt $EDGEF
check "record the paths trace" pathtracectl record -o /tmp/ptr.bin -- sh /tmp/det.sh
profile_of --paths /tmp/ptr.bin >/tmp/ptr.prof
check "disable the paths plans" pathtracectl disable --all
expect_fail "path-profile refuses --verify" pathtracectl enable --mode path-profile --verify --moddir /pt pt_target_switch
check "path-profile plans" pathtracectl enable --mode path-profile --moddir /pt $EDGEF
check "record the path profile" pathtracectl record -o /tmp/pp.bin -- sh /tmp/det.sh
profile_of --paths /tmp/pp.bin >/tmp/pp.prof
pathregen --paths /tmp/pp.bin | grep "counted in the kernel" | head -3
set -- $(trace-dump /tmp/pp.bin | tail -n 1 | tr ' ' '\n' | sed -n 's/^\(records\|enter\|paths\)=//p')
echo "path-profile run: $1 records, $2 ENTER, $3 PATHS"
check "path profile: no ENTER record" test "$2" -eq 0
check "path profile: PATHS records only at stop (at most a few per CPU and function: $3)" test "$3" -le 32
check "path profile: no path end lost or overflowed" sh -c "! pathregen --paths /tmp/pp.bin | grep 'counted in the kernel' | grep -v '; 0 path ends lost to a context switch mid-path, 0 to a full table, 0 beyond'"
check "the kernel's path profile equals the regenerated one ($(grep -c path /tmp/pp.prof) paths)" \
	cmp /tmp/ptr.prof /tmp/pp.prof
diff /tmp/ptr.prof /tmp/pp.prof | head -10
check "disable the path-profile plans before PPP" pathtracectl disable --all

# Phase 5b: preferential path profiling in the kernel (PPP: a second
# register, the interesting paths' counts in a dense array, every other path
# in one counter). Each interesting path's count must equal the paths
# trace's, and per function interesting + other path ends = all path ends.
pathregen --paths --top 100000 /tmp/ptr.bin >/tmp/ptr.paths
ppp_check() {
	pathregen --paths --top 100000 "$1" >/tmp/ppp.paths
	grep "ends of other paths" /tmp/ppp.paths | head -3
	awk '
	FNR == 1 { file++ }
	/ \(func [0-9]+\): / {
		fn = $1
		if (file == 1) { total[fn] = $4; next }
		got[fn] = $4; funcs++
		if (match($0, /[0-9]+ ends of other paths/)) other[fn] = substr($0, RSTART, RLENGTH) + 0
		else { print fn ": no PPP note"; bad++ }
		if (!match($0, /; 0 path ends lost to a context switch mid-path, 0 to a full table, 0 beyond/)) {
			print fn ": path ends lost: " $0; bad++ }
		next }
	/^ *[0-9]+  path [0-9]+:/ {
		if (fn == "pt_target_switch") next
		if (file == 1) { have[fn, $0] = 1; next }
		n++
		if (!((fn, $0) in have)) { print "not the paths trace count: " fn ": " $0; bad++ }
		next }
	END {
		for (f in got) {
			if (f == "pt_target_switch") continue
			if (got[f] + other[f] != total[f]) {
				print f ": " got[f] " interesting + " other[f] " other path ends, the trace has " total[f]; bad++ }
			sumi += got[f]; sumo += other[f]
		}
		printf "PPP: %d functions, %d interesting paths counted, %d of their ends, %d ends of other paths\n", funcs, n, sumi, sumo
		exit (bad || !n || !sumo) }' /tmp/ptr.paths /tmp/ppp.paths
}
# enable_to FILE ARGS...: pathtracectl enable ARGS..., its output in FILE
enable_to() { f=$1; shift; pathtracectl enable "$@" >"$f" 2>&1; }
check "PPP plans, 3 likeliest paths each (heuristic)" enable_to /tmp/ppp-enable.out --mode path-profile --ppp 3 --moddir /pt $EDGEF
grep "PPP" /tmp/ppp-enable.out | head -3
check "enable reports PPP's memory beside Ball-Larus numbering's" \
	grep -q "^enable: PPP in [1-9][0-9]* functions: [0-9]* interesting paths in [0-9]* counters (.* a CPU), Ball-Larus numbering: [0-9]* paths" /tmp/ppp-enable.out
check "status names the mode" sh -c "pathtracectl status | grep -q ppp-profile"
check "record the PPP profile" pathtracectl record -o /tmp/ppp.bin -- sh /tmp/det.sh
check "PPP (heuristic): each interesting path's count is the trace's, the others add up" ppp_check /tmp/ppp.bin
ppp_check /tmp/ppp.bin | tail -n 1
check "disable the PPP plans" pathtracectl disable --all
check "PPP plans from the measured profile (--ppp-paths, 2 hottest)" enable_to /tmp/ppp-enable.out --mode path-profile --ppp 2 --ppp-paths /tmp/ptr.paths --moddir /pt $EDGEF
check "record the profile-guided PPP profile" pathtracectl record -o /tmp/ppp2.bin -- sh /tmp/det.sh
check "PPP (profiled): each interesting path's count is the trace's, the others add up" ppp_check /tmp/ppp2.bin
ppp_check /tmp/ppp2.bin | tail -n 1
check "PPP (profiled): the 2 hottest paths of pt_target_nested are the interesting ones" sh -c \
	"awk '/^pt_target_nested / { on = 1; next } /^[a-z]/ { on = 0 } on && n < 2 { print; n++ }' /tmp/ptr.paths >/tmp/want.paths &&
	 awk '/^pt_target_nested / { on = 1; next } /^[a-z]/ { on = 0 } on' /tmp/ppp.paths | cmp - /tmp/want.paths"
expect_fail "--ppp without path-profile" pathtracectl enable --mode paths --ppp 3 --moddir /pt pt_target_switch
expect_fail "--ppp 0" pathtracectl enable --mode path-profile --ppp 0 --moddir /pt pt_target_switch
expect_fail "--ppp-paths of no profile" pathtracectl enable --mode path-profile --ppp-paths /tmp/det.sh --moddir /pt pt_target_switch
check "disable the profiled PPP plans" pathtracectl disable --all
check "path-profile plans again, for OSP and top" pathtracectl enable --mode path-profile --moddir /pt $EDGEF

# Phase 5c: online subpath profiling in the kernel (record --osp: a hot list
# of 128 subpaths per CPU, runs of 2, 4, 8 path ends sampled at an adaptive
# rate), against the exact counts of the same runs in the paths trace of
# the same workload (pathregen --path-seqs). Each of the kernel's 15
# hottest is a real run; and the 10 truly hottest runs (the exact top,
# chosen without looking at the samples: no winner's curse) have estimates
# within the paper's Chernoff bound of their counts: with scale = 2^tau * 3
# (a sample's weight), |estimate - exact| <= scale * (sqrt(3 ln(2k / 1e-6)
# exact / scale) + 1), k = 10.
expect_fail "subpaths before any OSP recording" pathtracectl subpaths
check "record the path profile with OSP" pathtracectl record --osp 128 -o /tmp/osp.bin -- sh /tmp/det.sh
pathtracectl subpaths -k 100000 >/tmp/osp.out 2>&1
check "subpaths: exit 0" test $? -eq 0
head -6 /tmp/osp.out
pathregen --paths --path-seqs --top 100000 /tmp/ptr.bin | sed -n '/^# path-end sequences/,$p' >/tmp/seqs.out
head -4 /tmp/seqs.out
check "OSP: memory bounded by the flag, and the list overflowed (tau >= 1)" \
	grep -q "^# OSP: [0-9]* cpus, 128 subpaths each, 1 path end in 2^[1-9][0-9]* sampled" /tmp/osp.out
# busybox awk has no math library: Newton's square root, ln(2 * 10 / 1e-6) = 16.81124
osp_check() {
	awk '
	function root(x,  r, i) { if (x <= 0) return 0; r = x; for (i = 0; i < 60; i++) r = (r + x / r) / 2; return r }
	FNR == 1 { file++ }
	file == 1 && /^ *[0-9]+  [0-9]+:/ { c = $1; sub(/^ *[0-9]+  /, ""); exact[$0] = c; order[++nx] = $0; next }
	file == 2 && /^# OSP/ { match($0, /2\^[0-9]+/); tau = substr($0, RSTART + 2, RLENGTH - 2) + 0; next }
	file == 2 && /^ *[0-9]+ ±/ {
		est = $1; line = $0; sub(/^ *[0-9]+ ±[0-9]+ +/, "", line)
		estimate[line] = est
		if (++n <= 15 && !(line in exact)) { print "not a real run: " line; bad++ }
	}
	END {
		scale = 3; for (i = 0; i < tau; i++) scale *= 2
		for (i = 1; i <= 10 && i <= nx; i++) {
			line = order[i]; x = exact[line]; est = (line in estimate) ? estimate[line] : 0
			bound = scale * (root(3 * 16.81124 * x / scale) + 1)
			d = est - x; if (d < 0) d = -d
			printf "%s: exact %d, estimate %d, bound %.0f\n", line, x, est, bound
			if (d > bound) bad++
		}
		exit (bad || n < 15 || nx < 10) }' /tmp/seqs.out /tmp/osp.out
}
check "OSP: the hottest are real, the 10 truly hottest within the Chernoff bound" osp_check
osp_check | head -5
# pathtracectl top during a longer path-profile run: live hits, the kernel's hottest paths
pathtracectl record --osp 256 -o /tmp/pp2.bin -- sh -c 'end=$(($(cut -d. -f1 /proc/uptime) + 5))
	while [ $(cut -d. -f1 /proc/uptime) -lt $end ]; do sh /tmp/det.sh; done' >/tmp/rec2.out 2>&1 &
rec_pid=$!
sleep 1
pathtracectl top -n 2 -d 0.5 -k 5 >/tmp/top.out 2>&1
check "top: exit 0" test $? -eq 0
wait $rec_pid
check "the longer record exits 0" test $? -eq 0
head -20 /tmp/top.out
check "top: tracing on, functions by hits" sh -c 'grep -q "^pathtracectl top: tracing on" /tmp/top.out && grep -q "^ *[1-9][0-9]* *[1-9][0-9]* *[0-9]*  path-profile *pt_target_" /tmp/top.out'
check "top: the kernel's hottest paths, with their blocks" grep -q "^ *[1-9][0-9]*  pt_target_[a-z_]* path [0-9]*: pt_target_" /tmp/top.out
check "top: the hottest subpaths, live" sh -c 'grep -q "^hottest subpaths (OSP" /tmp/top.out && grep -q "^ *[1-9][0-9]* ±[0-9]* *[248]: pt_target_[a-z_]*:[0-9]* pt_target_" /tmp/top.out'
check "disable the path-profile plans" pathtracectl disable --all
expect_fail "disable of a function not enabled" pathtracectl disable vfs_read
check "rmmod" rmmod pathtrace_target pathtrace
finish
