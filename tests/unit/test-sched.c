/* Unit tests of the scheduler's decisions: the first job of a new bug,
 * and the "#kfix" requests recorded by the intake. */
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
#include "daemon/sched.h"
#include "daemon/store.h"
#include "tests/unit/store-fixture.h"

static struct config *cfg_new(void)
{
	struct config *c = NULL;

	assert_int_equal(config_new_empty(&c), 0);
	assert_int_equal(config_set(c, "tree", "net", "url", "https://git.example.org/net.git"), 0);
	return c;
}

static int64_t add_bug(struct store *s, const char *extid, const char *tree, const char *c,
		       const char *syz)
{
	struct store_bug b = { .source = "syzbot", .source_id = (char *)extid, .title = "t",
			       .tree = (char *)tree, .repro_c = (char *)c, .repro_syz = (char *)syz };
	int64_t id = 0;
	bool created;

	assert_int_equal(store_bug_add(s, &b, &id, &created), 0);
	return id;
}

static struct store_bug *bug(struct store *s, int64_t id)
{
	struct store_bug *b = NULL;

	assert_int_equal(store_bug_get(s, id, &b), 0);
	return b;
}

static size_t jobs_of(struct store *s, int64_t bug_id, struct store_job ***ret)
{
	size_t n = 0;

	assert_int_equal(store_job_list(s, NULL, bug_id, 0, ret, &n), 0);
	return n;
}

static void test_new_bugs(void **state)
{
	struct fixture *f = *state;
	struct config *c = cfg_new();
	int64_t good = add_bug(f->s, "c", "net", "/r/repro.c", NULL),
		syz = add_bug(f->s, "s", "net", NULL, "/r/repro.syz"),
		none = add_bug(f->s, "n", "net", "", NULL),
		other = add_bug(f->s, "o", "mm", "/r/repro.c", NULL),
		notree = add_bug(f->s, "t", NULL, "/r/repro.c", NULL);
	struct store_job **j = NULL;
	struct store_bug *b;
	size_t n;

	assert_int_equal(config_set(c, "tree", "net", "priority", "7"), 0);
	assert_int_equal(config_set(c, "kfix", NULL, "job-attempts", "5"), 0);
	assert_int_equal(sched_run(c, f->s), 0);

	/* a C reproducer on a configured tree: reproduce, first in line */
	n = jobs_of(f->s, good, &j);
	assert_int_equal(n, 1);
	assert_string_equal(j[0]->kind, "reproduce");
	assert_string_equal(j[0]->state, "queued");
	assert_int_equal(j[0]->priority, 100 + 7);
	assert_int_equal(j[0]->max_attempts, 5);
	store_job_list_free(j, n);

	/* only a syz program and no syzkaller: waiting; nothing to test a
	 * fix with: given up, with the reason */
	b = bug(f->s, syz);
	assert_string_equal(b->state, "needs-syzkaller");
	store_bug_free(b);
	assert_int_equal(jobs_of(f->s, syz, &j), 0);
	store_job_list_free(j, 0);
	b = bug(f->s, none);
	assert_string_equal(b->state, "gave-up");
	store_bug_free(b);

	/* a tree that is not configured (or none): the bug waits as it is */
	b = bug(f->s, other);
	assert_string_equal(b->state, "new");
	store_bug_free(b);
	assert_int_equal(jobs_of(f->s, other, &j), 0);
	store_job_list_free(j, 0);
	b = bug(f->s, notree);
	assert_string_equal(b->state, "new");
	store_bug_free(b);

	/* a second pass adds nothing: the bug has its job */
	assert_int_equal(sched_run(c, f->s), 0);
	n = jobs_of(f->s, good, &j);
	assert_int_equal(n, 1);
	store_job_list_free(j, n);

	/* the tree configured later: the waiting bug gets its job */
	assert_int_equal(config_set(c, "tree", "mm", "url", "https://git.example.org/mm.git"), 0);
	assert_int_equal(sched_run(c, f->s), 0);
	n = jobs_of(f->s, other, &j);
	assert_int_equal(n, 1);
	/* the tree's priority is its own */
	assert_int_equal(j[0]->priority, 100);
	assert_int_equal(j[0]->max_attempts, 5);
	store_job_list_free(j, n);
	config_free(c);
}

