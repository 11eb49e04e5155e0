# VM test: the module loads, answers GET_VERSION, rejects unknown ioctls and
# unprivileged opens, answers a command whose struct is of another tool's
# size (the number carries it), is pinned by an open descriptor, and unloads
# cleanly.
# vm-kernels: all
. /pt/lib/check.sh

check "insmod" insmod /pt/pathtrace.ko
check "device is 0600" sh -c '[ "$(stat -c %a /dev/pathtrace)" = 600 ]'
check "pathtracectl version" pathtracectl version
expect_out "version output" "pathtrace.ko ABI 2." pathtracectl version
expect_out "unknown ioctl is ENOTTY" "ENOTTY" pt-ioctl bad
expect_out "open as nobody refused by the mode" "EACCES" pt-ioctl --as-nobody open
expect_out "open without CAP_SYS_ADMIN/CAP_PERFMON refused" "EPERM" pt-ioctl --drop-caps open
expect_out "open as root allowed" "ok" pt-ioctl open
expect_out "STATS of an older tool (72 bytes, ABI 2.10) answered within its size" "ok" pt-ioctl stats 72
expect_out "STATS of a newer tool (96 bytes, its tail zero) answered" "ok" pt-ioctl stats 96
expect_fail "extra argument refused" pathtracectl version extra

pt-ioctl hold 3 >/tmp/hold.out &
holder=$!
sleep 1
expect_fail "rmmod refused while the device is open" rmmod pathtrace
wait $holder
check "rmmod once closed" rmmod pathtrace
expect_fail "device gone after unload" test -e /dev/pathtrace
expect_out "tool reports a missing module" "is pathtrace.ko loaded" sh -c 'pathtracectl version 2>&1'
finish
