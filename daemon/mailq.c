#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "child.h"
#include "common/clock.h"
#include "common/conf.h"
#include "common/log.h"
#include "common/strutil.h"
#include "hooks/http.h"
#include "mailq.h"
#include "intake-mail.h"
#include "mail/parse.h"
#include "store.h"

/* mails one helper processes before the daemon looks again */
#define MAILQ_RUN_MAX 64
#define MAILQ_QUERY 16
#define MAILQ_STOP_WAIT_MS 2000
#define MAILQ_CHECK_USEC (200ULL * 1000)
#define MAILQ_BACKOFF_MAX_USEC (60ULL * 1000000)

/* AddressSanitizer reserves terabytes of address space: an address
 * space limit would stop the helper before it starts. */
#if defined(__SANITIZE_ADDRESS__)
#define MAILQ_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MAILQ_SANITIZED 1
#endif
#endif

struct waiter {
	struct http_request *req;
	int64_t id;
	uint64_t deadline; /* CLOCK_MONOTONIC usec */
};

struct mailq {
	sd_event *event;
	struct store *store;
	struct mailq_conf conf;
	char *self_exe, *config_path;
	struct child child;
	uint64_t child_deadline;
	bool again; /* mail came, or a spawn failed, while none could start */
	unsigned fails;	    /* helpers in a row that failed */
	uint64_t not_before; /* back-off after a failed helper */
	sd_event_source *timer;
	struct waiter w[MAILQ_WAITERS_MAX];
	size_t n;
};

/* Stored, processed later: the sender need not send it again. */
static void reply_pending(struct http_request *req, int64_t id)
{
	http_reply_json(req, 202, json_pack("{s:I, s:b, s:s}", "id", (json_int_t)id,
					    "duplicate", 0, "state", "pending"));
}

static void answer(struct mailq *q, size_t i, const struct store_inbox *row)
{
	struct waiter *w = &q->w[i];

	if (row)
		http_reply_json(w->req, 200,
				json_pack("{s:I, s:b, s:s, s:s?}", "id", (json_int_t)w->id,
					  "duplicate", 0, "state", row->state, "detail",
					  row->detail));
	else
		reply_pending(w->req, w->id);
	q->w[i] = q->w[--q->n];
}

static bool settled(const struct store_inbox *row)
{
	return !streq(row->state, "pending") && !streq(row->state, "parsing");
}

/* Answers the requests whose mail is processed, or who waited enough. */
static void check_waiters(struct mailq *q, bool all)
{
	uint64_t now = clock_mono_usec();

	for (size_t i = q->n; i-- > 0;) {
		_cleanup_(store_inbox_freep) struct store_inbox *row = NULL;
		int r = store_inbox_get(q->store, q->w[i].id, &row);

		if (r >= 0 && settled(row))
			answer(q, i, row);
		else if (all || now >= q->w[i].deadline || (r < 0 && r != -ENOENT))
			answer(q, i, NULL);
	}
}

static int timer_update(struct mailq *q)
{
	bool on = q->n > 0 || q->child.pid > 0 || q->again;
	uint64_t now;
	int r;

	if (!on)
		return sd_event_source_set_enabled(q->timer, SD_EVENT_OFF);
	r = sd_event_now(q->event, CLOCK_MONOTONIC, &now);
	if (r >= 0)
		r = sd_event_source_set_time(q->timer, now + MAILQ_CHECK_USEC);
	if (r >= 0)
		r = sd_event_source_set_enabled(q->timer, SD_EVENT_ONESHOT);
	return r;
}

static int on_helper_exit(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	struct mailq *q = userdata;
	bool ok = si->si_code == CLD_EXITED && si->si_status == 0;

	if (!ok)
		log_warning("mail queue process %d %s %d", (int)q->child.pid,
			    si->si_code == CLD_EXITED ? "exited with status" : "killed by signal",
			    si->si_status);
	child_exited(&q->child);
	check_waiters(q, false);
	/* a failed helper is tried again later, not at once and for ever */
	q->fails = ok ? 0 : MIN(q->fails + 1, 10u);
	q->not_before = ok ? 0 : clock_mono_usec() + MIN(MAILQ_CHECK_USEC << q->fails,
							  MAILQ_BACKOFF_MAX_USEC);
	if (!ok || mailq_spawn(q) < 0)
		q->again = true;
	return timer_update(q);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct mailq *q = userdata;

	if (q->child.pid > 0 && usec >= q->child_deadline) {
		log_warning("mail queue process %d ran past [mail] parse-timeout: killed",
			    (int)q->child.pid);
		kill(q->child.pid, SIGKILL); /* on_helper_exit follows */
	}
	check_waiters(q, false);
	if (q->again && q->child.pid == 0 && mailq_spawn(q) < 0)
		q->again = true;
	return timer_update(q);
}

