/* kfixctl commands for patches and for the scheduler's mode. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"
#include "publish.h"
#include "store.h"
#include "bisect.h"
#include "upstream.h"

int ctl_patches(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "bug", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	struct store_patch **ps = NULL;
	const char *state = NULL;
	int64_t bug = 0;
	struct store *s;
	size_t n = 0;
	char t[32];
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 's')
			state = optarg;
		else if (ch != 'b' || ctl_parse_id("patches", optarg, &bug) < 0)
			return 2;
	}
	if (optind < argc) {
		ctl_err("patches: unexpected argument '%s'", argv[optind]);
		return 2;
	}
	if (ctl_store(c, &s) < 0)
		return 1;
	if (store_patch_list(s, state, bug, 0, &ps, &n) < 0) {
		ctl_err("patches: %s", store_errmsg(s));
		return 1;
	}
	if (c->json) {
		json_t *a = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, store_patch_json(ps[i], false));
		store_patch_list_free(ps, n);
		return ctl_print_json(a);
	}
	printf("%-6s %-6s %-3s %-18s %-16s %s\n", "ID", "BUG", "V", "STATE", "UPDATED", "SUBJECT");
	for (size_t i = 0; i < n; i++) {
		const char *subj = ps[i]->subject ? ps[i]->subject : "-";
		_cleanup_free_ char *e = str_escape(subj, strlen(subj), 72);

		printf("%-6lld %-6lld %-3d %-18s %-16s %s\n", (long long)ps[i]->id,
		       (long long)ps[i]->bug_id, ps[i]->version, ps[i]->state,
		       ctl_time(ps[i]->updated, t, sizeof(t)), e ? e : "?");
	}
	store_patch_list_free(ps, n);
	return 0;
}

/* The replies kept against the patch (intake-review.h). */
static json_t *reviews_json(struct store *s, const struct store_patch *p)
{
	struct store_review **vs = NULL;
	json_t *a = json_array();
	size_t n = 0;

	if (!a || store_review_list(s, 0, p->id, 0, &vs, &n) < 0)
		return a;
	for (size_t i = 0; i < n; i++) {
		json_t *tr = vs[i]->trailers ? json_loads(vs[i]->trailers, 0, NULL) : NULL;

		json_array_append_new(a, json_pack("{s:I, s:s, s:s, s:o, s:o, s:b, s:I}",
			"id", (json_int_t)vs[i]->id, "message_id", vs[i]->message_id,
			"by", vs[i]->author, "trailers", tr ? tr : json_array(),
			"comments", json_str_or_null(vs[i]->comments), "new_version",
			vs[i]->may_iterate, "job", (json_int_t)vs[i]->job_id));
	}
	store_review_list_free(vs, n);
	return a;
}

/* The evidence as a reader wants it: the reproduction table, then each
 * text under its heading; JSON that is not kfix's is shown as stored. */
static void print_evidence(const char *evidence)
{
	_cleanup_json_ json_t *e = json_loads(evidence, 0, NULL);
	const struct store_evidence_text *t;
	json_t *row;
	size_t i;

	if (!json_is_object(e)) {
		printf("\nEvidence:\n%s\n", evidence);
		return;
	}
	if (json_array_size(json_object_get(e, "table")))
		printf("\nReproduction:\n");
	json_array_foreach(json_object_get(e, "table"), i, row)
		printf("  %-28s %s\n", json_get_str(row, "kernel") ?: "?",
		       json_get_str(row, "result") ?: "?");
	for (t = store_evidence_texts; t->key; t++)
		if (json_get_str(e, t->key))
			printf("\n%s:\n%s\n", t->heading, json_get_str(e, t->key));
	if (json_get_int(e, "job", 0) > 0)
		printf("\nMade by job %lld (kfixctl trace %lld shows its steps)\n",
		       (long long)json_get_int(e, "job", 0), (long long)json_get_int(e, "job", 0));
}

