/* Intake: webhook deliveries and feed bugs into the store.
 *
 * A delivery is answered only after it is committed.  Deliveries that
 * arrive together (one MHD_run can read many) are committed in one
 * transaction: group commit, so that one fsync covers many answers.  The
 * commit waits up to [http] commit-delay after the first queued delivery,
 * so that clients answered by the last commit have their next delivery in
 * the same batch (without it, batches alternate between a few deliveries
 * and many), but not when every open connection already waits for an
 * answer (a single client never waits). */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/conf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "front-internal.h"
#include "intake-review.h"
#include "mailq.h"
#include "source.h"
#include "store.h"
#include "upstream.h"

#define INTAKE_MAX_PENDING 4096
#define INTAKE_BATCH 512

struct intake_item {
	struct intake_item *next;
	struct http_request *req;
	struct store_inbox in;
	/* syzbot */
	struct store_bug bug;
	/* forge */
	char *command, *author, *repo, *branch, *body;
	char *watched;	/* a push to this configured tree's branch */
	int64_t target_bug, number, project, comment_id;
	int version;
	bool comment;
	bool allowed;	/* the author is one of the hook's allow-users */
	/* mail: stored "pending", parsed by the mail queue helper (mailq.h) */
	bool mail;
};

static void item_free(struct intake_item *it)
{
	if (!it)
		return;
	free(it->in.key);
	free(it->in.type);
	free(it->in.hook);
	free(it->in.provider);
	free(it->in.event);
	free(it->in.payload);
	free(it->in.state);
	free(it->in.detail);
	free(it->bug.source_id);
	free(it->bug.title);
	free(it->bug.tree);
	free(it->bug.base_commit);
	free(it->bug.report);
	free(it->bug.repro_c);
	free(it->bug.repro_syz);
	free(it->bug.kernel_config);
	free(it->command);
	free(it->author);
	free(it->repo);
	free(it->branch);
	free(it->watched);
	free(it->body);
	free(it);
}
DEFINE_CLEANUP(struct intake_item, item_free)

/* Commands from a forge are taken only from the hook's allow-users,
 * read as each command arrives so that a reload that drops a user is
 * obeyed at once. */
static int allow_users_from_config(const struct config *cfg, const char *hook, char ***ret)
{
	return config_get_list(cfg, "hook", hook, "allow-users", ret);
}

static bool author_allowed(struct front *f, const char *hook, const char *author)
{
	_cleanup_strv_ char **users = NULL;

	if (!author || allow_users_from_config(f->cfg, hook, &users) < 0)
		return false;
	return users && strv_contains(users, author);
}

/* The configured tree whose url names the forge repository owner/name
 * and whose branch is the pushed ref, if any. */
static char *watched_tree(const struct front *f, const char *repo, const char *ref)
{
	_cleanup_strv_ char **trees = NULL;
	size_t rl = repo ? strlen(repo) : 0;

	if (!repo || !ref || !startswith(ref, "refs/heads/") ||
	    config_subsections(f->cfg, "tree", &trees) < 0)
		return NULL;
	for (size_t i = 0; trees && trees[i]; i++) {
		_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
		const char *url, *branch;
		size_t ul;

		if (tree_conf_from_config(f->cfg, trees[i], &tc, NULL) < 0 || !tc.url)
			continue;
		url = tc.url;
		branch = tc.branch;
		ul = strlen(url);
		while (ul > 0 && url[ul - 1] == '/')
			ul--;
		if (ul > 4 && strncmp(url + ul - 4, ".git", 4) == 0)
			ul -= 4;
		if (ul > rl && url[ul - rl - 1] == '/' && strncasecmp(url + ul - rl, repo, rl) == 0 &&
		    streq(ref + strlen("refs/heads/"), branch))
			return strdup(trees[i]);
	}
	return NULL;
}

static int item_from_delivery(struct front *f, const struct webhook_delivery *d,
			      struct intake_item **ret)
{
	_cleanup_(item_freep) struct intake_item *it = calloc(1, sizeof(*it));
	const struct forge_event *ev = d->forge;
	const char *state = streq(d->type, "mail") ? "pending" : "done";

