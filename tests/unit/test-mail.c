/* Unit tests of mail/: parsing (MIME, syzbot, commands, patches, trailers,
 * review comments), limits, composing and header safety. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/conf.h"
#include "common/json.h"
#include "common/fileio.h"
#include "common/strutil.h"
#include "mail/compose.h"
#include "mail/parse.h"

DEFINE_CLEANUP(struct config, config_free)

static struct mail *parse_str(const char *s)
{
	struct mail *m = NULL;
	_cleanup_free_ char *err = NULL;

	assert_int_equal(mail_parse(s, strlen(s), 0, &m, &err), 0);
	return m;
}

static struct mail *parse_fixture(const char *name)
{
	_cleanup_free_ char *path = NULL, *data = NULL;
	const char *top = getenv("top_srcdir");
	size_t len;
	struct mail *m = NULL;

	assert_true(asprintf(&path, "%s/tests/fixtures/mail/%s", top ? top : ".", name) > 0);
	assert_int_equal(read_file_bounded(path, MAIL_SIZE_MAX, &data, &len), 0);
	assert_int_equal(mail_parse(data, len, 0, &m, NULL), 0);
	return m;
}

static const struct mail_command *cmd(const struct mail *m, size_t i)
{
	size_t n;
	const struct mail_command *c = mail_commands(m, &n);

	assert_true(i < n);
	return &c[i];
}

static size_t ncmds(const struct mail *m)
{
	size_t n;

	mail_commands(m, &n);
	return n;
}

static void test_syzbot_report(void **state)
{
	_cleanup_(mail_freep) struct mail *m = parse_fixture("syzbot-report.eml");
	const struct mail_syzbot *s = mail_syzbot(m);

	assert_int_equal(mail_kind(m), MAIL_KIND_SYZBOT_REPORT);
	assert_non_null(s);
	assert_string_equal(s->extid, "4f3a9c0de81b27a6e5d4");
	/* folded subject, several subsystem tags, the (2) suffix kept */
	assert_string_equal(s->title, "KASAN: slab-use-after-free Read in tcp_retransmit_timer (2)");
	assert_string_equal(s->head_commit, "3f1e2a9b7c4d");
	assert_string_equal(s->git_tree, "upstream");
	assert_null(s->git_branch);
	assert_string_equal(s->console_log, "https://syzkaller.appspot.com/x/log.txt?x=12a4c7e0580000");
	assert_string_equal(s->c_repro, "https://syzkaller.appspot.com/x/repro.c?x=16f0a9c6580000");
	assert_string_equal(s->compiler,
			    "Debian clang version 15.0.6, GNU ld (GNU Binutils for Debian) 2.40");
	assert_false(s->found_reproducer);
	assert_non_null(s->report);
	assert_true(strstr(s->report, "BUG: KASAN: slab-use-after-free in tcp_retransmit_timer"));
	assert_null(strstr(s->report, "This report is generated"));
	/* the sample commands of syzbot's footer are not commands */
	assert_int_equal(ncmds(m), 0);
	assert_string_equal(mail_message_id(m), "000000000000a1b2c3d4e5f60718@google.com");
	assert_null(mail_patch(m));
}

static void test_syzbot_repro_qp(void **state)
{
	_cleanup_(mail_freep) struct mail *m = parse_fixture("syzbot-repro.eml");
	const struct mail_syzbot *s = mail_syzbot(m);

	assert_int_equal(mail_kind(m), MAIL_KIND_SYZBOT_REPORT);
	assert_true(s->found_reproducer);
	assert_string_equal(s->git_tree, "git://git.kernel.org/pub/scm/linux/kernel/git/netdev/net.git");
	assert_string_equal(s->git_branch, "main");
	/* quoted-printable soft break and =3D undone */
	assert_string_equal(s->compiler,
			    "gcc (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40");
	assert_string_equal(s->dashboard, "https://syzkaller.appspot.com/bug?extid=4f3a9c0de81b27a6e5d4");
	assert_string_equal(s->userspace_arch, "i386");
	assert_null(s->c_repro);
	assert_string_equal(mail_in_reply_to(m), "000000000000a1b2c3d4e5f60718@google.com");
	assert_string_equal(mail_references(m)[0], "000000000000a1b2c3d4e5f60718@google.com");
}

