# bench-vm.guest.sh - the guest half of tools/bench-vm (read that first).
# tools/vm-run runs it as /pt/test.sh under busybox sh:
#
#   sh /pt/test.sh ROUNDS KEEP MODE...
#
# ROUNDS: workload rounds per CPU; KEEP: 1 to leave the traces in /pt/out
# (vm-run -o copies them out; witness.bin is left there either way, for the
# host's tools/bench-pt); MODE: untraced witness
# witness-verify paths paths-verify bits bits-verify edges witness-profiled
# witness-profiled-verify paths-profiled paths-profiled-verify edges-inline
# witness-inline witness-inline-verify paths-inline paths-inline-verify
# witness-profiled-inline witness-profiled-inline-verify ftrace-graph
# user-untraced user-witness user-witness-verify probe-cost call-cost enable
# enable-inline, in the order given. "untraced" must come first (time_ratio divides by it),
# user-untraced before the user-witness modes (theirs divides by it), edges
# before witness-profiled and paths-profiled (their profile). After the last one the untraced workload runs again
# (mode=untraced-again).
#
# Prints one "mode=..." line per measured configuration (the host keeps only
# those) and "# ..." diagnostics. A failure prints "bench-vm: guest: <what>:
# <why>" and exits non-zero.
set -eu

rounds=$1
keep=$2
shift 2

# The fixed function set, 61 names: VFS (open, read, write, stat, readdir,
# path walk), tmpfs (shmem_*: /tmp and the initramfs root are tmpfs), TCP/IP
# over loopback, mm (faults, mmap areas, page and slab allocation). Every
# name exists in Debian's 6.1 kernel, the witness mode enables all of them,
# and the workload below executes every one. The other modes refuse some
# (printed as "# " lines; functions= counts what each mode enabled).
# Left out, and why:
# - executed by nothing here: generic_file_read_iter, filemap_read and
#   filemap_fault (tmpfs has its own), vfs_getattr, sock_sendmsg, netif_rx;
# - refused by pathtracectl's witness plan: step_into, filp_close,
#   pipe_read, pipe_write, copy_page_range, exit_mmap (no probe site for an
#   emission), ip_rcv, sock_recvmsg (indirect jump);
# - inlined, no symbol: link_path_walk, __netif_receive_skb_core,
#   tcp_transmit_skb, do_anonymous_page, zap_pte_range, __do_munmap, dup_mm;
# - large functions: under TCG, enable costs ~35 ms per probe, nearly all
#   of it in the kernel registering the kprobes (planning a function in
#   pathtracectl takes ~1 s per run), and each mode enables the set again.
#   copy_process, load_elf_binary, bprm_execve, path_openat, path_init,
#   tcp_v4_rcv, tcp_ack, tcp_write_xmit, tcp_rcv_state_process,
#   tcp_rcv_established, tcp_data_queue, __dev_queue_xmit,
#   __handle_mm_fault, get_page_from_freelist, do_mmap, mmap_region,
#   wp_page_copy and shmem_undo_range take 49 to 371 witness probes each,
#   2552 together against 1516 for the 61 kept: with them every enable took
#   minutes and the whole run over half an hour;
# - per-page loops that would dominate the executed blocks by themselves:
#   release_pages, next_uptodate_page, do_set_pte, filemap_map_pages,
#   unmap_page_range; and do_fault, whose name is on two symbols.
FUNCS="vfs_read vfs_write ksys_read ksys_write rw_verify_area do_sys_openat2
do_filp_open getname_flags do_dentry_open vfs_open may_open __fput dput
walk_component lookup_fast complete_walk generic_permission inode_permission
vfs_fstatat vfs_statx iterate_dir
shmem_file_read_iter shmem_write_begin shmem_write_end shmem_get_folio_gfp
shmem_alloc_and_acct_folio shmem_add_to_page_cache shmem_getattr shmem_fault
shmem_mknod shmem_create shmem_unlink shmem_evict_inode
tcp_sendmsg tcp_sendmsg_locked tcp_recvmsg tcp_recvmsg_locked tcp_poll __tcp_transmit_skb
__ip_queue_xmit ip_output ip_finish_output2 loopback_xmit process_backlog
ip_local_deliver tcp_v4_do_rcv inet_stream_connect __sys_connect
__sys_accept4 tcp_close
handle_mm_fault do_wp_page get_unmapped_area vm_area_alloc vm_area_dup
free_pgtables folio_add_lru __alloc_pages kmem_cache_alloc kfree __kmalloc"

# The user modes' set (docs/user.md): the functions of the two user test
# programs (tests/target/: pt-user-target's rounds, its switch and its
# recursion; pt-user-dyn's rounds and libptuser.so's ul_checksum, called
# through the PLT) and the kernel functions their write(2) to a tmpfs file
# reaches, as the t-user tests trace them.
UB=/pt/bin
USER_FUNCS="$UB/pt-user-target:ut_round $UB/pt-user-target:ut_classify
$UB/pt-user-target:ut_fact $UB/pt-user-dyn:dyn_round $UB/libptuser.so:ul_checksum
ksys_write vfs_write rw_verify_area shmem_write_begin shmem_write_end shmem_get_folio_gfp"
# Rounds of each user program a CPU: 400 per workload round (the untraced
# user workload then takes about as long as the kernel one).
user_rounds=$((rounds * 400))

# mode=probe-cost: a one-block user function (pt-probe-loop's pl_tick) and a
# tiny kernel function reached by getuid(2), each called PROBE_CALLS times in
# a loop (3 repeats, the fastest counts).
PROBE_USER="$UB/pt-probe-loop:pl_tick"
PROBE_KERNEL=from_kuid_munged
PROBE_CALLS=$((rounds * 4000))

# The enable and enable-inline modes' set: over 500 functions of fs, tmpfs,
# TCP and mm. BENCH_FUNCS and BENCH_ENABLE_GLOBS, when set, replace FUNCS
# and ENABLE_GLOBS (a short trial run of the script under tools/vm-run).
ENABLE_GLOBS="tcp_* shmem_* vfs_* do_sys_* filemap_*"
FUNCS=${BENCH_FUNCS:-$FUNCS}
ENABLE_GLOBS=${BENCH_ENABLE_GLOBS:-$ENABLE_GLOBS}

# The inline modes' template module (vm-run puts every built .ko in /pt).
export PATHTRACE_INLINE_MODULE=/pt/pathtrace_inline.ko

# Per-CPU ring buffer for ftrace: big enough that its buffers, read only
# after the workload, never overrun. pathtrace runs with record's defaults
# (8 MiB, 64 MiB when a plan verifies), as a user would.
BUF_KB=65536
T=/sys/kernel/debug/tracing

say() { echo "# $*"; }
die() { echo "bench-vm: guest: $*"; exit 1; }
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
# workload NAME ARGS...: run the workload; a round that went wrong anywhere
# fails the benchmark.
workload() {
	wname=$1
	shift
	rm -f /tmp/workload.failed
	sh /tmp/workload.sh "$@" || die "$wname: workload: exit $?"
	workload_ok $wname
}
workload_ok() {
	[ ! -e /tmp/workload.failed ] || die "$1: workload: $(sort -u /tmp/workload.failed)"
}

