# repro module: crash reports, trees, builds, VMs, runs.
# Modules define NAME_LIBS for linking; tests register themselves here.
noinst_LIBRARIES += repro/librepro.a
repro_librepro_a_SOURCES = \
	repro/tree.h \
	repro/tree-internal.h \
	repro/tree.c \
	repro/tree-query.c \
	repro/tree-worktree.c \
	repro/tree-snapshot.c \
	repro/tree-publish.c \
	repro/cfunc.c \
	repro/edit.c
repro_librepro_a_CFLAGS = $(AM_CFLAGS) $(LIBGIT2_CFLAGS) $(LIBSSH2_CFLAGS)
REPRO_LIBS = repro/librepro.a $(LIBGIT2_LIBS) $(LIBSSH2_LIBS)
CTL_EXTRA_SOURCES += daemon/ctl-tree.c

check_PROGRAMS += tests/unit/test-tree
TESTS += tests/unit/test-tree
tests_unit_test_tree_SOURCES = tests/unit/test-tree.c
tests_unit_test_tree_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(LIBGIT2_CFLAGS)
tests_unit_test_tree_LDADD = $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

TESTS += tests/integration/kfixctl-tree.sh
EXTRA_DIST += tests/integration/kfixctl-tree.sh

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
EXTRA_DIST += tests/fuzz/corpus-cfunc/seed-kernel
