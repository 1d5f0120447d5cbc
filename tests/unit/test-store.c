/* Unit tests of the store: life cycle, leases, outbox idempotency,
 * migrations and damaged files. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/strutil.h"
#include "daemon/outbox.h"

#include "common/fileio.h"
#include "common/json.h"
#include "daemon/store.h"
#include "tests/unit/store-fixture.h"

static int64_t add_bug(struct store *s, const char *extid)
{
	struct store_bug b = { .source = "syzbot", .source_id = (char *)extid,
			       .title = "KASAN: use-after-free Read in foo" };
	int64_t id = 0;
	bool created = false;

	assert_int_equal(store_bug_add(s, &b, &id, &created), 0);
	return id;
}

static void test_bug_dedup_and_states(void **state)
{
	struct fixture *f = *state;
	struct store_bug b = { .source = "syzbot", .source_id = "abc",
			       .title = "t" };
	struct store_bug *got = NULL;
	bool created;
	int64_t id1, id2;

	assert_int_equal(store_bug_add(f->s, &b, &id1, &created), 0);
	assert_true(created);
	assert_int_equal(store_bug_add(f->s, &b, &id2, &created), 0);
	assert_false(created);
	assert_int_equal(id1, id2);
	assert_int_equal(store_bug_set_state(f->s, id1, "reproducing", NULL), 0);
	/* not on the life cycle */
	assert_int_equal(store_bug_set_state(f->s, id1, "sent", NULL), -EPERM);
	assert_int_equal(store_bug_set_state(f->s, id1, "nonsense", NULL), -EINVAL);
	assert_int_equal(store_bug_get(f->s, id1, &got), 0);
	assert_string_equal(got->state, "reproducing");
	store_bug_free(got);
	assert_int_equal(store_bug_get(f->s, 999, &got), -ENOENT);
}

static void test_job_lease_cycle(void **state)
{
	struct fixture *f = *state;
	int64_t bug = add_bug(f->s, "x1"), j1, j2;
	struct store_job *j = NULL;
	bool final;

	assert_int_equal(store_job_add(f->s, bug, "self-test", NULL, 0, 2, &j1), 0);
	assert_int_equal(store_job_add(f->s, bug, "self-test", NULL, 5, 2, &j2), 0);
	/* higher priority first */
	assert_int_equal(store_job_lease(f->s, "a:1", 60000000, &j), 0);
	assert_int_equal(j->id, j2);
	assert_int_equal(j->attempts, 1);
	store_job_free(j);
	assert_int_equal(store_job_lease(f->s, "a:1", 60000000, &j), 0);
	assert_int_equal(j->id, j1);
	store_job_free(j);
	assert_int_equal(store_job_lease(f->s, "b:2", 60000000, &j), -ENOENT);
	/* someone else cannot finish a job it does not hold */
	assert_int_equal(store_job_finish(f->s, j1, "b:2", NULL), -ESTALE);
	assert_int_equal(store_job_finish(f->s, j1, "a:1", "{}"), 0);
	/* fail once: requeued (no delay), then fail again: final */
	assert_int_equal(store_job_fail(f->s, j2, "a:1", 0, "boom", 0, false, &final), 0);
	assert_false(final);
	assert_int_equal(store_job_lease(f->s, "a:1", 60000000, &j), 0);
	assert_int_equal(j->id, j2);
	assert_int_equal(j->attempts, 2);
	store_job_free(j);
	/* the first attempt's process, seen ending late, cannot fail the
	 * second one: the owner is the same daemon */
	assert_int_equal(store_job_fail(f->s, j2, "a:1", 1, "killed", 0, false, &final), -ESTALE);
	assert_int_equal(store_job_fail(f->s, j2, "a:1", 2, "boom", 0, false, &final), 0);
	assert_true(final);
	assert_int_equal(store_job_get(f->s, j2, &j), 0);
	assert_string_equal(j->state, "failed");
	assert_string_equal(j->error, "boom");
	store_job_free(j);
	assert_int_equal(store_job_retry(f->s, j2), 0);
	assert_int_equal(store_job_retry(f->s, j2), -EBUSY);
	assert_int_equal(store_job_cancel(f->s, j2), 0);
	assert_int_equal(store_job_cancel(f->s, j2), -EALREADY);
	assert_int_equal(store_job_cancel(f->s, 12345), -ENOENT);
}

