#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/conf.h"
#include "common/strutil.h"
#include "hooks/forge.h"
#include "intake-mail.h"
#include "intake-review.h"
#include "mail/auth.h"
#include "mail/compose.h"
#include "mail/parse.h"
#include "source.h"
#include "store.h"
#include "syztest.h"

/* A patch naming more syzbot bugs than this is not about any one of them. */
#define OTHER_PATCH_BUGS_MAX 4
#define EXTID_MAX 64

struct intake_mail {
	char *message_id, *from, *subject;
	/* a syzbot report */
	struct store_bug bug;
	/* a #kfix command */
	char *command, *author_display, *extid, *in_reply_to;
	int64_t target_bug;
	/* a syzbot "#syz test" result */
	enum mail_test_result test;
	char *test_title, *test_text;
	char **references; /* newest first */
	/* a patch by someone else: the syzbot bugs it names */
	char **patch_extids;
	/* a reply on one of kfix's patch threads (with or without a command) */
	struct intake_review *review;
	const char *ignore_why; /* static text */
};

void intake_mail_free(struct intake_mail *im)
{
	if (!im)
		return;
	free(im->message_id);
	free(im->from);
	free(im->subject);
	free(im->bug.source_id);
	free(im->bug.title);
	free(im->bug.tree);
	free(im->bug.base_commit);
	free(im->bug.report);
	free(im->bug.repro_c);
	free(im->bug.repro_syz);
	free(im->bug.kernel_config);
	free(im->command);
	free(im->author_display);
	free(im->extid);
	free(im->in_reply_to);
	free(im->test_title);
	free(im->test_text);
	strv_free(im->references);
	strv_free(im->patch_extids);
	intake_review_free(im->review);
	free(im);
}

static int report_fill(struct intake_mail *im, const struct mail_syzbot *sz)
{
	im->bug.source = (char *)"syzbot";
	return strdup_each((char **[]){ &im->bug.source_id, &im->bug.title, &im->bug.tree,
				    &im->bug.base_commit, &im->bug.report, &im->bug.repro_c,
				    &im->bug.repro_syz, &im->bug.kernel_config },
		       (const char *const[]){ sz->extid, sz->title, sz->git_tree,
					      sz->head_commit, sz->console_log, sz->c_repro,
					      sz->syz_repro, sz->kernel_config },
		       8) ? 0 : -ENOMEM;
}

/* syzbot's answer to a "#syz test" that kfix's patch mail carried: the
 * thread (In-Reply-To, then References from the newest) names the patch. */
static int test_result_fill(struct intake_mail *im, const struct mail *m,
			    const struct mail_syzbot *sz)
{
	char *const *refs = mail_references(m);

	im->test = sz->test;
	/* a crash: its report, whose first line is the crash's title (the
	 * subject carries the bug's) */
	if (sz->test == MAIL_TEST_CRASH && sz->report) {
		if (!(im->test_text = strndup(sz->report, SYZTEST_TEXT_MAX)) ||
		    !(im->test_title = strndup(sz->report, strcspn(sz->report, "\n"))))
			return -ENOMEM;
	} else if (mail_body(m) && !(im->test_text = strndup(mail_body(m), SYZTEST_TEXT_MAX))) {
		return -ENOMEM;
	}
	if (!im->test_title && sz->title && !(im->test_title = strdup(sz->title)))
		return -ENOMEM;
	if (!strdup_each((char **[]){ &im->in_reply_to, &im->extid },
		     (const char *const[]){ mail_in_reply_to(m), sz->extid }, 2))
		return -ENOMEM;
	for (size_t i = strv_len(refs); i > 0 && i + 16 > strv_len(refs); i--)
		if (strv_push(&im->references, refs[i - 1]) < 0)
			return -ENOMEM;
	return 0;
}