int ctl_patch(struct ctl *c, int argc, char **argv)
{
	_cleanup_json_ json_t *reviews = NULL;
	_cleanup_(store_patch_freep) struct store_patch *p = NULL;
	_cleanup_json_ json_t *tests = NULL;
	struct store *s = c->store;
	int64_t id = c->id;
	char t[32];
	int r;

	(void)argc;
	(void)argv;
	r = store_patch_get(s, id, &p);
	if (r < 0) {
		ctl_err("patch %lld: %s", (long long)id, r == -ENOENT ? "no such patch" : store_errmsg(s));
		return 1;
	}
	tests = store_patch_syzbot_tests(s, p);
	if (c->json) {
		json_t *j = store_patch_json(p, true);

		if (j)
			json_object_set(j, "syzbot_tests", tests ? tests : json_null());
		if (j)
			json_object_set_new(j, "reviews", reviews_json(s, p));
		return ctl_print_json(j);
	}
	printf("%-14s %lld (bug %lld, v%d)\n", "Patch:", (long long)p->id,
	       (long long)p->bug_id, p->version);
	printf("%-14s %s\n", "State:", p->state);
	ctl_print_escaped("Subject:", p->subject);
	ctl_print_escaped("Base commit:", p->base_commit);
	ctl_print_escaped("Branch:", p->branch);
	ctl_print_escaped("Message-ID:", p->message_id);
	ctl_print_escaped("Sent to:", p->sent_to);
	ctl_print_escaped("Decided by:", p->decided_by);
	ctl_print_escaped("Reason:", p->reason);
	printf("%-14s %s\n", "Updated:", ctl_time(p->updated, t, sizeof(t)));
	for (size_t i = 0; tests && i < json_array_size(tests); i++) {
		json_t *e = json_array_get(tests, i);
		_cleanup_free_ char *line = NULL;

		if (asprintf(&line, "%s%s%s", json_get_str(e, "result") ?: "?",
			     json_get_str(e, "title") ? ": " : "", json_get_str(e, "title") ?: "") >= 0)
			ctl_print_escaped("syzbot test:", line);
	}
	reviews = reviews_json(s, p);
	for (size_t i = 0; reviews && i < json_array_size(reviews); i++) {
		json_t *v = json_array_get(reviews, i), *tag;
		_cleanup_free_ char *line = NULL;
		size_t k;

		if (asprintf(&line, "%s (%s)%s", json_get_str(v, "by") ?: "?",
			     json_get_str(v, "message_id") ?: "",
			     json_is_true(json_object_get(v, "new_version")) ? ", asks for a new version"
									      : "") >= 0)
			ctl_print_escaped("Review:", line);
		json_array_foreach(json_object_get(v, "trailers"), k, tag) {
			free(line);
			line = NULL;
			if (asprintf(&line, "%s: %s", json_get_str(tag, "key") ?: "",
				     json_get_str(tag, "value") ?: "") >= 0)
				ctl_print_escaped("  trailer:", line);
		}
	}
	/* the rest is shown as stored: it is kfix's own output */
	if (p->explanation)
		printf("\nExplanation:\n%s\n", p->explanation);
	if (p->evidence)
		print_evidence(p->evidence);
	if (p->message)
		printf("\nCommit message:\n%s\n", p->message);
	printf("\n%s", p->diff);
	return 0;
}

int ctl_publish(struct ctl *c, int argc, char **argv)
{
	struct store *s = c->store;
	int64_t id = c->id;
	int r;

	(void)argc;
	(void)argv;
	r = publish_queue(s, id, "moderation", NULL);
	if (r == -ENOENT)
		ctl_err("publish: no patch %lld", (long long)id);
	else if (r < 0)
		ctl_err("publish: %s", store_errmsg(s));
	else
		printf("patch %lld: publishing queued\n", (long long)id);
	return r < 0 ? 1 : 0;
}

static bool rev_valid(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/^~-");

	return n > 0 && n <= 128 && !s[n] && s[0] != '-';
}

int ctl_compare(struct ctl *c, int argc, char **argv)
{
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	struct store *s;
	int64_t id = c->id;
	int r;

	if (argc == 3 && !rev_valid(argv[2])) {
		ctl_err("compare: '%s' is not a commit or revision name", argv[2]);
		return 2;
	}
	if (ctl_store(c, &s) < 0)
		return 1;
	r = store_bug_get(s, id, &b);
	if (r == -ENOENT) {
		ctl_err("compare: no bug %lld", (long long)id);
		return 1;
	}
	if (r >= 0)
		r = upstream_ask(s, id, "kfixctl", argc == 3 ? argv[2] : NULL);
	if (r < 0) {
		ctl_err("compare: %s", store_errmsg(s));
		return 1;
	}
	printf("bug %lld: comparison with the fix that landed requested\n", (long long)id);
	return 0;
}

int ctl_bisect(struct ctl *c, int argc, char **argv)
{
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	const char *good = NULL;
	struct store *s;
	int64_t id;
	int r;

	if (argc == 4 && streq(argv[2], "--good")) {
		good = argv[3];
		argc = 2;
	} else if (argc == 4 && streq(argv[1], "--good")) {
		good = argv[2];
		argv[1] = argv[3];
		argc = 2;
	}
	if (argc != 2) {
		ctl_err("bisect: usage: kfixctl bisect [--good REV] BUG");
		return 2;
	}
	if (ctl_parse_id("bisect", argv[1], &id) < 0)
		return 2;
	if (good && !rev_valid(good)) {
		ctl_err("bisect: '%s' is not a commit or revision name", good);
		return 2;
	}
	if (ctl_store(c, &s) < 0)
		return 1;
	r = store_bug_get(s, id, &b);
	if (r == -ENOENT) {
		ctl_err("bisect: no bug %lld", (long long)id);
		return 1;
	}
	if (r >= 0)
		r = bisect_ask(s, id, "kfixctl", good);
	if (r < 0) {
		ctl_err("bisect: %s", store_errmsg(s));
		return 1;
	}
	printf("bug %lld: bisection requested%s%s\n", (long long)id, good ? " from " : "",
	       good ? good : "");
	return 0;
}