static void test_expired_lease_is_taken_over(void **state)
{
	struct fixture *f = *state;
	int64_t bug = add_bug(f->s, "x2"), id;
	struct store_job *j = NULL;

	assert_int_equal(store_job_add(f->s, bug, "self-test", NULL, 0, 3, &id), 0);
	assert_int_equal(store_job_lease(f->s, "dead:1", 0, &j), 0);
	store_job_free(j);
	/* lease of 0: expired at once, another owner gets it */
	assert_int_equal(store_job_lease(f->s, "alive:2", 60000000, &j), 0);
	assert_int_equal(j->id, id);
	assert_string_equal(j->lease_owner, "alive:2");
	store_job_free(j);
	assert_int_equal(store_job_checkpoint(f->s, id, "dead:1", "x"), -ESTALE);
	assert_int_equal(store_job_checkpoint(f->s, id, "alive:2", "x"), 0);
	/* progress: only the lease's owner writes it, the view shows it */
	assert_int_equal(store_job_progress(f->s, id, "dead:1", "patch: attempt 9"), 0);
	assert_int_equal(store_job_progress(f->s, id, "alive:2", "patch: attempt 1"), 0);
	assert_int_equal(store_job_get(f->s, id, &j), 0);
	assert_string_equal(j->progress, "patch: attempt 1");
	assert_true(j->progress_at > 0);
	{
		_cleanup_json_ json_t *v = store_job_json(j);

		assert_string_equal(json_string_value(json_object_get(v, "progress")),
				    "patch: attempt 1");
	}
	store_job_free(j);
	assert_int_equal(store_job_release_owner(f->s, "alive:2", &(int64_t){ 0 }), 0);
	assert_int_equal(store_job_lease(f->s, "third:3", 60000000, &j), 0);
	assert_string_equal(j->checkpoint, "x");
	store_job_free(j);
}

static void test_outbox_idempotent(void **state)
{
	struct fixture *f = *state;
	struct store_outbox *o = NULL;
	int64_t a, b;
	bool created;

	assert_int_equal(store_outbox_add(f->s, 0, "mail", "mail:<1@x>", "m1", &a, &created), 0);
	assert_true(created);
	assert_int_equal(store_outbox_add(f->s, 0, "mail", "mail:<1@x>", "m1", &b, &created), 0);
	assert_false(created);
	assert_int_equal(a, b);
	assert_int_equal(store_outbox_next(f->s, &o), 0);
	assert_int_equal(o->id, a);
	store_outbox_free(o);
	assert_int_equal(store_outbox_mark_retry(f->s, a, "421 try later", 3600000000ULL), 0);
	assert_int_equal(store_outbox_next(f->s, &o), -ENOENT);
	assert_int_equal(store_outbox_add(f->s, 0, "mail", "mail:<2@x>", "m2", &b, NULL), 0);
	assert_int_equal(store_outbox_park(f->s, b, "550 no such user"), 0);
	assert_int_equal(store_outbox_park(f->s, b, "again"), -ENOENT);
	assert_int_equal(store_outbox_add(f->s, 0, "mail", "mail:<3@x>", "m3", &b, NULL), 0);
	assert_int_equal(store_outbox_mark_sent(f->s, b), 0);
	{
		struct store_stats st;

		assert_int_equal(store_stats(f->s, &st), 0);
		assert_int_equal(st.outbox_pending, 1);
		assert_int_equal(st.outbox_parked, 1);
		assert_int_equal(st.outbox_sent, 1);
	}
}

