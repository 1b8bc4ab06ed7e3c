# Quire — build, run, debug and test.
#
#   make              the kernel ELF (build/quire.elf), with symbols
#   make iso          build/quire.iso: GRUB, boots on BIOS and UEFI, with the initrd
#   make initrd       build/initrd.cpio: the programs of user/ (and EXTRA_INITRD=<dir>)
#   make run          boot in QEMU (FIRMWARE=bios|uefi|direct, TOPOLOGY=numa3,
#                     CMDLINE="...", QEMU_EXTRA="..."); a guest status N != 0 reads
#                     "Error N" and make exits 2: scripts/run exits with N itself
#   make run USERLAND=debian  the same, booting to Debian's busybox shell with
#                     numactl's programs (build/initrd-debian.cpio; docs/userspace.md)
#   make gdb          boot paused and attach gdb with the kernel's symbols (GDB_ARGS="...")
#   make test         every test; ends with "N passed, N failed"
#   make test-host    only the host unit tests (ASan + UBSan; the threaded ones also
#                     under TSan), no QEMU
#   make bench        benchmarks on the host and in QEMU: build/bench/results.csv
#                     (BENCH_ARGS="--only qemu-icount --bench rmap", BENCH_CMDLINE="...")
#   make fuzz         the random mm sequence for millions of steps (FUZZ_SEEDS, FUZZ_STEPS)
#   make fuzz-mm-stress  the threaded ring-3 mm stress in QEMU for a million operations
#                     (STRESS_SEEDS, STRESS_OPS, STRESS_TOPOLOGY, STRESS_PROG)
#   make check-docs   every relative link in the Markdown files leads somewhere (KTAP)
#   make linux-selftests  Linux 6.12's mm selftests on Quire and on Linux, side by
#                     side: build/linux-selftests/compare.md (LSELFTESTS_TIMEOUT=S
#                     per test, LSELFTESTS="cow mremap_test" for some)
#   make difftest     the differential programs of tests/diff on Quire, each one's
#                     output against Linux 6.12's recorded in tests/diff/expected
#   make difftest-record  boot Linux 6.12 and record those outputs again (says which
#                     changed; DIFFTEST="futex mremap" for some)
#
# Toolchain: the host gcc and binutils by default; CROSS_COMPILE=x86_64-elf-
# for a cross toolchain; CC=clang LD=ld.lld for LLVM. WERROR=0 turns off
# -Werror. DEBUG_MM=0 drops the mm debug checks, DEBUG_LOCKS=0 the lock checks. OPT=-Og builds for easier debugging (default -O2; use a separate
# BUILD= directory). V=1 shows the commands.

BUILD ?= build
CROSS_COMPILE ?=
WERROR ?= 1

ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
ifeq ($(origin LD),default)
LD := $(CROSS_COMPILE)ld
endif
NM ?= $(CROSS_COMPILE)nm
OBJCOPY ?= $(CROSS_COMPILE)objcopy
HOSTCC ?= gcc

CC_IS_CLANG := $(shell $(CC) --version 2>/dev/null | grep -q clang && echo y)

ifeq ($(V),1)
Q :=
else
Q := @
endif

# ---- kernel flags ----
ARCH_INCLUDE := -Iinclude -Iarch/x86_64/include
OPT ?= -O2
KERNEL_CFLAGS := -std=gnu11 $(OPT) -g -ffreestanding -fno-stack-protector \
	-fno-pic -fno-pie -mno-red-zone -mcmodel=kernel \
	-mno-sse -mno-sse2 -mno-mmx -mno-avx -mno-3dnow \
	-fno-omit-frame-pointer -fno-asynchronous-unwind-tables \
	-fno-strict-aliasing -fno-common \
	-Wall -Wextra -Wno-unused-parameter -Wmissing-prototypes -Wstrict-prototypes \
	-MMD -MP $(ARCH_INCLUDE)
