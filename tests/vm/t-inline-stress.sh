# VM test: inline copies under load (docs/inline.md, "Switching over and
# back"). While path walks run on both CPUs:
#  - CYCLES times (the first argument, default 100) enable --inline (trace,
#    paths, edges in turn) and disable --all, each time with a pipe reader
#    asleep in pipe_read under the copies of vfs_read and ksys_read: its
#    stack names the copies, disable waits until it has left them (the
#    writer wakes it 2 s in), and it reads its line intact;
#  - once with the wait4 chain copied too, while a task sleeps in do_wait:
#    its stack names the copies (their ORC entries unwind through them); a record
#    across CPU 1 going offline and back regenerates with 0 differences;
#    neither the copies' module nor pathtrace.ko (whose pt_inline_hit the
#    copies call) can be unloaded while the copies are live; disable
#    --wait 3 gives up while tasks sleep in copies, names them with their
#    stacks and leaves the module loaded; a plain disable then waits for the kernel's fake signal
#    and removes the copies (the sleepers' system calls restart in the
#    originals and complete intact).
# The sleepers sit under copies of the callers of pipe_read and do_wait.
# dmesg stays clean throughout (vm-run rejects WARNING, BUG, Oops).
# 6.1 only for now: on 6.12 a livepatch transition takes over a minute under
# TCG (an enable of these 7 functions 80 s), 100 cycles hours: with the walks
# keeping both CPUs busy it waits for a CPU to go idle (docs/inline.md).
# vm-timeout: 3600
. /pt/lib/check.sh

. /pt/lib/inline.sh
cycles=${1:-100}
LP=/sys/kernel/livepatch/pathtrace_inline
CPU1=/sys/devices/system/cpu/cpu1/online
FAST="$TARGET vfs_read ksys_read"

. /pt/lib/walks.sh
walks_start

mkfifo /tmp/fifo
exec 3<>/tmp/fifo	# read-write: opening does not block, and the fifo never sees EOF

# waits until task $1 sleeps in a frame matching $2 (up to 5 s)
sleeps_in() {
	i=0
	while [ $i -lt 50 ]; do
		grep -q "$2" /proc/$1/stack 2>/dev/null && return 0
		usleep 100000
		i=$((i + 1))
	done
	cat /proc/$1/stack
	return 1
}

# the time since boot in hundredths of a second
now_cs() {
	tr -d . </proc/uptime | cut -d' ' -f1
}

modes="trace paths edges"
t_en=0
t_dis=0
c=1
while [ $c -le $cycles ]; do
	m=$(echo $modes | cut -d' ' -f$(( (c - 1) % 3 + 1 )))
	t0=$(now_cs)
	pathtracectl enable --inline --mode $m --moddir /pt $FAST >/tmp/en.out 2>&1
	t1=$(now_cs)
	t_en=$((t_en + t1 - t0))
	check "cycle $c ($m): 7 functions run as copies" \
		grep -q "^inline: 7 functions run as copies" /tmp/en.out
	grep -q "^inline: 7 functions run as copies" /tmp/en.out || grep -v ": enabled as" /tmp/en.out
	head -n 1 /tmp/fifo >/tmp/read.out &
	reader=$!
	check "cycle $c: the reader sleeps in pipe_read under the copy of vfs_read" \
		sleeps_in $reader "vfs_read+.*pathtrace_inline"
	t0=$(now_cs)
	(sleep 2; echo "line $c" >&3) &
	pathtracectl disable --all >/tmp/dis.out 2>&1
	rc=$?
	t1=$(now_cs)
	t_dis=$((t_dis + t1 - t0))
	check "cycle $c: disable exits 0" test $rc = 0
	check "cycle $c: disable returned only after the reader left the copy (2 s)" \
		test $((t1 - t0)) -ge 200
	check "cycle $c: the reader is in no copy" sh -c "! grep -q pathtrace_inline /proc/$reader/stack 2>/dev/null"
	check "cycle $c: livepatch and module gone" sh -c "[ ! -e $LP ] && [ ! -e /sys/module/pathtrace_inline ]"
	wait $reader
	check "cycle $c: the reader read its line intact" grep -qx "line $c" /tmp/read.out
	[ $rc = 0 ] || { cat /tmp/en.out /tmp/dis.out; break; }
	c=$((c + 1))
done
echo "FIGURE cycles=$((c - 1)) enable_cs_total=$t_en disable_cs_total=$t_dis"

