# VM test: enable --inline --mode edges (docs/inline.md, "Counters (edges
# mode)"): the edges plans are code in the copies, no probe is placed, and
# the same workload gives the same edge counts (pathregen --edges) as the
# same plans on kprobes; dmesg clean; disable removes the module.
# vm-kernels: all
. /pt/lib/check.sh

. /pt/lib/inline.sh
# kernel functions only the workload runs: debugfs writes
KERNEL="full_proxy_write debugfs_file_get"

cat >/tmp/workload.sh <<W
for c in 1 2; do
	taskset \$c sh -c 'i=0; while [ \$i -lt \$1 ]; do echo "nested 3" > $R; echo "switch \$i" > $R;
		echo "outer 2" > $R; echo "multi_exit \$i" > $R; i=\$((i + 1)); done' sh \$1 &
done
wait
W

# The counts of each function and edge, without func ids (the runs number them
# alike anyway) and without what the counters were: the copies' plans count
# other chords (docs/inline.md, "Placement for copies"), from which the same
# edge counts must follow.
counts() {
	pathregen --edges "$1" | sed 's/(func [0-9]*)//; s/ (edges mode: .*)$//' | sort
}

# increments FILE: every increment the plans' counters made
increments() {
	pathregen --edges "$1" | sed -n 's/.* \([0-9]*\) increments, .*/\1/p' |
		awk '{ n += $1 } END { print n + 0 }'
}

# once untraced first: a debugfs file's first open takes a path of its own
sh /tmp/workload.sh 1

for how in probes inline; do
	o=--probes; [ $how = inline ] && o=--inline
	pathtracectl enable $o --mode edges --moddir /pt $TARGET $KERNEL >/tmp/en.$how 2>&1
	echo "enable ($how): $?"
	cat /tmp/en.$how
	check "$how: record" pathtracectl record -o /tmp/$how.bin -- sh /tmp/workload.sh 25
	counts /tmp/$how.bin >/tmp/counts.$how
	echo "FIGURE $how increments=$(increments /tmp/$how.bin)"
	if [ $how = inline ]; then
		check "inline: every function counts in its copy" \
			grep -q "inline: 7 functions run as copies" /tmp/en.inline
		check "inline: the livepatch is enabled" \
			sh -c '[ "$(cat /sys/kernel/livepatch/pathtrace_inline/enabled)" = 1 ]'
		check "inline: no probe registered" sh -c \
			'! grep -q "pathtrace\|pt_target\|full_proxy_write" /sys/kernel/debug/kprobes/list'
	fi
	pathtracectl status >/tmp/status.$how 2>&1
	pathtracectl list >/tmp/list.$how 2>&1
	cat /tmp/status.$how
	c=probes; [ $how = inline ] && c=inline-counters
	check "$how: status says every plan is carried by $c" awk -v c=$c \
		'NR > 2 { n++; if ($NF != c) bad = 1 } END { exit bad || n != 7 }' /tmp/status.$how
	check "$how: list says every plan is carried by $c" awk -v c=$c \
		'NR > 1 { n++; if ($NF != c) bad = 1 } END { exit bad || n != 7 }' /tmp/list.$how
	check "$how: disable" pathtracectl disable --all
done
check "no copies left" test ! -e /sys/module/pathtrace_inline
head -40 /tmp/counts.inline
check "both runs counted the test module's functions" sh -c \
	'grep -q pt_target_switch /tmp/counts.probes && grep -q pt_target_switch /tmp/counts.inline'
check "both runs counted the kernel functions" sh -c \
	'grep -q full_proxy_write /tmp/counts.probes && grep -q full_proxy_write /tmp/counts.inline'
# The test module's functions take paths their arguments decide: the two
# runs' counts must be equal edge for edge. The kernel functions' paths also
# depend on state the runs do not share (a debugfs file's reference count
# now and then takes another path): their activations must be equal.
grep pt_target_ /tmp/counts.probes >/tmp/target.probes
grep pt_target_ /tmp/counts.inline >/tmp/target.inline
check "the test module's functions: inline counts equal probe counts, edge for edge" \
	diff /tmp/target.probes /tmp/target.inline
for k in $KERNEL; do
	grep "^$k : " /tmp/counts.probes >/tmp/act.probes
	grep "^$k : " /tmp/counts.inline >/tmp/act.inline
	check "$k: the same activations in both runs" sh -c \
		'[ -s /tmp/act.probes ] && diff /tmp/act.probes /tmp/act.inline'
done

finish
