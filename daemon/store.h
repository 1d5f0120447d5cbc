/* The durable state of kfix: bugs, jobs with leases, attempts, the outbox
 * and an event log, in SQLite (WAL mode).  Every state change is one
 * transaction, so a crash at any point leaves the previous or the next
 * state, never a mix. */
#ifndef KFIX_STORE_H
#define KFIX_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/macro.h"

struct store;

struct store_bug {
	int64_t id;
	char *source;	 /* "syzbot", "mail", "manual" */
	char *source_id; /* e.g. syzbot extid */
	char *title;
	char *state;
	char *tree;
	char *base_commit;
	/* Absolute paths of local files (NULL when there is none); intake
	 * downloads what a source only links to before it adds the bug. */
	char *report;	  /* the crash report */
	char *repro_c;
	char *repro_syz;
	char *kernel_config;
	int64_t created, updated; /* unix seconds */
	/* Set by the reproduce job: the crash it reproduced, symbolised with
	 * the base kernel's vmlinux (a local file), and its guilty file. */
	char *crash_report;
	char *guilty_file;
	int64_t patches; /* patch versions made, read with the row */
};

struct store_job {
	int64_t id;
	int64_t bug_id; /* 0 when not about a bug */
	char *kind;
	char *state; /* queued, running, done, failed, cancelled */
	int priority;
	int attempts, max_attempts;
	char *lease_owner;
	int64_t lease_expires, not_before;
	char *args, *result, *error; /* JSON, JSON, text */
	char *checkpoint;	     /* last finished step, for resuming */
	int64_t created, started, finished;
	char *progress;		     /* what it is doing now (or did last) */
	int64_t progress_at;
};

struct store_outbox {
	int64_t id;
	int64_t bug_id;
	char *kind; /* "mail", "push" */
	char *idem_key;
	char *payload;
	char *state; /* pending, sent, parked */
	int tries;
	int64_t next_try;
	char *last_error;
	int64_t created, sent;
};

struct store_event {
	int64_t id, ts, bug_id, job_id;
	char *kind, *detail;
};

struct store_stats {
	int64_t bugs_by_state[16];
	int64_t jobs_queued, jobs_running, jobs_done, jobs_failed, jobs_cancelled;
	int64_t outbox_pending, outbox_sent, outbox_parked;
	int64_t oldest_queued; /* unix seconds, 0 if none */
	int64_t llm_wait_until; /* the day's LLM budget is spent until then, or 0 */
	char scheduler[16];	/* running, paused or draining */
	/* bugs whose real fix landed and was compared (job-compare.c), and
	 * those where kfix's patch matched it (same, same-place) */
	int64_t upstream_compared, upstream_matched;
};

/* Bug states, in the order of the design's life cycle. */
extern const char *const store_bug_states[];
bool store_bug_state_valid(const char *state);
bool store_bug_transition_ok(const char *from, const char *to);

/* The store's file and the knowledge base, in [kfix] state-dir. */
#define STATE_DB "kfix.db"
#define STATE_KNOWLEDGE "knowledge.jsonl"

/* target: an SQLite file's path, or a libpq connection URI
 * (postgresql://USER@HOST:PORT/DB).  Creates or migrates the schema.
 * store_open_target says in err why it failed. */
int store_open_target(const char *target, char *err, size_t errlen, struct store **ret);
/* The store the config names: [store] url (with [store] password), else
 * STATE-DIR/kfix.db.  err says why it failed, without the password. */
struct config;
int store_open_config(const struct config *cfg, char *err, size_t errlen, struct store **ret);
/* whether the config names a shared (PostgreSQL) store */
bool store_shared(const struct config *cfg);
bool store_url_valid(const char *url);
int store_open(const char *path, struct store **ret);
void store_close(struct store *s);
DEFINE_CLEANUP(struct store, store_close)
int store_schema_version(struct store *s);
/* What the last statement's failure was (for the caller to log): each
 * statement clears it, a rollback does not, so it explains the failed
 * call that came just before; "no database error" when that call failed
 * for another reason. */
const char *store_errmsg(struct store *s);

int store_begin(struct store *s);
int store_commit(struct store *s);
void store_rollback(struct store *s);

/* Adds a bug unless (source, source_id) is known; *ret_created says which. */
int store_bug_add(struct store *s, const struct store_bug *b, int64_t *ret_id,
		  bool *ret_created);
