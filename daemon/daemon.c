#include "config.h"

#include <errno.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include <sys/inotify.h>

#include "common/conf.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/strutil.h"
#include "repro/build.h"
#include "daemon.h"
#include "front.h"
#include "archive.h"
#include "outbox.h"
#include "sched.h"
#include "store.h"
#include "worker.h"

/* The scheduler, the workers and the outbox run when something changed
 * (a commit to the store by any process, a child that ended, a reload) or
 * when something falls due; otherwise at least this often, as a safety
 * net for what no event announces. */
#define IDLE_TICK_USEC (60ULL * 1000000)
/* Without inotify on the state directory, as before: every second. */
#define UNWATCHED_TICK_USEC (1000000ULL)
/* A burst of commits gives one run, and a run at most this often. */
#define WAKE_DELAY_USEC (20ULL * 1000)
#define TICK_MIN_GAP_USEC (200ULL * 1000)
/* A writer's WAL frames are seen (IN_MODIFY) before its commit is: with
 * synchronous = FULL the fsync in between can take long on a loaded
 * disk, so a change is looked at again after 1 s and after 5 s. */
#define SETTLE1_USEC (1000ULL * 1000)
#define SETTLE2_USEC (4000ULL * 1000)

struct daemon {
	char *config_path;
	char *self_exe;
	struct config *cfg;
	sd_event *event;
	sd_event_source *tick, *watchdog, *store_watch;
	const char *db_name;	 /* the store's file name in state-dir */
	uint64_t last_tick;	 /* CLOCK_MONOTONIC usec */
	uint64_t settle_at;	 /* CLOCK_MONOTONIC usec of a look after a change, or 0 */
	bool settled_once;	 /* the first of the two looks is done */
	bool unwatched;		 /* no inotify: the store is polled */
	uint64_t watchdog_usec;
	struct store *store;
	struct workers *workers;
	struct outbox *outbox;
	struct front *front;
	int started; /* how many modules are up */
	char owner[128];
};

/* Modules, in start order; they stop in reverse. */
struct module {
	const char *name;
	int (*start)(struct daemon *d);
	void (*stop)(struct daemon *d);
};

/* Runs on_tick soon: at once after a burst, never more often than
 * TICK_MIN_GAP_USEC. */
static void daemon_wake(void *userdata)
{
	struct daemon *d = userdata;
	uint64_t now, at;
	int on = SD_EVENT_OFF;

	if (!d->tick || sd_event_now(d->event, CLOCK_MONOTONIC, &now) < 0)
		return;
	at = MAX(now + WAKE_DELAY_USEC, d->last_tick + TICK_MIN_GAP_USEC);
	if (sd_event_source_get_enabled(d->tick, &on) >= 0 && on != SD_EVENT_OFF) {
		uint64_t cur;

		if (sd_event_source_get_time(d->tick, &cur) >= 0 && cur <= at)
			return;
	}
	if (sd_event_source_set_time(d->tick, at) < 0 ||
	    sd_event_source_set_enabled(d->tick, SD_EVENT_ONESHOT) < 0)
		log_warning("cannot schedule the scheduler");
}

/* Any process's commit to the store (kfixctl, a job, a hook) writes its
 * file or, in WAL mode, its -wal file; a process that ends closes them. */
static int on_store_change(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
	struct daemon *d = userdata;
	size_t n = strlen(d->db_name);

	uint64_t now;

	if (ev->len == 0 || strncmp(ev->name, d->db_name, n) != 0 ||
	    (ev->name[n] != '\0' && !streq(ev->name + n, "-wal")))
		return 0;
	daemon_wake(d);
	if (sd_event_now(d->event, CLOCK_MONOTONIC, &now) >= 0) {
		d->settle_at = now + SETTLE1_USEC;
		d->settled_once = false;
	}
	return 0;
}

static int store_watch(struct daemon *d, const char *state, const char *name)
{
	d->db_name = name;
	return sd_event_add_inotify(d->event, &d->store_watch, state,
				    IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE, on_store_change, d);
}

