#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive.h"
#include "common/conf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "hooks/auth.h"
#include "intake-mail.h"
#include "jobs.h"
#include "mail/inbox.h"
#include "mail/parse.h"
#include "store.h"

#define ARCHIVE_NAME_MAX 64

struct poll_state {
	struct job_ctx *ctx;
	const char *name;
	char pos_key[128];
	int taken, known;
};

static int kv_key(char *buf, size_t n, const char *name, const char *what)
{
	int r = snprintf(buf, n, "archive/%s/%s", name, what);

	return r < 0 || (size_t)r >= n ? -ENAMETOOLONG : 0;
}

/* One message: stored and applied with the position after it, in one
 * transaction.  Messages with nothing for kfix leave no trace. */
static int on_message(const struct mail *m, const char *raw, size_t len,
		      const char *pos, void *userdata)
{
	struct poll_state *st = userdata;
	struct store *s = st->ctx->store;
	_cleanup_(intake_mail_freep) struct intake_mail *im = NULL;
	_cleanup_free_ char *key = NULL, *payload = NULL;
	struct store_inbox in = {
		.type = (char *)"mail", .hook = (char *)st->name,
		.provider = (char *)"public-inbox", .state = (char *)"done",
	};
	bool created = false;
	int r;

	if (!m || !mail_message_id(m))
		return 0; /* not a message kfix can answer or deduplicate */
	r = intake_mail_new(m, &im);
	if (r < 0)
		return r;
	if (!intake_mail_wanted(im))
		return 0;
	/* the webhook's key: a mail that came both ways counts once */
	if (asprintf(&key, "mail:%s", mail_message_id(m)) < 0 || !(payload = strndup(raw, len)))
		return -ENOMEM;
	in.key = key;
	in.event = (char *)mail_kind_name(mail_kind(m));
	in.payload = payload;
	in.payload_len = len;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = store_inbox_add(s, &in, &in.id, &created);
	if (r >= 0 && created)
		r = intake_mail_apply(s, st->ctx->cfg, im, &in);
	if (r >= 0)
		r = store_kv_set(s, st->pos_key, pos);
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	r = store_commit(s);
	if (r >= 0 && created)
		st->taken++;
	else if (r >= 0)
		st->known++;
	return r;
}

/* An [archive "NAME"] section and where its mirrors live. */
struct archive_conf {
	const char *url; /* NULL: not configured */
	int64_t max_messages;
	bool start_at_head;
	uint64_t poll_interval_usec;
	char *cache_dir;
};

static void archive_conf_done(struct archive_conf *c)
{
	free(c->cache_dir);
	*c = (struct archive_conf){ 0 };
}

static int archive_conf_from_config(const struct config *cfg, const char *name,
				    struct archive_conf *ret)
{
	struct archive_conf c = { 0 };
	const char *start = NULL;
	int r;

	(void)config_get_string(cfg, "archive", name, "url", &c.url);
	(void)config_get_int(cfg, "archive", name, "max-messages", &c.max_messages);
	(void)config_get_string(cfg, "archive", name, "start", &start);
	(void)config_get_duration(cfg, "archive", name, "poll-interval", &c.poll_interval_usec);
	c.start_at_head = streq_ptr(start, "head");
	r = config_get_path(cfg, "kfix", NULL, "cache-dir", &c.cache_dir);
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}

/* A new archive followed from its head: the list's history holds nothing
 * kfix was asked for, and reading it all would take hours. */
static int archive_start_at_head(struct job_ctx *ctx, struct poll_state *st, struct inbox *ib)
{
	_cleanup_free_ char *head = NULL, *err = NULL;
	int r = inbox_head(ib, &head, &err);

	if (r < 0)
		return job_fail(ctx, r, "archive %s: %s", st->name, err ? err : strerror(-r));
	r = store_kv_set(ctx->store, st->pos_key, head);
	if (r < 0)
		return r;
	log_info("archive %s: followed from its head, position %s", st->name, head);
	{
		_cleanup_json_ json_t *res = json_pack("{s:s, s:i, s:s, s:b}", "archive", st->name,
						      "messages", 0, "position", head, "head", 1);

		ctx->result = res ? json_dumps(res, JSON_COMPACT) : NULL;
	}
	return ctx->result ? 0 : -ENOMEM;
}

