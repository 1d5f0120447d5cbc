/* Unit tests of the review intake: which replies are kept against a kfix
 * patch, which trailers a reply gives, whose comments ask for a new
 * version, the limits, and the trailers collected over versions. */
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
#include <jansson.h>

#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "daemon/intake-review.h"
#include "daemon/store.h"
#include "mail/parse.h"
#include "tests/unit/store-fixture.h"

#define RFC "kfix-1-v1-rfc@kfix.example.org"
#define UPSTREAM "kfix-1-v1@kfix.example.org"

struct rfix {
	struct fixture f;
	struct config *cfg;
	int64_t bug, patch;
};

static int r_setup(void **state)
{
	struct rfix *x = calloc(1, sizeof(*x));
	struct store_bug b = { .source = "syzbot", .source_id = "abc", .title = "t",
			       .tree = "net" };
	struct store_patch p = { .diff = "diff --git a/x b/x\n", .subject = "net: fix" };
	void *inner = NULL;
	bool created;

	if (!x || setup(&inner) < 0)
		return -1;
	x->f = *(struct fixture *)inner;
	free(inner);
	if (config_new_empty(&x->cfg) < 0 ||
	    config_set(x->cfg, "mail", NULL, "from", "kfix <kfix@kfix.example.org>") < 0 ||
	    config_set(x->cfg, "tree", "net", "url", "https://git.example.org/net.git") < 0 ||
	    config_set(x->cfg, "tree", "net", "allow-commands", "@mods.example.org") < 0 ||
	    store_bug_add(x->f.s, &b, &x->bug, &created) < 0)
		return -1;
	p.bug_id = x->bug;
	if (store_patch_add(x->f.s, &p, &x->patch, NULL) < 0 ||
	    store_patch_mail_add(x->f.s, x->patch, RFC, "moderation", "[\"mod@example.org\"]") < 0 ||
	    store_patch_mail_add(x->f.s, x->patch, UPSTREAM, "upstream",
				 "[\"maint@example.org\",\"list@vger.example.org\"]") < 0)
		return -1;
	*state = x;
	return 0;
}

static int r_teardown(void **state)
{
	struct rfix *x = *state;
	struct fixture *f = malloc(sizeof(*f));
	void *inner = f;

	config_free(x->cfg);
	*f = x->f;
	free(x);
	return teardown(&inner);
}

static struct mail *parse(const char *raw)
{
	struct mail *m = NULL;

	assert_int_equal(mail_parse(raw, strlen(raw), 0, &m, NULL), 0);
	return m;
}

/* A reply: headers given in full (From, Message-ID, threading), then the
 * body. */
static char *reply(const char *headers, const char *body)
{
	char *raw = NULL;

	assert_true(asprintf(&raw, "%sSubject: Re: [PATCH] net: fix\n\n%s", headers, body) > 0);
	return raw;
}

/* intake_review_new, then intake_review_apply when it kept something:
 * 1 when applied, 0 when not kept. */
static int take(struct rfix *x, const char *raw, bool has_command, int64_t *ret_bug,
		const char **ret_reason)
{
	_cleanup_(mail_freep) struct mail *m = parse(raw);
	struct intake_review *r = NULL;

	*ret_bug = -1;
	*ret_reason = NULL;
	assert_int_equal(intake_review_new(m, has_command, &r), 0);
	if (!r)
		return 0;
	assert_int_equal(intake_review_apply(x->f.s, x->cfg, r, ret_bug, ret_reason), 0);
	intake_review_free(r);
	return 1;
}

static struct store_review *only_review(struct rfix *x)
{
	struct store_review **vs = NULL, *v;
	size_t n = 0;

	assert_int_equal(store_review_list(x->f.s, x->bug, 0, 0, &vs, &n), 0);
	assert_int_equal(n, 1);
	v = vs[0];
	vs[0] = NULL;
	store_review_list_free(vs, n);
	return v;
}

static size_t count_reviews(struct rfix *x)
{
	struct store_review **vs = NULL;
	size_t n = 0;

	assert_int_equal(store_review_list(x->f.s, x->bug, 0, 0, &vs, &n), 0);
	store_review_list_free(vs, n);
	return n;
}

static size_t count_events(struct store *s, const char *kind)
{
	struct store_event **ev = NULL;
	struct store_query q = { .state = kind };
	size_t n = 0;

	assert_int_equal(store_event_query(s, &q, &ev, &n), 0);
	store_event_list_free(ev, n);
	return n;
}

