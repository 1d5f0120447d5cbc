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
#include <time.h>

#include "auth.h"
#include "common/buf.h"
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

/* The response body of a request, bounded: a page of comments. */
struct sink {
	struct buf b;
	bool too_big;
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct sink *s = ud;
	int r;

	/* a POST's answer is not read */
	if (!s)
		return size * n;
	r = buf_append(&s->b, p, size * n);

	s->too_big |= r == -E2BIG;
	return r < 0 ? 0 : size * n;
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

/* One request with the token; body NULL is a GET.  The answer's body goes
 * to sink when one is given. */
static int request(const char *url, const char *token, enum forge_provider p, const char *body,
		   struct sink *sink, long *ret_status, char **ret_error)
{
	struct curl_slist *h = auth_headers(p, token);
	char errbuf[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURL *c = h ? curl_easy_init() : NULL;
	CURLcode rc;

	if (!c) {
		curl_slist_free_all(h);
		return -ENOMEM;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kfix/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
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
	if (sink && sink->too_big)
		return error_set(ret_error, -EFBIG, "the forge's answer is larger than %zu bytes",
				 sink->b.max);
	if (rc != CURLE_OK)
		return error_set(ret_error, -EAGAIN, "%s", *errbuf ? errbuf : curl_easy_strerror(rc));
	if (status == 429 || status >= 500)
		return error_set(ret_error, -EAGAIN, "the forge answered %ld", status);
	*ret_status = status;
	return 0;
}

/* The thread's comments URL, for a request with token. */
static int thread_url(const char *api_url, const char *token, const struct forge_thread *t,
		      char **ret, char **ret_error)
{
	int r;

	if (!token || !*token)
		return error_set(ret_error, -EINVAL, "no api-token for the forge");
	r = forge_api_comment_url(api_url, t, ret);
	if (r < 0)
		return error_set(ret_error, r, "cannot make the comment URL from api-url and the thread");
	return 0;
}

int forge_api_comment(const char *api_url, const char *token, const struct forge_thread *t,
		      const char *text, char **ret_error)
{
	_cleanup_free_ char *url = NULL, *body = NULL;
	_cleanup_json_ json_t *j = NULL;
	long status = 0;
	int r;

	r = thread_url(api_url, token, t, &url, ret_error);
	if (r < 0)
		return r;
	if (strlen(text) > FORGE_API_BODY_MAX)
		return error_set(ret_error, -E2BIG, "comment longer than %u bytes", FORGE_API_BODY_MAX);
	j = json_pack("{s:s}", "body", text);
	body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (!body)
		return -ENOMEM;
	r = request(url, token, t->provider, body, NULL, &status, ret_error);
	if (r < 0)
		return r;
	if (status >= 200 && status < 300)
		return 0;
	return error_set(ret_error, -EPERM, "the forge refused the comment: %ld", status);
}

int forge_api_marker(const char *key, char ret[FORGE_API_MARKER_MAX])
{
	char hex[AUTH_SHA256_HEX_LEN + 1];
	int r = auth_hmac_sha256_hex("kfix-forge-answer", NULL, key, strlen(key), hex);

	if (r < 0)
		return r;
	snprintf(ret, FORGE_API_MARKER_MAX, "<!-- kfix-answer %.24s -->", hex);
	return 0;
}

int forge_api_comments_hold(const char *json, size_t len, const char *marker, size_t *ret_count)
{
	_cleanup_json_ json_t *j = NULL;
	json_error_t err;
	json_t *c;
	size_t i;
	int found = 0;

	if (json_parse_bounded(json, len, FORGE_API_PAGE_MAX, &j, &err) < 0 || !json_is_array(j))
		return -EBADMSG;
	json_array_foreach(j, i, c) {
		const char *b = json_get_str(c, "body");

		if (b && strstr(b, marker))
			found = 1;
	}
	*ret_count = json_array_size(j);
	return found;
}

/* Newest first where the forge can sort (gitlab); github and gitea take
 * "since", which bounds the list to the comments of the last days. */
static int list_url(const char *base, const struct forge_thread *t, int64_t since, int page,
		    char **ret)
{
	char iso[32];
	time_t s = (time_t)(since > FORGE_API_SKEW_SEC ? since - FORGE_API_SKEW_SEC : 0);
	struct tm tm;

	if (t->provider == FORGE_GITLAB)
		return asprintf(ret, "%s?sort=desc&order_by=updated_at&per_page=%d&page=%d", base,
				FORGE_API_PER_PAGE, page) < 0 ? -ENOMEM : 0;
	if (!gmtime_r(&s, &tm) || strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return -EINVAL;
	return asprintf(ret, "%s?since=%s&per_page=%d&limit=%d&page=%d", base, iso,
			FORGE_API_PER_PAGE, FORGE_API_PER_PAGE, page) < 0 ? -ENOMEM : 0;
}

int forge_api_find(const char *api_url, const char *token, const struct forge_thread *t,
		   const char *marker, int64_t since, char **ret_error)
{
	_cleanup_free_ char *base = NULL;
	int r;

	r = thread_url(api_url, token, t, &base, ret_error);
	if (r < 0)
		return r;
	for (int page = 1; page <= FORGE_API_PAGES_MAX; page++) {
		_cleanup_free_ char *url = NULL;
		struct sink s = { .b = BUF_INIT(FORGE_API_PAGE_MAX) };
		size_t count = 0;
		long status = 0;

		r = list_url(base, t, since, page, &url);
		if (r < 0)
			return r;
		r = request(url, token, t->provider, NULL, &s, &status, ret_error);
		if (r >= 0 && status != 200)
			r = error_set(ret_error, -EPERM, "the forge refused to list the comments: %ld",
				      status);
		if (r >= 0) {
			r = forge_api_comments_hold(s.b.data ?: "", s.b.len, marker, &count);
			if (r < 0)
				r = error_set(ret_error, -EAGAIN, "the forge's comment list is not a JSON list");
		}
		buf_free(&s.b);
		if (r != 0 || count < FORGE_API_PER_PAGE)
			return r;
	}
	return 0;
}
