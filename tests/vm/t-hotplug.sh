# VM test: CPU hotplug while tracing. CPU 1 goes offline and comes back in
# the middle of a record while a workload runs; the module keeps tracing on
# what is online, the trace regenerates equal to its every-block records,
# disable and unload are clean, and dmesg stays clean (vm-run checks it).
# vm-kernels: all
. /pt/lib/check.sh

mkdir -p /run
insmod /pt/pathtrace.ko
CPU1=/sys/devices/system/cpu/cpu1/online
FUNCS="vfs_read vfs_write ksys_read ksys_write do_sys_openat2 do_filp_open
path_openat link_path_walk filp_close __fput vfs_getattr walk_component
lookup_fast step_into may_open dput generic_permission inode_permission"

cat >/tmp/workload.sh <<'EOW'
i=0
while [ $i -lt $1 ]; do
	cat /proc/version /pt/lib/check.sh >/dev/null
	ls -l /pt /proc/self >/dev/null
	echo $i > /tmp/w
	i=$((i + 1))
done
EOW
# Offline CPU 1 after a second, online it after another, while recording.
cat >/tmp/plug.sh <<'EOP'
sh /tmp/workload.sh 60 &
sleep 1
echo 0 > /sys/devices/system/cpu/cpu1/online || exit 1
sh /tmp/workload.sh 20
sleep 1
echo 1 > /sys/devices/system/cpu/cpu1/online || exit 1
sh /tmp/workload.sh 20
wait
EOP

check "CPU 1 can go offline" test -w $CPU1
pathtracectl enable --verify $FUNCS >/tmp/en.out 2>&1
grep -v ": enabled as" /tmp/en.out
check "at least 15 functions enabled with --verify" \
	sh -c '[ $(grep -c ": enabled as" /tmp/en.out) -ge 15 ]'
check "record across offline/online of CPU 1" \
	pathtracectl record -o /tmp/hp.bin -- sh /tmp/plug.sh
check "CPU 1 is back" grep -q 1 $CPU1
pathregen --verify /tmp/hp.bin >/tmp/verify.out 2>&1
echo "pathregen --verify: $?"
grep -E '^verify:|^pathregen' /tmp/verify.out | head -5
check "regeneration equals the every-block records" grep -q '^verify: .* 0 differences$' /tmp/verify.out
check "trace again with CPU 1 online" \
	pathtracectl record -o /tmp/hp2.bin -- sh /tmp/workload.sh 5

# CPU 1 goes offline mid-record and is still offline at stop, where the
# stop's flush cannot reach it: what it kept back (bits, ENTER codes,
# segments) must have been written as it went, or its tasks' streams lose
# a piece in the middle.
cat >/tmp/plug2.sh <<'EOP'
sh /tmp/workload.sh 40 &
sh /tmp/workload.sh 40 &
sleep 1
echo 0 > /sys/devices/system/cpu/cpu1/online || exit 1
wait
EOP
check "record with CPU 1 offline at stop" \
	pathtracectl record -o /tmp/hp3.bin -- sh /tmp/plug2.sh
echo 1 > $CPU1
pathregen --verify /tmp/hp3.bin >/tmp/verify3.out 2>&1
echo "pathregen --verify (offline at stop): $?"
grep -E '^verify:|^pathregen|gap' /tmp/verify3.out | head -5
check "regeneration equals the every-block records (CPU 1 offline at stop)" \
	grep -q '^verify: .* 0 differences$' /tmp/verify3.out
check "no gap in it" sh -c '! grep -q "gap at" /tmp/verify3.out'
check "disable --all" pathtracectl disable --all
check "rmmod" rmmod pathtrace
check "no probes left" sh -c '! grep -q . /sys/kernel/debug/kprobes/list'
finish
