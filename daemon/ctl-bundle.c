/* kfixctl bundle: a job's story in a folder that can be attached to a bug
 * report about kfix itself, with secrets and personal data scrubbed.
 *
 * The folder holds manifest.json, trajectory.jsonl and report.txt; every
 * string of each went through scrub.c, with the secrets of the config
 * searched for literally besides the patterns. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/diagnose.h"
#include "agent/trajectory.h"
#include "common/buf.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"
#include "scrub.h"
#include "store.h"

#define BUNDLE_SCHEMA 1
#define BUNDLE_REPORT_MAX (4u * 1024 * 1024)

static int write_file_at(const char *dir, const char *name, const void *data, size_t len)
{
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	return write_file_atomic(path, data, len, 0644);
}

struct secrets_walk {
	const struct config *cfg;
	char **list;
	int r;
};

static int add_secret(const char *section, const char *sub, const char *key,
		      const char *value, enum config_type type, void *ud)
{
	struct secrets_walk *w = ud;
	_cleanup_free_ char *v = NULL;

	(void)value;
	if (type != CONFIG_SECRET || config_get_secret(w->cfg, section, sub, key, &v) < 0)
		return 0; /* a secret kfix cannot read is not in what it wrote either */
	if (strv_push(&w->list, v) < 0)
		return w->r = -ENOMEM, 1;
	return 0;
}

/* Every secret of the config, and the API tokens kfixctl takes from its
 * environment. */
int ctl_known_secrets(const struct config *cfg, char ***ret)
{
	static const char *const env[] = { "KFIX_API_TOKEN", "KFIX_ADMIN_TOKEN" };
	struct secrets_walk w = { .cfg = cfg };

	config_each(cfg, add_secret, &w);
	for (size_t i = 0; w.r >= 0 && i < ARRAY_SIZE(env); i++)
		if (getenv(env[i]) && strv_push(&w.list, getenv(env[i])) < 0)
			w.r = -ENOMEM;
	if (w.r < 0) {
		strv_free(w.list);
		return w.r;
	}
	*ret = w.list;
	return 0;
}

static int write_json_file(const char *dir, const char *name, const json_t *j, size_t flags)
{
	_cleanup_free_ char *text = json_dumps(j, flags);
	struct buf b = BUF_INIT(TRAJECTORY_FILE_MAX);
	int r;

	if (!text)
		return -ENOMEM;
	r = buf_puts(&b, text);
	if (r >= 0)
		r = buf_puts(&b, "\n");
	if (r >= 0)
		r = write_file_at(dir, name, b.data, b.len);
	buf_free(&b);
	return r;
}

static int write_trajectory(const char *dir, const json_t *events)
{
	struct buf b = BUF_INIT(TRAJECTORY_FILE_MAX);
	json_t *e;
	size_t i;
	int r = 0;

	json_array_foreach(events, i, e) {
		_cleanup_free_ char *line = json_dumps(e, JSON_COMPACT);

		r = line ? buf_printf(&b, "%s\n", line) : -ENOMEM;
		if (r < 0)
			break;
	}
	if (r >= 0)
		r = write_file_at(dir, "trajectory.jsonl", b.data ?: "", b.len);
	buf_free(&b);
	return r;
}

struct bundle {
	struct store_job *job;
	struct store_bug *bug; /* NULL: the job is about no bug */
	json_t *events;
	char *report;	       /* NULL: none */
};

static void bundle_clear(struct bundle *b)
{
	store_job_free(b->job);
	store_bug_free(b->bug);
	json_decref(b->events);
	free(b->report);
}

static int bundle_load(struct ctl *c, struct store *s, int64_t id, struct bundle *b)
{
	size_t n;
	int r;

	r = store_job_get(s, id, &b->job);
	if (r < 0)
		return r;
	if (b->job->bug_id > 0 && store_bug_get(s, b->job->bug_id, &b->bug) < 0)
		b->bug = NULL;
	if (b->bug && b->bug->report &&
	    read_file_bounded(b->bug->report, BUNDLE_REPORT_MAX, &b->report, &n) < 0)
		b->report = NULL;
	r = ctl_job_trajectory(c, id, &b->events);
	return r == -ENOMEM ? r : r < 0 ? -EIO : 0;
}

/* The failure's family and the step it is attributed to, when the run
 * ended. */
