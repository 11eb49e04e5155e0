# VM test: CFG recovery from the live kernel (/proc/kallsyms + /proc/kcore).
# The oracle for module code: the CFG recovered from the loaded module's
# bytes must have exactly the edges of the CFG recovered from its .ko file.
# vm-kernels: all
. /pt/lib/check.sh

check "insmod target" insmod /pt/pathtrace_target.ko
mkdir -p /tmp/moddir/extra
cp /pt/pathtrace_target.ko /tmp/moddir/extra/
echo "extra/pathtrace_target.ko:" > /tmp/moddir/modules.dep

# The fentry site is the first instruction, or the second after the ENDBR of
# an IBT kernel (Debian's 6.12: docs/kernels.md).
fentry=0x0
[ "$(uname -r | cut -d. -f1-2)" = 6.1 ] || fentry=0x4
expect_out "vfs_read from kcore" "fentry: vfs_read+$fentry" pathtracectl cfg vfs_read --live
check "ksys_read from kcore" pathtracectl cfg ksys_read --live
check "vfs_read as Graphviz" sh -c 'pathtracectl cfg vfs_read --live --dot | grep -q "B0 -> "'
expect_fail "unknown function" pathtracectl cfg no_such_function_xyz --live
expect_out "plan from the live kernel" "vs every-block" pathtracectl plan vfs_read --live
expect_out "paths plan from the live kernel" "vs every-block" \
	pathtracectl plan ksys_read --live --mode paths
expect_fail "plan: unknown live function" pathtracectl plan no_such_function_xyz --live
expect_out "module tables unknown without its .ko" "unknown-static-key" \
	pathtracectl cfg pt_target_nested --live --module pathtrace_target --moddir /nonexistent

for f in pt_target_nested pt_target_multi_exit pt_target_irreducible pt_target_switch \
	 pt_target_recursive pt_target_inner pt_target_outer pt_target_early pt_target_bug \
	 pt_target_read pt_target_write; do
	pathtracectl cfg $f --elf /pt/pathtrace_target.ko --dot 2>&1 | grep -- '->' > /tmp/elf.$f
	pathtracectl cfg $f --live --module pathtrace_target --moddir /tmp/moddir --dot 2>&1 |
		grep -- '->' > /tmp/live.$f
	check "$f: live edges = .ko edges" sh -c "[ -s /tmp/elf.$f ] && cmp /tmp/elf.$f /tmp/live.$f"
done
check "rmmod target" rmmod pathtrace_target
finish
