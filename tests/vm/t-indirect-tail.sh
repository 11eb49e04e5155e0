# VM test: vmlinux functions that end in an indirect jmp (a retpoline thunk
# tail call such as tcp_data_ready's sk->sk_data_ready(sk)) are enabled:
# no .rodata/.data word points inside them (userspace/lib/source/ktext_refs.c), so
# the jmp is an indirect tail call. They used to be refused as
# indirect-jump. Under TCP over loopback and file I/O on both CPUs, every
# function runs, the tail calls are taken, and the regeneration equals the
# every-block records of the same run. A computed goto stays refused.
# vm-kernels: all
. /pt/lib/check.sh

# Functions of 'tcp_* vfs_*' with an indirect tail call, and those of them
# whose tail call this workload must take (tcp_in_ack_event's jumps only to
# a congestion control's in_ack_event, which the default cubic lacks).
FUNCS="tcp_data_ready tcp_in_ack_event tcp_done vfs_getattr_nosec vfs_fsync_range"
TAKEN="tcp_data_ready tcp_done vfs_getattr_nosec vfs_fsync_range"

insmod /pt/pathtrace.ko
check "loopback up" ip link set lo up

# The block ending in FUNC's indirect tail call, as pathregen names blocks.
ijmp_block() {
	awk '/^B[0-9]+ / { b = $2 }
	     /last .*: tail call (__x86_indirect_thunk|\(indirect\))/ { print b; exit }' /tmp/cfg.$1
}

for f in $FUNCS; do
	pathtracectl cfg $f --live >/tmp/cfg.$f 2>&1
	check "$f: CFG has an indirect tail call" test -n "$(ijmp_block $f)"
done

# The BPF interpreter's computed gotos: its jumptable in .rodata points
# inside it, so its indirect jmps stay refused, and the refusal says why.
expect_out "___bpf_prog_run: refused, naming the .rodata word inside it" \
	"points to ___bpf_prog_run+0x" pathtracectl cfg ___bpf_prog_run --live

pathtracectl enable --verify $FUNCS >/tmp/enable.out 2>&1
cat /tmp/enable.out
n=$(echo $FUNCS | wc -w)
check "all $n enabled, none refused" grep -q "^enable: $n enabled, 0 refused" /tmp/enable.out

# An echo server per CPU (nc -e cat); each round a file is written with
# fsync (vfs_fsync_range), stat'ed (vfs_getattr_nosec) and sent over TCP
# and back (tcp_*).
cat >/tmp/workload.sh <<'EOW'
for cpu in 0 1; do
	taskset -c $cpu nc -ll -p $((5000 + cpu)) -e cat </dev/null >/dev/null 2>&1 &
	servers="$servers $!"
done
sleep 1
for cpu in 0 1; do
	taskset -c $cpu sh -c '
		d=/tmp/w'$cpu'
		mkdir -p $d
		i=0
		while [ $i -lt 5 ]; do
			dd if=/dev/zero of=$d/f bs=4k count=4 conv=fsync 2>/dev/null
			stat $d/f >/dev/null
			nc 127.0.0.1 '$((5000 + cpu))' <$d/f >$d/echo
			[ $(wc -c <$d/echo) = 16384 ] || echo "echo $i incomplete" >>/tmp/workload.failed
			i=$((i + 1))
		done' &
	loops="$loops $!"
done
wait $loops
kill $servers
EOW
pathtracectl record -o /tmp/t.bin -- sh /tmp/workload.sh
check "the workload's TCP echoes were complete" test ! -e /tmp/workload.failed
pathtracectl status | tee /tmp/status
# status: a heading line, the column names, then one row per function (hits: column 5)
for f in $FUNCS; do
	check "$f ran" awk -v f=$f 'NR > 2 && $2 == f && $5 > 0 { ok = 1 } END { exit !ok }' /tmp/status
done

pathregen --verify /tmp/t.bin >/tmp/verify.out 2>&1
cat /tmp/verify.out
check "regeneration equals the verify records: 0 differences" \
	grep -q "^verify: .* 0 differences$" /tmp/verify.out
check_champsim indirect-tail /tmp/t.bin
pathregen --blocks /tmp/t.bin >/tmp/blocks.out 2>&1
for f in $FUNCS; do
	b=$(ijmp_block $f)
	runs=$(awk -v b="$b" '$2 == b { print $1 }' /tmp/blocks.out)
	echo "$f: indirect tail call block $b executed ${runs:-0} times"
done
for f in $TAKEN; do
	b=$(ijmp_block $f)
	check "$f: its indirect tail call was taken (block $b)" \
		awk -v b="$b" '$2 == b && $1 > 0 { ok = 1 } END { exit !ok }' /tmp/blocks.out
done
pathtracectl disable --all >/dev/null
check "rmmod" rmmod pathtrace
finish
