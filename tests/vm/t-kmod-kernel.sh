# VM test: hand-built plans on real kernel functions under a busybox workload
# on both CPUs. Every BLOCK step and Jcc bit must agree with the decoded
# code in every owner's stream (tasks, softirqs, interrupts), every CPU
# writes pages, owners switch. Prints the figures for the report: probes per
# function, the share the kernel jump-optimized, trace bytes per second.
# Then: a full buffer gives counted LOSS records; unloading while a workload
# runs on both CPUs is safe.
# vm-kernels: all
. /pt/lib/check.sh

insmod /pt/pathtrace.ko
FUNCS="vfs_read vfs_write ksys_read ksys_write do_sys_openat2 do_filp_open path_openat
link_path_walk getname_flags filp_close __fput vfs_getattr generic_file_read_iter
filemap_read pipe_read pipe_write do_dentry_open may_open dput walk_component
lookup_fast step_into rw_verify_area kmem_cache_alloc kfree vfs_open
generic_permission inode_permission path_init complete_walk"

workload() {
	for cpu in 0 1; do
		taskset -c $cpu sh -c '
			i=0
			while [ $i -lt '"$1"' ]; do
				cat /proc/version /pt/lib/check.sh >/dev/null
				ls -l /pt /proc/self >/dev/null
				echo $i > /tmp/w.'$cpu'
				cat /tmp/w.'$cpu' | wc -c >/dev/null
				i=$((i + 1))
			done' &
	done
	wait
}

pt-plan add --enter --bits --verify --map /tmp/map $FUNCS >/tmp/add.out 2>&1
cat /tmp/add.out
check "at least 20 real functions accepted" sh -c '[ $(grep -c ^added /tmp/add.out) -ge 20 ]'
check "refusals are kprobes' errnos, with a reason" sh -c '! grep -v -e ^added -e "^refused .* E[A-Z]*$" -e "^refused .*: " /tmp/add.out'
check "config 16 MB per CPU" pt-plan config 16384
check "start" pt-plan start
t0=$(cut -d' ' -f1 /proc/uptime)
workload 40
t1=$(cut -d' ' -f1 /proc/uptime)
check "stop" pt-plan stop
check "read pages" pt-plan dump /tmp/k
pt-plan check --map /tmp/map /tmp/k >/tmp/check.out 2>&1
cat /tmp/check.out
check "records parse; every step agrees with the code" pt-plan check --map /tmp/map /tmp/k
check "every CPU wrote pages" grep -q "cpus_with_pages=2 " /tmp/check.out
check "owners switched" sh -c '[ $(sed -n "s/.*owner_switches=\([0-9]*\).*/\1/p" /tmp/check.out) -gt 10 ]'
check "thousands of steps checked" sh -c '[ $(sed -n "s/.*checked=\([0-9]*\).*/\1/p" /tmp/check.out) -gt 2000 ]'
check "no drops with 16 MB buffers" sh -c 'pt-plan stats | grep -q "dropped=0 "'

# Figures: probes, optimized probes, bytes.
probes=0; opt=0; bytes=0; n=0
for id in $(pt-plan list | cut -d' ' -f1); do
	set -- $(pt-plan fstats $id | sed 's/[a-z]*=//g')
	probes=$((probes + $1)); opt=$((opt + $2)); bytes=$((bytes + $5)); n=$((n + 1))
done
echo "FIGURE functions=$n every-block-probes=$probes optimized=$opt ($((100 * opt / probes))%) bytes=$bytes seconds=$t0..$t1"
awk -v b=$bytes -v t0=$t0 -v t1=$t1 'BEGIN { printf "FIGURE bytes_per_second=%.0f (workload %.2f s, TCG)\n", b / (t1 - t0), t1 - t0 }'
kl=$(grep -c "\[OPTIMIZED\]" /sys/kernel/debug/kprobes/list)
check "fstats' optimized count agrees with debugfs" sh -c "[ $kl = $opt ]"

# A full buffer: 8 KB per CPU, nobody reading. Drops are counted and the
# next write after a drain is preceded by LOSS(OVERRUN, count); drops still
# pending at stop are written once the final drain has emptied the buffer.
check "config 8 KB" pt-plan config 8
check "start small" pt-plan start
workload 5
check "drain while tracing" pt-plan dump /tmp/full1
workload 2
check "stop small" pt-plan stop
check "drain" pt-plan dump /tmp/full2
pt-plan stats
check "drops were counted" sh -c '! pt-plan stats | grep -q "dropped=0 "'
mkdir -p /tmp/full
for c in 0 1; do cat /tmp/full1/cpu$c.pages /tmp/full2/cpu$c.pages > /tmp/full/cpu$c.pages; done
pt-plan check /tmp/full >/tmp/full.out 2>&1
cat /tmp/full.out
check "LOSS(OVERRUN) records in the stream" sh -c '[ $(sed -n "s/.*loss_overrun_count=\([0-9]*\).*/\1/p" /tmp/full.out) -gt 0 ]'
dropped=$(pt-plan stats | sed -n 's/.*dropped=\([0-9]*\).*/\1/p')
reported=$(sed -n "s/.*loss_overrun_count=\([0-9]*\).*/\1/p" /tmp/full.out)
check "every drop is located by a LOSS record ($reported == $dropped)" sh -c "[ $reported -eq $dropped ]"

# Missed hits: the ENTER handler of vfs_statx reads the return address with
# copy_from_kernel_nofault, whose own probe then hits inside a handler and
# is skipped by the kernel (nmissed). Each miss becomes LOSS(MISSED).
check "remove the plans" pt-plan del all
check "config 1 MB again" pt-plan config 1024
check "trace copy_from_kernel_nofault and an ENTER user of it" \
	pt-plan add --enter --id 100 copy_from_kernel_nofault vfs_statx
check "start missed" pt-plan start
workload 3
check "stop missed" pt-plan stop
check "drain missed" pt-plan dump /tmp/miss
pt-plan check /tmp/miss >/tmp/miss.out 2>&1
cat /tmp/miss.out
pt-plan fstats 100
check "the kernel counted misses" sh -c '! pt-plan fstats 100 | grep -q "missed=0 "'
check "LOSS(MISSED) records in the stream" sh -c '! grep -q "loss_missed_records=0" /tmp/miss.out'
m=$(pt-plan fstats 100 | sed -n 's/.*missed=\([0-9]*\).*/\1/p')
check "every miss is reported in the stream ($m)" grep -q "loss_missed_count=$m\$" /tmp/miss.out

# Unload while tracing and a workload runs on both CPUs.
check "config 1 MB" pt-plan config 1024
check "start for unload" pt-plan start
workload 30 &
sleep 1
check "rmmod while tracing under load" rmmod pathtrace
wait
check "module gone" sh -c '! grep -q "^pathtrace " /proc/modules'
check "no probes left" sh -c '! grep -q . /sys/kernel/debug/kprobes/list'
finish
