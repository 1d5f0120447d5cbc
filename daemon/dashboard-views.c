/* The dashboard's pages: bugs, a bug, a job, hosts and queues.  Server
 * rendered; every text from outside (titles, mails, model output, logs)
 * goes through html_fmt's escaping %s. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "agent/diagnose.h"
#include "agent/trajectory.h"
#include "budget.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "dashboard-internal.h"
#include "html.h"
#include "store.h"

#define BUGS_PAGE 50
#define TIMELINE_MAX 500
#define TRAJ_SHOW_MAX 2000
#define TRAJ_READ_MAX (32u * 1024 * 1024)
#define LOG_MAX (16u * 1024 * 1024)
#define CELL_MAX 2000

/* no inline script or style: the CSP allows only our own files */
#define CSP "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " \
	    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

static int secure_headers(struct http_request *req)
{
	static const char *const h[][2] = {
		{ "Content-Security-Policy", CSP },
		{ "X-Content-Type-Options", "nosniff" },
		{ "X-Frame-Options", "DENY" },
		{ "Referrer-Policy", "no-referrer" },
	};
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(h) && r >= 0; i++)
		r = http_reply_header(req, h[i][0], h[i][1]);
	return r;
}

int dash_page_begin(struct buf *b, const char *title, const struct dash_session *s)
{
	int r = html_fmt(b, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
			 "<title>%s - kfix</title>"
			 "<link rel=\"stylesheet\" href=\"/ui/static/kfix.css\">"
			 "<script src=\"/ui/static/live.js\" defer></script></head><body><nav>"
			 "<a href=\"/ui/bugs\">Bugs</a><a href=\"/ui/hosts\">Hosts and queues</a>",
			 title);

	if (r >= 0 && s->scope != HTTP_SCOPE_NONE)
		r = html_fmt(b, "<form class=\"inline\" method=\"post\" action=\"/ui/logout\">"
			     "<button type=\"submit\">Log out</button></form>");
	if (r >= 0)
		r = html_fmt(b, "</nav><main><h1>%s</h1>", title);
	return r;
}

int dash_page_end(struct buf *b)
{
	return html_fmt(b, "</main></body></html>\n");
}

int dash_reply_page(struct http_request *req, unsigned status, struct buf *b)
{
	int r = http_reply(req, status, "text/html; charset=utf-8", b->data ?: "", b->len);

	return r < 0 ? r : secure_headers(req);
}

int dash_reply_message(struct http_request *req, unsigned status,
		       const struct dash_session *s, const char *title, const char *text)
{
	_cleanup_buf_ struct buf b = BUF_INIT(64 * 1024);
	int r = dash_page_begin(&b, title, s);

	if (r >= 0)
		r = html_fmt(&b, "<p class=\"err\">%s</p>", text);
	if (r >= 0 && status == 401)
		r = html_fmt(&b, "<p><a href=\"/ui/login\">Log in</a></p>");
	if (r >= 0)
		r = dash_page_end(&b);
	return r < 0 ? r : dash_reply_page(req, status, &b);
}

const char *dash_age(int64_t t, char *buf, size_t n)
{
	int64_t d = time(NULL) - t;

	if (t <= 0)
		snprintf(buf, n, "-");
	else if (d < 120)
		snprintf(buf, n, "%llds", (long long)(d < 0 ? 0 : d));
	else if (d < 7200)
		snprintf(buf, n, "%lld min", (long long)d / 60);
	else if (d < 172800)
		snprintf(buf, n, "%lld h", (long long)d / 3600);
	else
		snprintf(buf, n, "%lld d", (long long)d / 86400);
	return buf;
}

static const char *utc(int64_t t, char *buf, size_t n)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (t <= 0 || !gmtime_r(&tt, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, n, "-");
	return buf;
}

static int finish(struct http_request *req, struct buf *b, int r)
{
	if (r >= 0)
		r = dash_page_end(b);
	if (r == -E2BIG) {
		/* a page past DASH_PAGE_MAX still shows what fitted */
		(void)buf_append_trunc(b, "</main></body></html>\n", 22);
		r = 0;
	}
	return r < 0 ? r : dash_reply_page(req, 200, b);
}

/* ---- the bug list ---- */

static int bug_filters(struct buf *b, const char *state, const char *tree)
{
	int r = html_fmt(b, "<form method=\"get\" action=\"/ui/bugs\" id=\"filters\">"
			 "<label>State <select name=\"state\"><option value=\"\">any</option>");

	for (size_t i = 0; store_bug_states[i] && r >= 0; i++)
		r = html_fmt(b, "<option%H>%s</option>",
			     state && streq(state, store_bug_states[i]) ? " selected" : "",
			     store_bug_states[i]);
	if (r >= 0)
		r = html_fmt(b, "</select></label> <label>Tree <input name=\"tree\" value=\"%s\">"
			     "</label> <button type=\"submit\">Filter</button></form>", tree ?: "");
	return r;
}

static int bug_row(struct buf *b, const struct store_bug *bug)
{
	char age[32];

	return html_fmt(b, "<tr class=\"bug\"><td><a href=\"/ui/bugs/%D\">%D</a></td><td>%s</td>"
		     "<td class=\"title\"><a href=\"/ui/bugs/%D\">%s</a></td><td>%s</td><td>%s</td>"
		     "<td>%u</td></tr>",
		     bug->id, bug->id, bug->state, bug->id, bug->title ?: "(no title)",
		     bug->tree ?: "-", dash_age(bug->created, age, sizeof(age)), (unsigned)bug->patches);
}

