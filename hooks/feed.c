#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/strutil.h"
#include "curl-event-internal.h"
#include "feed.h"
#include "metrics.h"

#define FEED_MAX 16
#define FEED_LIST_MAX (16u * 1024 * 1024)
#define FEED_BUG_MAX (4u * 1024 * 1024)
#define FEED_HEADER_MAX 256
#define FEED_BACKOFF_MAX_USEC (3600ULL * 1000000)
#define FEED_TODO_MAX 20000
#define FEED_LISTED_MAX 100000

enum fetch_kind { FETCH_LIST, FETCH_BUG, FETCH_TEXT };

/* The texts of a bug, in the order they are fetched. */
enum text_kind { TEXT_REPORT, TEXT_REPRO_C, TEXT_REPRO_SYZ, TEXT_CONFIG, N_TEXTS };
static const char *const text_files[N_TEXTS] = {
	"report.txt", "repro.c", "repro.syz", "kernel.config",
};

/* A bug that passed the filters, waiting for its texts: it goes to the
 * daemon only once every text it links to is saved. */
struct pending {
	size_t todo;		/* index in feed->todo */
	struct syzbot_bug *bug;
	const struct syzbot_crash *crash; /* in bug */
	char *dir;
	const char *url[N_TEXTS];	  /* in crash; NULL: no such text */
	char *path[N_TEXTS];		  /* set once saved */
	size_t next;
};

struct fetch {
	struct feed *feed;
	enum fetch_kind kind;
	enum text_kind text; /* FETCH_TEXT */
	CURL *curl;
	struct curl_slist *headers;
	struct buf body;
	char etag[FEED_HEADER_MAX], last_modified[FEED_HEADER_MAX];
	uint64_t retry_after_usec;
	bool too_large;
};

struct todo {
	char *link, *extid, *updated;
};

struct feed {
	struct feeds *fs;
	char *name;
	char *artifacts; /* <state-dir>/artifacts/<name> */
	struct feed_conf conf;
	sd_event_source *timer;

	/* the current round */
	bool running, incomplete;
	char **list_urls;
	char **list_etag, **list_lastmod; /* validators to save at the end */
	size_t n_lists, list_idx;
	char **listed; /* extids on the open lists, while all came whole */
	size_t n_listed;
	bool lists_whole;
	struct todo *todo;
	size_t n_todo, todo_idx;
	struct pending *pending;
	unsigned backoff_level;
	uint64_t last_request; /* CLOCK_MONOTONIC usec */
	struct fetch *inflight;
};

struct feeds {
	sd_event *event;
	struct curl_event curl;
	struct metrics *metrics;
	struct feed_ops ops;
	void *userdata;
	struct feed *feed[FEED_MAX];
	size_t n;
};

static void feed_next(struct feed *f);

static uint64_t now_mono(struct feeds *fs)
{
	uint64_t t = 0;

	sd_event_now(fs->event, CLOCK_MONOTONIC, &t);
	return t;
}

static void count(struct feed *f, const char *family, const char *help,
		  const char *what)
{
	char labels[160];

	if (!f->fs->metrics)
		return;
	snprintf(labels, sizeof(labels), "feed=\"%s\",result=\"%s\"", f->name, what);
	metrics_counter_add(f->fs->metrics, family, help, labels, 1);
}

static void count_poll(struct feed *f, const char *result)
{
	count(f, "kfix_feed_polls_total", "Feed list polls by result.", result);
}

static void count_bug(struct feed *f, const char *result)
{
	count(f, "kfix_feed_bugs_total", "Bugs seen by the feed, by what was done.", result);
}

static void count_text(struct feed *f, const char *result)
{
	count(f, "kfix_feed_texts_total",
	      "Texts (reports, reproducers, configs) fetched by the feed, by result.", result);
}

/* ---- persisted positions ---- */

static int state_key(struct feed *f, const char *what, const char *arg, char **ret)
{
	return asprintf(ret, "feed/%s/%s%s%s", f->name, what, arg ? "/" : "",
			arg ? arg : "") < 0 ? -ENOMEM : 0;
}

static char *state_get(struct feed *f, const char *what, const char *arg)
{
	_cleanup_free_ char *key = NULL;
	char *v = NULL;

	if (state_key(f, what, arg, &key) < 0 ||
	    f->fs->ops.state_get(f->fs->userdata, key, &v) < 0)
		return NULL;
	return v;
}

static int state_set(struct feed *f, const char *what, const char *arg,
		     const char *value)
{
	_cleanup_free_ char *key = NULL;
	int r = state_key(f, what, arg, &key);

	return r < 0 ? r : f->fs->ops.state_set(f->fs->userdata, key, value);
}

static void today(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%d", &tm);
}

