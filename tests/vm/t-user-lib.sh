# VM test: a traced shared-library function called through the PLT
# (docs/user.md, "Shared libraries"). pt-user-dyn (position-independent,
# dynamically linked) calls libptuser.so's ul_checksum through its PLT in
# every round. enable names the library's function and the program's
# dyn_round beside vfs_write; recorded on both CPUs and regenerated with
# --verify: 0 differences, ul_checksum named libptuser.so!ul_checksum and
# nested under dyn_round (1 or 2 calls a round), vfs_write after it.
. /pt/lib/user.sh
D=/pt/bin/pt-user-dyn
L=/pt/bin/libptuser.so

$D 30 > $O/plain.txt
check "the dynamically linked program runs" test $? -eq 0

pathtracectl enable --verify $L:ul_checksum $D:dyn_round vfs_write > $O/enable.txt 2>&1
check "enable exits 0" test $? -eq 0
cat $O/enable.txt
expect_out "the library function is named LIB!FUNC" "libptuser.so!ul_checksum: enabled as" \
	cat $O/enable.txt
expect_out "the program's function (a PIE)" "pt-user-dyn!dyn_round: enabled as" cat $O/enable.txt

user_run_both $D 30

sed -n '1,40p' $O/text.txt
check "library blocks as libptuser.so!ul_checksum+0xOFF" grep -q "libptuser.so!ul_checksum+0x" $O/text.txt
# rounds r with r % 3 == 0 call ul_checksum twice: 30 rounds, 40 calls a process
awk '
	/\(\) \{$/ { name = $(NF - 1); sub(/\(\)$/, "", name); stack[++d] = name
		if (name == "pt-user-dyn!dyn_round") rounds++
		if (name == "libptuser.so!ul_checksum" && d > 1 && stack[d - 1] == "pt-user-dyn!dyn_round") lib++
		if (name == "vfs_write" && d > 1 && stack[d - 1] == "pt-user-dyn!dyn_round") w++
		next }
	/^ *\} \/\* / { d-- }
	/^!! gap/ { d = 0 }
	END { print rounds + 0, lib + 0, w + 0 }
' $O/text.txt > $O/nest.txt
cat $O/nest.txt
read rounds lib writes < $O/nest.txt
check "dyn_round activations: 60 ($rounds)" test "$rounds" -eq 60
check "ul_checksum nested under dyn_round through the PLT: 80 ($lib)" test "$lib" -eq 80
check "vfs_write nested under dyn_round: 60 ($writes)" test "$writes" -eq 60
check "disable --all" pathtracectl disable --all
check "the program runs after the uprobes are gone" sh -c "$D 30 | cmp $O/plain.txt -"
finish