int store_bug_get(struct store *s, int64_t id, struct store_bug **ret);
int store_bug_find(struct store *s, const char *source, const char *source_id,
		   struct store_bug **ret);
/* Moves a bug to state (checked against the life cycle) and logs it. */
int store_bug_set_state(struct store *s, int64_t id, const char *state,
			const char *why);
/* Replaces a text field ("report", "repro_c", "repro_syz",
 * "kernel_config", "crash_report", "guilty_file") of a bug, e.g. a URL by
 * the file it was fetched to. */
int store_bug_set_text(struct store *s, int64_t id, const char *field, const char *path);
/* The Message-ID (without <>) of the bug's syzbot report mail: the first
 * one recorded stays (the thread kfix answers in). */
int store_bug_set_report_message_id(struct store *s, int64_t id,
				    const char *message_id);
int store_bug_report_message_id(struct store *s, int64_t id, char **ret);
int store_bug_list(struct store *s, const char *state, int64_t limit,
		   struct store_bug ***ret, size_t *ret_n);
void store_bug_free(struct store_bug *b);
/* Each store_*_list_free frees the array of a _list or _query call and
 * its n rows. */
void store_bug_list_free(struct store_bug **items, size_t n);
DEFINE_CLEANUP(struct store_bug, store_bug_free)
/* A bug row as JSON (kfixctl --json and the API share the shape). */
struct json_t *store_bug_json(const struct store_bug *b);

int store_job_add(struct store *s, int64_t bug_id, const char *kind,
		  const char *args, int priority, int max_attempts,
		  int64_t *ret_id);
/* Leases the most urgent runnable job (queued, or running with an expired
 * lease) to owner; -ENOENT when there is none. */
int store_job_lease(struct store *s, const char *owner, uint64_t lease_usec,
		    struct store_job **ret);
int store_job_renew(struct store *s, int64_t id, const char *owner,
		    uint64_t lease_usec);
/* Gives up every lease held by owner (a restart of the same daemon). */
int store_job_release_owner(struct store *s, const char *owner,
			    int64_t *ret_n);
/* What the running job of that lease owner is doing now, one line. */
int store_job_progress(struct store *s, int64_t id, const char *owner, const char *text);
int store_job_checkpoint(struct store *s, int64_t id, const char *owner,
			 const char *step);
int store_job_finish(struct store *s, int64_t id, const char *owner,
		     const char *result);
/* Requeues after retry_delay_usec while attempts remain (and the failure
 * is not permanent), else fails the job for good.  -ESTALE unless owner
 * holds the job in its attempt number 'attempt' (0: any): the daemon's
 * owner name is the same for every attempt, and a process of an earlier
 * attempt must not fail a later one. */
int store_job_fail(struct store *s, int64_t id, const char *owner, int64_t attempt,
		   const char *error, uint64_t retry_delay_usec, bool permanent,
		   bool *ret_final);
int store_job_retry(struct store *s, int64_t id);
int store_job_cancel(struct store *s, int64_t id);
int store_job_get(struct store *s, int64_t id, struct store_job **ret);
int store_job_list(struct store *s, const char *state, int64_t bug_id,
		   int64_t limit, struct store_job ***ret, size_t *ret_n);
/* 1 when the bug has a queued or running job of one of kinds
 * (NULL-terminated), 0 when not. */
int store_job_busy(struct store *s, int64_t bug_id, const char *const *kinds);
void store_job_free(struct store_job *j);
void store_job_list_free(struct store_job **items, size_t n);
DEFINE_CLEANUP(struct store_job, store_job_free)
/* A job row as JSON. */
struct json_t *store_job_json(const struct store_job *j);

/* Records a message or push before it is attempted; a known idem_key is
 * not added twice (*ret_created false). */
int store_outbox_add(struct store *s, int64_t bug_id, const char *kind,
		     const char *idem_key, const char *payload, int64_t *ret_id,
		     bool *ret_created);
int store_outbox_next(struct store *s, struct store_outbox **ret);
/* The next due entry, claimed by owner ("HOST:PID" of a daemon) for
 * lease_usec: no other claim takes it meanwhile.  Delivering it ends the
 * claim (mark_sent, mark_retry, park); an owner that died leaves it to
 * the lease's end or to store_outbox_release_owner. */
