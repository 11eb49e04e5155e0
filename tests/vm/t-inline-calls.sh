# VM test: enable --inline in the probe modes (docs/inline.md, "Sites as
# calls"): the plans are made for the originals and their copies call
# pathtrace.ko at every site, no kprobe anywhere. witness, paths and bits
# with --verify regenerate with 0 differences on both CPUs, calls between
# copies name the originals' return addresses (vfs_read calls pipe_read), a
# stack taken inside a copy unwinds through the inserted calls, and disable
# removes plans, livepatch and module. The copies keep their calls' frames
# (docs/inline.md, "Frames the copies keep"): ENTERs under them walk no
# stack, and with check_frames pathtrace.ko walks it anyway and warns where
# the kept frame differs; witness-fast is witness with check_frames off, as
# a user runs it, where an ENTER's frame named without a walk is staged
# without the site's registers. The sites that need only the flags and the
# ENTERs are staged (docs/inline.md, "The stage"), and status counts them;
# the storm stages a task's hits under a hardirq's copy, with and without
# drops, both exact. Witness copies keep implicit entries, but with --weights.
# vm-kernels: all
. /pt/lib/check.sh

. /pt/lib/inline.sh
KERNEL="vfs_read ksys_read pipe_read"

write_workload

nf=$(echo $TARGET $KERNEL | wc -w)
for m in witness witness-fast paths bits; do
	if [ $m = witness-fast ]; then
		echo N >/sys/module/pathtrace/parameters/check_frames
	else
		echo Y >/sys/module/pathtrace/parameters/check_frames
	fi
	case $m in
	witness*) o="--mode trace" ;;
	bits) o="--mode trace --encoding bits" ;;
	*) o="--mode $m" ;;
	esac
	pathtracectl enable --inline $o --verify --moddir /pt $TARGET $KERNEL \
		>/tmp/en.$m 2>&1
	echo "enable $m: $?"
	cat /tmp/en.$m
	# copies keep implicit entries (docs/inline.md, "Implicit entries in copies")
	case $m in
	witness*) check "$m: direct calls between the copies write no ENTER (implicit entries)" \
		grep -q '; [1-9][0-9]* call sites enter their traced callee without an ENTER record$' \
		/tmp/en.$m ;;
	esac
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
	check "$m: the copies staged their sites' hits" \
		grep -q '[1-9][0-9]* hits staged, ' /tmp/st.$m
	# witness plans are framed (paths and bits plans name no frame)
	[ $m = paths ] || [ $m = bits ] || check "$m: ENTERs named frames the copies kept" \
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

# With a profile (--weights) the witness copies write every ENTER: there the blockers that
# implicit entries need land on hot calls (docs/inline.md, "Implicit entries in copies").
pathtracectl enable --inline --mode edges --moddir /pt $TARGET $KERNEL >/tmp/en.edges 2>&1
check "edges: record the profile" pathtracectl record -o /tmp/edges.bin -- sh /tmp/workload.sh 5
pathregen --edges /tmp/edges.bin >/tmp/profile.edges
check "edges: disable" pathtracectl disable --all
pathtracectl enable --inline --weights /tmp/profile.edges --moddir /pt $TARGET $KERNEL \
	>/tmp/en.weights 2>&1
check "--weights: the copies' plans are made from the profile" \
	grep -q ': planned as .*; profile weights' /tmp/en.weights
check "--weights: every direct call between the copies writes its ENTER" \
	grep -q '; 0 call sites enter their traced callee without an ENTER record$' /tmp/en.weights
check "--weights: disable" pathtracectl disable --all

# The stage under interrupts (docs/inline.md, "The stage"): the storm runs
# pt_target_nested's copy on CPU 1 (its flags-only sites staged) while an
# hrtimer runs pt_target_tick's copy in hardirq context every 50 us (its
# sites call, and run what the task staged first); "nested 100" has
# thousands of staged hits between two ENTERs, so the stage fills over and
# over, on both CPUs. With the default buffer and with 8 KiB ones (drops,
# gaps): the regeneration equals the every-block records wherever no loss
# cut them.
pathtracectl enable --inline --mode trace --verify --moddir /pt pt_target_nested pt_target_tick \
	pt_target_storm >/tmp/en.storm 2>&1
cat /tmp/en.storm
check "storm: the task's and the interrupt's functions run as copies" sh -c \
	"pathtracectl list | awk '\$2 ~ /^pt_target_(nested|tick)\$/ && \$NF == \"inline-calls\" { n++ }
	 END { exit n != 2 }'"
for b in default tiny; do
	o=; [ $b = default ] || o="--buffer-kb 8"
	check "storm ($b): record" pathtracectl record $o -o /tmp/storm.$b.bin -- sh -c \
		"taskset -c 1 sh -c \"echo 'storm 300' > $R; echo 'nested 100' > $R\" &
		 taskset -c 0 sh -c \"echo 'nested 100' > $R\"; wait"
	pathtracectl status >/tmp/st.storm
	head -n 1 /tmp/st.storm
	check "storm ($b): hits staged" grep -q '[1-9][0-9]* hits staged, ' /tmp/st.storm
	pathregen --verify /tmp/storm.$b.bin >/tmp/v.storm.$b 2>&1
	echo "pathregen --verify (storm, $b): $?"; tail -3 /tmp/v.storm.$b
	check "storm ($b): regeneration equals the every-block records" \
		pathregen --verify /tmp/storm.$b.bin
done
check "storm ($b): records were dropped" sh -c '! grep -q " 0 dropped (buffer full)" /tmp/st.storm'
check "storm: disable" pathtracectl disable --all
check "every kept frame is the one the walk finds" sh -c '! dmesg | grep "kept frame"'

finish
