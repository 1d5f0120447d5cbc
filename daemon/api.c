/* The REST API under /api/v1/, /healthz and /metrics. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "budget.h"
#include "fetch.h"
#include "hooks/auth.h"
#include "front-internal.h"
#include "publish.h"
#include "stats.h"
#include "store.h"

#define API_PAGE_DEFAULT 50
#define API_PAGE_MAX 500
#define API_TITLE_MAX 512
#define API_FIELD_MAX 4096
#define API_TRAJECTORY_MAX (16u * 1024 * 1024)

static json_t *patch_json_short(const struct store_patch *p)
{
	return store_patch_json(p, false);
}

/* ---- query parameters ---- */

static int query_id(struct http_request *req, const char *name, int64_t *ret)
{
	const char *v = http_request_query(req, name);
	uint64_t u;

	if (!v)
		return 0;
	if (parse_uint64(v, &u) < 0 || u > INT64_MAX) {
		http_reply_error(req, 400, "query parameter %s must be a non-negative integer", name);
		return -EINVAL;
	}
	*ret = (int64_t)u;
	return 0;
}

/* state, after, limit, bug, job, source/type; -EINVAL after answering 400. */
static int page_params(struct http_request *req, struct store_query *q)
{
	const char *order;
	int r;

	q->state = http_request_query(req, "state");
	q->limit = API_PAGE_DEFAULT;
	r = query_id(req, "after", &q->after);
	if (r >= 0)
		r = query_id(req, "limit", &q->limit);
	if (r >= 0)
		r = query_id(req, "bug", &q->bug_id);
	if (r >= 0)
		r = query_id(req, "job", &q->job_id);
	if (r < 0)
		return r;
	order = http_request_query(req, "order");
	if (order && !streq(order, "oldest") && !streq(order, "newest")) {
		http_reply_error(req, 400, "order must be oldest or newest");
		return -EINVAL;
	}
	q->newest = order && streq(order, "newest");
	if (q->limit == 0 || q->limit > API_PAGE_MAX) {
		http_reply_error(req, 400, "limit must be between 1 and %d", API_PAGE_MAX);
		return -EINVAL;
	}
	return 0;
}

static int reply_page(struct http_request *req, json_t *items, int64_t last_id,
		      bool full)
{
	if (!items)
		return -ENOMEM;
	return http_reply_json(req, 200, json_pack("{s:o, s:o}", "items", items, "next",
						   full ? json_integer(last_id) : json_null()));
}

/* An unknown ?state= is a mistake, not a filter that matches nothing. */
static int check_state(struct http_request *req, const char *state, const char *const *states)
{
	char all[256] = "";

	if (!state || !states)
		return 0;
	for (size_t i = 0; states[i]; i++) {
		if (streq(states[i], state))
			return 0;
		snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s", i ? ", " : "",
			 states[i]);
	}
	http_reply_error(req, 400, "unknown state '%.64s': one of %s", state, all);
	return -EINVAL;
}

#define LIST_HANDLER(name, type, query_fn, to_json, list_free, states, extra)   \
	static int name(struct http_request *req, void *userdata)               \
	{                                                                      \
		struct front *f = userdata;                                    \
		struct store_query q = { 0 };                                  \
		type **items = NULL;                                           \
		size_t n = 0;                                                  \
		json_t *arr;                                                   \
		int r;                                                         \
                                                                               \
		if (page_params(req, &q) < 0 || check_state(req, q.state, states) < 0) \
			return 0;                                              \
		extra;                                                         \
		r = query_fn(f->store, &q, &items, &n);                        \
		if (r < 0)                                                     \
			return http_reply_error(req, 503, "store: %s",          \
						store_errmsg(f->store));       \
		arr = json_array();                                            \
		for (size_t i = 0; i < n && arr; i++)                          \
			json_array_append_new(arr, to_json(items[i]));          \
		r = reply_page(req, arr, n ? items[n - 1]->id : 0,             \
			       (int64_t)n == q.limit);                         \
		list_free(items, n);                                           \
		return r;                                                      \
	}

