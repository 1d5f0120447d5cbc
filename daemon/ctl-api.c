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

/* The daemon's URL: --url, else the first [http] listen address. */
static int api_url(struct ctl *c, char **ret)
{
	_cleanup_strv_ char **listen = NULL;
	struct config *cfg;

	if (c->url) {
		*ret = strdup(c->url);
		return *ret ? 0 : -ENOMEM;
	}
	if (ctl_config(c, &cfg) < 0)
		return -EINVAL;
	if (config_get_list(cfg, "http", NULL, "listen", &listen) < 0 || !listen || !listen[0])
		return -ENOTCONN;
	return asprintf(ret, "http://%s", listen[0]) < 0 ? -ENOMEM : 0;
}

static int api_token(struct ctl *c, bool admin, char **ret)
{
	const char *env = getenv(admin ? "KFIX_ADMIN_TOKEN" : "KFIX_API_TOKEN");
	struct config *cfg;

	if (env && *env) {
		*ret = strdup(env);
		return *ret ? 0 : -ENOMEM;
	}
	if (ctl_config(c, &cfg) < 0)
		return -EINVAL;
	return config_get_secret(cfg, "http", NULL, admin ? "admin-token" : "api-token", ret);
}

int ctl_api_call(struct ctl *c, const char *method, const char *path, bool admin,
		 json_t **ret)
{
	_cleanup_free_ char *base = NULL, *url = NULL, *token = NULL, *auth = NULL;
	_cleanup_buf_ struct buf body = BUF_INIT(CTL_API_MAX);
	struct curl_slist *headers = NULL;
	json_error_t jerr;
	long code = 0;
	CURLcode res;
	CURL *curl;
	int r = api_url(c, &base);

	if (r < 0)
		return r;
	if (api_token(c, admin, &token) >= 0 && asprintf(&auth, "Authorization: Bearer %s", token) < 0)
		return -ENOMEM;
	if (asprintf(&url, "%s%s", base, path) < 0)
		return -ENOMEM;
	curl = curl_easy_init();
	if (!curl)
		return -ENOMEM;
	if (auth)
		headers = curl_slist_append(NULL, auth);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	if (streq(method, "POST"))
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
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
	if (json_parse_bounded(body.data ? body.data : "", body.len, CTL_API_MAX, ret, &jerr) < 0) {
		ctl_err("%s: HTTP %ld with an answer that is not JSON", url, code);
		return -EBADMSG;
	}
	if (code < 200 || code > 299) {
		const char *msg = json_get_str(*ret, "error");
		_cleanup_free_ char *m = msg ? str_escape(msg, strlen(msg), 200) : NULL;

		ctl_err("%s: HTTP %ld: %s", url, code, m ? m : "error");
		json_decref(*ret);
		*ret = NULL;
		return code == 404 ? -ENOENT : -EPROTO;
	}
	return 0;
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
	*ret = st;
	return 0;
}