ifeq ($(CC_IS_CLANG),y)
KERNEL_CFLAGS += --target=x86_64-unknown-none-elf
else
# Without this gcc may turn memcpy's own loop into a call to memcpy.
KERNEL_CFLAGS += -fno-tree-loop-distribute-patterns
endif
ifeq ($(WERROR),1)
KERNEL_CFLAGS += -Werror
endif
# Debug checks in mm (page poisoning, slab red zones): on unless DEBUG_MM=0.
DEBUG_MM ?= 1
ifeq ($(DEBUG_MM),1)
KERNEL_CFLAGS += -DDEBUG_MM
endif
# Lock debugging (owner tracking, recursion, bad unlock, held too long,
# might_sleep; docs/locking.md): on unless DEBUG_LOCKS=0.
DEBUG_LOCKS ?= 1
ifeq ($(DEBUG_LOCKS),1)
KERNEL_CFLAGS += -DDEBUG_LOCKS
endif
KERNEL_ASFLAGS := -g -D__ASSEMBLER__ -MMD -MP $(ARCH_INCLUDE)
ifeq ($(CC_IS_CLANG),y)
KERNEL_ASFLAGS += --target=x86_64-unknown-none-elf
endif
KERNEL_LDFLAGS := -nostdlib -static -z noexecstack -z max-page-size=0x1000 -T linker.ld

# ---- kernel sources: every .c and .S under these directories ----
KERNEL_DIRS := arch/x86_64/boot arch/x86_64/kernel arch/x86_64/lib arch/x86_64/mm \
	kernel kernel/locking lib mm fs drivers drivers/acpi tests/kernel
