noinst_LIBRARIES += daemon/libdaemon.a
daemon_libdaemon_a_SOURCES = \
	daemon/store.c daemon/store.h daemon/store-internal.h daemon/store-json.c \
	daemon/store-bug.c daemon/store-job.c daemon/store-outbox.c daemon/store-event.c \
	daemon/store-patch.c daemon/store-review.c daemon/store-inbox.c daemon/store-metric.c \
	daemon/store-sqlite.c daemon/store-pg.c \
	daemon/child.c daemon/child.h \
	daemon/fetch.c daemon/fetch.h \
	daemon/jobs.c daemon/jobs.h daemon/job-selftest.c \
	daemon/job-reproduce.c daemon/job-repair.c daemon/job-retest.c daemon/job-compare.c daemon/job-bisect.c daemon/bisect.c daemon/bisect.h daemon/upstream.c daemon/upstream.h \
	daemon/forge-reply.c daemon/forge-reply.h \
	daemon/job-iterate.c daemon/iterate.h daemon/budget.c daemon/budget.h \
	daemon/pipeline.c daemon/pipeline.h daemon/source.c daemon/source.h \
	daemon/job-archive.c daemon/archive.h \
	daemon/outbox.c daemon/outbox.h \
	daemon/publish.c daemon/publish.h \
	daemon/syztest.c daemon/syztest.h \
	daemon/sched.c daemon/sched.h \
	daemon/worker.c daemon/worker.h \
	daemon/daemon.c daemon/daemon.h daemon/check-config.c \
	daemon/front.c daemon/front.h daemon/front-internal.h \
	daemon/intake.c daemon/intake-mail.c daemon/intake-mail.h \
	daemon/mailq.c daemon/mailq.h \
	daemon/intake-review.c daemon/intake-review.h daemon/api.c \
	daemon/dashboard.c daemon/dashboard-views.c daemon/dashboard-internal.h \
	daemon/html.c daemon/html.h \
	daemon/stats.c daemon/stats.h daemon/scrub.c daemon/scrub.h
daemon_libdaemon_a_CFLAGS = $(AM_CFLAGS) $(PCRE2_CFLAGS) $(SYSTEMD_CFLAGS) $(SQLITE_CFLAGS) $(LIBPQ_CFLAGS) $(JANSSON_CFLAGS) $(HOOKS_CFLAGS) $(LIBCURL_CFLAGS)
DAEMON_LIBS = daemon/libdaemon.a $(ALL_MODULE_LIBS) $(SQLITE_LIBS) $(LIBPQ_LIBS)

sbin_PROGRAMS += kfixd
kfixd_SOURCES = daemon/kfixd.c
kfixd_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS)
kfixd_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS)

bin_PROGRAMS += kfixctl
kfixctl_SOURCES = daemon/kfixctl.c daemon/ctl.h daemon/ctl-store.c daemon/ctl-util.c daemon/ctl-patch.c \
	daemon/ctl-bundle.c daemon/ctl-diagnose.c \
	daemon/ctl-bench.c daemon/bench.h daemon/bench-set.c daemon/bench-report.c \
	$(CTL_EXTRA_SOURCES)
kfixctl_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS) $(JANSSON_CFLAGS) $(LIBCURL_CFLAGS)
kfixctl_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS)
BENCH_SHELL += tests/bench/dashboard.sh
EXTRA_DIST += tests/bench/dashboard.sh