static void test_syzbot_test_results(void **state)
{
	_cleanup_(mail_freep) struct mail *ok = parse_fixture("syzbot-test-ok.eml");
	_cleanup_(mail_freep) struct mail *crash = NULL, *build = NULL;
	size_t n;

	assert_int_equal(mail_kind(ok), MAIL_KIND_SYZBOT_TEST_RESULT);
	assert_int_equal(mail_syzbot(ok)->test, MAIL_TEST_OK);
	assert_string_equal(mail_syzbot(ok)->head_commit, "8a9b0c1d");
	mail_trailers(ok, &n);
	assert_int_equal(n, 2);

	crash = parse_str("From: syzbot <syzbot+abc123@syzkaller.appspotmail.com>\n"
			  "Subject: Re: [syzbot] WARNING in foo\n\n"
			  "Hello,\n\nsyzbot has tested the proposed patch but the reproducer is "
			  "still triggering an issue:\nWARNING in foo\n\nWARNING: CPU: 0 at foo\n"
			  "\nTested on:\n\ncommit:         1234abcd Linux 6.13\n");
	assert_int_equal(mail_kind(crash), MAIL_KIND_SYZBOT_TEST_RESULT);
	assert_int_equal(mail_syzbot(crash)->test, MAIL_TEST_CRASH);
	assert_string_equal(mail_syzbot(crash)->title, "WARNING in foo");
	assert_string_equal(mail_syzbot(crash)->report, "WARNING in foo\n\nWARNING: CPU: 0 at foo");

	build = parse_str("From: syzbot+abc123@syzkaller.appspotmail.com\n"
			  "Subject: Re: [syzbot] WARNING in foo\n\n"
			  "syzbot tried to test the proposed patch but the build/boot failed:\n\n"
			  "net/x.c:1: error: oops\n");
	assert_int_equal(mail_kind(build), MAIL_KIND_SYZBOT_TEST_RESULT);
	assert_int_equal(mail_syzbot(build)->test, MAIL_TEST_BUILD_ERROR);
}

static void test_reply_attachment_charset(void **state)
{
	_cleanup_(mail_freep) struct mail *m = parse_fixture("reply-test-attached.eml");

	assert_int_equal(mail_kind(m), MAIL_KIND_REPLY);
	/* RFC 2047 name, ISO-8859-1 body converted to UTF-8 */
	assert_string_equal(mail_from_display(m), "J\xc3\xb6rg D\xc3\xa9veloppeur <dev@example.org>");
	assert_string_equal(mail_from(m), "dev@example.org");
	assert_true(strstr(mail_body(m), "J\xc3\xb6rg."));
	/* the quoted #syz line is not a command; test: wraps onto the next line */
	assert_int_equal(ncmds(m), 1);
	assert_string_equal(cmd(m, 0)->name, "syz-test");
	assert_string_equal(cmd(m, 0)->args,
			    "git://git.kernel.org/pub/scm/linux/kernel/git/netdev/net.git main");
	assert_false(cmd(m, 0)->kfix);
	/* the base64 attachment's diff, without the base-commit line */
	assert_non_null(mail_patch(m));
	assert_true(startswith(mail_patch(m), "diff --git a/net/ipv4/tcp_timer.c"));
	assert_null(strstr(mail_patch(m), "base-commit"));
	assert_string_equal(mail_base_commit(m), "0123456789abcdef0123456789abcdef01234567");
	assert_string_equal(mail_syzbot(m)->extid, "4f3a9c0de81b27a6e5d4");
	assert_string_equal(mail_recipients(m)[0], "syzbot+4f3a9c0de81b27a6e5d4@syzkaller.appspotmail.com");
}

static void test_review_reply(void **state)
{
	_cleanup_(mail_freep) struct mail *m = parse_fixture("review-reply.eml");
	const struct mail_trailer *t;
	size_t n;

	assert_int_equal(mail_kind(m), MAIL_KIND_REPLY);
	t = mail_trailers(m, &n);
	/* quoted and signature trailers are not the reviewer's */
	assert_int_equal(n, 1);
	assert_string_equal(t[0].key, "Acked-by");
	assert_string_equal(t[0].value, "Maintainer Person <maint@kernel.example.org>");
	assert_int_equal(ncmds(m), 2);
	assert_string_equal(cmd(m, 0)->name, "kfix-repair");
	assert_true(cmd(m, 0)->kfix);
	assert_string_equal(cmd(m, 1)->name, "kfix-upstream");
	assert_string_equal(mail_review_comments(m),
			    "> The timer can fire after the socket was released.\n>\n"
			    "> Reported-by: syzbot+4f3a9c0de81b27a6e5d4@syzkaller.appspotmail.com\n"
			    "> +\tif (!tp->packets_out)\n> +\t\treturn;\n"
			    "This only hides the problem; take a reference on the socket in\n"
			    "tcp_write_timer() instead.\n");
	/* two Message-IDs in a folded References header */
	assert_int_equal(strv_len(mail_references(m)), 2);
	assert_string_equal(mail_references(m)[1], "kfix.17.1.a1b2c3@kfix.example.org");
}

