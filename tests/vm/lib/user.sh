# What the user-function VM tests share (docs/user.md): pathtrace.ko loaded,
# P and B the test program and its base name, O the output directory, and
# the record-and-verify steps.
. /pt/lib/check.sh

mkdir -p /run
insmod /pt/pathtrace.ko
P=/pt/bin/pt-user-target
B=pt-user-target
O=/tmp/out
mkdir -p $O

# user_record_verify: records sh /tmp/workload.sh into $O/u.bin, checks
# pathregen --verify (exit 0, 0 differences) and writes pathregen's text
# output to $O/text.txt.
user_record_verify() {
	pathtracectl record -o $O/u.bin -- sh /tmp/workload.sh > $O/record.txt 2>&1
	check "record" test $? -eq 0
	cat $O/record.txt
	pathregen --verify $O/u.bin > $O/verify.txt 2>&1
	urv_rc=$?
	cat $O/verify.txt
	check "pathregen --verify exits 0" test $urv_rc -eq 0
	check "0 differences" grep -q "^verify: .* 0 differences$" $O/verify.txt
	pathregen $O/u.bin > $O/text.txt 2>&1
	check "pathregen text exits 0" test $? -eq 0
}

# user_run_both CMD ARGS...: CMD on each CPU at once (taskset), recorded and
# verified (user_record_verify); each run must print $O/plain.txt.
user_run_both() {
	echo "for cpu in 0 1; do taskset -c \$cpu $* > $O/run.\$cpu & done; wait" > /tmp/workload.sh
	user_record_verify
	for cpu in 0 1; do
		check "the program on cpu $cpu prints what it prints untraced" cmp $O/plain.txt $O/run.$cpu
	done
}