static int64_t created_today(struct feed *f)
{
	_cleanup_free_ char *v = state_get(f, "day", NULL);
	char day[16], vday[16];
	long long n;

	today(day, sizeof(day));
	if (!v || sscanf(v, "%15s %lld", vday, &n) != 2 || !streq(vday, day))
		return 0;
	return n;
}

static void note_created(struct feed *f)
{
	char day[16], v[48];

	today(day, sizeof(day));
	snprintf(v, sizeof(v), "%s %lld", day, (long long)created_today(f) + 1);
	if (state_set(f, "day", NULL, v) < 0)
		log_warning("feed %s: cannot record the day's count", f->name);
}

/* ---- the round ---- */

static void pending_free(struct pending *p)
{
	if (!p)
		return;
	syzbot_bug_free(p->bug);
	free(p->dir);
	for (size_t i = 0; i < N_TEXTS; i++)
		free(p->path[i]);
	free(p);
}
DEFINE_CLEANUP(struct pending, pending_free)

static void round_clear(struct feed *f)
{
	pending_free(f->pending);
	f->pending = NULL;
	for (size_t i = 0; i < f->n_lists; i++) {
		free(f->list_urls[i]);
		free(f->list_etag[i]);
		free(f->list_lastmod[i]);
	}
	free(f->list_urls);
	free(f->list_etag);
	free(f->list_lastmod);
	f->list_urls = f->list_etag = f->list_lastmod = NULL;
	f->n_lists = f->list_idx = 0;
	strv_free(f->listed);
	f->listed = NULL;
	f->n_listed = 0;
	f->lists_whole = false;
	for (size_t i = 0; i < f->n_todo; i++) {
		free(f->todo[i].link);
		free(f->todo[i].extid);
		free(f->todo[i].updated);
	}
	free(f->todo);
	f->todo = NULL;
	f->n_todo = f->todo_idx = 0;
	f->running = false;
	f->incomplete = false;
}

static void schedule(struct feed *f, uint64_t delay_usec)
{
	uint64_t t = now_mono(f->fs) + delay_usec;

	if (sd_event_source_set_time(f->timer, t) < 0 ||
	    sd_event_source_set_enabled(f->timer, SD_EVENT_ONESHOT) < 0)
		log_error("feed %s: cannot arm its timer", f->name);
}

static void round_end(struct feed *f, uint64_t next_usec)
{
	if (!f->incomplete)
		for (size_t i = 0; i < f->n_lists; i++) {
			if (f->list_etag[i])
				state_set(f, "etag", f->list_urls[i], f->list_etag[i]);
			if (f->list_lastmod[i])
				state_set(f, "last-modified", f->list_urls[i], f->list_lastmod[i]);
		}
	round_clear(f);
	schedule(f, next_usec);
}

static int round_start(struct feed *f)
{
	size_t n = f->conf.subsystems ? strv_len(f->conf.subsystems) : 1;

	f->list_urls = calloc(n, sizeof(char *));
	f->list_etag = calloc(n, sizeof(char *));
	f->list_lastmod = calloc(n, sizeof(char *));
	if (!f->list_urls || !f->list_etag || !f->list_lastmod)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int r = f->conf.subsystems
				? asprintf(&f->list_urls[i], "%s/%s/s/%s?json=1", f->conf.base,
					   f->conf.ns, f->conf.subsystems[i])
				: asprintf(&f->list_urls[i], "%s/%s?json=1", f->conf.base, f->conf.ns);

		if (r < 0)
			return -ENOMEM;
		f->n_lists++;
	}
	f->lists_whole = true;
	f->running = true;
	return 0;
}

/* ---- HTTP ---- */

static size_t on_body(char *p, size_t size, size_t n, void *userdata)
{
	struct fetch *x = userdata;

	/* a short count makes libcurl fail the transfer */
	if (x->body.len + size * n > x->body.max) {
		x->too_large = true;
		return 0;
	}
	return buf_append(&x->body, p, size * n) < 0 ? 0 : size * n;
}

/* A validator of the last response (after redirects), from the headers
 * curl kept; one too long to store is not trusted. */
static void header_copy(CURL *curl, const char *name, char out[static FEED_HEADER_MAX])
{
	struct curl_header *h;
	size_t n;

	if (curl_easy_header(curl, name, 0, CURLH_HEADER, -1, &h) != CURLHE_OK)
		return;
	n = strlen(h->value);
	if (n < FEED_HEADER_MAX)
		memcpy(out, h->value, n + 1);
}

/* curl also reads a Retry-After given as an HTTP date. */
static void fetch_read_headers(struct fetch *x)
{
	curl_off_t after = 0;

	header_copy(x->curl, "ETag", x->etag);
	header_copy(x->curl, "Last-Modified", x->last_modified);
	if (curl_easy_getinfo(x->curl, CURLINFO_RETRY_AFTER, &after) == CURLE_OK && after > 0)
		x->retry_after_usec = MIN((uint64_t)after * 1000000, FEED_BACKOFF_MAX_USEC);
}

