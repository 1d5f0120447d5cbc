/* Unit tests of hooks/: dashboard JSON, forge events, signatures, mail
 * Message-IDs and the metrics registry. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/conf.h"
#include "common/strutil.h"
#include "hooks/auth.h"
#include "hooks/feed.h"
#include "hooks/forge.h"
#include "hooks/forge-api.h"
#include "hooks/metrics.h"
#include "hooks/syzbot.h"
#include "hooks/webhook.h"

#define BASE "https://syzkaller.appspot.com"

static void test_link(void **state)
{
	char *s = NULL;

	assert_int_equal(syzbot_link(BASE "/", "/text?tag=ReproC&amp;x=16e2&#38;y=1", &s), 0);
	assert_string_equal(s, BASE "/text?tag=ReproC&x=16e2&y=1");
	free(s);
	assert_int_equal(syzbot_link(BASE, "/bug?extid=decf42d66dced481afc1", &s), 0);
	assert_string_equal(s, BASE "/bug?extid=decf42d66dced481afc1");
	free(s);
	/* unknown entities stay as they are; control characters are refused */
	assert_int_equal(syzbot_link(BASE, "/x?a=1&b;c", &s), 0);
	assert_string_equal(s, BASE "/x?a=1&b;c");
	free(s);
	assert_int_equal(syzbot_link(BASE, "/x?a=&#10;", &s), 0);
	assert_string_equal(s, BASE "/x?a=&#10;");
	free(s);
	assert_int_equal(syzbot_link(BASE, "/x\ny", &s), -EINVAL);
	assert_int_equal(syzbot_link(BASE, "javascript:alert(1)", &s), -EINVAL);
	assert_int_equal(syzbot_link(BASE, "", &s), -EINVAL);

	s = syzbot_link_extid(BASE "/bug?extid=decf42d66dced481afc1");
	assert_string_equal(s, "decf42d66dced481afc1");
	free(s);
	assert_null(syzbot_link_extid(BASE "/bug?id=1234"));
	assert_null(syzbot_link_extid(BASE "/bug?notextid=12"));
}

static const char list_json[] =
	"{\"version\": 1, \"Bugs\": ["
	"{\"title\": \"KASAN: use-after-free Read in foo\", \"link\": \"/bug?extid=aaaa11\","
	" \"last-updated\": \"2026-08-01T10:00:00Z\"},"
	"{\"title\": \"WARNING in bar\", \"link\": \"/bug?extid=bbbb22\","
	" \"last-updated\": \"2026-08-02T10:00:00Z\", \"fix-commits\": [{\"title\": \"fix bar\"}]}"
	"]}";

static void test_list(void **state)
{
	struct syzbot_list *l = NULL;
	char *err = NULL;

	assert_int_equal(syzbot_parse_list(list_json, strlen(list_json), BASE, &l, &err), 0);
	assert_int_equal(l->n, 2);
	assert_string_equal(l->bugs[0].extid, "aaaa11");
	assert_string_equal(l->bugs[0].link, BASE "/bug?extid=aaaa11");
	assert_int_equal(l->bugs[0].n_fix_commits, 0);
	assert_int_equal(l->bugs[1].n_fix_commits, 1);
	syzbot_list_free(l);
}

static void expect_list_error(const char *json, const char *msg_part)
{
	struct syzbot_list *l = NULL;
	char *err = NULL;

	assert_int_equal(syzbot_parse_list(json, strlen(json), BASE, &l, &err), -EBADMSG);
	assert_non_null(err);
	if (!strstr(err, msg_part))
		fail_msg("error '%s' does not mention '%s'", err, msg_part);
	free(err);
}

static void test_list_errors(void **state)
{
	expect_list_error("{\"version\": 2, \"Bugs\": []}", "version 2");
	expect_list_error("{\"Bugs\": []}", "\"version\"");
	expect_list_error("{\"version\": 1, \"bugs\": []}", "\"Bugs\"");
	expect_list_error("{\"version\": 1, \"Bugs\": [{\"title\": \"x\"}]}", "required");
	expect_list_error("{\"version\": 1, \"Bugs\": [{\"title\": 5, \"link\": \"/bug?extid=1\"}]}",
			  "not a string");
	expect_list_error("{\"version\": 1, \"Bugs\": [{\"title\": \"t\", \"link\": \"/bug?id=1\"}]}",
			  "extid");
	expect_list_error("{\"version\": 1, \"Bugs\": [", "not JSON");
	expect_list_error("[1]", "not an object");
}