static void test_commands_rules(void **state)
{
	_cleanup_(mail_freep) struct mail *m = NULL, *many = NULL, *bare = NULL, *subj = NULL;

	m = parse_str("From: a@example.org\nSubject: Re: x\n\n"
		      "#syz fix: net: fix the  thing\n"
		      " #syz invalid\n"
		      "> #kfix stop\n"
		      "#syzbot test\n"
		      "#syz-dup: other title\n");
	assert_int_equal(ncmds(m), 2);
	assert_string_equal(cmd(m, 0)->name, "syz-fix");
	assert_string_equal(cmd(m, 0)->args, "net: fix the thing");
	assert_string_equal(cmd(m, 1)->name, "syz-dup");
	assert_string_equal(cmd(m, 1)->args, "other title");

	many = parse_str("From: a@example.org\nSubject: x\n\n#syz undup\n#syz invalid\n"
			 "#kfix retest\n#kfix stop\n#syz upstream\n");
	assert_int_equal(ncmds(many), MAIL_COMMANDS_MAX);
	assert_string_equal(cmd(many, 2)->name, "kfix-retest");

	bare = parse_str("From: a@example.org\nSubject: x\n\n#syz test\n\n"
			 "#syz set subsystems: net, bpf\n#kfix reject no, thanks\n");
	assert_int_equal(ncmds(bare), 3);
	assert_string_equal(cmd(bare, 0)->name, "syz-test");
	assert_string_equal(cmd(bare, 0)->args, "");
	assert_string_equal(cmd(bare, 1)->name, "syz-set");
	assert_string_equal(cmd(bare, 1)->args, "subsystems: net, bpf");
	assert_string_equal(cmd(bare, 2)->args, "no, thanks");

	/* the subject counts as the first line */
	subj = parse_str("From: a@example.org\nSubject: #syz invalid\n\nbody\n");
	assert_int_equal(ncmds(subj), 1);
	assert_string_equal(cmd(subj, 0)->name, "syz-invalid");
}

static void test_inline_patch(void **state)
{
	_cleanup_(mail_freep) struct mail *m = NULL;

	m = parse_str("From: Dev <dev@example.org>\nSubject: [PATCH v2 1/2] mm: fix\n"
		      "Message-ID: <p1@example.org>\n\n"
		      "Text.\n\nSigned-off-by: Dev <dev@example.org>\n---\n"
		      " mm/x.c | 2 +-\n\n"
		      "diff --git a/mm/x.c b/mm/x.c\nindex 1..2 100644\n--- a/mm/x.c\n+++ b/mm/x.c\n"
		      "@@ -1,3 +1,3 @@\n a\n-b\n+c\n\n d\n"
		      "-- \n2.40.0\n");
	assert_int_equal(mail_kind(m), MAIL_KIND_PATCH);
	assert_string_equal(mail_patch(m), "diff --git a/mm/x.c b/mm/x.c\nindex 1..2 100644\n"
					   "--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1,3 +1,3 @@\n"
					   " a\n-b\n+c\n\n d\n");
}

static void test_malformed_and_limits(void **state)
{
	_cleanup_(mail_freep) struct mail *m = parse_fixture("malformed.eml");
	_cleanup_free_ char *big = NULL, *err = NULL;
	struct mail *none = NULL;
	size_t size = 50U * 1024 * 1024;

	assert_int_equal(mail_kind(m), MAIL_KIND_OTHER);
	assert_null(mail_from(m));
	/* 50 MB: refused before any parsing, with a reason */
	big = malloc(size);
	assert_non_null(big);
	memset(big, 'a', size);
	memcpy(big, "Subject: x\n\n", 12);
	assert_int_equal(mail_parse(big, size, 0, &none, &err), -EFBIG);
	assert_null(none);
	assert_non_null(err);
	assert_non_null(strstr(err, "52428800 bytes"));
	/* empty input and binary junk do not crash */
	assert_int_equal(mail_parse("", 0, 0, &none, NULL) < 0 || none, 1);
	mail_free(none);
	none = NULL;
	if (mail_parse("\0\xff\xfe\n\n\r", 6, 0, &none, NULL) == 0)
		mail_free(none);
}

