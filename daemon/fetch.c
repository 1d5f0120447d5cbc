/* A bug's texts that arrived as links (a syzbot report mail or a relayed
 * bug JSON carry URLs; the feed poller downloads its own) are fetched by
 * the first job that needs them, in its child process, and the bug row
 * then names the local files: the rest of the pipeline reads files only.
 *
 * The links come from mail, so only hosts the admin lists are contacted
 * ([kfix] text-hosts, syzbot's dashboard by default), over http(s) only,
 * with a size limit per text and a time limit per download. */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/strutil.h"
#include "common/url.h"
#include "fetch.h"
#include "store.h"

#define FETCH_TIMEOUT_SEC 120L

const struct fetch_text fetch_texts[FETCH_TEXTS] = {
	{ "report", "report.txt", 4u << 20 },
	{ "repro_c", "repro.c", 1u << 20 },
	{ "repro_syz", "repro.syz", 1u << 20 },
	{ "kernel_config", "kernel.config", 4u << 20 },
};

struct sink {
	struct buf b;
	bool too_big;
};

static size_t on_data(char *data, size_t size, size_t n, void *ud)
{
	struct sink *s = ud;
	int r = buf_append(&s->b, data, size * n);

	s->too_big |= r == -E2BIG;
	return r < 0 ? 0 : size * n;
}

bool fetch_is_link(const char *value)
{
	return value && (startswith(value, "https://") || startswith(value, "http://"));
}

/* The host of an http(s) URL, lower-case.  A link with credentials (from
 * mail) is refused. */
static int url_host(const char *text, char *host, size_t n)
{
	struct url u;
	int r = url_parse(text, &u);

	if (r < 0)
		return r == -ENOMEM ? r : -EINVAL;
	if (!streq(u.scheme, "http") && !streq(u.scheme, "https"))
		return -EINVAL;
	if (*u.user || u.password)
		return -EPERM;
	if (strlen(u.host) >= n)
		return -EINVAL;
	strcpy(host, u.host);
	return 0;
}

int fetch_conf_from_config(const struct config *cfg, struct fetch_conf *ret)
{
	char **hosts = NULL;
	int r = config_get_list(cfg, "kfix", NULL, "text-hosts", &hosts);

	if (r < 0)
		return r;
	*ret = (struct fetch_conf){ .text_hosts = hosts };
	return 0;
}

void fetch_conf_clear(struct fetch_conf *c)
{
	strv_free(c->text_hosts);
	c->text_hosts = NULL;
}

static int host_allowed(const struct fetch_conf *fc, const char *url)
{
	char host[256];
	int r = url_host(url, host, sizeof(host));

	if (r < 0)
		return r;
	return strv_contains(fc->text_hosts, host) ? 0 : -EPERM;
}

static int download(const char *url, size_t max, struct buf *ret, char **ret_error)
{
	struct sink s = { .b = BUF_INIT(max) };
	CURL *c = curl_easy_init();
	CURLcode rc;
	long code = 0;

	if (!c)
		return -ENOMEM;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, FETCH_TIMEOUT_SEC);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kfix/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	if (s.too_big) {
		buf_free(&s.b);
		return error_set(ret_error, -EFBIG, "larger than %zu bytes", max);
	}
	if (rc != CURLE_OK || code != 200) {
		buf_free(&s.b);
		return error_set(ret_error, -EAGAIN, "%s (HTTP %ld)",
				 rc != CURLE_OK ? curl_easy_strerror(rc) : "refused", code);
	}
	*ret = s.b;
	return 0;
}

static const char *field_value(const struct store_bug *b, const char *field)
{
	return streq(field, "report") ? b->report : streq(field, "repro_c") ? b->repro_c
	     : streq(field, "repro_syz") ? b->repro_syz : b->kernel_config;
}

static int fetch_one(const struct fetch_conf *fc, struct store *store, const struct store_bug *b,
		     const char *dir, const struct fetch_text *t, char **ret_error)
{
	const char *url = field_value(b, t->field);
	_cleanup_free_ char *path = NULL, *err = NULL;
	struct buf data = {};
	int r;

	r = host_allowed(fc, url);
	if (r < 0)
		return error_set(ret_error, -EPERM, "%s: the link's host is not in [kfix] text-hosts",
				 t->field);
	r = download(url, t->max, &data, &err);
	if (r < 0)
		return error_set(ret_error, r, "%s: %s", t->field, err ? err : strerror(-r));
	if (asprintf(&path, "%s/%s", dir, t->file) < 0)
		r = -ENOMEM;
	if (r >= 0)
		r = write_file_atomic(path, data.data ? data.data : "", data.len, 0640);
	buf_free(&data);
	if (r >= 0)
		r = store_bug_set_text(store, b->id, t->field, path);
	if (r < 0)
		return error_set(ret_error, r, "%s: cannot keep the text: %s", t->field, strerror(-r));
	return 0;
}

int fetch_bug_texts(const struct config *cfg, struct store *store, const struct store_bug *b,
		    int *ret_fetched, char **ret_error)
{
	_cleanup_(fetch_conf_clear) struct fetch_conf fc = {};
	_cleanup_free_ char *dir = NULL;
	int r, n = 0;

	r = fetch_conf_from_config(cfg, &fc);
	if (r < 0)
		return r;
	for (size_t i = 0; i < FETCH_TEXTS; i++) {
		if (!fetch_is_link(field_value(b, fetch_texts[i].field)))
			continue;
		if (!dir) {
			char sub[48];

			snprintf(sub, sizeof(sub), "artifacts/bug-%lld", (long long)b->id);
			r = config_state_path(cfg, sub, &dir);
			if (r < 0)
				return r;
			r = mkdir_p(dir, 0750);
			if (r < 0)
				return error_set(ret_error, r, "cannot create %s: %s", dir, strerror(-r));
		}
		r = fetch_one(&fc, store, b, dir, &fetch_texts[i], ret_error);
		if (r < 0)
			return r;
		n++;
	}
	if (ret_fetched)
		*ret_fetched = n;
	return 0;
}
