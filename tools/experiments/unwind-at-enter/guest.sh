#!/bin/sh
# Guest half of the unwind-at-enter experiment (README): bench-vm's 61
# functions in witness mode, its workload recorded three times with the
# experiment's unwinding off and on, alternately; the module's counts go to
# dmesg at rmmod and to /pt/out/xunwind.txt, the last trace with unwinding
# to /pt/out/x1.bin.
set -eu
# bench-vm's guest half up to its measurements: FUNCS, the workload, insmod, warm-up
set -- 5 0
sed '/^untraced_ms=/q' /pt/bench.sh >/tmp/head.sh
. /tmp/head.sh
pathtracectl enable $FUNCS >/tmp/en.txt 2>&1 || true
echo "enabled=$(grep -c 'enabled as' /tmp/en.txt)"
for r in 1 2 3; do
	for x in 0 1; do
		echo $x >/sys/module/pathtrace/parameters/unwind_exp
		pathtracectl record -o /tmp/x$x.bin -- sh /tmp/workload.sh 5 /tmp/ms.x$x \
			>/tmp/rec.x$x 2>&1 || { cat /tmp/rec.x$x; exit 1; }
		echo "round=$r unwind=$x workload_ms=$(cat /tmp/ms.x$x)"
	done
done
echo 0 >/sys/module/pathtrace/parameters/unwind_exp
cp /tmp/x1.bin /pt/out/x1.bin
pathtracectl disable --all >/dev/null
rmmod pathtrace
dmesg | grep -E "xunwind|xpair" >/pt/out/xunwind.txt
grep xunwind /pt/out/xunwind.txt
