#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/conf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "mail/compose.h"
#include "publish.h"
#include "source.h"
#include "store.h"
#include "syztest.h"

#define SYZKALLER_BUGS_LIST "syzkaller-bugs@googlegroups.com"
#define DAY_SECONDS (24 * 3600)

static bool syzbot_bug(const struct store_bug *b)
{
	return streq_ptr(b->source, "syzbot") && b->source_id && *b->source_id;
}

bool syztest_after_validation(const struct config *cfg, const char *tree)
{
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };

	return tree_conf_from_config(cfg, tree, &tc, NULL) >= 0 &&
	       streq_ptr(tc.syzbot_test_after, "validation");
}

/* What the patch's events say: asked, skipped, and the newest answer
 * (the list kfixctl patch and the dashboard show, oldest first). */
struct test_record {
	bool asked, skipped, timed_out;
	const char *result, *title; /* of the newest answer; borrowed from the list */
};

static void test_record(const json_t *events, struct test_record *ret)
{
	const json_t *e;
	size_t i;

	*ret = (struct test_record){ 0 };
	json_array_foreach(events, i, e) {
		const char *res = json_get_str(e, "result");

		if (streq_ptr(res, "asked"))
			ret->asked = true;
		else if (streq_ptr(res, "not-asked"))
			ret->skipped = true;
		else if (streq_ptr(res, "no-answer"))
			ret->timed_out = true;
		else if (res) {
			ret->result = res;
			ret->title = json_get_str(e, "title");
		}
	}
}

int syztest_state(struct store *s, const struct config *cfg, const struct store_bug *b,
		  const struct store_patch *p, enum syztest_state *ret, char **ret_title)
{
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
	_cleanup_json_ json_t *events = NULL;
	struct test_record t;
	int r;

	r = tree_conf_from_config(cfg, b->tree, &tc, NULL);
	if (r < 0)
		return r;
	if (!tc.ask_syzbot_test || !syzbot_bug(b)) {
		*ret = SYZTEST_OFF;
		return 0;
	}
	events = store_patch_syzbot_tests(s, p);
	if (!events)
		return -ENOMEM;
	test_record(events, &t);
	if (t.result && t.title && ret_title && !(*ret_title = strdup(t.title)))
		return -ENOMEM;
	*ret = streq_ptr(t.result, "ok")	  ? SYZTEST_OK
	     : streq_ptr(t.result, "crash")	  ? SYZTEST_CRASH
	     : streq_ptr(t.result, "build-error") ? SYZTEST_BUILD_ERROR
	     : t.asked && t.timed_out		  ? SYZTEST_NO_ANSWER
	     : t.asked				  ? SYZTEST_WAITING
	     : t.skipped			  ? SYZTEST_SKIPPED
						  : SYZTEST_TO_ASK;
	return 0;
}

/* One version's line, or nothing while there is nothing to say. */
static void note_version(struct buf *t, struct buf *nt, int version, enum syztest_state st,
			 const char *title)
{
	switch (st) {
	case SYZTEST_OK:
		(void)buf_printf(t, "- syzbot tested v%d on its own VMs: OK, the reproducer did "
				 "not trigger any issue\n", version);
		break;
	case SYZTEST_CRASH:
		(void)buf_printf(t, "- syzbot tested v%d on its own VMs: it still crashed (%s)\n",
				 version, title ? title : "?");
		break;
	case SYZTEST_BUILD_ERROR:
		(void)buf_printf(nt, "- syzbot could not build or boot v%d\n", version);
		break;
	case SYZTEST_NO_ANSWER:
		(void)buf_printf(nt, "- syzbot was asked to test v%d and did not answer in time\n",
				 version);
		break;
	case SYZTEST_SKIPPED:
		(void)buf_printf(nt, "- syzbot did not test v%d: the tree's requests for the day "
				 "were used up\n", version);
		break;
	default:
		break;
	}
}

