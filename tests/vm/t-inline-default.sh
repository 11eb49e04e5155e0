# VM test: enable's default mechanism (docs/inline.md, "Which mechanism
# carries a function"). With the template installed, the named functions run
# as copies with their plans as code, and kprobes carry what the copy refuses
# (pt_target_notrace has no __fentry__): one trace of both regenerates with 0
# differences under --verify. While copies are live a plain enable puts a
# function without a copy on kprobes (0 differences again) and refuses one
# whose copy runs without a plan; a second --inline is refused. --probes, a
# path profile and a missing template go on kprobes, and enable says why.
# With --inline alone, a plan that took a refused copy's function as traced
# is made again without it.
# vm-kernels: all
. /pt/lib/check.sh

. /pt/lib/inline.sh
KERNEL="vfs_read ksys_read"

cat >/tmp/wl.sh <<W
for c in 1 2; do
	taskset \$c sh -c 'i=0; while [ \$i -lt \$1 ]; do echo "nested 3" > $R;
		echo "notrace \$i" > $R; echo "early \$i" > $R; cat /proc/version >/dev/null;
		i=\$((i + 1)); done' sh \$1 &
done
wait
W

# en OUT ARGS...: pathtracectl enable ARGS into OUT, shown; its exit status in rc
en() {
	o=$1
	shift
	pathtracectl enable "$@" >$o 2>&1
	rc=$?
	echo "enable $*: $rc"
	cat $o
}

# carrier FUNC: the mechanism pathtracectl list names for FUNC's plan
carrier() {
	pathtracectl list | awk -v f="$1" '$0 ~ f { print $NF }'
}

# --- the default: copies, and kprobes for what the copy refuses
en /tmp/en.out --verify --moddir /pt pt_target_nested pt_target_inner pt_target_notrace $KERNEL
check "enable exits 0" test $rc -eq 0
check "four functions run as copies" grep -q "^inline: 4 functions run as copies" /tmp/en.out
check "the copy refuses pt_target_notrace (no __fentry__)" \
	grep -q "^pt_target_notrace: refused: inline-no-fentry" /tmp/en.out
check "... and kprobes carry its plan" grep -q \
	"^pt_target_notrace: enabled as [0-9]* on kprobes: [1-9][0-9]* probes (not copied: inline-no-fentry)" \
	/tmp/en.out
check "the summary: five enabled, none refused" grep -q "^enable: 5 enabled, 0 refused" /tmp/en.out
check "the summary: one on kprobes" \
	grep -q "^enable: 1 function on kprobes, its copy refused" /tmp/en.out
pathtracectl list >/tmp/list.out
cat /tmp/list.out
check "list: four plans are calls in copies" \
	sh -c '[ "$(awk "\$NF == \"inline-calls\"" /tmp/list.out | wc -l)" = 4 ]'
check "list: kprobes carry pt_target_notrace's" test "$(carrier pt_target_notrace)" = probes
check "the livepatch is enabled" sh -c '[ "$(cat /sys/kernel/livepatch/pathtrace_inline/enabled)" = 1 ]'
check "record" pathtracectl record -o /tmp/d.bin -- sh /tmp/wl.sh 20
pathregen --verify /tmp/d.bin >/tmp/v.out 2>&1
echo "pathregen --verify: $?"
tail -3 /tmp/v.out
check "copies and kprobes in one trace: regeneration equals the every-block records" \
	pathregen --verify /tmp/d.bin
expect_out "the trace holds pt_target_notrace's activations" "pt_target_notrace" pathregen /tmp/d.bin

# --- copies live: a plain enable puts a function without a copy on kprobes
en /tmp/en2.out --verify --moddir /pt pt_target_early
check "with copies live, a plain enable exits 0" test $rc -eq 0
check "... says kprobes carry it, and why" \
	grep -q "^enable: kprobes carry the plans: the copies of an earlier enable are live" /tmp/en2.out
check "... and kprobes carry pt_target_early's plan" test "$(carrier pt_target_early)" = probes
check "record with copies and probe plans" pathtracectl record -o /tmp/d2.bin -- sh /tmp/wl.sh 10
check "... regeneration equals the every-block records" pathregen --verify /tmp/d2.bin

