# VM test: user functions across fork, exec and signals (docs/user.md,
# "Fork, exec and signals"). The test program with -x raises SIGUSR1 from
# inside every 4th ut_round (its handler ut_on_signal is traced and calls
# the traced ut_classify), and every 10th round's ut_spawn forks inside its
# own activation: the child runs a round, then execs the program afresh for
# 2 rounds. Recorded on both CPUs with vfs_write and regenerated with
# --verify: 0 differences, the handler's activations nested under the
# round they interrupted, each child's round and its new image's 2 rounds
# in the child's stream. What a child inherits at fork (the open ut_spawn
# activation) is not in its stream: pathregen reports it as gaps (the bits
# before the child's first ENTER, and ut_spawn's bits after the child's
# round returns into it), never as a difference. Witness words that adapt
# would make the resync after such a gap wait for the module's next context
# reset (docs/runtime.md, "Adapting words"), passing over the new image's
# first rounds: the plans are made with --adapting-words 0.
. /pt/lib/user.sh

$P -x 30 > $O/plain.txt
check "the user program runs" test $? -eq 0

pathtracectl enable --verify --adapting-words 0 $P:ut_round $P:ut_classify $P:ut_fact $P:ut_spawn \
	$P:ut_on_signal vfs_write > $O/enable.txt 2>&1
check "enable exits 0" test $? -eq 0
cat $O/enable.txt

user_run_both $P -x 30

grep -n "^!!\|^>>\|^# stream" $O/text.txt | head -40
# per stream: its owner, ut_round activations, ut_on_signal activations
# nested in a ut_round, ut_spawn activations, gaps
awk -v b="$B!" '
	/^# stream / { own = $4; sub(/,$/, "", own); streams[own] = 1; d = 0 }
	/\(\) \{$/ { name = $(NF - 1); sub(/\(\)$/, "", name); stack[++d] = name
		if (name == b "ut_round") rounds[own]++
		if (name == b "ut_spawn") spawns[own]++
		if (name == b "ut_on_signal" && d > 1 && stack[d - 1] == b "ut_round") sig[own]++ }
	/^ *\} \/\* / { d-- }
	/^!! gap/ { gaps[own]++; d = 0 }
	END { for (o in streams) print o, rounds[o] + 0, sig[o] + 0, spawns[o] + 0, gaps[o] + 0 }
' $O/text.txt > $O/per-task.txt
cat $O/per-task.txt
parents=$(awk '$2 == 30' $O/per-task.txt | wc -l)
check "2 parents with their 30 rounds ($parents)" test "$parents" -eq 2
check "... each with 7 ut_on_signal nested under the round it interrupted" \
	test "$(awk '$2 == 30 && $3 == 7 && $4 == 3 && $5 == 0' $O/per-task.txt | wc -l)" -eq 2
children=$(awk '$2 == 3 && $3 == 0 && $4 == 0' $O/per-task.txt | wc -l)
check "6 children, each its round and its new image's 2 rounds ($children)" test "$children" -eq 6
check "... each with gaps for what it inherited at fork" \
	test "$(awk '$2 == 3 && $5 >= 1 && $5 <= 2' $O/per-task.txt | wc -l)" -eq 6
finish