int dash_bugs(struct front *f, struct http_request *req, const struct dash_session *s)
{
	_cleanup_buf_ struct buf b = BUF_INIT(DASH_PAGE_MAX);
	struct store_query q = { .newest = true, .limit = BUGS_PAGE };
	const char *after = http_request_query(req, "after");
	struct store_bug **bugs = NULL;
	size_t n = 0;
	int r;

	q.state = http_request_query(req, "state");
	q.tree = http_request_query(req, "tree");
	if (q.state && !*q.state)
		q.state = NULL;
	if (q.tree && !*q.tree)
		q.tree = NULL;
	if (q.state && !store_bug_state_valid(q.state))
		return dash_reply_message(req, 400, s, "Bugs", "Unknown state.");
	if (after && *after) {
		uint64_t a;

		if (parse_uint64(after, &a) < 0 || a > INT64_MAX)
			return dash_reply_message(req, 400, s, "Bugs", "\"after\" is a bug id.");
		q.after = (int64_t)a;
	}
	if (store_bug_query(f->store, &q, &bugs, &n) < 0)
		return dash_reply_message(req, 503, s, "Bugs", store_errmsg(f->store));
	r = dash_page_begin(&b, "Bugs", s);
	if (r >= 0)
		r = bug_filters(&b, q.state, q.tree);
	if (r >= 0)
		r = html_fmt(&b, "<table id=\"bugs\"><thead><tr><th>Id</th><th>State</th><th>Title</th>"
			     "<th>Tree</th><th>Age</th><th>Patches</th></tr></thead><tbody>");
	for (size_t i = 0; i < n && r >= 0; i++)
		r = bug_row(&b, bugs[i]);
	if (r >= 0)
		r = html_fmt(&b, "</tbody></table>%H", n ? "" : "<p>No bugs.</p>");
	if (r >= 0 && n == BUGS_PAGE)
		r = html_fmt(&b, "<p><a id=\"older\" href=\"/ui/bugs?after=%D&amp;state=%q&amp;tree=%q\">"
			     "Older bugs</a></p>", bugs[n - 1]->id, q.state ?: "", q.tree ?: "");
	store_bug_list_free(bugs, n);
	return finish(req, &b, r);
}

/* ---- a bug ---- */

static int bug_head(struct buf *b, const struct store_bug *bug)
{
	char c[40], u[40];

	return html_fmt(b, "<dl id=\"bug\"><dt>State</dt><dd id=\"bug-state\">%s</dd>"
			"<dt>Tree</dt><dd>%s</dd><dt>Base</dt><dd>%s</dd>"
			"<dt>Source</dt><dd>%s %s</dd><dt>Guilty file</dt><dd>%s</dd>"
			"<dt>Created</dt><dd>%s</dd><dt>Updated</dt><dd>%s</dd></dl>",
			bug->state, bug->tree ?: "-", bug->base_commit ?: "-", bug->source ?: "",
			bug->source_id ?: "", bug->guilty_file ?: "-",
			utc(bug->created, c, sizeof(c)), utc(bug->updated, u, sizeof(u)));
}

static int bug_timeline(struct front *f, struct buf *b, int64_t bug)
{
	struct store_query q = { .bug_id = bug, .limit = TIMELINE_MAX };
	struct store_event **ev = NULL;
	size_t n = 0;
	char t[40];
	int r;

	if (store_event_query(f->store, &q, &ev, &n) < 0)
		return html_fmt(b, "<p class=\"err\">%s</p>", store_errmsg(f->store));
	r = html_fmt(b, "<h2>Timeline</h2><table id=\"timeline\"><tr><th>Time</th><th>Event</th>"
		     "<th>Job</th><th>Detail</th></tr>");
	for (size_t i = 0; i < n && r >= 0; i++) {
		_cleanup_free_ char *d = ev[i]->detail && strlen(ev[i]->detail) > CELL_MAX
			? strndup(ev[i]->detail, CELL_MAX) : NULL;

		r = html_fmt(b, "<tr><td>%s</td><td>%s</td><td>", utc(ev[i]->ts / 1000000, t, sizeof(t)),
			     ev[i]->kind);
		if (r >= 0 && ev[i]->job_id)
			r = html_fmt(b, "<a href=\"/ui/jobs/%D\">%D</a>", ev[i]->job_id, ev[i]->job_id);
		if (r >= 0)
			r = html_fmt(b, "</td><td>%s</td></tr>", d ?: ev[i]->detail);
	}
	store_event_list_free(ev, n);
	return r < 0 ? r : html_fmt(b, "</table>");
}