int mailq_conf_from_config(const struct config *cfg, struct mailq_conf *ret)
{
	struct mailq_conf c;
	int r = config_get_duration(cfg, "mail", NULL, "parse-timeout", &c.parse_timeout_usec);

	if (r >= 0)
		r = config_get_size(cfg, "mail", NULL, "parse-memory-max", &c.parse_memory_max);
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}

int mailq_new(sd_event *event, struct store *store, const struct config *cfg,
	      const char *self_exe, const char *config_path, struct mailq **ret)
{
	_cleanup_(mailq_freep) struct mailq *q = calloc(1, sizeof(*q));
	int r;

	if (!q)
		return -ENOMEM;
	q->event = sd_event_ref(event);
	q->store = store;
	r = mailq_conf_from_config(cfg, &q->conf);
	if (r < 0)
		return r;
	q->self_exe = strdup(self_exe ? self_exe : "");
	q->config_path = strdup(config_path ? config_path : "");
	if (!q->self_exe || !q->config_path)
		return -ENOMEM;
	r = sd_event_add_time(event, &q->timer, CLOCK_MONOTONIC, 0, 0, on_timer, q);
	if (r < 0)
		return r;
	r = sd_event_source_set_enabled(q->timer, SD_EVENT_OFF);
	if (r < 0)
		return r;
	/* what was pending when the daemon stopped */
	if (mailq_spawn(q) < 0) {
		q->again = true;
		(void)timer_update(q);
	}
	*ret = TAKE_PTR(q);
	return 0;
}

void mailq_free(struct mailq *q)
{
	if (!q)
		return;
	check_waiters(q, true);
	child_stop(&q->child, MAILQ_STOP_WAIT_MS);
	sd_event_source_disable_unref(q->timer);
	sd_event_unref(q->event);
	free(q->self_exe);
	free(q->config_path);
	free(q);
}

int mailq_set_config(struct mailq *q, const struct config *cfg)
{
	return mailq_conf_from_config(cfg, &q->conf);
}

int mailq_wait(struct mailq *q, struct http_request *req, int64_t id)
{
	if (q->n >= MAILQ_WAITERS_MAX) {
		reply_pending(req, id);
		return 0;
	}
	q->w[q->n++] = (struct waiter){
		.req = req, .id = id, .deadline = clock_mono_usec() + MAILQ_WAIT_USEC,
	};
	if (q->child.pid > 0 || mailq_spawn(q) < 0)
		q->again = true; /* the running one may have listed the rows already */
	/* the request is held now: without the timer, the helper's exit
	 * still answers it */
	(void)timer_update(q);
	return 0;
}

int mailq_spawn(struct mailq *q)
{
	int64_t n = 0, parsing = 0;
	int r;

	if (q->child.pid > 0 || !q->self_exe[0])
		return 0;
	if (clock_mono_usec() < q->not_before) {
		q->again = true;
		return timer_update(q);
	}
	/* rows left "parsing" by a helper that died are taken up again */
	r = store_inbox_count(q->store, "pending", &n);
	if (r >= 0)
		r = store_inbox_count(q->store, "parsing", &parsing);
	if (r < 0)
		return r;
	if (n + parsing == 0) {
		q->again = false;
		return 0;
	}
	q->again = false;
	r = child_spawn(&q->child, q->event, q->self_exe, q->config_path, "--run-mailq",
			on_helper_exit, q);
	if (r < 0)
		return r;
	q->child_deadline = clock_mono_usec() + q->conf.parse_timeout_usec;
	return timer_update(q);
}

/* ---- the helper ---- */

/* The limit counts from what the helper maps when the parse starts (the
 * program, the store's cache, the mail's own bytes, all bounded by
 * [http] max-body) and covers only the parse: that is where a hostile
 * mail can make GMime build without bound. */