int store_outbox_claim(struct store *s, const char *owner, uint64_t lease_usec,
		       struct store_outbox **ret);
#define STORE_OUTBOX_CLAIMERS_MAX 1024
/* The owners holding claims (NULL-terminated list, strv_free). */
int store_outbox_claimers(struct store *s, char ***ret, size_t *ret_n);
int store_outbox_release_owner(struct store *s, const char *owner, int64_t *ret_n);
/* The earliest time (CLOCK_REALTIME usec) at which a queued job may run
 * or a running job's lease runs out (jobs), or an outbox entry is due
 * (outbox); -ENOENT when nothing waits. */
int store_next_due(struct store *s, bool jobs, bool outbox, int64_t *ret_usec);
int store_outbox_mark_sent(struct store *s, int64_t id);
int store_outbox_mark_retry(struct store *s, int64_t id, const char *error,
			    uint64_t delay_usec);
int store_outbox_park(struct store *s, int64_t id, const char *error);
/* The state of the entry with this key; -ENOENT when there is none. */
int store_outbox_state(struct store *s, const char *idem_key, char **ret);
int store_outbox_list(struct store *s, const char *state, int64_t limit,
		      struct store_outbox ***ret, size_t *ret_n);
void store_outbox_free(struct store_outbox *o);
void store_outbox_list_free(struct store_outbox **items, size_t n);
DEFINE_CLEANUP(struct store_outbox, store_outbox_free)

int store_event_add(struct store *s, int64_t bug_id, int64_t job_id,
		    const char *kind, const char *detail);
/* The same with the detail as JSON, which it takes (NULL: -ENOMEM, as
 * from a json_pack that failed). */
int store_event_add_json(struct store *s, int64_t bug_id, int64_t job_id, const char *kind,
			 struct json_t *detail);
int store_event_list(struct store *s, int64_t bug_id, int64_t job_id,
		     int64_t limit, struct store_event ***ret, size_t *ret_n);
void store_event_free(struct store_event *e);
void store_event_list_free(struct store_event **items, size_t n);

int store_kv_get(struct store *s, const char *key, char **ret);
/* The scheduler's mode (kfixctl pause, resume, drain): "running" when
 * never set. */
int store_scheduler_mode(struct store *s, char *buf, size_t n);
/* Sets it, with a scheduler.mode event saying by whom; -EINVAL for a
 * mode other than running, paused, draining. */
int store_scheduler_set(struct store *s, const char *mode, const char *by);
int store_kv_set(struct store *s, const char *key, const char *value);

int store_stats(struct store *s, struct store_stats *ret);

/* A validated patch; a new version supersedes the open one of its bug. */
struct store_patch {
	int64_t id, bug_id;
	int version;
	char *state; /* validated, awaiting-approval, approved, sent, rejected,
		      * superseded, held (a pre-send check failed) */
	char *subject, *message, *diff, *explanation;
	char *evidence; /* JSON: reproduction table, probe lines, verdicts */
	char *base_commit, *branch, *message_id, *sent_to;
	char *decided_by, *reason;
	int64_t created, updated;
};

extern const char *const store_patch_states[];
/* A job's and an outbox row's states, NULL-terminated. */
extern const char *const store_job_states[];
extern const char *const store_outbox_states[];
/* Adds the bug's next version (1, 2, ...). */
int store_patch_add(struct store *s, const struct store_patch *p,
		    int64_t *ret_id, int *ret_version);
int store_patch_get(struct store *s, int64_t id, struct store_patch **ret);
int store_patch_list(struct store *s, const char *state, int64_t bug_id,
		     int64_t limit, struct store_patch ***ret, size_t *ret_n);
/* Moves a patch along validated -> awaiting-approval -> approved -> sent
 * (or rejected; approved -> held -> approved or rejected when a pre-send
 * check fails); -EPERM for any other move. */
int store_patch_decide(struct store *s, int64_t id, const char *state,
		       const char *who, const char *reason);
/* A patch as JSON (full: with its message, diff, explanation, base and
 * evidence), and syzbot's "#syz test" answers about it, oldest first. */
struct json_t *store_patch_json(const struct store_patch *p, bool full);
/* The texts of a patch's evidence, in the order a reader wants them, each
 * with its heading; ends with { NULL, NULL }. */