/* Every "syzbot+EXTID@" in s, added once each to *extids. */
static int extids_scan(const char *s, char ***extids)
{
	for (const char *p = s ? strstr(s, "syzbot+") : NULL; p; p = strstr(p, "syzbot+")) {
		char id[EXTID_MAX + 1];
		size_t n = 0;

		p += strlen("syzbot+");
		while (n < EXTID_MAX && isalnum((unsigned char)p[n])) {
			id[n] = p[n];
			n++;
		}
		id[n] = '\0';
		if (n == 0 || p[n] != '@' || strv_contains(*extids, id))
			continue;
		if (strv_len(*extids) >= OTHER_PATCH_BUGS_MAX)
			return 0;
		if (strv_push(extids, id) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A patch names a bug in its Reported-by (or other trailers), its
 * recipients or its text. */
static int other_patch_fill(struct intake_mail *im, const struct mail *m)
{
	const struct mail_trailer *t;
	size_t n = 0;
	int r = 0;

	t = mail_trailers(m, &n);
	for (size_t i = 0; i < n && r >= 0; i++)
		r = extids_scan(t[i].value, &im->patch_extids);
	for (size_t i = 0; r >= 0 && mail_recipients(m)[i]; i++)
		r = extids_scan(mail_recipients(m)[i], &im->patch_extids);
	if (r >= 0)
		r = extids_scan(mail_body(m), &im->patch_extids);
	if (r >= 0)
		r = extids_scan(mail_patch(m), &im->patch_extids);
	if (r >= 0 && !im->patch_extids)
		im->ignore_why = "a patch about no syzbot bug";
	return r;
}

static int command_fill(struct intake_mail *im, const struct mail *m,
			const struct mail_syzbot *sz, const char *word)
{
	int v;

	if (!strdup_each((char **[]){ &im->command, &im->extid, &im->author_display,
				  &im->in_reply_to },
		     (const char *const[]){ word, sz ? sz->extid : NULL, mail_from_display(m),
					    mail_in_reply_to(m) }, 4))
		return -ENOMEM;
	if (forge_find_kfix_branch(mail_subject(m), &im->target_bug, &v) < 0)
		forge_find_kfix_branch(mail_body(m), &im->target_bug, &v);
	return 0;
}

/* What kfix acts on in a mail, in this order: a syzbot report (a new
 * bug), a syzbot test result, the first #kfix command (about the bug
 * kfix/<bug>/v<N> in the subject or body names, else the syzbot extid of
 * the thread), a patch naming syzbot bugs. */
int intake_mail_new(const struct mail *m, struct intake_mail **ret)
{
	_cleanup_(intake_mail_freep) struct intake_mail *im = calloc(1, sizeof(*im));
	const struct mail_syzbot *sz = mail_syzbot(m);
	const struct mail_command *cmds;
	size_t n = 0;
	int r = 0;

	if (!im)
		return -ENOMEM;
	if (!strdup_each((char **[]){ &im->message_id, &im->from, &im->subject },
		     (const char *const[]){ mail_message_id(m), mail_from(m), mail_subject(m) }, 3))
		return -ENOMEM;
	cmds = mail_commands(m, &n);
	if (mail_kind(m) == MAIL_KIND_SYZBOT_REPORT && sz && sz->extid && sz->title) {
		r = report_fill(im, sz);
	} else if (mail_kind(m) == MAIL_KIND_SYZBOT_TEST_RESULT && sz &&
		   sz->test != MAIL_TEST_NONE) {
		r = test_result_fill(im, m, sz);
	} else {
		for (size_t i = 0; i < n && !im->command && r >= 0; i++) {
			const char *w = cmds[i].kfix ? startswith(cmds[i].name, "kfix-") : NULL;

			if (w)
				r = command_fill(im, m, sz, w);
		}
		if (r >= 0)
			r = intake_review_new(m, im->command != NULL, &im->review);
		if (r >= 0 && !im->command && mail_kind(m) == MAIL_KIND_PATCH)
			r = other_patch_fill(im, m);
		else if (r >= 0 && !im->command && !im->review)
			im->ignore_why = "no syzbot report, no #kfix command, no review";
	}
	if (r < 0)
		return r;
	*ret = TAKE_PTR(im);
	return 0;
}

bool intake_mail_wanted(const struct intake_mail *im)
{
	return !im->ignore_why;
}

/* Is the raw mail authenticated for its From: by one of the methods the
 * config word lists?  0 with *ret_reason when not. */
static int authenticated(const struct config *cfg, const struct store_inbox *in,
			 const char *methods_word, const char **ret_reason)
{
	_cleanup_(mail_auth_freep) struct mail_auth *a = NULL;
	struct mail_auth_opts o;
	unsigned methods;
	int r;

	if (mail_auth_methods_parse(methods_word, &methods) < 0) {
		*ret_reason = "the configured authentication is not dkim, authres or none";
		return 0;
	}
	mail_auth_opts_from_config(cfg, &o);
	r = mail_auth_check(in->payload, in->payload_len, &o, &a);
	if (r < 0)
		return r;
	return mail_auth_from_ok(a, methods, ret_reason) ? 1 : 0;
}

/* The [mail] keys one applied mail reads. */
struct intake_mail_conf {
	const char *from;	 /* NULL: no bot identity */
	const char *syzbot_auth;
};

static void intake_mail_conf_from_config(const struct config *cfg, struct intake_mail_conf *ret)
{
	struct intake_mail_conf mc = { 0 };

	(void)config_get_string(cfg, "mail", NULL, "from", &mc.from);
	(void)config_get_string(cfg, "mail", NULL, "syzbot-auth", &mc.syzbot_auth);
	*ret = mc;
}

/* syzbot's reports and test results become bugs and verdicts whose text
 * the model reads: only from syzbot's own domain, with its signature. */
static int from_syzbot(const struct config *cfg, const struct intake_mail_conf *mc,
		       const struct intake_mail *im, const struct store_inbox *in,
		       const char **ret_reason)
{
	if (!im->from || !endswith(im->from, "@" SYZBOT_DOMAIN)) {
		*ret_reason = "not sent from syzbot's domain " SYZBOT_DOMAIN;
		return 0;
	}
	return authenticated(cfg, in, mc->syzbot_auth, ret_reason);
}

static int apply_report(struct store *s, const struct intake_mail *im,
			const struct store_inbox *in)
{
	int64_t bug_id;
	bool bug_new;
	int r = store_bug_add(s, &im->bug, &bug_id, &bug_new);

	if (r >= 0 && im->message_id)
		r = store_bug_set_report_message_id(s, bug_id, im->message_id);
	if (r >= 0)
		r = store_inbox_set_state(s, in->id, "done", bug_id,
					  bug_new ? "new bug" : "known bug");
	return r;
}

/* The polite answer to #kfix commands from a sender who may not give
 * them: queued once per sender and tree (the outbox key is the refusal
 * key, so later mails from the same sender add nothing). */
static int queue_refusal(struct store *s, const struct intake_mail_conf *mc,
			 const struct store_inbox *in, const struct store_bug *b)
{
	_cleanup_(mail_freep) struct mail *m = NULL;
	_cleanup_free_ char *key = NULL, *msg = NULL, *err = NULL;
	const char *from = mc->from, *tree = b->tree ? b->tree : "-";
	char mid[256], dom[128] = "kfix.invalid";
	const char *at;
	uint64_t h = 1469598103934665603ULL;
	int r;

	if (!from)
		return 0; /* no bot identity: nobody to answer as */
	r = mail_parse(in->payload, in->payload_len, in->payload_len + 1, &m, &err);
	if (r < 0)
		return 0;
	r = mail_refusal_key(m, tree, &key);
	if (r < 0)
		return r;
	for (const char *c = key; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	at = strrchr(from, '@');
	if (at)
		snprintf(dom, sizeof(dom), "%.*s", (int)strcspn(at + 1, ">"), at + 1);
	snprintf(mid, sizeof(mid), "kfix-refusal-%016llx@%s", (unsigned long long)h, dom);
	r = mail_compose_refusal(m, from, mid, b->tree, time(NULL), &msg, &err);
	if (r < 0)
		return 0; /* e.g. no sender address to answer */
	return store_outbox_add(s, b->id, "mail", key, msg, NULL, NULL);
}

static const char *test_result_name(enum mail_test_result t)
{
	switch (t) {
	case MAIL_TEST_OK: return "ok";
	case MAIL_TEST_CRASH: return "crash";
	case MAIL_TEST_BUILD_ERROR: return "build-error";
	default: return "none";
	}
}

/* Recorded against the patch as evidence kfix did not produce itself. */
static int apply_test_result(struct store *s, const struct intake_mail *im,
			     const struct store_inbox *in)
{
	_cleanup_(store_patch_freep) struct store_patch *p = NULL;
	int r = -ENOENT;

	if (im->in_reply_to)
		r = store_patch_find_by_message_id(s, im->in_reply_to, &p);
	for (size_t i = 0; r == -ENOENT && im->references && im->references[i]; i++)
		r = store_patch_find_by_message_id(s, im->references[i], &p);
	if (r == -ENOENT)
		return store_inbox_set_state(s, in->id, "ignored", 0,
					     "a syzbot test result for no kfix patch");
	if (r < 0)
		return r;
	r = store_event_add_json(s, p->bug_id, 0, "patch.syzbot-test",
		      json_pack("{s:I, s:i, s:s, s:s?, s:s?}", "patch", (json_int_t)p->id,
				"version", p->version, "result", test_result_name(im->test),
				"title", im->test_title, "message_id", in->key));
	if (r >= 0)
		r = syztest_answered(s, p, test_result_name(im->test), im->test_title, im->message_id,
				     im->test_text);
	if (r >= 0)
		r = store_inbox_set_state(s, in->id, "done", p->bug_id, NULL);
	return r;
}

static int apply_command(struct store *s, const struct config *cfg,
			 const struct intake_mail_conf *mc,
			 const struct intake_mail *im, const struct store_inbox *in)
{
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	int64_t target = im->target_bug;
	char kind[48];
	int r;

	if (target <= 0 && im->in_reply_to) {
		/* a reply to one of kfix's own patch mails */
		_cleanup_(store_patch_freep) struct store_patch *p = NULL;

		if (store_patch_find_by_message_id(s, im->in_reply_to, &p) >= 0)
			target = p->bug_id;
	}
	if (target > 0)
		r = store_bug_get(s, target, &b);
	else if (im->extid)
		r = store_bug_find(s, "syzbot", im->extid, &b);
	else
		r = -ENOENT;
	if (r == -ENOENT)
		return store_inbox_set_state(s, in->id, "ignored", 0,
					     "command not about a known bug");
	if (r < 0)
		return r;
	/* a From: line is what the sender typed: the mail must prove it */
	if (b->tree) {
		_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
		const char *why = NULL;

		r = tree_conf_from_config(cfg, b->tree, &tc, NULL);
		if (r >= 0)
			r = authenticated(cfg, in, tc.command_auth, &why);
		if (r < 0)
			return r;
		if (r == 0) {
			r = store_event_add_json(s, b->id, 0, "request.refused",
				      json_pack("{s:s?, s:s, s:s, s:s}", "claimed_by", im->from,
						"command", im->command, "via", "mail", "reason", why));
			if (r < 0)
				return r;
			return store_inbox_set_state(s, in->id, "ignored", b->id, why);
		}
	}
	/* the [tree] allow-commands list decides who may command */
	if (!b->tree || !mail_sender_allowed(cfg, b->tree, im->from)) {
		r = queue_refusal(s, mc, in, b);
		if (r < 0)
			return r;
		return store_inbox_set_state(s, in->id, "ignored", b->id,
					     "the sender may not send commands");
	}
	snprintf(kind, sizeof(kind), "request.%s", im->command);
	r = store_event_add_json(s, b->id, 0, kind,
		      json_pack("{s:s?, s:s?, s:s, s:s}", "by", im->from, "name",
				im->author_display, "command", im->command, "via", "mail"));
	if (r >= 0)
		r = store_inbox_set_state(s, in->id, "done", b->id, NULL);
	return r;
}

/* kfix's own patch mail: sent as [mail] from, or a Message-ID of a patch. */
static bool own_patch(struct store *s, const struct intake_mail_conf *mc,
		      const struct intake_mail *im)
{
	_cleanup_(store_patch_freep) struct store_patch *p = NULL;
	const char *from = mc->from, *lt;

	if (im->message_id && store_patch_find_by_message_id(s, im->message_id, &p) >= 0)
		return true;
	if (!im->from || !from)
		return false;
	lt = strrchr(from, '<');
	if (lt)
		return strncasecmp(lt + 1, im->from, strlen(im->from)) == 0 &&
		       lt[1 + strlen(im->from)] == '>';
	return strcasecmp(from, im->from) == 0;
}

static int apply_other_patch(struct store *s, const struct intake_mail_conf *mc,
			     const struct intake_mail *im, const struct store_inbox *in)
{
	int64_t first = 0;
	int r = 0;

	if (own_patch(s, mc, im))
		return store_inbox_set_state(s, in->id, "ignored", 0, "kfix's own patch");
	for (size_t i = 0; im->patch_extids[i] && r >= 0; i++) {
		_cleanup_(store_bug_freep) struct store_bug *b = NULL;

		r = store_bug_find(s, "syzbot", im->patch_extids[i], &b);
		if (r == -ENOENT) {
			r = 0;
			continue;
		}
		if (r >= 0)
			r = store_event_add_json(s, b->id, 0, "archive.other-patch",
				      json_pack("{s:s?, s:s?, s:s?, s:s}", "message_id",
						im->message_id, "from", im->from, "subject",
						im->subject, "via", in->hook));
		if (r >= 0 && first == 0)
			first = b->id;
	}
	if (r < 0)
		return r;
	if (first == 0)
		return store_inbox_set_state(s, in->id, "ignored", 0,
					     "a patch about no known bug");
	return store_inbox_set_state(s, in->id, "done", first, "another patch for the bug");
}

int intake_mail_apply(struct store *s, const struct config *cfg,
		      const struct intake_mail *im, const struct store_inbox *in)
{
	struct intake_mail_conf mc;

	intake_mail_conf_from_config(cfg, &mc);
	if (im->bug.source_id || im->test != MAIL_TEST_NONE) {
		const char *why = NULL;
		int r = from_syzbot(cfg, &mc, im, in, &why);

		if (r < 0)
			return r;
		if (r == 0)
			return store_inbox_set_state(s, in->id, "ignored", 0, why);
	}
	if (im->bug.source_id)
		return apply_report(s, im, in);
	if (im->test != MAIL_TEST_NONE)
		return apply_test_result(s, im, in);
	if (im->review) {
		const char *why = NULL;
		int64_t bug = 0;
		int r = intake_review_apply(s, cfg, im->review, &bug, &why);

		if (r < 0)
			return r;
		if (!im->command)
			return store_inbox_set_state(s, in->id, why ? "ignored" : "done", bug,
						     why ? why : "review");
	}
	if (im->command)
		return apply_command(s, cfg, &mc, im, in);
	if (im->patch_extids)
		return apply_other_patch(s, &mc, im, in);
	return store_inbox_set_state(s, in->id, "ignored", 0, im->ignore_why);
}
