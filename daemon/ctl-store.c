/* kfixctl commands that read and change the store directly. */
#include "config.h"

#include <errno.h>
#include <time.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "bisect.h"
#include "ctl.h"
#include "fetch.h"
#include "store.h"

#define CTL_TITLE_MAX 512
/* The reproduce job keeps at most REPORT_TEXT_MAX (1 MiB) of a crash. */
#define CTL_CRASH_MAX ((size_t)1 << 20)

/* Parses "--state S" style options shared by the list commands. */
static int list_opts(const char *cmd, int argc, char **argv, const char **state,
		     int64_t *limit)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:n:", opts, NULL)) != -1) {
		if (c == 's')
			*state = optarg;
		else if (c == 'n' && ctl_parse_id(cmd, optarg, limit) >= 0)
			continue;
		else
			return -EINVAL;
	}
	if (optind < argc) {
		ctl_err("%s: unexpected argument '%s'", cmd, argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int ctl_status(struct ctl *c, int argc, char **argv)
{
	struct store_stats st;
	struct store *s;
	bool up;
	int r;

	(void)argc;
	(void)argv;
	/* a running daemon answers over its API; else read the store */
	r = ctl_api_stats(c, &st);
	up = r >= 0;
	if (r < 0 && (r != -ENOTCONN || c->url)) {
		if (r == -ENOTCONN)
			ctl_err("status: no daemon answers at %s", c->url);
		return 1;
	}
	if (r < 0) {
		if (ctl_store(c, &s) < 0)
			return 1;
		r = store_stats(s, &st);
		if (r < 0) {
			ctl_err("status: %s", store_errmsg(s));
			return 1;
		}
	}
	if (c->json) {
		json_t *j = store_stats_json(&st);

		if (j)
			json_object_set_new(j, "daemon", json_string(up ? "up" : "down"));
		return ctl_print_json(j);
	}
	printf("kfixd:     %s\n", up ? "up (answered over its API)" :
	       "not answering (these figures are the store's)");
	printf("Scheduler: %s\n", streq(st.scheduler, "paused") ?
	       "paused: no new job starts (kfixctl resume)" : streq(st.scheduler, "draining") ?
	       "draining: no new job starts, kfixd stops once the running ones end" :
	       st.scheduler);
	printf("Bugs:\n");
	for (size_t i = 0; store_bug_states[i]; i++)
		if (st.bugs_by_state[i])
			printf("  %-18s %lld\n", store_bug_states[i],
			       (long long)st.bugs_by_state[i]);
	printf("Jobs:   %lld queued, %lld running, %lld done, %lld failed, %lld cancelled\n",
	       (long long)st.jobs_queued, (long long)st.jobs_running,
	       (long long)st.jobs_done, (long long)st.jobs_failed,
	       (long long)st.jobs_cancelled);
	printf("Outbox: %lld pending, %lld sent, %lld parked\n",
	       (long long)st.outbox_pending, (long long)st.outbox_sent,
	       (long long)st.outbox_parked);
	if (st.upstream_compared > 0)
		printf("Upstream: %lld real fixes landed; kfix's patch matched %lld (%.0f%%)\n",
		       (long long)st.upstream_compared, (long long)st.upstream_matched,
		       100.0 * (double)st.upstream_matched / (double)st.upstream_compared);
	if (st.llm_wait_until > 0) {
		time_t t = (time_t)st.llm_wait_until;
		char when[64];
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
		printf("LLM:    the day's budget is spent; repairs wait until %s\n", when);
	}
	return 0;
}

int ctl_bugs(struct ctl *c, int argc, char **argv)
{
	struct store_bug **bugs = NULL;
	const char *state = NULL;
	int64_t limit = 0;
	struct store *s;
	size_t n = 0;
	char t[32];

	if (list_opts("bugs", argc, argv, &state, &limit) < 0)
		return 2;
	if (state && !store_bug_state_valid(state)) {
		ctl_err("bugs: unknown state '%s'", state);
		return 2;
	}
	if (ctl_store(c, &s) < 0)
		return 1;
	/* the newest first, as journalctl and git log show them */
	if (store_bug_query(s, &(struct store_query){ .state = state, .limit = limit,
						       .newest = true }, &bugs, &n) < 0) {
		ctl_err("bugs: %s", store_errmsg(s));
		return 1;
	}
	if (c->json) {
		json_t *a = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, store_bug_json(bugs[i]));
		store_bug_list_free(bugs, n);
		return ctl_print_json(a);
	}
	printf("%-6s %-18s %-16s %-10s %s\n", "ID", "STATE", "UPDATED", "TREE", "TITLE");
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *title = str_escape(bugs[i]->title,
							strlen(bugs[i]->title), 80);

		printf("%-6lld %-18s %-16s %-10s %s\n", (long long)bugs[i]->id,
		       bugs[i]->state, ctl_time(bugs[i]->updated, t, sizeof(t)),
		       bugs[i]->tree ? bugs[i]->tree : "-", title ? title : "?");
	}
	store_bug_list_free(bugs, n);
	return 0;
}

