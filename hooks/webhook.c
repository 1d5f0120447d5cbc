#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "common/conf.h"
#include "common/log.h"
#include "common/strutil.h"
#include "metrics.h"
#include "webhook.h"

#define WEBHOOK_MAX_HOOKS 32
#define MAIL_HEADER_MAX (256u * 1024)

enum hook_type { HOOK_MAIL, HOOK_SYZBOT, HOOK_FORGE };
static const char *const type_names[] = { "mail", "syzbot", "forge" };

struct hook {
	char *name;
	enum hook_type type;
	bool kfix_scheme; /* else a forge provider */
	enum forge_provider provider;
	char *secret;
	char *base_url;
	uint64_t window_usec;
};

struct webhooks {
	struct hook hooks[WEBHOOK_MAX_HOOKS];
	size_t n;
	struct metrics *metrics;
	struct webhook_sink sink;
	void *userdata;
};

static void hook_clear(struct hook *h)
{
	if (h->secret)
		explicit_bzero(h->secret, strlen(h->secret));
	free(h->secret);
	free(h->name);
	free(h->base_url);
}

void webhooks_free(struct webhooks *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		hook_clear(&w->hooks[i]);
	free(w);
}

size_t webhooks_count(struct webhooks *w)
{
	return w->n;
}

/* One [hook "NAME"] section; *ret untouched on failure. */
static int hook_conf_from_config(const struct config *cfg, const char *name, struct hook *ret,
				 char **ret_error)
{
	_cleanup_(hook_clear) struct hook hc = {};
	struct hook *h = &hc;
	const char *type, *provider, *base;
	size_t t;
	int r;

	if (config_get_string(cfg, "hook", name, "type", &type) < 0)
		return asprintf(ret_error, "[hook \"%s\"]: type is required", name) < 0
			       ? -ENOMEM : -EINVAL;
	for (t = 0; t < ARRAY_SIZE(type_names); t++)
		if (streq(type, type_names[t]))
			break;
	if (t == ARRAY_SIZE(type_names))
		return -EINVAL;
	h->type = (enum hook_type)t;
	r = config_get_string(cfg, "hook", name, "provider", &provider);
	if (r < 0)
		return r;
	h->kfix_scheme = streq(provider, "kfix");
	if (!h->kfix_scheme && forge_provider_from_string(provider, &h->provider) < 0)
		return -EINVAL;
	r = config_get_secret(cfg, "hook", name, "secret", &h->secret);
	if (r < 0 || !h->secret || !*h->secret)
		return asprintf(ret_error, "[hook \"%s\"]: a secret is required", name) < 0
			       ? -ENOMEM : -EINVAL;
	r = config_get_duration(cfg, "hook", name, "replay-window", &h->window_usec);
	if (r >= 0)
		r = config_get_string(cfg, "hook", name, "base-url", &base);
	if (r < 0)
		return r;
	h->base_url = strdup(base);
	h->name = strdup(name);
	if (!h->base_url || !h->name)
		return -ENOMEM;
	*ret = hc;
	hc = (struct hook){};
	return 0;
}

/* ---- authentication ---- */

static const char *delivery_header(const struct hook *h)
{
	static const char *const forge[] = {
		[FORGE_GITHUB] = "X-GitHub-Delivery",
		[FORGE_GITEA] = "X-Gitea-Delivery",
		[FORGE_FORGEJO] = "X-Forgejo-Delivery",
		[FORGE_GITLAB] = "X-Gitlab-Event-UUID",
	};

	return h->kfix_scheme ? "X-Kfix-Delivery" : forge[h->provider];
}

enum verdict { AUTH_OK, AUTH_MISSING, AUTH_BAD, AUTH_STALE };

static enum verdict verify_kfix(const struct hook *h, struct http_request *req,
				const char *body, size_t len)
{
	const char *sig = http_request_header(req, "X-Kfix-Signature");
	const char *ts = http_request_header(req, "X-Kfix-Timestamp");
	char prefix[32];
	uint64_t t;
	int64_t now = (int64_t)time(NULL), skew;

	if (!sig || !ts)
		return AUTH_MISSING;
	if (!startswith(sig, "sha256=") || parse_uint64(ts, &t) < 0 || t > INT64_MAX / 2)
		return AUTH_BAD;
	snprintf(prefix, sizeof(prefix), "%llu.", (unsigned long long)t);
	if (!auth_hmac_sha256_verify(h->secret, prefix, body, len, sig + 7))
		return AUTH_BAD;
	/* checked after the signature so that the answer does not reveal
	 * anything to someone without the secret */
	skew = now - (int64_t)t;
	if ((uint64_t)(skew < 0 ? -skew : skew) * 1000000 > h->window_usec)
		return AUTH_STALE;
	return AUTH_OK;
}

