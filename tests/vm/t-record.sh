# VM test: pathtracectl record writes trace.bin while a workload runs on both
# CPUs: complete file, pages from every CPU, records that kbuffer decodes
# with no corrupt page or record, streams per owner; --duration, SIGINT and
# a too-small buffer (counted LOSS, still a complete file); command-line
# errors exit 2; a record killed with SIGKILL leaves a file pathregen
# regenerates up to the cut.
# vm-kernels: all
. /pt/lib/check.sh

insmod /pt/pathtrace.ko
insmod /pt/pathtrace_target.ko
R=/sys/kernel/debug/pathtrace_target/run
O=/pt/out
export PATHTRACE_STATE=/tmp/ptstate

# work N: N rounds of target calls on each CPU at once.
work() {
	for c in 1 2; do
		taskset $c sh -c "i=0; while [ \$i -lt $1 ]; do echo 'nested 3' > $R; \
			echo \"switch \$i\" > $R; echo 'outer 2' > $R; i=\$((i + 1)); done" &
	done
	wait
}

summary() { trace-dump "$1" | tail -n 1; }
field() { summary "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
positive() { [ "$(field "$1" "$2")" -gt 0 ]; }

pathtracectl record >/dev/null 2>&1
check "no -o: exit 2" test $? -eq 2
pathtracectl record -o $O/x.bin --buffer-kb 0 >/dev/null 2>&1
check "--buffer-kb 0: exit 2" test $? -eq 2
pathtracectl record -o /nonexistent/dir/t.bin --duration 1 >/dev/null 2>&1
check "unwritable output: exit 1" test $? -eq 1

FUNCS="pt_target_nested pt_target_switch pt_target_outer pt_target_inner"
pt-plan add --enter --bits --verify $FUNCS > /tmp/added
check "plans for the 4 target functions" test "$(grep -c '^added' /tmp/added)" -eq 4

# Plans added by hand have no stored code and CFG: recorded without them, loudly.
expect_out "record warns about functions without stored CFG" "no stored code and CFG" \
	pathtracectl record -o $O/t0.bin -- true
# The real run: a workload on both CPUs.
export R
pathtracectl record -o $O/t1.bin -- sh -c "
	for c in 1 2; do taskset \$c sh -c 'i=0; while [ \$i -lt 300 ]; do echo \"nested 3\" > $R;
		echo \"switch \$i\" > $R; echo \"outer 2\" > $R; i=\$((i + 1)); done' & done; wait" \
	2>$O/t1.err
check "record with a command exits 0" test $? -eq 0
trace-dump --records --streams $O/t1.bin > $O/t1.dump 2>&1
check "trace-dump reads it without a problem" test $? -eq 0
expect_out "complete, 4 functions" "complete=1 functions=4" summary $O/t1.bin
expect_out "every CPU contributed pages" "cpus_with_pages=2" summary $O/t1.bin
expect_out "no corrupt page, event or record" "bad_pages=0 bad_events=0 bad_records=0 unknown_records=0" summary $O/t1.bin
check "ENTER records" positive $O/t1.bin enter
check "BLOCK records (verify)" positive $O/t1.bin block
check "BITS records" positive $O/t1.bin bits
check "several owner streams" test "$(field $O/t1.bin streams)" -ge 2
expect_out "no unattributed records" "unowned=0" summary $O/t1.bin
expect_out "record reports pages per CPU" "cpu1" cat $O/t1.err

# --duration with a workload running alongside.
(work 100) &
pathtracectl record -o $O/t2.bin --duration 1 2>/dev/null
check "--duration exits 0" test $? -eq 0
wait
expect_out "--duration: complete" "complete=1" summary $O/t2.bin

# Between drains the recorder sleeps in poll() until a CPU's buffer is half full (or a second
# passes): recording an idle system, it switches out a few times, not a hundred a second.
pathtracectl record -o $O/t2i.bin --duration 3 2>/dev/null &
pid=$!
sleep 2
switches=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' /proc/$pid/status)
wait $pid
check "--duration exits 0 (idle)" test $? -eq 0
check "idle: the recorder sleeps between drains ($switches switches in 2 s)" \
	test "${switches:-999}" -lt 20
# ... and a half-full buffer wakes it: 16 KiB per CPU, several times that recorded
# while the burst runs, the recorder woken for it, not only at its 1 s timeout.
# Whether a burst under emulation also loses nothing depends on when the host
# runs the recorder (a VM beside it, the kernel's scheduler): drops are not a
# failure here but must be counted, in the file as record reported them.
pathtracectl record -o $O/t2w.bin --buffer-kb 16 -- sh -c "
	for c in 1 2; do taskset \$c sh -c 'i=0; while [ \$i -lt 300 ]; do echo \"nested 3\" > $R;
		i=\$((i + 1)); done' & done; wait" 2>$O/t2w.err
check "16 KiB buffers: exit 0" test $? -eq 0
cat $O/t2w.err
trace-dump $O/t2w.bin > $O/t2w.dump 2>&1
pages=$(field $O/t2w.bin pages)
check "16 KiB buffers: more than twice what both hold was recorded ($pages pages)" \
	test "${pages:-0}" -gt 16
wakes=$(sed -n 's/.*record: woken \([0-9]*\) times by a half-full buffer$/\1/p' $O/t2w.err)
check "16 KiB buffers: a half-full buffer woke the recorder ($wakes times)" \
	test "${wakes:-0}" -ge 2
dropped=$(sed -n 's/.* records, \([0-9]*\) dropped, .*/\1/p' $O/t2w.err)
missed=$(sed -n 's/.* dropped, \([0-9]*\) missed$/\1/p' $O/t2w.err)
losses=$(field $O/t2w.bin loss)
echo "16 KiB buffers: $dropped records dropped, $losses LOSS records in the pages"
check "16 KiB buffers: the file counts the records dropped and its pages locate them" \
	sh -c "grep -qx 'LOSS dropped=${dropped:-x} missed=${missed:-x}' $O/t2w.dump &&
		{ [ '$dropped' = 0 ] || [ '${losses:-0}' -gt 0 ]; }"

# SIGINT stops recording and still writes a complete file.
pathtracectl record -o $O/t3.bin 2>$O/t3.err &
pid=$!
# A background job starts with SIGINT ignored until record installs its handler:
# wait until tracing is armed (the handler is installed before START).
n=0
while ! pt-plan stats | grep -q "tracing=1" && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
# In a subshell: work's own `wait` must not wait for the recorder.
(work 50)
kill -INT $pid
(sleep 60; kill -KILL $pid 2>/dev/null) &
wait $pid
check "SIGINT: exit 0" test $? -eq 0
expect_out "SIGINT: complete" "complete=1" summary $O/t3.bin
check "SIGINT: records" positive $O/t3.bin enter

# A buffer far too small: losses are counted and marked, the file stays valid.
# (A function's drops count from its enable on, the status line's from the
# recording's start: the recordings above may have dropped some.)
per0=$(pathtracectl status | awk 'NR > 2 { d += $8 } END { print d + 0 }')
pathtracectl record -o $O/t4.bin --buffer-kb 8 -- sh -c "
	for c in 1 2; do taskset \$c sh -c 'i=0; while [ \$i -lt 400 ]; do echo \"nested 6\" > $R;
		i=\$((i + 1)); done' & done; wait" 2>$O/t4.err
check "small buffer: exit 0" test $? -eq 0
trace-dump $O/t4.bin > $O/t4.dump 2>&1
check "small buffer: file reads cleanly" test $? -eq 0
check "small buffer: LOSS totals count drops" sh -c "grep -q 'LOSS dropped=[1-9]' $O/t4.dump"
check "small buffer: LOSS records in the pages" positive $O/t4.bin loss
cat $O/t4.err
# Refused records are counted per function too (records written by the stop
# flush or the reopening OWNER after a loss belong to none, so only the
# global count has those).
pathtracectl status > $O/t4.status
head -3 $O/t4.status
total=$(sed -n 's/.* \([0-9]*\) dropped (buffer full).*/\1/p' $O/t4.status)
per=$(($(awk 'NR > 2 { d += $8 } END { print d + 0 }' $O/t4.status) - per0))
check "small buffer: status shows drops per function ($per of $total)" \
	sh -c "[ '$per' -gt 0 ] && [ '$per' -le '$total' ]"

# Functions enabled by pathtracectl itself: record takes their code, CFG and
# plan from the funcstore, so pathregen can regenerate (and verify) them.
pt-plan del all
echo "pathtrace_target.ko:" > /pt/modules.dep	# lets enable read the module's tables
pathtracectl enable --mode paths --verify --why-loud --moddir /pt $FUNCS > $O/t5.enable 2>&1
check "enable the target functions" test $? -eq 0
# outer calls inner through the untraced pt_target_untraced: loud, and says why
cat $O/t5.enable
check "--why-loud: a call through untraced code into a traced function" \
	grep -q "^  loud call pt_target_outer+0x[0-9a-f]*: pt_target_untraced+0x0 -> pt_target_inner+0x0: traced$" $O/t5.enable
check "--why-loud: a direct call to a traced function" \
	grep -q "^  loud call pt_target_outer+0x[0-9a-f]*: pt_target_inner+0x0: traced$" $O/t5.enable
check "--why-loud: nothing about functions without loud calls" \
	sh -c "! grep -q '^  loud call pt_target_switch' $O/t5.enable"
pathtracectl record -o $O/t5.bin -- sh -c "
	for c in 1 2; do taskset \$c sh -c 'i=0; while [ \$i -lt 100 ]; do echo \"nested 3\" > $R;
		echo \"switch \$i\" > $R; echo \"outer 2\" > $R; i=\$((i + 1)); done' & done; wait" \
	2>$O/t5.err
check "record of enabled functions exits 0" test $? -eq 0
check "no warning about missing code or CFG" sh -c "! grep -q 'no stored code' $O/t5.err"
trace-dump $O/t5.bin > $O/t5.dump 2>&1
check "every recorded function carries its CFG" test "$(grep -c 'cfg=[0-9]* blocks' $O/t5.dump)" -eq 4
expect_out "and the pages read cleanly" "bad_pages=0 bad_events=0 bad_records=0" summary $O/t5.bin
pathregen --stats $O/t5.bin > $O/t5.stats 2>&1
check "pathregen reads the recording" test $? -eq 0
pathregen --verify $O/t5.bin > $O/t5.verify 2>&1
check "pathregen --verify: regenerated equals the every-block truth" test $? -eq 0

# enable_outer TAG ARGS...: a witness plan of pt_target_outer and pt_target_inner alone, with
# --verify --why-loud and ARGS; enable's output in $O/TAG.enable.
enable_outer() {
	tag=$1
	shift
	check "disable" pathtracectl disable --all
	pathtracectl enable --verify --why-loud "$@" --moddir /pt pt_target_outer pt_target_inner \
		> $O/$tag.enable 2>&1
	check "$tag: enable a witness plan $*" test $? -eq 0
	cat $O/$tag.enable
}

# record_outer TAG WHAT: record pt_target_outer on both CPUs as $O/TAG.bin; it regenerates
# exactly and without a gap.
record_outer() {
	pathtracectl record -o $O/$1.bin -- sh -c "
		for c in 1 2; do taskset \$c sh -c 'i=0; while [ \$i -lt 50 ]; do
			echo \"outer \$i\" > $R; i=\$((i + 1)); done' & done; wait" 2>$O/$1.err
	check "$2: record" test $? -eq 0
	pathregen --verify $O/$1.bin > $O/$1.verify 2>&1
	check "$2: regenerated equals the every-block truth" test $? -eq 0
	check "$2: no gap" sh -c "pathregen --stats $O/$1.bin | grep -q '^gaps *0 '"
}

# With ENTER records at every entry and calls blocked (not framed), a witness plan pays no
# blocker for a direct call to a traced function (its ENTER witnesses it): --why-loud says so.
enable_outer t6 --explicit-entries --blocked-calls
check "--why-loud: the direct call is witnessed by its ENTER" \
	grep -q "^  loud call pt_target_outer+0x[0-9a-f]*: pt_target_inner+0x0: traced; its ENTER witnesses the call: no blocker$" $O/t6.enable
check "--why-loud: the call through untraced code is not" \
	grep -q "^  loud call pt_target_outer+0x[0-9a-f]*: pt_target_untraced+0x0 -> pt_target_inner+0x0: traced$" $O/t6.enable
# and such a plan regenerates exactly (its caller's words are per predicate, not by context)
record_outer t6 "entry witnesses"
# frame_walks: the stacks ENTERs unwound since the recording's start (status, first line);
# frames_found: those and the frames named from what inline copies keep, with no walk
frame_walks() { pathtracectl status | sed -n '1s/.* \([0-9]*\) frame walks ([0-9.]* us each)$/\1/p'; }
frames_found() {
	pathtracectl status |
		sed -n '1s/.* \([0-9]*\) frames kept, [0-9]* of them in softirqs, \([0-9]*\) frame walks ([0-9.]* us each)$/\1 \2/p' |
		awk '{ print $1 + $2 }'
}
check "entry witnesses: no plan is framed, no ENTER unwinds the stack" test "$(frame_walks)" = 0

# Framed witness plans (the default) write every ENTER: the direct call is framed too, named by
# its callee's ENTER (its return address), and the calls through untraced code by the ENTERs of
# inner below them (their frames, found by unwinding: kmod/frames.c). No bit before any call.
enable_outer t7
check "enable counts every call as framed (2 through untraced code, the direct ones)" \
	grep -q "^pt_target_outer: enabled as .*; [3-9] calls framed" $O/t7.enable
check "--why-loud: the call through untraced code is framed" \
	grep -q "^  loud call pt_target_outer+0x[0-9a-f]*: pt_target_untraced+0x0 -> pt_target_inner+0x0: traced; framed: no blocker, the ENTERs below it name it$" $O/t7.enable
check "--why-loud: the direct call is framed" \
	grep -q "^  loud call pt_target_outer+0x[0-9a-f]*: pt_target_inner+0x0: traced; framed: no blocker, the ENTERs below it name it$" $O/t7.enable
check "no call entered without an ENTER" sh -c "! grep -q 'entered without an ENTER' $O/t7.enable"
record_outer t7 "framed calls"
check "framed calls: inner's ENTERs name outer's calls by frame" \
	sh -c "pathregen --json $O/t7.bin | grep -q '\"frame\": \"0x'"
named=$(pathregen --json $O/t7.bin | grep -c '"frame": "0x')
found=$(frames_found)
check "framed calls: status counts a frame found for each ENTER that names one ($found >= $named)" \
	test "${found:-0}" -ge "$named"

# With --implicit-entries the direct call writes no ENTER: it is an entered call, blocked but
# with no bit after it for its own sake; pathregen finds it from inner's plan. The calls
# through untraced code stay framed.
enable_outer t8 --implicit-entries
check "--implicit-entries: enable counts the framed calls" \
	grep -q "^pt_target_outer: enabled as .*; 2 calls framed" $O/t8.enable
check "--implicit-entries: the direct call is entered without an ENTER" \
	grep -q "^  loud call pt_target_outer+0x[0-9a-f]*: pt_target_inner+0x0: traced; entered without an ENTER: blocked, no bit after it$" $O/t8.enable
check "--implicit-entries: enable counts the entered calls" \
	grep -q "^pt_target_outer: enabled as .*; [1-9][0-9]* calls entered without an ENTER" $O/t8.enable
record_outer t8 "entered and framed calls"
check "entered and framed calls: inner's ENTERs name outer's calls" \
	sh -c "pathregen --json $O/t8.bin | grep -q '\"frame\": \"0x'"
pathtracectl enable --explicit-entries --implicit-entries pt_target_outer >/dev/null 2>&1
check "--explicit-entries with --implicit-entries: exit 2" test $? -eq 2

# A recording killed with SIGKILL leaves a readable prefix (FORMAT.md 2.8): every section
# whole and flushed as written, so pathregen regenerates every whole page before the cut,
# says that the file ends early, finds no page failing its checksum, and exits 1.
pathtracectl record -o $O/t9.bin 2>/dev/null &
pid=$!
n=0
while ! pt-plan stats | grep -q "tracing=1" && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
(work 100)
sleep 1		# record drains the buffers while tracing runs
kill -KILL $pid
wait $pid
pathregen $O/t9.bin > $O/t9.txt 2> $O/t9.err
check "SIGKILL: pathregen exits 1" test $? -eq 1
cat $O/t9.err
expect_out "SIGKILL: the file ends early, what came before regenerates" \
	"regenerating every whole page before it" cat $O/t9.err
check "SIGKILL: no page or section fails its checksum" sh -c "! grep -q checksum $O/t9.err"
check "SIGKILL: executions before the cut" grep -q "pt_target_outer() {" $O/t9.txt
finish