	if (!it)
		return -ENOMEM;
	it->in.payload = malloc(d->len + 1);
	if (!it->in.payload)
		return -ENOMEM;
	memcpy(it->in.payload, d->body, d->len);
	it->in.payload[d->len] = '\0';
	it->in.payload_len = d->len;
	if (!strdup_each((char **[]){ &it->in.key, &it->in.type, &it->in.hook,
				  &it->in.provider, &it->in.event, &it->in.state },
		     (const char *const[]){ d->key, d->type, d->hook, d->provider,
					    d->event, state },
		     6))
		return -ENOMEM;
	if (d->bug) {
		const struct syzbot_crash *c = syzbot_bug_pick_crash(d->bug, false);

		it->bug.source = (char *)"syzbot";
		if (!strdup_each((char **[]){ &it->bug.source_id, &it->bug.title, &it->bug.tree,
					  &it->bug.base_commit, &it->bug.report,
					  &it->bug.repro_c, &it->bug.repro_syz,
					  &it->bug.kernel_config },
			     (const char *const[]){ d->extid, d->bug->title,
						    c ? c->kernel_source_git : NULL,
						    c ? c->kernel_source_commit : NULL,
						    c ? c->report_link : NULL,
						    c ? c->c_reproducer : NULL,
						    c ? c->syz_reproducer : NULL,
						    c ? c->kernel_config : NULL },
			     8))
			return -ENOMEM;
	}
	it->mail = streq(d->type, "mail");
	if (ev) {
		if (!strdup_each((char **[]){ &it->command, &it->author, &it->repo, &it->branch,
					  &it->body },
			     (const char *const[]){ ev->command, ev->author, ev->repo, ev->branch,
						    ev->body },
			     5))
			return -ENOMEM;
		it->target_bug = ev->bug;
		it->version = ev->version;
		it->comment = ev->kind == FORGE_COMMENT;
		it->number = ev->number;
		it->project = ev->project;
		it->comment_id = ev->comment_id;
		if (ev->kind == FORGE_PUSH && ev->bug <= 0)
			it->watched = watched_tree(f, ev->repo, ev->ref);
		it->allowed = author_allowed(f, d->hook, ev->author);
	}
	*ret = TAKE_PTR(it);
	return 0;
}

/* A review comment from an allowed user: kept like a mail reply, with
 * where to answer once the next version is out. */
static int apply_forge_review(struct front *f, struct intake_item *it, int64_t bug)
{
	_cleanup_json_ json_t *thread = json_pack("{s:s, s:s, s:s?, s:I, s:I}", "hook", it->in.hook,
						  "provider", it->in.provider, "repo", it->repo,
						  "number", (json_int_t)it->number, "project",
						  (json_int_t)it->project);
	_cleanup_free_ char *key = NULL;
	struct intake_forge_review r;
	const char *why = NULL;
	int e;

	if (!thread)
		return -ENOMEM;
	if (!it->body || it->body[strspn(it->body, " \t\r\n")] == '\0')
		return store_inbox_set_state(f->store, it->in.id, "ignored", bug, "an empty comment");
	if (it->comment_id > 0 ? asprintf(&key, "forge:%s:%lld", it->in.hook, (long long)it->comment_id) < 0
			       : asprintf(&key, "forge:%s:%s", it->in.hook, it->in.key) < 0)
		return -ENOMEM;
	r = (struct intake_forge_review){ .bug = bug, .version = it->version, .key = key,
					  .author = it->author ? it->author : "?",
					  .comments = it->body, .thread = thread };
	e = intake_review_forge(f->store, &r, &why);
	if (e < 0)
		return e;
	return store_inbox_set_state(f->store, it->in.id, why ? "ignored" : "done", bug,
				     why ? why : "review comment kept");
}