static int store_start(struct daemon *d)
{
	_cleanup_free_ char *state = NULL;
	char why[512] = "";
	int r;

	r = config_state_path(d->cfg, NULL, &state);
	if (r < 0)
		return r;
	r = mkdir_p(state, 0750);
	if (r < 0) {
		log_error("cannot create state directory %s: %s", state, strerror(-r));
		return r;
	}
	if (store_shared(d->cfg)) {
		/* other instances write it where no inotify reaches */
		log_info("the store is shared (PostgreSQL): looking at it every second");
		d->unwatched = true;
	} else {
		r = store_watch(d, state, STATE_DB);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			/* out of inotify watches, or a file system without them */
			log_warning("cannot watch the state directory %s (%s): looking at the "
				    "store every second instead", state, strerror(-r));
			d->unwatched = true;
		}
	}
	r = store_open_config(d->cfg, why, sizeof(why), &d->store);
	if (r == -EBUSY)
		log_error("cannot open the store: it is locked by another process");
	else if (r < 0)
		log_error("cannot open the store: %s", why[0] ? why : strerror(-r));
	return r;
}

static void store_stop(struct daemon *d)
{
	d->store_watch = sd_event_source_disable_unref(d->store_watch);
	store_close(d->store);
	d->store = NULL;
}

static int workers_start(struct daemon *d)
{
	int r = workers_new(d->event, d->cfg, d->store, d->config_path,
			    d->self_exe, d->owner, &d->workers);

	if (r < 0)
		log_error("cannot start workers: %s", strerror(-r));
	else
		workers_set_wake(d->workers, (struct wake){ daemon_wake, d });
	return r;
}

static void workers_stop(struct daemon *d)
{
	workers_free(d->workers);
	d->workers = NULL;
}

static int outbox_start(struct daemon *d)
{
	_cleanup_free_ char *err = NULL;
	int r = outbox_new(d->cfg, d->store, &d->outbox, &err);

	if (r < 0)
		log_error("cannot start the outbox: %s", err ? err : strerror(-r));
	else
		outbox_set_wake(d->outbox, (struct wake){ daemon_wake, d });
	return r;
}

static void outbox_stop(struct daemon *d)
{
	outbox_free(d->outbox);
	d->outbox = NULL;
}

/* The HTTP front door and the feed pollers.  Sockets passed by systemd
 * (kfixd.socket) are served, else the [http] listen addresses; either way
 * they listen before READY=1 is sent. */
static int front_start(struct daemon *d)
{
	int n = sd_listen_fds(0);
	int r;

	if (n < 0) {
		log_error("cannot take sockets from systemd: %s", strerror(-n));
		return n;
	}
	r = front_new(d->event, d->cfg, d->store, n, d->self_exe, d->config_path, &d->front);
	if (r < 0)
		log_error("cannot start the HTTP server: %s", strerror(-r));
	return r;
}

static void front_stop(struct daemon *d)
{
	front_free(d->front);
	d->front = NULL;
}

static const struct module modules[] = {
	{ "store", store_start, store_stop },
	{ "workers", workers_start, workers_stop },
	{ "outbox", outbox_start, outbox_stop },
	{ "front", front_start, front_stop },
};

/* "running", "paused" (no new jobs) or "draining" (no new jobs, stop
 * once the running ones are done), set by kfixctl pause/resume/drain. */
static int scheduler_mode(struct daemon *d, char *buf, size_t n)
{
	int r = store_scheduler_mode(d->store, buf, n);

	if (r < 0)
		snprintf(buf, n, "running");
	return r;
}

static void update_status(struct daemon *d)
{
	struct store_stats st;

	const char *mode;
	char budget[128] = "";

	if (store_stats(d->store, &st) < 0)
		return;
	mode = st.scheduler;
	if (st.llm_wait_until > 0) {
		time_t t = (time_t)st.llm_wait_until;
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(budget, sizeof(budget), "LLM budget of the day spent, repairs wait until "
			 "%Y-%m-%d %H:%M UTC; ", &tm);
	}
	sd_notifyf(0,
		   "STATUS=%s%s%s%lld bugs new, %lld jobs queued, %lld running, "
		   "%lld failed; outbox %lld pending, %lld sent, %lld parked",
		   streq(mode, "running") ? "" : mode, streq(mode, "running") ? "" : "; ", budget,
		   (long long)st.bugs_by_state[0], (long long)st.jobs_queued,
		   (long long)st.jobs_running, (long long)st.jobs_failed,
		   (long long)st.outbox_pending, (long long)st.outbox_sent,
		   (long long)st.outbox_parked);
}

static int drain_done(struct daemon *d)
{
	int r = store_scheduler_set(d->store, "paused", "kfixd, drained");

	if (r < 0)
		return r;
	log_notice("drained: no job running; stopping (scheduler left paused)");
	sd_notify(0, "STOPPING=1\nSTATUS=drained");
	return sd_event_exit(d->event, 0);
}