static _unused_ uint64_t mapped_now(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* max 0: lifts the limit again (the soft limit goes back up to the
 * hard one, which is never lowered). */
static void limit_memory(uint64_t max)
{
#ifndef MAILQ_SANITIZED
	struct rlimit rl;

	if (getrlimit(RLIMIT_AS, &rl) < 0)
		return;
	rl.rlim_cur = max ? MIN(mapped_now() + max, (uint64_t)rl.rlim_max) : rl.rlim_max;
	if (setrlimit(RLIMIT_AS, &rl) < 0)
		log_warning("mail queue: cannot limit memory to %llu bytes: %m",
			    (unsigned long long)rl.rlim_cur);
#endif
}

static int parse(uint64_t memory_max, const struct store_inbox *in, struct mail **ret_m,
		 struct intake_mail **ret_im, char **ret_error)
{
	_cleanup_(mail_freep) struct mail *m = NULL;
	int r;

	limit_memory(memory_max);
	r = mail_parse(in->payload, in->payload_len, 0, &m, ret_error);
	if (r >= 0)
		r = intake_mail_new(m, ret_im);
	limit_memory(0);
	if (r >= 0)
		*ret_m = TAKE_PTR(m);
	return r;
}

static int apply(struct store *s, const struct config *cfg, const struct mailq_conf *qc,
		 const struct store_inbox *in)
{
	_cleanup_(mail_freep) struct mail *m = NULL;
	_cleanup_(intake_mail_freep) struct intake_mail *im = NULL;
	_cleanup_free_ char *err = NULL, *key = NULL;
	int r = parse(qc->parse_memory_max, in, &m, &im, &err);

	if (r < 0) {
		if (r == -ENOMEM && !err)
			err = strdup("the mail does not fit in [mail] parse-memory-max");
		key = str_escape(in->key, strlen(in->key), 200);
		log_info("mail queue: mail %s is not a message kfix can read: %s",
			 key ? key : "?", err ? err : strerror(-r));
		return store_inbox_set_state(s, in->id, "failed", 0, err ? err : strerror(-r));
	}
	r = store_begin(s);
	if (r < 0)
		return r;
	r = store_inbox_set_event(s, in->id, mail_kind_name(mail_kind(m)));
	if (r >= 0)
		r = intake_mail_apply(s, cfg, im, in);
	if (r >= 0)
		return store_commit(s);
	store_rollback(s);
	return r;
}

/* Claimed before it is parsed: a mail that kills the parser is given up
 * after its second try (store_inbox_recover()), not parsed for ever. */
static int process_one(struct store *s, const struct config *cfg, const struct mailq_conf *qc,
		       int64_t id)
{
	_cleanup_(store_inbox_freep) struct store_inbox *in = NULL;
	int r = store_inbox_claim(s, id);

	if (r == -EALREADY)
		return 0;
	if (r >= 0)
		r = store_inbox_get(s, id, &in);
	if (r >= 0)
		r = apply(s, cfg, qc, in);
	return r;
}

static int run(struct store *s, const struct config *cfg)
{
	struct mailq_conf qc;
	int r = mailq_conf_from_config(cfg, &qc), done = 0;

	if (r >= 0)
		r = store_inbox_recover(s);
	while (r >= 0 && done < MAILQ_RUN_MAX) {
		int64_t ids[MAILQ_QUERY];
		size_t n = 0;

		r = store_inbox_pending(s, "mail", ids, ARRAY_SIZE(ids), &n);
		for (size_t i = 0; r >= 0 && i < n; i++, done++)
			r = process_one(s, cfg, &qc, ids[i]);
		if (n == 0)
			break;
	}
	return r;
}

int mailq_run_child(const char *config_path)
{
	_cleanup_(store_closep) struct store *store = NULL;
	struct config *cfg = NULL;
	int r;

	/* a mail being applied for a dead daemon is taken up by the next one */
	if (!child_bind_to_parent() || child_open(config_path, &cfg, &store) < 0)
		return 1;
	r = run(store, cfg);
	if (r < 0)
		log_warning("mail queue: %s (%s)", strerror(-r), store_errmsg(store));
	config_free(cfg);
	return r < 0 ? 1 : 0;
}