static const char bug_json[] =
	"{\"version\": 1, \"title\": \"KASAN: slab-use-after-free Read in hci_send_acl\","
	" \"id\": \"7b8d3e1f\", \"status\": \"open\", \"first-crash\": \"2026-07-01T00:00:00Z\","
	" \"last-crash\": \"2026-08-01T00:00:00Z\", \"fix-commits\": [],"
	" \"crashes\": ["
	"  {\"title\": \"KASAN: slab-use-after-free Read in hci_send_acl\","
	"   \"syz-reproducer\": \"/text?tag=ReproSyz&amp;x=11\", \"c-reproducer\": \"\","
	"   \"kernel-source-git\": \"https://git.kernel.org/torvalds/linux.git\","
	"   \"kernel-source-commit\": \"aaaa\", \"crash-report-link\": \"/text?tag=CrashReport&amp;x=12\"},"
	"  {\"title\": \"KASAN: slab-use-after-free Read in hci_send_acl\","
	"   \"syz-reproducer\": \"/text?tag=ReproSyz&amp;x=21\", \"c-reproducer\": \"/text?tag=ReproC&amp;x=22\","
	"   \"repro-opts\": \"{threaded:true}\", \"kernel-config\": \"/text?tag=KernelConfig&amp;x=23\","
	"   \"kernel-source-git\": \"https://git.kernel.org/torvalds/linux.git\","
	"   \"kernel-source-commit\": \"bbbb\", \"syzkaller-git\": \"https://github.com/google/syzkaller\","
	"   \"syzkaller-commit\": \"cccc\", \"crash-report-link\": \"/text?tag=CrashReport&amp;x=24\","
	"   \"compiler-description\": \"gcc\", \"architecture\": \"\"}"
	" ]}";

static void test_bug(void **state)
{
	struct syzbot_bug *b = NULL;
	const struct syzbot_crash *c;
	char *err = NULL;

	assert_int_equal(syzbot_parse_bug(bug_json, strlen(bug_json), BASE, &b, &err), 0);
	assert_string_equal(b->id, "7b8d3e1f");
	assert_string_equal(b->status, "open");
	assert_int_equal(b->n_crashes, 2);
	assert_null(b->crashes[0].c_reproducer); /* "" is no link */
	c = syzbot_bug_pick_crash(b, true);
	assert_ptr_equal(c, &b->crashes[1]);
	assert_string_equal(c->c_reproducer, BASE "/text?tag=ReproC&x=22");
	assert_string_equal(c->kernel_config, BASE "/text?tag=KernelConfig&x=23");
	assert_string_equal(c->report_link, BASE "/text?tag=CrashReport&x=24");
	assert_string_equal(c->kernel_source_commit, "bbbb");
	assert_string_equal(c->repro_opts, "{threaded:true}");
	syzbot_bug_free(b);

	err = NULL;
	assert_int_equal(syzbot_parse_bug("{\"version\":1,\"title\":\"t\",\"crashes\":{}}", 38,
					  BASE, &b, &err), -EBADMSG);
	assert_non_null(strstr(err, "crashes"));
	free(err);
}

static struct forge_event *parse_forge(enum forge_provider p, const char *type,
				       const char *json, int want)
{
	struct forge_event *e = NULL;
	char *err = NULL;
	int r = forge_event_parse(p, type, json, strlen(json), &e, &err);

	if (r != want)
		fail_msg("forge_event_parse: %d (%s), want %d", r, err ? err : "", want);
	free(err);
	return e;
}