# A mode's time and its untraced pair's are each the median of REPS runs
# of the workload (a -verify mode's own run: one, its time is no target):
# under TCG one run of the same workload moves by up to a third within a
# boot, and one slow run made a pair's ratio.
REPS=3
# The rate of the moment: the guest runs as fast as the host CPU that
# QEMU's one TCG thread is on, and on the host a CPU's rate moves by half
# for seconds to minutes (docs/benchmarks.md, "The host's rate"). So each
# run is timed between two runs of a fixed loop (/tmp/loop.sh: LOOP_N
# rounds of busybox sh arithmetic on CPU 0, no system call inside its
# time), and its time in loops (its ms over the mean of the two loops')
# is kept beside its ms.
LOOP_N=20000
cat >/tmp/loop.sh <<EOW
taskset -c 0 sh -c '
	read a b </proc/uptime
	i=0
	while [ \$i -lt $LOOP_N ]; do i=\$((i + 1)); done
	read c d </proc/uptime
	echo \$(( (\${c%.*}\${c#*.} - \${a%.*}\${a#*.}) * 10 ))'
EOW
# /tmp/reps.sh N SCRIPT ROUNDS MSFILE: SCRIPT ROUNDS MSFILE.one N times,
# the median of their times into MSFILE, each into MSFILE.all; each with
# the loops before and after it into MSFILE.loops ("ms before after"), and
# the median of the runs' times in loops into MSFILE.inloops
cat >/tmp/reps.sh <<'EOW'
n=$1 script=$2 rounds=$3 msfile=$4
: >$msfile.all
: >$msfile.loops
k=0
while [ $k -lt $n ]; do
	before=$(sh /tmp/loop.sh)
	sh $script $rounds $msfile.one || exit $?
	after=$(sh /tmp/loop.sh)
	cat $msfile.one >>$msfile.all
	echo "$(cat $msfile.one) $before $after" >>$msfile.loops
	k=$((k + 1))
done
sort -n $msfile.all | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' >$msfile
awk '$2 + $3 > 0 { print $1 * 2 / ($2 + $3) }' $msfile.loops | sort -n |
	awk '{ v[NR] = $1 } END { if (NR) printf "%.4f\n", v[int((NR + 1) / 2)]; else print "n/a" }' >$msfile.inloops
EOW

insmod /pt/pathtrace.ko || die "insmod pathtrace.ko: failed"
ip link set lo up || die "lo: cannot bring it up"
page=$(pathtracectl version | sed -n 's/.*cpus, \([0-9]*\)-byte pages.*/\1/p')
[ -n "$page" ] || die "pathtracectl version: no page size"
mkdir -p /pt/out

# The workload: ROUNDS rounds on each CPU (taskset), every round the same
# commands: a 64 KiB tmpfs file written (dd) and read (cat), path walks and
# stats (ls -l), a pipe, the file sent over loopback TCP to an echo server
# (nc -e cat) and back, the file removed. Every command is a fork+exec of
# busybox, which is where the page faults, mmaps and allocations come from.
# It writes its own elapsed time (ms, /proc/uptime: 10 ms resolution) to
# MSFILE, from after its echo servers listen to after both CPUs finish, so
# the recorder's start and final drain are not part of it.
cat >/tmp/workload.sh <<'EOW'
n=$1
msfile=$2
servers=
for cpu in 0 1; do
	taskset -c $cpu nc -ll -p $((5000 + cpu)) -e cat </dev/null >/dev/null 2>&1 &
	servers="$servers $!"
done
sleep 1
t0=$(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime)
loops=
for cpu in 0 1; do
	taskset -c $cpu sh -c '
		d=/tmp/w'$cpu'
		mkdir -p $d
		i=0
		while [ $i -lt '$n' ]; do
			dd if=/dev/zero of=$d/f$i bs=4k count=16 2>/dev/null
			cat $d/f$i >/dev/null
			ls -l $d /pt /pt/lib /proc/self >/dev/null
			cat /proc/version /pt/lib/check.sh | wc -c >/dev/null
			nc 127.0.0.1 '$((5000 + cpu))' <$d/f$i >$d/echo
			[ $(wc -c <$d/echo) = 65536 ] || echo "nc: echo incomplete" >>/tmp/workload.failed
			rm $d/f$i $d/echo
			i=$((i + 1))
		done' &
	loops="$loops $!"
done
wait $loops
t1=$(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime)
kill $servers
wait $servers 2>/dev/null
echo $((t1 - t0)) >"$msfile"
EOW

# The user workload: ROUNDS (here user_rounds) rounds of pt-user-target,
# then of pt-user-dyn, on each CPU at once (taskset), each program's
# output to a tmpfs file (a write(2) a round) and compared with what it
# printed untraced (/tmp/user.plain.*, written by mode=user-untraced); its
# elapsed time to MSFILE as the workload's.
cat >/tmp/user-workload.sh <<'EOW'
n=$1
msfile=$2
t0=$(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime)
loops=
for cpu in 0 1; do
	taskset -c $cpu sh -c '
		for p in pt-user-target pt-user-dyn; do
			/pt/bin/$p '$n' >/tmp/uw'$cpu'.$p || echo "$p: exit $?" >>/tmp/workload.failed
			[ ! -e /tmp/user.plain.$p ] || cmp -s /tmp/user.plain.$p /tmp/uw'$cpu'.$p ||
				echo "$p: output differs from the untraced run" >>/tmp/workload.failed
		done' &
	loops="$loops $!"
done
wait $loops
t1=$(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime)
rm -f /tmp/uw0.* /tmp/uw1.*
echo $((t1 - t0)) >"$msfile"
EOW

# Warm-up, so the measured untraced run does not pay for first-time
# dentry/page-cache population that later runs would not.
workload warmup 1 /tmp/ms.warmup

untraced_ms=
user_untraced_ms=

# ratio MS: MS / the untraced run of the mode's workload (base_ms, set per mode)
ratio() { awk -v a="$1" -v b="$base_ms" 'BEGIN { if (b > 0) printf "%.2f\n", a / b; else print "n/a" }'; }
div() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { if (b > 0) printf f "\n", a / b; else print "n/a" }'; }

# champsim_line MODE: the trace's ChampSim input (pathregen --format
# champsim, one file per stream) read back by ChampSim's rules
# (champsim-check): one key=value line with the count of each branch type.
champsim_line() {
	rm -rf /tmp/cs
	pathregen --format champsim -o /tmp/cs/ /tmp/$1.bin 2>/tmp/cs.err || {
		pr_rc=$?
		say "$1: pathregen --format champsim: exit $pr_rc, $(df -m /tmp | awk 'NR == 2 { print $4 }') MB left in /tmp"
		head -5 /tmp/cs.err | sed 's/^/# /'
		echo "mode=champsim trace=$1 exit=$pr_rc"
		rm -rf /tmp/cs
		return
	}
	grep "^pathregen: champsim:" /tmp/cs.err | sed "s/^pathregen: /# $1: /"
	cs_rc=0
	champsim-check /tmp/$1.bin /tmp/cs >/tmp/cs.out 2>&1 || cs_rc=$?
	[ $cs_rc = 0 ] || { say "$1: champsim-check: exit $cs_rc"; grep -v "^/tmp/cs/" /tmp/cs.out | head -5 | sed 's/^/# /'; }
	sed -n 's/^total: //p' /tmp/cs.out | awk -v m=$1 -v rc=$cs_rc '{
		line = "mode=champsim trace=" m " records=" $1 " synthetic=" substr($3, 2)
		for (i = 5; i < NF; i += 2)
			if ($i ~ /^(BRANCH_|NOT_BRANCH)/) { k = tolower($i); sub(/^branch_/, "", k); v = $(i + 1); sub(/;$/, "", v); line = line " " k "=" v }
		match($0, /calls open at the end [0-9]+/); o = substr($0, RSTART + 22, RLENGTH - 22)
		match($0, /errors [0-9]+/); e = substr($0, RSTART + 7, RLENGTH - 7)
		print line " open_calls=" o " errors=" e " exit=" rc }'
	rm -rf /tmp/cs
}

# bring_back MODE: the trace into /pt/out whatever KEEP says: the host runs
# tools/bench-pt on it (mode=intel-pt), outside the emulated guest.
bring_back() {
	cp /tmp/$1.bin /pt/out/ || die "$1: cannot copy the trace to /pt/out"
}

# verify_diff FILE RC: the differences pathregen --verify found (it checks
# the whole trace and counts them all on its summary line).
verify_diff() {
	d=$(sed -n 's/^verify: .* \([0-9][0-9]*\) differences$/\1/p' "$1")
	if [ -n "$d" ] && { [ "$2" = 0 ] || [ "$2" = 3 ]; }; then echo "$d"
	else echo "n/a(pathregen-failed)"; fi
}

# inline_refused FILE: the functions enable --inline's copy refused (the
# inline-* tags of the summary line "enable: N enabled, M refused: TAG n, ...").
inline_refused() {
	sed -n 's/^enable: [0-9]* enabled, [0-9]* refused: //p' "$1" | tr ',' '\n' |
		awk '$1 ~ /^inline-/ { n += $2 } END { print n + 0 }'
}

# pair_untraced NAME: the mode's workload (pt_workload, pt_rounds) run
# untraced right before the mode's own run, its time the mode's base_ms
# (untraced_ms= on its line, time_ratio's divisor): the same workload's time
# drifts within a boot by up to a third (untraced against untraced-again),
# more than the differences the inline modes are measured by.
pair_untraced() {
	rm -f /tmp/workload.failed
	sh /tmp/reps.sh $REPS $pt_workload "$pt_rounds" /tmp/ms.pair.$1 ||
		die "$1: untraced workload: exit $?"
	workload_ok $1
	base_ms=$(cat /tmp/ms.pair.$1)
	base_inloops=$(cat /tmp/ms.pair.$1.inloops)
	say "$1: untraced runs $(tr '\n' ' ' </tmp/ms.pair.$1.all)ms; loops $(loops_said /tmp/ms.pair.$1.loops)"
}

# loops_said FILE: each run's loops (reps.sh's MSFILE.loops), as "before/after" ms
loops_said() {
	awk '{ printf "%s/%s ", $2, $3 }' "$1"
}

# The modes compared by time against the peer (the inline modes without
# -verify, and ftrace-graph) run CYCLES cycles, each its untraced runs, then
# its traced runs: the untraced time drifts over a boot by more than these
# modes differ by, and a drift between one cycle's two sides moved a ratio
# by a third. Each cycle's ratio is taken; the mode's line has the cycle of
# the median ratio (untraced_ms, workload_ms, time_ratio) and the range
# (time_ratio_min, time_ratio_max); the other keys are the last cycle's.
# Each cycle's ratio in loops is taken too (traced over untraced, each
# side's median time in loops): loop_ratio, the median of the cycles', and
# its range (loop_ratio_min, loop_ratio_max).
CYCLES=3

# run_cycles NAME N CMD [ARGS...]: CMD (one cycle, leaving its untraced and
# traced medians in base_ms and ms, and in loops in base_inloops and
# inloops) N times; then base_ms and ms of the cycle of median ratio, and
# cycle_keys the line's keys of the range and of the ratios in loops
run_cycles() {
	rc_name=$1 rc_n=$2
	shift 2
	: >/tmp/cycles.$rc_name
	rc_k=0
	while [ $rc_k -lt $rc_n ]; do
		"$@"
		echo "$(ratio $ms) $base_ms $ms $(div "$inloops" "$base_inloops" %.2f)" >>/tmp/cycles.$rc_name
		rc_k=$((rc_k + 1))
	done
	set -- $(sort -n /tmp/cycles.$rc_name | awk '{ r[NR] = $1; b[NR] = $2; m[NR] = $3 }
		END { k = int((NR + 1) / 2); print NR, b[k], m[k], r[1], r[NR] }')
	base_ms=$2 ms=$3
	say "$rc_name: $1 cycles, ratios $(awk '{ printf "%s ", $1 }' /tmp/cycles.$rc_name)" \
		"in loops $(awk '{ printf "%s ", $4 }' /tmp/cycles.$rc_name)"
	cycle_keys=" cycles=$1 time_ratio_min=$4 time_ratio_max=$5"
	set -- $(awk '{ print $4 }' /tmp/cycles.$rc_name | sort -n | awk '{ r[NR] = $1 }
		END { k = int((NR + 1) / 2); print r[k], r[1], r[NR] }')
	cycle_keys="$cycle_keys loop_ratio=$1 loop_ratio_min=$2 loop_ratio_max=$3"
}

# A pathtrace configuration: enable the mode's functions (pt_funcs: FUNCS,
# or USER_FUNCS) with ARGS, record its workload (pt_workload for pt_rounds
# rounds), read status, disable: once, or CYCLES times for the inline modes
# without -verify (the last cycle's trace and status are the line's). Sets
# the fields of the mode's line.
pt_run() {
	name=$1
	shift
	cycles=1
	case $name in *-inline) cycles=$CYCLES ;; esac
	run_cycles $name $cycles pt_cycle $name "$@"
}

# pt_cycle NAME ARGS...: one cycle of pt_run
pt_cycle() {
	name=$1
	shift
	pair_untraced $name
	# a mode without --inline measures kprobes (enable's default is copies)
	case " $* " in *" --inline "*) ;; *) set -- --probes "$@" ;; esac
	t0=$(now_ms)
	pathtracectl enable "$@" $pt_funcs >/tmp/en.$name 2>&1 || true
	t1=$(now_ms)
	case $name in
	*-inline | *-inline-verify)
		# the copy refuses after planning ("planned as" lines): enable's
		# summary counts what runs
		functions=$(sed -n 's/^enable: \([0-9]*\) enabled, .*/\1/p' /tmp/en.$name)
		functions=${functions:-0}
		refused=$(inline_refused /tmp/en.$name) ;;
	*)
		# a function re-planned (one it assumed traced was refused) says so twice
		functions=$(sed -n 's/^\([^:]*\): enabled as .*/\1/p' /tmp/en.$name | sort -u | wc -l) ;;
	esac
	[ "$functions" -gt 0 ] || { cat /tmp/en.$name; die "$name: enable: no function enabled"; }
	grep -v ": enabled as\|: planned as" /tmp/en.$name | sed "s/^/# $name: /" || true
	say "$name: enable took $((t1 - t0)) ms"
	rm -f /tmp/workload.failed
	reps=$REPS
	case $name in *-verify) reps=1 ;; esac
	# In the background only to learn the recorder's pid (recorder_blocks).
	pathtracectl record ${rec_args:-} -o /tmp/$name.bin \
		-- sh /tmp/reps.sh $reps $pt_workload "$pt_rounds" /tmp/ms.$name >/tmp/rec.$name 2>&1 &
	recorder=$!
	wait $recorder || { cat /tmp/rec.$name; die "$name: record: failed"; }
	workload_ok $name
	pathtracectl status >/tmp/st.$name || die "$name: status: failed"
	t0=$(now_ms)
	pathtracectl disable --all >/dev/null || die "$name: disable --all: failed"
	t1=$(now_ms)
	say "$name: $(grep 'record: .* pages (' /tmp/rec.$name | sed 's/^pathtracectl: //')"
	say "$name: disable took $((t1 - t0)) ms"
	ms=$(cat /tmp/ms.$name)
	inloops=$(cat /tmp/ms.$name.inloops)
	say "$name: traced runs $(tr '\n' ' ' </tmp/ms.$name.all)ms; loops $(loops_said /tmp/ms.$name.loops)"
	# trace_bytes: every byte of page data in trace.bin (each page up to the
	# end of its data, as record reports it); dropped/missed: record's totals,
	# which it also writes into trace.bin's LOSS section.
	trace_bytes=$(sed -n 's/.*record: .*; \([0-9]*\) bytes), .*/\1/p' /tmp/rec.$name)
	[ -n "$trace_bytes" ] || die "$name: record: no byte count: $(cat /tmp/rec.$name)"
	dropped=$(sed -n 's/.* records, \([0-9]*\) dropped, .*/\1/p' /tmp/rec.$name)
	missed=$(sed -n 's/.* dropped, \([0-9]*\) missed$/\1/p' /tmp/rec.$name)
	grep -q "(cpu0 [1-9][0-9]*, cpu1 [1-9]" /tmp/rec.$name || say "$name: WARNING: not every CPU wrote pages"
	set -- $(awk 'NR > 2 { p += $3; o += $4; h += $5 } END { printf "%d %d %d\n", p, o, h }' /tmp/st.$name)
	probes=$1 optimized=$2 hits=$3
	# the stacks ENTERs unwound (framed plans) and their mean time
	set -- $(sed -n '1s/.* \([0-9]*\) frame walks (\([0-9.]*\) us each)$/\1 \2/p' /tmp/st.$name)
	[ $# = 2 ] || die "$name: status: no frame walks: $(head -n 1 /tmp/st.$name)"
	frame_walks=$1
	frame_walk_ms=$(awk -v n=$1 -v us=$2 -v r=$reps 'BEGIN { printf "%.0f\n", n * us / 1000 / r }')
	frames_kept=$(sed -n '1s/.* \([0-9]*\) frames kept, .*/\1/p' /tmp/st.$name)
	[ -n "$frames_kept" ] || die "$name: status: no frames kept: $(head -n 1 /tmp/st.$name)"
	frames_kept_softirq=$(sed -n '1s/.* frames kept, \([0-9]*\) of them in softirqs, .*/\1/p' /tmp/st.$name)
	[ -n "$frames_kept_softirq" ] || die "$name: status: no softirqs' frames kept: $(head -n 1 /tmp/st.$name)"
	hits_staged=$(sed -n '1s/.* \([0-9]*\) hits staged, .*/\1/p' /tmp/st.$name)
	[ -n "$hits_staged" ] || die "$name: status: no hits staged: $(head -n 1 /tmp/st.$name)"
}