static int bug_jobs(struct front *f, struct buf *b, int64_t bug)
{
	struct store_query q = { .bug_id = bug };
	struct store_job **jobs = NULL;
	size_t n = 0;
	char age[32];
	int r;

	if (store_job_query(f->store, &q, &jobs, &n) < 0)
		return html_fmt(b, "<p class=\"err\">%s</p>", store_errmsg(f->store));
	r = html_fmt(b, "<h2>Jobs</h2><table id=\"jobs\"><tr><th>Id</th><th>Kind</th><th>State</th>"
		     "<th>Attempts</th><th>Progress</th><th>Age</th></tr>");
	for (size_t i = 0; i < n && r >= 0; i++)
		r = html_fmt(b, "<tr><td><a href=\"/ui/jobs/%D\">%D</a></td><td>%s</td><td>%s</td>"
			     "<td>%d</td><td>%s</td><td>%s</td></tr>", jobs[i]->id, jobs[i]->id,
			     jobs[i]->kind, jobs[i]->state, jobs[i]->attempts,
			     jobs[i]->progress ?: jobs[i]->error ?: "",
			     dash_age(jobs[i]->created, age, sizeof(age)));
	store_job_list_free(jobs, n);
	return r < 0 ? r : html_fmt(b, "</table>");
}

/* A diff with its lines coloured by their first character. */
static int diff_block(struct buf *b, const char *diff)
{
	int r = html_fmt(b, "<pre class=\"diff\">");

	for (const char *l = diff ?: ""; *l && r >= 0;) {
		size_t n = strcspn(l, "\n");
		const char *cls = !strncmp(l, "+++", 3) || !strncmp(l, "---", 3) ? NULL
				: *l == '+' ? "add" : *l == '-' ? "del" : *l == '@' ? "hunk" : NULL;
		_cleanup_free_ char *line = strndup(l, n);

		if (!line)
			return -ENOMEM;
		r = cls ? html_fmt(b, "<span class=\"%H\">%s</span>\n", cls, line)
			: html_fmt(b, "%s\n", line);
		l += n + (l[n] == '\n');
	}
	return r < 0 ? r : html_fmt(b, "</pre>");
}

/* The reproduction table and the evidence's texts. */
static int evidence_block(struct buf *b, const char *evidence)
{
	_cleanup_json_ json_t *e = evidence ? json_loads(evidence, 0, NULL) : NULL;
	const struct store_evidence_text *t;
	json_t *row;
	size_t i;
	int r;

	if (!e)
		return 0;
	r = html_fmt(b, "<table class=\"repro\"><tr><th>Kernel</th><th>Result</th></tr>");
	json_array_foreach(json_object_get(e, "table"), i, row)
		if (r >= 0)
			r = html_fmt(b, "<tr><td>%s</td><td>%s</td></tr>", json_get_str(row, "kernel"),
				     json_get_str(row, "result"));
	if (r >= 0)
		r = html_fmt(b, "</table>");
	for (t = store_evidence_texts; t->key && r >= 0; t++)
		if (json_get_str(e, t->key))
			r = html_fmt(b, "<h4>%s</h4><pre>%s</pre>", t->heading, json_get_str(e, t->key));
	if (r >= 0 && json_get_int(e, "job", 0) > 0)
		r = html_fmt(b, "<p>Made by <a href=\"/ui/jobs/%D\">job %D</a></p>",
			     (int64_t)json_get_int(e, "job", 0), (int64_t)json_get_int(e, "job", 0));
	return r;
}

static int moderation_form(struct buf *b, const struct dash_session *s, const struct store_patch *p)
{
	int r;

	if (s->scope < HTTP_SCOPE_ADMIN || !streq(p->state, "awaiting-approval"))
		return 0;
	r = html_fmt(b, "<form method=\"post\" class=\"approve\" action=\"/ui/patches/%D/approve\">",
		     p->id);
	if (r >= 0)
		r = dash_csrf_field(b, s);
	if (r >= 0)
		r = html_fmt(b, "<label>Approver (signs off) <input name=\"by\" "
			     "placeholder=\"Name &lt;address&gt;\" required></label> "
			     "<button type=\"submit\">Approve and send upstream</button></form>"
			     "<form method=\"post\" class=\"reject\" action=\"/ui/patches/%D/reject\">",
			     p->id);
	if (r >= 0)
		r = dash_csrf_field(b, s);
	if (r >= 0)
		r = html_fmt(b, "<label>Reason <input name=\"reason\"></label> "
			     "<button type=\"submit\">Reject</button></form>");
	return r;
}

static int syzbot_block(struct front *f, struct buf *b, const struct store_patch *p)
{
	_cleanup_json_ json_t *tests = store_patch_syzbot_tests(f->store, p);
	json_t *t;
	size_t i;
	int r = 0;

	if (json_array_size(tests) == 0)
		return 0;
	r = html_fmt(b, "<h4>syzbot tests</h4><ul class=\"syzbot\">");
	json_array_foreach(tests, i, t)
		if (r >= 0)
			r = html_fmt(b, "<li><span class=\"syz-result\">%s</span> %s <code>%s</code></li>",
				     json_get_str(t, "result") ?: "?", json_get_str(t, "title") ?: "",
				     json_get_str(t, "message_id") ?: "");
	return r < 0 ? r : html_fmt(b, "</ul>");
}

