# The README demo, run inside the VM by tools/vm-run: load pathtrace.ko and
# show what it can do so far.
set -e
insmod /pt/pathtrace.ko
pathtracectl version
rmmod pathtrace