# probe_cost_run NAME TARGET LOOP [ENABLE-OPTIONS...]: the loop (pt-probe-loop
# LOOP, on CPU 1) recorded under a plan on TARGET alone (by default an edges
# plan on kprobes); sets traced_ns (the fastest repeat), probe_hits (status:
# every repeat's), probe_n and probe_opt (the plan's probes and how many are
# jump-optimized).
probe_cost_run() {
	pc_opts="--probes --mode edges"
	[ $# -le 3 ] || pc_opts=$(shift 3; echo "$@")
	pathtracectl enable $pc_opts $2 >/tmp/en.$1 2>&1 || { cat /tmp/en.$1; die "$1: enable $2: failed"; }
	# enabled, nothing recording yet (a plan between enable and record)
	idle_ns=$(taskset -c 1 $UB/pt-probe-loop $3 $PROBE_CALLS | sed -n 's/^calls=.* best_ns=\([0-9]*\)$/\1/p')
	[ -n "$idle_ns" ] || die "$1: pt-probe-loop while enabled: no time"
	pathtracectl record -o /tmp/$1.bin -- taskset -c 1 $UB/pt-probe-loop $3 $PROBE_CALLS >/tmp/rec.$1 2>&1 ||
		{ cat /tmp/rec.$1; die "$1: record: failed"; }
	pathtracectl status >/tmp/st.$1 || die "$1: status: failed"
	pathtracectl disable --all >/dev/null || die "$1: disable --all: failed"
	traced_ns=$(sed -n 's/^calls=.* best_ns=\([0-9]*\)$/\1/p' /tmp/rec.$1)
	[ -n "$traced_ns" ] || { cat /tmp/rec.$1; die "$1: pt-probe-loop: no time"; }
	say "$1: $(grep 'record: .* pages (' /tmp/rec.$1 | sed 's/^pathtracectl: //'); $(head -n 1 /tmp/st.$1 | sed 's/.*missed, //')"
	set -- $(awk 'NR > 2 { p += $3; o += $4; h += $5; m += $6 } END { printf "%d %d %d %d\n", p, o, h, m }' /tmp/st.$1)
	probe_n=$1 probe_opt=$2 probe_hits=$3
	[ "$4" = 0 ] || say "probe-cost: $4 hits missed"
	rm -f /tmp/probe-*.bin
}

# ftrace_cycle: one cycle of mode=ftrace-graph: untraced runs with no tracer
# (function_graph's hooks stay in with tracing_on 0, so the tracer is nop
# for them, as pathtrace's plans are disabled), then function_graph on FUNCS
# and its traced runs, tracing off after them
ftrace_cycle() {
	echo 0 >$T/tracing_on
	echo nop >$T/current_tracer
	: >$T/set_ftrace_filter
	pair_untraced ftrace-graph
	for f in $FUNCS; do echo "$f" >>$T/set_ftrace_filter 2>/dev/null || say "ftrace-graph: $f: not accepted"; done
	functions=$(wc -l <$T/set_ftrace_filter)
	echo $BUF_KB >$T/buffer_size_kb
	echo function_graph >$T/current_tracer
	echo >$T/trace
	echo 1 >$T/tracing_on
	rm -f /tmp/workload.failed
	sh /tmp/reps.sh $REPS /tmp/workload.sh "$rounds" /tmp/ms.ftrace ||
		die "ftrace-graph: workload: exit $?"
	workload_ok ftrace-graph
	echo 0 >$T/tracing_on
	ms=$(cat /tmp/ms.ftrace)
	inloops=$(cat /tmp/ms.ftrace.inloops)
	say "ftrace-graph: traced runs $(tr '\n' ' ' </tmp/ms.ftrace.all)ms; loops $(loops_said /tmp/ms.ftrace.loops)"
}

# per_hit TRACED UNTRACED HITS: ns a probe hit adds, HITS over every repeat
per_hit() {
	awk -v t="$1" -v u="$2" -v h="$3" 'BEGIN { if (h > 0) printf "%.0f\n", (t - u) / (h / 3); else print "n/a" }'
}

for mode in "$@"; do
	pt_funcs=$FUNCS
	pt_workload=/tmp/workload.sh
	pt_rounds=$rounds
	base_ms=$untraced_ms
	case $mode in
	untraced)
		workload untraced "$rounds" /tmp/ms.untraced
		untraced_ms=$(cat /tmp/ms.untraced)
		echo "mode=untraced workload_ms=$untraced_ms"
		continue
		;;
	user-untraced)
		# The user programs untraced: their outputs, which every
		# user-witness run must print again, then the workload timed.
		for p in pt-user-target pt-user-dyn; do
			$UB/$p $user_rounds >/tmp/user.plain.$p || die "$mode: $p: exit $?"
		done
		rm -f /tmp/workload.failed
		sh /tmp/user-workload.sh $user_rounds /tmp/ms.$mode || die "$mode: workload: exit $?"
		workload_ok $mode
		user_untraced_ms=$(cat /tmp/ms.$mode)
		echo "mode=user-untraced rounds=$user_rounds workload_ms=$user_untraced_ms"
		continue
		;;
	user-witness | user-witness-verify)
		# User functions on uprobes and the kernel functions under
		# them, planned as enable plans them (docs/user.md); the same
		# keys as the kernel modes, time_ratio against user-untraced.
		[ -n "$user_untraced_ms" ] || die "$mode: user-untraced must run first"
		pt_funcs=$USER_FUNCS
		pt_workload=/tmp/user-workload.sh
		pt_rounds=$user_rounds
		base_ms=$user_untraced_ms
		args=
		[ $mode = user-witness ] || args=--verify
		;;
	probe-cost)
		# What one probe hit adds to a loop: a uprobe (pl_tick, one
		# block: its ENTER counter) against a kprobe (from_kuid_munged,
		# under getuid(2)), edges plans, each loop's untraced time
		# first; ns a hit = (traced - untraced) / hits a repeat.
		user_ns=$(taskset -c 1 $UB/pt-probe-loop user $PROBE_CALLS | sed -n 's/.* best_ns=//p')
		kernel_ns=$(taskset -c 1 $UB/pt-probe-loop kernel $PROBE_CALLS | sed -n 's/.* best_ns=//p')
		[ -n "$user_ns" ] && [ -n "$kernel_ns" ] || die "$mode: pt-probe-loop: no untraced times"
		probe_cost_run probe-user $PROBE_USER user
		user_traced=$traced_ns uhits=$probe_hits
		probe_cost_run probe-kernel $PROBE_KERNEL kernel
		kernel_traced=$traced_ns khits=$probe_hits kprobes=$probe_n kopt=$probe_opt
		# the same with kprobe optimization off (an int3 where a jump was)
		O=/proc/sys/debug/kprobes-optimization
		[ -w $O ] || die "$mode: $O: not writable"
		echo 0 >$O
		probe_cost_run probe-kernel-int3 $PROBE_KERNEL kernel
		echo 1 >$O
		[ "$probe_opt" = 0 ] || die "$mode: $probe_opt probes optimized with $O 0"
		int3_traced=$traced_ns int3_hits=$probe_hits
		uns=$(per_hit $user_traced $user_ns $uhits)
		kns=$(per_hit $kernel_traced $kernel_ns $khits)
		ins=$(per_hit $int3_traced $kernel_ns $int3_hits)
		echo "mode=probe-cost calls=$PROBE_CALLS repeats=3 user_loop_ns=$user_ns user_traced_ns=$user_traced" \
			"uprobe_hits=$uhits uprobe_ns_per_hit=$uns kernel_loop_ns=$kernel_ns kernel_traced_ns=$kernel_traced" \
			"kprobe_hits=$khits kprobes=$kprobes kprobes_optimized=$kopt kprobe_ns_per_hit=$kns" \
			"kernel_unoptimized_ns=$int3_traced kprobe_unoptimized_hits=$int3_hits kprobe_unoptimized_ns_per_hit=$ins" \
			"uprobe_to_kprobe=$(div "$uns" "$kns" %.1f) uprobe_to_unoptimized_kprobe=$(div "$uns" "$ins" %.1f)"
		continue
		;;
	call-cost)
		# What each mechanism adds to one call of a kernel function
		# (from_kuid_munged under getuid(2), as in probe-cost): its
		# copy reached through livepatch (an edges plan: the redirect
		# and one increment; a witness plan: the redirect and an ENTER
		# site's call), kprobes with the same plans, and function_graph
		# on it alone; ns a call = (traced - untraced) / calls.
		kernel_ns=$(taskset -c 1 $UB/pt-probe-loop kernel $PROBE_CALLS | sed -n 's/.* best_ns=//p')
		[ -n "$kernel_ns" ] || die "$mode: pt-probe-loop: no untraced time"
		line="mode=call-cost function=$PROBE_KERNEL calls=$PROBE_CALLS repeats=3 loop_ns=$kernel_ns"
		for how in copy-edges:"--inline --mode edges" copy-witness:--inline \
			kprobe-edges:"--probes --mode edges" kprobe-witness:--probes; do
			probe_cost_run call-${how%%:*} $PROBE_KERNEL kernel ${how#*:}
			line="$line $(echo ${how%%:*} | tr - _)_ns_per_call=$(per_hit $traced_ns $kernel_ns $((PROBE_CALLS * 3)))"
			[ ${how%%:*} != copy-witness ] ||
				copy_idle=$(per_hit $idle_ns $kernel_ns $((PROBE_CALLS * 3)))
		done
		line="$line copy_witness_idle_ns_per_call=$copy_idle"
		[ -d $T ] || die "$mode: $T: no tracefs"
		echo 0 >$T/tracing_on
		echo nop >$T/current_tracer
		echo $PROBE_KERNEL >$T/set_ftrace_filter
		echo function_graph >$T/current_tracer
		echo 1 >$T/tracing_on
		fgraph_ns=$(taskset -c 1 $UB/pt-probe-loop kernel $PROBE_CALLS | sed -n 's/.* best_ns=//p')
		echo 0 >$T/tracing_on
		echo nop >$T/current_tracer
		: >$T/set_ftrace_filter
		[ -n "$fgraph_ns" ] || die "$mode: pt-probe-loop under function_graph: no time"
		echo "$line fgraph_ns_per_call=$(per_hit $fgraph_ns $kernel_ns $((PROBE_CALLS * 3)))"
		continue
		;;
	witness) args= ;;
	witness-verify) args=--verify ;;
	paths) args="--mode paths" ;;
	paths-verify) args="--mode paths --verify" ;;
	bits) args="--encoding bits" ;;
	bits-verify) args="--encoding bits --verify" ;;
	edges) args="--mode edges" ;;
	edges-inline) args="--inline --mode edges" ;;
	# the probe modes' plans, their sites as calls in the copies
	witness-inline) args=--inline ;;
	witness-inline-verify) args="--inline --verify" ;;
	paths-inline) args="--inline --mode paths" ;;
	paths-inline-verify) args="--inline --mode paths --verify" ;;
	witness-profiled-inline | witness-profiled-inline-verify)
		[ -s /tmp/profile.edges ] || die "$mode: no edge profile: the edges mode must run first"
		args="--inline --weights /tmp/profile.edges"
		[ $mode = witness-profiled-inline ] || args="$args --verify"
		;;
	path-profile | ppp-profile | ppp-profiled)
		# The Ball-Larus path profile counted in the kernel: no record
		# per event, PATHS records at stop; its cost beside the paths
		# trace's (mode=paths) and its counter memory (status's
		# counters column: bytes a CPU, summed over functions and
		# CPUs). ppp-profile: the same with preferential path
		# profiling, the 16 likeliest paths of each function counted
		# densely and the rest in one counter; bl_array_bytes is what
		# plain Ball-Larus numbering's array of every path would take.
		# ppp-profiled: the 16 hottest paths of each function as the
		# path-profile run measured them (--ppp-paths, pathregen --paths).
		case $mode in
		ppp-profile) pt_run $mode --mode path-profile --ppp 16 ;;
		ppp-profiled)
			[ -s /tmp/paths.path-profile ] || die "$mode: no path profile: path-profile must run first"
			pt_run $mode --mode path-profile --ppp 16 --ppp-paths /tmp/paths.path-profile ;;
		*)
			# with online subpath profiling: a hot list of 256 subpaths a CPU
			rec_args="--osp 256"
			pt_run $mode --mode path-profile
			rec_args=
			osp=$(pathtracectl subpaths -k 1 2>/dev/null | awk '
				/^# OSP/ { match($0, /2\^[0-9]+/); t = substr($0, RSTART + 2, RLENGTH - 2)
					match($0, /[0-9]+ path ends/); p = substr($0, RSTART, RLENGTH - 10)
					match($0, /[0-9]+ samples/); s = substr($0, RSTART, RLENGTH - 8) }
				/^ *[0-9]+ ±/ && !e { e = $1; l = $3; sub(/:/, "", l) }
				END { printf "osp_entries=256 osp_tau_log2=%d osp_path_ends=%d osp_samples=%d osp_top_estimate=%d osp_top_len=%d\n", t, p, s, e, l }')
			;;
		esac
		set -- $(trace-dump /tmp/$mode.bin | tail -n 1 | tr ' ' '\n' | sed -n 's/^\(records\|enter\|paths\)=//p')
		pathregen --paths --top 16 /tmp/$mode.bin >/tmp/paths.$mode 2>&1 || say "$mode: pathregen --paths: exit $?"
		set -- "$@" $(awk '/\(counted in the kernel: / {
				for (i = 1; i <= NF; i++) if ($i == "paths" && $(i + 1) == "executed,") n += $(i - 1)
				match($0, /; [0-9]+ path ends lost/); l += substr($0, RSTART + 2, RLENGTH - 17)
				match($0, /, [0-9]+ to a full table/); o += substr($0, RSTART + 2, RLENGTH - 17) }
			END { print n + 0, l + 0, o + 0 }' /tmp/paths.$mode)
		counter_bytes=$(awk -v n=$(nproc) 'NR > 2 { c += $9 } END { printf "%d\n", c * n }' /tmp/st.$mode)
		if [ $mode != path-profile ]; then
			other=$(awk '{ if (match($0, /[0-9]+ ends of other paths/)) o += substr($0, RSTART, RLENGTH) + 0 }
				END { print o + 0 }' /tmp/paths.$mode)
			blpaths=$(sed -n 's/^enable: PPP in [0-9]* functions: .*Ball-Larus numbering: \([0-9]*\) paths.*/\1/p' /tmp/en.$mode)
			interesting=$(sed -n 's/^enable: PPP in [0-9]* functions: \([0-9]*\) interesting.*/\1/p' /tmp/en.$mode)
			echo "mode=$mode functions=$functions records=$1 enter_records=$2 paths_records=$3" \
				"interesting_paths=${interesting:-0} interesting_ends=$4 other_ends=$other lost=$5 overflow=$6" \
				"counter_bytes=$counter_bytes bl_array_bytes=$(awk -v p=${blpaths:-0} -v f=$functions -v n=$(nproc) 'BEGIN { printf "%.0f\n", (16 * f + 8 * p) * n }')" \
				"trace_bytes=$trace_bytes untraced_ms=$base_ms workload_ms=$ms time_ratio=$(ratio $ms)"
		else
			echo "mode=path-profile functions=$functions records=$1 enter_records=$2 paths_records=$3" \
				"paths_counted=$4 lost=$5 overflow=$6 counter_bytes=$counter_bytes" \
				"trace_bytes=$trace_bytes untraced_ms=$base_ms workload_ms=$ms time_ratio=$(ratio $ms) $osp"
		fi
		[ "$keep" = 1 ] && mv /tmp/$mode.bin /pt/out/ || rm -f /tmp/$mode.bin
		continue
		;;
	witness-profiled | witness-profiled-verify)
		# Witnesses placed by the edge profile the edges run measured
		# in this boot (pathregen --edges of edges.bin), not by the
		# static heuristic.
		[ -s /tmp/profile.edges ] || die "$mode: no edge profile: the edges mode must run first"
		args="--weights /tmp/profile.edges"
		[ $mode = witness-profiled ] || args="$args --verify"
		;;
	paths-profiled | paths-profiled-verify)
		# A paths trace planned from the same profile: its path codes
		# list each start's likeliest paths by the measured counts.
		[ -s /tmp/profile.edges ] || die "$mode: no edge profile: the edges mode must run first"
		args="--mode paths --weights /tmp/profile.edges"
		[ $mode = paths-profiled ] || args="$args --verify"
		;;
	enable)
		# Enable at scale: every function the globs of ENABLE_GLOBS
		# match (fs, tmpfs, TCP, mm), verify off, timed from the
		# command's start to its exit; nothing is recorded.
		t0=$(now_ms)
		pathtracectl enable --probes $ENABLE_GLOBS >/tmp/en.enable 2>&1 ||
			say "enable: exit $? (some globs matched nothing enabled)"
		t1=$(now_ms)
		grep "^enable: " /tmp/en.enable | sed 's/^/# /'
		set -- $(sed -n 's/^enable: \([0-9]*\) enabled, \([0-9]*\) refused.*/\1 \2/p' /tmp/en.enable)
		[ $# -eq 2 ] || die "enable: no summary line"
		probes=$(sed -n 's/^enable: \([0-9]*\) probes placed.*/\1/p' /tmp/en.enable)
		pathtracectl disable --all >/dev/null 2>&1 || die "enable: disable --all failed"
		echo "mode=enable functions=$1 enable_s=$(div $((t1 - t0)) 1000 %.1f) refused=$2 probes=$probes ms_per_probe=$(div $((t1 - t0)) "$probes" %.1f)"
		continue
		;;
	enable-inline)
		# The same globs as copies (enable --inline: the generated
		# livepatch module, witness plans on the copies), then disable,
		# each timed. Functions the copy refuses stay out (refused=).
		t0=$(now_ms)
		pathtracectl enable --inline $ENABLE_GLOBS >/tmp/en.$mode 2>&1 ||
			say "$mode: exit $? (some globs matched nothing enabled)"
		t1=$(now_ms)
		grep "^enable: \|^inline: " /tmp/en.$mode | sed "s/^/# $mode: /"
		set -- $(sed -n 's/^enable: \([0-9]*\) enabled, \([0-9]*\) refused.*/\1 \2/p' /tmp/en.$mode)
		[ $# -eq 2 ] || { tail -5 /tmp/en.$mode; die "$mode: no summary line"; }
		[ "$1" -gt 0 ] || { tail -5 /tmp/en.$mode; die "$mode: no function enabled"; }
		grep -q "^inline: $1 functions run as copies" /tmp/en.$mode ||
			say "$mode: WARNING: $(grep '^inline: ' /tmp/en.$mode || echo 'no copies reported') for $1 enabled"
		refused=$(inline_refused /tmp/en.$mode)
		probes=$(sed -n 's/^enable: \([0-9]*\) probes placed.*/\1/p' /tmp/en.$mode)
		t2=$(now_ms)
		pathtracectl disable --all >/tmp/dis.$mode 2>&1 || { cat /tmp/dis.$mode; die "$mode: disable --all failed"; }
		t3=$(now_ms)
		[ ! -e /sys/module/pathtrace_inline ] || die "$mode: the copies' module is still loaded after disable"
		# where enable's time went: the inline line's phases
		phases=$(sed -n 's/^inline: .* (\([0-9.]*\) s: copied \([0-9.]*\), module written \([0-9.]*\), loaded and switched over \([0-9.]*\), kernel read back \([0-9.]*\), checked and added \([0-9.]*\))$/\1 \2 \3 \4 \5 \6/p' /tmp/en.$mode)
		set -- $1 $2 ${phases:-n/a n/a n/a n/a n/a n/a}
		plan_s=n/a
		[ "$3" = n/a ] || plan_s=$(awk -v a=$((t1 - t0)) -v b="$3" 'BEGIN { printf "%.1f\n", a / 1000 - b }')
		echo "mode=enable-inline functions=$1 enable_s=$(div $((t1 - t0)) 1000 %.1f)" \
			"plan_s=$plan_s copy_s=$4 write_s=$5 switch_s=$6 readback_s=$7 add_s=$8" \
			"disable_s=$(div $((t3 - t2)) 1000 %.1f) refused=$refused plan_refused=$(($2 - refused)) probes=$probes"
		continue
		;;
	ftrace-graph)
		# The peer: function_graph restricted to the same names by
		# set_ftrace_filter (set_graph_function would also trace every
		# function they call). functions= counts the entries ftrace took
		# (a duplicated name counts once per symbol, as in pathtracectl).
		[ -d $T ] || die "ftrace-graph: $T: no tracefs"
		run_cycles $mode $CYCLES ftrace_cycle
		overrun=$(cat $T/per_cpu/cpu*/stats | awk '/^overrun:/ { s += $2 } END { print s + 0 }')
		# Drain every CPU's buffer through trace_pipe_raw (binary pages,
		# like pathtrace's): it blocks when empty, so read until the
		# buffers say empty and the files stop growing, then stop the
		# readers.
		pids=
		for c in $(ls $T/per_cpu | sed 's/cpu//'); do
			cat $T/per_cpu/cpu$c/trace_pipe_raw >/tmp/ftrace.cpu$c &
			pids="$pids $!"
		done
		last=-1
		k=0
		while [ $k -lt 600 ]; do
			sleep 1
			size=$(cat /tmp/ftrace.cpu* | wc -c)
			left=$(cat $T/per_cpu/cpu*/stats | awk '/^entries:/ { s += $2 } END { print s + 0 }')
			[ "$left" = 0 ] && [ "$size" = "$last" ] && break
			last=$size
			k=$((k + 1))
		done
		kill $pids
		wait $pids 2>/dev/null || true
		[ "$left" = 0 ] || die "ftrace-graph: trace_pipe_raw: $left entries not drained"
		echo nop >$T/current_tracer
		: >$T/set_ftrace_filter
		echo 1408 >$T/buffer_size_kb
		if [ "$keep" = 1 ]; then mv /tmp/ftrace.cpu* /pt/out/; else rm -f /tmp/ftrace.cpu*; fi
		echo "mode=ftrace-graph functions=$functions untraced_ms=$base_ms workload_ms=$ms trace_bytes=$size overrun=$overrun time_ratio=$(ratio $ms)$cycle_keys"
		continue
		;;
	*) die "$mode: unknown mode" ;;
	esac
	[ -n "$base_ms" ] || die "$mode: the untraced run must come first"
	pt_run $mode $args
	t0=$(now_ms)
	if [ $mode = edges ] || [ $mode = edges-inline ]; then
		# Edges mode records counters, not an execution: blocks and Jcc
		# are the counted profile (pathregen --blocks / --edges, the
		# chords counted and the other edges by the flow law). A Jcc
		# block is one with a "taken" out-edge; its executions are the
		# traversals of all its out-edges.
		pathregen --blocks /tmp/$mode.bin >/tmp/blocks.$mode 2>/tmp/err.$mode || say "$mode: pathregen --blocks: exit $?: $(head -3 /tmp/err.$mode)"
		pathregen --edges /tmp/$mode.bin >/tmp/edges.$mode 2>>/tmp/err.$mode || say "$mode: pathregen --edges: exit $?"
		pathregen --stats /tmp/$mode.bin >/tmp/stats.$mode 2>&1 || say "$mode: pathregen --stats: exit $?"
		uncounted=$(grep -c "not counted" /tmp/blocks.$mode || true)
		[ "$uncounted" = 0 ] || { say "$mode: $uncounted functions not counted:"; grep "not counted" /tmp/blocks.$mode | sed 's/^/#   /'; }
		blocks=$(awk '/^ +[0-9]+  / { s += $1 } END { print s + 0 }' /tmp/blocks.$mode)
		jcc=$(awk '
			/^[^ #].* \(func [0-9]+\):/ { fn = $1 " " $3; next }
			/^ +[0-9]+  / { k = fn SUBSEP $2; out[k] += $1; if ($NF == "(taken)") j[k] = 1 }
			END { for (k in j) s += out[k]; print s + 0 }' /tmp/edges.$mode)
		diff=n/a
		verified=
		recorder_blocks=n/a
		if [ $mode = edges ]; then
			cp /tmp/edges.$mode /tmp/profile.edges || die "$mode: cannot keep the profile"
			[ "$keep" = 0 ] || cp /tmp/profile.edges /pt/out/
		else
			# No probe: what runs per block is the copies' increments,
			# the counters' sum (pathregen --edges: "N increments" in
			# each function's heading).
			hits=$(awk '/ \(func [0-9]+\): .* increments, / {
				match($0, /records, [0-9]+ increments/); s += substr($0, RSTART + 9, RLENGTH - 20) }
				END { print s + 0 }' /tmp/edges.$mode)
		fi
	else
		vflag=
		case $mode in *-verify) vflag=--verify ;; esac
		rc=0
		pathregen --stats $vflag /tmp/$mode.bin >/tmp/stats.$mode 2>&1 || rc=$?
		[ $rc = 0 ] || say "$mode: pathregen --stats $vflag: exit $rc: $(grep '^pathregen' /tmp/stats.$mode | head -3)"
		blocks=$(awk '/^blocks executed/ { print $3 }' /tmp/stats.$mode)
		jcc=$(awk '/^predicates executed/ { gsub(/\(/, "", $4); print $4 }' /tmp/stats.$mode)
		[ -n "$blocks" ] && [ -n "$jcc" ] || { cat /tmp/stats.$mode; die "$mode: pathregen --stats: no figures"; }
		diff=n/a
		verified=
		if [ -n "$vflag" ]; then
			diff=$(verify_diff /tmp/stats.$mode $rc)
			verified=" verified_blocks=$(sed -n 's/^verify: \([0-9]*\) blocks equal.*/\1/p' /tmp/stats.$mode)"
			grep "^verify:\|^pathregen: verify" /tmp/stats.$mode | sed "s/^/# $mode: /"
		fi
		# The recorder drains the buffers while tracing runs and writes
		# trace.bin to tmpfs through traced functions (vfs_write,
		# shmem_*, __alloc_pages, ...): its own stream's blocks, counted
		# from the regenerated execution (one "symbol+0xoff" line per
		# block), are part of blocks.
		recorder_blocks=$(pathregen /tmp/$mode.bin 2>/dev/null | awk -v own="task/$recorder," '
			/^# stream / { on = ($4 == own); next }
			on && /^ *[A-Za-z_.][A-Za-z0-9_.]*\+0x[0-9a-f]+$/ { n++ }
			END { print n + 0 }')
	fi
	bits=$(awk '/^trace bits +[0-9]/ { print $3 }' /tmp/stats.$mode)
	bits=${bits:-0}
	# What the chords of the spanning tree best for this run's counts,
	# each at its cheapest site, take with the plans' ENTER probes
	# (pathregen --hits, chord_bound.h): placement's floor for these probes;
	# for copies, whose sites run only with their edges, the floor of code
	# on edges (--inline-sites).
	sites=
	case $mode in *-inline | *-inline-verify) sites=--inline-sites ;; esac
	hits_bound=$(pathregen --hits $sites /tmp/$mode.bin 2>/dev/null |
		sed -n 's/.* bound_per_block=\([0-9.]*\).*/\1/p')
	[ -n "$hits_bound" ] && hits_bound=$(div "$hits_bound" 1 %.2f) || hits_bound=n/a
	t1=$(now_ms)
	say "$mode: pathregen took $((t1 - t0)) ms"
	sed "s/^/# $mode: /" /tmp/stats.$mode | grep -v "^# $mode: verify:" | head -20
	# profiled: functions planned from the profile (the others kept the
	# heuristic: not in the profile, or their code changed).
	profiled=
	case $mode in *-profiled*) profiled=" profiled=$(grep -c '; profile weights' /tmp/en.$mode || true)" ;; esac
	inl=
	case $mode in *-inline | *-inline-verify) inl=" refused=$refused" ;; esac
	echo "mode=$mode functions=$functions$profiled$inl probes=$probes optimized_pct=$(div $((optimized * 100)) $probes %.0f)" \
		"blocks=$blocks recorder_blocks=$recorder_blocks jcc=$jcc hits_per_block=$(div $hits $blocks %.2f) hits_bound=$hits_bound" \
		"payload_bits_per_jcc=$(div $bits $jcc %.2f) disk_bits_per_jcc=$(div $((trace_bytes * 8)) $jcc %.2f)" \
		"trace_bytes=$trace_bytes dropped=$dropped missed=$missed untraced_ms=$base_ms workload_ms=$ms time_ratio=$(ratio $ms)$cycle_keys" \
		"hits_staged=$hits_staged frames_kept=$frames_kept frames_kept_softirq=$frames_kept_softirq frame_walks=$frame_walks frame_walk_ms=$frame_walk_ms differences=$diff$verified"
	[ $mode != witness ] || champsim_line $mode
	[ $mode != witness ] || bring_back $mode
	if [ $mode = edges ]; then
		# The profile's own cost: records in the ring buffer (no
		# per-event record: COUNTERS at stop) and the counters' memory
		# (nedges + 1 per function and CPU, 8 bytes each).
		set -- $(trace-dump /tmp/$mode.bin | tail -n 1 | tr ' ' '\n' | sed -n 's/^\(records\|enter\|counters\)=//p')
		counters=$(awk '/ \(func [0-9]+\): / { n++ } / -> / { e++ } END { print e + n }' /tmp/edges.$mode)
		echo "mode=edges-profile functions=$functions records=$1 enter_records=$2 counters_records=$3" \
			"counter_bytes=$((counters * 8 * $(nproc))) trace_bytes=$trace_bytes untraced_ms=$base_ms workload_ms=$ms time_ratio=$(ratio $ms)"
	fi
	if [ "$keep" = 1 ]; then mv /tmp/$mode.bin /pt/out/; else rm -f /tmp/$mode.bin; fi
done
# The untraced workload once more, after everything: how much the same
# workload's time varies within this boot (the host may be busy).
if [ $# -gt 1 ]; then
	workload untraced-again "$rounds" /tmp/ms.again
	echo "mode=untraced-again workload_ms=$(cat /tmp/ms.again)"
fi
rmmod pathtrace
