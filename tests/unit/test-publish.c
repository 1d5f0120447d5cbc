/* Unit tests of publishing: a commit message split into subject, body
 * and trailers, and those pieces put into the moderation mail. */
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
#include "common/fileio.h"
#include "daemon/jobs.h"
#include "daemon/publish.h"
#include "daemon/store.h"
#include "tests/unit/store-fixture.h"

/* ---- publish_split_message ---- */

static void test_split_subject_only(void **state)
{
	char msg[] = "net: fix a leak \n\n \n";
	struct publish_msg m;

	(void)state;
	assert_int_equal(publish_split_message(msg, &m), 0);
	/* trailing blank lines and spaces go */
	assert_string_equal(m.subject, "net: fix a leak");
	assert_string_equal(m.body, "");
	assert_int_equal(m.n_trailers, 0);
}

static void test_split_empty(void **state)
{
	char empty[] = "", blank[] = "\n \n\n  ";
	struct publish_msg m = { .n_trailers = 7 };

	(void)state;
	assert_int_equal(publish_split_message(empty, &m), -EINVAL);
	assert_int_equal(publish_split_message(blank, &m), -EINVAL);
	/* nothing is returned on failure */
	assert_int_equal(m.n_trailers, 7);
}

static void test_split_body_and_trailers(void **state)
{
	char msg[] = "tcp: take a reference in the write timer\n\n\n"
		     "The timer can fire after the socket was released.\n"
		     "Take a reference.\n\n"
		     "Second paragraph: with a colon.\n\n"
		     "Reported-by: syzbot+abc@syzkaller.appspotmail.com\n"
		     "Fixes: 0123456789ab (\"tcp: x: y\")\n"
		     "Link: https://example.org/a:b\n";
	struct publish_msg m;

	(void)state;
	assert_int_equal(publish_split_message(msg, &m), 0);
	assert_string_equal(m.subject, "tcp: take a reference in the write timer");
	/* blank lines after the subject are skipped; the trailer block is not
	 * part of the body */
	assert_string_equal(m.body, "The timer can fire after the socket was released.\n"
				    "Take a reference.\n\n"
				    "Second paragraph: with a colon.");
	assert_int_equal(m.n_trailers, 3);
	assert_string_equal(m.trailer[0].key, "Reported-by");
	assert_string_equal(m.trailer[0].value, "syzbot+abc@syzkaller.appspotmail.com");
	/* only the first colon separates key and value */
	assert_string_equal(m.trailer[1].key, "Fixes");
	assert_string_equal(m.trailer[1].value, "0123456789ab (\"tcp: x: y\")");
	assert_string_equal(m.trailer[2].key, "Link");
	assert_string_equal(m.trailer[2].value, "https://example.org/a:b");
}

static void test_split_body_is_trailers(void **state)
{
	char msg[] = "mm: fix\n\nSigned-off-by: A Person <a@example.org>\nCc: b@example.org";
	struct publish_msg m;

	(void)state;
	assert_int_equal(publish_split_message(msg, &m), 0);
	assert_string_equal(m.subject, "mm: fix");
	assert_string_equal(m.body, "");
	assert_int_equal(m.n_trailers, 2);
	assert_string_equal(m.trailer[0].key, "Signed-off-by");
	assert_string_equal(m.trailer[0].value, "A Person <a@example.org>");
	assert_string_equal(m.trailer[1].key, "Cc");
	assert_string_equal(m.trailer[1].value, "b@example.org");
}

/* One line that is no "Key: value" makes the last paragraph body text:
 * nothing of it is taken as a trailer and the body is left whole. */