/* A claimed entry is no one else's until it is delivered, retried, its
 * claim ends or its owner's claims are released. */
static void test_outbox_claims(void **state)
{
	struct fixture *f = *state;
	struct store_outbox *o1 = NULL, *o2 = NULL, *o3 = NULL;
	_cleanup_(strv_freep) char **owners = NULL;
	int64_t a, b, k = 0;
	size_t n = 0;

	assert_int_equal(store_outbox_add(f->s, 0, "mail", "mail:<c1@x>", "m1", &a, NULL), 0);
	assert_int_equal(store_outbox_add(f->s, 0, "mail", "mail:<c2@x>", "m2", &b, NULL), 0);
	assert_int_equal(store_outbox_claim(f->s, "h:1", 600000000ULL, &o1), 0);
	assert_int_equal(o1->id, a);
	assert_int_equal(store_outbox_claim(f->s, "h:2", 600000000ULL, &o2), 0);
	assert_int_equal(o2->id, b);
	assert_int_equal(store_outbox_claim(f->s, "h:3", 600000000ULL, &o3), -ENOENT);
	assert_int_equal(store_outbox_next(f->s, &o3), -ENOENT);
	assert_int_equal(store_outbox_claimers(f->s, &owners, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(owners[0], "h:1");
	assert_string_equal(owners[1], "h:2");
	assert_null(owners[2]);
	/* the first owner is gone: its entry is due again, the other's not */
	assert_int_equal(store_outbox_release_owner(f->s, "h:1", &k), 0);
	assert_int_equal(k, 1);
	assert_int_equal(store_outbox_claim(f->s, "h:3", 600000000ULL, &o3), 0);
	assert_int_equal(o3->id, a);
	assert_int_equal(store_outbox_mark_sent(f->s, o3->id), 0);
	/* delivery ends the claim; a retry makes the entry due later, free */
	assert_int_equal(store_outbox_mark_retry(f->s, o2->id, "421", 0), 0);
	store_outbox_free(o3);
	o3 = NULL;
	assert_int_equal(store_outbox_claim(f->s, "h:3", 1, &o3), 0);
	assert_int_equal(o3->id, b);
	store_outbox_free(o3);
	o3 = NULL;
	/* a claim that ran out is taken by the next */
	usleep(2000);
	assert_int_equal(store_outbox_claim(f->s, "h:4", 600000000ULL, &o3), 0);
	assert_int_equal(o3->id, b);
	strv_free(TAKE_PTR(owners));
	assert_int_equal(store_outbox_claimers(f->s, &owners, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(owners[0], "h:4");
	store_outbox_free(o1);
	store_outbox_free(o2);
	store_outbox_free(o3);
}

static void test_transaction_rollback(void **state)
{
	struct fixture *f = *state;
	struct store_bug *got = NULL;
	int64_t bug = add_bug(f->s, "x3");

	assert_int_equal(store_begin(f->s), 0);
	assert_int_equal(store_bug_set_state(f->s, bug, "reproducing", NULL), 0);
	assert_int_equal(store_outbox_add(f->s, bug, "mail", "k", "p", NULL, NULL), 0);
	store_rollback(f->s);
	assert_int_equal(store_bug_get(f->s, bug, &got), 0);
	assert_string_equal(got->state, "new");
	store_bug_free(got);
	assert_int_equal(store_outbox_next(f->s, &(struct store_outbox *){ NULL }), -ENOENT);
}

/* What the reproduce job keeps with a bug: the crash it saw and its
 * guilty file; only the fields the store knows can be set. */
static void test_bug_crash_fields(void **state)
{
	struct fixture *f = *state;
	struct store_bug *got = NULL;
	int64_t bug = add_bug(f->s, "crash");
	json_t *j;

	assert_int_equal(store_bug_get(f->s, bug, &got), 0);
	assert_null(got->crash_report);
	assert_null(got->guilty_file);
	store_bug_free(got);
	assert_int_equal(store_bug_set_text(f->s, bug, "crash_report", "/state/crash.txt"), 0);
	assert_int_equal(store_bug_set_text(f->s, bug, "guilty_file", "ipc/msg.c"), 0);
	assert_int_equal(store_bug_set_text(f->s, bug, "title = 'x', report", "y"), -EINVAL);
	assert_int_equal(store_bug_set_text(f->s, bug + 100, "guilty_file", "y"), -ENOENT);
	assert_int_equal(store_bug_get(f->s, bug, &got), 0);
	assert_string_equal(got->crash_report, "/state/crash.txt");
	assert_string_equal(got->guilty_file, "ipc/msg.c");
	j = store_bug_json(got);
	assert_non_null(j);
	assert_string_equal(json_get_str(j, "crash_report"), "/state/crash.txt");
	assert_string_equal(json_get_str(j, "guilty_file"), "ipc/msg.c");
	json_decref(j);
	store_bug_free(got);
}

/* store_errmsg() explains the call that just failed, not an older one. */
static void test_errmsg_not_sticky(void **state)
{
	struct fixture *f = *state;
	struct store_bug *got = NULL;
	int64_t bug = add_bug(f->s, "errmsg");

	/* a commit with no transaction open fails */
	assert_true(store_commit(f->s) < 0);
	assert_non_null(strcasestr(store_errmsg(f->s), "savepoint"));
	assert_int_equal(store_bug_get(f->s, bug, &got), 0);
	store_bug_free(got);
	assert_string_equal(store_errmsg(f->s), "no database error");
	assert_true(store_commit(f->s) < 0);
	assert_int_equal(store_bug_get(f->s, bug + 1000, &got), -ENOENT);
	assert_string_equal(store_errmsg(f->s), "no database error");
}

static void test_reopen_and_version(void **state)
{
	struct fixture *f = *state;
	struct store *s2 = NULL;
	int v = store_schema_version(f->s);

	assert_int_equal(v, 12);
	assert_int_equal(store_open(f->path, &s2), 0);
	assert_int_equal(store_schema_version(s2), v);
	/* the store's random name: kept when reopened, another store's differs */
	{
		_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;
		char other[512];
		struct store *s3 = NULL;

		assert_int_equal(fixture_new_target(f->dir, other, sizeof(other)), 0);
		assert_int_equal(store_kv_get(f->s, "store.id", &a), 0);
		assert_int_equal(strlen(a), 12);
		assert_int_equal(strspn(a, "0123456789abcdef"), 12);
		assert_int_equal(store_kv_get(s2, "store.id", &b), 0);
		assert_string_equal(a, b);
		assert_int_equal(store_open(other, &s3), 0);
		assert_int_equal(store_schema_version(s3), v);
		assert_int_equal(store_kv_get(s3, "store.id", &c), 0);
		assert_string_not_equal(a, c);
		store_close(s3);
		fixture_drop_target(other);
	}
	store_close(s2);
}

/* Sets a store's schema version behind its back, as a newer kfix would. */
static int set_version_behind(const char *target, int v)
{
	char cmd[1024];

	if (fixture_pg_server())
		snprintf(cmd, sizeof(cmd), "psql -q '%s' -c 'UPDATE kfix_schema SET version = %d'",
			 target, v);
	else
		snprintf(cmd, sizeof(cmd), "sqlite3 %s 'PRAGMA user_version = %d'", target, v);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_corrupt_and_future(void **state)
{
	struct fixture *f = *state;
	char path[512];
	struct store *s = NULL;

	if (!fixture_pg_server()) {
		static const char junk[] = "this is not a database, just text, padded out to"
					   " more than one hundred bytes so that SQLite reads a"
					   " header and finds it wrong.";

		snprintf(path, sizeof(path), "%s/junk.db", f->dir);
		assert_int_equal(write_file_atomic(path, junk, strlen(junk), 0600), 0);
		assert_int_equal(store_open(path, &s), -EBADMSG);
		assert_null(s);
	}
	/* a store written by a newer kfix is refused, not downgraded */
	assert_int_equal(fixture_new_target(f->dir, path, sizeof(path)), 0);
	assert_int_equal(store_open(path, &s), 0);
	store_close(s);
	s = NULL;
	if (set_version_behind(path, 99) < 0)
		skip();
	assert_int_equal(store_open(path, &s), -EPROTO);
	assert_null(s);
	fixture_drop_target(path);
}

/* Replies to any mail of a patch find it; a reply counts once; the
 * comments that ask for a new version go to one job. */
static void test_reviews(void **state)
{
	struct fixture *f = *state;
	int64_t bug = add_bug(f->s, "r1"), p1, id, *bugs = NULL;
	struct store_patch p = { .bug_id = bug, .diff = "diff --git a/x b/x\n", .subject = "x" };
	struct store_review v = { .bug_id = bug, .message_id = "a@x", .author = "A <a@x>",
				  .trailers = "[]", .comments = "fix it", .may_iterate = true };
	struct store_patch *got = NULL;
	struct store_review **vs = NULL;
	char *rcpt = NULL;
	bool created;
	size_t n = 0;
	int claimed = 0, ver;

	assert_int_equal(store_patch_add(f->s, &p, &p1, &ver), 0);
	assert_int_equal(store_patch_mail_add(f->s, p1, "kfix-1-v1-rfc@x", "moderation",
					      "[\"mod@x\"]"), 0);
	assert_int_equal(store_patch_set_sent(f->s, p1, "kfix-1-v1@x", "m@x", NULL), 0);
	assert_int_equal(store_patch_find_by_message_id(f->s, "<kfix-1-v1-rfc@x>", &got), 0);
	assert_int_equal(got->id, p1);
	store_patch_free(got);
	assert_int_equal(store_patch_mail_recipients(f->s, "kfix-1-v1-rfc@x", &rcpt), 0);
	assert_string_equal(rcpt, "[\"mod@x\"]");
	free(rcpt);
	assert_int_equal(store_patch_mail_recipients(f->s, "kfix-1-v1@x", &rcpt), -ENOENT);
	v.patch_id = p1;
	assert_int_equal(store_review_add(f->s, &v, &id, &created), 0);
	assert_true(created);
	assert_int_equal(store_review_add(f->s, &v, &id, &created), 0);
	assert_false(created);
	assert_int_equal(store_review_waiting(f->s, &bugs, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(bugs[0], bug);
	free(bugs);
	assert_int_equal(store_review_claim(f->s, bug, 42, &claimed), 0);
	assert_int_equal(claimed, 1);
	assert_int_equal(store_review_waiting(f->s, &bugs, &n), 0);
	assert_int_equal(n, 0);
	free(bugs);
	assert_int_equal(store_review_list(f->s, 0, 0, 42, &vs, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(vs[0]->comments, "fix it");
	store_review_list_free(vs, n);
}

static void test_llm_usage(void **state)
{
	struct fixture *f = *state;
	int64_t b1 = add_bug(f->s, "u1"), b2 = add_bug(f->s, "u2"), tokens = 0;
	double cost = 0;

	assert_int_equal(store_llm_usage_add(f->s, b1, 0, "m", 100, 20, 0.25), 0);
	assert_int_equal(store_llm_usage_add(f->s, b2, 7, "m", 1, 2, 0.5), 0);
	assert_int_equal(store_llm_usage_sum(f->s, 0, 0, &tokens, &cost), 0);
	assert_int_equal(tokens, 123);
	assert_true(cost > 0.749 && cost < 0.751);
	assert_int_equal(store_llm_usage_sum(f->s, 0, b1, &tokens, &cost), 0);
	assert_int_equal(tokens, 120);
	assert_int_equal(store_llm_usage_sum(f->s, (int64_t)time(NULL) + 10, 0, &tokens, &cost), 0);
	assert_int_equal(tokens, 0);
}

static void test_patch_versions(void **state)
{
	struct fixture *f = *state;
	int64_t bug = add_bug(f->s, "p1"), p1, p2;
	struct store_patch p = { .bug_id = bug, .diff = "diff --git a/x b/x\n",
				 .subject = "mm: fix" };
	struct store_patch *got = NULL;
	int v;

	assert_int_equal(store_patch_add(f->s, &p, &p1, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(store_patch_decide(f->s, p1, "awaiting-approval", NULL, NULL), 0);
	/* not allowed: straight to sent */
	assert_int_equal(store_patch_decide(f->s, p1, "sent", NULL, NULL), -EPERM);
	assert_int_equal(store_patch_add(f->s, &p, &p2, &v), 0);
	assert_int_equal(v, 2);
	/* a bug row counts its versions (the bug list shows them) */
	{
		struct store_bug *b = NULL;

		assert_int_equal(store_bug_get(f->s, bug, &b), 0);
		assert_int_equal(b->patches, 2);
		store_bug_free(b);
		assert_int_equal(store_bug_get(f->s, add_bug(f->s, "p0"), &b), 0);
		assert_int_equal(b->patches, 0);
		store_bug_free(b);
	}
	assert_int_equal(store_patch_get(f->s, p1, &got), 0);
	assert_string_equal(got->state, "superseded");
	store_patch_free(got);
	assert_int_equal(store_patch_decide(f->s, p2, "awaiting-approval", NULL, NULL), 0);
	assert_int_equal(store_patch_decide(f->s, p2, "approved", "mod@x", NULL), 0);
	assert_int_equal(store_patch_set_sent(f->s, p2, "<m@x>", "a@x", "kfix/1/v2"), 0);
	assert_int_equal(store_patch_decide(f->s, p2, "sent", NULL, NULL), 0);
	assert_int_equal(store_patch_get(f->s, p2, &got), 0);
	assert_string_equal(got->decided_by, "mod@x");
	assert_string_equal(got->branch, "kfix/1/v2");
	store_patch_free(got);
	p.bug_id = 0;
	assert_int_equal(store_patch_add(f->s, &p, NULL, NULL), -EINVAL);
}

static void test_held_and_report_thread(void **state)
{
	struct fixture *f = *state;
	int64_t bug = add_bug(f->s, "h1"), id;
	struct store_patch p = { .bug_id = bug, .diff = "diff --git a/x b/x\n" };
	char *mid = NULL;

	assert_int_equal(store_bug_report_message_id(f->s, bug, &mid), -ENOENT);
	assert_int_equal(store_bug_set_report_message_id(f->s, bug, "r1@google.com"), 0);
	/* the first report is the thread: a later one does not replace it */
	assert_int_equal(store_bug_set_report_message_id(f->s, bug, "r2@google.com"), 0);
	assert_int_equal(store_bug_report_message_id(f->s, bug, &mid), 0);
	assert_string_equal(mid, "r1@google.com");
	free(mid);
	assert_int_equal(store_patch_add(f->s, &p, &id, NULL), 0);
	assert_int_equal(store_patch_decide(f->s, id, "awaiting-approval", NULL, NULL), 0);
	assert_int_equal(store_patch_decide(f->s, id, "held", NULL, NULL), -EPERM);
	assert_int_equal(store_patch_decide(f->s, id, "approved", "mod@x", NULL), 0);
	assert_int_equal(store_patch_decide(f->s, id, "held", NULL, "fix landed"), 0);
	assert_int_equal(store_patch_decide(f->s, id, "sent", NULL, NULL), -EPERM);
	assert_int_equal(store_patch_decide(f->s, id, "approved", "mod@x", NULL), 0);
	assert_int_equal(store_patch_decide(f->s, id, "sent", NULL, NULL), 0);
}

/* Keys that make the same safe text, or the same text once cut, still
 * name two files: a second mail is never taken as delivered. */
static void test_spool_names(void **state)
{
	char a[256], b[256], c[256], d[256];
	char long1[400], long2[400];

	(void)state;
	outbox_spool_name("mail:<a/b@example.org>", a, sizeof(a));
	outbox_spool_name("mail:<a_b@example.org>", b, sizeof(b));
	assert_string_not_equal(a, b);
	memset(long1, 'x', sizeof(long1) - 1);
	long1[sizeof(long1) - 1] = '\0';
	memcpy(long2, long1, sizeof(long2));
	long2[sizeof(long2) - 2] = 'y';
	outbox_spool_name(long1, c, sizeof(c));
	outbox_spool_name(long2, d, sizeof(d));
	assert_string_not_equal(c, d);
	assert_null(strchr(a, '/'));
	assert_true(endswith(a, "a_b@example.org_"));
}

static int64_t add_mail(struct store *s, const char *key, const char *state,
			const char *detail)
{
	struct store_inbox in = { .key = (char *)key, .type = "mail", .hook = "m",
				  .provider = "kfix", .event = "mail", .payload = "x",
				  .payload_len = 1, .state = (char *)state,
				  .detail = (char *)detail };
	int64_t id = 0;
	bool created = false;

	assert_int_equal(store_inbox_add(s, &in, &id, &created), 0);
	assert_true(created);
	return id;
}

static void assert_inbox_state(struct store *s, int64_t id, const char *state)
{
	struct store_inbox *in = NULL;

	assert_int_equal(store_inbox_get(s, id, &in), 0);
	assert_string_equal(in->state, state);
	store_inbox_free(in);
}

/* The mail queue's life cycle: pending rows listed oldest first and
 * claimed once; a row left "parsing" goes back once, then fails. */
static void test_inbox_mail_queue(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_mail(f->s, "mail:a", "pending", NULL);
	int64_t b = add_mail(f->s, "mail:b", "pending", NULL);
	int64_t c = add_mail(f->s, "mail:c", "parsing", NULL);
	int64_t d = add_mail(f->s, "mail:d", "parsing", "interrupted");
	int64_t ids[4];
	size_t n = 0;

	add_mail(f->s, "mail:e", "done", NULL);
	assert_int_equal(store_inbox_pending(f->s, "mail", ids, 4, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ids[0], a);
	assert_int_equal(ids[1], b);
	assert_int_equal(store_inbox_pending(f->s, "mail", ids, 1, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_inbox_claim(f->s, a), 0);
	assert_int_equal(store_inbox_claim(f->s, a), -EALREADY);
	assert_inbox_state(f->s, a, "parsing");
	assert_int_equal(store_inbox_set_event(f->s, b, "reply"), 0);
	assert_int_equal(store_inbox_recover(f->s), 0);
	assert_inbox_state(f->s, a, "pending");
	assert_inbox_state(f->s, c, "pending");
	assert_inbox_state(f->s, d, "failed");
	assert_inbox_state(f->s, b, "pending");
	/* interrupted again: now given up */
	assert_int_equal(store_inbox_claim(f->s, a), 0);
	assert_int_equal(store_inbox_recover(f->s), 0);
	assert_inbox_state(f->s, a, "failed");
	{
		struct store_inbox *in = NULL;

		assert_int_equal(store_inbox_get(f->s, b, &in), 0);
		assert_string_equal(in->event, "reply");
		store_inbox_free(in);
		assert_int_equal(store_inbox_get(f->s, 999, &in), -ENOENT);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bug_dedup_and_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_lease_cycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expired_lease_is_taken_over, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outbox_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outbox_claims, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inbox_mail_queue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transaction_rollback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bug_crash_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errmsg_not_sticky, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_and_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_patch_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reviews, setup, teardown),
		cmocka_unit_test_setup_teardown(test_llm_usage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_and_report_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_and_future, setup, teardown),
		cmocka_unit_test(test_spool_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
