/* SMTP with libcurl. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "common/url.h"
#include "mail-internal.h"
#include "smtp.h"

struct reader {
	const char *data;
	size_t len, off;
};

static size_t read_cb(char *dst, size_t size, size_t nmemb, void *userdata)
{
	struct reader *rd = userdata;
	size_t n = MIN(size * nmemb, rd->len - rd->off);

	memcpy(dst, rd->data + rd->off, n);
	rd->off += n;
	return n;
}

/* SMTP wants CRLF; a lone LF becomes CRLF, a CRLF stays. */
static char *to_crlf(const char *msg, size_t len, size_t *ret_len)
{
	struct buf b = BUF_INIT(len * 2 + 2);

	for (size_t i = 0; i < len; i++) {
		if (msg[i] == '\n' && (i == 0 || msg[i - 1] != '\r') && buf_append(&b, "\r", 1) < 0) {
			buf_free(&b);
			return NULL;
		}
		if (buf_append(&b, msg + i, 1) < 0) {
			buf_free(&b);
			return NULL;
		}
	}
	if (b.len == 0) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b, ret_len);
}

static int classify(CURLcode rc, long code)
{
	if (code >= 500)
		return -EREMOTEIO;
	if (code >= 400)
		return -EAGAIN;
	switch (rc) {
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_LOGIN_DENIED:
		return -EINVAL;
	case CURLE_USE_SSL_FAILED:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
		return -EPERM;
	default:
		/* no connection, reset, time-out, DNS: the network may heal */
		return -EAGAIN;
	}
}

DEFINE_CLEANUP(CURL, curl_easy_cleanup)
DEFINE_CLEANUP(struct curl_slist, curl_slist_free_all)

int smtp_send(const struct smtp_opts *o, const char *msg, size_t len,
	      const char *env_from, char *const *rcpts, char **ret_error)
{
	_cleanup_(curl_easy_cleanupp) CURL *c = NULL;
	_cleanup_(curl_slist_free_allp) struct curl_slist *to = NULL;
	_cleanup_free_ char *wire = NULL, *from = NULL;
	char errbuf[CURL_ERROR_SIZE] = "";
	struct reader rd = { 0 };
	struct url u;
	long code = 0;
	CURLcode rc;

	if (!o->url || url_parse(o->url, &u) < 0 || !(streq(u.scheme, "smtp") || streq(u.scheme, "smtps")))
		return error_set(ret_error, -EINVAL, "mail.smtp-url must be smtp:// or smtps://");
	if (!env_from || strpbrk(env_from, "<>\r\n ") || !rcpts || !rcpts[0])
		return error_set(ret_error, -EINVAL, "bad envelope sender or no recipient");
	wire = to_crlf(msg, len, &rd.len);
	if (!wire)
		return error_set(ret_error, -EINVAL, "empty or oversized message");
	rd.data = wire;
	for (size_t i = 0; rcpts[i]; i++) {
		_cleanup_free_ char *a = NULL;
		struct curl_slist *n;

		if (strpbrk(rcpts[i], "<>\r\n "))
			return error_set(ret_error, -EINVAL, "bad recipient address");
		if (asprintf(&a, "<%s>", rcpts[i]) < 0 || !(n = curl_slist_append(to, a)))
			return -ENOMEM;
		to = n;
	}
	if (asprintf(&from, "<%s>", env_from) < 0)
		return -ENOMEM;
	c = curl_easy_init();
	if (!c)
		return -ENOMEM;
	curl_easy_setopt(c, CURLOPT_URL, o->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)(o->timeout_sec > 0 ? o->timeout_sec : 120));
	curl_easy_setopt(c, CURLOPT_USE_SSL,
			 url_is_loopback(&u) ? (long)CURLUSESSL_TRY : (long)CURLUSESSL_ALL);
	if (o->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	if (o->user) {
		curl_easy_setopt(c, CURLOPT_USERNAME, o->user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, o->password ? o->password : "");
	}
	curl_easy_setopt(c, CURLOPT_MAIL_FROM, from);
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, to);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
	curl_easy_setopt(c, CURLOPT_READDATA, &rd);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)rd.len);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		return 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	return error_set(ret_error, classify(rc, code), "SMTP %s: %s%s%.0ld", o->url,
		    errbuf[0] ? errbuf : curl_easy_strerror(rc), code ? ", server said " : "",
		    code);
}

int smtp_envelope(const char *msg, size_t len, char **ret_from, char ***ret_rcpts,
		  char **ret_error)
{
	_cleanup_(mail_freep) struct mail *m = NULL;
	_cleanup_strv_ char **v = NULL;
	_cleanup_free_ char *from = NULL;
	char *const *r;
	int k;

	k = mail_parse(msg, len, 0, &m, ret_error);
	if (k < 0)
		return k;
	if (!mail_from(m))
		return error_set(ret_error, -EINVAL, "the message has no From address");
	r = mail_recipients(m);
	if (!r[0])
		return error_set(ret_error, -EINVAL, "the message has no To or Cc address");
	for (size_t i = 0; r[i]; i++)
		if (strv_push(&v, r[i]) < 0)
			return -ENOMEM;
	from = strdup(mail_from(m));
	if (!from)
		return -ENOMEM;
	*ret_from = TAKE_PTR(from);
	*ret_rcpts = TAKE_PTR(v);
	return 0;
}