static void test_split_not_trailers(void **state)
{
	static const char *const last[] = {
		"Reported-by: a@example.org\nthis line is prose",
		"Reported-by:a@example.org",	   /* no space after the colon */
		": a@example.org",		   /* no key */
		"Reported by: a@example.org",	   /* a space in the key */
		"Reported_by: a@example.org",	   /* '_' in the key */
		"Reported-by: a@example.org\n\tcontinued",
		"No colon here",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(last) / sizeof(last[0]); i++) {
		char msg[512], body[512];
		struct publish_msg m;

		snprintf(msg, sizeof(msg), "s: x\n\nFirst paragraph.\n\n%s\n", last[i]);
		snprintf(body, sizeof(body), "First paragraph.\n\n%s", last[i]);
		assert_int_equal(publish_split_message(msg, &m), 0);
		assert_string_equal(m.subject, "s: x");
		if (strcmp(m.body, body) != 0)
			fail_msg("case %zu: body \"%s\"", i, m.body);
		assert_int_equal(m.n_trailers, 0);
	}
}

/* The trailers are taken from the last paragraph only. */
static void test_split_last_paragraph(void **state)
{
	char msg[] = "s: x\n\nTested-by: t@example.org\n\nWhy it is right.\n\n"
		     "Suggested-by: u@example.org\n";
	struct publish_msg m;

	(void)state;
	assert_int_equal(publish_split_message(msg, &m), 0);
	assert_string_equal(m.body, "Tested-by: t@example.org\n\nWhy it is right.");
	assert_int_equal(m.n_trailers, 1);
	assert_string_equal(m.trailer[0].key, "Suggested-by");
	assert_string_equal(m.trailer[0].value, "u@example.org");
}

/* Any number of blank lines may stand before the trailer block. */
static void test_split_blank_lines(void **state)
{
	for (int n = 2; n <= 5; n++) {
		char msg[256];
		struct publish_msg m;

		(void)state;
		snprintf(msg, sizeof(msg), "s: x\n\nWhy it is right.%.*sReported-by: a@example.org\n",
			 n, "\n\n\n\n\n");
		assert_int_equal(publish_split_message(msg, &m), 0);
		assert_string_equal(m.body, "Why it is right.");
		assert_int_equal(m.n_trailers, 1);
		assert_string_equal(m.trailer[0].key, "Reported-by");
		assert_string_equal(m.trailer[0].value, "a@example.org");
	}
}

static void test_split_trailer_limit(void **state)
{
	size_t max = sizeof(((struct publish_msg *)0)->trailer) /
		     sizeof(((struct publish_msg *)0)->trailer[0]);
	char msg[4096];
	struct publish_msg m;
	size_t n;

	(void)state;
	n = (size_t)snprintf(msg, sizeof(msg), "s: x\n\nBody.\n\n");
	for (size_t i = 0; i < max + 8; i++)
		n += (size_t)snprintf(msg + n, sizeof(msg) - n, "Cc: p%zu@example.org\n", i);
	assert_int_equal(publish_split_message(msg, &m), 0);
	assert_int_equal(max, 32);
	assert_int_equal(m.n_trailers, max);
	assert_string_equal(m.trailer[0].value, "p0@example.org");
	assert_string_equal(m.trailer[max - 1].value, "p31@example.org");
	assert_string_equal(m.body, "Body.");
}

/* libgit2 reads the trailers; a block it reads other than line for line
 * ("Key:value", a continuation line, an empty value that takes the next
 * line as its own, trailers above a "---" line) is body text. */
