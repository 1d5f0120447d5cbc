# repro module: crash reports, trees, builds, VMs, runs.
# Modules define NAME_LIBS for linking; tests register themselves here.
REPRO_LIBS =

noinst_LIBRARIES += repro/librepro.a
repro_librepro_a_SOURCES = \
	repro/report.h repro/report-internal.h \
	repro/report.c repro/report-re.c repro/report-table.c \
	repro/report-title.c repro/report-stack.c \
	repro/symbolize.c \
	repro/tree.h \
	repro/tree-internal.h \
	repro/tree.c \
	repro/tree-query.c \
	repro/tree-worktree.c \
	repro/tree-snapshot.c \
	repro/tree-publish.c \
	repro/cfunc.c \
	repro/edit.c \
	repro/ssh.c repro/ssh-internal.h \
	repro/build.c repro/build.h \
	repro/vm.c repro/vm.h repro/vm-qemu.c \
	repro/run.c repro/run.h repro/run-classify.c
repro_librepro_a_CFLAGS = $(AM_CFLAGS) $(PCRE2_CFLAGS) $(LIBDW_CFLAGS) $(LIBGIT2_CFLAGS) $(LIBSSH2_CFLAGS) $(JANSSON_CFLAGS)
REPRO_LIBS += repro/librepro.a $(PCRE2_LIBS) $(LIBDW_LIBS) -lpthread $(LIBGIT2_LIBS) $(LIBSSH2_LIBS)

CTL_EXTRA_SOURCES += daemon/ctl-report.c

# Crash report tests.
check_PROGRAMS += tests/unit/test-report-corpus
# TESTS += tests/unit/test-report-corpus (enabled once above the floors)
tests_unit_test_report_corpus_SOURCES = tests/unit/test-report-corpus.c
tests_unit_test_report_corpus_LDADD = $(REPRO_LIBS) $(COMMON_LIBS)
CTL_EXTRA_SOURCES += daemon/ctl-tree.c

check_PROGRAMS += tests/unit/test-tree
TESTS += tests/unit/test-tree
tests_unit_test_tree_SOURCES = tests/unit/test-tree.c
tests_unit_test_tree_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(LIBGIT2_CFLAGS)
tests_unit_test_tree_LDADD = $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

CTL_EXTRA_SOURCES += daemon/ctl-repro.c

TESTS += tests/integration/report-cli.sh
EXTRA_DIST += tests/integration/report-cli.sh

check_PROGRAMS += tests/unit/test-report
TESTS += tests/unit/test-report
tests_unit_test_report_SOURCES = tests/unit/test-report.c
tests_unit_test_report_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_LDADD = $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

TESTS += tests/integration/kfixctl-tree.sh
EXTRA_DIST += tests/integration/kfixctl-tree.sh
