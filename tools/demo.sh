# The README demo, run inside the VM by tools/vm-run: trace real kernel
# functions under a small workload, regenerate every execution from the
# compact trace, and check it against the every-block records of the same run.
set -e
insmod /pt/pathtrace.ko
pathtracectl version
echo "== enable (plans from the live code; --verify adds a probe per block)"
pathtracectl enable --verify vfs_read ksys_read vfs_write ksys_write do_sys_openat2 vfs_statx
pathtracectl list
echo "== record a workload on both CPUs"
# Every enabled function runs: dd reads and writes with read(2)/write(2)
# (busybox cat uses sendfile, which calls neither), stat stats a file.
pathtracectl record -o /tmp/trace.bin -- sh -c '
	for cpu in 0 1; do
		taskset -c $cpu sh -c "for i in 1 2 3 4 5; do cat /proc/version >/dev/null; echo x > /tmp/x.\$i; ls /pt >/dev/null; dd if=/proc/version of=/tmp/d.\$i bs=64 2>/dev/null; stat /tmp/x.\$i >/dev/null; done" &
	done
	wait'
pathtracectl status
# status: a heading line, the column names, then one row per function (hits: column 5)
pathtracectl status | awk 'NR > 2 && $5 == 0 { print "demo: " $2 " never ran"; bad = 1 } END { exit bad }'
echo "== pathregen --stats"
pathregen --stats /tmp/trace.bin
echo "== pathregen (first activations, nested like function_graph)"
pathregen /tmp/trace.bin | head -40
echo "== pathregen --paths (hottest Ball-Larus paths)"
pathregen --paths --top 5 /tmp/trace.bin | head -30
echo "== pathregen --verify"
pathregen --verify /tmp/trace.bin
pathtracectl disable --all
rmmod pathtrace