static void test_split_libgit2_rules(void **state)
{
	static const char *const last[] = {
		"Cc: a@example.org\nAcked-by: \nLink: l",
		"Cc : a@example.org",
		"Signed-off-by: A <a@example.org>\nprose\nCc: b@example.org",
		"Cc: a@example.org\n# a comment",
	};
	char spaced[] = "s: x\n\nWhy.\n\nCc:  a@example.org\nLink: l";
	char cut[] = "s: x\n\nWhy.\n---\nmore\n\nReported-by: a@example.org";
	struct publish_msg m;

	(void)state;
	for (size_t i = 0; i < sizeof(last) / sizeof(last[0]); i++) {
		char msg[512], body[512];

		snprintf(msg, sizeof(msg), "s: x\n\nFirst paragraph.\n\n%s\n", last[i]);
		snprintf(body, sizeof(body), "First paragraph.\n\n%s", last[i]);
		assert_int_equal(publish_split_message(msg, &m), 0);
		if (strcmp(m.body, body) != 0)
			fail_msg("case %zu: body \"%s\"", i, m.body);
		assert_int_equal(m.n_trailers, 0);
	}
	/* the value is the line's text after ": ", as it always was */
	assert_int_equal(publish_split_message(spaced, &m), 0);
	assert_int_equal(m.n_trailers, 2);
	assert_string_equal(m.trailer[0].value, " a@example.org");
	assert_string_equal(m.body, "Why.");
	assert_int_equal(publish_split_message(cut, &m), 0);
	assert_int_equal(m.n_trailers, 0);
	assert_string_equal(m.body, "Why.\n---\nmore\n\nReported-by: a@example.org");
}

/* ---- the moderation mail of a patch (a plain source folder: mail only) ---- */

struct pubfix {
	struct fixture f;
	char src[128];
	struct config *cfg;
	int64_t bug;
};

static int pub_setup(void **state)
{
	struct pubfix *p = calloc(1, sizeof(*p));
	void *inner = NULL;

	if (!p || setup(&inner) < 0)
		return -1;
	p->f = *(struct fixture *)inner;
	free(inner);
	snprintf(p->src, sizeof(p->src), "%s/src", p->f.dir);
	if (mkdir_p(p->src, 0755) < 0 || config_new_empty(&p->cfg) < 0 ||
	    config_set(p->cfg, "tree", "net", "path", p->src) < 0 ||
	    config_set(p->cfg, "tree", "net", "moderation-address", "mod@example.org") < 0 ||
	    config_set(p->cfg, "mail", NULL, "from", "kfix bot <kfix@bot.example.org>") < 0)
		return -1;
	*state = p;
	return 0;
}

static int pub_teardown(void **state)
{
	struct pubfix *p = *state;
	struct fixture *f = malloc(sizeof(*f));
	void *inner = f;

	config_free(p->cfg);
	*f = p->f;
	free(p);
	return teardown(&inner);
}

static int64_t validated_bug(struct store *s)
{
	struct store_bug b = { .source = "syzbot", .source_id = "abc", .title = "t",
			       .tree = "net" };
	int64_t id = 0;
	bool created;

	assert_int_equal(store_bug_add(s, &b, &id, &created), 0);
	assert_int_equal(store_bug_set_state(s, id, "reproducing", NULL), 0);
	assert_int_equal(store_bug_set_state(s, id, "repairing", NULL), 0);
	assert_int_equal(store_bug_set_state(s, id, "validated", NULL), 0);
	return id;
}

/* Runs the publish job of patch like a job process would. */
static int run_publish(struct pubfix *p, int64_t patch, char **ret_error, bool *ret_permanent)
{
	struct job_ctx ctx = { .cfg = p->cfg, .store = p->f.s, .owner = "test:1" };
	struct store_job *j = NULL;
	int r;

	assert_int_equal(publish_queue(p->f.s, patch, "moderation", NULL), 0);
	assert_int_equal(store_job_lease(p->f.s, "test:1", 60000000, &j), 0);
	assert_string_equal(j->kind, "publish");
	ctx.job = j;
	r = job_publish_run(&ctx);
	*ret_error = ctx.error;
	*ret_permanent = ctx.permanent;
	free(ctx.result);
	store_job_free(j);
	return r;
}

