#!/bin/sh
# Guest half of the instruction count (README): the module build in
# /pt/ab/MOD (the argument) loaded, bench-vm's functions enabled as
# witness copies, the workload run once not recording and RUNS times
# recorded (the second argument, 3 without one), then the text symbols
# of the pathtrace modules (their addresses: the plugin's counts are by
# address) and the recording's status line.
ip link set lo up
mod=$1
runs=${2:-3}
eval "$(sed -n '/^FUNCS="/,/"$/p' /pt/bench.sh)"
sed -n "/^cat >\/tmp\/workload.sh <<'EOW'\$/,/^EOW\$/p" /pt/bench.sh >/tmp/workload.def
. /tmp/workload.def
insmod /pt/ab/$mod/pathtrace.ko || { echo "insmod $mod failed"; exit 1; }
export PATHTRACE_INLINE_MODULE=/pt/ab/$mod/pathtrace_inline.ko
pathtracectl enable --inline $FUNCS > /tmp/en.out 2>&1
grep -q "^enable: 60 enabled" /tmp/en.out || { cat /tmp/en.out; exit 1; }
sh /tmp/workload.sh 1 /tmp/ms
pathtracectl record -o /tmp/r.bin -- sh /tmp/workload.sh "$runs" /tmp/ms > /tmp/rec.out 2>&1
echo "mod=$mod rec_ms=$(cat /tmp/ms) $(pathtracectl status | head -1 | sed 's/.*since start: //')"
grep -E ' [tT] .*\[pathtrace' /proc/kallsyms | sed 's/^/ksym /'
