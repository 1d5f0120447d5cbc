/* The dashboard's door: login with a token into a signed session cookie,
 * CSRF-checked forms, the stylesheet and the one script, and the routes.
 *
 * A session is "SCOPE.GENERATION.EXPIRY.MAC", the MAC an HMAC-SHA256 with
 * a key drawn at start-up: nothing is stored, a restart or a changed
 * token ends every session, and the token itself never leaves the login
 * form (no token in URLs or cookies).  A form carries a second HMAC of
 * the session; together with SameSite=Strict and the Origin check that
 * keeps another site from making a logged-in browser approve a patch. */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "common/log.h"
#include "common/strutil.h"
#include "dashboard-internal.h"
#include "hooks/auth.h"
#include "html.h"
#include "publish.h"
#include "store.h"

#define SESSION_COOKIE "kfix_session"
#define SESSION_SECONDS (12 * 3600)
#define SESSION_MAX 160
#define FORM_FIELD_MAX 4096

static const char dash_css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222}"
	"nav{background:#234;padding:.5em 1em}nav a{color:#fff;margin-right:1.5em}"
	"main{padding:1em}table{border-collapse:collapse;margin:.5em 0}"
	"td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}"
	"pre{background:#f6f6f6;padding:.5em;overflow:auto;max-height:40em;white-space:pre-wrap}"
	".add{color:#060}.del{color:#a00}.hunk{color:#05a}.err{color:#a00}"
	"dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}"
	"dt{font-weight:bold}dd{margin:0}form.inline{display:inline}";

/* Live progress: the job page names the JSON to poll; only textContent
 * is written, so nothing the job reports becomes markup. */
static const char dash_js[] =
	"'use strict';\n"
	"(function () {\n"
	"  const live = document.getElementById('live');\n"
	"  if (!live) return;\n"
	"  async function tick() {\n"
	"    try {\n"
	"      const r = await fetch(live.dataset.src, {credentials: 'same-origin', cache: 'no-store'});\n"
	"      if (r.ok) {\n"
	"        const j = await r.json();\n"
	"        for (const k of Object.keys(j)) {\n"
	"          const e = document.getElementById('live-' + k);\n"
	"          if (e) e.textContent = String(j[k]);\n"
	"        }\n"
	"        if (j.state !== 'running' && j.state !== 'queued') return;\n"
	"      }\n"
	"    } catch (e) { /* the next tick tries again */ }\n"
	"    setTimeout(tick, 1000);\n"
	"  }\n"
	"  setTimeout(tick, 1000);\n"
	"})();\n";

static int session_mac(struct front *f, const char *what, const char *data,
		       char hex[AUTH_SHA256_HEX_LEN + 1])
{
	return auth_hmac_sha256_hex(f->ui_key, what, data, strlen(data), hex);
}

/* The value of cookie name in a Cookie header, bounded; NULL if absent. */
static char *cookie_value(const char *header, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = header; p && *p;) {
		p += strspn(p, " ;");
		if (!strncmp(p, name, n) && p[n] == '=') {
			size_t len = strcspn(p + n + 1, ";");

			return len <= SESSION_MAX ? strndup(p + n + 1, len) : NULL;
		}
		p = strchr(p, ';');
	}
	return NULL;
}

static void session_read(struct front *f, struct http_request *req, struct dash_session *ret)
{
	_cleanup_free_ char *v = cookie_value(http_request_header(req, "Cookie"), SESSION_COOKIE);
	unsigned long long gen, expiry;
	char scope, *mac;
	int used = 0;

	*ret = (struct dash_session){ .scope = HTTP_SCOPE_NONE };
	if (!v || !(mac = strrchr(v, '.')) ||
	    sscanf(v, "%c.%llu.%llu%n", &scope, &gen, &expiry, &used) != 3 || v + used != mac ||
	    (scope != 'a' && scope != 'r'))
		return;
	if (!auth_hmac_sha256_verify(f->ui_key, "kfix-ui-session\n", v, (size_t)(mac - v), mac + 1) ||
	    gen != http_server_token_generation(f->http) || expiry < (unsigned long long)time(NULL))
		return;
	if (session_mac(f, "kfix-ui-csrf\n", v, ret->csrf) < 0)
		return;
	ret->scope = scope == 'a' ? HTTP_SCOPE_ADMIN : HTTP_SCOPE_READ;
}

static int session_cookie(struct front *f, enum http_scope scope, char **ret)
{
	char data[96], mac[AUTH_SHA256_HEX_LEN + 1];

	snprintf(data, sizeof(data), "%c.%" PRIu64 ".%lld", scope == HTTP_SCOPE_ADMIN ? 'a' : 'r',
		 http_server_token_generation(f->http), (long long)time(NULL) + SESSION_SECONDS);
	if (session_mac(f, "kfix-ui-session\n", data, mac) < 0)
		return -ENOMEM;
	return asprintf(ret, SESSION_COOKIE "=%s.%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%d%s",
			data, mac, SESSION_SECONDS, http_server_tls(f->http) ? "; Secure" : "") < 0
		? -ENOMEM : 0;
}

