#!/bin/sh
# Guest half of the hit-parts experiment (README): bench-vm's 61 functions
# as witness copies, its workload (5 rounds a CPU) recorded ROUNDS times,
# alternately with the context rows' index off and on (the patch's
# ctx_index); after each recording the patch's per-part times, from dmesg.
set -eu
rounds=${1:-4}
# bench-vm's guest half up to its measurements: FUNCS, the workload, insmod, warm-up
set -- 5 0
sed '/^untraced_ms=/q' /pt/bench.sh >/tmp/head.sh
. /tmp/head.sh
pathtracectl enable --inline $FUNCS >/tmp/en.txt 2>&1 || true
grep "^enable: [0-9]* enabled" /tmp/en.txt
r=0
while [ $r -lt "$rounds" ]; do
	x=$((r % 2))
	echo $x >/sys/module/pathtrace/parameters/ctx_index
	dmesg -c >/dev/null
	pathtracectl record -o /tmp/x.bin -- sh /tmp/workload.sh 5 /tmp/ms.x \
		>/tmp/rec.x 2>&1 || { cat /tmp/rec.x; exit 1; }
	echo "round=$r ctx_index=$x workload_ms=$(cat /tmp/ms.x)"
	dmesg | sed -n 's/^\[[^]]*\] pathtrace: tt /tt /p'
	pathtracectl status | head -1
	r=$((r + 1))
done
pathtracectl disable --all >/dev/null
rmmod pathtrace