static void test_not_kept(void **state)
{
	struct rfix *x = *state;
	static const char *const raws[] = {
		/* no reply at all */
		"From: a@example.org\nMessage-ID: <n1@example.org>\nSubject: hello\n\nSome words.\n",
		/* another thread of the list */
		"From: a@example.org\nMessage-ID: <n2@example.org>\n"
		"In-Reply-To: <other@example.org>\nReferences: <root@example.org> <other@example.org>\n"
		"Subject: Re: x\n\nSome words.\n",
		/* kfix's thread, but neither trailers nor comments */
		"From: a@example.org\nMessage-ID: <n3@example.org>\nIn-Reply-To: <" RFC ">\n"
		"Subject: Re: x\n\n> quoted only\n",
		/* a trailer for somebody else, no comments */
		"From: a@example.org\nMessage-ID: <n4@example.org>\nIn-Reply-To: <" RFC ">\n"
		"Subject: Re: x\n\nReviewed-by: B <b@example.org>\n",
		/* no Message-ID */
		"From: a@example.org\nIn-Reply-To: <" RFC ">\nSubject: Re: x\n\nPlease change it.\n",
	};
	const char *why;
	int64_t bug;

	for (size_t i = 0; i < sizeof(raws) / sizeof(raws[0]); i++)
		if (take(x, raws[i], false, &bug, &why) != 0)
			fail_msg("mail %zu was kept", i);
	/* words next to a command ask for nothing */
	assert_int_equal(take(x, "From: a@example.org\nMessage-ID: <n5@example.org>\n"
				 "In-Reply-To: <" RFC ">\nSubject: Re: x\n\nPlease change it.\n",
			      true, &bug, &why), 0);
	assert_int_equal(count_reviews(x), 0);
}

static void test_trailers(void **state)
{
	struct rfix *x = *state;
	_cleanup_free_ char *raw = reply(
		"From: Rev Iewer <rev@example.org>\nMessage-ID: <t1@example.org>\n"
		"In-Reply-To: <" UPSTREAM ">\n",
		"Looks right.\n\n"
		"Reviewed-by: Rev Iewer <rev@example.org>\n"
		"Acked-BY: rev@example.org\n"
		"Tested-by: Some One <other@example.org>\n"
		"Signed-off-by: Rev Iewer <rev@example.org>\n"
		"Suggested-by: Rev Iewer <rev@example.org.evil.example>\n"
		"Reported-by: Rev Iewer <REV@Example.org>\n");
	struct store_review *v;
	const char *why;
	int64_t bug;

	assert_int_equal(take(x, raw, false, &bug, &why), 1);
	assert_int_equal(bug, x->bug);
	assert_null(why);
	v = only_review(x);
	/* the sender's own tags of the collected kinds, keys as the kernel
	 * spells them */
	{
		_cleanup_json_ json_t *a = json_loads(v->trailers, 0, NULL);

		assert_non_null(a);
		assert_int_equal(json_array_size(a), 3);
		assert_string_equal(json_get_str(json_array_get(a, 0), "key"), "Reviewed-by");
		assert_string_equal(json_get_str(json_array_get(a, 0), "value"),
				    "Rev Iewer <rev@example.org>");
		assert_string_equal(json_get_str(json_array_get(a, 1), "key"), "Acked-by");
		assert_string_equal(json_get_str(json_array_get(a, 1), "value"), "rev@example.org");
		assert_string_equal(json_get_str(json_array_get(a, 2), "key"), "Reported-by");
		assert_string_equal(json_get_str(json_array_get(a, 2), "value"),
				    "Rev Iewer <REV@Example.org>");
	}
	assert_string_equal(v->author, "Rev Iewer <rev@example.org>");
	assert_string_equal(v->comments, "Looks right.\n");
	/* praise with a Reviewed-by asks for no new version, even from a
	 * maintainer the patch went to */
	assert_false(v->may_iterate);
	store_review_free(v);
	assert_int_equal(count_events(x->f.s, "review.received"), 1);
}

