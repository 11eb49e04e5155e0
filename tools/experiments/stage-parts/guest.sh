#!/bin/sh
# Guest half of the stage-parts experiment (README): bench-vm's 61
# functions as witness copies, its workload (5 rounds a CPU) run untraced
# and then recorded, TRIALS times, alternately with the patch's module
# parameters PARAM... off and on (default: dense compiled; NAME=VALUE
# holds one at VALUE on both sides); after each recording the patch's
# per-part times, from dmesg.
set -eu
trials=${1:-8}
[ $# -gt 0 ] && shift
params=${*:-dense compiled}
# bench-vm's guest half up to its measurements: FUNCS, the workload, insmod, warm-up
set -- 5 0
sed '/^untraced_ms=/q' /pt/bench.sh >/tmp/head.sh
. /tmp/head.sh
pathtracectl enable --inline $FUNCS >/tmp/en.txt 2>&1 || true
dmesg | sed -n 's/^.*pathtrace: ctxsz /ctxsz /p'
grep "^enable: [0-9]* enabled" /tmp/en.txt
r=0
while [ $r -lt "$trials" ]; do
	x=$((r % 2))
	for p in dense compiled floor callcost norun nostage; do
		echo 0 >/sys/module/pathtrace/parameters/$p
	done
	for p in $params; do
		case $p in
		*=*) echo "${p#*=}" >/sys/module/pathtrace/parameters/"${p%%=*}" ;;
		*) echo $x >/sys/module/pathtrace/parameters/$p ;;
		esac
	done
	sh /tmp/workload.sh 5 /tmp/ms.u >/dev/null 2>&1
	dmesg -c >/dev/null
	pathtracectl record -o /tmp/x.bin -- sh /tmp/workload.sh 5 /tmp/ms.x \
		>/tmp/rec.x 2>&1 || { cat /tmp/rec.x; exit 1; }
	echo "round=$r trial=$x untraced_ms=$(cat /tmp/ms.u) workload_ms=$(cat /tmp/ms.x)"
	dmesg | sed -n 's/^\[[^]]*\] pathtrace: tt /tt /p'
	pathtracectl status | head -1
	r=$((r + 1))
done
pathtracectl disable --all >/dev/null
rmmod pathtrace
dmesg | grep -i -E "warn|bug|oops" | head -5 || true