LIST_HANDLER(api_bugs, struct store_bug, store_bug_query, store_bug_json, store_bug_list_free,
	     store_bug_states, (q.source = http_request_query(req, "source"),
				q.tree = http_request_query(req, "tree")))
LIST_HANDLER(api_jobs, struct store_job, store_job_query, store_job_json, store_job_list_free,
	     store_job_states, )
LIST_HANDLER(api_outbox, struct store_outbox, store_outbox_query, store_outbox_json,
	     store_outbox_list_free, store_outbox_states, )
LIST_HANDLER(api_events, struct store_event, store_event_query, store_event_json,
	     store_event_list_free, NULL, q.state = http_request_query(req, "kind"))
LIST_HANDLER(api_inbox, struct store_inbox, store_inbox_query, store_inbox_json,
	     store_inbox_list_free, NULL, q.source = http_request_query(req, "type"))
LIST_HANDLER(api_patches, struct store_patch, store_patch_query, patch_json_short,
	     store_patch_list_free, store_patch_states, )

static int bug_events(struct front *f, int64_t id, json_t **ret)
{
	struct store_query q = { .bug_id = id, .limit = API_PAGE_MAX };
	struct store_event **ev = NULL;
	size_t n = 0;
	json_t *arr;
	int r = store_event_query(f->store, &q, &ev, &n);

	if (r < 0)
		return r;
	arr = json_array();
	for (size_t i = 0; i < n && arr; i++)
		json_array_append_new(arr, store_event_json(ev[i]));
	store_event_list_free(ev, n);
	*ret = arr;
	return arr ? 0 : -ENOMEM;
}

static int api_bug_get(struct http_request *req, void *userdata)
{
	struct front *f = userdata;
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	const char *rest;
	json_t *events = NULL, *j;
	int64_t id;
	int r;

	if (http_request_path_id(req, "/api/v1/bugs/", &id, &rest) < 0 || (*rest && !streq(rest, "events")))
		return http_reply_error(req, 404, "not found");
	r = store_bug_get(f->store, id, &b);
	if (r == -ENOENT)
		return http_reply_error(req, 404, "no bug %lld", (long long)id);
	if (r < 0 || bug_events(f, id, &events) < 0)
		return http_reply_error(req, 503, "store: %s", store_errmsg(f->store));
	if (*rest)
		return http_reply_json(req, 200, json_pack("{s:o}", "items", events));
	j = store_bug_json(b);
	if (j) {
		json_t *usage = store_bug_llm_json(f->store, id);

		if (usage)
			json_object_set_new(j, "llm", usage);
		json_object_set_new(j, "events", events);
	}
	else
		json_decref(events);
	return http_reply_json(req, 200, j);
}

/* approve (send upstream) and reject are recorded for the publisher. */
static int api_bug_post(struct http_request *req, void *userdata)
{
	struct front *f = userdata;
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	const char *rest, *kind;
	int64_t id;
	int r;

	if (http_request_path_id(req, "/api/v1/bugs/", &id, &rest) < 0)
		return http_reply_error(req, 404, "not found");
	if (streq(rest, "approve"))
		kind = "request.upstream";
	else if (streq(rest, "reject"))
		kind = "request.reject";
	else if (streq(rest, "retest"))
		kind = "request.retest";
	else
		return http_reply_error(req, 404, "unknown action '%s'", rest);
	r = store_bug_get(f->store, id, &b);
	if (r == -ENOENT)
		return http_reply_error(req, 404, "no bug %lld", (long long)id);
	if (r >= 0)
		r = store_event_add(f->store, id, 0, kind, "{\"via\":\"api\"}");
	if (r < 0)
		return http_reply_error(req, 503, "store: %s", store_errmsg(f->store));
	return http_reply_json(req, 202, json_pack("{s:I, s:s}", "bug", (json_int_t)id,
						   "recorded", kind));
}

