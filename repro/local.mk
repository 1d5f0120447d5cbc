# repro module: builds, VMs over SSH, reproducer runs, verdicts.
noinst_LIBRARIES += repro/librepro.a
repro_librepro_a_SOURCES = \
	repro/ssh.c repro/ssh-internal.h \
	repro/build.c repro/build.h \
	repro/vm.c repro/vm.h repro/vm-qemu.c \
	repro/run.c repro/run.h repro/run-classify.c \
	repro/probe.c repro/probe.h
repro_librepro_a_CFLAGS = $(AM_CFLAGS) $(LIBSSH2_CFLAGS) $(JANSSON_CFLAGS)
REPRO_LIBS = repro/librepro.a $(LIBSSH2_LIBS) -lpthread

CTL_EXTRA_SOURCES += daemon/ctl-repro.c

check_PROGRAMS += tests/unit/test-repro
TESTS += tests/unit/test-repro
tests_unit_test_repro_SOURCES = tests/unit/test-repro.c
tests_unit_test_repro_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_repro_LDADD = $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

# The real kernel test: skipped (77) with KFIX_SKIP_KERNEL=1 or without
# the tools; see tests/kernel/lib.sh.
KERNEL_TESTS = tests/kernel/kernel.sh
TESTS += $(KERNEL_TESTS)
EXTRA_DIST += $(KERNEL_TESTS) tests/kernel/lib.sh tests/kernel/prepare.sh \
	tests/kernel/scenarios/kasan.fragment \
	tests/kernel/scenarios/break-build.patch tests/kernel/scenarios/break-boot.patch \
	tests/kernel/scenarios/msg-uaf/bug.patch tests/kernel/scenarios/msg-uaf/fix.patch \
	tests/kernel/scenarios/msg-uaf/wrong-fix.patch tests/kernel/scenarios/msg-uaf/repro.c \
	tests/kernel/scenarios/watch-queue-oob/bug.patch \
	tests/kernel/scenarios/watch-queue-oob/fix.patch \
	tests/kernel/scenarios/watch-queue-oob/wrong-fix.patch \
	tests/kernel/scenarios/watch-queue-oob/repro.c \
	tests/kernel/scenarios/clock-null-deref/bug.patch \
	tests/kernel/scenarios/clock-null-deref/fix.patch \
	tests/kernel/scenarios/clock-null-deref/wrong-fix.patch \
	tests/kernel/scenarios/clock-null-deref/repro.c

BENCH_SHELL += tests/bench/kernel-bench.sh
EXTRA_DIST += tests/bench/kernel-bench.sh