static void test_forge(void **state)
{
	struct forge_event *e;

	e = parse_forge(FORGE_GITHUB, "push",
			"{\"ref\": \"refs/heads/kfix/12/v3\", \"after\": \"abc\","
			" \"repository\": {\"full_name\": \"kfix/linux\"}, \"sender\": {\"login\": \"bob\"}}",
			0);
	assert_int_equal(e->kind, FORGE_PUSH);
	assert_int_equal(e->bug, 12);
	assert_int_equal(e->version, 3);
	assert_string_equal(e->branch, "kfix/12/v3");
	assert_string_equal(e->author, "bob");
	forge_event_free(e);

	e = parse_forge(FORGE_GITHUB, "pull_request_review_comment",
			"{\"comment\": {\"body\": \"> #kfix upstream\\nLooks good.\\n#kfix retest\\n\","
			" \"user\": {\"login\": \"alice\"}}, \"pull_request\": {\"head\": {\"ref\": \"kfix/7/v1\"}},"
			" \"repository\": {\"full_name\": \"kfix/linux\"}}",
			0);
	assert_int_equal(e->kind, FORGE_COMMENT);
	assert_string_equal(e->command, "retest");
	assert_int_equal(e->bug, 7);
	assert_string_equal(e->author, "alice");
	forge_event_free(e);

	/* GitHub issue_comment on a PR: the branch is only in the title */
	e = parse_forge(FORGE_GITHUB, "issue_comment",
			"{\"comment\": {\"body\": \"#kfix upstream\", \"user\": {\"login\": \"m\"}},"
			" \"issue\": {\"title\": \"[kfix/9/v2] net: fix uaf\"},"
			" \"repository\": {\"full_name\": \"kfix/linux\"}}",
			0);
	assert_string_equal(e->command, "upstream");
	assert_int_equal(e->bug, 9);
	forge_event_free(e);

	e = parse_forge(FORGE_GITLAB, "Note Hook",
			"{\"object_attributes\": {\"note\": \"#kfix reject\", \"id\": 31}, \"user\": {\"username\": \"g\"},"
			" \"project\": {\"path_with_namespace\": \"kfix/linux\", \"id\": 42},"
			" \"merge_request\": {\"source_branch\": \"kfix/5/v1\", \"iid\": 9}}",
			0);
	assert_string_equal(e->command, "reject");
	assert_int_equal(e->bug, 5);
	assert_string_equal(e->author, "g");
	/* where to answer: the merge request of the project, and the note */
	assert_int_equal(e->number, 9);
	assert_int_equal(e->project, 42);
	assert_int_equal(e->comment_id, 31);
	forge_event_free(e);

	/* a review on GitHub: the pull request's number, the review's id;
	 * "#kfix repair" is a command */
	e = parse_forge(FORGE_GITHUB, "pull_request_review",
			"{\"review\": {\"body\": \"#kfix repair\", \"id\": 88}, \"sender\": {\"login\": \"a\"},"
			" \"pull_request\": {\"number\": 17, \"head\": {\"ref\": \"kfix/3/v2\"}},"
			" \"repository\": {\"full_name\": \"kfix/linux\"}}",
			0);
	assert_string_equal(e->command, "repair");
	assert_int_equal(e->number, 17);
	assert_int_equal(e->comment_id, 88);
	assert_int_equal(e->version, 2);
	forge_event_free(e);

	e = parse_forge(FORGE_GITEA, "issue_comment",
			"{\"comment\": {\"body\": \"just a remark\", \"user\": {\"login\": \"x\"}},"
			" \"repository\": {\"full_name\": \"kfix/linux\"}}",
			0);
	assert_null(e->command);
	assert_int_equal(e->bug, 0);
	forge_event_free(e);

	e = parse_forge(FORGE_FORGEJO, "ping", "{}", 0);
	assert_int_equal(e->kind, FORGE_PING);
	forge_event_free(e);

	parse_forge(FORGE_GITHUB, "push", "{\"ref\": 1}", -EBADMSG);
	parse_forge(FORGE_GITHUB, "push", "{\"ref\": \"x\"", -EBADMSG);
	parse_forge(FORGE_GITHUB, "push", "\"\\ud800\"", -EBADMSG);
	parse_forge(FORGE_GITHUB, NULL, "{}", -EBADMSG);
	parse_forge(FORGE_GITHUB, "issue_comment",
		    "{\"comment\": {\"body\": \"#kfix format-disk\"}, \"repository\": {\"full_name\": \"a/b\"}}",
		    -EBADMSG);
	/* invalid UTF-8 is not JSON */
	parse_forge(FORGE_GITHUB, "push", "{\"ref\": \"\xff\xfe\"}", -EBADMSG);
}