static void fetch_free(struct fetch *x)
{
	if (!x)
		return;
	if (x->curl) {
		curl_multi_remove_handle(x->feed->fs->curl.multi, x->curl);
		curl_easy_cleanup(x->curl);
	}
	curl_slist_free_all(x->headers);
	buf_free(&x->body);
	free(x);
}
DEFINE_CLEANUP(struct fetch, fetch_free)

static int add_header(struct fetch *x, const char *name, const char *v)
{
	_cleanup_free_ char *h = NULL;
	struct curl_slist *n;

	if (asprintf(&h, "%s: %s", name, v) < 0)
		return -ENOMEM;
	n = curl_slist_append(x->headers, h);
	if (!n)
		return -ENOMEM;
	x->headers = n;
	return 0;
}

/* The token goes only to the dashboard itself, not to hosts that a bug's
 * absolute links may name. */
static bool on_dashboard(struct feed *f, const char *url)
{
	const char *rest = startswith(url, f->conf.base);

	return rest && (*rest == '/' || *rest == '?' || *rest == '\0');
}

static uint64_t body_max(struct feed *f, enum fetch_kind kind, enum text_kind text)
{
	if (kind == FETCH_LIST)
		return FEED_LIST_MAX;
	if (kind == FETCH_BUG)
		return FEED_BUG_MAX;
	return text == TEXT_REPRO_C || text == TEXT_REPRO_SYZ ? f->conf.max_repro : f->conf.max_text;
}

