# The setup the inline VM tests share: pathtrace.ko and the test module
# loaded, enable able to read the test module's tables, the template module
# named, and TARGET: the test module's functions the tests copy.
insmod /pt/pathtrace.ko
insmod /pt/pathtrace_target.ko
echo "pathtrace_target.ko:" > /pt/modules.dep	# lets enable read the module's tables
R=/sys/kernel/debug/pathtrace_target/run
export PATHTRACE_STATE=/tmp/ptstate PATHTRACE_INLINE_MODULE=/pt/pathtrace_inline.ko
TARGET="pt_target_nested pt_target_switch pt_target_outer pt_target_inner pt_target_multi_exit"

# write_workload: /tmp/workload.sh ROUNDS runs the test module's functions,
# vfs_read, ksys_read and pipe_read on both CPUs (t-inline.sh, t-inline-calls.sh).
write_workload() {
	cat >/tmp/workload.sh <<W
for c in 1 2; do
	taskset \$c sh -c 'i=0; while [ \$i -lt \$1 ]; do echo "nested 3" > $R; echo "switch \$i" > $R;
		echo "outer 2" > $R; echo "multi_exit \$i" > $R; cat /proc/version >/dev/null;
		echo x | cat >/dev/null; usleep 1000; i=\$((i + 1)); done' sh \$1 &
done
wait
W
}
