# VM test: user functions for one process (enable --pid, docs/user.md, "One
# process: --pid"). Two processes run the same program, both started and
# waiting before enable; enable names the program's functions with --pid of
# the first and vfs_write beside them. Recorded while both run their rounds
# (one on each CPU): the first's stream holds its 30 ut_round activations,
# regenerated with --verify (0 differences), the second's stream none of
# the program's functions but its vfs_write activations (kernel functions
# stay system-wide); both print what they print untraced. --pid without a
# user function, and a pid with no process, are refused.
. /pt/lib/user.sh

$P 30 > $O/plain.txt
check "the user program runs" test $? -eq 0

expect_out "--pid without a user function is refused" "--pid selects the process of user functions" \
	pathtracectl enable --pid 1 vfs_write
expect_fail "... with a non-zero exit" pathtracectl enable --pid 1 vfs_write
expect_out "--pid of no process is refused" "no such process" \
	pathtracectl enable --pid 999999 $P:ut_round
expect_out "--pid takes a number" "--pid takes a process id" \
	pathtracectl enable --pid abc $P:ut_round
check "nothing was loaded by the refusals" test "$(pathtracectl list 2>&1 | grep -c "$B!")" -eq 0

rm -f /tmp/go
taskset -c 0 $P -w /tmp/go 30 > $O/traced.txt &
p1=$!
taskset -c 1 $P -w /tmp/go 30 > $O/other.txt &
p2=$!
pathtracectl enable --verify --pid $p1 $P:ut_round $P:ut_classify $P:ut_fact vfs_write \
	> $O/enable.txt 2>&1
check "enable --pid $p1 exits 0" test $? -eq 0
cat $O/enable.txt
expect_out "the summary counts user and kernel functions" "4 enabled" cat $O/enable.txt

cat > /tmp/workload.sh <<EOW
touch /tmp/go
while kill -0 $p1 2>/dev/null || kill -0 $p2 2>/dev/null; do sleep 0.1; done
EOW
user_record_verify
wait $p1
check "the traced process exits 0" test $? -eq 0
wait $p2
check "the other process exits 0" test $? -eq 0
check "the traced process prints what it prints untraced" cmp $O/plain.txt $O/traced.txt
check "... and the other one too" cmp $O/plain.txt $O/other.txt

# per stream: its owner, its ut_round activations, its vfs_write activations
awk -v r="$B!ut_round() {" '
	/^# stream / { own = $4; sub(/,$/, "", own) }
	index($0, r) { rounds[own]++ }
	/vfs_write\(\) \{$/ { writes[own]++ }
	END { for (o in writes) print o, rounds[o] + 0, writes[o]
	      for (o in rounds) if (!(o in writes)) print o, rounds[o], 0 }
' $O/text.txt | sort -u > $O/per-task.txt
cat $O/per-task.txt
r1=$(awk -v o="task/$p1" '$1 == o { print $2 }' $O/per-task.txt)
w1=$(awk -v o="task/$p1" '$1 == o { print $3 }' $O/per-task.txt)
r2=$(awk -v o="task/$p2" '$1 == o { print $2 }' $O/per-task.txt)
w2=$(awk -v o="task/$p2" '$1 == o { print $3 }' $O/per-task.txt)
check "the --pid process's ut_round activations: 30 (${r1:-0})" test "${r1:-0}" -eq 30
check "... its vfs_write activations (${w1:-0})" test "${w1:-0}" -ge 30
check "the other process: no user activation (${r2:-0})" test "${r2:-0}" -eq 0
check "... but its vfs_write activations, system-wide (${w2:-0})" test "${w2:-0}" -ge 30
others=$(awk -v a="task/$p1" '$1 != a && $2 > 0' $O/per-task.txt | wc -l)
check "no other stream has user activations ($others)" test "$others" -eq 0

check "disable --all" pathtracectl disable --all
check "rmmod" rmmod pathtrace
finish