/* A member that must be a string of bounded length, when present. */
static int body_str(struct http_request *req, json_t *j, const char *key,
		    bool required, size_t max, const char **ret)
{
	json_t *v = json_object_get(j, key);

	*ret = NULL;
	if (!v || json_is_null(v)) {
		if (required) {
			http_reply_error(req, 400, "\"%s\" is required", key);
			return -EINVAL;
		}
		return 0;
	}
	if (!json_is_string(v)) {
		http_reply_error(req, 400, "\"%s\" must be a string", key);
		return -EINVAL;
	}
	if (json_string_length(v) == 0 || json_string_length(v) > max ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		http_reply_error(req, 400, "\"%s\" must be 1 to %zu bytes without NUL", key, max);
		return -EINVAL;
	}
	*ret = json_string_value(v);
	return 0;
}

/* The body as a JSON object with only the allowed members; an empty body
 * is {} when empty_ok.  -EINVAL after answering 400. */
static int body_object(struct http_request *req, const char *const *allowed, size_t n,
		       bool empty_ok, json_t **ret)
{
	_cleanup_json_ json_t *j = NULL;
	json_error_t jerr;
	size_t len;
	const char *body = http_request_body(req, &len);
	const char *key;
	json_t *val;

	if (len == 0 && empty_ok) {
		*ret = json_object();
		return *ret ? 0 : -ENOMEM;
	}
	if (json_parse_bounded(body, len, len, &j, &jerr) < 0) {
		http_reply_error(req, 400, "not JSON: %s at line %d column %d", jerr.text,
				 jerr.line, jerr.column);
		return -EINVAL;
	}
	if (!json_is_object(j)) {
		http_reply_error(req, 400, "the body must be a JSON object");
		return -EINVAL;
	}
	json_object_foreach(j, key, val) {
		bool known = false;

		for (size_t i = 0; i < n; i++)
			known |= streq(key, allowed[i]);
		if (!known) {
			_cleanup_free_ char *k = str_escape(key, strlen(key), 64);

			http_reply_error(req, 400, "unknown member \"%s\"", k ? k : "?");
			return -EINVAL;
		}
	}
	*ret = TAKE_PTR(j);
	return 0;
}

/* A bug's texts arrive as their content, or as http(s) links its jobs
 * fetch from the hosts of [kfix] text-hosts; never as paths on this
 * host, which would let a client make kfixd read any file it can (and
 * tell which exist).  Content is kept under STATE/submitted/, in a
 * folder named by a digest of the bug's source and id. */
static int keep_text(struct front *f, struct http_request *req, const char *source,
		     const char *id, const struct fetch_text *t, const char *value, char **ret)
{
	_cleanup_free_ char *dir = NULL, *path = NULL;
	char hex[AUTH_SHA256_HEX_LEN + 1];
	int r;

	*ret = NULL;
	if (!value)
		return 0;
	if (fetch_is_link(value) && !strpbrk(value, "\n\r ") && strlen(value) <= API_FIELD_MAX) {
		*ret = strdup(value);
		return *ret ? 0 : -ENOMEM;
	}
	r = auth_hmac_sha256_hex("kfix-submitted", source, id, strlen(id), hex);
	if (r < 0)
		return r;
	if (asprintf(&dir, "%s/submitted/%s", f->state_dir, hex) < 0 ||
	    asprintf(&path, "%s/%s", dir, t->file) < 0)
		return -ENOMEM;
	r = mkdir_p(dir, 0750);
	if (r >= 0)
		r = write_file_atomic(path, value, strlen(value), 0640);
	if (r < 0) {
		http_reply_error(req, 503, "\"%s\": cannot keep the text: %s", t->field, strerror(-r));
		return -EIO;
	}
	*ret = TAKE_PTR(path);
	return 0;
}

static void texts_free(char *(*t)[FETCH_TEXTS])
{
	for (size_t i = 0; i < ARRAY_SIZE(*t); i++)
		free((*t)[i]);
}

