# VM test: enable --inline-probes (docs/inline.md): functions of the test
# module and of the kernel run as copies in a generated livepatch module, with
# the plan's probes on the copies (t-inline-calls.sh: the sites as calls).
# Every mode enables; record + pathregen --verify finds 0 differences; a stack
# trace taken inside a copy names the function and unwinds through it; disable waits for a task sleeping in a copy, then the
# livepatch is gone and the module unloaded.
. /pt/lib/check.sh

. /pt/lib/inline.sh
KERNEL="vfs_read ksys_read pipe_read"

write_workload

# The template alone refuses to load.
expect_fail "the template module alone does not load" insmod /pt/pathtrace_inline.ko

# --- witness, verify
pathtracectl enable --inline-probes --verify --moddir /pt $TARGET $KERNEL >/tmp/en.out 2>&1
echo "enable: $?"
cat /tmp/en.out
check "every named function enabled as a copy" sh -c \
	"[ \$(grep -c ': enabled as' /tmp/en.out) = $(echo $TARGET $KERNEL | wc -w) ]"
check "pipe_read, with its static calls, among them (t-inline-keys.sh)" \
	grep -q "^pipe_read: enabled as" /tmp/en.out
check "the livepatch is enabled" sh -c '[ "$(cat /sys/kernel/livepatch/pathtrace_inline/enabled)" = 1 ]'
check "transition finished" sh -c '[ "$(cat /sys/kernel/livepatch/pathtrace_inline/transition)" = 0 ]'
expect_out "kallsyms names the copies" "pathtrace_inline" grep " vfs_read" /proc/kallsyms
expect_out "pathtracectl list shows the copies" "vfs_read" pathtracectl list
pathtracectl list >/tmp/list.out
pathtracectl status >/tmp/status.out
cat /tmp/status.out
check "list: every plan is carried by probes on a copy" awk \
	'NR > 1 { n++; if ($NF != "copy+probes") bad = 1 } END { exit bad || n != 8 }' /tmp/list.out
check "status: every plan is carried by probes on a copy" awk \
	'NR > 2 { n++; if ($NF != "copy+probes") bad = 1 } END { exit bad || n != 8 }' /tmp/status.out

check "record" pathtracectl record -o /tmp/w.bin -- sh /tmp/workload.sh 30
pathregen --verify /tmp/w.bin >/tmp/w.out 2>&1
echo "pathregen --verify: $?"; tail -3 /tmp/w.out
check "witness: regeneration equals the every-block records" pathregen --verify /tmp/w.bin
check "the trace executed the copies of vfs_read and ksys_read" sh -c \
	'pathregen /tmp/w.bin | grep -q "vfs_read" && pathregen /tmp/w.bin | grep -q "ksys_read"'
# While copies are live a plain enable puts a function without one on kprobes
# (t-inline-default.sh).
pathtracectl enable --moddir /pt pt_target_early >/tmp/en2.out 2>&1
check "with copies live, a plain enable puts a function without a copy on kprobes" \
	sh -c 'grep -q "^enable: kprobes carry the plans: the copies of an earlier enable are live" /tmp/en2.out &&
	       pathtracectl list | grep pt_target_early | grep -q " probes$"'
expect_fail "a second --inline is refused while copies are live" \
	pathtracectl enable --inline --moddir /pt pt_target_early

# A task sleeping inside a copy (a reader blocked in pipe_read, called from
# vfs_read's copy): its stack names the copy and unwinds through it (ORC).
mkfifo /tmp/fifo
cat /tmp/fifo >/tmp/fifo.out &
sp=$!
exec 3>/tmp/fifo	# a writer that writes nothing yet: the reader sleeps
sleep 1
cat /proc/$sp/stack >/tmp/stack 2>&1
cat /tmp/stack
expect_out "the reader sleeps in pipe_read" "pipe_read+" cat /tmp/stack
check "the stack names the copy of vfs_read, in the module" grep -q "vfs_read+.*pathtrace_inline" /tmp/stack
expect_out "... and unwinds through the copies to the system call" "do_syscall_64" cat /tmp/stack

# disable while that task sleeps in the copy: livepatch waits until it left.
(sleep 4; echo bye >&3; exec 3>&-) &
exec 3>&-
t0=$(date +%s)
pathtracectl disable --all >/tmp/dis.out 2>&1
rc=$?
t1=$(date +%s)
cat /tmp/dis.out
check "disable exits 0" test $rc -eq 0
check "disable waited for the reader to leave the copy" test $((t1 - t0)) -ge 3
check "the livepatch is gone" test ! -e /sys/kernel/livepatch/pathtrace_inline
check "the module is unloaded" test ! -e /sys/module/pathtrace_inline
expect_fail "kallsyms no longer names copies" grep -q "pathtrace_inline" /proc/kallsyms
wait

# The other modes on copies: paths with verify (probes on the copies), edges (counters
# as code in the copies, t-inline-counters.sh); then removed again.
for m in paths edges; do
	v=; [ $m = paths ] && v=--verify
	o=--inline; [ $m = paths ] && o=--inline-probes
	pathtracectl enable $o --mode $m $v --moddir /pt $TARGET vfs_read ksys_read \
		>/tmp/en.$m 2>&1
	check "$m: 7 copies enabled" grep -q "inline: 7 functions run as copies" /tmp/en.$m
	check "$m: record" pathtracectl record -o /tmp/$m.bin -- sh /tmp/workload.sh 10
	if [ $m = paths ]; then
		check "paths: regeneration equals the every-block records" pathregen --verify /tmp/$m.bin
	else
		check "edges: counts regenerate" sh -c "pathregen --edges /tmp/$m.bin | grep -q vfs_read"
	fi
	check "$m: disable removes the copies" pathtracectl disable --all
	check "$m: module gone" test ! -e /sys/module/pathtrace_inline
done

finish