static enum verdict verify_forge(const struct hook *h, struct http_request *req,
				 const char *body, size_t len)
{
	const char *sig;

	switch (h->provider) {
	case FORGE_GITHUB:
		sig = http_request_header(req, "X-Hub-Signature-256");
		if (!sig)
			return AUTH_MISSING;
		if (!startswith(sig, "sha256="))
			return AUTH_BAD;
		sig += 7;
		break;
	case FORGE_FORGEJO:
		sig = http_request_header(req, "X-Forgejo-Signature");
		if (!sig)
			sig = http_request_header(req, "X-Gitea-Signature");
		break;
	case FORGE_GITEA:
		sig = http_request_header(req, "X-Gitea-Signature");
		break;
	case FORGE_GITLAB:
		sig = http_request_header(req, "X-Gitlab-Token");
		if (!sig)
			return AUTH_MISSING;
		return auth_secret_equal(sig, h->secret) ? AUTH_OK : AUTH_BAD;
	default:
		return AUTH_BAD;
	}
	if (!sig)
		return AUTH_MISSING;
	return auth_hmac_sha256_verify(h->secret, NULL, body, len, sig) ? AUTH_OK : AUTH_BAD;
}

static enum verdict hook_verify(const struct hook *h, struct http_request *req,
				const char *body, size_t len)
{
	return h->kfix_scheme ? verify_kfix(h, req, body, len)
			      : verify_forge(h, req, body, len);
}

/* ---- mail ---- */

static bool header_name_ok(const char *p, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] <= 32 || (unsigned char)p[i] >= 127)
			return false;
	return true;
}

/* Copies an unfolded header value, bounded. */
static int msgid_from_value(const char *v, size_t n, char **ret)
{
	const char *lt = memchr(v, '<', n), *gt;
	size_t len;

	if (!lt)
		return -EBADMSG;
	gt = memchr(lt, '>', n - (size_t)(lt - v));
	if (!gt)
		return -EBADMSG;
	len = (size_t)(gt - lt - 1);
	if (len == 0 || len > WEBHOOK_ID_MAX - 8)
		return -EBADMSG;
	for (const char *p = lt + 1; p < gt; p++)
		if ((unsigned char)*p <= 32 || (unsigned char)*p >= 127)
			return -EBADMSG;
	*ret = strndup(lt + 1, len);
	return *ret ? 0 : -ENOMEM;
}

int webhook_mail_message_id(const char *msg, size_t len, char **ret)
{
	size_t pos = 0, limit = MIN(len, (size_t)MAIL_HEADER_MAX);
	bool any = false;

	while (pos < limit) {
		const char *line = msg + pos, *nl = memchr(line, '\n', limit - pos);
		size_t n = nl ? (size_t)(nl - line) : limit - pos, vstart;
		const char *colon;

		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (n == 0)
			return any ? -ENOENT : -EBADMSG; /* end of headers */
		if (line[0] == ' ' || line[0] == '\t') {
			if (!any)
				return -EBADMSG;
		} else {
			colon = memchr(line, ':', n);
			if (!colon || !header_name_ok(line, (size_t)(colon - line)))
				return -EBADMSG;
			any = true;
			if ((size_t)(colon - line) == 10 && strncasecmp(line, "Message-ID", 10) == 0) {
				/* take one folded continuation into account */
				const char *vend = nl ? nl : line + n;

				vstart = (size_t)(colon - line) + 1;
				if (nl && nl + 1 < msg + limit && (nl[1] == ' ' || nl[1] == '\t')) {
					const char *nl2 = memchr(nl + 1, '\n', (size_t)(msg + limit - nl - 1));

					vend = nl2 ? nl2 : msg + limit;
				}
				return msgid_from_value(line + vstart,
							(size_t)(vend - line) - vstart, ret);
			}
		}
		if (!nl)
			break;
		pos += (size_t)(nl - line) + 1;
	}
	return any ? -ENOENT : -EBADMSG;
}

/* ---- dispatch ---- */

static void count(struct webhooks *w, const char *family, const char *help,
		  const char *type, const char *why)
{
	char labels[96];

	if (!w->metrics)
		return;
	snprintf(labels, sizeof(labels), "type=\"%s\",reason=\"%s\"", type, why);
	metrics_counter_add(w->metrics, family, help, labels, 1);
}

static int reject(struct webhooks *w, struct http_request *req, const char *type,
		  unsigned status, const char *why, const char *msg)
{
	count(w, "kfix_webhook_rejected_total", "Webhook deliveries refused, by reason.",
	      type, why);
	if (status == 401)
		count(w, "kfix_webhook_auth_failures_total",
		      "Webhook deliveries with a missing, wrong or stale signature.", type, why);
	return http_reply_error(req, status, "%s", msg);
}

static bool id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > WEBHOOK_ID_MAX - 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)id[i] <= 32 || (unsigned char)id[i] >= 127)
			return false;
	return true;
}