static void test_reasons(void **state)
{
	struct fixture *f = *state;
	struct config *c = cfg_new();
	int64_t syz = add_bug(f->s, "s", "net", NULL, "/r/repro.syz"),
		none = add_bug(f->s, "n", "net", NULL, "");
	struct store_event **ev = NULL;
	struct store_job **j = NULL;
	struct store_bug *b;
	size_t n = 0;
	bool seen_syz = false, seen_none = false;
	char dir[] = "/tmp/kfix-syzkaller-XXXXXX", path[128];

	assert_int_equal(sched_run(c, f->s), 0);
	assert_int_equal(store_event_list(f->s, 0, 0, 0, &ev, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (!ev[i]->detail)
			continue;
		seen_syz |= ev[i]->bug_id == syz && strstr(ev[i]->detail, "only a syz reproducer");
		seen_none |= ev[i]->bug_id == none &&
			     strstr(ev[i]->detail, "no reproducer: nothing to test a fix with");
	}
	store_event_list_free(ev, n);
	assert_true(seen_syz);
	assert_true(seen_none);
	/* a syz-only bug waits for syzkaller's tools, not given up */
	b = bug(f->s, syz);
	assert_string_equal(b->state, "needs-syzkaller");
	store_bug_free(b);
	b = bug(f->s, none);
	assert_string_equal(b->state, "gave-up");
	store_bug_free(b);

	/* a syzkaller build with one of its two tools is not enough */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bin/linux_amd64", dir);
	assert_int_equal(mkdir_p(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/bin/linux_amd64/syz-execprog", dir);
	assert_int_equal(write_file_atomic(path, "x", 1, 0755), 0);
	assert_int_equal(config_set(c, "vm", "v", "syzkaller", dir), 0);
	assert_int_equal(sched_run(c, f->s), 0);
	assert_int_equal(jobs_of(f->s, syz, &j), 0);
	store_job_list_free(j, 0);
	/* with both, the waiting bug gets its reproduce job */
	snprintf(path, sizeof(path), "%s/bin/linux_amd64/syz-executor", dir);
	assert_int_equal(write_file_atomic(path, "x", 1, 0755), 0);
	assert_int_equal(sched_run(c, f->s), 0);
	n = jobs_of(f->s, syz, &j);
	assert_int_equal(n, 1);
	assert_string_equal(j[0]->kind, "reproduce");
	store_job_list_free(j, n);
	assert_int_equal(rm_rf(dir), 0);
	config_free(c);
}

static void test_self_test(void **state)
{
	struct fixture *f = *state;
	struct config *c = cfg_new();
	/* every new bug, whatever its tree and reproducers */
	int64_t a = add_bug(f->s, "a", "nowhere", NULL, NULL), b = add_bug(f->s, "b", "net", "/r/c", NULL);
	struct store_job **j = NULL;
	size_t n;

	assert_int_equal(config_set(c, "kfix", NULL, "self-test-jobs", "true"), 0);
	assert_int_equal(sched_run(c, f->s), 0);
	n = jobs_of(f->s, a, &j);
	assert_int_equal(n, 1);
	assert_string_equal(j[0]->kind, "self-test");
	assert_int_equal(j[0]->priority, 0);
	store_job_list_free(j, n);
	n = jobs_of(f->s, b, &j);
	assert_int_equal(n, 1);
	assert_string_equal(j[0]->kind, "self-test");
	store_job_list_free(j, n);
	config_free(c);
}

/* ---- requests ---- */

static int64_t patch_awaiting(struct store *s, int64_t bug_id)
{
	struct store_patch p = { .bug_id = bug_id, .diff = "diff --git a/x b/x\n", .subject = "x" };
	int64_t id;

	assert_int_equal(store_patch_add(s, &p, &id, NULL), 0);
	assert_int_equal(store_patch_decide(s, id, "awaiting-approval", NULL, NULL), 0);
	return id;
}

static void request(struct store *s, int64_t bug_id, const char *cmd, const char *detail)
{
	char kind[64];

	snprintf(kind, sizeof(kind), "request.%s", cmd);
	assert_int_equal(store_event_add(s, bug_id, 0, kind, detail), 0);
}

/* The details of the bug's request.ignored events, joined by '|'. */
static char *ignored(struct store *s, int64_t bug_id)
{
	struct store_event **ev = NULL;
	struct store_query q = { .state = "request.ignored", .bug_id = bug_id };
	char buf[2048] = "";
	size_t n = 0, len = 0;

	assert_int_equal(store_event_query(s, &q, &ev, &n), 0);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "|" : "",
					ev[i]->detail ? ev[i]->detail : "");
	store_event_list_free(ev, n);
	return strdup(buf);
}

static char *patch_state(struct store *s, int64_t id)
{
	struct store_patch *p = NULL;
	char *st;

	assert_int_equal(store_patch_get(s, id, &p), 0);
	st = strdup(p->state);
	store_patch_free(p);
	return st;
}

static void test_request_refusals(void **state)
{
	struct fixture *f = *state;
	struct config *c = cfg_new();
	int64_t b = add_bug(f->s, "b", "nowhere", NULL, NULL);
	char *why;

	request(f->s, b, "reject", "{\"name\":\"Mod <mod@example.org>\"}");
	request(f->s, b, "upstream", "{\"name\":\"Mod <mod@example.org>\"}");
	request(f->s, b, "retest", NULL);
	request(f->s, b, "frobnicate", NULL);
	assert_int_equal(sched_run(c, f->s), 0);
	why = ignored(f->s, b);
	assert_string_equal(why, "no patch is awaiting approval|no patch is awaiting approval|"
				 "no patch is awaiting approval|this command is not supported");
	free(why);
	/* each request once: a second pass does not answer them again */
	assert_int_equal(sched_run(c, f->s), 0);
	why = ignored(f->s, b);
	assert_string_equal(why, "no patch is awaiting approval|no patch is awaiting approval|"
				 "no patch is awaiting approval|this command is not supported");
	free(why);
	config_free(c);
}

static void test_request_upstream(void **state)
{
	struct fixture *f = *state;
	struct config *c = cfg_new();
	int64_t b = add_bug(f->s, "b", "nowhere", NULL, NULL), p = patch_awaiting(f->s, b);
	struct store_job **j = NULL;
	char *why, *st;
	size_t n;

	/* the approver must be "Name <addr>" to sign off */
	request(f->s, b, "upstream", "{\"name\":\"mod@example.org\"}");
	request(f->s, b, "upstream", "{\"by\":\"Mod <mod@example.org>\"}");
	assert_int_equal(sched_run(c, f->s), 0);
	why = ignored(f->s, b);
	assert_string_equal(why, "the approver has no \"Name <addr>\" to sign off with|"
				 "the approver has no \"Name <addr>\" to sign off with");
	free(why);
	st = patch_state(f->s, p);
	assert_string_equal(st, "awaiting-approval");
	free(st);
	assert_int_equal(jobs_of(f->s, b, &j), 0);
	store_job_list_free(j, 0);

	request(f->s, b, "upstream", "{\"name\":\"Mod Erator <mod@example.org>\"}");
	assert_int_equal(sched_run(c, f->s), 0);
	st = patch_state(f->s, p);
	assert_string_equal(st, "approved");
	free(st);
	n = jobs_of(f->s, b, &j);
	assert_int_equal(n, 1);
	assert_string_equal(j[0]->kind, "publish");
	assert_non_null(strstr(j[0]->args, "\"stage\":\"upstream\""));
	assert_non_null(strstr(j[0]->args, "\"by\":\"Mod Erator <mod@example.org>\""));
	store_job_list_free(j, n);
	config_free(c);
}

static void test_request_reject_retest_stop(void **state)
{
	struct fixture *f = *state;
	struct config *c = cfg_new();
	int64_t b = add_bug(f->s, "b", "nowhere", NULL, NULL), b2 = add_bug(f->s, "b2", "nowhere", NULL, NULL),
		p = patch_awaiting(f->s, b), p2 = patch_awaiting(f->s, b2), other;
	struct store_job **j = NULL;
	char pid[64], *st;
	size_t n;

	request(f->s, b, "retest", "{\"by\":\"Mod <mod@example.org>\"}");
	assert_int_equal(sched_run(c, f->s), 0);
	n = jobs_of(f->s, b, &j);
	assert_int_equal(n, 1);
	assert_string_equal(j[0]->kind, "retest");
	assert_int_equal(j[0]->priority, 100);
	snprintf(pid, sizeof(pid), "\"patch\":%lld", (long long)p);
	assert_non_null(strstr(j[0]->args, pid));
	assert_non_null(strstr(j[0]->args, "\"by\":\"Mod <mod@example.org>\""));
	store_job_list_free(j, n);

	/* stop: the bug's queued and running jobs end, another bug's stay */
	assert_int_equal(store_job_add(f->s, b2, "repair", NULL, 0, 3, &other), 0);
	request(f->s, b, "stop", NULL);
	assert_int_equal(sched_run(c, f->s), 0);
	n = jobs_of(f->s, b, &j);
	assert_int_equal(n, 1);
	assert_string_equal(j[0]->state, "cancelled");
	store_job_list_free(j, n);
	n = jobs_of(f->s, b2, &j);
	assert_int_equal(n, 1);
	assert_string_equal(j[0]->state, "queued");
	store_job_list_free(j, n);

	/* reject: of that bug's patch only */
	request(f->s, b, "reject", "{\"name\":\"Mod <mod@example.org>\"}");
	assert_int_equal(sched_run(c, f->s), 0);
	st = patch_state(f->s, p);
	assert_string_equal(st, "rejected");
	free(st);
	st = patch_state(f->s, p2);
	assert_string_equal(st, "awaiting-approval");
	free(st);
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_bugs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reasons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_self_test, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_upstream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_reject_retest_stop, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
