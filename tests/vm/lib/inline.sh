# The setup the inline VM tests share: pathtrace.ko and the test module
# loaded, enable able to read the test module's tables, the template module
# named, and TARGET: the test module's functions the tests copy.
insmod /pt/pathtrace.ko
insmod /pt/pathtrace_target.ko
echo "pathtrace_target.ko:" > /pt/modules.dep	# lets enable read the module's tables
R=/sys/kernel/debug/pathtrace_target/run
export PATHTRACE_STATE=/tmp/ptstate PATHTRACE_INLINE_MODULE=/pt/pathtrace_inline.ko
TARGET="pt_target_nested pt_target_switch pt_target_outer pt_target_inner pt_target_multi_exit"
