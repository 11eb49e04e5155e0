# VM test: pathtrace.ko validates plans. Every broken field of an otherwise
# good hand-built plan gets its own errno and installs nothing; kprobes'
# own refusals (BUG sites, mid-instruction, blacklisted and noinstr code)
# pass through with their errno and leave no probe behind; pathtrace's own
# code is refused; a traced module cannot be unloaded.
# vm-kernels: all
. /pt/lib/check.sh

insmod /pt/pathtrace.ko
insmod /pt/pathtrace_target.ko
F=pt_target_switch
KL=/sys/kernel/debug/kprobes/list

nothing_installed() {
	pt-plan stats | grep -q "funcs=0 " && ! grep -q pathtrace_target "$KL"
}

# bad FIELD ERRNO: the broken plan is refused with ERRNO and changes nothing.
bad() {
	expect_out "$1 -> $2" "$2" pt-plan bad "$1" "$F"
	check "$1 left nothing installed" nothing_installed
}

expect_out "the good plan is accepted" "added 1 $F" pt-plan add --enter --bits --verify $F
check "and its probes are registered" grep -q "$F" "$KL"
check "delete it" pt-plan del 1
check "deleting removed every probe" nothing_installed

bad size EINVAL
bad total_len EINVAL
bad abi_major EPROTONOSUPPORT
bad flags EINVAL
bad reserved EINVAL
bad mode EINVAL
bad encoding EINVAL
bad name_unterminated EINVAL
bad name_wrong ENOENT
bad addr_wrong ENOENT
bad len_wrong ERANGE
bad cold_half EINVAL
bad site_size EINVAL
bad verify_flag EINVAL
bad counters E2BIG
bad implicit_count EINVAL
bad implicit_unsorted EINVAL
bad implicit_user EINVAL
bad site_offset ERANGE
bad site_region EINVAL
bad site_cold_missing EINVAL
bad site_cond EINVAL
bad site_reserved EINVAL
bad site_flags EINVAL
bad site_no_actions EINVAL
bad site_action_range EINVAL
bad site_dup EINVAL
bad action_op EINVAL
bad action_when EINVAL
bad action_when_no_cond EINVAL
bad action_nbits EINVAL
bad action_value EINVAL
bad action_count EINVAL
bad emit_arg EINVAL
bad ctx_word_bits EINVAL
bad ctx_word_value EINVAL
bad ctx_word_code EINVAL
bad ctx_word_unsorted EINVAL
bad ctx_word_reserved EINVAL
bad ctx_emit_arg EINVAL
bad ctx_mode EINVAL
bad pcode_bits EINVAL
bad pcode_value EINVAL
bad pcode_unsorted EINVAL
bad pcode_beyond EINVAL
bad pcode_reserved EINVAL
bad pcode_range_lo EINVAL
bad pcode_unlisted EINVAL
bad pcode_mode EINVAL
bad enter_not_at_entry EINVAL
bad enter_not_first EINVAL
bad verify_dup EINVAL
bad verify_offset ERANGE
bad verify_reserved EINVAL
bad tail_nonzero E2BIG
bad short_blob EINVAL
bad bad_pointer EFAULT
# kprobes' own refusal: a site inside an instruction.
bad mid_instruction EILSEQ
expect_out "a zero tail from a newer writer is accepted" "accepted" pt-plan bad tail_zero $F
check "clean up" pt-plan del all
expect_out "well-formed context words are accepted" "accepted" pt-plan bad ctx_ok $F
check "clean up" pt-plan del all
expect_out "well-formed path codes are accepted" "accepted" pt-plan bad pcode_ok $F
check "clean up" pt-plan del all
expect_out "a second plan with the same func_id" "EEXIST" pt-plan bad dup_func_id $F
check "clean up" pt-plan del all
expect_out "a second plan for the same function" "EBUSY" pt-plan bad overlap $F
check "clean up" pt-plan del all
check "nothing left after the pairs" nothing_installed

# The WARN ud2 of pt_target_bug: kprobes refuses it (find_bug) with EINVAL.
F=pt_target_bug
bad verify_ud2 EINVAL
# pt-plan skips ud2 leaders itself, so the every-block plan goes in.
check "pt_target_bug (with its .cold part) without ud2 sites" pt-plan add --enter --bits --verify pt_target_bug
# (6.12's build of the target lays pt_target_bug out without a .cold part.)
if grep -q ' pt_target_bug.cold' /proc/kallsyms; then
	check "its .cold part is probed too" grep -q "pt_target_bug.cold" "$KL"
fi
F=pt_target_switch
check "clean up" pt-plan del all

# Blacklisted (NOKPROBE) and noinstr functions, as the kernel lists them.
for fn in kprobe_int3_handler exc_int3 do_int3; do
	if grep -q " $fn$" /proc/kallsyms; then
		expect_out "$fn is refused" "refused $fn EINVAL" sh -c "pt-plan add --enter $fn; true"
	fi
done
check "refusals left nothing installed" sh -c 'pt-plan stats | grep -q "funcs=0 "'
check "no stray kprobe of ours" sh -c '! grep -qE "kprobe_int3_handler|exc_int3|do_int3" '"$KL"
expect_out "pathtrace's own code is refused" "EPERM" sh -c 'pt-plan add --enter pt_pre_handler; true'

check "trace a target function" pt-plan add --enter --verify $F
check "unload the traced module" rmmod pathtrace_target
check "its plan went with it" sh -c 'pt-plan stats | grep -q "funcs=0 "'
check "and its probes" sh -c '! grep -q pathtrace_target '"$KL" 
expect_out "DEL of an unknown func_id" "ENOENT" pt-plan del 5
expect_out "STOP while not tracing" "EINVAL" pt-plan stop
check "config 64 KB" pt-plan config 64
check "start" pt-plan start
expect_out "START twice" "EBUSY" pt-plan start
expect_out "CONFIG while tracing" "EBUSY" pt-plan config 128
check "stop" pt-plan stop
expect_out "config below the minimum" "EINVAL" pt-plan config 1
check "rmmod pathtrace" rmmod pathtrace
finish