static int api_bug_submit(struct http_request *req, void *userdata)
{
	static const char *const allowed[] = { "id", "title", "tree", "commit", "source",
					       "report", "repro_c", "repro_syz", "kernel_config" };
	struct front *f = userdata;
	_cleanup_json_ json_t *j = NULL;
	_cleanup_(texts_free) char *texts[FETCH_TEXTS] = { NULL };
	struct store_bug b = { .source = (char *)"manual" };
	const char *v[ARRAY_SIZE(allowed)];
	int64_t id;
	bool created;
	int r;

	if (body_object(req, allowed, ARRAY_SIZE(allowed), false, &j) < 0)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
		if (body_str(req, j, allowed[i], i < 2,
			     i == 1 ? API_TITLE_MAX : i == 4 ? 32 :
			     i >= 5 ? fetch_texts[i - 5].max : API_FIELD_MAX, &v[i]) < 0)
			return 0;
	if (v[4] && strspn(v[4], "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(v[4]))
		return http_reply_error(req, 400, "\"source\" may hold only a-z, 0-9 and '-'");
	if (v[4])
		b.source = (char *)v[4];
	for (size_t i = 0; i < FETCH_TEXTS; i++) {
		r = keep_text(f, req, b.source, v[0], &fetch_texts[i], v[5 + i], &texts[i]);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			return 0;
	}
	b.source_id = (char *)v[0];
	b.title = (char *)v[1];
	b.tree = (char *)v[2];
	b.base_commit = (char *)v[3];
	b.report = texts[0];
	b.repro_c = texts[1];
	b.repro_syz = texts[2];
	b.kernel_config = texts[3];
	r = store_bug_add(f->store, &b, &id, &created);
	if (r < 0)
		return http_reply_error(req, 503, "store: %s", store_errmsg(f->store));
	return http_reply_json(req, created ? 201 : 200,
			       json_pack("{s:I, s:b}", "id", (json_int_t)id, "created", created));
}

static int api_patch_get(struct http_request *req, void *userdata)
{
	struct front *f = userdata;
	_cleanup_(store_patch_freep) struct store_patch *p = NULL;
	const char *rest;
	json_t *j;
	int64_t id;
	int r;

	if (http_request_path_id(req, "/api/v1/patches/", &id, &rest) < 0 || *rest)
		return http_reply_error(req, 404, "not found");
	r = store_patch_get(f->store, id, &p);
	if (r == -ENOENT)
		return http_reply_error(req, 404, "no patch %lld", (long long)id);
	if (r < 0)
		return http_reply_error(req, 503, "store: %s", store_errmsg(f->store));
	j = store_patch_json(p, true);
	if (j)
		json_object_set_new(j, "syzbot_tests", store_patch_syzbot_tests(f->store, p));
	return http_reply_json(req, 200, j);
}

/* approve: the approver signs off and the patch goes upstream (through a
 * publish job); reject.  The same moves as kfixctl's on the store. */
static int api_patch_post(struct http_request *req, void *userdata)
{
	static const char *const allowed[] = { "by", "reason" };
	struct front *f = userdata;
	_cleanup_json_ json_t *j = NULL;
	const char *rest, *by, *reason, *state;
	int64_t id;
	int r;

	if (http_request_path_id(req, "/api/v1/patches/", &id, &rest) < 0)
		return http_reply_error(req, 404, "not found");
	if (streq(rest, "approve"))
		state = "approved";
	else if (streq(rest, "reject"))
		state = "rejected";
	else
		return http_reply_error(req, 404, "unknown action");
	if (body_object(req, allowed, ARRAY_SIZE(allowed), true, &j) < 0 ||
	    body_str(req, j, "by", false, API_TITLE_MAX, &by) < 0 ||
	    body_str(req, j, "reason", false, API_FIELD_MAX, &reason) < 0)
		return 0;
	r = publish_decide(f->store, id, state, by ? by : "api", reason);
	if (r == -EINVAL)
		return http_reply_error(req, 400,
					"\"by\": \"Name <address>\" is needed: the approver signs off");
	if (r == -ENOENT)
		return http_reply_error(req, 404, "no patch %lld", (long long)id);
	if (r == -EPERM)
		return http_reply_error(req, 409, "patch %lld is not awaiting approval", (long long)id);
	if (r < 0)
		return http_reply_error(req, 503, "store: %s", store_errmsg(f->store));
	return http_reply_json(req, 200, json_pack("{s:I, s:s}", "patch", (json_int_t)id,
						   "state", state));
}

static int api_job_get(struct http_request *req, void *userdata)
{
	struct front *f = userdata;
	_cleanup_(store_job_freep) struct store_job *j = NULL;
	_cleanup_free_ char *path = NULL, *data = NULL;
	const char *rest;
	size_t len;
	int64_t id;
	int r;

	if (http_request_path_id(req, "/api/v1/jobs/", &id, &rest) < 0 ||
	    (*rest && !streq(rest, "trajectory")))
		return http_reply_error(req, 404, "not found");
	r = store_job_get(f->store, id, &j);
	if (r == -ENOENT)
		return http_reply_error(req, 404, "no job %lld", (long long)id);
	if (r < 0)
		return http_reply_error(req, 503, "store: %s", store_errmsg(f->store));
	if (!*rest)
		return http_reply_json(req, 200, store_job_json(j));
	if (asprintf(&path, "%s/jobs/%lld/trajectory.jsonl", f->state_dir, (long long)id) < 0)
		return -ENOMEM;
	r = read_file_bounded(path, API_TRAJECTORY_MAX, &data, &len);
	if (r == -ENOENT)
		return http_reply_error(req, 404, "job %lld has no trajectory", (long long)id);
	if (r < 0)
		return http_reply_error(req, 500, "cannot read the trajectory: %s", strerror(-r));
	return http_reply(req, 200, "application/x-ndjson", data, len);
}

static int api_job_post(struct http_request *req, void *userdata)
{
	struct front *f = userdata;
	const char *rest;
	int64_t id;
	int r;

	if (http_request_path_id(req, "/api/v1/jobs/", &id, &rest) < 0)
		return http_reply_error(req, 404, "not found");
	if (streq(rest, "retry"))
		r = store_job_retry(f->store, id);
	else if (streq(rest, "cancel"))
		r = store_job_cancel(f->store, id);
	else
		return http_reply_error(req, 404, "unknown action");
	if (r == -ENOENT)
		return http_reply_error(req, 404, "no job %lld", (long long)id);
	if (r == -EBUSY)
		return http_reply_error(req, 409, "job %lld is still queued or running", (long long)id);
	if (r == -EALREADY)
		return http_reply_error(req, 409, "job %lld has already ended", (long long)id);
	if (r == -EPERM || r == -EINVAL)
		return http_reply_error(req, 409, "job %lld cannot be %s in its state",
					(long long)id, streq(rest, "retry") ? "retried" : "cancelled");
	if (r < 0)
		return http_reply_error(req, 503, "store: %s", store_errmsg(f->store));
	return http_reply_json(req, 200, json_pack("{s:I, s:s}", "job", (json_int_t)id,
						   "done", rest));
}

/* kfixctl pause, resume and drain when the daemon runs: the daemon
 * changes the mode and says so in its log. */
static int api_scheduler_post(struct http_request *req, void *userdata)
{
	static const char *const allowed[] = { "mode", "by" };
	struct front *f = userdata;
	_cleanup_json_ json_t *j = NULL;
	const char *mode, *by;
	_cleanup_free_ char *ebv = NULL;
	int r;

	if (body_object(req, allowed, ARRAY_SIZE(allowed), false, &j) < 0)
		return 0;
	mode = json_get_str(j, "mode");
	by = json_get_str(j, "by") ?: "the API";
	if (!mode || strlen(by) > 200)
		return http_reply_error(req, 400, "\"mode\" (running, paused or draining) is required");
	r = store_scheduler_set(f->store, mode, by);
	if (r == -EINVAL)
		return http_reply_error(req, 400, "mode must be running, paused or draining");
	if (r < 0)
		return http_reply_error(req, 503, "store: %s", store_errmsg(f->store));
	ebv = str_escape(by, strlen(by), 200);
	log_notice("scheduler %s by %s", mode, ebv ?: "?");
	return http_reply_json(req, 200, json_pack("{s:s}", "scheduler", mode));
}

static int api_status(struct http_request *req, void *userdata)
{
	struct front *f = userdata;
	struct store_stats st;

	if (store_stats(f->store, &st) < 0)
		return http_reply_error(req, 503, "store: %s", store_errmsg(f->store));
	return http_reply_json(req, 200, store_stats_json(&st));
}

static int healthz(struct http_request *req, void *userdata)
{
	struct front *f = userdata;
	struct store_stats st;

	if (store_stats(f->store, &st) < 0)
		return http_reply_error(req, 503, "store unreachable");
	return http_reply_json(req, 200, json_pack("{s:s}", "status", "ok"));
}

/* Whether kfixctl pause or drain stopped the taking of new jobs. */
static void scheduler_gauges(struct front *f, const char *mode)
{
	metrics_gauge_set(f->metrics, "kfix_scheduler_paused",
			  "1 when kfixctl pause stopped the taking of new jobs.", NULL,
			  streq(mode, "paused"));
	metrics_gauge_set(f->metrics, "kfix_scheduler_draining",
			  "1 while kfixctl drain waits for the running jobs to stop kfixd.", NULL,
			  streq(mode, "draining"));
}

/* The day's LLM budget: what is left of each limit that is set. */
static void budget_gauges(struct front *f)
{
	struct budget_limits l;
	int64_t tokens = 0;
	double cost = 0;

	if (budget_limits_get(f->cfg, &l) < 0 || (l.day_tokens <= 0 && l.day_cost <= 0) ||
	    store_llm_usage_sum(f->store, budget_day_start(time(NULL)), 0, &tokens, &cost) < 0)
		return;
	if (l.day_tokens > 0)
		metrics_gauge_set(f->metrics, "kfix_llm_budget_remaining_tokens",
				  "Tokens left of the UTC day's LLM budget.", NULL,
				  (double)(tokens < l.day_tokens ? l.day_tokens - tokens : 0));
	if (l.day_cost > 0)
		metrics_gauge_set(f->metrics, "kfix_llm_budget_remaining_dollars",
				  "US dollars left of the UTC day's LLM budget.", NULL,
				  cost < l.day_cost ? l.day_cost - cost : 0);
}

static void store_gauges(struct front *f)
{
	struct store_stats st;
	char labels[64];
	int64_t n;

	if (store_stats(f->store, &st) < 0)
		return;
	for (size_t i = 0; store_bug_states[i]; i++) {
		snprintf(labels, sizeof(labels), "state=\"%s\"", store_bug_states[i]);
		metrics_gauge_set(f->metrics, "kfix_bugs", "Bugs by state.", labels,
				  (double)st.bugs_by_state[i]);
	}
	{
		/* in the order of store_job_states */
		const int64_t jv[] = { st.jobs_queued, st.jobs_running, st.jobs_done,
				       st.jobs_failed, st.jobs_cancelled };

		for (size_t i = 0; i < ARRAY_SIZE(jv); i++) {
			snprintf(labels, sizeof(labels), "state=\"%s\"", store_job_states[i]);
			metrics_gauge_set(f->metrics, "kfix_jobs", "Jobs by state.", labels,
					  (double)jv[i]);
		}
	}
	metrics_gauge_set(f->metrics, "kfix_queue_oldest_age_seconds",
			  "Age of the oldest queued job (0 when none).", NULL,
			  st.oldest_queued ? (double)(time(NULL) - st.oldest_queued) : 0);
	metrics_gauge_set(f->metrics, "kfix_outbox_backlog",
			  "Outbox entries not yet sent (pending).", NULL, (double)st.outbox_pending);
	metrics_gauge_set(f->metrics, "kfix_outbox_parked",
			  "Outbox entries given up on.", NULL, (double)st.outbox_parked);
	if (store_inbox_count(f->store, "pending", &n) >= 0)
		metrics_gauge_set(f->metrics, "kfix_inbox_pending",
				  "Stored deliveries waiting for processing.", NULL, (double)n);
	metrics_gauge_set(f->metrics, "kfix_upstream_fixes_compared",
			  "Bugs kfix patched whose developers' fix landed and was compared.", NULL,
			  (double)st.upstream_compared);
	metrics_gauge_set(f->metrics, "kfix_upstream_fixes_matched",
			  "Of those, bugs where kfix's patch changed the same place.", NULL,
			  (double)st.upstream_matched);
	metrics_gauge_set(f->metrics, "kfix_upstream_fix_match_ratio",
			  "Share of compared bugs where kfix's patch matched the developers' fix "
			  "(0 when none was compared).", NULL,
			  st.upstream_compared ? (double)st.upstream_matched / (double)st.upstream_compared : 0);
	scheduler_gauges(f, st.scheduler);
	budget_gauges(f);
}

static int metrics_page(struct http_request *req, void *userdata)
{
	struct front *f = userdata;
	_cleanup_buf_ struct buf out = BUF_INIT(4u * 1024 * 1024);
	_cleanup_buf_ struct buf jobs = BUF_INIT(4u * 1024 * 1024);
	int r;

	store_gauges(f);
	r = metrics_render(f->metrics, &out);
	if (r < 0)
		return r;
	/* what job processes recorded; a scrape without them beats none */
	r = stats_render(f->store, &jobs);
	if (r >= 0)
		r = buf_append(&out, jobs.data ? jobs.data : "", jobs.len);
	if (r < 0)
		log_warning("metrics: cannot add the jobs' numbers: %s", store_errmsg(f->store));
	return http_reply(req, 200, "text/plain; version=0.0.4; charset=utf-8",
			  out.data ? out.data : "", out.len);
}

int api_setup(struct front *f)
{
	static const struct {
		const char *method, *path;
		enum http_scope scope;
		http_handler_fn fn;
	} routes[] = {
		{ "GET", "/healthz", HTTP_SCOPE_NONE, healthz },
		{ "GET", "/metrics", HTTP_SCOPE_NONE, metrics_page },
		{ "GET", "/api/v1/status", HTTP_SCOPE_READ, api_status },
		{ "GET", "/api/v1/bugs", HTTP_SCOPE_READ, api_bugs },
		{ "POST", "/api/v1/bugs", HTTP_SCOPE_ADMIN, api_bug_submit },
		{ "GET", "/api/v1/bugs/*", HTTP_SCOPE_READ, api_bug_get },
		{ "POST", "/api/v1/bugs/*", HTTP_SCOPE_ADMIN, api_bug_post },
		{ "GET", "/api/v1/jobs", HTTP_SCOPE_READ, api_jobs },
		{ "GET", "/api/v1/jobs/*", HTTP_SCOPE_READ, api_job_get },
		{ "POST", "/api/v1/jobs/*", HTTP_SCOPE_ADMIN, api_job_post },
		{ "POST", "/api/v1/scheduler", HTTP_SCOPE_ADMIN, api_scheduler_post },
		{ "GET", "/api/v1/outbox", HTTP_SCOPE_READ, api_outbox },
		{ "GET", "/api/v1/events", HTTP_SCOPE_READ, api_events },
		{ "GET", "/api/v1/inbox", HTTP_SCOPE_READ, api_inbox },
		{ "GET", "/api/v1/patches", HTTP_SCOPE_READ, api_patches },
		{ "GET", "/api/v1/patches/*", HTTP_SCOPE_READ, api_patch_get },
		{ "POST", "/api/v1/patches/*", HTTP_SCOPE_ADMIN, api_patch_post },
	};
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(routes); i++) {
		r = http_server_route(f->http, routes[i].method, routes[i].path,
				      routes[i].scope, routes[i].fn, f);
		if (r < 0)
			return r;
	}
	/* what runs and since when, as Prometheus' conventions name them */
	metrics_gauge_set(f->metrics, "kfix_build_info", "The running kfix's version.",
			  "version=\"" PACKAGE_VERSION "\"", 1);
	metrics_gauge_set(f->metrics, "process_start_time_seconds",
			  "Start time of the process since the Unix epoch, in seconds.", NULL,
			  (double)time(NULL));
	return 0;
}
