# VM test: the whole life cycle, many times in one VM, under a workload on
# both CPUs: insmod, enable, record, disable, rmmod - CYCLES times (the first
# argument, default 30). Each cycle's recording must regenerate with 0
# verify differences and every loss located; the module must unload every
# time, and dmesg (checked by vm-run after the script) must stay clean: no
# WARNING, BUG, leaked probe or kprobe failure. Odd cycles verify (every
# block probed), even ones run the default witness plans only. About 8 s a
# cycle under TCG with the workload running. The suite's 100 enable and
# remove cycles under load are t-inline-stress's; 30 here keep its time
# (docs/testing.md, "The suite's time").
# vm-timeout: 1200
. /pt/lib/check.sh

cycles=${1:-30}
FUNCS="vfs_read ksys_read rw_verify_area getname_flags"
O=/tmp/cycles
mkdir -p $O

# File reads, opens and stats on both CPUs until /tmp/stop-work exists, at
# nice 19: they take what the cycle's own commands leave of a CPU, not half
# of it (tests/vm/lib/walks.sh).
rm -f /tmp/stop-work
for cpu in 0 1; do
	taskset -c $cpu sh -c '
		renice -n 19 -p $$ >/dev/null
		while [ ! -e /tmp/stop-work ]; do
			cat /proc/version /pt/lib/check.sh >/dev/null
			ls -l /pt >/dev/null
		done' &
done

failed=0
i=1
while [ $i -le $cycles ]; do
	v=
	[ $((i % 2)) = 1 ] && v=--verify
	ok=1
	insmod /pt/pathtrace.ko || ok=0
	[ $ok = 1 ] && { pathtracectl enable $v $FUNCS > $O/enable 2>&1 || ok=0; }
	[ $ok = 1 ] && { pathtracectl record -o $O/t.bin --duration 0.5 > $O/record 2>&1 || ok=0; }
	[ $ok = 1 ] && { pathregen --stats $O/t.bin > $O/stats 2> $O/err || ok=0; }
	[ $ok = 1 ] && [ -n "$v" ] && { pathregen --verify $O/t.bin > $O/verify 2>&1 || ok=0; }
	[ $ok = 1 ] && { pathtracectl disable --all > $O/disable 2>&1 || ok=0; }
	rmmod pathtrace || ok=0
	if [ $ok = 0 ]; then
		failed=$((failed + 1))
		echo "cycle $i failed:"
		tail -3 $O/enable $O/record $O/err $O/verify $O/disable 2>/dev/null | sed 's/^/     | /'
		lsmod | grep -q '^pathtrace ' && rmmod pathtrace
	fi
	[ $((i % 10)) = 0 ] && echo "cycle $i: $failed failed so far; $(grep -h '^activations' $O/stats)"
	i=$((i + 1))
done
touch /tmp/stop-work
wait
check "$cycles cycles of insmod, enable, record, disable, rmmod: none failed ($failed)" \
	test $failed -eq 0
check "no probe left registered" sh -c '! grep -q . /sys/kernel/debug/kprobes/list'
finish
