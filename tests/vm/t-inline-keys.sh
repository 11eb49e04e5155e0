# VM test: enable --inline on kernel functions with static keys and static
# calls (docs/inline.md, "Static keys and static calls"): the copies carry
# them as a compiled module's code would, registered in the generated
# module's __jump_table and .static_call_sites. A tracepoint's key flipped
# while traced patches the copy too (its events come from the copies, the
# only code that runs), --verify finds 0 differences before and after the
# flip, in step 1 (probes on the copies) and step 2 (inline counters).
. /pt/lib/check.sh

. /pt/lib/inline.sh
# kernel_clone and wake_up_new_task: tracepoint keys (sched_process_fork,
# sched_wakeup_new); pipe_read, pipe_write: static calls (cond_resched)
KERNEL="kernel_clone wake_up_new_task pipe_read pipe_write"
TP=/sys/kernel/tracing
grep -q " $TP " /proc/mounts || mount -t tracefs nodev $TP

cat >/tmp/workload.sh <<'W'
for c in 1 2; do
	taskset $c sh -c 'i=0; while [ $i -lt $1 ]; do echo x | cat >/dev/null; /bin/true;
		i=$((i + 1)); done' sh $1 &
done
wait
W

pathtracectl enable --inline-probes --verify --moddir /pt $KERNEL >/tmp/en.out 2>&1
echo "enable: $?"
cat /tmp/en.out
for f in $KERNEL; do
	check "$f enabled as a copy" grep -q "^$f: enabled as" /tmp/en.out
done
check "4 copies" grep -q "inline: 4 functions run as copies" /tmp/en.out
check "the module has a __jump_table" test -e /sys/module/pathtrace_inline/sections/__jump_table
check "the module has .static_call_sites" \
	test -e /sys/module/pathtrace_inline/sections/.static_call_sites

check "record, tracepoints off" pathtracectl record -o /tmp/off.bin -- sh /tmp/workload.sh 20
check "tracepoints off: regeneration equals the every-block records" pathregen --verify /tmp/off.bin

# flip the keys of the tracepoints the copies hold: only the copies run
echo > $TP/trace
echo 1 > $TP/events/sched/sched_process_fork/enable
echo 1 > $TP/events/sched/sched_wakeup_new/enable
check "record, tracepoints on" pathtracectl record -o /tmp/on.bin -- sh /tmp/workload.sh 20
echo 0 > $TP/events/sched/sched_process_fork/enable
echo 0 > $TP/events/sched/sched_wakeup_new/enable
grep -c sched_process_fork $TP/trace
check "the copy of kernel_clone fired sched_process_fork" grep -q "sched_process_fork:" $TP/trace
check "the copy of wake_up_new_task fired sched_wakeup_new" grep -q "sched_wakeup_new:" $TP/trace
check "tracepoints on: regeneration equals the every-block records" pathregen --verify /tmp/on.bin
check "record, tracepoints off again" pathtracectl record -o /tmp/off2.bin -- sh /tmp/workload.sh 10
check "off again: regeneration equals the every-block records" pathregen --verify /tmp/off2.bin
check "disable" pathtracectl disable --all
check "the module is unloaded" test ! -e /sys/module/pathtrace_inline

# step 2: the counters are code in the copies; the key sites move with them
pathtracectl enable --inline --mode edges --moddir /pt $KERNEL >/tmp/ed.out 2>&1
echo "enable edges: $?"
cat /tmp/ed.out
check "edges: 4 copies carry counters" grep -q "inline: 4 functions run as copies" /tmp/ed.out
echo > $TP/trace
echo 1 > $TP/events/sched/sched_process_fork/enable
check "edges: record with the tracepoint on" pathtracectl record -o /tmp/ed.bin -- \
	sh /tmp/workload.sh 10
echo 0 > $TP/events/sched/sched_process_fork/enable
check "edges: the copy of kernel_clone fired sched_process_fork" \
	grep -q "sched_process_fork:" $TP/trace
check "edges: kernel_clone counted" sh -c "pathregen --edges /tmp/ed.bin | grep -q kernel_clone"
check "edges: disable" pathtracectl disable --all
check "edges: the module is unloaded" test ! -e /sys/module/pathtrace_inline

finish
