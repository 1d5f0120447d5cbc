/* URLs through curl's URL API (curl_url, 7.62+), which knows IPv6
 * literals, percent-encoding and user:password@ as libcurl itself will
 * read them when it connects. */
#include "config.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "strutil.h"
#include "url.h"

DEFINE_CLEANUP(CURLU, curl_url_cleanup)

/* One part into a fixed buffer; an absent part is "". */
static int part(CURLU *h, CURLUPart what, unsigned flags, char *out, size_t n)
{
	char *v = NULL;
	CURLUcode rc = curl_url_get(h, what, &v, flags);
	size_t len;

	*out = '\0';
	if (rc == CURLUE_NO_USER || rc == CURLUE_NO_PORT || rc == CURLUE_NO_QUERY ||
	    rc == CURLUE_NO_FRAGMENT || rc == CURLUE_NO_PASSWORD)
		return 0;
	if (rc == CURLUE_OUT_OF_MEMORY)
		return -ENOMEM;
	if (rc != CURLUE_OK)
		return -EINVAL;
	len = strlen(v);
	if (len >= n) {
		curl_free(v);
		return -ENAMETOOLONG;
	}
	memcpy(out, v, len + 1);
	curl_free(v);
	return 0;
}

/* Whether the URL has this part, whatever its length. */
static bool has_part(CURLU *h, CURLUPart what)
{
	char *v = NULL;
	bool yes = curl_url_get(h, what, &v, 0) == CURLUE_OK;

	curl_free(v);
	return yes;
}

int url_parse(const char *text, struct url *ret)
{
	_cleanup_(curl_url_cleanupp) CURLU *h = curl_url();
	struct url u = { 0 };
	char port[8];
	size_t n;
	int r;

	if (!h)
		return -ENOMEM;
	if (!text || curl_url_set(h, CURLUPART_URL, text, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK)
		return -EINVAL;
	if ((r = part(h, CURLUPART_SCHEME, 0, u.scheme, sizeof(u.scheme))) < 0 ||
	    (r = part(h, CURLUPART_USER, CURLU_URLDECODE, u.user, sizeof(u.user))) < 0 ||
	    (r = part(h, CURLUPART_HOST, 0, u.host, sizeof(u.host))) < 0 ||
	    (r = part(h, CURLUPART_PORT, 0, port, sizeof(port))) < 0 ||
	    (r = part(h, CURLUPART_PATH, 0, u.path, sizeof(u.path))) < 0)
		return r;
	u.password = has_part(h, CURLUPART_PASSWORD);
	u.query = has_part(h, CURLUPART_QUERY) || has_part(h, CURLUPART_FRAGMENT);
	if (*port && (parse_int(port, &u.port) < 0 || u.port < 1 || u.port > 65535))
		return -EINVAL;
	n = strlen(u.host);
	if (n >= 2 && u.host[0] == '[' && u.host[n - 1] == ']') {
		memmove(u.host, u.host + 1, n - 2);
		u.host[n - 2] = '\0';
	}
	if (!*u.host)
		return -EINVAL;
	ascii_lower(u.scheme);
	ascii_lower(u.host);
	*ret = u;
	return 0;
}

bool url_is_loopback(const struct url *u)
{
	struct in_addr a;

	if (inet_pton(AF_INET, u->host, &a) == 1)
		return (ntohl(a.s_addr) >> 24) == 127;
	return streq(u->host, "::1") || streq(u->host, "localhost");
}