/* The crash the reproduce job kept: the text a maintainer would read
 * first, one escaped line at a time (a log line holds any bytes). */
static void print_crash(const char *path)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_file_bounded(path, CTL_CRASH_MAX, &text, &len);

	if (r < 0) {
		printf("Reproduced crash: %s\n", strerror(-r));
		return;
	}
	printf("Reproduced crash:\n");
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		_cleanup_free_ char *e = str_escape(text + pos, n, 1024);

		printf("  %s\n", e ? e : "?");
		pos += n + 1;
	}
}

int ctl_bug(struct ctl *c, int argc, char **argv)
{
	_cleanup_json_ json_t *usage = NULL, *cause = NULL;
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	struct store_event **ev = NULL;
	struct store *s = c->store;
	size_t n = 0;
	int64_t id = c->id;
	char t[32];
	int r;

	(void)argc;
	(void)argv;
	r = store_bug_get(s, id, &b);
	if (r < 0) {
		ctl_err("bug %lld: %s", (long long)id, r == -ENOENT ? "no such bug" : store_errmsg(s));
		return 1;
	}
	usage = store_bug_llm_json(s, id);
	(void)bisect_found(s, id, &cause);
	if (c->json) {
		json_t *j = store_bug_json(b);

		if (j && usage)
			json_object_set(j, "llm", usage);
		if (j && cause)
			json_object_set(j, "cause", cause);
		return ctl_print_json(j);
	}
	printf("%-14s %lld\n", "Bug:", (long long)b->id);
	ctl_print_escaped("Title:", b->title);
	printf("%-14s %s\n", "State:", b->state);
	ctl_print_escaped("Source:", b->source);
	ctl_print_escaped("Source id:", b->source_id);
	ctl_print_escaped("Tree:", b->tree);
	ctl_print_escaped("Base commit:", b->base_commit);
	ctl_print_escaped("Report:", b->report);
	ctl_print_escaped("C repro:", b->repro_c);
	ctl_print_escaped("Guilty file:", b->guilty_file);
	if (cause) {
		_cleanup_free_ char *line = NULL;

		if (asprintf(&line, "%.12s (\"%s\") by %s, bisected: %zu revisions tested, "
			     "%lld builds", json_get_str(cause, "culprit"),
			     json_get_str(cause, "subject") ?: "", json_get_str(cause, "author") ?: "?",
			     json_array_size(json_object_get(cause, "tests")),
			     (long long)json_get_int(cause, "builds", 0)) >= 0)
			ctl_print_escaped("Cause:", line);
	}
	printf("%-14s %s\n", "Created:", ctl_time(b->created, t, sizeof(t)));
	printf("%-14s %s\n", "Updated:", ctl_time(b->updated, t, sizeof(t)));
	if (usage && json_get_int(usage, "calls", 0) > 0)
		printf("%-14s %lld calls, %lld+%lld tokens, cost %.4f\n", "Model:",
		       (long long)json_get_int(usage, "calls", 0),
		       (long long)json_get_int(usage, "tokens_in", 0),
		       (long long)json_get_int(usage, "tokens_out", 0),
		       json_number_value(json_object_get(usage, "cost")));
	if (store_event_list(s, id, 0, 200, &ev, &n) >= 0 && n > 0) {
		printf("History:\n");
		for (size_t i = 0; i < n; i++) {
			_cleanup_free_ char *d = ev[i]->detail
				? str_escape(ev[i]->detail, strlen(ev[i]->detail), 200) : NULL;

			printf("  %s  %-14s %s\n", ctl_time(ev[i]->ts / 1000000, t, sizeof(t)),
			       ev[i]->kind, d ? d : "");
		}
	}
	store_event_list_free(ev, n);
	if (b->crash_report)
		print_crash(b->crash_report);
	return 0;
}