/* An answer's marker is the same for one key, differs between keys, and
 * is an HTML comment a forge does not show; a page of comments holds it
 * only when a body has it whole. */
static void test_forge_api_marker(void **state)
{
	char m1[FORGE_API_MARKER_MAX], m2[FORGE_API_MARKER_MAX], again[FORGE_API_MARKER_MAX];
	_cleanup_free_ char *page = NULL, *cut = NULL;
	size_t count = 99;

	(void)state;
	assert_int_equal(forge_api_marker("forge:gh:kfix/linux#5:kfix/1/v2", m1), 0);
	assert_int_equal(forge_api_marker("forge:gh:kfix/linux#5:kfix/1/v2", again), 0);
	assert_int_equal(forge_api_marker("forge:gh:kfix/linux#5:kfix/1/v3", m2), 0);
	assert_string_equal(m1, again);
	assert_string_not_equal(m1, m2);
	assert_true(startswith(m1, "<!-- ") && endswith(m1, " -->"));
	/* nothing inside ends the comment early */
	assert_ptr_equal(strstr(m1 + 4, "--"), m1 + strlen(m1) - 3);

	assert_true(asprintf(&page, "[{\"id\": 1, \"body\": \"lgtm\"}, {\"id\": 2, \"body\": \"v2\\n\\n%s\"},"
				   " {\"id\": 3}]", m1) > 0);
	assert_int_equal(forge_api_comments_hold(page, strlen(page), m1, &count), 1);
	assert_int_equal(count, 3);
	assert_int_equal(forge_api_comments_hold(page, strlen(page), m2, &count), 0);
	assert_int_equal(count, 3);
	/* a body with a part of the marker only */
	assert_true(asprintf(&cut, "[{\"body\": \"%.20s\"}]", m1) > 0);
	assert_int_equal(forge_api_comments_hold(cut, strlen(cut), m1, &count), 0);
	assert_int_equal(forge_api_comments_hold("[]", 2, m1, &count), 0);
	assert_int_equal(count, 0);
	count = 7;
	assert_int_equal(forge_api_comments_hold("{\"body\": \"x\"}", 13, m1, &count), -EBADMSG);
	assert_int_equal(forge_api_comments_hold("[{\"body\"", 8, m1, &count), -EBADMSG);
	assert_int_equal(count, 7);
}

static void test_forge_api_url(void **state)
{
	struct forge_thread gh = { FORGE_GITHUB, "kfix/linux", 5, 0 };
	struct forge_thread gt = { FORGE_GITEA, "kfix/linux", 6, 0 };
	struct forge_thread gl = { FORGE_GITLAB, "kfix/linux", 7, 42 };
	struct forge_thread bad = { FORGE_GITHUB, "../x", 5, 0 };
	char *u = NULL;

	(void)state;
	assert_int_equal(forge_api_comment_url("https://api.github.com/", &gh, &u), 0);
	assert_string_equal(u, "https://api.github.com/repos/kfix/linux/issues/5/comments");
	free(u);
	assert_int_equal(forge_api_comment_url("https://git.example.org/api/v1", &gt, &u), 0);
	assert_string_equal(u, "https://git.example.org/api/v1/repos/kfix/linux/issues/6/comments");
	free(u);
	assert_int_equal(forge_api_comment_url("https://gitlab.com/api/v4", &gl, &u), 0);
	assert_string_equal(u, "https://gitlab.com/api/v4/projects/42/merge_requests/7/notes");
	free(u);
	u = NULL;
	assert_int_equal(forge_api_comment_url("https://api.github.com", &bad, &u), -EINVAL);
	gl.project = 0;
	assert_int_equal(forge_api_comment_url("https://gitlab.com/api/v4", &gl, &u), -EINVAL);
	gh.number = 0;
	assert_int_equal(forge_api_comment_url("https://api.github.com", &gh, &u), -EINVAL);
	gh.number = 5;
	assert_int_equal(forge_api_comment_url("file:///etc", &gh, &u), -EINVAL);
	assert_null(u);
}