static json_t *failure(const json_t *events)
{
	_cleanup_(diagnosis_freep) struct diagnosis *d = NULL;
	json_t *last = json_array_get(events, json_array_size(events) - 1);

	if (!streq(json_get_str(last, "kind") ?: "", "run.end") ||
	    diagnose_trajectory(events, NULL, &d) < 0)
		return NULL;
	return diagnosis_json(d);
}

static json_t *manifest(const struct bundle *b, size_t redactions)
{
	json_t *summary = trajectory_summary(b->events);
	char now[32];
	time_t t = time(NULL);
	struct tm tm;

	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	return json_pack("{s:i, s:s, s:s, s:{s:I, s:s, s:s, s:i, s:s?}, s:o?, s:{s:I, s:o?},"
			 " s:o?, s:b, s:I, s:[s, s, s?]}",
			 "schema", BUNDLE_SCHEMA, "kfix", PACKAGE_VERSION, "created", now,
			 "job", "id", (json_int_t)b->job->id, "kind", b->job->kind,
			 "state", b->job->state, "attempts", b->job->attempts,
			 "error", b->job->error,
			 "bug", b->bug ? json_pack("{s:I, s:s, s:s}", "id", (json_int_t)b->bug->id,
						   "title", b->bug->title, "state", b->bug->state)
				       : NULL,
			 "counts", "events", (json_int_t)json_array_size(b->events),
			 "summary", summary, "diagnosis", failure(b->events),
			 "scrubbed", 1, "redactions", (json_int_t)redactions,
			 "files", "manifest.json", "trajectory.jsonl",
			 b->report ? "report.txt" : NULL);
}

/* Scrubs what is shown, then writes it; the manifest last, so that a
 * folder with a manifest is a whole bundle. */
static int bundle_write(struct bundle *b, struct scrub *sc, const char *dir)
{
	_cleanup_json_ json_t *m = NULL;
	_cleanup_free_ char *report = NULL;
	int r = scrub_json(sc, b->events);

	if (r >= 0 && b->report)
		r = scrub_text(sc, b->report, &report);
	if (r < 0)
		return r;
	m = manifest(b, 0);
	if (!m)
		return -ENOMEM;
	r = scrub_json(sc, m);
	if (r >= 0)
		r = json_object_set_new(m, "redactions", json_integer((json_int_t)scrub_count(sc)));
	if (r >= 0)
		r = write_trajectory(dir, b->events);
	if (r >= 0 && report)
		r = write_file_at(dir, "report.txt", report, strlen(report));
	if (r >= 0)
		r = write_json_file(dir, "manifest.json", m, JSON_INDENT(2) | JSON_SORT_KEYS);
	return r;
}

int ctl_bundle(struct ctl *c, int argc, char **argv)
{
	_cleanup_(scrub_freep) struct scrub *sc = NULL;
	_cleanup_free_ char *dflt = NULL;
	struct bundle b = { 0 };
	const char *out;
	char **secrets = NULL;
	struct config *cfg;
	struct store *s;
	int64_t id;
	int r;

	if (ctl_parse_option_id("bundle", "[--output DIR] JOB", argc, argv,
				(const char *const[]){ "output", NULL }, &out, &id) < 0)
		return 2;
	if (!out && asprintf(&dflt, "kfix-bundle-%lld", (long long)id) < 0)
		return 1;
	out = out ?: dflt;
	if (ctl_store(c, &s) < 0 || ctl_config(c, &cfg) < 0)
		return 1;
	r = bundle_load(c, s, id, &b);
	if (r == -ENOENT)
		ctl_err("bundle: no job %lld", (long long)id);
	else if (r < 0)
		ctl_err("bundle: job %lld: %s", (long long)id, strerror(-r));
	if (r >= 0 && (r = ctl_known_secrets(cfg, &secrets)) >= 0 && (r = scrub_new(secrets, &sc)) < 0)
		ctl_err("bundle: %s", strerror(-r));
	strv_free(secrets);
	/* never into a folder that exists: it might hold what was not scrubbed */
	if (r >= 0 && mkdir(out, 0755) < 0) {
		r = -errno;
		ctl_err("bundle: cannot create %s: %s", out, strerror(errno));
	}
	if (r >= 0 && (r = bundle_write(&b, sc, out)) < 0)
		ctl_err("bundle: cannot write %s: %s", out, strerror(-r));
	if (r >= 0)
		printf("%s: job %lld, %zu events, %zu replacements\n", out, (long long)id,
		       json_array_size(b.events), scrub_count(sc));
	bundle_clear(&b);
	return r < 0 ? 1 : 0;
}