int ctl_jobs(struct ctl *c, int argc, char **argv)
{
	struct store_job **jobs = NULL;
	const char *state = NULL;
	int64_t limit = 0;
	struct store *s;
	size_t n = 0;
	char t[32];

	if (list_opts("jobs", argc, argv, &state, &limit) < 0)
		return 2;
	if (ctl_store(c, &s) < 0)
		return 1;
	if (store_job_query(s, &(struct store_query){ .state = state, .limit = limit,
						       .newest = true }, &jobs, &n) < 0) {
		ctl_err("jobs: %s", store_errmsg(s));
		return 1;
	}
	if (c->json) {
		json_t *a = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, store_job_json(jobs[i]));
		store_job_list_free(jobs, n);
		return ctl_print_json(a);
	}
	printf("%-6s %-6s %-12s %-10s %-8s %-16s %s\n", "ID", "BUG", "KIND", "STATE",
	       "ATTEMPT", "CREATED", "ERROR");
	for (size_t i = 0; i < n; i++) {
		struct store_job *j = jobs[i];
		_cleanup_free_ char *e = j->error ? str_escape(j->error, strlen(j->error), 60) : NULL;
		char att[16];

		snprintf(att, sizeof(att), "%d/%d", j->attempts, j->max_attempts);
		printf("%-6lld %-6lld %-12s %-10s %-8s %-16s %s\n", (long long)j->id,
		       (long long)j->bug_id, j->kind, j->state, att,
		       ctl_time(j->created, t, sizeof(t)), e ? e : "");
	}
	store_job_list_free(jobs, n);
	return 0;
}

int ctl_job(struct ctl *c, int argc, char **argv)
{
	_cleanup_(store_job_freep) struct store_job *j = NULL;
	struct store *s = c->store;
	int64_t id = c->id;
	char t[32];
	int r;

	(void)argc;
	(void)argv;
	r = store_job_get(s, id, &j);
	if (r < 0) {
		ctl_err("job %lld: %s", (long long)id, r == -ENOENT ? "no such job" : store_errmsg(s));
		return 1;
	}
	if (c->json)
		return ctl_print_json(store_job_json(j));
	printf("%-14s %lld\n", "Job:", (long long)j->id);
	printf("%-14s %lld\n", "Bug:", (long long)j->bug_id);
	printf("%-14s %s\n", "Kind:", j->kind);
	printf("%-14s %s\n", "State:", j->state);
	printf("%-14s %d of %d\n", "Attempts:", j->attempts, j->max_attempts);
	ctl_print_escaped("Lease owner:", j->lease_owner);
	ctl_print_escaped("Steps done:", j->checkpoint);
	if (j->progress) {
		_cleanup_free_ char *e = str_escape(j->progress, strlen(j->progress), 300);

		printf("%-14s %s (%s)\n", streq(j->state, "running") ? "Progress:" : "Last step:",
		       e ?: "", ctl_time(j->progress_at, t, sizeof(t)));
	}
	ctl_print_escaped("Error:", j->error);
	ctl_print_escaped("Result:", j->result);
	printf("%-14s %s\n", "Created:", ctl_time(j->created, t, sizeof(t)));
	printf("%-14s %s\n", "Started:", ctl_time(j->started, t, sizeof(t)));
	printf("%-14s %s\n", "Finished:", ctl_time(j->finished, t, sizeof(t)));
	return 0;
}

static void job_action_done(const char *cmd, int64_t id)
{
	printf("job %lld: %s\n", (long long)id,
	       streq(cmd, "retry") ? "queued again" : "cancelled");
}

