# repro module: crash reports, trees, builds, VMs, runs.
# Modules define NAME_LIBS for linking; tests register themselves here.
noinst_LIBRARIES += repro/librepro.a
repro_librepro_a_SOURCES = \
	repro/report.h repro/report-internal.h \
	repro/report.c repro/report-re.c repro/report-table.c \
	repro/report-title.c repro/report-stack.c \
	repro/symbolize.c repro/dwarf-types.c repro/vmlinux.h repro/tags.c repro/tags.h \
	repro/ssh.c repro/ssh-internal.h repro/hostkey.c repro/hostkey.h \
	repro/sandbox.c repro/sandbox.h repro/build.c repro/build.h repro/build-internal.h repro/build-local.c repro/build-progress.c repro/build-ssh.c repro/build-sync.c repro/build-cache.c \
	repro/vm.c repro/vm.h repro/vm-qemu.c \
	repro/run.c repro/run.h repro/run-classify.c repro/syz.c \
	repro/selftest.c repro/selftest-select.c repro/selftest-kunit.c \
	repro/selftest.h repro/selftest-internal.h repro/maintainers.c repro/maintainers.h \
	repro/probe.c repro/probe.h \
	repro/tree.h \
	repro/tree-internal.h \
	repro/tree.c \
	repro/tree-query.c \
	repro/tree-worktree.c \
	repro/tree-snapshot.c \
	repro/tree-publish.c \
	repro/tree-path.c \
	repro/tree-bisect.c \
	repro/cfunc.c \
	repro/edit.c
repro_librepro_a_CFLAGS = $(AM_CFLAGS) $(PCRE2_CFLAGS) $(LIBDW_CFLAGS) $(LIBGIT2_CFLAGS) \
	$(LIBSSH2_CFLAGS) $(JANSSON_CFLAGS)
REPRO_LIBS = repro/librepro.a $(PCRE2_LIBS) $(LIBDW_LIBS) $(LIBGIT2_LIBS) $(LIBSSH2_LIBS) \
	$(JANSSON_LIBS) $(LIBIBERTY_LIBS) -lpthread

CTL_EXTRA_SOURCES += daemon/ctl-report.c daemon/ctl-repro.c daemon/ctl-tree.c

# Crash report tests.
check_PROGRAMS += tests/unit/test-report-corpus
TESTS += tests/unit/test-report-corpus
tests_unit_test_report_corpus_SOURCES = tests/unit/test-report-corpus.c
tests_unit_test_report_corpus_LDADD = $(REPRO_LIBS) $(COMMON_LIBS)

check_PROGRAMS += tests/unit/test-tree
TESTS += tests/unit/test-tree
tests_unit_test_tree_SOURCES = tests/unit/test-tree.c
tests_unit_test_tree_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(LIBGIT2_CFLAGS)
tests_unit_test_tree_LDADD = $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-bisect
TESTS += tests/unit/test-bisect
tests_unit_test_bisect_SOURCES = tests/unit/test-bisect.c
tests_unit_test_bisect_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(LIBGIT2_CFLAGS)
tests_unit_test_bisect_LDADD = $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

TESTS += tests/integration/report-cli.sh
EXTRA_DIST += tests/integration/report-cli.sh

check_PROGRAMS += tests/unit/test-report
TESTS += tests/unit/test-report
tests_unit_test_report_SOURCES = tests/unit/test-report.c
tests_unit_test_report_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_LDADD = $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

# Fuzzing: the harness under libFuzzer (--enable-fuzzing, CC=clang), and
# its saved inputs replayed in every `make check`.
check_PROGRAMS += tests/fuzz/replay-report
TESTS += tests/fuzz/replay-report
tests_fuzz_replay_report_SOURCES = tests/fuzz/replay-main.c tests/fuzz/fuzz-report.c
tests_fuzz_replay_report_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus-report"'
tests_fuzz_replay_report_LDADD = $(REPRO_LIBS) $(COMMON_LIBS)
EXTRA_DIST += tests/fuzz/corpus-report
if FUZZING
# coverage feedback needs the parser itself instrumented
repro_librepro_a_CFLAGS += -fsanitize=fuzzer-no-link
noinst_PROGRAMS += tests/fuzz/fuzz-report
FUZZ_BINS += tests/fuzz/fuzz-report
tests_fuzz_fuzz_report_SOURCES = tests/fuzz/fuzz-report.c
tests_fuzz_fuzz_report_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_report_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_report_LDADD = $(REPRO_LIBS) $(COMMON_LIBS)
endif

# `make bench`: parser throughput and linearity.
EXTRA_PROGRAMS += tests/bench/bench-report
BENCH_BINS += tests/bench/bench-report
tests_bench_bench_report_SOURCES = tests/bench/bench-report.c
tests_bench_bench_report_CPPFLAGS = $(AM_CPPFLAGS) -DSRCDIR=\"$(abs_top_srcdir)\"
tests_bench_bench_report_LDADD = $(REPRO_LIBS) $(COMMON_LIBS)
CLEANFILES += tests/bench/bench-report

# Builds, VMs and runs.
check_PROGRAMS += tests/unit/test-repro
TESTS += tests/unit/test-repro
tests_unit_test_repro_SOURCES = tests/unit/test-repro.c
tests_unit_test_repro_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_repro_CPPFLAGS = $(AM_CPPFLAGS) -DSRCDIR=\"$(abs_top_srcdir)\"
EXTRA_DIST += tests/integration/fake-make
tests_unit_test_repro_LDADD = $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-selftest
TESTS += tests/unit/test-selftest
tests_unit_test_selftest_SOURCES = tests/unit/test-selftest.c
tests_unit_test_selftest_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_selftest_LDADD = $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