/* A field of an application/x-www-form-urlencoded body, decoded. */
static int form_field(struct http_request *req, const char *name, char **ret)
{
	size_t len, n = strlen(name);
	const char *body = http_request_body(req, &len), *end = body + len;

	for (const char *p = body; p < end;) {
		const char *amp = memchr(p, '&', (size_t)(end - p)) ?: end;

		if ((size_t)(amp - p) > n && !strncmp(p, name, n) && p[n] == '=') {
			_cleanup_free_ char *raw = strndup(p + n + 1, (size_t)(amp - p - n - 1));
			char *dec;
			int dlen;

			if (!raw)
				return -ENOMEM;
			if (strlen(raw) > FORM_FIELD_MAX * 3)
				return -E2BIG;
			for (char *c = raw; *c; c++)
				if (*c == '+')
					*c = ' ';
			dec = curl_easy_unescape(NULL, raw, 0, &dlen);
			if (!dec)
				return -ENOMEM;
			*ret = (size_t)dlen == strlen(dec) && utf8_valid(dec, (size_t)dlen)
				? strdup(dec) : NULL;
			curl_free(dec);
			return *ret ? 0 : -EINVAL;
		}
		p = amp + 1;
	}
	return -ENOENT;
}

/* A POST from one of our pages: same origin (when the browser says),
 * and the session's form token. */
static bool form_trusted(struct http_request *req, const struct dash_session *s)
{
	const char *origin = http_request_header(req, "Origin");
	const char *host = http_request_header(req, "Host");
	const char *site = http_request_header(req, "Sec-Fetch-Site");
	_cleanup_free_ char *tok = NULL;
	const char *o;

	if (site && !streq(site, "same-origin"))
		return false;
	if (origin && !streq(origin, "null")) {
		o = startswith(origin, "http://") ?: startswith(origin, "https://");
		if (!o || !host || !streq(o, host))
			return false;
	}
	if (form_field(req, "csrf", &tok) < 0)
		return false;
	return auth_secret_equal(tok, s->csrf);
}

int dash_csrf_field(struct buf *b, const struct dash_session *s)
{
	return html_fmt(b, "<input type=\"hidden\" name=\"csrf\" value=\"%s\">", s->csrf);
}

static int reply_redirect(struct http_request *req, const char *to, const char *cookie)
{
	int r = http_reply(req, 303, "text/plain; charset=utf-8", "", 0);

	if (r >= 0)
		r = http_reply_header(req, "Location", to);
	if (r >= 0 && cookie)
		r = http_reply_header(req, "Set-Cookie", cookie);
	return r;
}

static int login_page(struct http_request *req, unsigned status, const char *error)
{
	_cleanup_buf_ struct buf b = BUF_INIT(DASH_PAGE_MAX);
	struct dash_session none = { .scope = HTTP_SCOPE_NONE };
	int r = dash_page_begin(&b, "Log in", &none);

	if (r >= 0 && error)
		r = html_fmt(&b, "<p class=\"err\" id=\"login-error\">%s</p>", error);
	if (r >= 0)
		r = html_fmt(&b, "<form method=\"post\" action=\"/ui/login\">"
			     "<label>Token <input type=\"password\" name=\"token\" "
			     "autocomplete=\"current-password\" required></label> "
			     "<button type=\"submit\">Log in</button></form>"
			     "<p>The [http] api-token reads; the admin-token also moderates.</p>");
	if (r >= 0)
		r = dash_page_end(&b);
	return r < 0 ? r : dash_reply_page(req, status, &b);
}

static int ui_login_get(struct http_request *req, void *userdata)
{
	(void)userdata;
	return login_page(req, 200, NULL);
}

static int ui_login_post(struct http_request *req, void *userdata)
{
	struct front *f = userdata;
	_cleanup_free_ char *tok = NULL, *cookie = NULL;
	enum http_scope scope;
	int r;

	if (form_field(req, "token", &tok) < 0)
		return login_page(req, 400, "Give a token.");
	scope = http_server_token_scope(f->http, tok);
	if (tok)
		explicit_bzero(tok, strlen(tok));
	if (scope == HTTP_SCOPE_NONE) {
		log_warning("dashboard: a login with a wrong token");
		return login_page(req, 401, "That token is not valid.");
	}
	r = session_cookie(f, scope, &cookie);
	if (r < 0)
		return r;
	return reply_redirect(req, "/ui/bugs", cookie);
}

