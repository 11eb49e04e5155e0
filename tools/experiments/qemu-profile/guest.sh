#!/bin/sh
# Guest half of the emulator's profile (README). guest.sh MOD [RUNS] [REPS]:
# bench-vm's workload RUNS rounds a CPU (5) in phases, REPS times (2):
# untraced, under function_graph on bench-vm's functions, untraced, and
# recorded with them as witness copies (the module build in /pt/ab/MOD,
# laid out as for tools/experiments/module-ab); then untraced once more.
# Each phase runs between "PHASE NAME start" and "PHASE NAME end ms=..."
# lines on the console, a second apart from its workload, which the host's
# watch.py turns into one perf recording of QEMU per phase.
ip link set lo up
mod=$1
runs=${2:-5}
reps=${3:-2}
T=/sys/kernel/debug/tracing
eval "$(sed -n '/^FUNCS="/,/"$/p' /pt/bench.sh)"
sed -n "/^cat >\/tmp\/workload.sh <<'EOW'\$/,/^EOW\$/p" /pt/bench.sh >/tmp/workload.def
. /tmp/workload.def
sh /tmp/workload.sh 1 /tmp/ms
ph() {
	echo "PHASE $1 start"
	sleep 1
	sh /tmp/workload.sh "$runs" /tmp/ms
	echo "PHASE $1 end ms=$(cat /tmp/ms)"
	sleep 1
}
insmod /pt/ab/$mod/pathtrace.ko || { echo "insmod failed"; exit 1; }
export PATHTRACE_INLINE_MODULE=/pt/ab/$mod/pathtrace_inline.ko
r=0
while [ $r -lt $reps ]; do
	ph untraced
	echo 0 >$T/tracing_on
	: >$T/set_ftrace_filter
	for f in $FUNCS; do echo "$f" >>$T/set_ftrace_filter 2>/dev/null; done
	echo 65536 >$T/buffer_size_kb
	echo function_graph >$T/current_tracer
	echo 1 >$T/tracing_on
	ph ftrace
	echo 0 >$T/tracing_on
	echo "ftrace: $(wc -l <$T/set_ftrace_filter) functions, $(cat $T/per_cpu/cpu*/stats | awk '/^entries:/ { n += $2 } END { print n }') entries"
	echo nop >$T/current_tracer
	ph untraced
	pathtracectl enable --inline $FUNCS > /tmp/en.out 2>&1
	grep -q "^enable: 60 enabled" /tmp/en.out || { cat /tmp/en.out; exit 1; }
	sh /tmp/workload.sh 1 /tmp/ms
	pathtracectl record -o /tmp/r.bin -- sh -c "echo 'PHASE witness start'; sleep 1; sh /tmp/workload.sh $runs /tmp/ms; echo PHASE witness end ms=\$(cat /tmp/ms); sleep 1" 2>&1 | grep PHASE
	pathtracectl disable --all >/dev/null 2>&1
	pathtracectl status | head -2
	r=$((r + 1))
done
ph untraced
