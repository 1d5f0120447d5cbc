# Unit tests (cmocka), one program per module.
UNIT_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(JANSSON_CFLAGS) $(SYSTEMD_CFLAGS) $(LIBPQ_CFLAGS)

check_PROGRAMS += tests/unit/test-common tests/unit/test-store
TESTS += tests/unit/test-common tests/unit/test-store

tests_unit_test_common_SOURCES = tests/unit/test-common.c
tests_unit_test_common_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_common_LDADD = $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-stats
TESTS += tests/unit/test-stats
tests_unit_test_stats_SOURCES = tests/unit/test-stats.c
tests_unit_test_stats_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_stats_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-iterate
TESTS += tests/unit/test-iterate
tests_unit_test_iterate_SOURCES = tests/unit/test-iterate.c
tests_unit_test_iterate_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_iterate_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-html
TESTS += tests/unit/test-html
tests_unit_test_html_SOURCES = tests/unit/test-html.c
tests_unit_test_html_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_html_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-publish
TESTS += tests/unit/test-publish
tests_unit_test_publish_SOURCES = tests/unit/test-publish.c tests/unit/store-fixture.h
tests_unit_test_publish_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_publish_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-scrub
TESTS += tests/unit/test-scrub
tests_unit_test_scrub_SOURCES = tests/unit/test-scrub.c
tests_unit_test_scrub_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_scrub_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-intake-review
TESTS += tests/unit/test-intake-review
tests_unit_test_intake_review_SOURCES = tests/unit/test-intake-review.c tests/unit/store-fixture.h
tests_unit_test_intake_review_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_intake_review_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-budget
TESTS += tests/unit/test-budget
tests_unit_test_budget_SOURCES = tests/unit/test-budget.c tests/unit/store-fixture.h
tests_unit_test_budget_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_budget_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-sched
TESTS += tests/unit/test-sched
tests_unit_test_sched_SOURCES = tests/unit/test-sched.c tests/unit/store-fixture.h
tests_unit_test_sched_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sched_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

# Records jobs' numbers like a job process, for metrics-jobs.sh.
check_PROGRAMS += tests/helpers/statstool
tests_helpers_statstool_SOURCES = tests/helpers/statstool.c
tests_helpers_statstool_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS)

tests_unit_test_store_SOURCES = tests/unit/test-store.c tests/unit/store-fixture.h
tests_unit_test_store_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_store_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

# Integration tests: the real kfixd on loopback.
INTEGRATION_TESTS = \
	tests/integration/check-config.sh \
	tests/integration/daemon-lifecycle.sh \
	tests/integration/kfixctl.sh tests/integration/bundle.sh tests/integration/bench.sh \
	tests/integration/man-pages.sh \
	tests/integration/base-build-error.sh \
	tests/integration/store-faults.sh \
	tests/integration/kill9.sh \
	tests/integration/unit-security.sh \
	tests/integration/scheduler.sh \
	tests/integration/idle.sh \
	tests/integration/publish.sh \
	tests/integration/dashboard.sh \
	tests/integration/archive-publish.sh \
	tests/integration/archive-start.sh \
	tests/integration/syzbot-test.sh \
	tests/integration/upstream-fix.sh \
	tests/integration/bisect-request.sh \
	tests/integration/forge-review.sh \
	tests/integration/review-replies.sh \
	tests/integration/llm-budget.sh \
	tests/integration/outbox-stall.sh \
	tests/integration/metrics-jobs.sh \
	tests/integration/store-pg.sh \
	tests/integration/pipeline.sh
TESTS += $(INTEGRATION_TESTS)
EXTRA_DIST += $(INTEGRATION_TESTS) tests/lib-common.sh tests/integration/lib.sh tests/integration/notify.py \
	tests/integration/lib-pg.sh \
	tests/browser/dashboard.mjs tests/browser/flow.mjs tests/browser/package.json tests/browser/package-lock.json

# BENCH_SHELL (shell benchmarks) is declared in Makefile.am.

# The repair pipeline inside kfixd on a real kernel (skipped without the
# tools or with KFIX_SKIP_KERNEL=1; see tests/kernel/lib.sh).
TESTS += tests/kernel/pipeline.sh tests/kernel/demo.sh tests/kernel/e2e.sh tests/kernel/bisect.sh
EXTRA_DIST += tests/kernel/pipeline.sh tests/kernel/demo.sh tests/kernel/e2e.sh tests/kernel/flow.sh \
	tests/kernel/bisect.sh \
	tests/kernel/scenarios/msg-uaf/pipeline-cassette.jsonl \
	tests/kernel/scenarios/msg-uaf/e2e-cassette.jsonl \
	tests/kernel/scenarios/msg-uaf/e2e-iterate-cassette.jsonl tests/kernel/repairmodel.py

# The repair agent end to end on each real-kernel scenario (skipped
# likewise).
REPAIR_KERNEL_TESTS = tests/kernel/explore.sh tests/kernel/repair-msg-uaf.sh \
	tests/kernel/repair-watch-queue-oob.sh tests/kernel/repair-clock-null-deref.sh \
	tests/kernel/repair-timer-kclock.sh tests/kernel/repair-watch-queue-leak.sh
TESTS += $(REPAIR_KERNEL_TESTS)
EXTRA_DIST += $(REPAIR_KERNEL_TESTS) tests/kernel/repair-scenario.sh \
	tests/kernel/scenarios/watch-queue-oob/report.txt \
	tests/kernel/scenarios/clock-null-deref/report.txt \
	tests/kernel/scenarios/clock-null-deref/repair-cassette.jsonl \
	tests/kernel/scenarios/clock-null-deref/agent.conf \
	tests/kernel/scenarios/msg-uaf/repair-cassette.jsonl \
	tests/kernel/scenarios/watch-queue-oob/repair-cassette.jsonl \
	tests/kernel/scenarios/timer-kclock/report.txt tests/kernel/scenarios/timer-kclock/agent.conf \
	tests/kernel/scenarios/timer-kclock/repair-cassette.jsonl \
	tests/kernel/scenarios/watch-queue-leak/report.txt \
	tests/kernel/scenarios/watch-queue-leak/repair-cassette.jsonl \
	tests/kernel/scenarios/dataset.json

# make bench: the benchmark runner over the shipped dataset, 1 and 2 at a time
BENCH_SHELL += tests/bench/bench-dataset.sh
EXTRA_DIST += tests/bench/bench-dataset.sh
