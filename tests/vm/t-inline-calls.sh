# VM test: enable --inline in the probe modes (docs/inline.md, "Sites as
# calls"): the plans are made for the originals and their copies call
# pathtrace.ko at every site, no kprobe anywhere. witness, paths and bits
# with --verify regenerate with 0 differences on both CPUs, calls between
# copies name the originals' return addresses (vfs_read calls pipe_read), a
# stack taken inside a copy unwinds through the inserted calls, and disable
# removes plans, livepatch and module. The copies keep their calls' frames
# (docs/inline.md, "Frames the copies keep"): ENTERs under them walk no
# stack, and with check_frames pathtrace.ko walks it anyway and warns where
# the kept frame differs. The sites that need only the flags are staged
# (docs/inline.md, "The stage"), and status counts them.
# vm-kernels: all
. /pt/lib/check.sh

. /pt/lib/inline.sh
KERNEL="vfs_read ksys_read pipe_read"
echo Y >/sys/module/pathtrace/parameters/check_frames

write_workload

nf=$(echo $TARGET $KERNEL | wc -w)
for m in witness paths bits; do
	case $m in
	witness) o="--mode trace" ;;
	bits) o="--mode trace --encoding bits" ;;
	*) o="--mode $m" ;;
	esac
	pathtracectl enable --inline $o --verify --moddir /pt $TARGET $KERNEL \
		>/tmp/en.$m 2>&1
	echo "enable $m: $?"
	cat /tmp/en.$m
	check "$m: every named function planned with calls in its copy" sh -c \
		"[ \$(grep -c ': planned as .* sites, calls in its copy' /tmp/en.$m) = $nf ]"
	check "$m: $nf copies run" grep -q "inline: $nf functions run as copies" /tmp/en.$m
	pathtracectl list >/tmp/list.$m
	check "$m: list: every plan is carried by calls in a copy, no probe" awk \
		"NR > 1 { k++; if (\$NF != \"inline-calls\") bad = 1 } END { exit bad || k != $nf }" \
		/tmp/list.$m
	check "$m: no kprobe registered" sh -c \
		'! grep -q pathtrace /sys/kernel/debug/kprobes/list 2>/dev/null'
	check "$m: record" pathtracectl record -o /tmp/$m.bin -- sh /tmp/workload.sh 20
	pathtracectl status >/tmp/st.$m
	head -n 1 /tmp/st.$m
	# the sites that need only the flags go through the stage (docs/inline.md, "The stage")
	check "$m: the copies staged their flags-only sites' hits" \
		grep -q '[1-9][0-9]* hits staged, ' /tmp/st.$m
	# witness plans are framed (paths and bits plans name no frame)
	[ $m != witness ] || check "$m: ENTERs named frames the copies kept" \
		grep -q '[1-9][0-9]* frames kept, ' /tmp/st.$m
	pathregen --verify /tmp/$m.bin >/tmp/v.$m 2>&1
	echo "pathregen --verify ($m): $?"; tail -4 /tmp/v.$m
	check "$m: regeneration equals the every-block records" pathregen --verify /tmp/$m.bin
	pathregen /tmp/$m.bin >/tmp/r.$m 2>&1
	check "$m: the copies' calls nest as the originals' (pipe_read under vfs_read)" \
		awk '/vfs_read/ { v = 1 } v && /pipe_read/ { ok = 1 } END { exit !ok }' /tmp/r.$m
	if [ $m = witness ]; then
		# a reader asleep in pipe_read's copy: its stack unwinds through the copies
		mkfifo /tmp/fifo
		cat /tmp/fifo >/dev/null &
		sp=$!
		exec 3>/tmp/fifo
		sleep 1
		cat /proc/$sp/stack >/tmp/stack 2>&1
		cat /tmp/stack
		check "the stack names pipe_read's copy" grep -q "pipe_read+.*pathtrace_inline" /tmp/stack
		expect_out "... and unwinds through the copies to the system call" "do_syscall_64" \
			cat /tmp/stack
		exec 3>&-
		wait $sp
	fi
	check "$m: disable removes the copies" pathtracectl disable --all
	check "$m: module gone" test ! -e /sys/module/pathtrace_inline
done
check "every kept frame is the one the walk finds" sh -c '! dmesg | grep "kept frame"'

finish