struct store_evidence_text {
	const char *key, *heading;
};
extern const struct store_evidence_text store_evidence_texts[];
struct json_t *store_patch_syzbot_tests(struct store *s, const struct store_patch *p);
int store_patch_set_sent(struct store *s, int64_t id, const char *message_id,
			 const char *sent_to, const char *branch);
/* The patch whose mail had this Message-ID (with or without <>). */
int store_patch_find_by_message_id(struct store *s, const char *message_id,
				   struct store_patch **ret);
/* Records a mail a patch went out in (store_patch_set_sent does it too),
 * so that replies to any of its mails find the patch.  stage and
 * recipients (a JSON array of addr-specs) may be NULL: known ones stay. */
int store_patch_mail_add(struct store *s, int64_t patch_id, const char *message_id,
			 const char *stage, const char *recipients);
/* The JSON array of the To and Cc addresses of a patch mail; -ENOENT when
 * the mail or its recipients are unknown. */
int store_patch_mail_recipients(struct store *s, const char *message_id, char **ret);
void store_patch_free(struct store_patch *p);
void store_patch_list_free(struct store_patch **items, size_t n);
DEFINE_CLEANUP(struct store_patch, store_patch_free)
/* Paged, filtered listing: rows with id > after, in id order. */
struct store_query {
	const char *state;  /* bugs, jobs, outbox, inbox: state; events: kind */
	const char *source; /* bugs: source; inbox: type */
	const char *tree;   /* bugs: tree */
	int64_t bug_id, job_id;
	int64_t after, limit; /* limit <= 0: all */
	/* the newest first, "after" then being the id the page continues
	 * below (0: from the newest) */
	bool newest;
};

/* Rows as JSON, the one shape of the API, kfixctl --json and the
 * dashboard (bugs, jobs and patches have theirs beside their structs). */
struct store_inbox;
/* What a bug's jobs spent on the model (their results' "llm"). */
struct json_t *store_bug_llm_json(struct store *s, int64_t bug);
struct json_t *store_outbox_json(const struct store_outbox *o);
struct json_t *store_event_json(const struct store_event *e);
struct json_t *store_inbox_json(const struct store_inbox *in);
struct json_t *store_stats_json(const struct store_stats *st);

int store_bug_query(struct store *s, const struct store_query *q,
		    struct store_bug ***ret, size_t *ret_n);
int store_job_query(struct store *s, const struct store_query *q,
		    struct store_job ***ret, size_t *ret_n);
int store_outbox_query(struct store *s, const struct store_query *q,
		       struct store_outbox ***ret, size_t *ret_n);
int store_event_query(struct store *s, const struct store_query *q,
		      struct store_event ***ret, size_t *ret_n);
int store_patch_query(struct store *s, const struct store_query *q,
		      struct store_patch ***ret, size_t *ret_n);

/* Webhook deliveries, stored before they are answered.  key is unique
 * (the provider's delivery id or the Message-ID): a known key is not
 * added again (*ret_created false, *ret_id the first delivery). */
struct store_inbox {
	int64_t id;
	char *key, *type, *hook, *provider, *event;
	int64_t received;
	char *payload; /* NUL-terminated copy; may hold other NULs */
	size_t payload_len;
	/* "pending" (mail waiting for its parser), "parsing", "done",
	 * "ignored", "failed" (could not be parsed) */
	char *state;
	int64_t bug_id;
	char *detail;
};

int store_inbox_add(struct store *s, const struct store_inbox *in,
		    int64_t *ret_id, bool *ret_created);
/* The delivery stored under key ("mail:<Message-ID>"); -ENOENT if none. */
int store_inbox_find(struct store *s, const char *key, struct store_inbox **ret);
int store_inbox_set_state(struct store *s, int64_t id, const char *state,
			  int64_t bug_id, const char *detail);
int store_inbox_get(struct store *s, int64_t id, struct store_inbox **ret);
/* The ids of up to max "pending" rows of a type, oldest first (without
 * their payloads: a hostile one is loaded only after it is claimed). */
int store_inbox_pending(struct store *s, const char *type, int64_t *ids, size_t max,
			size_t *ret_n);
/* Takes a "pending" row for processing ("parsing"); -EALREADY when it is
 * not pending (another process took it). */
