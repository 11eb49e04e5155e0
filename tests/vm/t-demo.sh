# VM test: the README demo (tools/demo.sh) runs end to end, every function
# it enables executes under its workload (status shows hits for each), and
# its regeneration equals the every-block records of the same run.
# vm-kernels: all
. /pt/lib/check.sh

sh /pt/demo.sh >/tmp/demo.out 2>&1
rc=$?
tail -25 /tmp/demo.out
check "the demo ran to the end" test $rc = 0
check "no enabled function without hits" sh -c '! grep -q "never ran" /tmp/demo.out'
check "regeneration equals the verify records" grep -q "^verify: .* 0 differences$" /tmp/demo.out
finish