# --- the wait4 chain copied too, with a task asleep in do_wait (busybox
# time waits in wait4; sh's wait sleeps in sigsuspend). do_wait itself is
# refused on 6.1 (its cond_resched is a static call): its callers are copies.
WAIT="do_wait kernel_wait4 __do_sys_wait4"
t0=$(date +%s)
pathtracectl enable --inline --verify --moddir /pt $FAST $WAIT >/tmp/en.out 2>&1
t1=$(date +%s)
grep -v ": enabled as" /tmp/en.out
echo "FIGURE enable with the wait4 chain copied: $((t1 - t0)) s"
check "the wait4 chain has copies" sh -c "grep -q '^inline: \(8\|9\|10\) functions run as copies' /tmp/en.out"
busybox time sleep 100000 2>/dev/null &
waiter=$!
head -n 1 /tmp/fifo >/tmp/read.out &
reader=$!
check "the waiting task sleeps in do_wait" sleeps_in $waiter "do_wait+"
cat /proc/$waiter/stack
check "... under a copy of the wait4 chain, named in its stack" \
	grep -q "\(do_wait\|kernel_wait4\|__do_sys_wait4\)+.*pathtrace_inline" /proc/$waiter/stack
expect_out "... and its stack unwinds through the copy to the system call" "do_syscall_64" \
	cat /proc/$waiter/stack
check "the reader sleeps in pipe_read" sleeps_in $reader "pipe_read+"
cat /proc/$reader/stack
check "... its callers in the copies" sh -c "grep -q 'vfs_read+.*pathtrace_inline' /proc/$reader/stack &&
	grep -q 'ksys_read+.*pathtrace_inline' /proc/$reader/stack"

# CPU hotplug with copies live, while recording
cat >/tmp/plug.sh <<'EOP'
i=0; while [ $i -lt 30 ]; do cat /proc/version >/dev/null; i=$((i + 1)); done
echo 0 > /sys/devices/system/cpu/cpu1/online || exit 1
i=0; while [ $i -lt 30 ]; do cat /proc/version >/dev/null; i=$((i + 1)); done
echo 1 > /sys/devices/system/cpu/cpu1/online || exit 1
i=0; while [ $i -lt 30 ]; do cat /proc/version >/dev/null; i=$((i + 1)); done
EOP
check "record across CPU 1 offline and back, copies live" \
	pathtracectl record -o /tmp/hp.bin -- sh /tmp/plug.sh
check "CPU 1 is back" grep -qx 1 $CPU1
pathregen --verify /tmp/hp.bin >/tmp/verify.out 2>&1
grep -E '^verify:' /tmp/verify.out
check "regeneration equals the every-block records" grep -q '^verify: .* 0 differences$' /tmp/verify.out
check "offline CPU 1 again with copies live" sh -c "echo 0 > $CPU1"
check "and online" sh -c "echo 1 > $CPU1"
check "the copies are still live" grep -qx 1 $LP/enabled

# unload under load
expect_fail "the copies' module cannot be unloaded while live" rmmod pathtrace_inline
check "... it stays" test -e /sys/module/pathtrace_inline
expect_fail "pathtrace.ko cannot be unloaded while the copies call it" rmmod pathtrace
check "... it stays, and the copies keep running" sh -c "test -e /sys/module/pathtrace &&
	grep -qx 1 $LP/enabled && grep -q 'vfs_read+.*pathtrace_inline' /proc/$reader/stack"

# disable gives up while tasks sleep in the copies, and forces nothing
pathtracectl disable --all --wait 3 >/tmp/dis.out 2>&1
rc=$?
cat /tmp/dis.out
check "disable --wait 3 exits 1 while tasks sleep in copies" test $rc = 1
check "... and names the reader with its stack in a copy" sh -c \
	"grep -q 'task $reader (head)' /tmp/dis.out && grep -q 'vfs_read+.*pathtrace_inline' /tmp/dis.out"
check "... and the waiting task" grep -q "task $waiter (" /tmp/dis.out
check "the module stays loaded" test -e /sys/module/pathtrace_inline
t0=$(date +%s)
pathtracectl disable --all >/tmp/dis.out 2>&1
rc=$?
t1=$(date +%s)
cat /tmp/dis.out
echo "FIGURE disable with tasks asleep in copies: $((t1 - t0)) s"
check "disable removes the copies once the kernel's fake signal moved the sleepers" test $rc = 0
check "livepatch and module gone" sh -c "[ ! -e $LP ] && [ ! -e /sys/module/pathtrace_inline ]"
check "the reader still sleeps, now in the original" sh -c \
	"grep -q 'pipe_read+' /proc/$reader/stack && ! grep -q pathtrace_inline /proc/$reader/stack"
echo "last line" >&3
wait $reader
check "the reader read its line intact" grep -qx "last line" /tmp/read.out
check "the waiting task still waits" test -e /proc/$waiter
kill $(cat /proc/$waiter/task/$waiter/children)	# its sleep: time then exits
wait $waiter
exec 3>&-

walks_stop
check "pathtrace.ko unloads once the copies are gone" rmmod pathtrace
check "and loads again" insmod /pt/pathtrace.ko
check "no livepatch error in dmesg" sh -c '! dmesg | grep -i "livepatch.*\(fail\|error\)"'
finish
