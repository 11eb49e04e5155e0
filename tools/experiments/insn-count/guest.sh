#!/bin/sh
# Guest half of the instruction count (README). guest.sh MODE MOD [RUNS]:
# bench-vm's workload RUNS rounds a CPU (3 without it) untraced, then
# traced by MODE, then untraced again, each between two runs of
# /pt/ptmark (the plugin's marks: 0-1, 2-3, 4-5). MODE witness-inline
# (or edges-inline, paths-inline: the same in that mode):
# the module build in /pt/ab/MOD loaded and bench-vm's functions enabled
# as witness copies, recorded (the recorder's reading inside the marks,
# its last drain after them); ftrace-graph: function_graph on the same
# functions as bench-vm sets it up (its draining after the marks). Then
# the recording's status line and the text symbols of the pathtrace
# modules (ksym lines: the plugin counts by address).
ip link set lo up
mode=$1
mod=$2
runs=${3:-3}
T=/sys/kernel/debug/tracing
eval "$(sed -n '/^FUNCS="/,/"$/p' /pt/bench.sh)"
sed -n "/^cat >\/tmp\/workload.sh <<'EOW'\$/,/^EOW\$/p" /pt/bench.sh >/tmp/workload.def
. /tmp/workload.def
sh /tmp/workload.sh 1 /tmp/ms
phase() {
	grep '^cpu ' /proc/stat | sed 's/^/stat0 /'
	/pt/ptmark
	sh /tmp/workload.sh "$runs" /tmp/ms
	/pt/ptmark
	grep '^cpu ' /proc/stat | sed 's/^/stat1 /'
}
phase; echo "untraced_ms=$(cat /tmp/ms)"
case $mode in
*-inline)
	case $mode in
	witness-inline) args= ;;
	edges-inline) args="--mode edges" ;;
	paths-inline) args="--mode paths" ;;
	*) echo "$mode: no such mode"; exit 1 ;;
	esac
	insmod /pt/ab/$mod/pathtrace.ko || { echo "insmod $mod failed"; exit 1; }
	export PATHTRACE_INLINE_MODULE=/pt/ab/$mod/pathtrace_inline.ko
	pathtracectl enable --inline $args $FUNCS > /tmp/en.out 2>&1
	grep -q "^enable: [0-9]* enabled" /tmp/en.out || { cat /tmp/en.out; exit 1; }
	sh /tmp/workload.sh 1 /tmp/ms
	pathtracectl record -o /tmp/r.bin -- sh -c "grep '^cpu ' /proc/stat >/tmp/stat0; /pt/ptmark; sh /tmp/workload.sh $runs /tmp/ms; /pt/ptmark; grep '^cpu ' /proc/stat >/tmp/stat1" > /tmp/rec.out 2>&1
	sed 's/^/stat0 /' /tmp/stat0
	sed 's/^/stat1 /' /tmp/stat1
	echo "mode=$mode mod=$mod traced_ms=$(cat /tmp/ms) $(pathtracectl status | head -1 | sed 's/.*since start: //')"
	;;
ftrace-graph)
	echo 0 >$T/tracing_on
	: >$T/set_ftrace_filter
	for f in $FUNCS; do echo "$f" >>$T/set_ftrace_filter 2>/dev/null; done
	echo 65536 >$T/buffer_size_kb
	echo function_graph >$T/current_tracer
	echo 1 >$T/tracing_on
	phase
	echo 0 >$T/tracing_on
	echo "mode=$mode functions=$(wc -l <$T/set_ftrace_filter) traced_ms=$(cat /tmp/ms)"
	echo nop >$T/current_tracer
	;;
esac
phase; echo "untraced_again_ms=$(cat /tmp/ms)"
grep -E ' [tT] .*\[pathtrace' /proc/kallsyms | sed 's/^/ksym /'