/* Mails built to cost GMime gigabytes: a million empty parts, nesting
 * deeper than kfix reads, a flood of header fields, one huge folded
 * field.  Each is refused before parsing, with the reason; a mail of
 * 200 parts just below the limits is read. */
static void test_hostile_structure(void **state)
{
	static const char head[] = "From: a@example.org\nSubject: x\nMIME-Version: 1.0\n"
				   "Content-Type: multipart/mixed; boundary=\"b\"\n\n";
	struct mail *none = NULL;
	char *buf;
	size_t cap = 16u * 1024 * 1024, n;

	(void)state;
	buf = malloc(cap);
	assert_non_null(buf);
	/* 1.5 million empty parts in under 16 MB */
	n = (size_t)snprintf(buf, cap, "%s", head);
	for (int i = 0; i < 1500000 && n + 16 < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "--b\n\n");
	n += (size_t)snprintf(buf + n, cap - n, "--b--\n");
	{
		_cleanup_free_ char *err = NULL;

		assert_int_equal(mail_parse(buf, n, 16u * 1024 * 1024, &none, &err), -E2BIG);
		assert_non_null(strstr(err, "MIME parts"));
	}
	/* 40 nested multiparts */
	n = (size_t)snprintf(buf, cap, "From: a@example.org\nMIME-Version: 1.0\n");
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(buf + n, cap - n,
				      "Content-Type: multipart/mixed; boundary=\"n%d\"\n\n--n%d\n", i, i);
	{
		_cleanup_free_ char *err = NULL;

		assert_int_equal(mail_parse(buf, n, 0, &none, &err), -E2BIG);
		assert_non_null(strstr(err, "nested"));
	}
	/* header fields */
	n = 0;
	for (int i = 0; i < 5000; i++)
		n += (size_t)snprintf(buf + n, cap - n, "X-H%d: v\n", i);
	n += (size_t)snprintf(buf + n, cap - n, "\nbody\n");
	{
		_cleanup_free_ char *err = NULL;

		assert_int_equal(mail_parse(buf, n, 0, &none, &err), -E2BIG);
		assert_non_null(strstr(err, "header fields"));
	}
	n = (size_t)snprintf(buf, cap, "Subject: x\n");
	for (int i = 0; i < 20000; i++)
		n += (size_t)snprintf(buf + n, cap - n, " folded\n");
	n += (size_t)snprintf(buf + n, cap - n, "\nbody\n");
	{
		_cleanup_free_ char *err = NULL;

		assert_int_equal(mail_parse(buf, n, 0, &none, &err), -E2BIG);
		assert_non_null(strstr(err, "header field of more than"));
	}
	/* 200 small parts: within the limits, read */
	n = (size_t)snprintf(buf, cap, "%s", head);
	for (int i = 0; i < 200; i++)
		n += (size_t)snprintf(buf + n, cap - n, "--b\nContent-Type: text/plain\n\npart %d\n", i);
	n += (size_t)snprintf(buf + n, cap - n, "--b--\n");
	assert_int_equal(mail_parse(buf, n, 0, &none, NULL), 0);
	mail_free(none);
	free(buf);
}

static void test_json_shape(void **state)
{
	_cleanup_(mail_freep) struct mail *m = parse_fixture("reply-test-attached.eml");
	_cleanup_json_ json_t *j = NULL;
	static const char *const keys[] = { "message_id", "in_reply_to", "from", "subject",
					    "kind", "syzbot", "commands", "patch", "trailers" };
	static const char *const skeys[] = { "extid", "title", "head_commit", "git_tree",
					     "git_branch", "console_log", "kernel_config",
					     "dashboard", "syz_repro", "c_repro", "compiler" };

	assert_int_equal(mail_to_json(m, &j), 0);
	assert_int_equal(json_object_size(j), ARRAY_SIZE(keys));
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		assert_non_null(json_object_get(j, keys[i]));
	assert_int_equal(json_object_size(json_object_get(j, "syzbot")), ARRAY_SIZE(skeys));
	for (size_t i = 0; i < ARRAY_SIZE(skeys); i++)
		assert_non_null(json_object_get(json_object_get(j, "syzbot"), skeys[i]));
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "reply");
	assert_true(json_is_null(json_object_get(json_object_get(j, "syzbot"), "git_tree")));
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(j, "commands"), 0), "name")),
			    "syz-test");
}

