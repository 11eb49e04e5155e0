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
cat >/tmp/workload.sh <<'EOW'
n=$1
msfile=$2
servers=
for cpu in 0 1; do
	taskset -c $cpu nc -ll -p $((5000 + cpu)) -e cat </dev/null >/dev/null 2>&1 &
	servers="$servers $!"
done
sleep 1
t0=$(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime)
loops=
for cpu in 0 1; do
	taskset -c $cpu sh -c '
		d=/tmp/w'$cpu'
		mkdir -p $d
		i=0
		while [ $i -lt '$n' ]; do
			dd if=/dev/zero of=$d/f$i bs=4k count=16 2>/dev/null
			cat $d/f$i >/dev/null
			ls -l $d /pt /pt/lib /proc/self >/dev/null
			cat /proc/version /pt/lib/check.sh | wc -c >/dev/null
			nc 127.0.0.1 '$((5000 + cpu))' <$d/f$i >$d/echo
			[ $(wc -c <$d/echo) = 65536 ] || echo "nc: echo incomplete" >>/tmp/workload.failed
			rm $d/f$i $d/echo
			i=$((i + 1))
		done' &
	loops="$loops $!"
done
wait $loops
t1=$(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime)
kill $servers
wait $servers 2>/dev/null
echo $((t1 - t0)) >"$msfile"
EOW
FUNCS="vfs_read vfs_write ksys_read ksys_write rw_verify_area do_sys_openat2
do_filp_open getname_flags do_dentry_open vfs_open may_open __fput dput
walk_component lookup_fast complete_walk generic_permission inode_permission
vfs_fstatat vfs_statx iterate_dir
shmem_file_read_iter shmem_write_begin shmem_write_end shmem_get_folio_gfp
shmem_alloc_and_acct_folio shmem_add_to_page_cache shmem_getattr shmem_fault
shmem_mknod shmem_create shmem_unlink shmem_evict_inode
tcp_sendmsg tcp_sendmsg_locked tcp_recvmsg tcp_recvmsg_locked tcp_poll __tcp_transmit_skb
__ip_queue_xmit ip_output ip_finish_output2 loopback_xmit process_backlog
ip_local_deliver tcp_v4_do_rcv inet_stream_connect __sys_connect
__sys_accept4 tcp_close
handle_mm_fault do_wp_page get_unmapped_area vm_area_alloc vm_area_dup
free_pgtables folio_add_lru __alloc_pages kmem_cache_alloc kfree __kmalloc"
cat >/tmp/wrap.sh <<'EOW'
sh /tmp/workload.sh $1 $2
awk '{print $14 + $15}' /proc/$PPID/stat > $2.rec
EOW
stat_now() { awk '/^cpu /{ b = $2 + $3 + $4 + $7 + $8; i = $5 + $6 } /^ctxt/{ c = $2 } END { print b, i, c }' /proc/stat; }
# run LABEL CMD...: the workload under CMD; prints ms, busy/idle ticks, ctxt, recorder ticks
sh /tmp/workload.sh 1 /tmp/ms
one() {
	mod=$1
	insmod /pt/ab/$mod/pathtrace.ko || { echo "insmod $mod failed"; exit 1; }
	export PATHTRACE_INLINE_MODULE=/pt/ab/$mod/pathtrace_inline.ko
	pathtracectl enable --inline $FUNCS > /tmp/en.out 2>&1; grep -q "^enable: 60 enabled" /tmp/en.out || { cat /tmp/en.out; exit 1; }
	sh /tmp/workload.sh 5 /tmp/ms; idle=$(cat /tmp/ms)
	pathtracectl record -o /tmp/r.bin -- sh /tmp/wrap.sh 5 /tmp/ms > /tmp/rec.out 2>&1
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