/* The deduplication key: the Message-ID for mail, else a digest of what
 * the signature covers (kfix's scheme signs the timestamp too).  Never
 * the provider's delivery id: no signature covers it, so a captured
 * delivery re-sent with a new id would act again. */
static int delivery_key(const struct hook *h, struct http_request *req,
			const char *body, size_t len, const char *message_id,
			char **ret)
{
	const char *id = http_request_header(req, delivery_header(h));
	const char *ts = h->kfix_scheme ? http_request_header(req, "X-Kfix-Timestamp") : NULL;
	char hex[AUTH_SHA256_HEX_LEN + 1];
	int r;

	if (message_id)
		return asprintf(ret, "mail:%s", message_id) < 0 ? -ENOMEM : 0;
	if (id && !id_ok(id))
		return -EBADMSG;
	/* keyed with a constant: a content digest, not an authenticator */
	r = auth_hmac_sha256_hex("kfix-delivery", ts, body, len, hex);
	if (r < 0)
		return r;
	return asprintf(ret, "%s:%s:body:%s", type_names[h->type], h->name, hex) < 0
		       ? -ENOMEM : 0;
}

/* Mail is only bounded and keyed here: parsing it (GMime) and checking
 * its DKIM signature (DNS) happen in a child process (daemon/inbox.c),
 * where neither a hostile mail nor a slow name server can stall the
 * loop. */
static int deliver_mail(struct webhooks *w, const struct hook *h,
			struct http_request *req, struct webhook_delivery *d)
{
	_cleanup_free_ char *msgid = NULL, *key = NULL, *err = NULL;
	int r = webhook_mail_message_id(d->body, d->len, &msgid);

	if (r == -EBADMSG)
		return reject(w, req, "mail", 400, "malformed", "not an RFC 5322 message");
	if (r < 0 && r != -ENOENT)
		return r;
	r = mail_check_bounds(d->body, d->len, 0, &err);
	if (r == -EFBIG || r == -E2BIG)
		return reject(w, req, "mail", 413, "too-large", err ? err : "message too large");
	if (r < 0)
		return r;
	r = delivery_key(h, req, d->body, d->len, msgid, &key);
	if (r == -EBADMSG)
		return reject(w, req, "mail", 400, "malformed", "bad delivery id");
	if (r < 0)
		return r;
	d->event = "mail";
	d->key = key;
	d->message_id = msgid;
	return w->sink.deliver(w->userdata, d, req);
}

static int deliver_syzbot(struct webhooks *w, const struct hook *h,
			  struct http_request *req, struct webhook_delivery *d)
{
	_cleanup_(syzbot_bug_freep) struct syzbot_bug *bug = NULL;
	_cleanup_free_ char *err = NULL, *key = NULL;
	const char *extid;
	int r = syzbot_parse_bug(d->body, d->len, h->base_url, &bug, &err);

	if (r == -EBADMSG)
		return reject(w, req, "syzbot", 400, "malformed", err ? err : "bad bug JSON");
	if (r < 0)
		return r;
	extid = bug->extid ? bug->extid : http_request_query(req, "extid");
	if (!extid || !id_ok(extid) || strspn(extid, "0123456789abcdef") != strlen(extid))
		return reject(w, req, "syzbot", 400, "malformed",
			      "the bug's extid is missing (\"extid\" member or ?extid=)");
	r = delivery_key(h, req, d->body, d->len, NULL, &key);
	if (r == -EBADMSG)
		return reject(w, req, "syzbot", 400, "malformed", "bad delivery id");
	if (r < 0)
		return r;
	d->event = "bug";
	d->key = key;
	d->extid = extid;
	d->bug = bug;
	return w->sink.deliver(w->userdata, d, req);
}

static int deliver_forge(struct webhooks *w, const struct hook *h,
			 struct http_request *req, struct webhook_delivery *d)
{
	_cleanup_(forge_event_freep) struct forge_event *ev = NULL;
	_cleanup_free_ char *err = NULL, *key = NULL;
	const char *type = http_request_header(req, forge_event_header(h->provider));
	int r = forge_event_parse(h->provider, type, d->body, d->len, &ev, &err);

	if (r == -EBADMSG)
		return reject(w, req, "forge", 400, "malformed", err ? err : "bad event");
	if (r < 0)
		return r;
	if (ev->kind == FORGE_PING)
		return http_reply_json(req, 200, json_pack("{s:b}", "pong", 1));
	r = delivery_key(h, req, d->body, d->len, NULL, &key);
	if (r == -EBADMSG)
		return reject(w, req, "forge", 400, "malformed", "bad delivery id");
	if (r < 0)
		return r;
	d->event = forge_kind_to_string(ev->kind);
	d->key = key;
	d->forge = ev;
	return w->sink.deliver(w->userdata, d, req);
}