/* When to look again: what falls due next in the store (jobs only when
 * a worker slot could take one, the outbox only when no delivery runs:
 * the end of those wakes the loop), the next archive poll, or
 * IDLE_TICK_USEC. */
static uint64_t next_tick(struct daemon *d, bool running, uint64_t now)
{
	uint64_t delay = d->unwatched ? UNWATCHED_TICK_USEC : IDLE_TICK_USEC;
	int64_t now_rt = (int64_t)time(NULL) * 1000000, due, due_sec;

	if (store_next_due(d->store, running && !workers_full(d->workers), !outbox_busy(d->outbox),
			   &due) < 0)
		due = INT64_MAX;
	if (archive_next_due(d->cfg, d->store, &due_sec) >= 0)
		due = MIN(due, due_sec * 1000000);
	if (due != INT64_MAX)
		delay = MIN(delay, due > now_rt ? (uint64_t)(due - now_rt) : 0);
	if (d->settle_at && d->settle_at <= now) {
		d->settle_at = d->settled_once ? 0 : now + SETTLE2_USEC;
		d->settled_once = true;
	}
	if (d->settle_at)
		delay = MIN(delay, d->settle_at - now);
	return now + MAX(delay, TICK_MIN_GAP_USEC);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	char mode[32];
	uint64_t now;
	int r;

	if (sd_event_now(d->event, CLOCK_MONOTONIC, &now) < 0)
		now = usec;
	d->last_tick = now;
	r = sched_run(d->cfg, d->store);
	if (r < 0)
		log_warning("scheduler: %s (%s)", strerror(-r), store_errmsg(d->store));
	if (scheduler_mode(d, mode, sizeof(mode)) < 0)
		log_warning("cannot read the scheduler mode: %s", store_errmsg(d->store));
	if (streq(mode, "draining") && workers_running(d->workers) == 0)
		return drain_done(d);
	r = streq(mode, "running") ? workers_fill(d->workers) : 0;
	if (r < 0)
		log_warning("workers: %s (%s)", strerror(-r), store_errmsg(d->store));
	r = outbox_spawn(d->outbox, d->event, d->self_exe, d->config_path);
	if (r < 0)
		log_warning("outbox: %s (%s)", strerror(-r), store_errmsg(d->store));
	update_status(d);
	r = sd_event_source_set_time(s, next_tick(d, streq(mode, "running"), now));
	return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_term(sd_event_source *s, const struct signalfd_siginfo *si,
		   void *userdata)
{
	struct daemon *d = userdata;

	log_info("received %s, stopping", strsignal((int)si->ssi_signo));
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
	return sd_event_exit(d->event, 0);
}

int daemon_load_config(const char *path, struct config **ret, char **ret_error)
{
	_cleanup_free_ char *err = NULL;
	struct config *c = NULL;
	int r = config_load(path, &c, ret_error);

	if (r < 0)
		return r;
	r = build_check_config(c, &err);
	if (r < 0) {
		config_free(c);
		if (err && asprintf(ret_error, "%s: %s", path, err) < 0)
			return -ENOMEM;
		return r;
	}
	*ret = c;
	return 0;
}

/* [kfix] log-level as a syslog priority, read at start and on reload. */
static int log_level_from_config(const struct config *cfg, int *ret)
{
	const char *lvl;
	int r = config_get_string(cfg, "kfix", NULL, "log-level", &lvl);

	return r < 0 ? r : log_parse_level(lvl, ret);
}

/* Reload: a config that does not load leaves the running one in place. */
static int on_hup(sd_event_source *s, const struct signalfd_siginfo *si,
		  void *userdata)
{
	struct daemon *d = userdata;
	_cleanup_free_ char *err = NULL;
	struct config *nc = NULL;
	int prio, r;

	sd_notify(0, "RELOADING=1");
	r = daemon_load_config(d->config_path, &nc, &err);
	if (r < 0) {
		log_error("reload failed, keeping the old configuration: %s",
			  err ? err : strerror(-r));
	} else if (d->front && (r = front_reload(d->front, nc)) < 0) {
		log_error("reload failed, keeping the old configuration");
		config_free(nc);
	} else {
		if (workers_set_config(d->workers, nc) < 0)
			log_warning("the workers keep their old [kfix] settings");
		outbox_set_config(d->outbox, nc);
		front_set_config(d->front, nc);
		config_free(d->cfg);
		d->cfg = nc;
		if (log_level_from_config(d->cfg, &prio) >= 0)
			log_set_level(prio);
		log_info("configuration reloaded from %s", d->config_path);
		/* a new tree or archive may have work waiting */
		daemon_wake(d);
	}
	sd_notify(0, "READY=1");
	return 0;
}

int daemon_new(const char *config_path, const char *self_exe,
	       struct daemon **ret)
{
	_cleanup_free_ char *err = NULL;
	struct daemon *d = calloc(1, sizeof(*d));
	int prio, r;

	if (!d)
		return -ENOMEM;
	d->config_path = strdup(config_path);
	d->self_exe = strdup(self_exe);
	if (!d->config_path || !d->self_exe) {
		daemon_free(d);
		return -ENOMEM;
	}
	r = daemon_load_config(config_path, &d->cfg, &err);
	if (r < 0) {
		log_error("%s", err ? err : strerror(-r));
		daemon_free(d);
		return r;
	}
	if (log_level_from_config(d->cfg, &prio) >= 0)
		log_set_level(prio);
	child_owner_name(d->owner, sizeof(d->owner), getpid());
	*ret = d;
	return 0;
}

void daemon_block_signals(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* systemd restarts kfixd when the watchdog is not fed; a loop that runs
 * is not enough: the HTTP front must be served too, or a wedged front
 * would stay up and deaf for ever. */
static int on_watchdog(sd_event_source *es, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	static bool warned;

	if (front_alive(d->front)) {
		(void)sd_notify(false, "WATCHDOG=1");
		warned = false;
	} else if (!warned) {
		log_error("the HTTP front has not run for seconds: no longer feeding the watchdog");
		warned = true;
	}
	return sd_event_source_set_time_relative(es, d->watchdog_usec / 2) < 0 ? 0 :
	       sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
}

static int setup_watchdog(struct daemon *d)
{
	int r = sd_watchdog_enabled(false, &d->watchdog_usec);

	if (r <= 0 || d->watchdog_usec == 0)
		return 0; /* no watchdog asked for */
	return sd_event_add_time_relative(d->event, &d->watchdog, CLOCK_MONOTONIC,
					  d->watchdog_usec / 2, 0, on_watchdog, d);
}

static int setup_loop(struct daemon *d)
{
	int r;

	daemon_block_signals();
	r = sd_event_default(&d->event);
	if (r >= 0)
		r = sd_event_add_signal(d->event, NULL, SIGTERM, on_term, d);
	if (r >= 0)
		r = sd_event_add_signal(d->event, NULL, SIGINT, on_term, d);
	if (r >= 0)
		r = sd_event_add_signal(d->event, NULL, SIGHUP, on_hup, d);
	if (r >= 0)
		r = setup_watchdog(d);
	if (r >= 0)
		r = sd_event_add_time_relative(d->event, &d->tick, CLOCK_MONOTONIC,
					       0, 1000, on_tick, d);
	return r;
}

static void modules_stop(struct daemon *d)
{
	while (d->started > 0) {
		const struct module *m = &modules[--d->started];

		log_debug("stopping %s", m->name);
		m->stop(d);
	}
}

int daemon_run(struct daemon *d)
{
	int r = setup_loop(d);

	if (r < 0) {
		log_error("cannot set up the event loop: %s", strerror(-r));
		return r;
	}
	for (size_t i = 0; i < ARRAY_SIZE(modules); i++) {
		sd_notifyf(0, "STATUS=starting %s", modules[i].name);
		r = modules[i].start(d);
		if (r < 0) {
			modules_stop(d);
			return r;
		}
		d->started++;
	}
	log_info("kfixd %s started (%s, owner %s)", PACKAGE_VERSION,
		 config_path(d->cfg), d->owner);
	/* a drain leaves the scheduler paused: a restart says so rather
	 * than taking no work in silence */
	{
		char mode[32];

		if (scheduler_mode(d, mode, sizeof(mode)) >= 0 && !streq(mode, "running"))
			log_notice("the scheduler is %s: no new job starts until kfixctl resume",
				   mode);
	}
	sd_notify(0, "READY=1\nSTATUS=running");
	r = sd_event_loop(d->event);
	modules_stop(d);
	log_info("kfixd stopped");
	return r;
}

void daemon_free(struct daemon *d)
{
	if (!d)
		return;
	modules_stop(d);
	sd_event_source_unref(d->tick);
	sd_event_source_unref(d->store_watch);
	sd_event_source_unref(d->watchdog);
	sd_event_unref(d->event);
	config_free(d->cfg);
	free(d->config_path);
	free(d->self_exe);
	free(d);
}