static int apply_forge(struct front *f, struct intake_item *it)
{
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	_cleanup_free_ char *detail = NULL;
	json_t *j;
	int r;

	if (it->watched) {
		/* a watched branch moved: its fix may have landed for any open bug */
		char why[96];

		r = upstream_ask_open(f->store, it->watched, "push");
		if (r < 0)
			return r;
		snprintf(why, sizeof(why), "a push to a watched branch: %d bug(s) to check", r);
		return store_inbox_set_state(f->store, it->in.id, "done", 0, why);
	}
	if (it->target_bug <= 0 || store_bug_get(f->store, it->target_bug, &b) < 0) {
		it->in.bug_id = 0;
		return store_inbox_set_state(f->store, it->in.id, "ignored", 0,
					     "not about a kfix branch of a known bug");
	}
	j = json_pack("{s:s?, s:s?, s:s?, s:s?, s:s}", "by", it->author, "repo", it->repo,
		      "branch", it->branch, "command", it->command, "via", "forge");
	detail = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!detail)
		return -ENOMEM;
	if ((it->command || it->comment) && !it->allowed)
		return store_inbox_set_state(f->store, it->in.id, "ignored", b->id,
					     it->command ? "the author may not send commands"
							 : "the author may not review");
	if (it->comment && !it->command)
		return apply_forge_review(f, it, b->id);
	if (it->command) {
		char kind[48];

		snprintf(kind, sizeof(kind), "request.%s", it->command);
		r = store_event_add(f->store, b->id, 0, kind, detail);
	} else {
		r = store_event_add(f->store, b->id, 0, "forge.push", detail);
	}
	if (r >= 0)
		r = store_inbox_set_state(f->store, it->in.id, "done", b->id, NULL);
	return r;
}

/* Stores one delivery and what it causes, inside the batch transaction. */
static int apply(struct front *f, struct intake_item *it, bool *ret_created)
{
	int64_t id;
	bool created;
	int r = store_inbox_add(f->store, &it->in, &id, &created);

	if (r < 0)
		return r;
	it->in.id = id;
	*ret_created = created;
	if (!created || it->mail)
		return 0;
	if (it->bug.source_id) {
		int64_t bug_id;
		bool bug_new;

		r = store_bug_add(f->store, &it->bug, &bug_id, &bug_new);
		if (r >= 0)
			r = store_inbox_set_state(f->store, id, "done", bug_id,
						  bug_new ? "new bug" : "known bug");
		return r;
	}
	if (streq(it->in.type, "forge"))
		return apply_forge(f, it);
	return 0;
}

static void count_delivery(struct front *f, const struct intake_item *it,
			   const char *result)
{
	char labels[96];

	snprintf(labels, sizeof(labels), "type=\"%s\",result=\"%s\"", it->in.type, result);
	metrics_counter_add(f->metrics, "kfix_webhook_deliveries_total",
			    "Authenticated webhook deliveries by type and result.", labels, 1);
}

static void answer(struct front *f, struct intake_item *it, int r, bool created)
{
	if (r < 0) {
		count_delivery(f, it, "failed");
		http_reply_error(it->req, 503, "could not store the delivery, try again");
		return;
	}
	count_delivery(f, it, created ? "stored" : "duplicate");
	if (created && it->mail) {
		(void)mailq_wait(f->mailq, it->req, it->in.id);
		return;
	}
	http_reply_json(it->req, 200,
			json_pack("{s:I, s:b, s:s}", "id", (json_int_t)it->in.id,
				  "duplicate", !created, "state",
				  created ? it->in.state : "known"));
}