static int bug_patches(struct front *f, struct buf *b, const struct dash_session *s, int64_t bug)
{
	struct store_query q = { .bug_id = bug };
	struct store_patch **ps = NULL;
	size_t n = 0;
	int r;

	if (store_patch_query(f->store, &q, &ps, &n) < 0)
		return html_fmt(b, "<p class=\"err\">%s</p>", store_errmsg(f->store));
	r = html_fmt(b, "<h2>Patches</h2>%H", n ? "" : "<p>None yet.</p>");
	for (size_t i = 0; i < n && r >= 0; i++) {
		const struct store_patch *p = ps[i];

		r = html_fmt(b, "<section class=\"patch\" id=\"patch-%D\"><h3>v%d: %s</h3>"
			     "<dl><dt>State</dt><dd class=\"patch-state\">%s</dd><dt>Branch</dt><dd>%s</dd>"
			     "<dt>Message-ID</dt><dd>%s</dd><dt>Sent to</dt><dd>%s</dd>"
			     "<dt>Decided by</dt><dd>%s</dd><dt>Reason</dt><dd>%s</dd></dl>",
			     p->id, p->version, p->subject ?: "", p->state, p->branch ?: "-",
			     p->message_id ?: "-", p->sent_to ?: "-", p->decided_by ?: "-",
			     p->reason ?: "-");
		if (r >= 0)
			r = moderation_form(b, s, p);
		if (r >= 0)
			r = evidence_block(b, p->evidence);
		if (r >= 0)
			r = syzbot_block(f, b, p);
		if (r >= 0 && p->explanation)
			r = html_fmt(b, "<h4>Explanation</h4><pre>%s</pre>", p->explanation);
		if (r >= 0)
			r = html_fmt(b, "<h4>Diff</h4>");
		if (r >= 0)
			r = diff_block(b, p->diff);
		if (r >= 0)
			r = html_fmt(b, "</section>");
	}
	store_patch_list_free(ps, n);
	return r;
}

static int name_list(struct buf *b, const char *id, const json_t *a)
{
	size_t i;
	json_t *v;
	int r = html_fmt(b, "<ul class=\"%s\">", id);

	json_array_foreach(a, i, v)
		if (r >= 0)
			r = html_fmt(b, "<li><code>%s</code></li>", json_string_value(v) ?: "");
	return r < 0 ? r : html_fmt(b, "</ul>");
}

/* The fix the developers landed, compared with kfix's patch (the newest
 * comparison). */
static int bug_upstream(struct front *f, struct buf *b, int64_t bug)
{
	struct store_query q = { .bug_id = bug, .state = "upstream.fix", .limit = 1, .newest = true };
	_cleanup_json_ json_t *d = NULL;
	struct store_event **ev = NULL;
	const json_t *fn, *fl, *h;
	size_t n = 0;
	int r;

	if (store_event_query(f->store, &q, &ev, &n) < 0)
		return html_fmt(b, "<p class=\"err\">%s</p>", store_errmsg(f->store));
	d = n && ev[0]->detail ? json_loads(ev[0]->detail, 0, NULL) : NULL;
	store_event_list_free(ev, n);
	if (!d)
		return 0;
	fn = json_object_get(d, "functions");
	fl = json_object_get(d, "files");
	h = json_object_get(d, "hunks");
	r = html_fmt(b, "<h2>The fix that landed</h2><dl id=\"upstream\"><dt>Commit</dt>"
		     "<dd><code>%s</code> %s</dd><dt>Author</dt><dd>%s</dd><dt>Found by</dt><dd>%s</dd>"
		     "<dt>Compared with</dt><dd>v%D</dd><dt>Verdict</dt><dd class=\"verdict\">%s%s</dd>"
		     "<dt>Similarity</dt><dd class=\"similarity\">%F</dd><dt>Hunks</dt>"
		     "<dd>kfix %D, developers %D, meeting %D</dd><dt>Shared files</dt><dd>",
		     json_get_str(d, "commit") ?: "", json_get_str(d, "subject") ?: "",
		     json_get_str(d, "author") ?: "", json_get_str(d, "found_by") ?: "",
		     (int64_t)json_get_int(d, "version", 0), json_get_str(d, "verdict") ?: "?",
		     json_is_true(json_object_get(d, "matches")) ? " (matches)" : "",
		     json_real_value(json_object_get(d, "similarity")),
		     (int64_t)json_get_int(h, "kfix", 0), (int64_t)json_get_int(h, "developer", 0),
		     (int64_t)json_get_int(h, "overlapping", 0));
	if (r >= 0)
		r = name_list(b, "files-shared", json_object_get(fl, "shared"));
	if (r >= 0)
		r = html_fmt(b, "</dd><dt>Functions kfix changed</dt><dd>");
	if (r >= 0)
		r = name_list(b, "functions-kfix", json_object_get(fn, "kfix"));
	if (r >= 0)
		r = html_fmt(b, "</dd><dt>Functions the developers changed</dt><dd>");
	if (r >= 0)
		r = name_list(b, "functions-developer", json_object_get(fn, "developer"));
	return r < 0 ? r : html_fmt(b, "</dd></dl>");
}

