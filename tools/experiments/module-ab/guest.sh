#!/bin/sh
# Guest half of the module A/B (README): two builds of pathtrace.ko and
# their pathtrace_inline.ko, in /pt/ab/base and /pt/ab/new, swapped SWAPS
# times (the argument; 4 without one) in one boot under bench-vm's
# workload (5 rounds a CPU) with its functions as witness copies: an
# untraced run, then each module's run
# enabled and not recording (idle_ms) and recorded (rec_ms), in turn
# base-new and new-base. Then a --verify recording with the new module and
# check_frames on: pathregen's differences and the frames named otherwise
# than the walk names them.
ip link set lo up
# bench-vm's functions and workload, from its guest half (vm-run -f ...:bench.sh)
eval "$(sed -n '/^FUNCS="/,/"$/p' /pt/bench.sh)"
sed -n "/^cat >\/tmp\/workload.sh <<'EOW'\$/,/^EOW\$/p" /pt/bench.sh >/tmp/workload.def
. /tmp/workload.def
sh /tmp/workload.sh 1 /tmp/ms
# one MOD: MOD's build loaded, the functions enabled as copies, the
# workload run not recording and recorded, everything removed
one() {
	mod=$1
	insmod /pt/ab/$mod/pathtrace.ko || { echo "insmod $mod failed"; exit 1; }
	export PATHTRACE_INLINE_MODULE=/pt/ab/$mod/pathtrace_inline.ko
	pathtracectl enable --inline $FUNCS > /tmp/en.out 2>&1; grep -q "^enable: 60 enabled" /tmp/en.out || { cat /tmp/en.out; exit 1; }
	sh /tmp/workload.sh 5 /tmp/ms; idle=$(cat /tmp/ms)
	pathtracectl record -o /tmp/r.bin -- sh /tmp/workload.sh 5 /tmp/ms > /tmp/rec.out 2>&1
	echo "mod=$mod idle_ms=$idle rec_ms=$(cat /tmp/ms) $(pathtracectl status | head -1 | sed 's/.*since start: //')"
	pathtracectl disable --all > /dev/null
	rmmod pathtrace || { echo "rmmod failed"; lsmod; exit 1; }
}
swaps=${1:-4}
k=1
while [ $k -le "$swaps" ]; do
	sh /tmp/workload.sh 5 /tmp/ms; echo "untraced_ms=$(cat /tmp/ms)"
	if [ $((k % 2)) = 1 ]; then one base; one new; else one new; one base; fi
	k=$((k + 1))
done
# exactness with the new module: witness --verify, inline
insmod /pt/ab/new/pathtrace.ko check_frames=1
export PATHTRACE_INLINE_MODULE=/pt/ab/new/pathtrace_inline.ko
pathtracectl enable --inline --verify $FUNCS > /tmp/en.out 2>&1
pathtracectl record -o /tmp/v.bin -- sh /tmp/workload.sh 3 /tmp/ms > /tmp/rec.out 2>&1
pathtracectl disable --all > /dev/null
pathregen --verify /tmp/v.bin 2>&1 | grep "^verify:"
echo "check_frames differences: $(dmesg | grep -c 'kept frame')"
dmesg | grep 'kept frame' | head -5
pathtracectl status | head -1
rmmod pathtrace
