# hooks module: HTTP server, webhooks, feed pollers, metrics registry.
noinst_LIBRARIES += hooks/libhooks.a
hooks_libhooks_a_SOURCES = \
	hooks/auth.c hooks/auth.h \
	hooks/curl-event.c hooks/curl-event-internal.h \
	hooks/feed.c hooks/feed.h \
	hooks/forge.c hooks/forge.h hooks/forge-api.c hooks/forge-api.h \
	hooks/http.c hooks/http.h \
	hooks/metrics.c hooks/metrics.h \
	hooks/syzbot.c hooks/syzbot.h \
	hooks/webhook.c hooks/webhook.h
HOOKS_CFLAGS = $(MHD_CFLAGS) $(LIBCURL_CFLAGS) $(LIBCRYPTO_CFLAGS) \
	$(JANSSON_CFLAGS) $(SYSTEMD_CFLAGS) $(LIBGIT2_CFLAGS) $(GMIME_CFLAGS)
hooks_libhooks_a_CFLAGS = $(AM_CFLAGS) $(HOOKS_CFLAGS)
HOOKS_LIBS = hooks/libhooks.a $(MHD_LIBS) $(LIBCURL_LIBS) $(LIBCRYPTO_LIBS)

check_PROGRAMS += tests/unit/test-hooks
TESTS += tests/unit/test-hooks
tests_unit_test_hooks_SOURCES = tests/unit/test-hooks.c
tests_unit_test_hooks_CFLAGS = $(UNIT_CFLAGS) $(HOOKS_CFLAGS)
tests_unit_test_hooks_LDADD = $(HOOKS_LIBS) $(MAIL_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

CTL_EXTRA_SOURCES += daemon/ctl-api.c

HOOKS_INTEGRATION_TESTS = \
	tests/integration/http-webhooks.sh \
	tests/integration/http-api.sh \
	tests/integration/http-tls.sh \
	tests/integration/http-flood.sh \
	tests/integration/feed-syzbot.sh \
	tests/integration/webhook-kill9.sh \
	tests/integration/kfixctl-api.sh \
	tests/integration/http-reload.sh
TESTS += $(HOOKS_INTEGRATION_TESTS)
EXTRA_DIST += $(HOOKS_INTEGRATION_TESTS) tests/integration/hooks-lib.sh \
	tests/fake-syzbot.py tests/fixtures/syzbot \
	tests/bench/webhooks.sh tests/bench/webhook.lua tests/bench/attacks.sh tests/bench/idle-wakeups.sh \
	tests/bench/attacks.py tests/fuzz/corpus-events
BENCH_SHELL += tests/bench/webhooks.sh tests/bench/attacks.sh tests/bench/idle-wakeups.sh

check_PROGRAMS += tests/fuzz/replay-events
TESTS += tests/fuzz/replay-events
tests_fuzz_replay_events_SOURCES = tests/fuzz/replay-main.c tests/fuzz/fuzz-events.c
tests_fuzz_replay_events_CFLAGS = $(AM_CFLAGS) $(HOOKS_CFLAGS)
tests_fuzz_replay_events_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus-events"'
tests_fuzz_replay_events_LDADD = $(HOOKS_LIBS) $(MAIL_LIBS) $(COMMON_LIBS)

if FUZZING
# coverage feedback from the parsers themselves, not only from the harness
hooks_libhooks_a_CFLAGS += -fsanitize=fuzzer-no-link
FUZZ_BINS += tests/fuzz/fuzz-events
noinst_PROGRAMS += tests/fuzz/fuzz-events
tests_fuzz_fuzz_events_SOURCES = tests/fuzz/fuzz-events.c
tests_fuzz_fuzz_events_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS) $(HOOKS_CFLAGS)
tests_fuzz_fuzz_events_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_events_LDADD = $(HOOKS_LIBS) $(MAIL_LIBS) $(COMMON_LIBS)
endif