/* The value of a header of a stored mail, unfolded, for the mail list. */
static char *mail_header(const char *msg, const char *name)
{
	_cleanup_buf_ struct buf v = BUF_INIT(CELL_MAX);
	size_t n = strlen(name);
	bool in = false;

	for (const char *l = msg; l && *l && *l != '\r' && *l != '\n';) {
		size_t len = strcspn(l, "\r\n");

		if (in && (*l == ' ' || *l == '\t'))
			(void)buf_append_trunc(&v, l, len);
		else if (in)
			break;
		else if (!strncasecmp(l, name, n) && l[n] == ':') {
			in = true;
			(void)buf_append_trunc(&v, l + n + 1 + (l[n + 1] == ' '),
					       len - n - 1 - (l[n + 1] == ' '));
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	return in ? buf_steal(&v, NULL) ?: strdup("") : NULL;
}

/* A review's trailers (kept as [{"key", "value"}]) as "Key: value" lines. */
static int trailer_lines(struct buf *b, const char *trailers)
{
	_cleanup_json_ json_t *a = trailers ? json_loads(trailers, 0, NULL) : NULL;
	json_t *t;
	size_t i;
	int r = 0;

	json_array_foreach(a, i, t)
		if (r >= 0)
			r = html_fmt(b, "%s: %s\n", json_get_str(t, "key") ?: "?",
				     json_get_str(t, "value") ?: "");
	return r;
}

static int bug_mails(struct front *f, struct buf *b, int64_t bug)
{
	struct store_query q = { .bug_id = bug };
	struct store_outbox **ob = NULL;
	struct store_review **rv = NULL;
	size_t n = 0, m = 0;
	char t[40];
	int r;

	if (store_outbox_query(f->store, &q, &ob, &n) < 0)
		n = 0;
	r = html_fmt(b, "<h2>Mail and pushes</h2><table id=\"mails\"><tr><th>Kind</th><th>State</th>"
		     "<th>Subject or refs</th><th>Sent</th></tr>");
	for (size_t i = 0; i < n && r >= 0; i++) {
		_cleanup_free_ char *subj = streq(ob[i]->kind, "mail")
			? mail_header(ob[i]->payload, "Subject") : NULL;
		_cleanup_free_ char *what = subj ? NULL
			: strndup(ob[i]->payload ?: "", CELL_MAX);

		r = html_fmt(b, "<tr><td>%s</td><td>%s</td><td><details><summary class=\"subject\">"
			     "%s</summary><pre>%s</pre></details></td><td>%s</td></tr>", ob[i]->kind,
			     ob[i]->state, subj ?: what, ob[i]->payload,
			     utc(ob[i]->sent, t, sizeof(t)));
	}
	store_outbox_list_free(ob, n);
	if (r >= 0)
		r = html_fmt(b, "</table><h2>Replies</h2>");
	if (r >= 0 && store_review_list(f->store, bug, 0, 0, &rv, &m) >= 0) {
		r = html_fmt(b, "<table id=\"replies\"><tr><th>From</th><th>Trailers</th>"
			     "<th>Comments</th><th>Received</th></tr>");
		for (size_t i = 0; i < m && r >= 0; i++) {
			r = html_fmt(b, "<tr><td>%s</td><td><pre class=\"trailers\">", rv[i]->author);
			if (r >= 0)
				r = trailer_lines(b, rv[i]->trailers);
			if (r >= 0)
				r = html_fmt(b, "</pre></td><td><pre>%s</pre></td><td>%s</td></tr>",
					     rv[i]->comments ?: "", utc(rv[i]->created, t, sizeof(t)));
		}
		if (r >= 0)
			r = html_fmt(b, "</table>");
		store_review_list_free(rv, m);
	}
	return r;
}

int dash_bug(struct front *f, struct http_request *req, const struct dash_session *s)
{
	_cleanup_(store_bug_freep) struct store_bug *bug = NULL;
	_cleanup_buf_ struct buf b = BUF_INIT(DASH_PAGE_MAX);
	_cleanup_free_ char *title = NULL;
	const char *rest;
	int64_t id;
	int r;

	if (http_request_path_id(req, "/ui/bugs/", &id, &rest) < 0 || *rest)
		return dash_reply_message(req, 404, s, "Not found", "There is no such page.");
	r = store_bug_get(f->store, id, &bug);
	if (r == -ENOENT)
		return dash_reply_message(req, 404, s, "Not found", "No such bug.");
	if (r < 0)
		return dash_reply_message(req, 503, s, "Store error", store_errmsg(f->store));
	if (asprintf(&title, "Bug %lld: %s", (long long)id, bug->title ?: "") < 0)
		return -ENOMEM;
	r = dash_page_begin(&b, title, s);
	if (r >= 0)
		r = bug_head(&b, bug);
	if (r >= 0)
		r = bug_patches(f, &b, s, id);
	if (r >= 0)
		r = bug_upstream(f, &b, id);
	if (r >= 0)
		r = bug_mails(f, &b, id);
	if (r >= 0)
		r = bug_jobs(f, &b, id);
	if (r >= 0)
		r = bug_timeline(f, &b, id);
	return finish(req, &b, r);
}

/* ---- a job ---- */

static int job_dir(struct front *f, int64_t id, const char *name, char **ret)
{
	return asprintf(ret, "%s/jobs/%lld%s%s", f->state_dir, (long long)id, name ? "/" : "",
			name ?: "") < 0 ? -ENOMEM : 0;
}

/* Lines of the trajectory so far: the live count of events. */
static int64_t trajectory_lines(const char *path)
{
	char chunk[65536];
	int64_t n = 0;
	size_t k;
	FILE *fp = fopen(path, "re");

	if (!fp)
		return 0;
	while ((k = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		for (const char *p = chunk; (p = memchr(p, '\n', (size_t)(chunk + k - p))); p++)
			n++;
	fclose(fp);
	return n;
}

static int job_progress_json(struct front *f, struct http_request *req, const struct store_job *j)
{
	_cleanup_free_ char *traj = NULL;
	char age[32];

	if (job_dir(f, j->id, "trajectory.jsonl", &traj) < 0)
		return -ENOMEM;
	return http_reply_json(req, 200, json_pack("{s:s, s:s, s:s, s:I}", "state", j->state,
		"progress", j->progress ?: "-", "progress-age", dash_age(j->progress_at, age, sizeof(age)),
		"events", (json_int_t)trajectory_lines(traj)));
}

/* A file of the job's folder, as text: a plain name, a regular file. */
static int job_file_reply(struct front *f, struct http_request *req, const struct dash_session *s,
			  int64_t id, const char *name)
{
	_cleanup_free_ char *path = NULL, *data = NULL;
	size_t len;
	int r;

	if (!*name || name[0] == '.' || strspn(name, "abcdefghijklmnopqrstuvwxyz"
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(name))
		return dash_reply_message(req, 404, s, "Not found", "No such file.");
	if (job_dir(f, id, name, &path) < 0)
		return -ENOMEM;
	r = read_file_bounded(path, LOG_MAX, &data, &len);
	if (r == -ENOENT)
		return dash_reply_message(req, 404, s, "Not found", "No such file.");
	if (r < 0)
		return dash_reply_message(req, 500, s, "Cannot read", strerror(-r));
	r = http_reply(req, 200, "text/plain; charset=utf-8", data, len);
	if (r >= 0)
		r = http_reply_header(req, "X-Content-Type-Options", "nosniff");
	if (r >= 0)
		r = http_reply_header(req, "Content-Security-Policy", "default-src 'none'; sandbox");
	return r;
}

static int job_files(struct front *f, struct buf *b, int64_t id)
{
	_cleanup_free_ char *dir = NULL;
	struct dirent **names = NULL;
	int n, r;

	if (job_dir(f, id, NULL, &dir) < 0)
		return -ENOMEM;
	n = scandir(dir, &names, NULL, alphasort);
	r = html_fmt(b, "<h2>Files</h2><ul id=\"files\">");
	for (int i = 0; i < n; i++) {
		if (r >= 0 && names[i]->d_name[0] != '.' && names[i]->d_type == DT_REG)
			r = html_fmt(b, "<li><a href=\"/ui/jobs/%D/files/%q\">%s</a></li>", id,
				     names[i]->d_name, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return r < 0 ? r : html_fmt(b, "</ul>%H", n > 2 ? "" : "<p>No files.</p>");
}

static int json_cell(struct buf *b, const char *label, const json_t *v)
{
	_cleanup_free_ char *text = NULL;

	if (!v)
		return 0;
	text = json_is_string(v) ? strdup(json_string_value(v)) : json_dumps(v, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	if (strlen(text) > CELL_MAX)
		strcpy(text + CELL_MAX - 4, " ...");
	return html_fmt(b, "<details><summary>%s</summary><pre>%s</pre></details>", label, text);
}

static int traj_row(struct buf *b, const json_t *e, int64_t t0)
{
	const json_t *tok = json_object_get(e, "tokens");
	int64_t start = json_get_int(e, "start_us", 0);
	char off[32], cost[32] = "";
	int r;

	snprintf(off, sizeof(off), "+%.1fs", start && t0 ? (double)(start - t0) / 1e6 : 0.0);
	if (json_object_get(e, "cost"))
		snprintf(cost, sizeof(cost), "%.4f", json_real_value(json_object_get(e, "cost")));
	r = html_fmt(b, "<tr class=\"event\"><td>%D</td><td>%s</td><td>%s</td><td>%s</td>"
		     "<td>%D ms</td><td>%D / %D</td><td>%s</td><td>%s</td><td>",
		     (int64_t)json_get_int(e, "id", 0), off, json_get_str(e, "step"),
		     json_get_str(e, "kind"), (int64_t)json_get_int(e, "duration_ms", 0),
		     (int64_t)json_get_int(tok, "in", 0), (int64_t)json_get_int(tok, "out", 0), cost,
		     json_get_str(e, "verdict") ?: json_get_str(e, "error") ?: "");
	if (r >= 0)
		r = json_cell(b, "input", json_object_get(e, "input"));
	if (r >= 0)
		r = json_cell(b, "output", json_object_get(e, "output"));
	return r < 0 ? r : html_fmt(b, "</td></tr>");
}

/* Why an ended run failed, as kfixctl diagnose says it. */
static int job_diagnosis(struct buf *b, const json_t *ev)
{
	_cleanup_(diagnosis_freep) struct diagnosis *d = NULL;
	json_t *last = json_array_get(ev, json_array_size(ev) - 1);

	if (!streq(json_get_str(last, "kind") ?: "", "run.end") ||
	    diagnose_trajectory(ev, NULL, &d) < 0 || d->family == DIAG_NONE)
		return 0;
	return html_fmt(b, "<h2>Diagnosis</h2><dl id=\"diagnosis\"><dt>Failure</dt><dd>%s: %s</dd>"
			"<dt>Step</dt><dd>%s (event %D)</dd><dt>Evidence</dt><dd>%s</dd>"
			"<dt>Recovery</dt><dd>rerun from %s: %s</dd></dl>",
			diag_family_name(d->family), d->why, d->step, d->event, d->evidence,
			d->from, d->directive);
}

static int job_trajectory(struct front *f, struct buf *b, int64_t id)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_json_ json_t *ev = NULL, *sum = NULL;
	struct stat st;
	json_t *e;
	int64_t t0;
	size_t i;
	int r;

	if (job_dir(f, id, "trajectory.jsonl", &path) < 0)
		return -ENOMEM;
	if (stat(path, &st) < 0)
		return html_fmt(b, "<h2>Trajectory</h2><p>None yet.</p>");
	if ((uint64_t)st.st_size > TRAJ_READ_MAX)
		return html_fmt(b, "<h2>Trajectory</h2><p>Too large to show here (%D bytes): "
				"kfixctl trace %D.</p>", (int64_t)st.st_size, id);
	if (trajectory_load(path, &ev) < 0)
		return html_fmt(b, "<h2>Trajectory</h2><p class=\"err\">Cannot be read.</p>");
	sum = trajectory_summary(ev);
	t0 = json_get_int(json_array_get(ev, 0), "start_us", 0);
	r = html_fmt(b, "<h2>Trajectory</h2><p id=\"traj-summary\">%D events; %D model calls, "
		     "%D tokens in, %D out, cost %F</p>", (int64_t)json_array_size(ev),
		     (int64_t)json_get_int(sum, "llm_calls", 0), (int64_t)json_get_int(sum, "tokens_in", 0),
		     (int64_t)json_get_int(sum, "tokens_out", 0),
		     json_real_value(json_object_get(sum, "cost")));
	if (r >= 0)
		r = job_diagnosis(b, ev);
	if (r >= 0)
		r = html_fmt(b, "<table id=\"trajectory\"><tr><th>#</th><th>At</th><th>Step</th>"
			     "<th>Kind</th><th>Took</th><th>Tokens in/out</th><th>Cost</th>"
			     "<th>Verdict</th><th>Detail</th></tr>");
	json_array_foreach(ev, i, e) {
		if (r < 0 || i >= TRAJ_SHOW_MAX)
			break;
		r = traj_row(b, e, t0);
	}
	if (r >= 0)
		r = html_fmt(b, "</table>");
	if (r >= 0 && json_array_size(ev) > TRAJ_SHOW_MAX)
		r = html_fmt(b, "<p>The first %d events are shown: kfixctl trace %D has all.</p>",
			     TRAJ_SHOW_MAX, id);
	return r;
}

static int job_head(struct buf *b, const struct store_job *j)
{
	char c[40], s[40], e[40], age[32];
	int r = html_fmt(b, "<p id=\"live\" data-src=\"/ui/jobs/%D/progress\">State: "
			 "<span id=\"live-state\">%s</span>; now: <span id=\"live-progress\">%s</span> "
			 "(<span id=\"live-progress-age\">%s</span> ago); "
			 "<span id=\"live-events\">-</span> trajectory events</p>",
			 j->id, j->state, j->progress ?: "-",
			 dash_age(j->progress_at, age, sizeof(age)));

	if (r >= 0)
		r = html_fmt(b, "<dl><dt>Kind</dt><dd>%s</dd><dt>Bug</dt><dd>", j->kind);
	if (r >= 0 && j->bug_id)
		r = html_fmt(b, "<a href=\"/ui/bugs/%D\">%D</a>", j->bug_id, j->bug_id);
	if (r >= 0)
		r = html_fmt(b, "</dd><dt>Attempts</dt><dd>%d of %d</dd><dt>Created</dt><dd>%s</dd>"
			     "<dt>Started</dt><dd>%s</dd><dt>Finished</dt><dd>%s</dd>"
			     "<dt>Error</dt><dd class=\"err\" id=\"job-error\">%s</dd></dl>",
			     j->attempts, j->max_attempts, utc(j->created, c, sizeof(c)),
			     utc(j->started, s, sizeof(s)), utc(j->finished, e, sizeof(e)),
			     j->error ?: "-");
	if (r >= 0 && j->result)
		r = html_fmt(b, "<h2>Result</h2><pre id=\"job-result\">%s</pre>", j->result);
	return r;
}

int dash_job(struct front *f, struct http_request *req, const struct dash_session *s)
{
	_cleanup_(store_job_freep) struct store_job *j = NULL;
	_cleanup_buf_ struct buf b = BUF_INIT(DASH_PAGE_MAX);
	char title[64];
	const char *rest, *file;
	int64_t id;
	int r;

	if (http_request_path_id(req, "/ui/jobs/", &id, &rest) < 0)
		return dash_reply_message(req, 404, s, "Not found", "There is no such page.");
	r = store_job_get(f->store, id, &j);
	if (r == -ENOENT)
		return dash_reply_message(req, 404, s, "Not found", "No such job.");
	if (r < 0)
		return dash_reply_message(req, 503, s, "Store error", store_errmsg(f->store));
	if (streq(rest, "progress"))
		return job_progress_json(f, req, j);
	if ((file = startswith(rest, "files/")))
		return job_file_reply(f, req, s, id, file);
	if (*rest)
		return dash_reply_message(req, 404, s, "Not found", "There is no such page.");
	snprintf(title, sizeof(title), "Job %lld", (long long)id);
	r = dash_page_begin(&b, title, s);
	if (r >= 0)
		r = job_head(&b, j);
	if (r >= 0)
		r = job_files(f, &b, id);
	if (r >= 0)
		r = job_trajectory(f, &b, id);
	return finish(req, &b, r);
}

/* ---- hosts, queues and the budget ---- */

struct host_walk {
	struct buf *b;
	int r;
};

static int host_key(const char *section, const char *sub, const char *key, const char *value,
		    enum config_type type, void *ud)
{
	struct host_walk *w = ud;

	(void)type;
	if ((!streq(section, "vm") && !streq(section, "build")) || strstr(key, "secret") ||
	    strstr(key, "password") || strstr(key, "token"))
		return 0;
	w->r = html_fmt(w->b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>", section,
			sub ?: "", key, value);
	return w->r < 0;
}

static int budget_block(struct front *f, struct buf *b)
{
	struct budget_limits l;
	int64_t tokens = 0;
	double cost = 0;
	int r;

	if (budget_limits_get(f->cfg, &l) < 0 ||
	    store_llm_usage_sum(f->store, budget_day_start(time(NULL)), 0, &tokens, &cost) < 0)
		return html_fmt(b, "<p class=\"err\">The budget cannot be read.</p>");
	r = html_fmt(b, "<h2>LLM budget (this UTC day)</h2><table id=\"budget\"><tr><th></th>"
		     "<th>Spent</th><th>Limit</th><th>Left</th></tr><tr><td>Tokens</td><td>%D</td>",
		     tokens);
	if (r >= 0)
		r = l.day_tokens > 0 ? html_fmt(b, "<td>%D</td><td>%D</td></tr>", l.day_tokens,
						tokens < l.day_tokens ? l.day_tokens - tokens : 0)
				     : html_fmt(b, "<td>none</td><td>-</td></tr>");
	if (r >= 0)
		r = html_fmt(b, "<tr><td>Cost</td><td>%F</td>", cost);
	if (r >= 0)
		r = l.day_cost > 0 ? html_fmt(b, "<td>%F</td><td>%F</td></tr>", l.day_cost,
					      cost < l.day_cost ? l.day_cost - cost : 0)
				   : html_fmt(b, "<td>none</td><td>-</td></tr>");
	return r < 0 ? r : html_fmt(b, "</table>");
}

int dash_hosts(struct front *f, struct http_request *req, const struct dash_session *s)
{
	_cleanup_buf_ struct buf b = BUF_INIT(DASH_PAGE_MAX);
	struct host_walk w = { .b = &b };
	struct store_stats st;
	char age[32];
	int r;

	if (!streq(http_request_path(req), "/ui/hosts"))
		return dash_reply_message(req, 404, s, "Not found", "There is no such page.");
	if (store_stats(f->store, &st) < 0)
		return dash_reply_message(req, 503, s, "Store error", store_errmsg(f->store));
	r = dash_page_begin(&b, "Hosts and queues", s);
	if (r >= 0)
		r = html_fmt(&b, "<h2>Queues</h2><table id=\"queues\"><tr><th>Scheduler</th><td>%s</td></tr>"
			     "<tr><th>Jobs queued</th><td>%D</td></tr><tr><th>Jobs running</th><td>%D</td></tr>"
			     "<tr><th>Jobs done</th><td>%D</td></tr><tr><th>Jobs failed</th><td>%D</td></tr>"
			     "<tr><th>Oldest queued</th><td>%s</td></tr>"
			     "<tr><th>Outbox pending</th><td>%D</td></tr><tr><th>Outbox parked</th><td>%D</td></tr>"
			     "</table>", st.scheduler, st.jobs_queued, st.jobs_running, st.jobs_done,
			     st.jobs_failed, dash_age(st.oldest_queued, age, sizeof(age)),
			     st.outbox_pending, st.outbox_parked);
	if (r >= 0)
		r = html_fmt(&b, "<h2>Learning from upstream</h2><table id=\"learning\"><tr><th>Real fixes "
			     "landed and compared</th><td>%D</td></tr><tr><th>kfix's patch matched the "
			     "developers' fix</th><td>%D</td></tr><tr><th>Match rate</th><td id=\"match-rate\">"
			     "%F</td></tr></table>", st.upstream_compared, st.upstream_matched,
			     st.upstream_compared ? (double)st.upstream_matched / (double)st.upstream_compared
						  : 0.0);
	if (r >= 0)
		r = html_fmt(&b, "<h2>Build and VM hosts</h2><table id=\"hosts\"><tr><th>Kind</th>"
			     "<th>Name</th><th>Key</th><th>Value</th></tr>");
	if (r >= 0)
		config_each(f->cfg, host_key, &w);
	if (r >= 0)
		r = w.r < 0 ? w.r : html_fmt(&b, "</table>");
	if (r >= 0)
		r = budget_block(f, &b);
	return finish(req, &b, r);
}