static void test_trailer_limit(void **state)
{
	struct rfix *x = *state;
	char body[2048];
	_cleanup_free_ char *raw = NULL;
	_cleanup_json_ json_t *a = NULL;
	struct store_review *v;
	const char *why;
	int64_t bug;
	size_t n = 0;

	for (int i = 0; i < REVIEW_TRAILERS_MAX + 3; i++)
		n += (size_t)snprintf(body + n, sizeof(body) - n, "Tested-by: T%d <t@example.org>\n",
				      i);
	raw = reply("From: t@example.org\nMessage-ID: <l1@example.org>\nIn-Reply-To: <" RFC ">\n",
		    body);
	assert_int_equal(take(x, raw, true, &bug, &why), 1);
	v = only_review(x);
	a = json_loads(v->trailers, 0, NULL);
	assert_int_equal(json_array_size(a), REVIEW_TRAILERS_MAX);
	assert_string_equal(json_get_str(json_array_get(a, REVIEW_TRAILERS_MAX - 1), "value"),
			    "T7 <t@example.org>");
	/* with a command: no comments kept */
	assert_null(v->comments);
	store_review_free(v);
}

/* Whose comments start a new version: the tree's allowed senders and the
 * recipients of the very mail answered; nobody else. */
static void test_may_iterate(void **state)
{
	struct rfix *x = *state;
	static const struct {
		const char *from, *answered;
		bool may;
	} cases[] = {
		{ "Main Tainer <maint@example.org>", UPSTREAM, true },
		{ "MAINT@example.org", UPSTREAM, true },
		/* a maintainer of the upstream mail answering the RFC */
		{ "maint@example.org", RFC, false },
		{ "mod@example.org", RFC, true },
		{ "Stran Ger <stranger@example.org>", UPSTREAM, false },
		/* allow-commands @mods.example.org */
		{ "Boss <boss@mods.example.org>", UPSTREAM, true },
		{ "boss@notmods.example.org", UPSTREAM, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *raw = NULL, *hdr = NULL;
		struct store_review **vs = NULL;
		const char *why;
		int64_t bug;
		size_t n = 0;

		assert_true(asprintf(&hdr, "From: %s\nMessage-ID: <m%zu@example.org>\n"
					   "In-Reply-To: <%s>\n", cases[i].from, i,
				     cases[i].answered) > 0);
		raw = reply(hdr, "> -\tfoo();\nPlease keep foo() and check the return value.\n");
		assert_int_equal(take(x, raw, false, &bug, &why), 1);
		assert_null(why);
		assert_int_equal(store_review_list(x->f.s, x->bug, 0, 0, &vs, &n), 0);
		assert_int_equal(n, i + 1);
		if (vs[i]->may_iterate != cases[i].may)
			fail_msg("%s answering %s: may_iterate %d", cases[i].from, cases[i].answered,
				 vs[i]->may_iterate);
		assert_string_equal(vs[i]->comments,
				    "> -\tfoo();\nPlease keep foo() and check the return value.\n");
		store_review_list_free(vs, n);
	}
	assert_int_equal(count_events(x->f.s, "review.received"), sizeof(cases) / sizeof(cases[0]));
}

static void test_apply_refusals(void **state)
{
	struct rfix *x = *state;
	const char *why;
	int64_t bug;
	_cleanup_free_ char *unknown = reply("From: a@example.org\nMessage-ID: <u1@example.org>\n"
					     "In-Reply-To: <kfix-9-v9@kfix.example.org>\n",
					     "Please change it.\n"),
			    *own = reply("From: kfix <KFIX@kfix.example.org>\n"
					 "Message-ID: <o1@example.org>\nIn-Reply-To: <" RFC ">\n",
					 "Please change it.\n"),
			    *dup = reply("From: a@example.org\nMessage-ID: <d1@example.org>\n"
					 "In-Reply-To: <" RFC ">\n", "Please change it.\n"),
			    *late = reply("From: a@example.org\nMessage-ID: <late@example.org>\n"
					  "In-Reply-To: <" RFC ">\n", "One more.\n");

	/* looks like kfix's, names no patch kfix knows */
	assert_int_equal(take(x, unknown, false, &bug, &why), 1);
	assert_int_equal(bug, 0);
	assert_string_equal(why, "a reply to no kfix patch");
	/* kfix's own mail on its thread */
	assert_int_equal(take(x, own, false, &bug, &why), 1);
	assert_int_equal(bug, x->bug);
	assert_string_equal(why, "kfix's own mail");
	assert_int_equal(count_reviews(x), 0);
	/* one Message-ID counts once */
	assert_int_equal(take(x, dup, false, &bug, &why), 1);
	assert_null(why);
	assert_int_equal(take(x, dup, false, &bug, &why), 1);
	assert_null(why);
	assert_int_equal(count_reviews(x), 1);
	assert_int_equal(count_events(x->f.s, "review.received"), 1);
	/* REVIEWS_PER_PATCH_MAX replies per version */
	for (int i = 1; i < REVIEWS_PER_PATCH_MAX; i++) {
		char mid[64];
		struct store_review v = { .bug_id = x->bug, .patch_id = x->patch, .message_id = mid,
					  .author = "a@example.org", .trailers = "[]",
					  .comments = "c" };
		int64_t id;
		bool created;

		snprintf(mid, sizeof(mid), "fill%d@example.org", i);
		assert_int_equal(store_review_add(x->f.s, &v, &id, &created), 0);
	}
	assert_int_equal(count_reviews(x), REVIEWS_PER_PATCH_MAX);
	assert_int_equal(take(x, late, false, &bug, &why), 1);
	assert_int_equal(bug, x->bug);
	assert_string_equal(why, "too many replies on this patch version");
	assert_int_equal(count_reviews(x), REVIEWS_PER_PATCH_MAX);
}

/* The thread: In-Reply-To first, then the newest 16 References. */
static void test_thread_references(void **state)
{
	struct rfix *x = *state;
	const char *why;
	int64_t bug;

	for (int others = 15; others <= 16; others++) {
		char hdr[2048];
		_cleanup_free_ char *raw = NULL;
		size_t n;

		n = (size_t)snprintf(hdr, sizeof(hdr),
				     "From: a@example.org\nMessage-ID: <r%d@example.org>\n"
				     "In-Reply-To: <x%d@example.org>\nReferences: <" RFC ">",
				     others, others);
		for (int i = 0; i < others; i++)
			n += (size_t)snprintf(hdr + n, sizeof(hdr) - n, "\n <x%d-%d@example.org>",
					      others, i);
		snprintf(hdr + n, sizeof(hdr) - n, "\n");
		raw = reply(hdr, "Please change it.\n");
		/* 16 References: the oldest is looked at; 17: it is not */
		assert_int_equal(take(x, raw, false, &bug, &why), others == 15 ? 1 : 0);
		if (others == 15) {
			assert_int_equal(bug, x->bug);
			assert_null(why);
		}
	}
	assert_int_equal(count_reviews(x), 1);
}

static void test_comments_cut(void **state)
{
	struct rfix *x = *state;
	static const char cut[] = "[... the rest of the reply was cut by kfix]\n";
	char *body = malloc(REVIEW_COMMENTS_MAX * 2);
	_cleanup_free_ char *raw = NULL;
	struct store_review *v;
	const char *why;
	int64_t bug;
	size_t n = 0, len;

	assert_non_null(body);
	for (int i = 0; n + 100 < REVIEW_COMMENTS_MAX * 2; i++)
		n += (size_t)snprintf(body + n, REVIEW_COMMENTS_MAX * 2 - n,
				      "Line %05d of a long review with many words in it.\n", i);
	raw = reply("From: a@example.org\nMessage-ID: <c1@example.org>\nIn-Reply-To: <" RFC ">\n",
		    body);
	free(body);
	assert_int_equal(take(x, raw, false, &bug, &why), 1);
	v = only_review(x);
	len = strlen(v->comments);
	assert_true(len <= REVIEW_COMMENTS_MAX);
	assert_true(len > REVIEW_COMMENTS_MAX - 200);
	assert_true(len > strlen(cut));
	/* cut at a line end, and says so */
	assert_string_equal(v->comments + len - strlen(cut), cut);
	assert_int_equal(v->comments[len - strlen(cut) - 1], '\n');
	assert_true(strncmp(v->comments, "Line 00000 of", 13) == 0);
	store_review_free(v);
}

static void test_comments_at_limit(void **state)
{
	struct rfix *x = *state;
	char *body = malloc(REVIEW_COMMENTS_MAX + 1);
	_cleanup_free_ char *raw = NULL;
	struct store_review *v;
	const char *why;
	int64_t bug;

	assert_non_null(body);
	/* exactly REVIEW_COMMENTS_MAX bytes of comments: kept whole */
	memset(body, 'a', REVIEW_COMMENTS_MAX - 1);
	body[REVIEW_COMMENTS_MAX - 1] = '\n';
	body[REVIEW_COMMENTS_MAX] = '\0';
	raw = reply("From: a@example.org\nMessage-ID: <c2@example.org>\nIn-Reply-To: <" RFC ">\n",
		    body);
	assert_int_equal(take(x, raw, false, &bug, &why), 1);
	v = only_review(x);
	assert_string_equal(v->comments, body);
	free(body);
	store_review_free(v);
}

static void add_review(struct rfix *x, int64_t patch, const char *mid, const char *trailers)
{
	struct store_review v = { .bug_id = x->bug, .patch_id = patch, .message_id = (char *)mid,
				  .author = "a@example.org", .trailers = (char *)trailers };
	int64_t id;
	bool created;

	assert_int_equal(store_review_add(x->f.s, &v, &id, &created), 0);
	assert_true(created);
}

static void test_collected_trailers(void **state)
{
	struct rfix *x = *state;
	struct store_patch p = { .bug_id = x->bug, .diff = "diff --git a/x b/x\n", .subject = "v2" };
	json_t *out = NULL;
	char many[4096];
	int64_t v2;
	size_t n;

	assert_int_equal(store_patch_add(x->f.s, &p, &v2, NULL), 0);
	add_review(x, x->patch, "v1a@example.org",
		   "[{\"key\":\"Reviewed-by\",\"value\":\"A <a@example.org>\"}]");
	add_review(x, v2, "v2a@example.org",
		   "[{\"key\":\"reviewed-by\",\"value\":\"a <A@EXAMPLE.ORG>\"},"
		   "{\"key\":\"Acked-by\",\"value\":\"B <b@example.org>\"},{\"key\":\"Acked-by\"}]");
	add_review(x, v2, "v2b@example.org", "not json");

	/* version 1: what was given on version 1 only */
	assert_int_equal(intake_review_trailers(x->f.s, x->bug, 1, &out), 0);
	assert_int_equal(json_array_size(out), 1);
	assert_string_equal(json_get_str(json_array_get(out, 0), "value"), "A <a@example.org>");
	json_decref(out);
	/* version 2: both, each pair once (case does not make a new one), no
	 * incomplete pair, a broken row skipped */
	assert_int_equal(intake_review_trailers(x->f.s, x->bug, 2, &out), 0);
	assert_int_equal(json_array_size(out), 2);
	assert_string_equal(json_get_str(json_array_get(out, 0), "key"), "Reviewed-by");
	assert_string_equal(json_get_str(json_array_get(out, 1), "key"), "Acked-by");
	json_decref(out);
	/* at most twice REVIEW_TRAILERS_MAX */
	n = (size_t)snprintf(many, sizeof(many), "[");
	for (int i = 0; i < 2 * REVIEW_TRAILERS_MAX + 5; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n,
				      "%s{\"key\":\"Tested-by\",\"value\":\"t%d@example.org\"}",
				      i ? "," : "", i);
	snprintf(many + n, sizeof(many) - n, "]");
	add_review(x, v2, "v2c@example.org", many);
	assert_int_equal(intake_review_trailers(x->f.s, x->bug, 2, &out), 0);
	assert_int_equal(json_array_size(out), 2 * REVIEW_TRAILERS_MAX);
	json_decref(out);
	/* a bug without reviews: an empty array */
	assert_int_equal(intake_review_trailers(x->f.s, x->bug + 100, 2, &out), 0);
	assert_int_equal(json_array_size(out), 0);
	json_decref(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_not_kept, r_setup, r_teardown),
		cmocka_unit_test_setup_teardown(test_trailers, r_setup, r_teardown),
		cmocka_unit_test_setup_teardown(test_trailer_limit, r_setup, r_teardown),
		cmocka_unit_test_setup_teardown(test_may_iterate, r_setup, r_teardown),
		cmocka_unit_test_setup_teardown(test_apply_refusals, r_setup, r_teardown),
		cmocka_unit_test_setup_teardown(test_thread_references, r_setup, r_teardown),
		cmocka_unit_test_setup_teardown(test_comments_cut, r_setup, r_teardown),
		cmocka_unit_test_setup_teardown(test_comments_at_limit, r_setup, r_teardown),
		cmocka_unit_test_setup_teardown(test_collected_trailers, r_setup, r_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