static bool decide_api(struct ctl *c, const char *cmd, int64_t id, const char *by,
		       const char *reason, const char *state, int *ret_exit)
{
	_cleanup_json_ json_t *body = json_pack("{s:o, s:o}", "by", json_str_or_null(by),
						"reason", json_str_or_null(reason));
	_cleanup_json_ json_t *answer = NULL;
	char path[64];

	if (!body) {
		*ret_exit = 1;
		return true;
	}
	if (!by)
		json_object_del(body, "by");
	if (!reason)
		json_object_del(body, "reason");
	snprintf(path, sizeof(path), "/api/v1/patches/%lld/%s", (long long)id, cmd);
	if (!ctl_api_action(c, cmd, path, body, &answer, ret_exit))
		return false;
	if (*ret_exit == 0)
		printf("patch %lld: %s\n", (long long)id, state);
	return true;
}

static int decide(struct ctl *c, int argc, char **argv, const char *cmd,
		  const char *state)
{
	static const struct option opts[] = {
		{ "reason", required_argument, NULL, 'r' },
		{ "by", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	const char *reason = NULL, *by = getenv("SUDO_USER");
	struct store *s;
	int64_t id;
	int ch, r;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'r')
			reason = optarg;
		else if (ch == 'b')
			by = optarg;
		else
			return 2;
	}
	if (optind + 1 != argc) {
		ctl_err("%s: usage: kfixctl %s [--by NAME] [--reason TEXT] PATCH", cmd, cmd);
		return 2;
	}
	if (ctl_parse_id(cmd, argv[optind], &id) < 0)
		return 2;
	if (streq(state, "approved") && !publish_approver_valid(by)) {
		ctl_err("%s: --by \"Name <address>\" is needed: the approver signs off", cmd);
		return 2;
	}
	if (!by)
		by = getenv("USER");
	/* a running daemon does it; else the store is changed directly */
	if (decide_api(c, cmd, id, by, reason, state, &r))
		return r;
	if (ctl_store(c, &s) < 0)
		return 1;
	r = publish_decide(s, id, state, by, reason);
	if (r == -ENOENT)
		ctl_err("%s: no patch %lld", cmd, (long long)id);
	else if (r == -EPERM)
		ctl_err("%s: patch %lld is not awaiting approval", cmd, (long long)id);
	else if (r < 0)
		ctl_err("%s: %s", cmd, store_errmsg(s));
	else
		printf("patch %lld: %s\n", (long long)id, state);
	return r < 0 ? 1 : 0;
}

int ctl_approve(struct ctl *c, int argc, char **argv)
{
	return decide(c, argc, argv, "approve", "approved");
}

int ctl_reject(struct ctl *c, int argc, char **argv)
{
	return decide(c, argc, argv, "reject", "rejected");
}

/* Through the daemon when it runs (it logs the change), else in the
 * store; either way a scheduler.mode event says who. */
static int set_mode(struct ctl *c, const char *cmd, const char *mode)
{
	_cleanup_json_ json_t *answer = NULL, *body = NULL;
	struct store *s;
	char by[64];
	int ex;

	snprintf(by, sizeof(by), "kfixctl %s (uid %u)", cmd, (unsigned)getuid());
	body = json_pack("{s:s, s:s}", "mode", mode, "by", by);
	if (!body)
		return 1;
	if (ctl_api_action(c, cmd, "/api/v1/scheduler", body, &answer, &ex)) {
		if (ex == 0)
			printf("scheduler: %s\n", mode);
		return ex;
	}
	if (ctl_store(c, &s) < 0)
		return 1;
	if (store_scheduler_set(s, mode, by) < 0) {
		ctl_err("%s: %s", cmd, store_errmsg(s));
		return 1;
	}
	printf("scheduler: %s (no daemon answers: the store is changed, kfixd reads it "
	       "when it starts)\n", mode);
	return 0;
}

int ctl_pause(struct ctl *c, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return set_mode(c, "pause", "paused");
}

int ctl_resume(struct ctl *c, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return set_mode(c, "resume", "running");
}

int ctl_drain(struct ctl *c, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return set_mode(c, "drain", "draining");
}