int store_inbox_claim(struct store *s, int64_t id);
/* What the parsed mail turned out to be ("syzbot-report", "reply", ...). */
int store_inbox_set_event(struct store *s, int64_t id, const char *event);
/* Rows left "parsing" by a process that died go back to "pending" once,
 * and to "failed" the second time. */
int store_inbox_recover(struct store *s);
int store_inbox_query(struct store *s, const struct store_query *q,
		      struct store_inbox ***ret, size_t *ret_n);
int store_inbox_count(struct store *s, const char *state, int64_t *ret);
void store_inbox_free(struct store_inbox *in);
void store_inbox_list_free(struct store_inbox **items, size_t n);
DEFINE_CLEANUP(struct store_inbox, store_inbox_free)

/* Counters and histograms that job processes record for kfixd's /metrics
 * (jobs are child processes: the store is what they share).  name is a
 * Prometheus metric name, labels a label list as written in the text
 * format (`result="ok"`, already escaped) or NULL; values are >= 0.  A
 * new series beyond STORE_METRIC_SERIES_MAX is refused with -E2BIG.
 * Histograms use store_metric_bounds (seconds, for long operations). */
#define STORE_METRIC_BUCKETS 15
#define STORE_METRIC_SERIES_MAX 1000
#define STORE_METRIC_NAME_MAX 128
#define STORE_METRIC_LABELS_MAX 512
extern const double store_metric_bounds[STORE_METRIC_BUCKETS];

struct store_metric {
	char *name, *labels;
	bool histogram;
	double value;  /* counter value; sum of observations */
	int64_t count; /* histograms: observations */
	int64_t bucket[STORE_METRIC_BUCKETS]; /* per bucket, not cumulative */
};

int store_metric_add(struct store *s, const char *name, const char *labels,
		     double v);
int store_metric_observe(struct store *s, const char *name, const char *labels,
			 double v);
/* Every series, ordered by name and labels. */
int store_metric_list(struct store *s, struct store_metric ***ret, size_t *ret_n);
void store_metric_free(struct store_metric *m);
void store_metric_list_free(struct store_metric **items, size_t n);

/* A reply to one of kfix's patch mails: the trailers the reviewer gave
 * (JSON array of {"key", "value"}) and their comments with the quoted
 * lines they answer.  may_iterate: the comments ask for a new version
 * (see kfixd(8), REVIEW LOOP); job_id: the iterate job that took them. */
struct store_review {
	int64_t id, bug_id, patch_id, job_id;
	char *message_id, *author, *trailers, *comments;
	bool may_iterate;
	int64_t created;
};

/* A known Message-ID is not added again (*ret_created false): a reply
 * delivered by the webhook and by an archive counts once. */
int store_review_add(struct store *s, const struct store_review *v, int64_t *ret_id,
		     bool *ret_created);
/* Filters: 0 means any. */
int store_review_list(struct store *s, int64_t bug_id, int64_t patch_id, int64_t job_id,
		      struct store_review ***ret, size_t *ret_n);
/* Bugs with comments that ask for a new version and no job took yet. */
int store_review_waiting(struct store *s, int64_t **ret, size_t *ret_n);
/* Gives those comments of the bug to job_id; *ret_n: how many. */
int store_review_claim(struct store *s, int64_t bug_id, int64_t job_id, int *ret_n);
int store_review_count(struct store *s, int64_t patch_id, int64_t *ret);
void store_review_free(struct store_review *v);
void store_review_list_free(struct store_review **items, size_t n);
DEFINE_CLEANUP(struct store_review, store_review_free)

/* Queued jobs of kind wait until until_sec (unix seconds); with 0, the
 * ones deferred to was_sec may go at once. */
int store_job_defer(struct store *s, const char *kind, int64_t until_sec, int64_t was_sec);
/* One LLM call's tokens and cost, against its bug and job (0: none). */
int store_llm_usage_add(struct store *s, int64_t bug_id, int64_t job_id, const char *model,
			uint64_t tokens_in, uint64_t tokens_out, double cost);
/* Tokens (in + out) and cost of the calls since a unix time, of one bug
 * (0: all). */
int store_llm_usage_sum(struct store *s, int64_t since, int64_t bug_id, int64_t *ret_tokens,
			double *ret_cost);

#endif
