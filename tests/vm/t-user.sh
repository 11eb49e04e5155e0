# VM test: user-space functions, step 1 (docs/user.md). enable takes
# BINARY:FUNC beside kernel functions: the user program's functions are
# recovered and planned from the file, and pathtrace.ko (no uprobes yet)
# refuses their plans by reason in the summary; vfs_write, enabled in the
# same run, is planned with blocked calls and regenerates exactly from a
# recording of the program on both CPUs.
. /pt/lib/check.sh

mkdir -p /run
insmod /pt/pathtrace.ko
P=/pt/bin/pt-user-target
O=/tmp/out
mkdir -p $O

check "the user program runs" $P 3
pathtracectl enable --verify $P:ut_round $P:'ut_c*' $P:ut_fact vfs_write > $O/enable.txt 2>&1
check "enable exits 1: the user plans are refused" test $? -eq 1
cat $O/enable.txt
expect_out "vfs_write enabled" "vfs_write: enabled as" cat $O/enable.txt
expect_out "a user glob is matched in the file" "$P:ut_c*: 0 of 1 matching functions enabled" \
	cat $O/enable.txt
expect_out "user functions are named BINARY!FUNC" "pt-user-target!ut_fact: refused by pathtrace.ko" \
	cat $O/enable.txt
expect_out "the module's refusal says why" "places no uprobes" cat $O/enable.txt
expect_out "the summary counts the refusals by reason" "1 enabled, 3 refused: kernel 3" \
	cat $O/enable.txt
expect_out "a name the file lacks" "no such function in $P" \
	pathtracectl enable $P:no_such_function
expect_out "a file that is no user ELF file" "not a user-space ELF file" \
	pathtracectl enable /pt/pathtrace.ko:vfs_write
check "only vfs_write is loaded" sh -c "pathtracectl list | grep -c vfs_write | grep -qx 1"

cat >/tmp/workload.sh <<'EOW'
for cpu in 0 1; do taskset -c $cpu /pt/bin/pt-user-target 40 >/dev/null & done
wait
EOW
pathtracectl record -o $O/u.bin -- sh /tmp/workload.sh > $O/record.txt 2>&1
check "record" test $? -eq 0
pathregen --verify $O/u.bin > $O/verify.txt 2>&1
check "pathregen --verify: vfs_write regenerates exactly (blocked calls)" test $? -eq 0
grep -i 'differences' $O/verify.txt
check "disable --all" pathtracectl disable --all
finish