static void test_allowlist(void **state)
{
	_cleanup_(config_freep) struct config *c = NULL;
	_cleanup_(mail_freep) struct mail *forged = NULL;

	assert_int_equal(config_new_empty(&c), 0);
	assert_int_equal(config_set(c, "tree", "net", "allow-commands", "Mod@Example.org"), 0);
	assert_int_equal(config_set(c, "tree", "mm", "allow-commands", "@mm.example.org"), 0);
	assert_true(mail_sender_allowed(c, "net", "mod@example.org"));
	assert_false(mail_sender_allowed(c, "mm", "mod@example.org"));
	assert_true(mail_sender_allowed(c, "mm", "akpm@mm.example.org"));
	assert_false(mail_sender_allowed(c, "mm", "akpm@evil-mm.example.org"));
	assert_false(mail_sender_allowed(c, "net", "mod@example.org.evil.com"));
	assert_false(mail_sender_allowed(c, "net", NULL));
	/* a forged sender: the display name says moderator, the address does not */
	forged = parse_str("From: \"mod@example.org\" <attacker@evil.example>\n"
			   "Subject: Re: [PATCH RFC] x\n\n#kfix upstream\n");
	assert_int_equal(ncmds(forged), 1);
	assert_true(cmd(forged, 0)->kfix);
	assert_false(mail_sender_allowed(c, "net", mail_from(forged)));
}

static void test_refusal(void **state)
{
	_cleanup_(mail_freep) struct mail *orig = NULL, *back = NULL;
	_cleanup_free_ char *out = NULL, *key = NULL;

	orig = parse_str("From: Someone <someone@example.org>\nMessage-ID: <q1@example.org>\n"
			 "Subject: Re: [PATCH RFC] tcp: x\n\n#kfix upstream\n");
	assert_int_equal(mail_compose_refusal(orig, "kfix <kfix@kfix.example.org>",
					      "r1@kfix.example.org", "net", 0, &out, NULL),
			 0);
	back = parse_str(out);
	assert_string_equal(mail_subject(back), "Re: [PATCH RFC] tcp: x");
	assert_string_equal(mail_in_reply_to(back), "q1@example.org");
	assert_string_equal(mail_recipients(back)[0], "someone@example.org");
	assert_non_null(strstr(mail_body(back), "not on the list of senders allowed"));
	/* the refusal holds no command itself */
	assert_int_equal(ncmds(back), 0);
	assert_int_equal(mail_refusal_key(orig, "net", &key), 0);
	assert_string_equal(key, "kfix-refusal:someone@example.org:net");
}

static const char diff1[] = "diff --git a/a.c b/a.c\nindex 1111111..2222222 100644\n--- a/a.c\n+++ b/a.c\n"
			    "@@ -1,2 +1,2 @@\n-x\n--- y\n+z\n+w\n";

static void test_compose_headers(void **state)
{
	char *to[] = { "Name, With Comma <a@example.org>", "b@example.org", NULL };
	char *bad_to[] = { "a@example.org\r\nBcc: x@example.org", NULL };
	struct patch_mail p = {
		.from = "kfix <kfix@kfix.example.org>",
		.message_id = "m1@kfix.example.org",
		.to = to,
		.summary = "x: title\r\nBcc: evil@example.org",
		.diff = diff1,
	};
	_cleanup_free_ char *out = NULL, *err = NULL;
	_cleanup_(mail_freep) struct mail *back = NULL;

	assert_int_equal(mail_compose_patch(&p, &out, &err), 0);
	assert_null(strstr(out, "\nBcc:"));
	assert_non_null(strstr(out, "To: \"Name, With Comma\" <a@example.org>,\n b@example.org\n"));
	/* the removed line "-- y" is counted as a deletion, not a header */
	assert_non_null(strstr(out, " a.c | 4 ++--\n 1 file changed, 2 insertions(+), 2 deletions(-)\n"));
	back = parse_str(out);
	assert_string_equal(mail_subject(back), "[PATCH] x: title Bcc: evil@example.org");
	assert_int_equal(strv_len(mail_recipients(back)), 2);

	free(out);
	out = NULL;
	p.to = bad_to;
	assert_int_equal(mail_compose_patch(&p, &out, NULL), -EINVAL);
	p.to = to;
	p.message_id = "m1@x>\nBcc: y";
	assert_int_equal(mail_compose_patch(&p, &out, NULL), -EINVAL);
	p.message_id = "m1@kfix.example.org";
	p.base_commit = "not-hex";
	assert_int_equal(mail_compose_patch(&p, &out, NULL), -EINVAL);
	p.base_commit = NULL;
	p.from = "kfix <kfix@kfix.example.org>\nBcc: z@example.org";
	assert_int_equal(mail_compose_patch(&p, &out, NULL), -EINVAL);
	assert_null(out);
}