/* true when the daemon's API took the action (*ret_exit: exit code). */
static bool job_action_api(struct ctl *c, const char *cmd, int64_t id, int *ret_exit)
{
	_cleanup_json_ json_t *answer = NULL;
	char path[64];

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/%s", (long long)id, cmd);
	if (!ctl_api_action(c, cmd, path, NULL, &answer, ret_exit))
		return false;
	if (*ret_exit == 0)
		job_action_done(cmd, id);
	return true;
}

static int job_action(struct ctl *c, const char *cmd, int (*act)(struct store *, int64_t))
{
	int64_t id = c->id;
	struct store *s;
	int r;

	/* a running daemon does it; else the store is changed directly */
	if (job_action_api(c, cmd, id, &r))
		return r;
	if (ctl_store(c, &s) < 0)
		return 1;
	r = act(s, id);
	if (r == -ENOENT)
		ctl_err("%s: no job %lld", cmd, (long long)id);
	else if (r == -EBUSY)
		ctl_err("%s: job %lld is still queued or running", cmd, (long long)id);
	else if (r == -EALREADY)
		ctl_err("%s: job %lld has already ended", cmd, (long long)id);
	else if (r < 0)
		ctl_err("%s: %s", cmd, store_errmsg(s));
	else
		job_action_done(cmd, id);
	return r < 0 ? 1 : 0;
}

int ctl_retry(struct ctl *c, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return job_action(c, "retry", store_job_retry);
}

int ctl_cancel(struct ctl *c, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return job_action(c, "cancel", store_job_cancel);
}

static int submit_print(struct ctl *c, int64_t id, bool created)
{
	if (c->json)
		return ctl_print_json(json_pack("{s:I, s:b}", "id", (json_int_t)id,
						     "created", created));
	printf("bug %lld %s\n", (long long)id, created ? "added" : "already known");
	return 0;
}

/* A bug's texts are absolute paths (the daemon's working folder is not
 * the caller's) of files that are there, or http(s) links that the
 * daemon's jobs fetch. */
static int submit_path(const char *opt, const char *path, char **ret)
{
	*ret = NULL;
	if (!path)
		return 0;
	if (fetch_is_link(path)) {
		*ret = strdup(path);
		return *ret ? 0 : -ENOMEM;
	}
	*ret = realpath(path, NULL);
	if (!*ret) {
		ctl_err("submit: %s %s: %s", opt, path, strerror(errno));
		return -errno;
	}
	return 0;
}

/* What the API is sent for a text: a link as it is, a file's content
 * (the daemon reads no path of ours). */
static json_t *submit_text(const char *path, int *ret_exit)
{
	_cleanup_free_ char *text = NULL;
	int r;

	if (!path)
		return json_null();
	if (fetch_is_link(path))
		return json_string(path);
	r = read_file_bounded(path, 4u << 20, &text, NULL);
	if (r < 0) {
		ctl_err("submit: %s: %s", path, strerror(-r));
		*ret_exit = 1;
		return NULL;
	}
	return json_string(text);
}

static bool submit_api(struct ctl *c, const struct store_bug *b, int *ret_exit)
{
	_cleanup_json_ json_t *body = NULL;
	_cleanup_json_ json_t *answer = NULL;
	const char *key;
	json_t *v, *rep, *repro, *syz, *cfg;
	void *tmp;

	*ret_exit = 0;
	rep = submit_text(b->report, ret_exit);
	repro = submit_text(b->repro_c, ret_exit);
	syz = submit_text(b->repro_syz, ret_exit);
	cfg = submit_text(b->kernel_config, ret_exit);
	if (*ret_exit) {
		json_decref(rep);
		json_decref(repro);
		json_decref(syz);
		json_decref(cfg);
		return true;
	}
	body = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o?, s:o?, s:o?, s:o?}", "id", b->source_id,
			 "title", b->title, "source", b->source, "tree", json_str_or_null(b->tree),
			 "commit", json_str_or_null(b->base_commit), "report", rep, "repro_c", repro,
			 "repro_syz", syz, "kernel_config", cfg);
	if (!body) {
		*ret_exit = 1;
		return true;
	}
	json_object_foreach_safe(body, tmp, key, v)
		if (json_is_null(v))
			json_object_del(body, key);
	if (!ctl_api_action(c, "submit", "/api/v1/bugs", body, &answer, ret_exit))
		return false;
	if (*ret_exit == 0)
		*ret_exit = submit_print(c, json_get_int(answer, "id", 0),
					 json_is_true(json_object_get(answer, "created")));
	return true;
}