int syztest_notes(struct store *s, const struct config *cfg, const struct store_bug *b,
		  const struct store_patch *cur, char **ret_tested, char **ret_not_tested)
{
	_cleanup_buf_ struct buf t = BUF_INIT(SYZTEST_TEXT_MAX), nt = BUF_INIT(SYZTEST_TEXT_MAX);
	struct store_patch **ps = NULL;
	size_t n = 0;
	int r = store_patch_list(s, NULL, b->id, 0, &ps, &n);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		_cleanup_free_ char *title = NULL;
		enum syztest_state st;

		if (ps[i]->version > cur->version)
			continue;
		r = syztest_state(s, cfg, b, ps[i], &st, &title);
		if (r >= 0)
			note_version(&t, &nt, ps[i]->version, st, title);
	}
	store_patch_list_free(ps, n);
	if (r < 0)
		return r;
	*ret_tested = t.data ? buf_steal(&t, NULL) : NULL;
	*ret_not_tested = nt.data ? buf_steal(&nt, NULL) : NULL;
	return 0;
}

/* Requests made for the tree's bugs in the last day. */
static int64_t asked_today(struct store *s, const char *tree)
{
	struct store_query q = { .state = "patch.syzbot-test-asked", .newest = true, .limit = 1000 };
	struct store_event **ev = NULL;
	/* event times are in microseconds */
	int64_t since = ((int64_t)time(NULL) - DAY_SECONDS) * 1000000, count = 0;
	size_t n = 0;

	if (store_event_query(s, &q, &ev, &n) < 0)
		return INT64_MAX; /* unknown: ask nothing */
	for (size_t i = 0; i < n && ev[i]->ts >= since; i++) {
		json_t *d = ev[i]->detail ? json_loads(ev[i]->detail, 0, NULL) : NULL;

		count += streq_ptr(json_get_str(d, "tree"), tree);
		json_decref(d);
	}
	store_event_list_free(ev, n);
	return count;
}

/* syzbot fetches the tree itself: a network URL is named with the base
 * commit; a local tree cannot be, and a bare "#syz test" tests on the
 * tree the bug was found on. */
static void test_target(const struct tree_conf *tc, const struct store_patch *p,
			const char **ret_tree, const char **ret_rev)
{
	const char *url = tc->url;

	*ret_tree = *ret_rev = NULL;
	if (!url || !p->base_commit)
		return;
	if (startswith(url, "git://") || startswith(url, "https://") || startswith(url, "http://")) {
		*ret_tree = url;
		*ret_rev = p->base_commit;
	}
}

int syztest_ask(struct store *s, const struct config *cfg, const struct store_bug *b,
		const struct store_patch *p, const struct syztest_request *rq, bool *ret_skipped,
		char **ret_error)
{
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
	_cleanup_free_ char *mail = NULL, *key = NULL;
	char *cc[] = { (char *)SYZKALLER_BUGS_LIST, NULL };
	char rcpt[400];
	struct syz_test_mail m = {
		.from = rq->from, .message_id = rq->message_id, .extid = b->source_id,
		.report = rq->report, .report_mid = rq->report_mid, .title = b->title,
		.cc = cc, .diff = p->diff, .date = (time_t)p->created,
	};
	int r;

	r = tree_conf_from_config(cfg, b->tree, &tc, ret_error);
	if (r < 0)
		return r;
	*ret_skipped = false;
	if (asked_today(s, b->tree) >= tc.syzbot_tests_per_day) {
		*ret_skipped = true;
		return store_event_add_json(s, b->id, 0, "patch.syzbot-test-skipped",
				 json_pack("{s:I, s:i, s:s}", "patch", (json_int_t)p->id, "version",
					   p->version, "reason", "the day's syzbot-tests-per-day are used"));
	}
	test_target(&tc, p, &m.git_tree, &m.branch);
	r = mail_compose_syz_test(&m, &mail, ret_error);
	if (r < 0)
		return r;
	snprintf(rcpt, sizeof(rcpt), "[\"syzbot+%s@syzkaller.appspotmail.com\", \"%s\"]",
		 b->source_id, SYZKALLER_BUGS_LIST);
	if (asprintf(&key, "mail:<%s>", rq->message_id) < 0)
		return -ENOMEM;
	r = store_outbox_add(s, b->id, "mail", key, mail, NULL, NULL);
	/* syzbot's answer names this mail: it finds the patch */
	if (r >= 0)
		r = store_patch_mail_add(s, p->id, rq->message_id, "syzbot-test", rcpt);
	if (r >= 0)
		r = store_event_add_json(s, b->id, 0, "patch.syzbot-test-asked",
			      json_pack("{s:I, s:i, s:s, s:s, s:s?}", "patch", (json_int_t)p->id,
					"version", p->version, "message_id", rq->message_id, "tree",
					b->tree, "branch", m.git_tree ? m.branch : NULL));
	return r;
}

