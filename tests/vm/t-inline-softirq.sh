# VM test: an ENTER that serves a softirq names its frame from the call a
# copy keeps on the interrupt stack, with no walk (docs/inline.md, "Frames
# the copies keep"; kmod/frames.c pt_frames_kept_softirq). tcp_v4_rcv and
# tcp_rcv_established are witness copies with tcp_v4_do_rcv between them
# untraced, so tcp_rcv_established's ENTER in the receive softirq runs under
# tcp_v4_rcv's call; TCP over loopback on both CPUs. With check_frames on,
# pathtrace.ko walks every frame named without a walk as well and warns where
# the two differ (a warning fails the run); --verify regenerates exactly,
# with check_frames on and off.
# vm-kernels: all
. /pt/lib/check.sh

insmod /pt/pathtrace.ko
export PATHTRACE_STATE=/tmp/ptstate PATHTRACE_INLINE_MODULE=/pt/pathtrace_inline.ko
ip link set lo up
FUNCS="tcp_v4_rcv tcp_rcv_established"

# /tmp/workload.sh ROUNDS: 64 KiB echoed over loopback TCP, ROUNDS times on each CPU
cat >/tmp/workload.sh <<'W'
head -c 65536 /dev/zero >/tmp/blob
for c in 0 1; do
	taskset -c $c nc -ll -p $((5000 + c)) -e cat </dev/null >/dev/null 2>&1 &
	servers="$servers $!"
done
sleep 1
for c in 0 1; do
	taskset -c $c sh -c 'i=0; while [ $i -lt $1 ]; do
		nc 127.0.0.1 $((5000 + $2)) </tmp/blob >/tmp/echo.$2
		[ $(wc -c </tmp/echo.$2) = 65536 ] || echo "nc: echo incomplete" >>/tmp/workload.failed
		i=$((i + 1)); done' sh $1 $c &
	loops="$loops $!"
done
wait $loops
kill $servers
wait $servers 2>/dev/null
W

for m in checked fast; do
	if [ $m = checked ]; then
		echo Y >/sys/module/pathtrace/parameters/check_frames
	else
		echo N >/sys/module/pathtrace/parameters/check_frames
	fi
	check "$m: enable --inline --verify $FUNCS" pathtracectl enable --inline --verify $FUNCS
	check "$m: record TCP over loopback" pathtracectl record -o /tmp/$m.bin -- sh /tmp/workload.sh 10
	check "$m: every echo came back whole" test ! -e /tmp/workload.failed
	pathtracectl status >/tmp/st.$m
	head -n 1 /tmp/st.$m
	kept_softirq=$(sed -n '1s/.* frames kept, \([0-9]*\) of them in softirqs, .*/\1/p' /tmp/st.$m)
	check "$m: ENTERs in softirqs named the frames the copies kept" test "${kept_softirq:-0}" -gt 0
	pathregen --verify /tmp/$m.bin >/tmp/v.$m 2>&1
	tail -n 2 /tmp/v.$m
	check "$m: regeneration equals the every-block records" pathregen --verify /tmp/$m.bin
	pathregen /tmp/$m.bin >/tmp/r.$m 2>&1
	check "$m: tcp_rcv_established regenerated under tcp_v4_rcv" \
		awk '/tcp_v4_rcv/ { v = 1 } v && /tcp_rcv_established/ { ok = 1 } END { exit !ok }' /tmp/r.$m
	check "$m: disable" pathtracectl disable --all
done
check "no frame named otherwise than the walk names it" sh -c '! dmesg | grep -q "kept frame"'
check "rmmod" rmmod pathtrace
finish
