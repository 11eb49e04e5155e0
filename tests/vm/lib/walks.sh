# Path walks on both CPUs: walks_start starts a loop of ls/cat on CPU 0 and
# one on CPU 1; walks_stop ends them (and waits for them). The loops run at
# nice 19: they take what the test's own commands leave of a CPU, where at
# nice 0 they took half of it (tests/vm/t-inline-stress.sh's cycles of enable
# and disable ran nearly twice as long).
walks_start() {
	rm -f /tmp/stop-walks
	for cpu in 0 1; do
		taskset -c $cpu sh -c '
			renice -n 19 -p $$ >/dev/null
			while [ ! -e /tmp/stop-walks ]; do
				ls -l /pt /proc/self /sys/kernel >/dev/null 2>&1
				cat /proc/version /pt/lib/check.sh >/dev/null
			done' &
	done
}

walks_stop() {
	touch /tmp/stop-walks
	wait
}
