# profile-enable guest half (tools/profile-enable): enables GLOBS under
# ftrace's function_graph restricted to kprobes' registration and arming
# (depth 2: their direct callees) and leaves the per-CPU traces in out/.
set -u
insmod pathtrace.ko || { echo "profile-enable: guest: insmod failed"; exit 1; }
T=/sys/kernel/debug/tracing
echo 65536 > $T/buffer_size_kb
echo 2 > $T/max_graph_depth
echo register_kprobe > $T/set_graph_function
echo enable_kprobe >> $T/set_graph_function
echo function_graph > $T/current_tracer
echo 1 > $T/options/funcgraph-tail
start=$(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime)
pathtracectl enable --probes "$@" > /tmp/en.out 2>&1
end=$(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime)
echo 0 > $T/tracing_on
sed -n 's/^enable: \([0-9]*\) enabled.*/functions=\1/p; s/^enable: \([0-9]*\) probes placed.*/probes=\1/p' /tmp/en.out
echo "enable_ms=$((end - start))"
cat $T/per_cpu/cpu*/stats | grep -i overrun
for c in /sys/devices/system/cpu/cpu[0-9]*; do
	n=${c##*cpu}
	cat $T/per_cpu/cpu$n/trace > out/trace$n
done
pathtracectl disable --all > /dev/null 2>&1
