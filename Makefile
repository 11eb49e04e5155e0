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
#   make install         tools, man pages, bash completion (PREFIX, DESTDIR) and the modules
#   make check-build     CFLAGS=..., a second make doing nothing, make install
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

# CFLAGS is the user's (make CFLAGS='-O1 -g' replaces it); the language,
# warnings and include paths are in variables the command line leaves alone.
CFLAGS ?= -O2 -g
PT_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -MMD -MP
# Include paths by layer: the library and pathtracectl see only the public
# headers and the ABI; regen adds its own; the oracle, the unit tests and the
# tools add regen and the oracle (tests/oracle).
INC_LIB := -Iuserspace/include -Itrace-format
INC_REGEN := $(INC_LIB) -Iregen
INC_ORACLE := $(INC_REGEN) -Itests/oracle
INCLUDES = $(INC_LIB)
$(O)/regen/%.o: INCLUDES = $(INC_REGEN)
$(O)/tests/%.o $(O)/tools/%.o: INCLUDES = $(INC_ORACLE)
LDLIBS_LIB := -lZydis -lZycore -lelf -ltraceevent -lxxhash -llzma -lzstd -lz -lm

# The library by layer (docs/architecture.md): base, source (kernel code),
# cfg, placement (the papers' algorithms), plan, tracefile.
# The stream coder, its decoder and the subpath sampler (trace-format/coder/):
# freestanding C the module builds too (kmod/Kbuild).
LIB_SRC := $(sort $(wildcard userspace/lib/*/*.c)) $(sort $(wildcard trace-format/coder/*.c))
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
# The user program the user-space tests trace (docs/user.md): static, with
# symbols, no jump tables, its recursion and calls kept as calls.
USER_TARGET := $(O)/tests/target/pt-user-target
# A shared library and a dynamically linked program that calls it through the
# PLT (docs/user.md, "Shared libraries"): the program finds it beside itself.
USER_LIB := $(O)/tests/target/libptuser.so
USER_DYN := $(O)/tests/target/pt-user-dyn
# The loops bench-vm's mode=probe-cost times (docs/benchmarks.md, "What a
# probe hit costs"): built as the user program is.
PROBE_LOOP := $(O)/tests/target/pt-probe-loop
USER_PROG_FLAGS := -std=gnu11 -Wall -Wextra -Werror -O1 -g -static -fno-jump-tables -fno-inline \
	-fno-optimize-sibling-calls -fno-pie -no-pie

.PHONY: all userspace module clean check check-unit check-vm checkpatch check-fuzz check-readme install \
	check-build

# Objects of programs built from one file (tools/, tests/vm/bin/) are kept:
# make would otherwise delete them as intermediates and a second make rebuild them.
.SECONDARY:
.DELETE_ON_ERROR:

all: userspace module

userspace: $(PROGS) $(TOOLS) $(VM_HELPERS) $(USER_TARGET) $(USER_LIB) $(USER_DYN) $(PROBE_LOOP)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PT_CFLAGS) $(INCLUDES) $(CFLAGS) -c -o $@ $<

$(LIB): $(call obj,$(LIB_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(REGEN_LIB): $(call obj,$(REGEN_LIB_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(ORACLE_LIB): $(call obj,$(ORACLE_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(O)/pathtracectl: $(call obj,$(CTL_SRC)) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_LIB)

$(O)/pathregen: $(call obj,regen/pathregen.c) $(REGEN_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_LIB)

$(O)/tools/%: $(O)/tools/%.o $(ORACLE_LIB) $(REGEN_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_LIB)

# Intel PT side by side: libipt's encoder and block decoder (libipt-dev).
$(O)/tools/bench-pt: $(O)/tools/bench-pt.o $(O)/tools/ipt/ipt.o $(REGEN_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_LIB) -lipt

$(O)/tests/vm/bin/%: $(O)/tests/vm/bin/%.o $(REGEN_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_LIB)

$(USER_TARGET): tests/target/pt_user_target.c
	@mkdir -p $(dir $@)
	$(CC) $(USER_PROG_FLAGS) -o $@ $<

$(PROBE_LOOP): tests/target/pt_probe_loop.c
	@mkdir -p $(dir $@)
	$(CC) $(USER_PROG_FLAGS) -o $@ $<

$(USER_LIB): tests/target/pt_user_lib.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O1 -g -fPIC -shared -fno-jump-tables -fno-inline \
		-fno-optimize-sibling-calls -o $@ $<

$(USER_DYN): tests/target/pt_user_dyn.c $(USER_LIB)
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O1 -g -fno-jump-tables -fno-inline \
		-fno-optimize-sibling-calls -o $@ $< -L$(dir $@) -lptuser -Wl,-rpath,'$$ORIGIN'

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
	$(CC) $(PT_CFLAGS) $(CFLAGS) -c -o $@ $<

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

# The tests that read Debian's modules read the default kernel's (6.1).
check-unit: $(O)/unit-tests $(PROGS)
	PT_UNIT_KERNEL=$$(tools/kernels release "$$(tools/kernels image default)") $(O)/unit-tests

# The whole VM suite on the default kernel (Debian's 6.1) and the tests
# marked "# vm-kernels: all" on every other series (6.12): docs/kernels.md.
# Two VMs at a time (each is one single-threaded TCG: two fit the two
# cores), the longest tests first.
VM_JOBS ?= 2
check-vm: all
	@set -e; others=; for s in $$(tools/kernels series | tail -n +2); do \
		k=$$(tools/kernels image $$s) || { echo "make: no $$s kernel image: run tools/install-deps" >&2; exit 1; }; \
		others="$$others -m $$k"; \
	done; \
	echo "tests/vm/run-all -j $(VM_JOBS)$$others"; \
	tests/vm/run-all -j $(VM_JOBS) $$others

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

# Build hygiene: CFLAGS on the command line, a second make, make install (tools/check-build).
check-build: module
	tools/check-build $(KDIR)

# README's scoreboard is what docs/scoreboard.txt (bench-vm's output) makes (tools/scoreboard).
check-readme:
	tools/scoreboard check

check: check-unit checkpatch check-readme check-build check-fuzz check-vm

# make install [PREFIX=/usr/local] [DESTDIR=] [KRELEASE=]: the tools, their man
# pages and bash completion under PREFIX, the module and the inline copies'
# template (enable's default, docs/inline.md) under /lib/modules/KRELEASE/extra
# (KRELEASE: the release KDIR was built for).
PREFIX ?= /usr/local
KRELEASE ?= $(or $(patsubst /lib/modules/%/build,%,$(filter /lib/modules/%/build,$(KDIR))),\
	$(patsubst linux-headers-%,%,$(filter linux-headers-%,$(notdir $(KDIR)))),\
	$(shell cat "$(KDIR)/include/config/kernel.release" 2>/dev/null))

install: all
	@test -n "$(KRELEASE)" || { echo "make: install: no KRELEASE (pass KDIR= or KRELEASE=)" >&2; exit 1; }
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)/lib/modules/$(KRELEASE)/extra
	install -m 755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/pathregen.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/pathtracectl.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 644 completion/pathtrace.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/pathtracectl
	install -m 644 completion/pathtrace.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/pathregen
	install -m 644 kmod/pathtrace.ko kmod/inline/pathtrace_inline.ko \
		$(DESTDIR)/lib/modules/$(KRELEASE)/extra/
	@if [ -z "$(DESTDIR)" ] && command -v depmod >/dev/null; then depmod -a $(KRELEASE); fi

clean:
	rm -rf $(O)
	@if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) O= clean; fi

-include $(shell find $(O) -name '*.d' 2>/dev/null)
