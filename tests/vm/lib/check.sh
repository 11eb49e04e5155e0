# Assertions for VM test scripts. Each prints "ok" or "FAIL" with its name;
# finish prints "N passed, N failed" and exits non-zero if anything failed.
pt_pass=0
pt_fail=0

pass() { pt_pass=$((pt_pass + 1)); echo "ok   - $1"; }
fail() { pt_fail=$((pt_fail + 1)); echo "FAIL - $1"; }

# check NAME CMD...: CMD exits 0.
check() {
	n=$1; shift
	if out=$("$@" 2>&1); then pass "$n"; else fail "$n"; echo "$out" | sed 's/^/     | /'; fi
}

# expect_fail NAME CMD...: CMD exits non-zero.
expect_fail() {
	n=$1; shift
	if out=$("$@" 2>&1); then fail "$n (succeeded)"; echo "$out" | sed 's/^/     | /'; else pass "$n"; fi
}

# expect_out NAME TEXT CMD...: CMD's output (stdout+stderr) contains TEXT.
expect_out() {
	n=$1; t=$2; shift 2
	out=$("$@" 2>&1)
	case $out in
	*"$t"*) pass "$n" ;;
	*) fail "$n (wanted '$t')"; echo "$out" | sed 's/^/     | /' ;;
	esac
}

finish() {
	echo "$pt_pass passed, $pt_fail failed"
	[ "$pt_fail" -eq 0 ]
}

# check_champsim NAME TRACE: pathregen --format champsim writes every stream
# of TRACE to its own file; champsim-check reads them back by ChampSim's
# rules (calls and returns balance, each Jcc's taken flag matches the next
# ip, indirect calls read a register, no BRANCH_OTHER) and prints the count
# of each branch type as a FIGURE line.
check_champsim() {
	cs_dir=/tmp/champsim.$1
	rm -rf "$cs_dir"
	pathregen --format champsim -o "$cs_dir/" "$2" 2>/tmp/champsim.err
	grep "^pathregen: champsim:" /tmp/champsim.err | sed "s/^pathregen: /FIGURE $1 /"
	champsim-check "$2" "$cs_dir" >/tmp/champsim.out 2>&1
	cs_rc=$?
	grep "^total:" /tmp/champsim.out | sed "s/^total:/FIGURE $1 champsim-check:/"
	if [ $cs_rc = 0 ]; then
		pass "$1: ChampSim reads every stream balanced and consistent"
	else
		fail "$1: champsim-check exit $cs_rc"
		grep -v "^/tmp/champsim" /tmp/champsim.out | head -12 | sed 's/^/     | /'
	fi
	rm -rf "$cs_dir"
}

# check_pt NAME TRACE: tools/bench-pt writes the trace's execution as the
# Intel PT packets it would cost (libipt's encoder) and decodes them with
# libipt's block decoder: every instruction must come back as regenerated.
check_pt() {
	bench-pt "$2" >/tmp/pt.out 2>&1
	pt_rc=$?
	sed "s/^/FIGURE $1 bench-pt: /" /tmp/pt.out | head -3
	if [ $pt_rc = 0 ] && grep -q "sequences_equal=yes" /tmp/pt.out; then
		pass "$1: libipt decodes the PT model of the execution to the same instructions"
	else
		fail "$1: bench-pt exit $pt_rc"
		head -8 /tmp/pt.out | sed 's/^/     | /'
	fi
}
