# mail module: reading mail (GMime), composing patch mail, SMTP (libcurl),
# public-inbox archives (libgit2).
noinst_LIBRARIES += mail/libmail.a
mail_libmail_a_SOURCES = \
	mail/parse.h mail/mail-internal.h \
	mail/parse.c mail/text.c mail/syzbot.c mail/commands.c mail/patch.c \
	mail/json.c mail/auth.h mail/auth.c \
	mail/compose.h mail/compose.c mail/header-internal.h mail/header.c \
	mail/diffstat-internal.h mail/diffstat.c mail/maintainers.c \
	mail/smtp.h mail/smtp.c mail/inbox.h mail/inbox.c
mail_libmail_a_CFLAGS = $(AM_CFLAGS) $(GMIME_CFLAGS) $(OPENDKIM_CFLAGS) $(LIBCURL_CFLAGS) \
	$(LIBGIT2_CFLAGS) $(JANSSON_CFLAGS)
MAIL_LIBS = mail/libmail.a $(GMIME_LIBS) $(OPENDKIM_LIBS) $(LIBCURL_LIBS) $(LIBGIT2_LIBS) $(JANSSON_LIBS)

CTL_EXTRA_SOURCES += daemon/ctl-mail.c

if FUZZING
# coverage feedback from the parser itself, not only from the harness
mail_libmail_a_CFLAGS += -fsanitize=fuzzer-no-link
noinst_PROGRAMS += tests/fuzz/fuzz-mail-parse
FUZZ_BINS += tests/fuzz/fuzz-mail-parse
tests_fuzz_fuzz_mail_parse_SOURCES = tests/fuzz/fuzz-mail-parse.c
tests_fuzz_fuzz_mail_parse_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_mail_parse_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_mail_parse_LDADD = $(MAIL_LIBS) $(COMMON_LIBS)
endif

# Test driver for the shell integration tests.
check_PROGRAMS += tests/helpers/mailtool
tests_helpers_mailtool_SOURCES = tests/helpers/mailtool.c
tests_helpers_mailtool_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(OPENDKIM_CFLAGS)
tests_helpers_mailtool_LDADD = $(MAIL_LIBS) $(COMMON_LIBS)

check_PROGRAMS += tests/helpers/outboxtool
tests_helpers_outboxtool_SOURCES = tests/helpers/outboxtool.c
tests_helpers_outboxtool_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_helpers_outboxtool_LDADD = $(DAEMON_LIBS) $(ALL_MODULE_LIBS) $(COMMON_LIBS)

MAIL_FIXTURES = \
	tests/fixtures/mail/malformed.eml \
	tests/fixtures/mail/reply-test-attached.eml \
	tests/fixtures/mail/review-reply.eml \
	tests/fixtures/mail/syzbot-repro.eml \
	tests/fixtures/mail/syzbot-report.eml \
	tests/fixtures/mail/syzbot-test-ok.eml

MAIL_INTEGRATION_TESTS = \
	tests/integration/mail-smtp.sh \
	tests/integration/mail-compose.sh \
	tests/integration/mail-inbox.sh tests/integration/mail-auth.sh \
	tests/integration/mail-queue.sh \
	tests/integration/mail-kfixctl.sh
TESTS += $(MAIL_INTEGRATION_TESTS)
EXTRA_DIST += $(MAIL_INTEGRATION_TESTS) tests/integration/mail-lib.sh \
	$(MAIL_FIXTURES) \
	tests/integration/smtp-server.py

check_PROGRAMS += tests/unit/test-mail
TESTS += tests/unit/test-mail
tests_unit_test_mail_SOURCES = tests/unit/test-mail.c
tests_unit_test_mail_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_mail_LDADD = $(MAIL_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

# Inputs the fuzzer found (and seeds), replayed by make check.
MAIL_FUZZ_CORPUS = \
	tests/fuzz/corpus-mail/crash-bd77839bebd48d13f0770d4d6c2ba159a4cbc191 \
	tests/fuzz/corpus-mail/seed-malformed \
	tests/fuzz/corpus-mail/seed-reply-test-attached \
	tests/fuzz/corpus-mail/seed-review-reply \
	tests/fuzz/corpus-mail/seed-syzbot-report \
	tests/fuzz/corpus-mail/seed-syzbot-repro \
	tests/fuzz/corpus-mail/seed-syzbot-test-ok
EXTRA_DIST += $(MAIL_FUZZ_CORPUS)
check_PROGRAMS += tests/unit/test-mail-fuzz-replay
TESTS += tests/unit/test-mail-fuzz-replay
tests_unit_test_mail_fuzz_replay_SOURCES = tests/fuzz/replay-main.c tests/fuzz/fuzz-mail-parse.c
tests_unit_test_mail_fuzz_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) \
	-DREPLAY_CORPUS='"tests/fuzz/corpus-mail"'
tests_unit_test_mail_fuzz_replay_LDADD = $(MAIL_LIBS) $(COMMON_LIBS)

EXTRA_PROGRAMS += tests/bench/bench-mail
BENCH_BINS += tests/bench/bench-mail
tests_bench_bench_mail_SOURCES = tests/bench/bench-mail.c
tests_bench_bench_mail_LDADD = $(MAIL_LIBS) $(COMMON_LIBS)