# --- ... and refuses a function whose copy runs without a plan
check "disable one copied function" pathtracectl disable ksys_read
check "its copy stays while other plans remain" grep -q "ksys_read.*\[pathtrace_inline\]" /proc/kallsyms
en /tmp/en3.out --moddir /pt ksys_read
check "enabling it again exits 1" test $rc -eq 1
check "... refused: copy-live" grep -q "^ksys_read: refused: copy-live" /tmp/en3.out
expect_fail "a second --inline is refused while copies are live" \
	pathtracectl enable --inline --moddir /pt pt_target_switch
check "disable --all" pathtracectl disable --all
check "the livepatch is gone" test ! -e /sys/kernel/livepatch/pathtrace_inline
check "the module is unloaded" test ! -e /sys/module/pathtrace_inline

# --- kprobes: --probes, a path profile, no template
check "--probes enables" pathtracectl enable --probes --moddir /pt pt_target_nested
check "--probes: kprobes carry the plan" test "$(carrier pt_target_nested)" = probes
check "--probes: no copy is made" test ! -e /sys/module/pathtrace_inline
check "disable" pathtracectl disable --all
en /tmp/en5.out --mode path-profile --moddir /pt pt_target_nested
check "a path profile: kprobes, and enable says why" \
	grep -q "^enable: kprobes carry the plans: path profiles" /tmp/en5.out
check "... no copy is made" test ! -e /sys/module/pathtrace_inline
check "disable" pathtracectl disable --all
template=$PATHTRACE_INLINE_MODULE
PATHTRACE_INLINE_MODULE=/nonexistent.ko	# exported by lib/inline.sh
en /tmp/en6.out --moddir /pt pt_target_nested
PATHTRACE_INLINE_MODULE=$template
check "no template: kprobes, and enable says where it looked" \
	grep -q "^enable: kprobes carry the plans: no inline template at /nonexistent.ko" /tmp/en6.out
check "... kprobes carry the plan" test "$(carrier pt_target_nested)" = probes
check "disable" pathtracectl disable --all
en /tmp/en7.out --probes --inline pt_target_nested
check "--probes and --inline contradict each other (exit 2)" test $rc -eq 2

# --- --inline: a plan that took a callee as traced is made again when the copy refuses the callee
en /tmp/en8.out --inline --implicit-entries --verify --moddir /pt pt_target_notrace_caller pt_target_notrace
check "--inline --implicit-entries: the caller's plan enters its callee without an ENTER" \
	grep -q "^pt_target_notrace_caller: planned as [0-9]*: .*1 calls entered without an ENTER" /tmp/en8.out
check "... the copy refuses the callee, and nothing carries it" \
	grep -q "^enable: 1 enabled, 1 refused: inline-no-fentry 1" /tmp/en8.out
check "... the caller is planned again without it" \
	grep -q "^pt_target_notrace_caller: re-planned: a function its plan assumed traced was refused" /tmp/en8.out
check "... and enable counts no entered call" \
	grep -q "; 0 call sites enter their traced callee without an ENTER record$" /tmp/en8.out
cat >/tmp/wl2.sh <<W
for c in 1 2; do
	taskset \$c sh -c 'i=0; while [ \$i -lt 20 ]; do echo "notrace_caller \$i" > $R; i=\$((i + 1)); done' &
done
wait
W
check "record the caller alone" pathtracectl record -o /tmp/d8.bin -- sh /tmp/wl2.sh
check "... regeneration equals the every-block records" pathregen --verify /tmp/d8.bin
check "... without a gap" sh -c "pathregen --stats /tmp/d8.bin | grep -q '^gaps *0 '"
check "disable" pathtracectl disable --all

# --- --inline: code on the kprobes blacklist is not copied (kprobe_exceptions_notify: NOKPROBE_SYMBOL)
en /tmp/en9.out --inline --moddir /pt kprobe_exceptions_notify pt_target_nested
check "--inline: the copy refuses a function on the kprobes blacklist" \
	grep -q "^kprobe_exceptions_notify: refused: inline-kprobe-blacklist" /tmp/en9.out
check "... and copies the one beside it" grep -q "^inline: 1 functions run as copies" /tmp/en9.out
check "disable" pathtracectl disable --all

finish
