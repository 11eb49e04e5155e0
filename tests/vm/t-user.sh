# VM test: user-space functions on uprobes (docs/user.md). enable takes
# BINARY:FUNC beside kernel functions: the user program's functions are
# recovered and planned from the file, and pathtrace.ko places their
# probes as uprobes on the file. The program, run on both CPUs, is
# recorded with vfs_write (which its write(2) calls reach) and regenerated
# with --verify: 0 differences, the user activations named BINARY!FUNC in
# each task's stream with their blocks, vfs_write nested under ut_round in
# execution order. Removing the plans and unloading the module with
# uprobes live leave the program running as before.
. /pt/lib/user.sh

$P 40 > $O/plain.txt
check "the user program runs" test $? -eq 0

# refusals by reason, before anything is loaded
expect_out "a name the file lacks" "no such function in $P" \
	pathtracectl enable $P:no_such_function
expect_out "a file that is no user ELF file" "not a user-space ELF file" \
	pathtracectl enable /pt/pathtrace.ko:vfs_write

pathtracectl enable --verify $P:ut_round $P:'ut_c*' $P:ut_fact vfs_write > $O/enable.txt 2>&1
check "enable exits 0: user and kernel plans loaded" test $? -eq 0
cat $O/enable.txt
expect_out "vfs_write enabled" "vfs_write: enabled as" cat $O/enable.txt
expect_out "a user glob is matched in the file" "$P:ut_c*: 1 of 1 matching functions enabled" \
	cat $O/enable.txt
expect_out "user functions are named BINARY!FUNC" "$B!ut_fact: enabled as" cat $O/enable.txt
expect_out "the summary counts them" "4 enabled" cat $O/enable.txt
pathtracectl list > $O/list.txt 2>&1
cat $O/list.txt
for f in ut_round ut_classify ut_fact; do
	check "$B!$f is loaded" grep -q "$B!$f" $O/list.txt
done

# loaded and disarmed: the probes are in the program, which runs as before
$P 40 > $O/probed.txt
check "the program runs under disarmed uprobes" test $? -eq 0
check "... with the same output" cmp $O/plain.txt $O/probed.txt

user_run_both $P 40
equal=$(sed -n 's/^verify: \([0-9]*\) blocks equal.*/\1/p' $O/verify.txt)
check "blocks compared (${equal:-none})" test "${equal:-0}" -gt 0

pathregen --blocks $O/u.bin > $O/blocks.txt 2>&1
for f in ut_round ut_classify ut_fact vfs_write; do
	check "$f's blocks regenerated" grep -q "^ *[1-9][0-9]*  \($B!\)\?$f+0x" $O/blocks.txt
done

sed -n '1,60p' $O/text.txt
check "user blocks in the text as $B!FUNC+0xOFF" grep -q "$B!ut_round+0x" $O/text.txt
check "... and the recursion's" grep -q "$B!ut_fact+0x" $O/text.txt

# Each task of the program is one stream: 2 of them write 40 rounds, each
# round one ut_round activation whose write(2) reaches vfs_write nested
# under it (deeper than it), before its next block.
awk -v r="$B!ut_round" '
	/\(\) \{$/ { name = $(NF - 1); sub(/\(\)$/, "", name)
		stack[++d] = name
		if (name == r) { rounds++; cur = rounds }
		else if (name == "vfs_write" && d > 1 && stack[d - 1] == r) nested[cur] = 1
		next }
	/^ *\} \/\* / { d-- }
	END { n = 0; for (k in nested) n++; print rounds + 0, n }
' $O/text.txt > $O/nest.txt
cat $O/nest.txt
read rounds nested < $O/nest.txt
check "ut_round activations in the text (${rounds:-0})" test "${rounds:-0}" -ge 80
check "vfs_write nested under ut_round (${nested:-0} of ${rounds:-0})" test "${nested:-0}" -ge 80

check "disable --all" pathtracectl disable --all
$P 40 > $O/after.txt
check "the program runs after the uprobes are gone" cmp $O/plain.txt $O/after.txt

# module unload with uprobes live: rmmod takes them out of every process
check "enable again" pathtracectl enable $P:ut_round $P:ut_fact
(while :; do $P 5 >/dev/null || echo FAILED; done) > $O/loop.txt 2>&1 &
loop=$!
sleep 1
check "rmmod with uprobes live" rmmod pathtrace
sleep 1
kill $loop
wait $loop 2>/dev/null
check "the program never failed across the unload" test ! -s $O/loop.txt
$P 40 > $O/unloaded.txt
check "the program runs after the unload" cmp $O/plain.txt $O/unloaded.txt
finish
