# VM test: remove plans while path walks run on both CPUs, many times in one
# VM. This is t-kmod-kernel's sequence that once hung the kernel (issue 10):
# 29 VFS/slab functions with --enter --bits --verify, trace, overrun 8 KB
# buffers, drain, remove every plan - repeated CYCLES times (the first
# argument, default 3) while `ls`/`cat` path walks run on both CPUs.
#
# The hang was QEMU's multi-threaded TCG executing a stale translation of
# kernel text that text_poke had already rewritten (tools/vm-run's header
# says how); vm-run now runs the guest with one TCG thread. A hang here
# fails the run: vm-run's timeout (exit 124), or the soft-lockup lines its
# dmesg check rejects, or the RCU-stall check below.
#
# A second argument `native` runs the same cycles without pathtrace.ko: the
# kernel's own function tracer and kprobe events at the plans' probe sites,
# armed and disarmed under the same path walks - to tell QEMU from the module.
. /pt/lib/check.sh

cycles=${1:-3}
FUNCS="vfs_read vfs_write ksys_read ksys_write do_sys_openat2 do_filp_open path_openat
link_path_walk getname_flags filp_close __fput vfs_getattr generic_file_read_iter
filemap_read pipe_read pipe_write do_dentry_open may_open dput walk_component
lookup_fast step_into rw_verify_area kmem_cache_alloc kfree vfs_open
generic_permission inode_permission path_init complete_walk"

. /pt/lib/walks.sh
walks_start

if [ "${2:-}" = native ]; then
	T=/sys/kernel/tracing
	mountpoint -q $T || mount -t tracefs tracefs $T
	# The kernel's own kprobes on the sites pathtrace's plans use.
	for f in $FUNCS; do
		pathtracectl plan "$f" --live 2>/dev/null |
			sed -n '/^probe sites:/,/^$/s/^  \([^ ]*+0x[0-9a-f]*\) .*/\1/p'
	done >/tmp/sites
	i=1
	while [ $i -le $cycles ]; do
		echo "cycle $i (native: function tracer + kprobe events)"
		n=0
		: > $T/kprobe_events
		for site in $(cat /tmp/sites); do
			echo "p:ptstress/k$n $site" >> $T/kprobe_events 2>/dev/null && n=$((n + 1))
		done
		check "cycle $i: hundreds of kprobe events ($n)" test $n -ge 200
		: > $T/set_ftrace_filter
		for f in $FUNCS; do echo $f >> $T/set_ftrace_filter 2>/dev/null; done
		check "cycle $i: ftrace filter set" sh -c "[ \$(wc -l < $T/set_ftrace_filter) -ge 20 ]"
		check "cycle $i: kprobes armed" sh -c "echo 1 > $T/events/ptstress/enable"
		check "cycle $i: function tracer on" sh -c "echo function > $T/current_tracer"
		sleep 1
		check "cycle $i: overrun 8 KB buffers" sh -c "echo 8 > $T/buffer_size_kb && sleep 1 &&
			grep -q 'overrun: [1-9]' $T/per_cpu/cpu0/stats"
		check "cycle $i: function tracer off" sh -c "echo nop > $T/current_tracer"
		check "cycle $i: kprobes disarmed" sh -c "echo 0 > $T/events/ptstress/enable"
		check "cycle $i: kprobe events removed" sh -c ": > $T/kprobe_events"
		check "cycle $i: no probes left" sh -c '! grep -q . /sys/kernel/debug/kprobes/list'
		echo 1024 > $T/buffer_size_kb
		i=$((i + 1))
	done
else
	insmod /pt/pathtrace.ko
	i=1
	while [ $i -le $cycles ]; do
		echo "cycle $i"
		pt-plan add --enter --bits --verify $FUNCS >/tmp/add.out 2>&1
		check "cycle $i: at least 20 functions accepted" \
			sh -c '[ $(grep -c ^added /tmp/add.out) -ge 20 ]'
		check "cycle $i: trace with 1 MB" sh -c 'pt-plan config 1024 && pt-plan start &&
			sleep 1 && pt-plan stop && pt-plan dump /tmp/k1'
		check "cycle $i: overrun 8 KB buffers" sh -c 'pt-plan config 8 && pt-plan start &&
			sleep 1 && pt-plan dump /tmp/k2 && sleep 1 && pt-plan stop && pt-plan dump /tmp/k3'
		check "cycle $i: drops counted" sh -c '! pt-plan stats | grep -q "dropped=0 "'
		check "cycle $i: remove the plans" pt-plan del all
		check "cycle $i: no probes left" sh -c '! grep -q . /sys/kernel/debug/kprobes/list'
		i=$((i + 1))
	done
	check "unload" rmmod pathtrace
fi

walks_stop
check "no soft lockup or RCU stall" sh -c '! dmesg | grep -E "soft lockup|rcu.*stall"'
finish