static int job_archive_poll_run(struct job_ctx *ctx)
{
	_cleanup_json_ json_t *args = NULL;
	_cleanup_(inbox_freep) struct inbox *ib = NULL;
	_cleanup_free_ char *dir = NULL, *pos = NULL, *newpos = NULL, *err = NULL;
	_cleanup_(archive_conf_done) struct archive_conf ac = { 0 };
	struct poll_state st = { .ctx = ctx };
	char hex[AUTH_SHA256_HEX_LEN + 1];
	json_error_t jerr;
	int r, n = 0;

	if (!ctx->job->args ||
	    json_parse_bounded(ctx->job->args, strlen(ctx->job->args), 4096, &args, &jerr) < 0 ||
	    !(st.name = json_get_str(args, "archive")) || strlen(st.name) > ARCHIVE_NAME_MAX ||
	    strchr(st.name, '/') || kv_key(st.pos_key, sizeof(st.pos_key), st.name, "position") < 0) {
		ctx->permanent = true;
		return job_fail(ctx, -EINVAL, "archive-poll job without {\"archive\": NAME}");
	}
	r = archive_conf_from_config(ctx->cfg, st.name, &ac);
	if (r < 0)
		return r;
	if (!ac.url) {
		ctx->permanent = true;
		return job_fail(ctx, -ENOENT, "archive '%s' is not configured", st.name);
	}
	/* the mirror is the URL's: a section renamed or pointed elsewhere
	 * must not read another archive's messages */
	r = auth_hmac_sha256_hex("kfix-archive", NULL, ac.url, strlen(ac.url), hex);
	if (r < 0 || asprintf(&dir, "%s/archives/%s-%.16s", ac.cache_dir, st.name, hex) < 0)
		return r < 0 ? r : -ENOMEM;
	if (store_kv_get(ctx->store, st.pos_key, &pos) == -ENOMEM)
		return -ENOMEM;
	r = inbox_open(ac.url, dir, &ib, &err);
	if (r < 0)
		return job_fail(ctx, r, "archive %s: %s", st.name, err ? err : strerror(-r));
	if (!pos && ac.start_at_head)
		return archive_start_at_head(ctx, &st, ib);
	r = inbox_poll(ib, pos, (int)ac.max_messages, on_message, &st, &newpos, &n, &err);
	/* messages that were skipped (nothing for kfix) move the position
	 * too; what was taken already moved it */
	if (newpos && !streq_ptr(newpos, pos)) {
		int k = store_kv_set(ctx->store, st.pos_key, newpos);

		if (r >= 0)
			r = k;
	}
	if (r < 0)
		return job_fail(ctx, r, "archive %s: %s", st.name, err ? err : strerror(-r));
	log_info("archive %s: %d new message(s), %d taken, %d already known", st.name, n,
		 st.taken, st.known);
	{
		_cleanup_json_ json_t *res = json_pack("{s:s, s:i, s:i, s:i, s:s?}", "archive",
						      st.name, "messages", n, "taken", st.taken,
						      "known", st.known, "position", newpos);

		ctx->result = res ? json_dumps(res, JSON_COMPACT) : NULL;
	}
	return ctx->result ? 0 : -ENOMEM;
}

static int64_t kv_int(struct store *s, const char *key)
{
	_cleanup_free_ char *v = NULL;
	uint64_t n = 0;

	if (store_kv_get(s, key, &v) < 0 || parse_uint64(v, &n) < 0)
		return 0;
	return (int64_t)n;
}

/* The archive's last poll job, if it is still queued or running. */
static bool poll_pending(struct store *s, const char *name)
{
	_cleanup_(store_job_freep) struct store_job *j = NULL;
	char key[128];
	int64_t id;

	if (kv_key(key, sizeof(key), name, "job") < 0 || (id = kv_int(s, key)) <= 0)
		return false;
	if (store_job_get(s, id, &j) < 0)
		return false;
	return streq(j->state, "queued") || streq(j->state, "running");
}

static int queue_poll(struct store *s, const char *name, int64_t now)
{
	_cleanup_free_ char *args = NULL;
	char key[128], v[32];
	int64_t id = 0;
	json_t *j = json_pack("{s:s}", "archive", name);
	int r;

	args = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!args)
		return -ENOMEM;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = store_job_add(s, 0, "archive-poll", args, 5, 2, &id);
	snprintf(v, sizeof(v), "%lld", (long long)id);
	if (r >= 0 && (r = kv_key(key, sizeof(key), name, "job")) >= 0)
		r = store_kv_set(s, key, v);
	snprintf(v, sizeof(v), "%lld", (long long)now);
	if (r >= 0 && (r = kv_key(key, sizeof(key), name, "queued")) >= 0)
		r = store_kv_set(s, key, v);
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	return store_commit(s);
}

/* When the archive's next poll is due (seconds since the epoch); -ENOENT
 * for a name kfix does not poll, or one whose poll is still pending (its
 * job's end wakes the daemon). */
static int poll_due(const struct config *cfg, struct store *store, const char *name,
		    int64_t *ret_sec)
{
	_cleanup_(archive_conf_done) struct archive_conf ac = { 0 };
	char key[128];
	int r;

	if (strlen(name) > ARCHIVE_NAME_MAX || strchr(name, '/') ||
	    kv_key(key, sizeof(key), name, "queued") < 0 || poll_pending(store, name))
		return -ENOENT;
	r = archive_conf_from_config(cfg, name, &ac);
	if (r < 0)
		return r;
	*ret_sec = kv_int(store, key) + (int64_t)(ac.poll_interval_usec / 1000000);
	return 0;
}

int archive_next_due(const struct config *cfg, struct store *store, int64_t *ret_sec)
{
	_cleanup_strv_ char **names = NULL;
	int64_t due = INT64_MAX, t;
	int r = config_subsections(cfg, "archive", &names);

	if (r < 0)
		return r;
	for (size_t i = 0; names && names[i]; i++)
		if (poll_due(cfg, store, names[i], &t) >= 0)
			due = MIN(due, t);
	if (due == INT64_MAX)
		return -ENOENT;
	*ret_sec = due;
	return 0;
}

int archive_schedule(const struct config *cfg, struct store *store)
{
	_cleanup_strv_ char **names = NULL;
	int64_t now = (int64_t)time(NULL), due;
	int r = config_subsections(cfg, "archive", &names);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	for (size_t i = 0; names && names[i] && r >= 0; i++)
		if (poll_due(cfg, store, names[i], &due) >= 0 && now >= due)
			r = queue_poll(store, names[i], now);
	return r;
}

const struct job_kind job_kind_archive_poll = {
	.name = "archive-poll",
	.run = job_archive_poll_run,
	.doc = "fetches a followed public-inbox archive and takes its new messages "
		"through the mail intake",
};