static void test_branch_and_command(void **state)
{
	int64_t bug = 0;
	int v = 0;
	char *w = NULL;

	assert_int_equal(forge_find_kfix_branch("refs/heads/kfix/123/v4", &bug, &v), 0);
	assert_int_equal(bug, 123);
	assert_int_equal(v, 4);
	assert_int_equal(forge_find_kfix_branch("notkfix/1/v1", &bug, &v), -ENOENT);
	assert_int_equal(forge_find_kfix_branch("kfix/0/v1", &bug, &v), -ENOENT);
	assert_int_equal(forge_find_kfix_branch("kfix/1/v1x", &bug, &v), -ENOENT);
	assert_int_equal(forge_find_kfix_branch(NULL, &bug, &v), -ENOENT);

	assert_int_equal(kfix_command_find("hello\n#kfix: retest\n", &w), 0);
	assert_string_equal(w, "retest");
	free(w);
	assert_int_equal(kfix_command_find("> #kfix upstream\n #kfix upstream", &w), -ENOENT);
	assert_int_equal(kfix_command_find("#kfixupstream", &w), -ENOENT);
	assert_int_equal(kfix_command_find("#kfix upstreamx", &w), -EINVAL);
}

static void test_hmac(void **state)
{
	char hex[AUTH_SHA256_HEX_LEN + 1];
	const char *msg = "what do ya want for nothing?";
	/* RFC 4231, test case 2 */
	const char *want = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";

	assert_int_equal(auth_hmac_sha256_hex("Jefe", NULL, msg, strlen(msg), hex), 0);
	assert_string_equal(hex, want);
	assert_int_equal(auth_hmac_sha256_hex("Jefe", "what do ya ", "want for nothing?", 17, hex), 0);
	assert_string_equal(hex, want);
	assert_true(auth_hmac_sha256_verify("Jefe", NULL, msg, strlen(msg), want));
	assert_true(auth_hmac_sha256_verify("Jefe", NULL, msg, strlen(msg),
					    "5BDCC146BF60754E6A042426089575C75A003F089D2739839DEC58B964EC3843"));
	assert_false(auth_hmac_sha256_verify("Jefe", NULL, msg, strlen(msg) - 1, want));
	assert_false(auth_hmac_sha256_verify("jefe", NULL, msg, strlen(msg), want));
	assert_false(auth_hmac_sha256_verify("Jefe", NULL, msg, strlen(msg), "5bdc"));
	assert_false(auth_hmac_sha256_verify("", NULL, msg, strlen(msg), want));
	assert_false(auth_hmac_sha256_verify("Jefe", NULL, msg, strlen(msg), NULL));

	assert_true(auth_secret_equal("token", "token"));
	assert_false(auth_secret_equal("token", "token2"));
	assert_false(auth_secret_equal("", ""));
	assert_false(auth_secret_equal(NULL, "x"));
	assert_string_equal(auth_bearer("Bearer abc"), "abc");
	assert_string_equal(auth_bearer("bearer   abc"), "abc");
	assert_null(auth_bearer("Basic abc"));
	assert_null(auth_bearer("Bearer "));
	assert_null(auth_bearer(NULL));
}