KERNEL_SRCS := $(sort $(foreach d,$(KERNEL_DIRS),$(wildcard $(d)/*.c $(d)/*.S)))
KERNEL_OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(KERNEL_SRCS))

KERNEL := $(BUILD)/quire.elf
ISO := $(BUILD)/quire.iso

.PHONY: all kernel iso run gdb test test-host host-tests deps clean bench
all: kernel
kernel: $(KERNEL)

# Rebuild everything when the compiler or its flags change (make cannot see that).
$(BUILD)/kernel.flags: FORCE
	@mkdir -p $(BUILD)
	@echo '$(CC) $(KERNEL_CFLAGS) $(KERNEL_ASFLAGS)' | cmp -s - $@ || \
		echo '$(CC) $(KERNEL_CFLAGS) $(KERNEL_ASFLAGS)' > $@
$(KERNEL_OBJS): $(BUILD)/kernel.flags
.PHONY: FORCE

$(BUILD)/obj/%.c.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(KERNEL_CFLAGS) -c $< -o $@

$(BUILD)/obj/%.S.o: %.S
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AS      $<")
	$(Q)$(CC) $(KERNEL_ASFLAGS) -c $< -o $@

# Two link passes: the first without symbols, then the symbol table of the
# first image is linked into the second. linker.ld puts .ksyms after .text,
# so text addresses cannot move between the passes; the check below makes
# sure of it.
$(BUILD)/ksyms.empty.S: scripts/gen-ksyms.sh
	@mkdir -p $(dir $@)
	$(Q)scripts/gen-ksyms.sh $(NM) - > $@

# Ring-3 test programs without libc (tests/user/), built with the kernel's
# compiler and linked into the kernel image, so the user-mode path is tested
# with nothing beyond that compiler. (musl programs live in user/.)
USER_TESTS := usertest
USER_TEST_CFLAGS := -O2 -g -ffreestanding -fno-stack-protector -fno-pie -fno-builtin \
	-Wall -Wextra -Werror -static -nostdlib -no-pie -Wl,-z,noexecstack
ifeq ($(CC_IS_CLANG),y)
USER_TEST_CFLAGS += -Wno-unused-command-line-argument
endif
$(BUILD)/user-tests/%.elf: tests/user/%.c tests/user/start.S tests/user/ulib.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  USER    $@")
	$(Q)$(CC) $(USER_TEST_CFLAGS) -o $@ tests/user/start.S $<

$(BUILD)/user_blobs.S: Makefile
	@mkdir -p $(dir $@)
	$(Q){ echo '	.section .rodata.user_blobs, "a"'; \
	  for t in $(USER_TESTS); do \
	    echo "	.globl user_blob_$$t, user_blob_$${t}_end"; \
	    echo "	.balign 16"; \
	    echo "user_blob_$$t: .incbin \"$(BUILD)/user-tests/$$t.elf\""; \
	    echo "user_blob_$${t}_end:"; \
	  done; } > $@

$(BUILD)/user_blobs.S.o: $(BUILD)/user_blobs.S $(USER_TESTS:%=$(BUILD)/user-tests/%.elf)
	$(Q)$(CC) $(KERNEL_ASFLAGS) -c $< -o $@

KERNEL_OBJS += $(BUILD)/user_blobs.S.o

$(BUILD)/quire.pass1.elf: $(KERNEL_OBJS) $(BUILD)/ksyms.empty.S.o linker.ld
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LD) $(KERNEL_LDFLAGS) -o $@ $(KERNEL_OBJS) $(BUILD)/ksyms.empty.S.o

$(BUILD)/ksyms.S: $(BUILD)/quire.pass1.elf scripts/gen-ksyms.sh
	$(Q)scripts/gen-ksyms.sh $(NM) $< > $@

$(BUILD)/%.S.o: $(BUILD)/%.S
	$(Q)$(CC) $(KERNEL_ASFLAGS) -c $< -o $@

$(KERNEL): $(KERNEL_OBJS) $(BUILD)/ksyms.S.o linker.ld
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LD) $(KERNEL_LDFLAGS) -o $@ $(KERNEL_OBJS) $(BUILD)/ksyms.S.o
	$(Q)$(NM) -n $(BUILD)/quire.pass1.elf | grep -i ' t ' > $(BUILD)/text.pass1
	$(Q)$(NM) -n $@ | grep -i ' t ' > $(BUILD)/text.pass2
	$(Q)cmp -s $(BUILD)/text.pass1 $(BUILD)/text.pass2 || \
		{ echo "error: text symbols moved between link passes (see linker.ld)"; rm -f $@; exit 1; }

# ---- user programs and the initrd (docs/userspace.md) ----
# user/bin/*.c and user/tests/*.c, static musl binaries, under $(BUILD)/user;
# the initrd packs them with EXTRA_INITRD=<dir> (optional) on top.
EXTRA_INITRD ?=
INITRD_IMG := $(BUILD)/initrd.cpio

.PHONY: user initrd
user:
	@scripts/deps.sh --for user
	$(Q)$(MAKE) --no-print-directory -C user O=$(abspath $(BUILD))/user

initrd: $(INITRD_IMG)
	@:
# Always repacked (EXTRA_INITRD's files are not tracked); mkinitrd.sh only
# rewrites the archive when its content changed.
$(INITRD_IMG): user scripts/mkinitrd.sh FORCE
	@$(if $(Q),echo "  INITRD  $@")
	$(Q)scripts/mkinitrd.sh $@ $(BUILD)/user $(EXTRA_INITRD)

# USERLAND=debian: Debian's busybox-static and numactl (downloaded by
# scripts/deps.sh --for debian) over Quire's programs, in an initrd of its
# own; make run boots it, Quire's /bin/init starting busybox's /bin/sh.
# USERLAND=quire (the default): user/ only.
USERLAND ?= quire
DEBIAN_INITRD := $(BUILD)/initrd-debian.cpio
ifeq ($(filter quire debian,$(USERLAND)),)
$(error USERLAND=$(USERLAND): quire or debian)
endif

.PHONY: initrd-debian
initrd-debian: $(DEBIAN_INITRD)
	@:
$(BUILD)/debian/root/bin/busybox: scripts/debian-userland.sh
	@DEB_CACHE=$(BUILD)/debian/debs scripts/deps.sh --for debian
	$(Q)DEB_CACHE=$(BUILD)/debian/debs scripts/debian-userland.sh $(BUILD)/debian
$(DEBIAN_INITRD): user $(BUILD)/debian/root/bin/busybox scripts/mkinitrd.sh FORCE
	@$(if $(Q),echo "  INITRD  $@")
	$(Q)scripts/mkinitrd.sh $@ $(BUILD)/user $(BUILD)/debian/root $(EXTRA_INITRD)

# ---- ISO ----
iso: $(ISO)
$(ISO): $(KERNEL) $(INITRD_IMG) scripts/mkiso.sh
	@scripts/deps.sh --for iso
	@$(if $(Q),echo "  ISO     $@")
	$(Q)scripts/mkiso.sh $@ $(KERNEL) "" $(INITRD_IMG)

# ---- run and debug ----
FIRMWARE ?= bios
TOPOLOGY ?= numa3
CMDLINE ?=
QEMU_EXTRA ?=
export FIRMWARE TOPOLOGY CMDLINE QEMU_EXTRA

# The ISO carries the initrd already; a direct boot, or an ISO rebuilt for
# another command line, gets it through INITRD.
RUN_INITRD = $(if $(filter direct,$(FIRMWARE))$(CMDLINE),$(INITRD_IMG))

RUN_DEPS = $(KERNEL) $(INITRD_IMG) $(if $(filter direct,$(FIRMWARE)),,$(ISO))
ifeq ($(USERLAND),debian)
# Passed as INITRD, so bios/uefi boots make an ISO of their own per run.
RUN_INITRD = $(DEBIAN_INITRD)
RUN_DEPS = $(KERNEL) $(DEBIAN_INITRD)
endif
RUN_ENV = KERNEL=$(KERNEL) ISO=$(ISO) BUILD=$(BUILD) INITRD=$(RUN_INITRD)
# More arguments for gdb, e.g. GDB_ARGS="-batch -ex 'break start_kernel' -ex continue -ex bt".
GDB_ARGS ?=

# make reports the guest's status as "Error N" and exits 2 itself;
# scripts/run builds through run-prep, then exits with the guest's status.
run: $(RUN_DEPS)
	@scripts/deps.sh --for run
	@$(RUN_ENV) scripts/run-qemu.sh

gdb: $(RUN_DEPS)
	@scripts/deps.sh --for run
	@$(RUN_ENV) scripts/gdb.sh $(GDB_ARGS)

# For scripts/run: build what make run needs; print what it passes to run-qemu.sh.
.PHONY: run-prep run-env
run-prep: $(RUN_DEPS)
	@scripts/deps.sh --for run
run-env:
	@echo $(RUN_ENV)

# ---- tests ----
HOST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Wno-unused-parameter -Werror \
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
	-Iinclude -Iarch/host/include -include tests/host/host_names.h -DQUIRE_HOST -DDEBUG_MM
HOST_LIB_SRCS := lib/string.c lib/vsprintf.c lib/radix-tree.c kernel/cmdline.c kernel/printk.c \
	$(wildcard drivers/acpi/*.c) $(wildcard mm/*.c) $(wildcard arch/host/*.c) \
	$(filter-out fs/init.c fs/initrd.c,$(wildcard fs/*.c))
HOST_OBJS := $(patsubst %.c,$(BUILD)/host/%.o,$(HOST_LIB_SRCS))
HOST_LIB := $(BUILD)/host/libquire-host.a
HOST_TESTS := $(patsubst tests/host/%.c,$(BUILD)/tests/host/%,$(wildcard tests/host/test_*.c))

# The generic code (lib/, mm/, drivers/acpi, ...) on arch/host, built once.
$(BUILD)/host/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTCC  $<")
	$(Q)$(HOSTCC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@

$(HOST_LIB): $(HOST_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/tests/host/%: tests/host/%.c $(HOST_LIB) $(wildcard tests/host/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTCC  $@")
	$(Q)$(HOSTCC) $(HOST_CFLAGS) -MMD -MP -o $@ $< $(HOST_LIB) -lpthread

# The host tests that run threads as CPUs, once more under ThreadSanitizer
# instead of ASan/UBSan (the two cannot be combined), with the generic code
# built again in objects of their own: a data race in mm/ (two CPUs, one
# of them writing, no lock or atomic ordering them) fails the test with
# TSan's report. Jobs host-*-tsan; docs/testing.md.
TSAN_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(HOST_CFLAGS)) -fsanitize=thread
TSAN_OBJS := $(patsubst %.c,$(BUILD)/tsan/host/%.o,$(HOST_LIB_SRCS))
TSAN_LIB := $(BUILD)/tsan/host/libquire-tsan.a
TSAN_TESTS := $(patsubst %,$(BUILD)/tsan/tests/host/%,test_mm_threads test_mremap \
	test_truncate_race test_slab)

$(BUILD)/tsan/host/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TSAN    $<")
	$(Q)$(HOSTCC) $(TSAN_CFLAGS) -MMD -MP -c $< -o $@

$(TSAN_LIB): $(TSAN_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/tsan/tests/host/%: tests/host/%.c $(TSAN_LIB) $(wildcard tests/host/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TSAN    $@")
	$(Q)$(HOSTCC) $(TSAN_CFLAGS) -MMD -MP -o $@ $< $(TSAN_LIB) -lpthread

# Only the host tests, through the runner (seconds, no QEMU).
HOST_JOBS = $(shell awk '$$2 == "host" { printf "%s%s", sep, $$1; sep = "," }' tests/plan.txt)
test-host host-tests: $(HOST_TESTS) $(TSAN_TESTS)
	$(Q)python3 tests/qemu/runner.py --plan tests/plan.txt --only $(HOST_JOBS)

# Dependencies point one way (DESIGN.md, "Layers"): mm/ has no arrow
# into fs/ or drivers/, and they use mm's public headers only. The symbol
# check reads the kernel's objects, so the kernel is built first.
.PHONY: check-layering
check-layering: $(KERNEL)
	$(Q)BUILD=$(BUILD) scripts/check-layering.sh

# make test: build everything (gcc and clang kernels, the ISO, the host
# tests), check the runner itself, then run every job of tests/plan.txt.
# One guest at a time: on a 2-core machine each guest then has both cores, and
# the timing-sensitive SMP tests stay honest.
TEST_JOBS ?= 1
test:
	@scripts/deps.sh --for test
	$(Q)$(MAKE) --no-print-directory kernel iso initrd $(HOST_TESTS) $(TSAN_TESTS)
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/clang CC=clang LD=ld.lld kernel
	$(Q)$(MAKE) --no-print-directory lselftests
	$(Q)python3 -m unittest -q tests/qemu/test_runner.py tests/qemu/test_bench_plot.py tests/qemu/test_check_docs.py
	$(Q)python3 tests/qemu/runner.py --plan tests/plan.txt --jobs $(TEST_JOBS)

# Linux 6.12's mm selftests (docs/linux-selftests.md): fetched and built at
# test time into $(BUILD)/lselftests/initrd.cpio, which the plan job
# linux-mm-selftests-numa3 boots. A failed download or build is reported
# here and leaves no initrd, so make test goes on and that job fails.
.PHONY: lselftests linux-selftests
lselftests:
	$(Q)BUILD=$(BUILD) scripts/linux-selftests.sh build || \
		echo "linux-selftests: build failed: the job linux-mm-selftests-numa3 will fail" >&2

# The whole list on Quire and on Linux 6.12, side by side (never part of
# make test: the Linux boot runs every test, about 10 minutes under TCG).
linux-selftests: $(KERNEL)
	$(Q)BUILD=$(BUILD) scripts/linux-selftests.sh compare

# The differential programs (docs/difftest.md): tests/diff/NAME.c, in the
# initrd as /diff/NAME, must print on Quire what they printed on Linux 6.12
# (tests/diff/expected/NAME.out). make difftest runs the plan job that
# checks it (part of make test); make difftest-record boots Linux and
# writes those files again.
.PHONY: difftest difftest-record
difftest: $(KERNEL) $(INITRD_IMG)
	$(Q)python3 tests/qemu/runner.py --plan tests/plan.txt --only difftest-numa3

difftest-record:
	$(Q)BUILD=$(BUILD) scripts/difftest.sh record $(DIFFTEST)

# ---- benchmarks (make bench; never part of make test; docs/bench.md) ----
# The host benchmarks link the same generic code as the host tests, plus the
# benchmark runner, built for speed: -O2 and no sanitizers, in objects of
# their own under $(BUILD)/bench/host. A host benchmark is one file,
# tests/host/bench_NAME.c (it includes the kernel's tests/kernel/bench_NAME.c).
BENCH_HOST_CFLAGS := $(filter-out -O% -fsanitize=% -fno-sanitize-recover=%,$(HOST_CFLAGS)) -O2
BENCH_HOST_OBJS := $(patsubst %.c,$(BUILD)/bench/host/%.o,$(HOST_LIB_SRCS) kernel/kbench.c)
BENCH_HOST_LIB := $(BUILD)/bench/host/libquire-bench.a
HOST_BENCHES := $(patsubst tests/host/%.c,$(BUILD)/bench/host/%,$(wildcard tests/host/bench_*.c))
# More options for scripts/bench.py, e.g. BENCH_ARGS="--only host"; more
# kernel options for the QEMU runs, after bench=..., e.g. BENCH_CMDLINE="rmap_batch=0"
# (recorded with each row: a run replaces only rows with the same options).
BENCH_ARGS ?=
BENCH_CMDLINE ?=

$(BUILD)/bench/host/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTCC  $@")
	$(Q)$(HOSTCC) $(BENCH_HOST_CFLAGS) -MMD -MP -c $< -o $@

$(BENCH_HOST_LIB): $(BENCH_HOST_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/bench/host/bench_%: tests/host/bench_%.c $(BENCH_HOST_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTCC  $@")
	$(Q)$(HOSTCC) $(BENCH_HOST_CFLAGS) -MMD -MP -o $@ $< $(BENCH_HOST_LIB) -lpthread

# Host benchmarks, then the kernel's on QEMU (TCG, then -icount shift=0);
# rows go to $(BUILD)/bench/results.csv, tables to the terminal.
bench: $(KERNEL) $(HOST_BENCHES)
	@scripts/deps.sh --for bench
	$(Q)$(MAKE) --no-print-directory lselftests	# Linux's gup_test, the gup benchmark
	$(Q)python3 scripts/bench.py --build $(BUILD) --kernel $(KERNEL) \
		--cmdline "$(BENCH_CMDLINE)" $(BENCH_ARGS) $(HOST_BENCHES)

# ---- make fuzz: the random mm sequence for millions of steps (never part of make test) ----
# tests/host/test_mm_random.c built like the host benchmarks (-O2, no
# sanitizers, DEBUG_MM still on), one run per seed; `make -j4 fuzz` runs them
# side by side. Logs: $(BUILD)/fuzz/seed-N.log. docs/testing.md.
FUZZ_SEEDS ?= 1 2 3 4
FUZZ_STEPS ?= 2000000
FUZZ_BIN := $(BUILD)/fuzz/test_mm_random
.PHONY: fuzz
fuzz: $(patsubst %,fuzz-seed-%,$(FUZZ_SEEDS))

$(FUZZ_BIN): tests/host/test_mm_random.c $(BENCH_HOST_LIB) $(wildcard tests/host/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTCC  $@")
	$(Q)$(HOSTCC) $(BENCH_HOST_CFLAGS) -MMD -MP -o $@ $< $(BENCH_HOST_LIB) -lpthread

fuzz-seed-%: $(FUZZ_BIN)
	@echo "  FUZZ    seed $* ($(FUZZ_STEPS) steps): $(BUILD)/fuzz/seed-$*.log"
	$(Q)QUIRE_SEED=$* QUIRE_STEPS=$(FUZZ_STEPS) $(FUZZ_BIN) > $(BUILD)/fuzz/seed-$*.log 2>&1 || \
		{ grep -E 'not ok|EXPECTATION|seed [0-9]+ step' $(BUILD)/fuzz/seed-$*.log | head -20; \
		  echo "  FAIL    seed $*"; exit 1; }
	@grep -h 'steps in' $(BUILD)/fuzz/seed-$*.log

-include $(FUZZ_BIN).d

# ---- make fuzz-mm-stress: the threaded ring-3 stress for long (never part of make test) ----
# user/tests/mm_stress.c as init's program, one boot per seed of STRESS_SEEDS:
# one thread per CPU of STRESS_TOPOLOGY, STRESS_OPS operations each, the
# threads parked and /proc/quire/mm_verify read every STRESS_VERIFY. The
# defaults (4 seeds x 4 threads x 62500) are a million operations: hours
# under TCG (QEMU_EXTRA=-enable-kvm where there is KVM). STRESS_PROG=mm_stress_dyn
# runs the glibc build. Logs: $(BUILD)/fuzz/mm-stress-seed-N.log; docs/testing.md.
STRESS_SEEDS ?= 1 2 3 4
STRESS_OPS ?= 62500
STRESS_VERIFY ?= 5000
STRESS_TOPOLOGY ?= numa3
STRESS_PROG ?= mm_stress
.PHONY: fuzz-mm-stress
fuzz-mm-stress: $(patsubst %,fuzz-mm-stress-seed-%,$(STRESS_SEEDS))

fuzz-mm-stress-seed-%: $(KERNEL) $(INITRD_IMG)
	@scripts/deps.sh --for run
	@mkdir -p $(BUILD)/fuzz
	@echo "  STRESS  seed $* ($(STRESS_PROG), $(STRESS_OPS) ops per thread, $(STRESS_TOPOLOGY)): $(BUILD)/fuzz/mm-stress-seed-$*.log"
	$(Q)log=$(BUILD)/fuzz/mm-stress-seed-$*.log; \
	FIRMWARE=direct TOPOLOGY=$(STRESS_TOPOLOGY) KERNEL=$(KERNEL) BUILD=$(BUILD) \
	INITRD=$(INITRD_IMG) CMDLINE='init="/bin/init /tests/$(STRESS_PROG) -s $* -n $(STRESS_OPS) -k $(STRESS_VERIFY)"' \
		scripts/run-qemu.sh < /dev/null > $$log 2>&1 && ! grep -qE 'BUG: |failed mm_verify' $$log || \
		{ grep -E 'not ok|mm_stress: seed|BUG: |failed mm_verify|panic|run-qemu:' $$log | head -20; \
		  echo "  FAIL    seed $*"; exit 1; }
	@grep -h 'ops in' $(BUILD)/fuzz/mm-stress-seed-$*.log

# ---- make check-docs: links in README.md and docs/ (scripts/check-docs.py) ----
.PHONY: check-docs
check-docs:
	$(Q)python3 scripts/check-docs.py

deps:
	@scripts/deps.sh --for test

clean:
	rm -rf $(BUILD)

-include $(KERNEL_OBJS:.o=.d) $(HOST_OBJS:.o=.d) $(HOST_TESTS:=.d) \
	$(BENCH_HOST_OBJS:.o=.d) $(HOST_BENCHES:=.d) $(TSAN_OBJS:.o=.d) $(TSAN_TESTS:=.d)
