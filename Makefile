# pathtrace: one `make` builds the module and the userspace; `make check` tests.
#
#   make                 module + pathtracectl + pathregen
#   make KDIR=/path      build the module against that kernel tree (in-tree)
#   make KDIRS_MORE=...  also build it for these trees, in $(O)/kmod/RELEASE/
#                        (default: the installed 6.12 headers; docs/kernels.md)
#   make check-unit      CUnit unit and property tests (host)
#   make check-vm        VM end-to-end tests (QEMU): all on Debian's 6.1, the
#                        ones marked "# vm-kernels: all" on 6.12 too
#   make checkpatch      the kernel's checkpatch.pl over kmod/ and tests/target/
#   make check-fuzz      libFuzzer over the trace.bin reader and regenerator (FUZZ_TIME s)
#   make check           all of them
#   make O=dir           userspace objects in dir (default build/; the module
#                        always builds in-tree, so kbuild gets O= cleared)

O ?= build
CC ?= cc
# The kernel tree kmod/pathtrace.ko and tests/target/ build against (in-tree):
# KDIR if given, else the running kernel's, else the newest Debian 6.1
# headers (the kernel tools/vm-run boots by default; tools/kernels).
KDIR ?= $(shell d=/lib/modules/$$(uname -r)/build; \
	if [ -d $$d ]; then echo $$d; else tools/kernels headers default; fi)
# More kernel trees to build the module for, each in a copy of the module
# sources under $(O)/kmod/RELEASE/ (kbuild builds in the source tree, so the
# in-tree build stays KDIR's): by default every other series of
# tools/kernels that is installed (Debian 12's 6.12). tools/vm-run packs the
# build whose vermagic is the release it boots (docs/kernels.md).
KDIRS_MORE ?= $(filter-out $(realpath $(KDIR)),$(foreach s,$(shell tools/kernels series),\
	$(realpath $(shell tools/kernels headers $(s) 2>/dev/null))))

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	-Iuserspace/include -Itrace-format -Iregen -Itests/oracle -MMD -MP
LDLIBS_LIB := -lZydis -lZycore -lelf -ltraceevent -lm