static char *outbox_mail(struct store *s)
{
	struct store_outbox **o = NULL;
	size_t n = 0;
	char *mail;

	assert_int_equal(store_outbox_list(s, "pending", 0, &o, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(o[0]->kind, "mail");
	mail = strdup(o[0]->payload);
	store_outbox_list_free(o, n);
	return mail;
}

static void assert_has(const char *text, const char *s)
{
	if (!strstr(text, s))
		fail_msg("missing \"%s\" in:\n%s", s, text);
}

static size_t count(const char *text, const char *s)
{
	size_t n = 0;

	for (const char *c = text; (c = strstr(c, s)); c++)
		n++;
	return n;
}

static void test_moderation_mail(void **state)
{
	struct pubfix *p = *state;
	struct store_patch sp = {
		.diff = "diff --git a/net/x.c b/net/x.c\n--- a/net/x.c\n+++ b/net/x.c\n"
			"@@ -1 +1 @@\n-a\n+b\n",
		.subject = "net: fix the timer",
		.message = "net: fix the timer\n\nTake a reference before arming it.\n\n"
			   "Reported-by: syzbot+abc@syzkaller.appspotmail.com\n"
			   "Fixes: 0123456789ab (\"net: add the timer\")\n",
		.explanation = "The timer outlived the socket.",
	};
	struct store_patch *got = NULL;
	char *err = NULL, *mail;
	bool permanent = true;
	int64_t id;

	sp.bug_id = validated_bug(p->f.s);
	assert_int_equal(store_patch_add(p->f.s, &sp, &id, NULL), 0);
	assert_int_equal(run_publish(p, id, &err, &permanent), 0);
	assert_null(err);
	mail = outbox_mail(p->f.s);
	assert_has(mail, "Subject: [PATCH RFC] net: fix the timer");
	{
		_cleanup_free_ char *sid = NULL, *want = NULL;

		/* the store's random name makes the Message-ID its own */
		assert_int_equal(store_kv_get(p->f.s, "store.id", &sid), 0);
		assert_true(asprintf(&want, "Message-ID: <kfix-1-v1-rfc.%s@bot.example.org>", sid) > 0);
		assert_has(mail, want);
	}
	assert_has(mail, "To: mod@example.org");
	assert_has(mail, "Take a reference before arming it.");
	assert_has(mail, "Reported-by: syzbot+abc@syzkaller.appspotmail.com\n");
	assert_has(mail, "Fixes: 0123456789ab (\"net: add the timer\")\n");
	/* each trailer once: taken out of the body, written as trailers */
	assert_int_equal(count(mail, "Reported-by: syzbot+abc"), 1);
	assert_int_equal(count(mail, "Fixes: 0123456789ab"), 1);
	/* the RFC to the moderators is signed off by nobody */
	assert_null(strstr(mail, "Signed-off-by:"));
	assert_has(mail, "+b\n");
	free(mail);
	assert_int_equal(store_patch_get(p->f.s, id, &got), 0);
	assert_string_equal(got->state, "awaiting-approval");
	assert_string_equal(got->sent_to, "mod@example.org");
	store_patch_free(got);
}

static void test_no_message(void **state)
{
	struct pubfix *p = *state;
	struct store_patch sp = { .diff = "diff --git a/x b/x\n", .subject = "x",
				  .message = "\n \n" };
	char *err = NULL;
	bool permanent = false;
	int64_t id;

	sp.bug_id = validated_bug(p->f.s);
	assert_int_equal(store_patch_add(p->f.s, &sp, &id, NULL), 0);
	assert_int_equal(run_publish(p, id, &err, &permanent), -EINVAL);
	assert_true(permanent);
	assert_non_null(err);
	assert_has(err, "has no commit message");
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_subject_only),
		cmocka_unit_test(test_split_empty),
		cmocka_unit_test(test_split_body_and_trailers),
		cmocka_unit_test(test_split_body_is_trailers),
		cmocka_unit_test(test_split_not_trailers),
		cmocka_unit_test(test_split_last_paragraph),
		cmocka_unit_test(test_split_blank_lines),
		cmocka_unit_test(test_split_trailer_limit),
		cmocka_unit_test(test_split_libgit2_rules),
		cmocka_unit_test_setup_teardown(test_moderation_mail, pub_setup, pub_teardown),
		cmocka_unit_test_setup_teardown(test_no_message, pub_setup, pub_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