/* One unanswered request past its time: the event and, for an approved
 * patch, its upstream stage; in one transaction. */
static int time_out(const struct config *cfg, struct store *s, int64_t patch_id, int64_t asked_ts,
		    int64_t now)
{
	_cleanup_(store_patch_freep) struct store_patch *p = NULL;
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
	enum syztest_state st;
	int r = store_patch_get(s, patch_id, &p);

	if (r >= 0)
		r = store_bug_get(s, p->bug_id, &b);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	r = tree_conf_from_config(cfg, b->tree, &tc, NULL);
	if (r < 0)
		return r;
	if (now - asked_ts < (int64_t)tc.syzbot_test_timeout_usec)
		return 0;
	r = syztest_state(s, cfg, b, p, &st, NULL);
	if (r < 0 || st != SYZTEST_WAITING)
		return r;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = store_event_add_json(s, p->bug_id, 0, "patch.syzbot-test-timeout",
				 json_pack("{s:I, s:i, s:I}", "patch", (json_int_t)p->id, "version",
					   p->version, "waited_sec", (json_int_t)((now - asked_ts) / 1000000)));
	if (r >= 0 && streq_ptr(p->state, "approved") && p->decided_by)
		r = publish_queue(s, p->id, "upstream", p->decided_by);
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	log_notice("patch %lld: syzbot did not answer its #syz test: going on untested",
		   (long long)p->id);
	return store_commit(s);
}

int syztest_schedule(const struct config *cfg, struct store *s)
{
	struct store_query q = { .state = "patch.syzbot-test-asked", .newest = true,
				 .limit = SYZTEST_SCAN_MAX };
	/* kept in memory, not in the store: a write there every scan would
	 * wake the daemon itself (it watches the store's folder) */
	static uint64_t last_scan;
	struct store_event **ev = NULL;
	int64_t now = (int64_t)time(NULL) * 1000000;
	uint64_t mono = clock_mono_usec();
	size_t n = 0;
	int r;

	if (last_scan && mono < last_scan + SYZTEST_SCAN_EVERY)
		return 0;
	last_scan = mono;
	r = store_event_query(s, &q, &ev, &n);
	for (size_t i = 0; i < n && r >= 0; i++) {
		_cleanup_json_ json_t *d = ev[i]->detail ? json_loads(ev[i]->detail, 0, NULL) : NULL;
		int64_t patch = json_get_int(d, "patch", 0);

		if (patch > 0)
			r = time_out(cfg, s, patch, ev[i]->ts, now);
	}
	store_event_list_free(ev, n);
	return r;
}

int syztest_answered(struct store *s, const struct store_patch *p, const char *result,
		     const char *title, const char *message_id, const char *text)
{
	_cleanup_free_ char *comments = NULL;
	struct store_review v = {
		.bug_id = p->bug_id, .patch_id = p->id, .message_id = (char *)message_id,
		.author = (char *)"syzbot", .may_iterate = true,
	};
	int r = 0;

	if (streq(result, "crash")) {
		/* a new version, with syzbot's report for the model to read */
		if (asprintf(&comments, "syzbot tested v%d of the patch and the reproducer still "
				"crashed the kernel: %s\n\n%.*s", p->version, title ? title : "(no title)",
			     (int)SYZTEST_TEXT_MAX, text ? text : "") < 0)
			return -ENOMEM;
		v.comments = comments;
		r = store_review_add(s, &v, NULL, NULL);
	}
	/* an approval that waited for kfix's request: the upstream stage
	 * decides (answers to other people's requests only inform) */
	if (r >= 0 && streq_ptr(p->state, "approved") && p->decided_by) {
		_cleanup_json_ json_t *events = store_patch_syzbot_tests(s, p);
		struct test_record t;

		test_record(events, &t);
		if (t.asked)
			r = publish_queue(s, p->id, "upstream", p->decided_by);
	}
	return r;
}
