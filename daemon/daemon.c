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

#include "common/conf.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/strutil.h"
#include "repro/build.h"
#include "daemon.h"
#include "front.h"
#include "outbox.h"
#include "sched.h"
#include "store.h"
#include "worker.h"

#define TICK_USEC (1000000ULL)

struct daemon {
	char *config_path;
	char *self_exe;
	struct config *cfg;
	sd_event *event;
	sd_event_source *tick, *watchdog;
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

static int store_start(struct daemon *d)
{
	_cleanup_free_ char *state = NULL, *db = NULL;
	int r;

	r = config_get_path(d->cfg, "kfix", NULL, "state-dir", &state);
	if (r < 0)
		return r;
	r = mkdir_p(state, 0750);
	if (r < 0) {
		log_error("cannot create state directory %s: %s", state, strerror(-r));
		return r;
	}
	if (asprintf(&db, "%s/kfix.db", state) < 0)
		return -ENOMEM;
	r = store_open(db, &d->store);
	if (r == -EBADMSG)
		log_error("cannot open store %s: the file is corrupt or not a SQLite database", db);
	else if (r == -EBUSY)
		log_error("cannot open store %s: it is locked by another process", db);
	else if (r < 0)
		log_error("cannot open store %s: %s", db, strerror(-r));
	return r;
}

static void store_stop(struct daemon *d)
{
	store_close(d->store);
	d->store = NULL;
}

static int workers_start(struct daemon *d)
{
	int r = workers_new(d->event, d->cfg, d->store, d->config_path,
			    d->self_exe, d->owner, &d->workers);

	if (r < 0)
		log_error("cannot start workers: %s", strerror(-r));
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
	_cleanup_free_ char *mode = NULL;
	int r = store_kv_get(d->store, "scheduler.mode", &mode);

	snprintf(buf, n, "%s", r >= 0 ? mode : "running");
	return r == -ENOENT ? 0 : r;
}

static void update_status(struct daemon *d)
{
	struct store_stats st;

	char mode[32] = "running", budget[128] = "";

	if (store_stats(d->store, &st) < 0)
		return;
	scheduler_mode(d, mode, sizeof(mode));
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
	int r = store_kv_set(d->store, "scheduler.mode", "paused");

	if (r < 0)
		return r;
	log_notice("drained: no job running; stopping (scheduler left paused)");
	sd_notify(0, "STOPPING=1\nSTATUS=drained");
	return sd_event_exit(d->event, 0);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	char mode[32];
	int r;

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
	return sd_event_source_set_time(s, usec + TICK_USEC);
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

/* Reload: a config that does not load leaves the running one in place. */
static int on_hup(sd_event_source *s, const struct signalfd_siginfo *si,
		  void *userdata)
{
	struct daemon *d = userdata;
	_cleanup_free_ char *err = NULL;
	struct config *nc = NULL;
	const char *lvl;
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
		workers_set_config(d->workers, nc);
		outbox_set_config(d->outbox, nc);
		front_set_config(d->front, nc);
		config_free(d->cfg);
		d->cfg = nc;
		if (config_get_string(d->cfg, "kfix", NULL, "log-level", &lvl) >= 0 &&
		    log_parse_level(lvl, &prio) >= 0)
			log_set_level(prio);
		log_info("configuration reloaded from %s", d->config_path);
	}
	sd_notify(0, "READY=1");
	return 0;
}

int daemon_new(const char *config_path, const char *self_exe,
	       struct daemon **ret)
{
	_cleanup_free_ char *err = NULL;
	struct daemon *d = calloc(1, sizeof(*d));
	char host[64] = "localhost";
	const char *lvl;
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
	if (config_get_string(d->cfg, "kfix", NULL, "log-level", &lvl) >= 0 &&
	    log_parse_level(lvl, &prio) >= 0)
		log_set_level(prio);
	gethostname(host, sizeof(host) - 1);
	snprintf(d->owner, sizeof(d->owner), "%s:%d", host, (int)getpid());
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
					       0, 100000, on_tick, d);
	if (r >= 0)
		r = sd_event_source_set_enabled(d->tick, SD_EVENT_ON);
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
	sd_event_source_unref(d->watchdog);
	sd_event_unref(d->event);
	config_free(d->cfg);
	free(d->config_path);
	free(d->self_exe);
	free(d);
}
