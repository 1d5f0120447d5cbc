/* kfixctl over the REST API of a running kfixd (libcurl). */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/conf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"
#include "store.h"

#define CTL_API_MAX (64u * 1024 * 1024)

static size_t on_body(char *p, size_t size, size_t n, void *userdata)
{
	return buf_append(userdata, p, size * n) < 0 ? 0 : size * n;
}

/* The [http] keys kfixctl reads to reach the daemon. */
struct ctl_api_conf {
	char *url;			/* NULL: no address known */
	char *api_token, *admin_token;	/* NULL: unset or unreadable */
};

static void ctl_api_conf_clear(struct ctl_api_conf *c)
{
	if (c->api_token)
		explicit_bzero(c->api_token, strlen(c->api_token));
	if (c->admin_token)
		explicit_bzero(c->admin_token, strlen(c->admin_token));
	free(c->url);
	free(c->api_token);
	free(c->admin_token);
	*c = (struct ctl_api_conf){};
}

/* [http] url, else the first [http] listen address (https when the
 * daemon serves TLS).  A token that cannot be read is left NULL: the
 * request then goes without it, as with none configured. */
static int ctl_api_conf_from_config(const struct config *cfg, struct ctl_api_conf *ret)
{
	_cleanup_(ctl_api_conf_clear) struct ctl_api_conf c = {};
	_cleanup_strv_ char **listen = NULL;
	_cleanup_free_ char *cert = NULL;
	const char *url;
	int r;

	if (config_get_string(cfg, "http", NULL, "url", &url) >= 0) {
		if (!(c.url = strdup(url)))
			return -ENOMEM;
	} else if (config_get_list(cfg, "http", NULL, "listen", &listen) >= 0 && listen &&
		   listen[0]) {
		r = asprintf(&c.url, "%s://%s",
			     config_get_path(cfg, "http", NULL, "tls-cert", &cert) >= 0 ? "https"
											 : "http",
			     listen[0]);
		if (r < 0) {
			c.url = NULL;
			return -ENOMEM;
		}
	}
	if (config_get_secret(cfg, "http", NULL, "api-token", &c.api_token) < 0)
		c.api_token = NULL;
	if (config_get_secret(cfg, "http", NULL, "admin-token", &c.admin_token) < 0)
		c.admin_token = NULL;
	*ret = c;
	c = (struct ctl_api_conf){};
	return 0;
}

static int api_conf(struct ctl *c, struct ctl_api_conf *ret)
{
	struct config *cfg;

	if (ctl_config(c, &cfg) < 0)
		return -EINVAL;
	return ctl_api_conf_from_config(cfg, ret);
}

/* The daemon's URL: --url, else the configured one. */
static int api_url(struct ctl *c, char **ret)
{
	_cleanup_(ctl_api_conf_clear) struct ctl_api_conf conf = {};
	int r;

	if (c->url) {
		*ret = strdup(c->url);
		return *ret ? 0 : -ENOMEM;
	}
	r = api_conf(c, &conf);
	if (r < 0)
		return r;
	if (!conf.url)
		return -ENOTCONN;
	*ret = TAKE_PTR(conf.url);
	return 0;
}

static int api_token(struct ctl *c, bool admin, char **ret)
{
	_cleanup_(ctl_api_conf_clear) struct ctl_api_conf conf = {};
	const char *env = getenv(admin ? "KFIX_ADMIN_TOKEN" : "KFIX_API_TOKEN");
	int r;

	if (env && *env) {
		*ret = strdup(env);
		return *ret ? 0 : -ENOMEM;
	}
	if (!admin && (env = getenv("KFIX_ADMIN_TOKEN")) && *env) {
		*ret = strdup(env);
		return *ret ? 0 : -ENOMEM;
	}
	r = api_conf(c, &conf);
	if (r < 0)
		return r;
	/* the admin token reads too */
	if (!admin && conf.api_token)
		*ret = TAKE_PTR(conf.api_token);
	else if (conf.admin_token)
		*ret = TAKE_PTR(conf.admin_token);
	else
		return -ENOKEY;
	return 0;
}

/* One request; 0 with the JSON answer and its status whatever the status,
 * -ENOTCONN when kfixctl should use the store instead: no daemon address
 * known, no token at hand (both unless --url was given), or nothing
 * listening there (the request was not sent, so nothing was done). */
