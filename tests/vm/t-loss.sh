# VM test: every lost record and every skipped probe hit is placed in the
# trace, and nothing else is lost. pathtrace_target's "storm" runs
# pt_target_nested in a task pinned to CPU 1 while an hrtimer calls
# pt_target_tick in hardirq context every 50 us: ticks that arrive while one
# of the task's probes is being handled are skipped by kprobes (missed), the
# rest are traced. The recording runs twice: with the default buffer (only
# misses), and with 8 KiB buffers (overruns too).
# Oracles: pathregen's LOSS-record totals equal the module's counts exactly
# (no "only N of them located"), and --verify finds the regenerated
# executions equal to the every-block truth of the same run wherever no
# loss cut them.
# vm-kernels: all
. /pt/lib/check.sh

insmod /pt/pathtrace.ko
insmod /pt/pathtrace_target.ko
R=/sys/kernel/debug/pathtrace_target/run
O=/tmp/loss
mkdir -p $O
echo "pathtrace_target.ko:" > /pt/modules.dep	# lets enable read the module's tables
pathtracectl enable --verify --moddir /pt pt_target_nested pt_target_tick pt_target_storm \
	> $O/enable 2>&1
check "enable the storm's functions with --verify" test $? -eq 0
# loss_counts FILE: "dropped missed dropped_located missed_located" from
# --stats: the module's counts, and the sums of the LOSS records' counts.
loss_counts() {
	awk '/^trace.bin losses/ { d = $4; m = $6; sub(/,/, "", d) }
	     /^losses located by records/ { ld = $6; lm = $8; sub(/,/, "", ld) }
	     END { printf "%d %d %d %d\n", d, m, ld, lm }' "$1"
}

run() {
	name=$1
	shift
	pathtracectl record -o $O/$name.bin "$@" -- \
		taskset -c 1 sh -c "echo 'storm 400' > $R; cat $R" > $O/$name.rec 2>&1
	check "$name: record exits 0" test $? -eq 0
	cat $O/$name.rec
	pathregen --stats $O/$name.bin > $O/$name.stats 2> $O/$name.err
	check "$name: pathregen locates every loss (exit 0)" test $? -eq 0
	sed 's/^/     | /' $O/$name.err
	grep -E "^(trace.bin losses|losses located|loss markers|gaps|activations)" $O/$name.stats
	set -- $(loss_counts $O/$name.stats)
	dropped=$1 missed=$2 odrop=$3 omiss=$4
	check "$name: LOSS(MISSED) counts add up to the missed hits ($omiss == $missed)" \
		test "$omiss" -eq "$missed"
	check "$name: LOSS(OVERRUN) counts add up to the drops ($odrop == $dropped)" \
		test "$odrop" -eq "$dropped"
	check "$name: no 'located' warning" sh -c "! grep -q located $O/$name.err"
	pathregen --verify $O/$name.bin > $O/$name.verify 2>&1
	check "$name: --verify: 0 differences" test $? -eq 0
	tail -3 $O/$name.verify
	check_champsim loss-$name $O/$name.bin
	[ ! -d /pt/out ] || cp $O/$name.bin /pt/out/
}

run default
check "default: the storm's ticks were skipped while the task's probes ran ($missed)" \
	test "$missed" -gt 0
check "default: no record dropped" test "$dropped" -eq 0

run tiny --buffer-kb 8
check "tiny: records were dropped ($dropped)" test "$dropped" -gt 0
check "tiny: hits were skipped ($missed)" test "$missed" -gt 0
check "tiny: gaps where the drops were" sh -c "grep -q '^gaps *[1-9]' $O/tiny.stats"

check "disable --all" pathtracectl disable --all
check "rmmod the target" rmmod pathtrace_target
check "rmmod pathtrace" rmmod pathtrace
finish