static void test_message_id(void **state)
{
	const char *m1 = "From: a@example.org\r\nSubject: hi\r\nMessage-ID:\r\n <abc.123@example.org>\r\n\r\nbody";
	const char *m2 = "From: a@example.org\nmessage-id: <x@y>\n\nbody";
	const char *m3 = "From: a@example.org\n\nMessage-ID: <x@y>\n";
	char *id = NULL;

	assert_int_equal(webhook_mail_message_id(m1, strlen(m1), &id), 0);
	assert_string_equal(id, "abc.123@example.org");
	free(id);
	assert_int_equal(webhook_mail_message_id(m2, strlen(m2), &id), 0);
	assert_string_equal(id, "x@y");
	free(id);
	assert_int_equal(webhook_mail_message_id(m3, strlen(m3), &id), -ENOENT);
	assert_int_equal(webhook_mail_message_id("garbage without colon\n\n", 23, &id), -EBADMSG);
	assert_int_equal(webhook_mail_message_id(" folded first\n", 14, &id), -EBADMSG);
	assert_int_equal(webhook_mail_message_id("", 0, &id), -EBADMSG);
	assert_int_equal(webhook_mail_message_id("Message-ID: <a b>\n\n", 19, &id), -EBADMSG);
}

/* A [feed] section is read in one go, with the schema's defaults and
 * the poller's floors applied. */
static void test_feed_conf(void **state)
{
	struct config *cfg = NULL;
	struct feed_conf c = {};

	assert_int_equal(config_new_empty(&cfg), 0);
	assert_int_equal(feed_conf_from_config(cfg, "sb", &c), -EINVAL);
	assert_null(c.base);
	assert_int_equal(config_set(cfg, "feed", "sb", "url", "https://example.org/upstream//"), 0);
	assert_int_equal(config_set(cfg, "feed", "sb", "request-interval", "0"), 0);
	assert_int_equal(config_set(cfg, "feed", "sb", "subsystems", "net"), 0);
	assert_int_equal(feed_conf_from_config(cfg, "sb", &c), 0);
	assert_string_equal(c.base, "https://example.org/upstream");
	assert_string_equal(c.ns, "upstream");
	assert_null(c.tree);
	assert_null(c.token);
	assert_null(c.trees);
	assert_true(strv_contains(c.subsystems, "net"));
	assert_true(c.c_only);
	assert_int_equal(c.max_per_day, 10);
	assert_int_equal(c.gap, 1000000);	/* one request a second without a token */
	assert_int_equal(c.interval, 600000000);
	assert_int_equal(c.max_repro, 1u << 20);
	feed_conf_clear(&c);
	config_free(cfg);
}

static void test_metrics(void **state)
{
	struct metrics *m = NULL;
	struct buf out = BUF_INIT(1 << 20);

	assert_int_equal(metrics_new(&m), 0);
	metrics_counter_add(m, "kfix_x_total", "X.", "code=\"200\"", 1);
	metrics_counter_add(m, "kfix_x_total", "X.", "code=\"200\"", 2);
	metrics_gauge_set(m, "kfix_g", "G.", NULL, 5);
	metrics_observe(m, "kfix_d_seconds", "D.", "route=\"/a\"", 0.02);
	metrics_observe(m, "kfix_d_seconds", "D.", "route=\"/a\"", 3);
	/* the same name with another type is refused, not mixed */
	metrics_gauge_set(m, "kfix_x_total", "X.", NULL, 1);
	assert_int_equal(metrics_render(m, &out), 0);
	assert_non_null(strstr(out.data, "# TYPE kfix_x_total counter\nkfix_x_total{code=\"200\"} 3\n"));
	assert_non_null(strstr(out.data, "kfix_g 5\n"));
	assert_non_null(strstr(out.data, "kfix_d_seconds_bucket{route=\"/a\",le=\"0.025\"} 1\n"));
	assert_non_null(strstr(out.data, "kfix_d_seconds_bucket{route=\"/a\",le=\"+Inf\"} 2\n"));
	assert_non_null(strstr(out.data, "kfix_d_seconds_count{route=\"/a\"} 2\n"));
	assert_non_null(strstr(out.data, "kfix_metrics_dropped_total 1\n"));
	buf_free(&out);
	metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_list_errors),
		cmocka_unit_test(test_bug),
		cmocka_unit_test(test_forge),
		cmocka_unit_test(test_forge_api_url),
		cmocka_unit_test(test_forge_api_marker),
		cmocka_unit_test(test_branch_and_command),
		cmocka_unit_test(test_hmac),
		cmocka_unit_test(test_message_id),
		cmocka_unit_test(test_feed_conf),
		cmocka_unit_test(test_metrics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