static int fetch_start(struct feed *f, enum fetch_kind kind, enum text_kind text,
		       const char *url)
{
	_cleanup_(fetch_freep) struct fetch *x = calloc(1, sizeof(*x));
	uint64_t max = body_max(f, kind, text);
	int r = 0;

	if (!x)
		return -ENOMEM;
	x->feed = f;
	x->kind = kind;
	x->text = text;
	x->body = BUF_INIT(max);
	x->curl = curl_easy_init();
	if (!x->curl)
		return -ENOMEM;
	if (f->conf.token && on_dashboard(f, url)) {
		_cleanup_free_ char *v = NULL;

		r = asprintf(&v, "Bearer %s", f->conf.token) < 0 ? -ENOMEM : add_header(x, "Authorization", v);
		if (v)
			explicit_bzero(v, strlen(v));
	}
	if (r >= 0 && kind == FETCH_LIST) {
		_cleanup_free_ char *etag = state_get(f, "etag", url);
		_cleanup_free_ char *lm = state_get(f, "last-modified", url);

		if (etag)
			r = add_header(x, "If-None-Match", etag);
		if (r >= 0 && lm)
			r = add_header(x, "If-Modified-Since", lm);
	}
	if (r < 0)
		return r;
	curl_easy_setopt(x->curl, CURLOPT_URL, url);
	curl_easy_setopt(x->curl, CURLOPT_HTTPHEADER, x->headers);
	curl_easy_setopt(x->curl, CURLOPT_PRIVATE, x);
	curl_easy_setopt(x->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x->curl, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(x->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x->curl, CURLOPT_TIMEOUT_MS, (long)(f->conf.timeout / 1000));
	curl_easy_setopt(x->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)MIN(f->conf.timeout / 1000, 30000));
	curl_easy_setopt(x->curl, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(x->curl, CURLOPT_USERAGENT, "kfix/" PACKAGE_VERSION);
	curl_easy_setopt(x->curl, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(x->curl, CURLOPT_MAXREDIRS, 3L);
	/* refused before the body comes when the length is announced; the
	 * buffer's limit catches the others */
	curl_easy_setopt(x->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(x->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(x->curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(x->curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(x->curl, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	if (curl_multi_add_handle(f->fs->curl.multi, x->curl) != CURLM_OK)
		return -EIO;
	f->last_request = now_mono(f->fs);
	f->inflight = TAKE_PTR(x);
	return 0;
}

/* A 429 or a refusal: stop the round and wait. */
static void back_off(struct feed *f, uint64_t retry_after)
{
	uint64_t d = f->conf.backoff << MIN(f->backoff_level, 10u);

	if (retry_after > d)
		d = retry_after;
	d = MIN(d, FEED_BACKOFF_MAX_USEC);
	f->backoff_level++;
	f->incomplete = true;
	log_warning("feed %s: rate limited, waiting %llus", f->name,
		    (unsigned long long)(d / 1000000));
	round_end(f, d);
}

static int todo_add(struct feed *f, const struct syzbot_list_entry *e)
{
	struct todo *n;

	if (f->n_todo >= FEED_TODO_MAX)
		return -E2BIG;
	n = realloc(f->todo, (f->n_todo + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	f->todo = n;
	n = &f->todo[f->n_todo];
	n->link = strdup(e->link);
	n->extid = strdup(e->extid);
	n->updated = strdup(e->last_updated ? e->last_updated : "");
	if (!n->link || !n->extid || !n->updated) {
		free(n->link);
		free(n->extid);
		free(n->updated);
		return -ENOMEM;
	}
	f->n_todo++;
	return 0;
}

static int listed_add(struct feed *f, const char *extid)
{
	char **n;

	if (f->n_listed >= FEED_LISTED_MAX)
		return -E2BIG;
	n = realloc(f->listed, (f->n_listed + 2) * sizeof(char *));
	if (!n)
		return -ENOMEM;
	f->listed = n;
	n[f->n_listed] = strdup(extid);
	if (!n[f->n_listed])
		return -ENOMEM;
	n[++f->n_listed] = NULL;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* After the last list of the round: tell who is still open. */
static void lists_done(struct feed *f)
{
	if (!f->lists_whole || !f->fs->ops.listed)
		return;
	if (f->n_listed > 1)
		qsort(f->listed, f->n_listed, sizeof(char *), cmp_str);
	f->fs->ops.listed(f->fs->userdata, f->name, f->listed, f->n_listed);
}

static void list_done(struct feed *f, struct fetch *x)
{
	_cleanup_(syzbot_list_freep) struct syzbot_list *l = NULL;
	_cleanup_free_ char *err = NULL;
	size_t idx = f->list_idx++;
	int r = syzbot_parse_list(x->body.data ? x->body.data : "", x->body.len,
				  f->conf.base, &l, &err);

	if (r < 0) {
		_cleanup_free_ char *e = str_escape(err ? err : strerror(-r), strlen(err ? err : strerror(-r)), 200);

		log_warning("feed %s: bad bug list: %s", f->name, e ? e : "?");
		count_poll(f, "bad-json");
		f->incomplete = true;
		round_end(f, f->conf.interval);
		return;
	}
	count_poll(f, "ok");
	for (size_t i = 0; i < l->n; i++) {
		const struct syzbot_list_entry *e = &l->bugs[i];
		_cleanup_free_ char *seen = NULL;

		if (f->lists_whole && listed_add(f, e->extid) < 0)
			f->lists_whole = false;

		if (e->n_fix_commits > 0) {
			/* somebody fixed it already */
			if (f->fs->ops.fixed)
				f->fs->ops.fixed(f->fs->userdata, f->name, e->extid, e->fix_commit);
			continue;
		}
		seen = state_get(f, "seen", e->extid);
		if (seen && streq(seen, e->last_updated ? e->last_updated : ""))
			continue;
		if (todo_add(f, e) < 0) {
			f->incomplete = true;
			f->lists_whole = false;
			break;
		}
	}
	if (*x->etag)
		f->list_etag[idx] = strdup(x->etag);
	if (*x->last_modified)
		f->list_lastmod[idx] = strdup(x->last_modified);
}

static bool matches_any(char **patterns, const char *s, bool prefix)
{
	if (!patterns)
		return true;
	for (size_t i = 0; patterns[i]; i++)
		if (s && (prefix ? startswith(s, patterns[i]) != NULL
				 : strstr(s, patterns[i]) != NULL))
			return true;
	return false;
}

static bool bug_wanted(struct feed *f, const struct syzbot_bug *b,
		       const struct syzbot_crash *c)
{
	return b->n_fix_commits == 0 && c && matches_any(f->conf.types, b->title, true) &&
	       matches_any(f->conf.trees, c->kernel_source_git, false);
}

static void bug_seen(struct feed *f, const struct todo *t)
{
	if (state_set(f, "seen", t->extid, t->updated) < 0)
		f->incomplete = true;
}

/* The bug's texts are saved: hand it to the daemon with local paths. */
static void bug_hand_over(struct feed *f)
{
	_cleanup_(pending_freep) struct pending *p = TAKE_PTR(f->pending);
	const struct todo *t = &f->todo[p->todo];
	const struct syzbot_crash *c = p->crash;
	struct feed_bug fb = {
		.feed = f->name,
		.extid = t->extid,
		.title = p->bug->title,
		.link = t->link,
		.tree = f->conf.tree ? f->conf.tree : c->kernel_source_git,
		.base_commit = c->kernel_source_commit,
		.report = p->path[TEXT_REPORT],
		.repro_c = p->path[TEXT_REPRO_C],
		.repro_syz = p->path[TEXT_REPRO_SYZ],
		.kernel_config = p->path[TEXT_CONFIG],
		.report_url = p->url[TEXT_REPORT],
		.repro_c_url = p->url[TEXT_REPRO_C],
		.repro_syz_url = p->url[TEXT_REPRO_SYZ],
		.kernel_config_url = p->url[TEXT_CONFIG],
		.bug = p->bug,
	};
	int r = f->fs->ops.bug(f->fs->userdata, &fb);

	if (r < 0) {
		count_bug(f, "error");
		f->incomplete = true;
		return;
	}
	count_bug(f, r > 0 ? "created" : "known");
	if (r > 0)
		note_created(f);
	bug_seen(f, t);
}

static int pending_new(struct feed *f, size_t todo, struct syzbot_bug **bug,
		       const struct syzbot_crash *c)
{
	_cleanup_(pending_freep) struct pending *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (asprintf(&p->dir, "%s/%s", f->artifacts, f->todo[todo].extid) < 0) {
		p->dir = NULL;
		return -ENOMEM;
	}
	p->todo = todo;
	p->crash = c;
	p->url[TEXT_REPORT] = c->report_link;
	p->url[TEXT_REPRO_C] = c->c_reproducer;
	p->url[TEXT_REPRO_SYZ] = c->syz_reproducer;
	p->url[TEXT_CONFIG] = c->kernel_config;
	p->bug = TAKE_PTR(*bug);
	f->pending = TAKE_PTR(p);
	return 0;
}

static void bug_done(struct feed *f, struct fetch *x)
{
	size_t idx = f->todo_idx++;
	const struct todo *t = &f->todo[idx];
	_cleanup_(syzbot_bug_freep) struct syzbot_bug *b = NULL;
	_cleanup_free_ char *err = NULL;
	const struct syzbot_crash *c;
	int r = syzbot_parse_bug(x->body.data ? x->body.data : "", x->body.len,
				 f->conf.base, &b, &err);

	if (r >= 0) {
		c = syzbot_bug_pick_crash(b, f->conf.c_only);
		if (!bug_wanted(f, b, c)) {
			count_bug(f, "filtered");
			bug_seen(f, t);
			return;
		}
		r = pending_new(f, idx, &b, c);
	}
	if (r < 0) {
		const char *m = err ? err : strerror(-r);
		_cleanup_free_ char *e = str_escape(m, strlen(m), 200);

		log_warning("feed %s: bug %s: %s", f->name, t->extid, e ? e : "?");
		count_bug(f, "error");
		f->incomplete = true;
	}
}

/* The state key that remembers which URL a saved text came from, so that
 * a bug fetched again (changed, or after a restart half-way through its
 * texts) does not download the same text twice. */
static int text_key(struct feed *f, const struct pending *p, enum text_kind k,
		    char **ret)
{
	return asprintf(ret, "%s/%s", f->todo[p->todo].extid, text_files[k]) < 0 ? -ENOMEM : 0;
}

/* A text saved by an earlier attempt from the same URL is taken as is. */
static int text_reuse(struct feed *f, struct pending *p, enum text_kind k)
{
	_cleanup_free_ char *key = NULL, *url = NULL, *path = NULL;

	if (text_key(f, p, k, &key) < 0)
		return -ENOMEM;
	url = state_get(f, "text", key);
	if (!url || !streq(url, p->url[k]))
		return 0;
	if (asprintf(&path, "%s/%s", p->dir, text_files[k]) < 0)
		return -ENOMEM;
	if (access(path, F_OK) < 0)
		return 0;
	count_text(f, "reused");
	p->path[k] = TAKE_PTR(path);
	return 1;
}

static int text_save(struct feed *f, struct pending *p, enum text_kind k,
		     const struct buf *body)
{
	_cleanup_free_ char *path = NULL, *key = NULL;
	int r = mkdir_p(p->dir, 0750);

	if (r < 0)
		return r;
	if (asprintf(&path, "%s/%s", p->dir, text_files[k]) < 0)
		return -ENOMEM;
	r = write_file_atomic(path, body->data ? body->data : "", body->len, 0640);
	if (r >= 0)
		r = text_key(f, p, k, &key);
	if (r >= 0)
		r = state_set(f, "text", key, p->url[k]);
	if (r < 0)
		return r;
	p->path[k] = TAKE_PTR(path);
	return 0;
}

static void text_done(struct feed *f, struct fetch *x)
{
	struct pending *p = f->pending;
	int r = text_save(f, p, x->text, &x->body);

	if (r < 0) {
		log_error("feed %s: bug %s: cannot save %s: %s", f->name,
			  f->todo[p->todo].extid, text_files[x->text], strerror(-r));
		count_text(f, "error");
		f->incomplete = true;
		pending_free(TAKE_PTR(f->pending));
		return;
	}
	count_text(f, "ok");
	p->next++;
}

/* A text that cannot be had leaves the bug for the next round. */
static void text_failed(struct feed *f, const struct fetch *x, CURLcode res, long code)
{
	const struct pending *p = f->pending;
	bool too_large = res == CURLE_FILESIZE_EXCEEDED || x->too_large;

	log_warning("feed %s: bug %s: %s not fetched: %s (HTTP %ld); trying again next round",
		    f->name, f->todo[p->todo].extid, text_files[x->text],
		    too_large ? "larger than the limit"
		    : res != CURLE_OK ? curl_easy_strerror(res) : "bad status", code);
	count_text(f, too_large ? "too-large" : "error");
	f->incomplete = true;
	pending_free(TAKE_PTR(f->pending));
}

/* Skips the pending bug's texts that are absent or saved already and
 * hands the bug over when none is left; 1 when p->next must be fetched. */
static int pending_advance(struct feed *f)
{
	struct pending *p = f->pending;
	int r;

	for (; p->next < N_TEXTS; p->next++) {
		enum text_kind k = (enum text_kind)p->next;

		if (!p->url[k])
			continue; /* recorded as missing: NULL in the bug */
		r = text_reuse(f, p, k);
		if (r <= 0)
			return r < 0 ? r : 1;
	}
	bug_hand_over(f);
	return 0;
}

static void fetch_done(struct feed *f, CURLcode res)
{
	_cleanup_(fetch_freep) struct fetch *x = TAKE_PTR(f->inflight);
	long code = 0;
	char labels[64];

	/* the gap is counted from the end of a request: stricter than from
	 * its start when the dashboard answers slowly */
	f->last_request = now_mono(f->fs);
	curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &code);
	fetch_read_headers(x);
	snprintf(labels, sizeof(labels), "%ld", res == CURLE_OK ? code : 0L);
	count(f, "kfix_feed_requests_total", "Requests to feeds by HTTP status (0: failed).", labels);
	if (res == CURLE_OK && code == 429) {
		back_off(f, x->retry_after_usec);
		return;
	}
	if (res != CURLE_OK || (code != 200 && code != 304)) {
		if (x->kind != FETCH_TEXT)
			log_warning("feed %s: request failed: %s (HTTP %ld)", f->name,
				    res != CURLE_OK ? curl_easy_strerror(res) : "bad status", code);
		f->incomplete = true;
		if (x->kind == FETCH_LIST) {
			count_poll(f, "error");
			round_end(f, f->conf.interval);
			return;
		}
		if (x->kind == FETCH_TEXT)
			text_failed(f, x, res, code);
		else
			f->todo_idx++;
		feed_next(f);
		return;
	}
	f->backoff_level = 0;
	if (x->kind == FETCH_TEXT && code != 200) {
		text_failed(f, x, res, code);
	} else if (x->kind == FETCH_TEXT) {
		text_done(f, x);
	} else if (x->kind == FETCH_LIST && code == 304) {
		count_poll(f, "not-modified");
		f->lists_whole = false;
		f->list_idx++;
	} else if (x->kind == FETCH_LIST) {
		list_done(f, x);
		if (!f->running)
			return; /* round_end() was called */
		if (f->list_idx == f->n_lists)
			lists_done(f);
	} else {
		bug_done(f, x);
	}
	feed_next(f);
}

static int start_bug(struct feed *f)
{
	const struct todo *t = &f->todo[f->todo_idx];
	_cleanup_free_ char *url = NULL;

	if (asprintf(&url, "%s%sjson=1", t->link, strchr(t->link, '?') ? "&" : "?") < 0)
		return -ENOMEM;
	return fetch_start(f, FETCH_BUG, 0, url);
}

/* Starts the next request of the round when the gap allows it. */
static void feed_next(struct feed *f)
{
	uint64_t now = now_mono(f->fs);
	int r;

	if (f->inflight)
		return;
	if (f->pending) {
		r = pending_advance(f);
		if (r < 0) {
			log_error("feed %s: %s", f->name, strerror(-r));
			count_bug(f, "error");
			f->incomplete = true;
			pending_free(TAKE_PTR(f->pending));
		}
	}
	if (!f->pending && f->list_idx >= f->n_lists &&
	    (f->todo_idx >= f->n_todo ||
	     (f->conf.max_per_day > 0 && created_today(f) >= f->conf.max_per_day))) {
		if (f->todo_idx < f->n_todo) {
			count_bug(f, "over-daily-limit");
			f->incomplete = true;
		}
		round_end(f, f->conf.interval);
		return;
	}
	if (f->last_request && now < f->last_request + f->conf.gap) {
		schedule(f, f->last_request + f->conf.gap - now);
		return;
	}
	if (f->pending)
		r = fetch_start(f, FETCH_TEXT, (enum text_kind)f->pending->next,
				f->pending->url[f->pending->next]);
	else if (f->list_idx < f->n_lists)
		r = fetch_start(f, FETCH_LIST, 0, f->list_urls[f->list_idx]);
	else
		r = start_bug(f);
	if (r < 0) {
		log_error("feed %s: cannot start a request: %s", f->name, strerror(-r));
		f->incomplete = true;
		round_end(f, f->conf.interval);
	}
}

static int on_feed_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct feed *f = userdata;

	if (!f->running) {
		int r = round_start(f);

		if (r < 0) {
			log_error("feed %s: %s", f->name, strerror(-r));
			round_end(f, f->conf.interval);
			return 0;
		}
	}
	feed_next(f);
	return 0;
}

/* A transfer of the feeds' multi handle has ended. */
static void on_transfer_done(void *userdata, CURL *easy, CURLcode result)
{
	struct fetch *x = NULL;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
	if (x)
		fetch_done(x->feed, result);
}

/* ---- setup ---- */

static void feed_free(struct feed *f)
{
	if (!f)
		return;
	fetch_free(f->inflight);
	round_clear(f);
	sd_event_source_disable_unref(f->timer);
	free(f->name);
	free(f->artifacts);
	feed_conf_clear(&f->conf);
	free(f);
}
DEFINE_CLEANUP(struct feed, feed_free)

/* The name is a folder name under artifacts/ and a label in metrics. */
static bool feed_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= 64 && name[0] != '.' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

void feed_conf_clear(struct feed_conf *c)
{
	free(c->base);
	free(c->ns);
	free(c->tree);
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	strv_free(c->trees);
	strv_free(c->types);
	strv_free(c->subsystems);
	*c = (struct feed_conf){};
}

/* An empty list is no filter: NULL. */
static int filter_from_config(const struct config *cfg, const char *name, const char *key,
			      char ***ret)
{
	char **v = NULL;
	int r = config_get_list(cfg, "feed", name, key, &v);

	if (r < 0)
		return r;
	if (!*v)
		v = (strv_free(v), NULL);
	*ret = v;
	return 0;
}

static int feed_limits_from_config(const struct config *cfg, const char *name,
				   struct feed_conf *c)
{
	int r = config_get_bool(cfg, "feed", name, "c-repro-only", &c->c_only);

	if (r >= 0)
		r = config_get_int(cfg, "feed", name, "max-per-day", &c->max_per_day);
	if (r >= 0)
		r = config_get_duration(cfg, "feed", name, "interval", &c->interval);
	if (r >= 0)
		r = config_get_duration(cfg, "feed", name, "request-interval", &c->gap);
	if (r >= 0)
		r = config_get_duration(cfg, "feed", name, "timeout", &c->timeout);
	if (r >= 0)
		r = config_get_duration(cfg, "feed", name, "backoff", &c->backoff);
	if (r >= 0)
		r = config_get_size(cfg, "feed", name, "max-text-size", &c->max_text);
	if (r >= 0)
		r = config_get_size(cfg, "feed", name, "max-repro-size", &c->max_repro);
	if (r < 0)
		return r;
	/* the official client's rule: one request per second without a token */
	if (!c->token && c->gap < 1000000)
		c->gap = 1000000;
	c->interval = MAX(c->interval, 1000000ULL);
	c->backoff = MAX(c->backoff, 1000000ULL);
	c->timeout = MAX(c->timeout, 1000000ULL);
	return 0;
}

int feed_conf_from_config(const struct config *cfg, const char *name, struct feed_conf *ret)
{
	_cleanup_(feed_conf_clear) struct feed_conf c = {};
	const char *url, *ns, *tree;
	int r;

	if (config_get_string(cfg, "feed", name, "url", &url) < 0)
		return -EINVAL;
	c.base = strdup(url);
	if (!c.base)
		return -ENOMEM;
	while (*c.base && c.base[strlen(c.base) - 1] == '/')
		c.base[strlen(c.base) - 1] = '\0';
	if (config_get_string(cfg, "feed", name, "namespace", &ns) < 0 ||
	    !(c.ns = strdup(ns)))
		return -ENOMEM;
	if (config_get_string(cfg, "feed", name, "tree", &tree) >= 0 && !(c.tree = strdup(tree)))
		return -ENOMEM;
	r = config_get_secret(cfg, "feed", name, "token", &c.token);
	if (r == -ENOENT)
		c.token = NULL;
	else if (r < 0)
		return r;
	r = filter_from_config(cfg, name, "trees", &c.trees);
	if (r >= 0)
		r = filter_from_config(cfg, name, "crash-types", &c.types);
	if (r >= 0)
		r = filter_from_config(cfg, name, "subsystems", &c.subsystems);
	if (r >= 0)
		r = feed_limits_from_config(cfg, name, &c);
	if (r < 0)
		return r;
	*ret = c;
	c = (struct feed_conf){};
	return 0;
}

static int feed_load(struct feeds *fs, const struct config *cfg, const char *name,
		     struct feed **ret)
{
	_cleanup_(feed_freep) struct feed *f = calloc(1, sizeof(*f));
	char sub[96];
	int r;

	if (!f)
		return -ENOMEM;
	if (!feed_name_ok(name))
		return -EDOM;
	f->fs = fs;
	f->name = strdup(name);
	if (!f->name)
		return -ENOMEM;
	if (snprintf(sub, sizeof(sub), "artifacts/%s", name) >= (int)sizeof(sub))
		return -ENAMETOOLONG;
	r = config_state_path(cfg, sub, &f->artifacts);
	if (r < 0)
		return r;
	r = feed_conf_from_config(cfg, name, &f->conf);
	if (r < 0)
		return r;
	r = sd_event_add_time(fs->event, &f->timer, CLOCK_MONOTONIC, 0, 1000, on_feed_timer, f);
	if (r < 0)
		return r;
	schedule(f, 0);
	*ret = TAKE_PTR(f);
	return 0;
}

void feeds_free(struct feeds *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->n; i++)
		feed_free(fs->feed[i]);
	curl_event_cleanup(&fs->curl);
	sd_event_unref(fs->event);
	free(fs);
}

size_t feeds_count(struct feeds *fs)
{
	return fs->n;
}

static int feeds_multi_setup(struct feeds *fs)
{
	return curl_event_setup(&fs->curl, fs->event, on_transfer_done, fs);
}

/* Loads every [feed] of cfg into feed[] (*ret_n of them); on failure
 * none is kept and *ret_error names the feed. */
static int feeds_load(struct feeds *fs, const struct config *cfg,
		      struct feed *feed[FEED_MAX], size_t *ret_n, char **ret_error)
{
	_cleanup_strv_ char **names = NULL;
	size_t n = 0;
	int r = config_subsections(cfg, "feed", &names);

	if (r < 0 && r != -ENOENT)
		return r;
	for (size_t i = 0; names && names[i]; i++) {
		r = n >= FEED_MAX ? -E2BIG : feed_load(fs, cfg, names[i], &feed[n]);
		if (r < 0) {
			while (n > 0)
				feed_free(feed[--n]);
			if (ret_error && asprintf(ret_error, "[feed \"%s\"]: %s", names[i],
						  r == -EINVAL ? "url is required"
						  : r == -EDOM ? "the name may hold only letters, digits, '.', '_' and '-'"
								: strerror(-r)) < 0)
				*ret_error = NULL;
			return r;
		}
		n++;
	}
	*ret_n = n;
	return 0;
}

int feeds_new(sd_event *event, const struct config *cfg, struct metrics *metrics,
	      const struct feed_ops *ops, void *userdata, struct feeds **ret,
	      char **ret_error)
{
	_cleanup_(feeds_freep) struct feeds *fs = calloc(1, sizeof(*fs));
	int r;

	if (!fs)
		return -ENOMEM;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	fs->event = sd_event_ref(event);
	fs->metrics = metrics;
	fs->ops = *ops;
	fs->userdata = userdata;
	r = feeds_load(fs, cfg, fs->feed, &fs->n, ret_error);
	if (r >= 0 && fs->n > 0)
		r = feeds_multi_setup(fs);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(fs);
	return 0;
}

int feeds_check(struct feeds *fs, const struct config *cfg, char **ret_error)
{
	struct feed *feed[FEED_MAX];
	size_t n = 0;
	int r = feeds_load(fs, cfg, feed, &n, ret_error);

	while (n > 0)
		feed_free(feed[--n]);
	return r;
}

int feeds_reload(struct feeds *fs, const struct config *cfg, char **ret_error)
{
	struct feed *feed[FEED_MAX];
	size_t n = 0;
	int r = feeds_load(fs, cfg, feed, &n, ret_error);

	if (r >= 0 && n > 0)
		r = feeds_multi_setup(fs);
	if (r < 0) {
		while (n > 0)
			feed_free(feed[--n]);
		return r;
	}
	/* a feed that stays keeps its next poll time (a round under way is
	 * dropped: its positions are in the store, the next round redoes it) */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < fs->n; j++) {
			uint64_t next;

			if (!streq(feed[i]->name, fs->feed[j]->name) || fs->feed[j]->running ||
			    sd_event_source_get_time(fs->feed[j]->timer, &next) < 0)
				continue;
			if (sd_event_source_set_time(feed[i]->timer, next) < 0)
				log_warning("feed %s: polls at once after the reload", feed[i]->name);
		}
	for (size_t j = 0; j < fs->n; j++)
		feed_free(fs->feed[j]);
	memcpy(fs->feed, feed, n * sizeof(*feed));
	fs->n = n;
	return 0;
}