static int on_hook(struct http_request *req, void *userdata)
{
	struct webhooks *w = userdata;
	const char *path = http_request_path(req) + strlen("/hooks/");
	size_t tlen = strcspn(path, "/");
	const char *name = path[tlen] == '/' ? path + tlen + 1 : NULL;
	struct webhook_delivery d = { 0 };
	enum verdict best = AUTH_MISSING;
	const struct hook *h = NULL;
	bool any = false;
	size_t t;

	for (t = 0; t < ARRAY_SIZE(type_names); t++)
		if (strlen(type_names[t]) == tlen && strncmp(path, type_names[t], tlen) == 0)
			break;
	if (t == ARRAY_SIZE(type_names))
		return http_reply_error(req, 404, "no such hook type");
	d.body = http_request_body(req, &d.len);
	for (size_t i = 0; i < w->n && !h; i++) {
		enum verdict v;

		if (w->hooks[i].type != (enum hook_type)t ||
		    (name && !streq(name, w->hooks[i].name)))
			continue;
		any = true;
		v = hook_verify(&w->hooks[i], req, d.body, d.len);
		if (v == AUTH_OK)
			h = &w->hooks[i];
		else if (v > best)
			best = v;
	}
	if (!any)
		return http_reply_error(req, 404, "no hook of this type is configured");
	if (!h)
		return reject(w, req, type_names[t], 401,
			      best == AUTH_MISSING ? "missing" : best == AUTH_STALE ? "stale" : "bad",
			      best == AUTH_MISSING ? "signature missing"
			      : best == AUTH_STALE ? "timestamp outside the replay window"
						   : "signature does not match");
	d.hook = h->name;
	d.type = type_names[t];
	d.provider = h->kfix_scheme ? "kfix" : forge_provider_to_string(h->provider);
	switch (h->type) {
	case HOOK_MAIL:
		return deliver_mail(w, h, req, &d);
	case HOOK_SYZBOT:
		return deliver_syzbot(w, h, req, &d);
	default:
		return deliver_forge(w, h, req, &d);
	}
}

/* Reads every [hook] section into hooks[]; on failure none is kept. */
static int hooks_load(const struct config *cfg, struct hook hooks[WEBHOOK_MAX_HOOKS],
		      size_t *ret_n, char **ret_error)
{
	_cleanup_strv_ char **names = NULL;
	size_t n = 0;
	int r = config_subsections(cfg, "hook", &names);

	if (r < 0 && r != -ENOENT)
		return r;
	for (size_t i = 0; names && names[i]; i++) {
		if (n >= WEBHOOK_MAX_HOOKS)
			r = -E2BIG;
		else
			r = hook_conf_from_config(cfg, names[i], &hooks[n], ret_error);
		if (r < 0) {
			while (n > 0)
				hook_clear(&hooks[--n]);
			if (ret_error && !*ret_error &&
			    asprintf(ret_error, "[hook \"%s\"]: %s", names[i], strerror(-r)) < 0)
				*ret_error = NULL;
			return r;
		}
		n++;
	}
	*ret_n = n;
	return 0;
}

int webhooks_new(struct http_server *srv, const struct config *cfg,
		 struct metrics *metrics, const struct webhook_sink *sink,
		 void *userdata, struct webhooks **ret, char **ret_error)
{
	_cleanup_(webhooks_freep) struct webhooks *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->metrics = metrics;
	w->sink = *sink;
	w->userdata = userdata;
	r = hooks_load(cfg, w->hooks, &w->n, ret_error);
	if (r < 0)
		return r;
	r = http_server_route(srv, "POST", "/hooks/*", HTTP_SCOPE_NONE, on_hook, w);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(w);
	return 0;
}

int webhooks_check(const struct config *cfg, char **ret_error)
{
	struct hook *hooks = calloc(WEBHOOK_MAX_HOOKS, sizeof(*hooks));
	size_t n = 0;
	int r;

	if (!hooks)
		return -ENOMEM;
	r = hooks_load(cfg, hooks, &n, ret_error);
	while (n > 0)
		hook_clear(&hooks[--n]);
	free(hooks);
	return r;
}

int webhooks_reload(struct webhooks *w, const struct config *cfg, char **ret_error)
{
	struct hook *hooks = calloc(WEBHOOK_MAX_HOOKS, sizeof(*hooks));
	size_t n = 0;
	int r;

	if (!hooks)
		return -ENOMEM;
	r = hooks_load(cfg, hooks, &n, ret_error);
	if (r >= 0) {
		/* a delivery in flight copied what it needs from its hook */
		for (size_t i = 0; i < w->n; i++)
			hook_clear(&w->hooks[i]);
		memcpy(w->hooks, hooks, n * sizeof(*hooks));
		w->n = n;
	}
	free(hooks);
	return r;
}