static int on_flush(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct front *f = userdata;
	struct intake_item *batch = f->pending, *it;
	struct intake_item **tail = &batch;
	bool created[INTAKE_BATCH];
	int res[INTAKE_BATCH];
	size_t n = 0;
	uint64_t t0, t1;
	int r;

	/* take up to INTAKE_BATCH items off the queue */
	while (*tail && n < INTAKE_BATCH) {
		tail = &(*tail)->next;
		n++;
	}
	f->pending = *tail;
	*tail = NULL;
	f->n_pending -= n;
	if (!f->pending)
		f->pending_tail = &f->pending;
	t0 = clock_mono_usec();
	r = store_begin(f->store);
	n = 0;
	for (it = batch; it && r >= 0; it = it->next, n++) {
		/* one bad delivery must not sink the others */
		res[n] = store_begin(f->store);
		created[n] = false;
		if (res[n] >= 0)
			res[n] = apply(f, it, &created[n]);
		if (res[n] >= 0)
			res[n] = store_commit(f->store);
		else
			store_rollback(f->store);
	}
	t1 = clock_mono_usec();
	if (r >= 0)
		r = store_commit(f->store);
	if (r < 0)
		log_warning("intake: cannot commit %zu deliveries: %s", n, store_errmsg(f->store));
	else
		log_debug("intake: %zu deliveries stored in %lluus, committed in %lluus", n,
			  (unsigned long long)(t1 - t0), (unsigned long long)(clock_mono_usec() - t1));
	metrics_observe(f->metrics, "kfix_webhook_commit_seconds",
			"Time to store and commit one batch of deliveries.", NULL,
			(double)(clock_mono_usec() - t0) / 1e6);
	metrics_counter_add(f->metrics, "kfix_webhook_batches_total",
			    "Group commits of webhook deliveries.", NULL, 1);
	n = 0;
	while ((it = batch)) {
		batch = it->next;
		answer(f, it, r < 0 ? r : res[n], r < 0 ? false : created[n]);
		item_free(it);
		n++;
	}
	if (f->pending)
		return sd_event_source_set_enabled(f->flush, SD_EVENT_ONESHOT);
	return 0;
}

static int flush_arm(struct front *f)
{
	uint64_t now;
	int r, on = 0;

	/* nothing more can come when every open connection waits for us */
	bool now_please = f->n_pending >= INTAKE_BATCH ||
			  f->n_pending >= http_server_n_connections(f->http);

	r = sd_event_source_get_enabled(f->flush, &on);
	if (r < 0)
		return r;
	if (on && !now_please)
		return 0; /* already armed */
	r = sd_event_now(f->event, CLOCK_MONOTONIC, &now);
	if (r < 0)
		return r;
	r = sd_event_source_set_time(f->flush, now_please ? now : now + f->commit_delay);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(f->flush, SD_EVENT_ONESHOT);
}

static int on_delivery(void *userdata, const struct webhook_delivery *d,
		       struct http_request *req)
{
	struct front *f = userdata;
	struct intake_item *it;
	int r;

	if (f->n_pending >= INTAKE_MAX_PENDING)
		return http_reply_error(req, 503, "too many deliveries in flight");
	r = item_from_delivery(f, d, &it);
	if (r < 0)
		return r;
	it->req = req;
	*f->pending_tail = it;
	f->pending_tail = &it->next;
	f->n_pending++;
	http_request_suspend(req);
	return flush_arm(f);
}

/* ---- feeds ---- */

static int feed_state_get(void *userdata, const char *key, char **ret)
{
	struct front *f = userdata;

	return store_kv_get(f->store, key, ret);
}

static int feed_state_set(void *userdata, const char *key, const char *value)
{
	struct front *f = userdata;

	return store_kv_set(f->store, key, value);
}

static int feed_bug(void *userdata, const struct feed_bug *fb)
{
	struct front *f = userdata;
	struct store_bug b = {
		.source = (char *)"syzbot",
		.source_id = (char *)fb->extid,
		.title = (char *)fb->title,
		.tree = (char *)fb->tree,
		.base_commit = (char *)fb->base_commit,
		.report = (char *)fb->report,
		.repro_c = (char *)fb->repro_c,
		.repro_syz = (char *)fb->repro_syz,
		.kernel_config = (char *)fb->kernel_config,
	};
	int64_t id;
	bool created;
	int r = store_bug_add(f->store, &b, &id, &created);

	if (r < 0) {
		log_warning("feed %s: cannot store bug %s: %s", fb->feed, fb->extid,
			    store_errmsg(f->store));
		return r;
	}
	if (created)
		log_info("feed %s: new bug %lld from syzbot %s", fb->feed, (long long)id,
			 fb->extid);
	return created ? 1 : 0;
}

/* Records once that a bug is closed on the dashboard, for the pre-send
 * check (publish.c); a bug kfix patched is then compared with the fix
 * that closed it (upstream.h). */
