/* Comments through a forge's REST API; see forge-api.h.  A blocking
 * libcurl call: it runs in the outbox's child process, never in the
 * daemon's loop. */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/strutil.h"
#include "forge-api.h"

static bool repo_valid(const char *r)
{
	const char *slash = r ? strchr(r, '/') : NULL;
	size_t n = r ? strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") : 0;

	return slash && slash != r && slash[1] && n == strlen(r) && n <= 200 && !strstr(r, "..");
}

int forge_api_comment_url(const char *api_url, const struct forge_thread *t, char **ret)
{
	size_t n = api_url ? strlen(api_url) : 0;
	int r;

	while (n > 0 && api_url[n - 1] == '/')
		n--;
	if (n == 0 || t->number <= 0 || (!startswith(api_url, "https://") && !startswith(api_url, "http://")))
		return -EINVAL;
	if (t->provider == FORGE_GITLAB) {
		if (t->project <= 0)
			return -EINVAL;
		r = asprintf(ret, "%.*s/projects/%lld/merge_requests/%lld/notes", (int)n, api_url,
			     (long long)t->project, (long long)t->number);
	} else {
		if (!repo_valid(t->repo))
			return -EINVAL;
		r = asprintf(ret, "%.*s/repos/%s/issues/%lld/comments", (int)n, api_url, t->repo,
			     (long long)t->number);
	}
	return r < 0 ? -ENOMEM : 0;
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
	(void)p;
	(void)ud;
	return size * n;
}

static struct curl_slist *auth_headers(enum forge_provider p, const char *token)
{
	struct curl_slist *h = NULL, *n;
	_cleanup_free_ char *auth = NULL;
	int r;

	if (p == FORGE_GITLAB)
		r = asprintf(&auth, "PRIVATE-TOKEN: %s", token);
	else if (p == FORGE_GITHUB)
		r = asprintf(&auth, "Authorization: Bearer %s", token);
	else
		r = asprintf(&auth, "Authorization: token %s", token);
	if (r < 0)
		return NULL;
	n = curl_slist_append(h, "Content-Type: application/json");
	if (n)
		h = n, n = curl_slist_append(h, p == FORGE_GITHUB ? "Accept: application/vnd.github+json"
								  : "Accept: application/json");
	if (n)
		h = n, n = curl_slist_append(h, auth);
	if (!n) {
		curl_slist_free_all(h);
		return NULL;
	}
	/* the token is in the list's copy only */
	explicit_bzero(auth, strlen(auth));
	return n;
}

int forge_api_comment(const char *api_url, const char *token, const struct forge_thread *t,
		      const char *text, char **ret_error)
{
	_cleanup_free_ char *url = NULL, *body = NULL;
	_cleanup_json_ json_t *j = NULL;
	struct curl_slist *h = NULL;
	char errbuf[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURL *c = NULL;
	CURLcode rc;
	int r;

	if (!token || !*token)
		return error_set(ret_error, -EINVAL, "no api-token for the forge");
	r = forge_api_comment_url(api_url, t, &url);
	if (r < 0)
		return error_set(ret_error, r, "cannot make the comment URL from api-url and the thread");
	if (strlen(text) > FORGE_API_BODY_MAX)
		return error_set(ret_error, -E2BIG, "comment longer than %u bytes", FORGE_API_BODY_MAX);
	j = json_pack("{s:s}", "body", text);
	body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	h = body ? auth_headers(t->provider, token) : NULL;
	c = h ? curl_easy_init() : NULL;
	if (!c) {
		curl_slist_free_all(h);
		return -ENOMEM;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kfix/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, FORGE_API_TIMEOUT_MS);
	/* the token must not follow a redirect to another host */
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	if (rc != CURLE_OK)
		return error_set(ret_error, -EAGAIN, "%s", *errbuf ? errbuf : curl_easy_strerror(rc));
	if (status >= 200 && status < 300)
		return 0;
	if (status == 429 || status >= 500)
		return error_set(ret_error, -EAGAIN, "the forge answered %ld", status);
	return error_set(ret_error, -EPERM, "the forge refused the comment: %ld", status);
}
