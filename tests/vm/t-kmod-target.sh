# VM test: hand-built plans (ENTER at the entry, a bit at every Jcc, a BLOCK
# probe on every block) on the test target's functions, run on both CPUs.
# Oracles: every BLOCK-to-BLOCK step and every Jcc bit must agree with the
# static successors of the decoded code (pt-plan check); ENTER counts equal
# the activations the arguments imply; the bits recorded without verify
# probes equal those recorded with them.
# vm-kernels: all
. /pt/lib/check.sh

insmod /pt/pathtrace.ko
insmod /pt/pathtrace_target.ko
R=/sys/kernel/debug/pathtrace_target/run
FUNCS="pt_target_nested pt_target_multi_exit pt_target_irreducible pt_target_switch pt_target_recursive pt_target_inner pt_target_outer pt_target_early pt_target_bug"

workload() {
	for cpu in 0 1; do
		taskset -c $cpu sh -c "
			for a in 0 1 3 5 17 40 99 250 1000 4096 7; do echo \"switch \$a\" > $R; done
			for a in 0 1 2 7 12 20; do echo \"nested \$a\" > $R; done
			for a in 0 4 9 16 25 49 100 3000; do echo \"multi_exit \$a\" > $R; done
			for a in 0 1 2 3 100 4001; do echo \"irreducible \$a\" > $R; done
			for a in -5 0 3 9 27 51 52; do echo \"early \$a\" > $R; done
			echo 'recursive 10' > $R
			echo 'outer 7' > $R
			echo 'bug 5' > $R
		"
	done
}

expect_out "plans added" "added 9 pt_target_bug" \
	pt-plan add --enter --bits --verify --map /tmp/map $FUNCS
check "start" pt-plan start
workload
check "stop" pt-plan stop
check "read pages" pt-plan dump /tmp/v
pt-plan check --map /tmp/map /tmp/v >/tmp/check.out 2>&1
cat /tmp/check.out
check "records parse and every step agrees with the code" pt-plan check --map /tmp/map /tmp/v
check "both CPUs wrote pages" grep -q "cpus_with_pages=2 " /tmp/check.out
check "many steps were checked" sh -c '[ $(sed -n "s/.*checked=\([0-9]*\).*/\1/p" /tmp/check.out) -gt 500 ]'
check "no losses" grep -q "loss=0 " /tmp/check.out
check "one task owner per CPU run" grep -q "owners=2 " /tmp/check.out

# ENTER counts. recursive(10) is 10 activations per CPU run; outer(7) calls
# inner(8) and inner(4) through the untraced function and inner(7) directly.
pt-plan bitseq /tmp/v 5 >/tmp/rec
check "recursive 10: 20 ENTERs over both runs" sh -c '[ $(grep -c "^A" /tmp/rec) = 20 ]'
pt-plan bitseq /tmp/v 6 >/tmp/inner
check "inner: 3 ENTERs per outer run" sh -c '[ $(grep -c "^A" /tmp/inner) = 6 ]'
pt-plan bitseq /tmp/v 7 >/tmp/outer
check "outer: 1 ENTER per run" sh -c '[ $(grep -c "^A" /tmp/outer) = 2 ]'

# Same workload without verify probes: the bit strings must not change.
pt-plan bitseq /tmp/v 1 >/tmp/nested.v
pt-plan bitseq /tmp/v 4 >/tmp/switch.v
check "remove the plans" pt-plan del all
expect_out "plans without verify" "added 9 pt_target_bug" pt-plan add --enter --bits $FUNCS
check "start again" pt-plan start
workload
check "stop again" pt-plan stop
check "read pages again" pt-plan dump /tmp/b
check "records parse" pt-plan check /tmp/b
pt-plan bitseq /tmp/b 1 >/tmp/nested.b
pt-plan bitseq /tmp/b 4 >/tmp/switch.b
check "nested: some activation has more than 64 bits" sh -c 'awk "length(\$2) > 64" /tmp/nested.b | grep -q .'
check "nested: same bits with and without verify probes" cmp /tmp/nested.v /tmp/nested.b
check "switch: same bits with and without verify probes" cmp /tmp/switch.v /tmp/switch.b
check "switch: 22 activations" sh -c '[ $(grep -c "^A" /tmp/switch.b) = 22 ]'
check "stats: no drops, no misses" sh -c 'pt-plan stats | grep -q "dropped=0 missed=0"'
pt-plan fstats 4
check "remove" pt-plan del all
check "rmmod" rmmod pathtrace_target pathtrace
finish
