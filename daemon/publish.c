#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <git2.h>

#include "common/buf.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "intake-review.h"
#include "jobs.h"
#include "mail/compose.h"
#include "mail/parse.h"
#include "forge-reply.h"
#include "bisect.h"
#include "publish.h"
#include "syztest.h"
#include "repro/tree.h"
#include "source.h"
#include "store.h"

#define PUBLISH_FETCH_TIMEOUT (30ULL * 60 * 1000000)
#define PUBLISH_PUSH_TIMEOUT (10ULL * 60 * 1000000)
#define NOTES_REF "refs/notes/kfix"
#define NOTE_MAX (256u * 1024)

/* The [mail], [http] and [kfix] keys a publish job reads. */
struct publish_conf {
	const char *from;	/* bot identity "Name <addr>" */
	const char *link_mask;
	const char *public_url; /* NULL: no dashboard to link to */
	char *cache_dir;
};

struct pub {
	struct job_ctx *ctx;
	struct publish_conf conf;
	struct tree_conf tc;
	struct store_patch *patch;
	struct store_bug *bug;
	struct tree *tree;
	char *wt;	   /* worktree folder */
	char *from;	   /* bot identity "Name <addr>" */
	char name[128], email[256];
	char oid[TREE_OID_HEX];
	char branch[96];
	char *msg_copy;
	struct publish_msg msg;
	char held[512]; /* why a pre-send check held the patch */
	char waiting[64]; /* what the upstream mail waits for */
	bool syzbot_ok;	  /* syzbot's test passed: its Tested-by goes in */
	char store_id[24]; /* the store's random name, in Message-IDs */
};

/* Without [mail] from, mail goes out as a local identity nobody
 * answers: the moderators still see the patch. */
#define PUBLISH_FROM_FALLBACK "kfix <kfix@localhost>"

static void publish_conf_done(struct publish_conf *c)
{
	free(c->cache_dir);
	*c = (struct publish_conf){ 0 };
}

static int publish_conf_from_config(const struct config *c, struct publish_conf *ret)
{
	struct publish_conf pc = { .from = PUBLISH_FROM_FALLBACK };
	int r;

	(void)config_get_string(c, "mail", NULL, "from", &pc.from);
	(void)config_get_string(c, "mail", NULL, "link-mask", &pc.link_mask);
	(void)config_get_string(c, "http", NULL, "public-url", &pc.public_url);
	r = config_get_path(c, "kfix", NULL, "cache-dir", &pc.cache_dir);
	if (r < 0)
		return r;
	*ret = pc;
	return 0;
}

static void pub_clear(struct pub *p)
{
	publish_conf_done(&p->conf);
	tree_conf_done(&p->tc);
	store_patch_free(p->patch);
	store_bug_free(p->bug);
	tree_free(p->tree);
	free(p->wt);
	free(p->from);
	free(p->msg_copy);
}

/* Whether line l (up to its newline) is trailer t as "Key: value".  libgit2
 * also takes "Key:value", "Key : value" and continuation lines; kfix keeps
 * to one "Key: value" a line, so that a trailer is the line it came from. */
static bool line_is_trailer(const char *l, const git_message_trailer *t)
{
	size_t k = strlen(t->key), v = strlen(t->value), n = strcspn(l, "\n");

	if (strncmp(l, t->key, k) != 0 || l[k] != ':' || l[k + 1] != ' ')
		return false;
	l += k + 2;
	n -= k + 2;
	while (n > 0 && (*l == ' ' || *l == '\t')) {
		l++;
		n--;
	}
	return n == v && strncmp(l, t->value, n) == 0;
}

/* Whether the paragraph at p is, line for line, the trailers libgit2 read. */
static bool block_is_trailers(const char *p, const git_message_trailer_array *a)
{
	size_t i = 0;

	for (const char *l = p; *l; i++) {
		if (i >= a->count || !line_is_trailer(l, &a->trailers[i]))
			return false;
		l += strcspn(l, "\n");
		l += *l == '\n';
	}
	return i == a->count;
}

/* Whether libgit2 finds trailers in text and paragraph p holds just those. */
static int last_para_is_trailers(const char *text, const char *p, bool *ret)
{
	git_message_trailer_array found = { 0 };

	if (git_libgit2_init() < 0)
		return -ENOMEM;
	if (git_message_trailers(&found, text) < 0) {
		git_libgit2_shutdown();
		return -ENOMEM;
	}
	*ret = found.count > 0 && block_is_trailers(p, &found);
	git_message_trailer_array_free(&found);
	git_libgit2_shutdown();
	return 0;
}

int publish_split_message(char *msg, struct publish_msg *ret)
{
	struct publish_msg m = { 0 };
	char *nl, *last_para, *p;
	size_t len;
	bool trailers = false;
	int r;

	len = strlen(msg);
	while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
		msg[--len] = '\0';
	if (len == 0)
		return -EINVAL;
	m.subject = msg;
	nl = strchr(msg, '\n');
	if (!nl) {
		m.body = msg + len;
		*ret = m;
		return 0;
	}
	m.body = nl + 1;
	while (*m.body == '\n')
		m.body++;
	last_para = strstr(m.body, "\n\n");
	for (p = last_para; p; p = strstr(p + 2, "\n\n"))
		last_para = p;
	/* the trailer block: the last paragraph (or the whole body) */
	p = last_para ? last_para + 2 : m.body;
	/* a run of more than two newlines: the paragraph starts after all of
	 * them, the body ends before the first */
	while (*p == '\n')
		p++;
	while (last_para && last_para > m.body && last_para[-1] == '\n')
		last_para--;
	/* from the newline on, so that libgit2 takes only the first line as
	 * the subject, which is never a trailer */
	r = last_para_is_trailers(nl, p, &trailers);
	if (r < 0)
		return r;
	*nl = '\0';
	if (!trailers) {
		*ret = m;
		return 0;
	}
	for (char *l = p; l && *l && m.n_trailers < ARRAY_SIZE(m.trailer);) {
		char *e = strchr(l, '\n'), *colon;

		if (e)
			*e = '\0';
		colon = strchr(l, ':');
		*colon = '\0';
		m.trailer[m.n_trailers].key = l;
		m.trailer[m.n_trailers].value = colon + 2;
		m.n_trailers++;
		l = e ? e + 1 : NULL;
	}
	if (p == m.body)
		m.body = p + strlen(p);
	else
		*last_para = '\0';
	*ret = m;
	return 0;
}