static int api_send(struct ctl *c, const char *method, const char *path, bool admin,
		    const json_t *body, json_t **ret, long *ret_status)
{
	_cleanup_free_ char *base = NULL, *url = NULL, *token = NULL, *auth = NULL, *data = NULL;
	_cleanup_buf_ struct buf answer = BUF_INIT(CTL_API_MAX);
	struct curl_slist *headers = NULL;
	json_error_t jerr;
	long code = 0;
	CURLcode res;
	CURL *curl;
	int r = api_url(c, &base);

	if (r < 0)
		return r;
	if (api_token(c, admin, &token) < 0) {
		if (!c->url)
			return -ENOTCONN;
	} else if (asprintf(&auth, "Authorization: Bearer %s", token) < 0) {
		return -ENOMEM;
	}
	if (token)
		explicit_bzero(token, strlen(token));
	if (asprintf(&url, "%s%s", base, path) < 0)
		return -ENOMEM;
	if (body && !(data = json_dumps(body, JSON_COMPACT)))
		return -ENOMEM;
	curl = curl_easy_init();
	if (!curl)
		return -ENOMEM;
	if (auth)
		headers = curl_slist_append(NULL, auth);
	if (data)
		headers = curl_slist_append(headers, "Content-Type: application/json");
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	if (streq(method, "POST"))
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, data ? data : "");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	res = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
	if (auth)
		explicit_bzero(auth, strlen(auth));
	if (res == CURLE_COULDNT_CONNECT)
		return -ENOTCONN;
	if (res != CURLE_OK) {
		ctl_err("%s: %s", url, curl_easy_strerror(res));
		return -EIO;
	}
	if (json_parse_bounded(answer.data ? answer.data : "", answer.len, CTL_API_MAX, ret,
			       &jerr) < 0) {
		ctl_err("%s: HTTP %ld with an answer that is not JSON", url, code);
		return -EBADMSG;
	}
	*ret_status = code;
	return 0;
}

static void api_print_error(const char *what, long code, const json_t *j)
{
	const char *msg = json_get_str(j, "error");
	_cleanup_free_ char *m = msg ? str_escape(msg, strlen(msg), 200) : NULL;

	ctl_err("%s: %s (HTTP %ld)", what, m ? m : "error", code);
}

int ctl_api_call(struct ctl *c, const char *method, const char *path, bool admin,
		 json_t **ret)
{
	long code = 0;
	int r = api_send(c, method, path, admin, NULL, ret, &code);

	if (r < 0)
		return r;
	if (code < 200 || code > 299) {
		api_print_error(path, code, *ret);
		json_decref(*ret);
		*ret = NULL;
		return code == 404 ? -ENOENT : -EPROTO;
	}
	return 0;
}

int ctl_api_action(struct ctl *c, const char *cmd, const char *path, const json_t *body,
		   json_t **ret_answer, int *ret_exit)
{
	_cleanup_json_ json_t *j = NULL;
	long code = 0;
	int r = api_send(c, "POST", path, true, body, &j, &code);

	if (r == -ENOTCONN && !c->url)
		return 0;
	if (r == -ENOTCONN)
		ctl_err("%s: no daemon answers at %s", cmd, c->url);
	if (r < 0) {
		*ret_exit = 1;
		return 1;
	}
	if (code < 200 || code > 299) {
		api_print_error(cmd, code, j);
		*ret_exit = code == 400 ? 2 : 1;
		return 1;
	}
	*ret_answer = TAKE_PTR(j);
	*ret_exit = 0;
	return 1;
}

int ctl_api_stats(struct ctl *c, struct store_stats *ret)
{
	_cleanup_json_ json_t *j = NULL;
	struct store_stats st = { 0 };
	json_t *bugs, *jobs, *outbox;
	int r = ctl_api_call(c, "GET", "/api/v1/status", false, &j);

	if (r < 0)
		return r;
	bugs = json_object_get(j, "bugs");
	jobs = json_object_get(j, "jobs");
	outbox = json_object_get(j, "outbox");
	for (size_t i = 0; store_bug_states[i] && i < ARRAY_SIZE(st.bugs_by_state); i++)
		st.bugs_by_state[i] = json_get_int(bugs, store_bug_states[i], 0);
	st.jobs_queued = json_get_int(jobs, "queued", 0);
	st.jobs_running = json_get_int(jobs, "running", 0);
	st.jobs_done = json_get_int(jobs, "done", 0);
	st.jobs_failed = json_get_int(jobs, "failed", 0);
	st.jobs_cancelled = json_get_int(jobs, "cancelled", 0);
	st.oldest_queued = json_get_int(jobs, "oldest_queued", 0);
	st.outbox_pending = json_get_int(outbox, "pending", 0);
	st.outbox_sent = json_get_int(outbox, "sent", 0);
	st.outbox_parked = json_get_int(outbox, "parked", 0);
	st.upstream_compared = json_get_int(json_object_get(j, "upstream"), "compared", 0);
	st.upstream_matched = json_get_int(json_object_get(j, "upstream"), "matched", 0);
	st.llm_wait_until = json_get_int(json_object_get(j, "llm"), "wait_until", 0);
	snprintf(st.scheduler, sizeof(st.scheduler), "%s",
		 json_get_str(j, "scheduler") ?: "running");
	*ret = st;
	return 0;
}