/* A plain subject is folded where git format-patch folds it: at 78
 * columns of "Subject: ..." and not before. */
static void test_subject_fold_like_git(void **state)
{
	char *to[] = { "b@example.org", NULL };
	struct patch_mail p = {
		.from = "kfix <kfix@kfix.example.org>", .message_id = "m3@kfix.example.org",
		.to = to, .diff = diff1,
	};
	/* "Subject: [PATCH] " is 17 columns; words of 10 with spaces */
	static const struct { size_t len; bool folded; } cases[] = {
		{ 60, false }, { 61, false }, { 62, true }, { 120, true },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *out = NULL, *title = calloc(1, cases[i].len + 1);
		_cleanup_(mail_freep) struct mail *back = NULL;
		const char *subj, *eol;

		for (size_t k = 0; k < cases[i].len; k++)
			title[k] = k % 10 == 9 ? ' ' : 'a' + (char)(k % 10);
		title[cases[i].len - 1] = 'z';
		p.summary = title;
		assert_int_equal(mail_compose_patch(&p, &out, NULL), 0);
		subj = strstr(out, "\nSubject: ");
		assert_non_null(subj);
		eol = strchr(subj + 1, '\n');
		assert_true(eol - (subj + 1) <= 78);
		assert_int_equal(eol[1] == ' ', cases[i].folded);
		back = parse_str(out);
		assert_true(endswith(mail_subject(back), title));
	}
}

static void test_compose_long_and_encoded(void **state)
{
	char *to[] = { "b@example.org", NULL };
	_cleanup_free_ char *title = NULL, *out = NULL;
	_cleanup_(mail_freep) struct mail *back = NULL;
	struct patch_mail p = {
		.from = "kfix <kfix@kfix.example.org>", .message_id = "m2@kfix.example.org",
		.to = to, .diff = diff1, .version = 3, .rfc = true,
	};
	const char *line;

	/* 60 words of a hostile length, with UTF-8 */
	title = calloc(1, 60 * 12 + 1);
	for (int i = 0; i < 60; i++)
		strcat(title, i % 7 ? "word\xc3\xa9" "ab " : "\r\n\t");
	p.summary = title;
	assert_int_equal(mail_compose_patch(&p, &out, NULL), 0);
	for (line = out; *line && *line != '\n'; line = strchr(line, '\n') + 1)
		assert_true(strchr(line, '\n') - line <= 78);
	back = parse_str(out);
	assert_true(startswith(mail_subject(back), "[PATCH RFC v3] word\xc3\xa9" "ab word"));
}

/* Every header line of out is 7-bit text of at most 78 columns. */
static void assert_header_lines_safe(const char *out)
{
	for (const char *l = out; *l != '\n'; l = strchr(l, '\n') + 1) {
		const char *e = strchr(l, '\n');

		assert_non_null(e);
		assert_true(e - l <= 78);
		for (const char *c = l; c < e; c++)
			assert_true(*c >= ' ' && *c < 0x7f);
	}
}

/* Hostile titles and names: a very long non-ASCII word, invalid UTF-8,
 * control characters and CR/LF stay inside their header field. */