static void split_identity(const char *from, char *name, size_t nn, char *email,
			   size_t en)
{
	const char *lt = strchr(from, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	if (!lt || !gt) {
		snprintf(name, nn, "kfix");
		snprintf(email, en, "%s", from);
		return;
	}
	snprintf(name, nn, "%.*s", (int)(lt - from), from);
	for (size_t l = strlen(name); l > 0 && name[l - 1] == ' ';)
		name[--l] = '\0';
	if (!name[0])
		snprintf(name, nn, "kfix");
	snprintf(email, en, "%.*s", (int)(gt - lt - 1), lt + 1);
}

static int pub_load(struct pub *p, int64_t patch_id)
{
	struct job_ctx *ctx = p->ctx;
	_cleanup_free_ char *err = NULL;
	int r;

	r = store_patch_get(ctx->store, patch_id, &p->patch);
	if (r < 0)
		return job_fail(ctx, r, "patch %lld: %s", (long long)patch_id, strerror(-r));
	r = store_bug_get(ctx->store, p->patch->bug_id, &p->bug);
	if (r < 0)
		return job_fail(ctx, r, "bug of patch %lld: %s", (long long)patch_id, strerror(-r));
	{
		_cleanup_free_ char *id = NULL;

		r = store_kv_get(ctx->store, "store.id", &id);
		if (r < 0 || strspn(id, "0123456789abcdef") != strlen(id) || !*id ||
		    strlen(id) >= sizeof(p->store_id))
			return job_fail(ctx, r < 0 ? r : -EINVAL, "the store has no valid store.id");
		snprintf(p->store_id, sizeof(p->store_id), "%s", id);
	}
	if (!p->bug->tree || source_configured(ctx->cfg, p->bug->tree) < 0) {
		ctx->permanent = true;
		return job_fail(ctx, -ENOENT, "tree '%s' is not configured",
				p->bug->tree ? p->bug->tree : "");
	}
	r = publish_conf_from_config(ctx->cfg, &p->conf);
	if (r >= 0)
		r = tree_conf_from_config(ctx->cfg, p->bug->tree, &p->tc, &err);
	if (r < 0)
		return job_fail(ctx, r, "%s", err ? err : strerror(-r));
	p->from = strdup(p->conf.from);
	split_identity(p->conf.from, p->name, sizeof(p->name), p->email, sizeof(p->email));
	r = source_open_tree(ctx->cfg, p->bug->tree, &p->tree, &err);
	if (r == -ENOTSUP) {
		/* a plain source folder: no history to branch from, so the
		 * patch goes out by mail only, maintainers read from the folder */
		p->wt = p->tc.path ? strdup(p->tc.path) : NULL;
		if (!p->wt || !p->from)
			return -ENOMEM;
	} else if (r < 0) {
		return job_fail(ctx, r, "%s", err ? err : strerror(-r));
	} else {
		if (!p->patch->base_commit) {
			ctx->permanent = true;
			return job_fail(ctx, -EINVAL, "patch %lld has no base commit",
					(long long)patch_id);
		}
		if (!p->from ||
		    /* one worktree per bug: publish jobs of one tree run side by side */
		    asprintf(&p->wt, "%s/publish/%s/%lld", p->conf.cache_dir, p->bug->tree,
			     (long long)p->bug->id) < 0)
			return -ENOMEM;
		snprintf(p->branch, sizeof(p->branch), "kfix/%lld/v%d",
			 (long long)p->bug->id, p->patch->version);
	}
	p->msg_copy = strdup(p->patch->message ? p->patch->message : "");
	if (!p->msg_copy)
		return -ENOMEM;
	if (publish_split_message(p->msg_copy, &p->msg) < 0) {
		ctx->permanent = true;
		return job_fail(ctx, -EINVAL, "patch %lld has no commit message",
				(long long)patch_id);
	}
	return 0;
}

/* The note on the branch's commit: the whole explanation the repair
 * wrote (root cause, evidence, patch type, reproduction table, what was
 * not tested) when its file is still there, else the stored summary. */
static char *note_text(const struct store_patch *patch)
{
	_cleanup_json_ json_t *ev = patch->evidence ? json_loads(patch->evidence, 0, NULL) : NULL;
	const char *file = ev ? json_get_str(ev, "explanation_file") : NULL;
	char *text = NULL;

	if (file && read_file_bounded(file, NOTE_MAX, &text, NULL) >= 0)
		return text;
	return patch->explanation ? strdup(patch->explanation) : NULL;
}

static void patch_notes(struct pub *p, const json_t *ev, struct patch_mail *m,
			struct mail_repro_row *rows, char bufs[][96], size_t max);

/* The branch's commit message: the patch's, with the root cause, the
 * evidence and the reproduction table above its trailers (forges show no
 * git notes; the note stays for tools that read it). */
static int commit_message(struct pub *p, char **ret)
{
	_cleanup_json_ json_t *ev = p->patch->evidence ? json_loads(p->patch->evidence, 0, NULL) : NULL;
	struct mail_trailer tr[ARRAY_SIZE(p->msg.trailer)];
	struct mail_repro_row rows[8];
	char bufs[16][96];
	_cleanup_free_ char *err = NULL;
	struct patch_mail m = { 0 };
	int r;

	patch_notes(p, ev, &m, rows, bufs, ARRAY_SIZE(rows));
	for (unsigned i = 0; i < p->msg.n_trailers; i++)
		tr[i] = (struct mail_trailer){ p->msg.trailer[i].key, p->msg.trailer[i].value };
	m.trailers = tr;
	m.n_trailers = p->msg.n_trailers;
	r = mail_compose_commit_message(&m, ret, &err);
	if (r < 0)
		return job_fail(p->ctx, r, "the commit message: %s", err ?: strerror(-r));
	return 0;
}

/* The commit, its branch and note.  Deterministic (signature time is the
 * patch's creation time), so a retried job makes the very same commit. */
static int pub_commit(struct pub *p)
{
	struct tree_signature sig = { .name = p->name, .email = p->email,
				      .time = p->patch->created };
	_cleanup_free_ char *err = NULL, *note = NULL, *msg = NULL;
	char base[TREE_OID_HEX];
	int r;

	if (tree_resolve(p->tree, p->patch->base_commit, base) < 0) {
		r = tree_fetch(p->tree, NULL, PUBLISH_FETCH_TIMEOUT, NULL, NULL);
		if (r < 0)
			return job_fail(p->ctx, r, "fetch: %s", tree_error(p->tree));
	}
	r = tree_worktree_checkout(p->tree, p->wt, p->patch->base_commit, base);
	if (r < 0)
		return job_fail(p->ctx, r, "checkout %s: %s", p->patch->base_commit,
				tree_error(p->tree));
	r = tree_apply_patch(p->wt, p->patch->diff, strlen(p->patch->diff), &err);
	if (r < 0) {
		p->ctx->permanent = true;
		return job_fail(p->ctx, r, "the patch does not apply: %s", err ? err : "");
	}
	r = commit_message(p, &msg);
	if (r < 0)
		return r;
	r = tree_commit(p->tree, p->wt, base, msg, &sig, NULL, p->oid);
	if (r >= 0)
		r = tree_branch_create(p->tree, p->branch, p->oid, false);
	if (r == -EEXIST) {
		p->ctx->permanent = true;
		return job_fail(p->ctx, r, "branch %s exists with another commit", p->branch);
	}
	if (r >= 0 && (note = note_text(p->patch)))
		r = tree_note_add(p->tree, NOTES_REF, p->oid, note, &sig);
	if (r < 0)
		return job_fail(p->ctx, r, "commit: %s", tree_error(p->tree));
	return 0;
}

/* *ret_key: the push entry's key, NULL when the tree has no push-remote. */
static int queue_push(struct pub *p, char **ret_key)
{
	_cleanup_json_ json_t *j = NULL;
	_cleanup_free_ char *payload = NULL, *key = NULL;
	int r;
	const char *remote = p->tc.push_remote;
	char ref[256], note[160];

	if (!remote)
		return 0; /* nowhere to push: the branch stays in the mirror */
	snprintf(ref, sizeof(ref), "refs/heads/%s:refs/heads/%s", p->branch, p->branch);
	snprintf(note, sizeof(note), "+%s:%s", NOTES_REF, NOTES_REF);
	j = json_pack("{s:s, s:s, s:s, s:[s, s]}", "tree", p->bug->tree, "url", remote,
		      "oid", p->oid, "refspecs", ref, note);
	if (!j || !(payload = json_dumps(j, JSON_COMPACT)) ||
	    asprintf(&key, "push:%s:%s:%s", p->bug->tree, p->branch, p->oid) < 0)
		return -ENOMEM;
	r = store_outbox_add(p->ctx->store, p->bug->id, "push", key, payload, NULL, NULL);
	if (r >= 0)
		*ret_key = TAKE_PTR(key);
	return r;
}

static int repro_rows(const struct store_patch *patch, struct mail_repro_row *rows,
		      char bufs[][96], size_t max, size_t *ret_n)
{
	_cleanup_json_ json_t *ev = NULL;
	json_t *table;
	size_t i, n = 0;
	json_t *row;

	if (!patch->evidence || !(ev = json_loads(patch->evidence, 0, NULL))) {
		*ret_n = 0;
		return 0;
	}
	table = json_object_get(ev, "table");
	json_array_foreach(table, i, row) {
		const char *k = json_get_str(row, "kernel"), *res = json_get_str(row, "result");

		if (n >= max || !k || !res)
			break;
		snprintf(bufs[2 * n], 96, "%s", k);
		snprintf(bufs[2 * n + 1], 96, "%s", res);
		rows[n].kernel = bufs[2 * n];
		rows[n].result = bufs[2 * n + 1];
		n++;
	}
	*ret_n = n;
	return 0;
}

/* The message, the repair's notes and the reproduction table of the
 * patch: what the mail and the branch's commit both carry.  ev is the
 * patch's evidence, kept by the caller while m is used. */
static void patch_notes(struct pub *p, const json_t *ev, struct patch_mail *m,
			struct mail_repro_row *rows, char bufs[][96], size_t max)
{
	m->summary = p->msg.subject;
	m->body = p->msg.body;
	m->changes = ev ? json_get_str(ev, "changes") : NULL;
	m->explanation = p->patch->explanation;
	m->evidence = ev ? json_get_str(ev, "evidence") : NULL;
	m->patch_type = ev ? json_get_str(ev, "patch_type") : NULL;
	m->tested = ev ? json_get_str(ev, "tested") : NULL;
	m->not_tested = ev ? json_get_str(ev, "not_tested") : NULL;
	m->diff = p->patch->diff;
	m->base_commit = p->patch->base_commit;
	m->version = p->patch->version;
	repro_rows(p->patch, rows, bufs, max, &m->n_repro);
	m->repro = rows;
}

/* A Message-ID as a link: [mail] link-mask, lore.kernel.org's by default. */
static char *mid_link(struct pub *p, const char *mid)
{
	const char *mask = p->conf.link_mask;
	const char *pc;
	char *out;

	pc = mask ? strstr(mask, "%s") : NULL;
	if (!pc || asprintf(&out, "%.*s%s%s", (int)(pc - mask), mask, mid, pc + 2) < 0)
		return NULL;
	return out;
}

/* The moderator's part of the RFC mail: how to answer, where the branch
 * is, and the bug's page on the dashboard when [http] public-url says
 * where that is. */
static char *howto_text(struct pub *p)
{
	_cleanup_buf_ struct buf b = BUF_INIT(4096);
	const char *remote = p->tc.push_remote, *url = p->conf.public_url;

	(void)buf_puts(&b, "Reply to this mail with a command on a line of its own:\n"
		       "  #kfix upstream        mail the patch to its maintainers, signed off by you\n"
		       "  #kfix reject REASON   drop it\n"
		       "  #kfix retest          test it again\n"
		       "A reply with comments and no command asks for a new version.\n");
	if (p->branch[0])
		(void)buf_printf(&b, "Branch: %s%s%s\n", p->branch, remote ? " on " : "",
				 remote ?: "");
	if (url)
		(void)buf_printf(&b, "Bug page: %s/ui/bugs/%lld\n", url, (long long)p->bug->id);
	return buf_steal(&b, NULL);
}

/* The Message-ID the version before this one went out with (upstream, or
 * else to the moderators). */
static char *prev_mid(struct pub *p)
{
	struct store_patch **ps = NULL;
	size_t n = 0;
	char *mid = NULL;

	if (p->patch->version <= 1 || store_patch_list(p->ctx->store, NULL, p->bug->id, 0, &ps, &n) < 0)
		return NULL;
	for (size_t i = 0; i < n && !mid; i++)
		if (ps[i]->version == p->patch->version - 1 && ps[i]->message_id)
			mid = strdup(ps[i]->message_id);
	store_patch_list_free(ps, n);
	return mid;
}

static int compose(struct pub *p, bool upstream, const char *by, char *const *to,
		   char *const *cc, const char *message_id, const char *in_reply_to,
		   char **ret)
{
	struct mail_trailer tr[ARRAY_SIZE(p->msg.trailer) + 2 * REVIEW_TRAILERS_MAX + 3];
	char tested_by[128] = "";
	_cleanup_json_ json_t *collected = NULL;
	json_t *t;
	size_t k;
	struct mail_repro_row rows[8];
	char bufs[16][96];
	_cleanup_free_ char *err = NULL, *howto = NULL, *report = NULL, *link = NULL, *prev = NULL,
			    *prev_link = NULL, *syz_t = NULL, *syz_nt = NULL, *tested = NULL,
			    *not_tested = NULL;
	_cleanup_json_ json_t *ev = p->patch->evidence ? json_loads(p->patch->evidence, 0, NULL) : NULL;
	struct patch_mail m = {
		.from = p->from,
		.message_id = message_id,
		.in_reply_to = in_reply_to,
		.to = to,
		.cc = cc,
		.date = (time_t)p->patch->created,
		.rfc = !upstream,
	};
	size_t n = 0;
	int r;

	for (unsigned i = 0; i < p->msg.n_trailers; i++)
		tr[n++] = (struct mail_trailer){ p->msg.trailer[i].key, p->msg.trailer[i].value };
	/* what reviewers gave on this version and the ones before */
	r = intake_review_trailers(p->ctx->store, p->bug->id, p->patch->version, &collected);
	if (r < 0)
		return job_fail(p->ctx, r, "the reviewers' trailers: %s", store_errmsg(p->ctx->store));
	json_array_foreach(collected, k, t) {
		const char *key = json_get_str(t, "key"), *value = json_get_str(t, "value");
		bool known = false;

		for (size_t i = 0; i < n; i++)
			known |= strcasecmp(tr[i].key, key) == 0 && strcasecmp(tr[i].value, value) == 0;
		if (!known && n + 1 < ARRAY_SIZE(tr))
			tr[n++] = (struct mail_trailer){ key, value };
	}
	if (p->syzbot_ok && p->bug->source_id)
		snprintf(tested_by, sizeof(tested_by), "syzbot+%s@syzkaller.appspotmail.com",
			 p->bug->source_id);
	if (upstream && by) {
		/* kernel policy: the human who approves signs off and is the
		 * sender of record; the assistant never does */
		tr[n++] = (struct mail_trailer){ "Signed-off-by", by };
		m.author = by;
	}
	if (upstream && tested_by[0])
		tr[n++] = (struct mail_trailer){ "Tested-by", tested_by };
	/* the report the patch answers, as a link a reader can open */
	if (store_bug_report_message_id(p->ctx->store, p->bug->id, &report) >= 0 &&
	    (link = mid_link(p, report)))
		tr[n++] = (struct mail_trailer){ "Link", link };
	mail_trailers_sort(tr, n);
	m.trailers = tr;
	m.n_trailers = n;
	patch_notes(p, ev, &m, rows, bufs, ARRAY_SIZE(rows));
	/* syzbot's answers so far, quoted with what kfix tested */
	if (syztest_notes(p->ctx->store, p->ctx->cfg, p->bug, p->patch, &syz_t, &syz_nt) >= 0) {
		if (syz_t && asprintf(&tested, "%s%s", m.tested ?: "", syz_t) >= 0)
			m.tested = tested;
		if (syz_nt && asprintf(&not_tested, "%s%s", m.not_tested ?: "", syz_nt) >= 0)
			m.not_tested = not_tested;
	}
	if ((prev = prev_mid(p)))
		m.prev_link = prev_link = mid_link(p, prev);
	if (!upstream)
		m.howto = howto = howto_text(p);
	r = mail_compose_patch(&m, ret, &err);
	if (r < 0)
		return job_fail(p->ctx, r, "composing the mail: %s", err ? err : strerror(-r));
	return 0;
}

static int domain_of(const char *email, char *buf, size_t n)
{
	const char *at = strchr(email, '@');

	snprintf(buf, n, "%s", at && at[1] ? at + 1 : "kfix.invalid");
	return 0;
}

/* kfix-BUG-vN[-KIND].STORE@DOMAIN: the same for every retry of a job,
 * never the same for two stores (STORE is the store's random name), so a
 * recreated store or two instances sharing a domain repeat none. */
static void message_id(struct pub *p, int version, const char *kind, char *buf, size_t n)
{
	char dom[200];

	domain_of(p->email, dom, sizeof(dom));
	snprintf(buf, n, "kfix-%lld-v%d%s%s.%s@%s", (long long)p->bug->id, version,
		 kind ? "-" : "", kind ?: "", p->store_id, dom);
}

static void rfc_message_id(struct pub *p, char *buf, size_t n)
{
	message_id(p, p->patch->version, "rfc", buf, n);
}

/* The addr-spec of "Name <addr>" or "addr", lower case. */
static json_t *addr_spec(const char *a)
{
	const char *lt = strrchr(a, '<');
	char buf[320];

	snprintf(buf, sizeof(buf), "%.*s", lt ? (int)strcspn(lt + 1, ">") : (int)strlen(a),
		 lt ? lt + 1 : a);
	for (char *c = buf; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return json_string(buf);
}

/* The mail and its recipients, so that their replies find the patch
 * and count as the maintainers' (intake-review.h). */
static int record_mail(struct pub *p, const char *mid, const char *stage, char *const *to,
		       char *const *cc)
{
	_cleanup_json_ json_t *a = json_array();
	_cleanup_free_ char *text = NULL;

	for (size_t i = 0; a && to && to[i]; i++)
		json_array_append_new(a, addr_spec(to[i]));
	for (size_t i = 0; a && cc && cc[i]; i++)
		json_array_append_new(a, addr_spec(cc[i]));
	text = a ? json_dumps(a, JSON_COMPACT) : NULL;
	if (!text)
		return -ENOMEM;
	return store_patch_mail_add(p->ctx->store, p->patch->id, mid, stage, text);
}

static int ask_syzbot(struct pub *p, bool *ret_skipped);

static int stage_moderation(struct pub *p)
{
	_cleanup_free_ char *mail = NULL, *key = NULL, *push_key = NULL;
	const char *mod = p->tc.moderation_address;
	char mid[256], prev[256] = "";
	char *to[2] = { NULL, NULL };
	int r;

	if (!mod) {
		p->ctx->permanent = true;
		return job_fail(p->ctx, -EINVAL, "tree %s has no moderation-address", p->bug->tree);
	}
	if (!p->tree) {
		/* mail only */
	} else if (!job_step_passed(p->ctx, "commit")) {
		r = pub_commit(p);
		if (r < 0)
			return r;
		r = job_step_done(p->ctx, "commit");
		if (r < 0)
			return r;
	} else if ((r = tree_resolve(p->tree, p->branch, p->oid)) < 0) {
		return job_fail(p->ctx, r, "branch %s: %s", p->branch, tree_error(p->tree));
	}
	rfc_message_id(p, mid, sizeof(mid));
	to[0] = (char *)mod;
	/* a new version answers the moderation mail of the one before */
	if (p->patch->version > 1)
		message_id(p, p->patch->version - 1, "rfc", prev, sizeof(prev));
	r = compose(p, false, NULL, to, NULL, mid, prev[0] ? prev : NULL, &mail);
	if (r < 0)
		return r;
	if (asprintf(&key, "mail:<%s>", mid) < 0)
		return -ENOMEM;
	/* everything that follows from the commit, in one transaction */
	r = store_begin(p->ctx->store);
	if (r < 0)
		return r;
	r = p->tree ? queue_push(p, &push_key) : 0;
	/* review comments made on a forge are answered there */
	if (r >= 0 && push_key)
		r = forge_reply_queue(p->ctx->store, p->patch, p->branch, p->oid, push_key);
	if (r >= 0)
		r = store_outbox_add(p->ctx->store, p->bug->id, "mail", key, mail, NULL, NULL);
	if (r >= 0)
		r = record_mail(p, mid, "moderation", to, NULL);
	if (r >= 0)
		r = store_patch_set_sent(p->ctx->store, p->patch->id, mid, mod,
					 p->branch[0] ? p->branch : NULL);
	if (r >= 0 && streq(p->patch->state, "validated"))
		r = store_patch_decide(p->ctx->store, p->patch->id, "awaiting-approval", NULL, NULL);
	if (r >= 0 && streq(p->bug->state, "validated"))
		r = store_bug_set_state(p->ctx->store, p->bug->id, "awaiting-approval",
					"patch sent for moderation");
	/* [tree] syzbot-test-after = validation: the moderators see the answer */
	if (r >= 0 && syztest_after_validation(p->ctx->cfg, p->bug->tree)) {
		enum syztest_state st = SYZTEST_OFF;
		bool skipped;

		r = syztest_state(p->ctx->store, p->ctx->cfg, p->bug, p->patch, &st, NULL);
		if (r >= 0 && st == SYZTEST_TO_ASK)
			r = ask_syzbot(p, &skipped);
	}
	if (r >= 0)
		r = job_step_done(p->ctx, "queued");
	if (r < 0) {
		store_rollback(p->ctx->store);
		return job_fail(p->ctx, r, "queueing: %s", store_errmsg(p->ctx->store));
	}
	return store_commit(p->ctx->store);
}

/* ---- the upstream mail's thread and the pre-send checks ---- */

#define SYZKALLER_BUGS_LIST "syzkaller-bugs@googlegroups.com"
#define FIX_SEARCH_COMMITS 100000

static bool syzbot_bug(const struct pub *p)
{
	return streq_ptr(p->bug->source, "syzbot") && p->bug->source_id;
}

/* The syzbot report this bug came from: its Message-ID to thread under
 * and, when the mail itself was kept, its recipients to copy. */
static int report_load(struct pub *p, char **ret_mid, struct mail **ret)
{
	_cleanup_free_ char *mid = NULL, *key = NULL;
	struct store_inbox *in = NULL;
	int r = store_bug_report_message_id(p->ctx->store, p->bug->id, &mid);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if (asprintf(&key, "mail:%s", mid) < 0)
		return -ENOMEM;
	if (store_inbox_find(p->ctx->store, key, &in) >= 0) {
		(void)mail_parse(in->payload, in->payload_len, 0, ret, NULL);
		store_inbox_free(in);
	}
	*ret_mid = TAKE_PTR(mid);
	return 0;
}

/* syzbot links a patch to its bug by its address in Cc, and its list
 * keeps the thread: both, even when the report mail was never seen. */
/* Queues the "#syz test" mail, in the caller's transaction. */
static int ask_syzbot(struct pub *p, bool *ret_skipped)
{
	_cleanup_free_ char *report_mid = NULL, *err = NULL;
	_cleanup_(mail_freep) struct mail *report = NULL;
	char mid[256];
	struct syztest_request rq = { .from = p->from, .message_id = mid };
	int r;

	message_id(p, p->patch->version, "syztest", mid, sizeof(mid));
	r = report_load(p, &report_mid, &report);
	if (r < 0)
		return r;
	rq.report = report;
	rq.report_mid = report_mid;
	r = syztest_ask(p->ctx->store, p->ctx->cfg, p->bug, p->patch, &rq, ret_skipped, &err);
	if (r < 0)
		return job_fail(p->ctx, r, "asking syzbot: %s", err ? err : strerror(-r));
	if (*ret_skipped)
		log_notice("patch %lld: syzbot not asked to test it: the day's requests are used",
			   (long long)p->patch->id);
	else
		log_info("patch %lld: syzbot asked to test it (%s)", (long long)p->patch->id, mid);
	return 0;
}

static int hold(struct pub *p);

/* Before an approved patch goes upstream: syzbot's test, when the tree
 * asks for one.  1: the upstream mail waits (or the patch was held). */
static int syzbot_gate(struct pub *p)
{
	_cleanup_free_ char *title = NULL;
	enum syztest_state st;
	bool skipped = false;
	int r = syztest_state(p->ctx->store, p->ctx->cfg, p->bug, p->patch, &st, &title);

	if (r < 0)
		return r;
	switch (st) {
	case SYZTEST_OFF:
	case SYZTEST_SKIPPED:
	case SYZTEST_NO_ANSWER:
		return 0;
	case SYZTEST_OK:
		p->syzbot_ok = true;
		return 0;
	case SYZTEST_TO_ASK:
		r = store_begin(p->ctx->store);
		if (r < 0)
			return r;
		r = ask_syzbot(p, &skipped);
		if (r < 0) {
			store_rollback(p->ctx->store);
			return r;
		}
		r = store_commit(p->ctx->store);
		if (r < 0 || skipped)
			return r;
		break;
	case SYZTEST_WAITING:
		break;
	case SYZTEST_CRASH:
		snprintf(p->held, sizeof(p->held), "syzbot's test of it still crashed: %s",
			 title ? title : "(no title)");
		r = hold(p);
		return r < 0 ? r : 1;
	case SYZTEST_BUILD_ERROR:
		snprintf(p->held, sizeof(p->held),
			 "syzbot could not build or boot the kernel with it");
		r = hold(p);
		return r < 0 ? r : 1;
	}
	snprintf(p->waiting, sizeof(p->waiting), "syzbot's test");
	return 1;
}

static int syzbot_cc(struct pub *p, char ***cc)
{
	_cleanup_free_ char *syz = NULL;

	if (!syzbot_bug(p))
		return 0;
	if (asprintf(&syz, "syzbot+%s@syzkaller.appspotmail.com", p->bug->source_id) < 0)
		return -ENOMEM;
	if (!strv_contains(*cc, syz) && strv_push(cc, syz) < 0)
		return -ENOMEM;
	if (!strv_contains(*cc, SYZKALLER_BUGS_LIST) && strv_push(cc, SYZKALLER_BUGS_LIST) < 0)
		return -ENOMEM;
	return 0;
}

/* The author and Signed-off-by chain of the commit a bisection found,
 * when the patch's Fixes: names it: they wrote and passed the change the
 * patch repairs. */
static int culprit_people(struct pub *p, char ***ret)
{
	_cleanup_json_ json_t *j = NULL;
	char tag[64];
	size_t i;
	json_t *e;

	if (bisect_found(p->ctx->store, p->bug->id, &j) < 0)
		return 0;
	snprintf(tag, sizeof(tag), "\nFixes: %.12s ", json_get_str(j, "culprit"));
	if (!p->patch->message || !strstr(p->patch->message, tag))
		return 0;
	json_array_foreach(json_object_get(j, "cc"), i, e)
		if (json_is_string(e) && strv_push(ret, json_string_value(e)) < 0)
			return -ENOMEM;
	return 0;
}

static int held_key(int64_t patch, char *buf, size_t n)
{
	snprintf(buf, n, "publish/held/%lld", (long long)patch);
	return 0;
}

/* A held patch that a moderator approved again goes out without the
 * checks: they were told why it was held and decided. */
static bool publish_was_held(struct store *s, int64_t patch)
{
	_cleanup_free_ char *v = NULL;
	char key[64];

	held_key(patch, key, sizeof(key));
	return store_kv_get(s, key, &v) >= 0;
}

/* The newest event of kind on the bug at or after since, or -ENOENT. */
static int event_since(struct store *s, int64_t bug, const char *kind, int64_t since,
		       char **ret_detail)
{
	struct store_event **ev = NULL;
	struct store_query q = { .state = kind, .bug_id = bug };
	size_t n = 0;
	int r = store_event_query(s, &q, &ev, &n);

	for (size_t i = n; r >= 0 && i > 0; i--)
		if (ev[i - 1]->ts >= since) {
			*ret_detail = ev[i - 1]->detail ? strdup(ev[i - 1]->detail) : strdup("");
			r = *ret_detail ? 1 : -ENOMEM;
			break;
		}
	store_event_list_free(ev, n);
	return r < 0 ? r : r == 1 ? 0 : -ENOENT;
}

static void why_from_detail(char *why, size_t n, const char *what, const char *detail,
			    const char *k1, const char *k2)
{
	_cleanup_json_ json_t *j = json_loads(detail, 0, NULL);
	const char *a = j ? json_get_str(j, k1) : NULL, *b = j ? json_get_str(j, k2) : NULL;

	snprintf(why, n, "%s%s%s%s%s%s", what, a || b ? " (" : "", a ? a : "",
		 a && b ? ", " : "", b ? b : "", a || b ? ")" : "");
	/* the details come from strangers' mail: one line of text */
	for (char *c = why; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
}

/* 1 with why set when the patch must not go out now, 0 when it may. */
static int presend_checks(struct pub *p, char *why, size_t n)
{
	_cleanup_free_ char *detail = NULL;
	const char *branch = p->tc.branch;
	char needle[128], found[TREE_OID_HEX], head[TREE_OID_HEX];
	int r;

	r = event_since(p->ctx->store, p->bug->id, "feed.closed", 0, &detail);
	if (r >= 0) {
		why_from_detail(why, n, "syzbot no longer lists the bug as open", detail,
				"feed", "why");
		return 1;
	}
	if (r != -ENOENT)
		return r;
	r = event_since(p->ctx->store, p->bug->id, "archive.other-patch", p->patch->created,
			&detail);
	if (r >= 0) {
		why_from_detail(why, n, "another patch for the bug was posted", detail,
				"subject", "from");
		return 1;
	}
	if (r != -ENOENT)
		return r;
	if (!syzbot_bug(p) || !p->tree)
		return 0; /* a plain source folder has no history to look in */
	/* a [tree] path is the admin's checkout: kfix does not fetch it */
	r = p->tc.path ? 0
		: tree_fetch(p->tree, NULL, PUBLISH_FETCH_TIMEOUT, NULL, NULL);
	if (r < 0)
		return job_fail(p->ctx, r, "fetch: %s", tree_error(p->tree));
	if (tree_resolve(p->tree, branch, head) < 0 && tree_resolve(p->tree, "HEAD", head) < 0)
		return job_fail(p->ctx, -ENOENT, "tree %s has no branch %s", p->bug->tree, branch);
	snprintf(needle, sizeof(needle), "Reported-by: syzbot+%s@", p->bug->source_id);
	r = tree_log_grep(p->tree, head, needle, FIX_SEARCH_COMMITS, found);
	if (r < 0)
		return job_fail(p->ctx, r, "searching the log: %s", tree_error(p->tree));
	if (r > 0) {
		snprintf(why, n, "a fix for the bug is already in %s: commit %.12s", branch, found);
		return 1;
	}
	return 0;
}

/* Holds the patch and tells the moderators, threaded under the RFC. */
static int hold(struct pub *p)
{
	_cleanup_free_ char *text = NULL, *mail = NULL, *err = NULL, *key = NULL,
			    *detail = NULL;
	const char *mod = p->tc.moderation_address;
	char rfc[256], mid[256], hk[64], subject[256];
	char *to[2] = { NULL, NULL };
	json_t *j;
	int r;

	log_notice("patch %lld held: %s", (long long)p->patch->id, p->held);
	rfc_message_id(p, rfc, sizeof(rfc));
	message_id(p, p->patch->version, "held", mid, sizeof(mid));
	if (p->patch->version > 1)
		snprintf(subject, sizeof(subject), "[PATCH RFC v%d] %s", p->patch->version,
			 p->msg.subject);
	else
		snprintf(subject, sizeof(subject), "[PATCH RFC] %s", p->msg.subject);
	if (asprintf(&text, "kfix did not send this patch upstream although it was approved:\n"
			    "%s.\n\nThe patch is held.  Answer \"#kfix upstream\" to send it anyway,\n"
			    "or \"#kfix reject\" to drop it.\n", p->held) < 0 ||
	    asprintf(&key, "mail:<%s>", mid) < 0)
		return -ENOMEM;
	j = json_pack("{s:I, s:i, s:s}", "patch", (json_int_t)p->patch->id, "version",
		      p->patch->version, "reason", p->held);
	detail = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!detail)
		return -ENOMEM;
	if (mod) {
		to[0] = (char *)mod;
		r = mail_compose_notice(p->from, to, mid, rfc, subject, text, time(NULL), &mail, &err);
		if (r < 0)
			return job_fail(p->ctx, r, "composing the notice: %s", err ? err : strerror(-r));
	}
	held_key(p->patch->id, hk, sizeof(hk));
	r = store_begin(p->ctx->store);
	if (r < 0)
		return r;
	r = store_patch_decide(p->ctx->store, p->patch->id, "held", NULL, p->held);
	if (r >= 0)
		r = store_event_add(p->ctx->store, p->bug->id, p->ctx->job->id, "publish.held", detail);
	if (r >= 0)
		r = store_kv_set(p->ctx->store, hk, "1");
	if (r >= 0 && mail)
		r = store_outbox_add(p->ctx->store, p->bug->id, "mail", key, mail, NULL, NULL);
	if (r < 0) {
		store_rollback(p->ctx->store);
		return job_fail(p->ctx, r, "holding: %s", store_errmsg(p->ctx->store));
	}
	return store_commit(p->ctx->store);
}

static int stage_upstream(struct pub *p, const char *by)
{
	_cleanup_strv_ char **maint = NULL, **to = NULL, **cc = NULL, **culprit = NULL;
	_cleanup_free_ char *mail = NULL, *key = NULL, *err = NULL, *sent_to = NULL,
			    *report_mid = NULL;
	_cleanup_(mail_freep) struct mail *report = NULL;
	char mid[256];
	int r;

	if (!by || !strchr(by, '@')) {
		p->ctx->permanent = true;
		return job_fail(p->ctx, -EINVAL, "an upstream mail needs the approver's \"Name <addr>\"");
	}
	if (streq(p->patch->state, "held")) {
		snprintf(p->held, sizeof(p->held), "%s", p->patch->reason ? p->patch->reason : "held");
		return 0; /* held already (a retry after the hold was recorded) */
	}
	if (streq(p->patch->state, "approved") && !publish_was_held(p->ctx->store, p->patch->id)) {
		r = presend_checks(p, p->held, sizeof(p->held));
		if (r < 0)
			return r;
		if (r > 0)
			return hold(p);
		r = syzbot_gate(p);
		if (r != 0)
			return r < 0 ? r : 0;
	} else if (streq(p->patch->state, "approved")) {
		/* sent anyway after a hold: syzbot's OK still earns its tag */
		enum syztest_state st;

		if (syztest_state(p->ctx->store, p->ctx->cfg, p->bug, p->patch, &st, NULL) >= 0)
			p->syzbot_ok = st == SYZTEST_OK;
	}
	r = p->tree ? tree_worktree_checkout(p->tree, p->wt, p->patch->base_commit, NULL) : 0;
	if (r < 0)
		return job_fail(p->ctx, r, "checkout: %s", tree_error(p->tree));
	r = mail_maintainers(p->wt, p->patch->diff, &maint, &err);
	if (r < 0)
		return job_fail(p->ctx, r, "get_maintainer.pl: %s", err ? err : strerror(-r));
	r = report_load(p, &report_mid, &report);
	if (r >= 0)
		r = culprit_people(p, &culprit);
	if (r >= 0)
		r = mail_upstream_recipients(report, maint, culprit, &to, &cc);
	if (r >= 0)
		r = syzbot_cc(p, &cc);
	if (r < 0)
		return job_fail(p->ctx, r, "recipients: %s", strerror(-r));
	if (strv_len(to) == 0) {
		p->ctx->permanent = true;
		return job_fail(p->ctx, -ENOENT, "get_maintainer.pl named nobody");
	}
	message_id(p, p->patch->version, NULL, mid, sizeof(mid));
	r = compose(p, true, by, to, cc, mid, report_mid, &mail);
	if (r < 0)
		return r;
	if (asprintf(&key, "mail:<%s>", mid) < 0 || asprintf(&sent_to, "%s", to[0]) < 0)
		return -ENOMEM;
	r = store_begin(p->ctx->store);
	if (r < 0)
		return r;
	r = store_outbox_add(p->ctx->store, p->bug->id, "mail", key, mail, NULL, NULL);
	if (r >= 0)
		r = record_mail(p, mid, "upstream", to, cc);
	if (r >= 0)
		r = store_patch_set_sent(p->ctx->store, p->patch->id, mid, sent_to, NULL);
	if (r >= 0 && streq(p->patch->state, "approved"))
		r = store_patch_decide(p->ctx->store, p->patch->id, "sent", NULL, NULL);
	if (r >= 0 && streq(p->bug->state, "awaiting-approval"))
		r = store_bug_set_state(p->ctx->store, p->bug->id, "sent", "approved upstream");
	if (r < 0) {
		store_rollback(p->ctx->store);
		return job_fail(p->ctx, r, "queueing: %s", store_errmsg(p->ctx->store));
	}
	return store_commit(p->ctx->store);
}

int job_publish_run(struct job_ctx *ctx)
{
	_cleanup_(pub_clear) struct pub p = { .ctx = ctx };
	_cleanup_json_ json_t *args = NULL;
	const char *stage;
	json_error_t jerr;
	int64_t id;
	int r;

	if (!ctx->job->args ||
	    json_parse_bounded(ctx->job->args, strlen(ctx->job->args), 65536, &args, &jerr) < 0 ||
	    (id = json_get_int(args, "patch", 0)) <= 0 ||
	    !(stage = json_get_str(args, "stage"))) {
		ctx->permanent = true;
		return job_fail(ctx, -EINVAL, "publish job without {\"patch\", \"stage\"}");
	}
	r = pub_load(&p, id);
	if (r < 0)
		return r;
	if (streq(stage, "moderation"))
		r = job_step_passed(ctx, "queued") ? 0 : stage_moderation(&p);
	else if (streq(stage, "upstream"))
		r = stage_upstream(&p, json_get_str(args, "by"));
	else {
		ctx->permanent = true;
		r = job_fail(ctx, -EINVAL, "unknown publish stage '%s'", stage);
	}
	if (r >= 0) {
		_cleanup_json_ json_t *res = json_pack("{s:s?, s:s, s:s?, s:s?}", "branch",
						       p.branch[0] ? p.branch : NULL, "stage", stage,
						       "held", p.held[0] ? p.held : NULL, "waiting",
						       p.waiting[0] ? p.waiting : NULL);

		ctx->result = res ? json_dumps(res, JSON_COMPACT) : NULL;
	}
	return r;
}

/* The tree's push-token, read only here where a push needs it: it is a
 * secret (a credential or a file), not worth reading for every other use
 * of the tree's section.  An unreadable one reads as none, and the push
 * then fails with the remote's answer. */
static char *push_token_from_config(const struct config *cfg, const char *tree)
{
	char *token = NULL;

	(void)config_get_secret(cfg, "tree", tree, "push-token", &token);
	return token;
}

int publish_push_deliver(const struct config *cfg, const struct store_outbox *o,
			 char **ret_error)
{
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
	_cleanup_json_ json_t *j = NULL;
	_cleanup_free_ char *err = NULL, *token = NULL;
	_cleanup_tree_ struct tree *t = NULL;
	const char *tname, *url, *refs[3] = { NULL, NULL, NULL };
	struct tree_push_auth auth = { 0 };
	json_error_t jerr;
	json_t *a;
	int r;

	if (json_parse_bounded(o->payload, strlen(o->payload), 65536, &j, &jerr) < 0 ||
	    !(tname = json_get_str(j, "tree")) || !(url = json_get_str(j, "url")) ||
	    !json_is_array(a = json_object_get(j, "refspecs")) || json_array_size(a) > 2) {
		*ret_error = strdup("malformed push entry");
		return -EINVAL;
	}
	for (size_t i = 0; i < json_array_size(a); i++)
		refs[i] = json_string_value(json_array_get(a, i));
	if (source_configured(cfg, tname) < 0) {
		*ret_error = strdup("the tree is no longer configured");
		return -ENOENT;
	}
	r = tree_conf_from_config(cfg, tname, &tc, &err);
	if (r >= 0)
		r = source_open_tree(cfg, tname, &t, &err);
	if (r < 0) {
		*ret_error = TAKE_PTR(err);
		return r == -ENOTSUP ? r : -EAGAIN;
	}
	auth.ssh_key = tc.push_ssh_key;
	auth.known_hosts = tc.push_known_hosts;
	auth.token = token = push_token_from_config(cfg, tname);
	r = tree_push(t, url, refs, &auth, PUBLISH_PUSH_TIMEOUT);
	if (r < 0) {
		*ret_error = strdup(tree_error(t));
		/* a refused host key or credentials will not fix itself */
		return r == -EPERM || r == -EACCES || r == -EREMOTEIO ? r : -EAGAIN;
	}
	return 0;
}

int publish_queue(struct store *s, int64_t patch, const char *stage,
		  const char *by)
{
	_cleanup_(store_patch_freep) struct store_patch *p = NULL;
	_cleanup_free_ char *args = NULL;
	json_t *j;
	int r = store_patch_get(s, patch, &p);

	if (r < 0)
		return r;
	j = json_pack("{s:I, s:s, s:s?}", "patch", (json_int_t)patch, "stage", stage, "by", by);
	args = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!args)
		return -ENOMEM;
	return store_job_add(s, p->bug_id, "publish", args, 10, 5, NULL);
}

const struct job_kind job_kind_publish = {
	.name = "publish",
	.run = job_publish_run,
	.doc = "commits a validated patch as kfix/<bug>/v<N>, queues the push and "
		"the patch mail (moderation, or upstream after approval)",
};

/* The approver's name goes into a Signed-off-by trailer, so it must be one. */
bool publish_approver_valid(const char *by)
{
	return by && strchr(by, '@') && strchr(by, '<');
}

int publish_decide(struct store *s, int64_t patch, const char *state, const char *by,
		   const char *reason)
{
	bool approve = streq(state, "approved");
	int r;

	if (!approve && !streq(state, "rejected"))
		return -EINVAL;
	if (approve && !publish_approver_valid(by))
		return -EINVAL;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = store_patch_decide(s, patch, state, by, reason);
	if (r >= 0 && approve)
		r = publish_queue(s, patch, "upstream", by);
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	return store_commit(s);
}