int ctl_submit(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "title", required_argument, NULL, 't' },
		{ "id", required_argument, NULL, 'i' },
		{ "source", required_argument, NULL, 's' },
		{ "tree", required_argument, NULL, 'T' },
		{ "commit", required_argument, NULL, 'C' },
		{ "report", required_argument, NULL, 'r' },
		{ "repro", required_argument, NULL, 'R' },
		{ "repro-syz", required_argument, NULL, 'S' },
		{ "config", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_free_ char *report = NULL, *repro = NULL, *syz = NULL, *kconfig = NULL;
	const char *report_arg = NULL, *repro_arg = NULL, *syz_arg = NULL, *kconfig_arg = NULL;
	struct store_bug b = { .source = (char *)"manual" };
	bool created = false;
	struct store *s;
	int64_t id = 0;
	int ch, r;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 't': b.title = optarg; break;
		case 'i': b.source_id = optarg; break;
		case 's': b.source = optarg; break;
		case 'T': b.tree = optarg; break;
		case 'C': b.base_commit = optarg; break;
		case 'r': report_arg = optarg; break;
		case 'R': repro_arg = optarg; break;
		case 'S': syz_arg = optarg; break;
		case 'k': kconfig_arg = optarg; break;
		default: return 2;
		}
	}
	if (!b.title || !b.source_id || optind < argc) {
		ctl_err("submit: usage: kfixctl submit --title TITLE --id ID [--source S] "
			"[--tree NAME] [--commit REV] [--report FILE] [--repro FILE] [--repro-syz FILE] "
			"[--config FILE]");
		return 2;
	}
	if (strlen(b.title) > CTL_TITLE_MAX || strlen(b.source_id) > 256) {
		ctl_err("submit: title or id too long");
		return 2;
	}
	if (submit_path("--report", report_arg, &report) < 0 ||
	    submit_path("--repro", repro_arg, &repro) < 0 ||
	    submit_path("--repro-syz", syz_arg, &syz) < 0 ||
	    submit_path("--config", kconfig_arg, &kconfig) < 0)
		return 1;
	b.report = report;
	b.repro_c = repro;
	b.repro_syz = syz;
	b.kernel_config = kconfig;
	if (submit_api(c, &b, &r))
		return r;
	if (ctl_store(c, &s) < 0)
		return 1;
	r = store_bug_add(s, &b, &id, &created);
	if (r < 0) {
		ctl_err("submit: %s", store_errmsg(s));
		return 1;
	}
	return submit_print(c, id, created);
}

int ctl_outbox(struct ctl *c, int argc, char **argv)
{
	struct store_outbox **o = NULL;
	const char *state = NULL;
	int64_t limit = 0;
	struct store *s;
	size_t n = 0;
	char t[32];

	if (list_opts("outbox", argc, argv, &state, &limit) < 0)
		return 2;
	if (ctl_store(c, &s) < 0)
		return 1;
	if (store_outbox_query(s, &(struct store_query){ .state = state, .limit = limit,
							  .newest = true }, &o, &n) < 0) {
		ctl_err("outbox: %s", store_errmsg(s));
		return 1;
	}
	if (c->json) {
		json_t *a = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, store_outbox_json(o[i]));
		store_outbox_list_free(o, n);
		return ctl_print_json(a);
	}
	printf("%-6s %-6s %-6s %-8s %-5s %-16s %s\n", "ID", "BUG", "KIND", "STATE",
	       "TRIES", "SENT", "KEY");
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *k = str_escape(o[i]->idem_key, strlen(o[i]->idem_key), 80);

		printf("%-6lld %-6lld %-6s %-8s %-5d %-16s %s\n", (long long)o[i]->id,
		       (long long)o[i]->bug_id, o[i]->kind, o[i]->state, o[i]->tries,
		       ctl_time(o[i]->sent, t, sizeof(t)), k ? k : "?");
	}
	store_outbox_list_free(o, n);
	return 0;
}
