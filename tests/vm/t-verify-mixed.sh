# VM test: --verify with mixed plans (issue 42). The issue's sequence:
# do_sys_openat2 enabled with --verify, path_openat without it, in a
# separate enable; do_sys_openat2 reaches path_openat through untraced code
# (do_filp_open). pathregen --verify must compare exactly the verified
# function's blocks (0 differences, exit 0) and count path_openat's apart:
# as many as --blocks regenerates for it. Then alloc_empty_file, which
# path_openat calls directly, is added with --verify: verified, unverified,
# verified again on one call chain. A trace with no verify plan at all says
# so and exits 4.
. /pt/lib/check.sh

O=/tmp/vmix
mkdir -p $O
WORK='for i in 1 2 3 4 5 6 7 8; do cat /proc/version >/dev/null; ls / >/dev/null; done'

# verify_mixed NAME TRACE VERIFIED...: 0 differences, exit 0, some blocks
# compared, path_openat's blocks (all of them) counted apart, each verified
# function ran.
verify_mixed() {
	vm_name=$1
	vm_trace=$2
	shift 2
	pathregen --verify $vm_trace >$O/$vm_name.verify 2>&1
	rc=$?
	cat $O/$vm_name.verify
	check "$vm_name: pathregen --verify exits 0" test $rc -eq 0
	check "$vm_name: 0 differences" grep -q "^verify: .* 0 differences$" $O/$vm_name.verify
	equal=$(sed -n 's/^verify: \([0-9]*\) blocks equal.*/\1/p' $O/$vm_name.verify)
	apart=$(sed -n 's/.* \([0-9]*\) blocks of functions without verify plans not compared.*/\1/p' \
		$O/$vm_name.verify)
	check "$vm_name: verified blocks compared (${equal:-none})" test "${equal:-0}" -gt 0
	check "$vm_name: unverified blocks counted apart (${apart:-none})" test "${apart:-0}" -gt 0
	pathregen --blocks $vm_trace >$O/$vm_name.blocks 2>$O/$vm_name.blocks.err
	opened=$(awk '$2 ~ /^path_openat(\.cold)?\+0x/ { n += $1 } END { print n + 0 }' \
		$O/$vm_name.blocks)
	check "$vm_name: counted apart = path_openat's regenerated blocks ($opened)" \
		test "$opened" = "$apart"
	for f in "$@"; do
		check "$vm_name: $f ran" grep -q "^ *[1-9][0-9]*  $f+0x" $O/$vm_name.blocks
	done
}

insmod /pt/pathtrace.ko
check "enable --verify do_sys_openat2" pathtracectl enable --verify do_sys_openat2
check "enable path_openat (no --verify)" pathtracectl enable path_openat
check "record the loop workload" pathtracectl record -o $O/a.bin -- sh -c "$WORK"
verify_mixed issue $O/a.bin do_sys_openat2

check "enable --verify alloc_empty_file" pathtracectl enable --verify alloc_empty_file
check "record again" pathtracectl record -o $O/b.bin -- sh -c "$WORK"
verify_mixed chain $O/b.bin do_sys_openat2 alloc_empty_file
check "disable --all" pathtracectl disable --all

# No function enabled with --verify: nothing to compare, its own exit code.
check "enable path_openat alone" pathtracectl enable path_openat
check "record without verify plans" pathtracectl record -o $O/c.bin -- sh -c "$WORK"
pathregen --verify $O/c.bin >$O/verify2.out 2>&1
rc=$?
cat $O/verify2.out
check "verify-less trace: exit 4" test $rc -eq 4
check "verify-less trace: says so" \
	grep -q "no function of this trace was recorded with --verify" $O/verify2.out
check "verify-less trace regenerates without --verify" pathregen --stats $O/c.bin
check "disable --all again" pathtracectl disable --all
check "rmmod" rmmod pathtrace
finish