static int ui_logout(struct http_request *req, void *userdata)
{
	(void)userdata;
	return reply_redirect(req, "/ui/login",
			      SESSION_COOKIE "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
}

static int ui_root(struct http_request *req, void *userdata)
{
	(void)userdata;
	return reply_redirect(req, "/ui/bugs", NULL);
}

static int ui_static(struct http_request *req, void *userdata)
{
	const char *p = http_request_path(req);
	int r;

	(void)userdata;
	if (streq(p, "/ui/static/kfix.css"))
		r = http_reply(req, 200, "text/css; charset=utf-8", dash_css, strlen(dash_css));
	else if (streq(p, "/ui/static/live.js"))
		r = http_reply(req, 200, "text/javascript; charset=utf-8", dash_js, strlen(dash_js));
	else
		return http_reply_error(req, 404, "not found");
	if (r >= 0)
		r = http_reply_header(req, "X-Content-Type-Options", "nosniff");
	return r;
}

/* approve or reject, from the bug page's form, with an admin session */
static int patch_action(struct front *f, struct http_request *req, const struct dash_session *s)
{
	_cleanup_free_ char *by = NULL, *reason = NULL, *back = NULL;
	const char *rest, *state;
	int64_t id;
	int r;

	if (http_request_path_id(req, "/ui/patches/", &id, &rest) < 0)
		return dash_reply_message(req, 404, s, "Not found", "There is no such page.");
	state = streq(rest, "approve") ? "approved" : streq(rest, "reject") ? "rejected" : NULL;
	if (!state)
		return dash_reply_message(req, 404, s, "Not found", "Unknown action.");
	if (s->scope < HTTP_SCOPE_ADMIN)
		return dash_reply_message(req, 403, s, "Forbidden",
					  "Moderation needs a session of the admin token.");
	if (!form_trusted(req, s))
		return dash_reply_message(req, 403, s, "Forbidden",
					  "The form did not come from this dashboard.");
	(void)form_field(req, "by", &by);
	(void)form_field(req, "reason", &reason);
	r = publish_decide(f->store, id, state, by, reason && *reason ? reason : NULL);
	if (r == -EINVAL)
		return dash_reply_message(req, 400, s, "Approval refused",
					  "The approver signs off: give \"Name <address>\".");
	if (r == -ENOENT)
		return dash_reply_message(req, 404, s, "Not found", "No such patch.");
	if (r == -EPERM)
		return dash_reply_message(req, 409, s, "Conflict",
					  "The patch is not awaiting approval.");
	if (r < 0)
		return dash_reply_message(req, 503, s, "Store error", store_errmsg(f->store));
	{
		_cleanup_free_ char *esc = str_escape(by ?: "(admin)", strlen(by ?: "(admin)"), 200);

		log_info("dashboard: patch %lld %s by %s", (long long)id, state, esc ?: "");
	}
	{
		_cleanup_(store_patch_freep) struct store_patch *p = NULL;

		if (store_patch_get(f->store, id, &p) >= 0 &&
		    asprintf(&back, "/ui/bugs/%lld#patch-%lld", (long long)p->bug_id,
			     (long long)id) < 0)
			return -ENOMEM;
	}
	return reply_redirect(req, back ?: "/ui/bugs", NULL);
}

typedef int (*dash_view_fn)(struct front *f, struct http_request *req,
			    const struct dash_session *s);

/* Every page but the login needs a session; without one the browser is
 * sent to the login form. */
static int ui_route(struct http_request *req, void *userdata)
{
	static const struct {
		const char *method, *prefix;
		dash_view_fn fn;
	} views[] = {
		{ "GET", "/ui/bugs/", dash_bug },  { "GET", "/ui/bugs", dash_bugs },
		{ "GET", "/ui/jobs/", dash_job },  { "GET", "/ui/hosts", dash_hosts },
		{ "POST", "/ui/patches/", patch_action },
	};
	struct front *f = userdata;
	struct dash_session s;
	const char *path = http_request_path(req);

	session_read(f, req, &s);
	if (s.scope == HTTP_SCOPE_NONE) {
		if (streq(http_request_method(req), "GET") && !strstr(path, "/progress"))
			return reply_redirect(req, "/ui/login", NULL);
		return dash_reply_message(req, 401, &s, "Log in", "This needs a session: log in.");
	}
	for (size_t i = 0; i < ARRAY_SIZE(views); i++)
		if (streq(http_request_method(req), views[i].method) &&
		    startswith(path, views[i].prefix) &&
		    (views[i].prefix[strlen(views[i].prefix) - 1] == '/' ||
		     streq(path, views[i].prefix)))
			return views[i].fn(f, req, &s);
	return dash_reply_message(req, 404, &s, "Not found", "There is no such page.");
}

int dashboard_setup(struct front *f)
{
	static const struct {
		const char *method, *path;
		http_handler_fn fn;
	} routes[] = {
		{ "GET", "/", ui_root },
		{ "GET", "/ui/static/*", ui_static },
		{ "GET", "/ui/login", ui_login_get },
		{ "POST", "/ui/login", ui_login_post },
		{ "POST", "/ui/logout", ui_logout },
		{ "GET", "/ui/*", ui_route },
		{ "POST", "/ui/*", ui_route },
	};
	uint8_t key[32];
	int r;

	if (getrandom(key, sizeof(key), 0) != sizeof(key))
		return -errno ?: -EIO;
	for (size_t i = 0; i < sizeof(key); i++)
		snprintf(f->ui_key + 2 * i, 3, "%02x", key[i]);
	explicit_bzero(key, sizeof(key));
	for (size_t i = 0; i < ARRAY_SIZE(routes); i++) {
		/* the pages check their session themselves: the routes are open */
		r = http_server_route(f->http, routes[i].method, routes[i].path,
				      HTTP_SCOPE_NONE, routes[i].fn, f);
		if (r < 0)
			return r;
	}
	return 0;
}