static void test_compose_hostile_header_text(void **state)
{
	char *to[] = { "J\xc3\xb6rg Maint <j@example.org>", "Say \"hi\" \\ x <q@example.org>", NULL };
	struct patch_mail p = {
		.from = "kfix <kfix@kfix.example.org>", .message_id = "m4@kfix.example.org",
		.to = to, .diff = diff1,
	};
	char word[2 * 100 + 1] = "", euro[4 * 40 + 1] = "";
	const char *titles[] = { word, "x: bad \xff\xfe utf-8", "x: \x01\x1b[31m\x7f ctl",
				 "x: \xc3\xa9\r\nBcc: evil@example.org", euro };

	(void)state;
	for (int i = 0; i < 100; i++)
		strcat(word, "\xc3\xa9");
	for (int i = 0; i < 40; i++)
		strcat(euro, "a\xe2\x82\xac");
	for (size_t i = 0; i < ARRAY_SIZE(titles); i++) {
		_cleanup_free_ char *out = NULL;
		_cleanup_(mail_freep) struct mail *back = NULL;

		p.summary = titles[i];
		assert_int_equal(mail_compose_patch(&p, &out, NULL), 0);
		assert_header_lines_safe(out);
		assert_null(strstr(out, "\nBcc:"));
		assert_non_null(strstr(out, "\nTo: =?UTF-8?B?SsO2cmcgTWFpbnQ=?= <j@example.org>,\n"
					    " \"Say \\\"hi\\\" \\\\ x\" <q@example.org>\n"));
		back = parse_str(out);
		assert_true(startswith(mail_subject(back), "[PATCH] "));
		if (i == 0 || i == 4)
			assert_string_equal(mail_subject(back) + 8, titles[i]);
		if (i == 2)
			assert_string_equal(mail_subject(back), "[PATCH] x: [31m ctl");
		if (i == 3) {
			assert_non_null(strstr(out, "\nSubject: =?UTF-8?B?"
						    "W1BBVENIXSB4OiDDqSBCY2M6IGV2aWxAZXhhbXBsZS5vcmc=?=\n"));
			assert_string_equal(mail_subject(back), "[PATCH] x: \xc3\xa9 Bcc: evil@example.org");
		}
	}
}

static void test_trailer_order(void **state)
{
	struct mail_trailer t[] = {
		{ "Signed-off-by", "a" }, { "Link", "l" },	   { "Reported-by", "r" },
		{ "Fixes", "f" },	  { "Reviewed-by", "v1" }, { "Assisted-by", "x" },
		{ "Reviewed-by", "v2" },  { "Closes", "c" },	   { "Acked-by", "k" },
	};
	/* b4's order: the reviews after the sign-off they reviewed */
	const char *want[] = { "f", "r", "c", "x", "a", "v1", "v2", "k", "l" };

	mail_trailers_sort(t, ARRAY_SIZE(t));
	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		assert_string_equal(t[i].value, want[i]);
}

static void test_syz_test_request(void **state)
{
	_cleanup_(mail_freep) struct mail *rep = parse_fixture("syzbot-report.eml"), *back = NULL;
	_cleanup_free_ char *out = NULL;
	char *cc[] = { "syzkaller-bugs@googlegroups.com", NULL };
	struct syz_test_mail m = {
		.from = "kfix <kfix@kfix.example.org>", .message_id = "t1@kfix.example.org",
		.report = rep, .git_tree = "git://x.example.org/a.git", .branch = "master",
		.diff = diff1, .cc = cc,
	};

	/* in the report's thread, parsed back as syzbot's parser would */
	assert_int_equal(mail_compose_syz_test(&m, &out, NULL), 0);
	back = parse_str(out);
	assert_int_equal(ncmds(back), 1);
	assert_string_equal(cmd(back, 0)->name, "syz-test");
	assert_string_equal(cmd(back, 0)->args, "git://x.example.org/a.git master");
	assert_non_null(mail_patch(back));
	assert_string_equal(mail_recipients(back)[0],
			    "syzbot+4f3a9c0de81b27a6e5d4@syzkaller.appspotmail.com");
	assert_string_equal(mail_recipients(back)[1], "syzkaller-bugs@googlegroups.com");
	assert_string_equal(mail_in_reply_to(back), "000000000000a1b2c3d4e5f60718@google.com");
	assert_string_equal(mail_subject(back), "Re: [syzbot] [net?] [bpf?] KASAN: slab-use-after-free Read in tcp_retransmit_timer (2)");
	free(out);
	out = NULL;
	mail_free(back);
	back = NULL;

	/* without the report's mail: its id and the bug's title; bare test */
	m = (struct syz_test_mail){ .from = "kfix <kfix@kfix.example.org>",
				    .message_id = "t3@kfix.example.org", .extid = "0123abcd",
				    .report_mid = "rep@google.com", .title = "WARNING in f",
				    .diff = diff1 };
	assert_int_equal(mail_compose_syz_test(&m, &out, NULL), 0);
	back = parse_str(out);
	assert_int_equal(ncmds(back), 1);
	assert_string_equal(cmd(back, 0)->name, "syz-test");
	assert_string_equal(mail_subject(back), "Re: [syzbot] WARNING in f");
	assert_string_equal(mail_in_reply_to(back), "rep@google.com");
	assert_string_equal(mail_recipients(back)[0], "syzbot+0123abcd@syzkaller.appspotmail.com");
	assert_non_null(strstr(out, "\n#syz test\n\ndiff --git "));
	free(out);
	out = NULL;

	/* nothing a stranger's text could turn into another command */
	m = (struct syz_test_mail){ .from = "kfix <kfix@kfix.example.org>",
				    .message_id = "t2@kfix.example.org", .report = rep,
				    .git_tree = "git://x\n#syz invalid", .branch = "master",
				    .diff = diff1 };
	assert_int_equal(mail_compose_syz_test(&m, &out, NULL), -EINVAL);
	m.git_tree = "git://x.example.org/a.git";
	m.branch = NULL;
	assert_int_equal(mail_compose_syz_test(&m, &out, NULL), -EINVAL);
	m.report = NULL;
	m.branch = "master";
	m.extid = "not hex";
	assert_int_equal(mail_compose_syz_test(&m, &out, NULL), -EINVAL);
}