# The library by layer (docs/architecture.md): base, source (kernel code),
# cfg, placement (the papers' algorithms), plan, tracefile.
LIB_SRC := $(sort $(wildcard userspace/lib/*/*.c))
REGEN_LIB_SRC := $(filter-out regen/pathregen.c,$(sort $(wildcard regen/*.c)))
# The test and benchmark oracle (the simulator, tests/oracle/sim.h): not in what users link.
ORACLE_SRC := $(sort $(wildcard tests/oracle/*.c))
CTL_SRC := $(sort $(wildcard userspace/pathtracectl/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_SUPPORT := $(filter-out $(UNIT_SRC),$(sort $(wildcard tests/unit/*.c)))

LIB := $(O)/libpathtrace.a
REGEN_LIB := $(O)/libregen.a
ORACLE_LIB := $(O)/liboracle.a
obj = $(patsubst %.c,$(O)/%.o,$(1))

PROGS := $(O)/pathtracectl $(O)/pathregen
TOOLS := $(patsubst tools/%.c,$(O)/tools/%,$(sort $(wildcard tools/*.c)))
# Small programs the VM tests run inside the guest.
VM_HELPERS := $(patsubst tests/vm/bin/%.c,$(O)/tests/vm/bin/%,$(sort $(wildcard tests/vm/bin/*.c)))

.PHONY: all userspace module clean check check-unit check-vm checkpatch check-fuzz

all: userspace module

userspace: $(PROGS) $(TOOLS) $(VM_HELPERS)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIB): $(call obj,$(LIB_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(REGEN_LIB): $(call obj,$(REGEN_LIB_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(ORACLE_LIB): $(call obj,$(ORACLE_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(O)/pathtracectl: $(call obj,$(CTL_SRC)) $(REGEN_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(CTL_SRC)) $(REGEN_LIB) $(LIB) $(LDLIBS_LIB)

$(O)/pathregen: $(call obj,regen/pathregen.c) $(REGEN_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_LIB)

$(O)/tools/%: $(O)/tools/%.o $(ORACLE_LIB) $(REGEN_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_LIB)

# Intel PT side by side: libipt's encoder and block decoder (libipt-dev).
$(O)/tools/bench-pt: $(O)/tools/bench-pt.o $(O)/tools/ipt/ipt.o $(REGEN_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_LIB) -lipt

$(O)/tests/vm/bin/%: $(O)/tests/vm/bin/%.o $(REGEN_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_LIB)

# The unit-test runner registers every tests/unit/test_NAME.c through its
# register_test_NAME(); the list is generated so adding a file is enough.
$(O)/tests/unit/suites.c: $(UNIT_SRC) Makefile
	@mkdir -p $(dir $@)
	@{ for f in $(notdir $(basename $(UNIT_SRC))); do echo "void register_$$f(void);"; done; \
	  echo "void unit_register_all(void);"; \
	  echo "void unit_register_all(void) {"; \
	  for f in $(notdir $(basename $(UNIT_SRC))); do echo "	register_$$f();"; done; \
	  echo "}"; } > $@.tmp && mv $@.tmp $@

$(O)/unit-tests: $(call obj,$(UNIT_SRC) $(UNIT_SUPPORT)) $(O)/tests/unit/suites.o $(ORACLE_LIB) \
		$(REGEN_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_LIB) -lcunit

$(O)/tests/unit/suites.o: $(O)/tests/unit/suites.c
	$(CC) $(CFLAGS) -c -o $@ $<

# The module sources a copy under $(O)/kmod/RELEASE/ is made of: every
# Kbuild and C/assembler source below the directories kbuild reads.
KMOD_SRC = Kbuild $(shell find kmod tests/target trace-format \( -name Kbuild -o -name '*.[chS]' \) \
	! -name '*.mod.c' 2>/dev/null)

module:
	@test -n "$(KDIR)" || { echo "make: no kernel tree: install linux-headers-amd64 or pass KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) O= modules
	@set -e; for k in $(KDIRS_MORE); do \
		r=$$(tools/kernels release $$k); d=$(abspath $(O))/kmod/$$r; \
		mkdir -p $$d && tar -cf - $(KMOD_SRC) | tar -C $$d -xf -; \
		echo "make: module for $$r in $$d"; \
		$(MAKE) -C $$k M=$$d O= modules; \
	done

# The tests that read Debian's modules read the default kernel's (6.1: its
# .ko are not compressed; 6.12's are .ko.xz).
check-unit: $(O)/unit-tests
	PT_UNIT_KERNEL=$$(tools/kernels release "$$(tools/kernels image default)") $(O)/unit-tests

# The whole VM suite on the default kernel (Debian's 6.1), then the tests
# marked "# vm-kernels: all" on every other series (6.12): docs/kernels.md.
check-vm: all
	tests/vm/run-all
	@set -e; for s in $$(tools/kernels series | tail -n +2); do \
		k=$$(tools/kernels image $$s) || { echo "make: no $$s kernel image: run tools/install-deps" >&2; exit 1; }; \
		echo "tests/vm/run-all -e -k $$k"; tests/vm/run-all -e -k $$k; \
	done

checkpatch:
	O=$(O) tools/checkpatch

# libFuzzer over the trace.bin reader, stream assembly and the engine (ASan +
# UBSan), for FUZZ_TIME seconds from the fixtures and tests/fuzz/seeds
# (tests/fuzz/fuzz_tracefile.c).
FUZZ_CC ?= clang-14
FUZZ_TIME ?= 60
FUZZ_SRC := $(LIB_SRC) $(REGEN_LIB_SRC) tests/fuzz/fuzz_tracefile.c

$(O)/fuzz/fuzz_tracefile: $(FUZZ_SRC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -Iuserspace/include -Itrace-format -Iregen \
		-o $@ $(FUZZ_SRC) $(LDLIBS_LIB)

check-fuzz: $(O)/fuzz/fuzz_tracefile
	@mkdir -p $(O)/fuzz/corpus
	cp tests/fixtures/*.bin tests/fuzz/seeds/*.bin $(O)/fuzz/corpus/
	$(O)/fuzz/fuzz_tracefile -max_total_time=$(FUZZ_TIME) -max_len=32768 -timeout=10 \
		-artifact_prefix=$(O)/fuzz/ \
		-print_final_stats=1 $(O)/fuzz/corpus

check: check-unit checkpatch check-fuzz check-vm

clean:
	rm -rf $(O)
	@if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) O= clean; fi

-include $(shell find $(O) -name '*.d' 2>/dev/null)