static void feed_closed(struct front *f, const char *feed, const struct store_bug *b,
			const char *why, const char *commit)
{
	struct store_event **ev = NULL;
	struct store_query q = { .state = "feed.closed", .bug_id = b->id, .limit = 1 };
	size_t n = 0;
	int r = store_event_query(f->store, &q, &ev, &n);

	store_event_list_free(ev, n);
	if (r < 0 || n > 0)
		return;
	r = store_begin(f->store);
	if (r >= 0)
		r = store_event_add_json(f->store, b->id, 0, "feed.closed",
					 json_pack("{s:s, s:s, s:s?}", "feed", feed, "why", why,
						   "commit", commit));
	if (r >= 0 && b->patches > 0)
		r = upstream_ask(f->store, b->id, "feed", commit);
	r = r < 0 ? (store_rollback(f->store), r) : store_commit(f->store);
	if (r < 0)
		log_warning("feed %s: cannot record bug %lld as closed: %s", feed,
			    (long long)b->id, store_errmsg(f->store));
	else
		log_info("feed %s: bug %lld (syzbot %s): %s", feed, (long long)b->id,
			 b->source_id, why);
}

static void feed_fixed(void *userdata, const char *feed, const char *extid, const char *commit)
{
	struct front *f = userdata;
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;

	if (store_bug_find(f->store, "syzbot", extid, &b) >= 0)
		feed_closed(f, feed, b, "fix commits", commit);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Only bugs this feed handed over count: a bug known from mail may be on
 * another namespace's list. */
static bool feed_handed_over(struct front *f, const char *feed, const char *extid)
{
	_cleanup_free_ char *key = NULL, *v = NULL;

	if (asprintf(&key, "feed/%s/seen/%s", feed, extid) < 0)
		return false;
	return store_kv_get(f->store, key, &v) >= 0;
}

static void feed_listed(void *userdata, const char *feed, char *const *extids, size_t n)
{
	struct front *f = userdata;
	struct store_query q = { .source = "syzbot", .limit = 500 };
	struct store_bug **bugs;
	size_t nb;

	do {
		bugs = NULL;
		nb = 0;
		if (store_bug_query(f->store, &q, &bugs, &nb) < 0) {
			log_warning("feed %s: cannot list bugs: %s", feed, store_errmsg(f->store));
			return;
		}
		for (size_t i = 0; i < nb; i++) {
			const char *id = bugs[i]->source_id;

			q.after = bugs[i]->id;
			if (id && !bsearch(&id, extids, n, sizeof(char *), cmp_str) &&
			    feed_handed_over(f, feed, id))
				feed_closed(f, feed, bugs[i], "no longer on the open list", NULL);
		}
		store_bug_list_free(bugs, nb);
	} while (nb == (size_t)q.limit);
}

int intake_setup(struct front *f, char **ret_error)
{
	static const struct webhook_sink sink = { .deliver = on_delivery };
	static const struct feed_ops ops = {
		.state_get = feed_state_get,
		.state_set = feed_state_set,
		.bug = feed_bug,
		.fixed = feed_fixed,
		.listed = feed_listed,
	};
	int r;

	f->pending_tail = &f->pending;
	r = config_get_duration(f->cfg, "http", NULL, "commit-delay", &f->commit_delay);
	if (r >= 0)
		r = sd_event_add_time(f->event, &f->flush, CLOCK_MONOTONIC, 0, 1, on_flush, f);
	if (r >= 0)
		r = sd_event_source_set_enabled(f->flush, SD_EVENT_OFF);
	if (r < 0)
		return r;
	r = webhooks_new(f->http, f->cfg, f->metrics, &sink, f, &f->hooks, ret_error);
	if (r < 0)
		return r;
	return feeds_new(f->event, f->cfg, f->metrics, &ops, f, &f->feeds, ret_error);
}

void intake_free(struct front *f)
{
	/* answer what is still queued before the server goes */
	while (f->pending)
		on_flush(f->flush, 0, f);
	feeds_free(f->feeds);
	f->feeds = NULL;
	webhooks_free(f->hooks);
	f->hooks = NULL;
	sd_event_source_disable_unref(f->flush);
	f->flush = NULL;
}