static void test_upstream_recipients(void **state)
{
	_cleanup_(mail_freep) struct mail *rep = parse_fixture("syzbot-report.eml");
	_cleanup_strv_ char **to = NULL, **cc = NULL;
	char *maint[] = { "Eric Dumazet <EDumazet@google.com>", "netdev@vger.kernel.org",
			  "bad\r\nBcc: x@example.org", NULL };

	assert_int_equal(mail_upstream_recipients(rep, maint, NULL, &to, &cc), 0);
	assert_int_equal(strv_len(to), 2);
	assert_string_equal(to[0], "Eric Dumazet <EDumazet@google.com>");
	assert_string_equal(cc[0], "syzbot+4f3a9c0de81b27a6e5d4@syzkaller.appspotmail.com");
	/* the report's six recipients less the two already in To */
	assert_int_equal(strv_len(cc), 1 + 6 - 2);
	assert_false(strv_contains(cc, "edumazet@google.com"));
	assert_false(strv_contains(cc, "netdev@vger.kernel.org"));
	assert_true(strv_contains(cc, "syzkaller-bugs@googlegroups.com"));
	strv_free(to);
	strv_free(cc);
	to = cc = NULL;

	/* extra Cc (a bisected commit's people): after the others, each
	 * address once, malformed ones left out, names as they are */
	{
		char *extra[] = { "Doe, Jane <Jane@example.org>", "E. D. <edumazet@google.com>",
				  "Jane D <jane@example.org>", "x <no-at>", "y\n<y@example.org>",
				  "Sub Maintainer <submaint@example.org>", NULL };

		assert_int_equal(mail_upstream_recipients(rep, maint, extra, &to, &cc), 0);
		assert_int_equal(strv_len(cc), 1 + 6 - 2 + 2);
		assert_string_equal(cc[5], "Doe, Jane <Jane@example.org>");
		assert_string_equal(cc[6], "Sub Maintainer <submaint@example.org>");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syzbot_report),
		cmocka_unit_test(test_syzbot_repro_qp),
		cmocka_unit_test(test_syzbot_test_results),
		cmocka_unit_test(test_reply_attachment_charset),
		cmocka_unit_test(test_review_reply),
		cmocka_unit_test(test_commands_rules),
		cmocka_unit_test(test_inline_patch),
		cmocka_unit_test(test_malformed_and_limits),
		cmocka_unit_test(test_hostile_structure),
		cmocka_unit_test(test_json_shape),
		cmocka_unit_test(test_allowlist),
		cmocka_unit_test(test_refusal),
		cmocka_unit_test(test_compose_headers),
		cmocka_unit_test(test_compose_long_and_encoded),
		cmocka_unit_test(test_compose_hostile_header_text),
		cmocka_unit_test(test_trailer_order),
		cmocka_unit_test(test_subject_fold_like_git),
		cmocka_unit_test(test_syz_test_request),
		cmocka_unit_test(test_upstream_recipients),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
