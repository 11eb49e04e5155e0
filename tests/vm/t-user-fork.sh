# VM test: user functions across fork, exec and signals (docs/user.md,
# "Fork, exec and signals"). The test program with -x raises SIGUSR1 from
# inside every 4th ut_round (its handler ut_on_signal is traced and calls
# the traced ut_classify), and every 10th round's ut_spawn forks inside its
# own activation: the child runs a round, then execs the program afresh for
# 2 rounds. Recorded on both CPUs with vfs_write and regenerated with
# --verify: 0 differences and no gap, the handler's activations nested
# under the round they interrupted, each parent's stream saying where it
# forked (a FORK record: "# fork at bit N: task/C inherits 1 open
# activation(s)"), each child's stream starting inside the ut_spawn
# activation it inherited, with its round, then the execve (an EXEC
# record: "# execve at bit N: 1 user activation(s) of the old image end",
# the inherited ut_spawn closed "replaced by execve") and its new image's
# 2 rounds at top level, not under ut_spawn's execl call. The execve's
# own bprm_execve is traced too: the exec point is inside its activation
# (under ut_spawn's execl call), which returns before ut_spawn ends.
. /pt/lib/user.sh

$P -x 30 > $O/plain.txt
check "the user program runs" test $? -eq 0

pathtracectl enable --verify $P:ut_round $P:ut_classify $P:ut_fact $P:ut_spawn \
	$P:ut_on_signal vfs_write bprm_execve > $O/enable.txt 2>&1
check "enable exits 0" test $? -eq 0
cat $O/enable.txt

user_run_both $P -x 30

grep -n "^!!\|^>>\|^# stream" $O/text.txt | head -40
# per stream: its owner, ut_round activations, ut_on_signal activations
# nested in a ut_round, ut_spawn activations it began, gaps, activations
# it inherited at fork, forks, ut_round activations at top level, execs
# that ended 1 user activation, activations replaced by execve, execs
# inside a bprm_execve activation
awk -v b="$B!" '
	/^# stream / { own = $4; sub(/,$/, "", own); streams[own] = 1; d = 0 }
	/\(\) \{$/ || /\(\) \{ \/\* inherited at fork from / {
		for (i = 1; i <= NF; i++) if ($i ~ /\(\)$/) name = $i
		sub(/\(\)$/, "", name); stack[++d] = name
		if (/inherited at fork/) { inh[own]++; next }
		if (name == b "ut_round" && d == 1) top[own]++
		if (name == b "ut_round") rounds[own]++
		if (name == b "ut_spawn") spawns[own]++
		if (name == b "ut_on_signal" && d > 1 && stack[d - 1] == b "ut_round") sig[own]++ }
	/^ *\} \/\* .*: replaced by execve \*\/$/ { rep[own]++ }
	/^ *\} \/\* / { d-- }
	/^ *# execve at bit [0-9]*: 1 user activation\(s\) of the old image end$/ { execs[own]++
		if (stack[d] == "bprm_execve") inker[own]++ }
	/^!! gap/ { gaps[own]++; d = 0 }
	/^ *# fork at bit .* inherits 1 open activation\(s\)$/ { forks[own]++ }
	END { for (o in streams) print o, rounds[o] + 0, sig[o] + 0, spawns[o] + 0, gaps[o] + 0,
		inh[o] + 0, forks[o] + 0, top[o] + 0, execs[o] + 0, rep[o] + 0, inker[o] + 0 }
' $O/text.txt > $O/per-task.txt
cat $O/per-task.txt
parents=$(awk '$2 == 30' $O/per-task.txt | wc -l)
check "2 parents with their 30 rounds ($parents)" test "$parents" -eq 2
check "... each with 7 ut_on_signal nested under the round it interrupted, 3 forks, no gap" \
	test "$(awk '$2 == 30 && $3 == 7 && $4 == 3 && $5 == 0 && $6 == 0 && $7 == 3' \
		$O/per-task.txt | wc -l)" -eq 2
children=$(awk '$2 == 3 && $3 == 0 && $4 == 0' $O/per-task.txt | wc -l)
check "6 children, each its round and its new image's 2 rounds ($children)" test "$children" -eq 6
check "... each inside the ut_spawn it inherited at fork, with no gap" \
	test "$(awk '$2 == 3 && $5 == 0 && $6 == 1' $O/per-task.txt | wc -l)" -eq 6
check "... each exec'ing inside it: ut_spawn replaced by execve, the new image's 2 rounds at top level" \
	test "$(awk '$2 == 3 && $8 == 2 && $9 == 1 && $10 == 1' $O/per-task.txt | wc -l)" -eq 6
check "... the exec point inside the execve's bprm_execve activation, which returns before" \
	test "$(awk '$2 == 3 && $11 == 1' $O/per-task.txt | wc -l)" -eq 6
check "the parents' 30 rounds at top level, nothing replaced in them" \
	test "$(awk '$2 == 30 && $8 == 30 && $9 == 0 && $10 == 0' $O/per-task.txt | wc -l)" -eq 2
check "no gap anywhere" test "$(grep -c '^!! gap' $O/text.txt)" -eq 0
finish