# The real kernel test: skipped (77) with KFIX_SKIP_KERNEL=1 or without
# the tools; see tests/kernel/lib.sh.
KERNEL_TESTS = tests/kernel/kernel.sh tests/kernel/faults.sh tests/kernel/syz.sh \
	tests/kernel/build-remote.sh
TESTS += $(KERNEL_TESTS)
EXTRA_DIST += $(KERNEL_TESTS) tests/kernel/lib.sh tests/kernel/prepare.sh \
	tests/kernel/scenarios/kasan.fragment tests/kernel/scenarios/README.md \
	tests/kernel/scenarios/break-build.patch tests/kernel/scenarios/break-boot.patch \
	tests/kernel/scenarios/msg-uaf/bug.patch tests/kernel/scenarios/msg-uaf/fix.patch \
	tests/kernel/scenarios/msg-uaf/wrong-fix.patch tests/kernel/scenarios/msg-uaf/repro.c \
	tests/kernel/scenarios/msg-uaf/report.txt \
	tests/kernel/scenarios/msg-uaf/repro.syz tests/kernel/scenarios/msg-uaf/leak-fix.patch \
	tests/kernel/scenarios/msg-uaf/caller-breaking-fix.patch tests/kernel/scenarios/msg-uaf/agent.conf \
	tests/kernel/scenarios/hostname-oob/bug.patch tests/kernel/scenarios/hostname-oob/fix.patch \
	tests/kernel/scenarios/timer-kclock/bug.patch tests/kernel/scenarios/timer-kclock/fix.patch \
	tests/kernel/scenarios/timer-kclock/wrong-fix.patch tests/kernel/scenarios/timer-kclock/repro.c \
	tests/kernel/scenarios/hostname-oob/breaking-fix.patch \
	tests/kernel/scenarios/hostname-oob/kunit-breaking-fix.patch \
	tests/kernel/scenarios/hostname-oob/traced-fix.patch \
	tests/kernel/scenarios/clock-null-deref/breaking-fix.patch \
	tests/kernel/scenarios/hostname-oob/repro.c \
	tests/kernel/scenarios/watch-queue-oob/bug.patch \
	tests/kernel/scenarios/watch-queue-oob/fix.patch \
	tests/kernel/scenarios/watch-queue-oob/wrong-fix.patch \
	tests/kernel/scenarios/watch-queue-oob/repro.c \
	tests/kernel/scenarios/clock-null-deref/bug.patch \
	tests/kernel/scenarios/clock-null-deref/fix.patch \
	tests/kernel/scenarios/clock-null-deref/wrong-fix.patch \
	tests/kernel/scenarios/clock-null-deref/repro.c \
	tests/kernel/scenarios/watch-queue-leak/bug.patch \
	tests/kernel/scenarios/watch-queue-leak/fix.patch \
	tests/kernel/scenarios/watch-queue-leak/wrong-fix.patch \
	tests/kernel/scenarios/watch-queue-leak/repro.c

BENCH_SHELL += tests/bench/kernel-bench.sh tests/bench/sandbox-bench.sh tests/bench/validation-bench.sh
EXTRA_DIST += tests/bench/kernel-bench.sh tests/bench/sandbox-bench.sh tests/bench/validation-bench.sh

TESTS += tests/integration/kfixctl-tree.sh
EXTRA_DIST += tests/integration/kfixctl-tree.sh

TESTS += tests/integration/repro-progress.sh tests/integration/repro-syz.sh \
	tests/integration/vm-faults.sh tests/integration/vm-kill.sh \
	tests/integration/build-remote.sh
EXTRA_DIST += tests/integration/repro-progress.sh tests/integration/repro-syz.sh \
	tests/integration/vm-faults.sh tests/integration/vm-kill.sh \
	tests/integration/build-remote.sh

EXTRA_PROGRAMS += tests/bench/bench-bisect
BENCH_BINS += tests/bench/bench-bisect
tests_bench_bench_bisect_SOURCES = tests/bench/bench-bisect.c
tests_bench_bench_bisect_CFLAGS = $(AM_CFLAGS) $(LIBGIT2_CFLAGS)
tests_bench_bench_bisect_LDADD = $(REPRO_LIBS) $(COMMON_LIBS)
CLEANFILES += tests/bench/bench-bisect

EXTRA_PROGRAMS += tests/bench/bench-tree
BENCH_BINS += tests/bench/bench-tree
tests_bench_bench_tree_SOURCES = tests/bench/bench-tree.c
tests_bench_bench_tree_LDADD = $(REPRO_LIBS) $(COMMON_LIBS)

if FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-cfunc
FUZZ_BINS += tests/fuzz/fuzz-cfunc
# cfunc.c is compiled in, so that the fuzzer's coverage sees it.
tests_fuzz_fuzz_cfunc_SOURCES = tests/fuzz/fuzz-cfunc.c repro/cfunc.c
tests_fuzz_fuzz_cfunc_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_cfunc_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_CFLAGS)
endif
check_PROGRAMS += tests/fuzz/replay-cfunc
TESTS += tests/fuzz/replay-cfunc
tests_fuzz_replay_cfunc_SOURCES = tests/fuzz/replay-main.c tests/fuzz/fuzz-cfunc.c
tests_fuzz_replay_cfunc_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus-cfunc"'
tests_fuzz_replay_cfunc_LDADD = $(REPRO_LIBS) $(COMMON_LIBS)
EXTRA_DIST += tests/fuzz/corpus-cfunc/seed-kernel
