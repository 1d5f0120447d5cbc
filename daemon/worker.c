#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/log.h"
#include "common/strutil.h"
#include "store.h"
#include "worker.h"

#define WORKERS_MAX 64

struct running {
	struct workers *w;
	int64_t job_id, bug_id;
	int64_t attempt; /* the job's attempt number this process runs */
	pid_t pid;
	bool timed_out;
	sd_event_source *child, *timeout;
};

struct workers {
	sd_event *event;
	struct worker_conf conf;
	struct store *store;
	char *config_path, *self_exe, *owner;
	sd_event_source *renew;
	struct running *slot[WORKERS_MAX];
	struct wake wake;
};

static void ids(const struct running *rj, char *bug, char *job)
{
	snprintf(bug, 32, "%lld", (long long)rj->bug_id);
	snprintf(job, 32, "%lld", (long long)rj->job_id);
}

int worker_conf_from_config(const struct config *cfg, struct worker_conf *ret)
{
	struct worker_conf c = { 0 };
	int64_t n;
	int r;

	r = config_get_int(cfg, "kfix", NULL, "workers", &n);
	if (r >= 0)
		r = config_get_duration(cfg, "kfix", NULL, "lease", &c.lease_usec);
	if (r >= 0)
		r = config_get_duration(cfg, "kfix", NULL, "job-timeout", &c.job_timeout_usec);
	if (r >= 0)
		r = config_get_duration(cfg, "kfix", NULL, "retry-delay", &c.retry_delay_usec);
	if (r < 0)
		return r;
	c.workers = MIN((int)n, WORKERS_MAX);
	*ret = c;
	return 0;
}

static void running_free(struct running *rj)
{
	if (!rj)
		return;
	sd_event_source_disable_unref(rj->child);
	sd_event_source_disable_unref(rj->timeout);
	free(rj);
}

static void slot_clear(struct workers *w, struct running *rj)
{
	for (int i = 0; i < WORKERS_MAX; i++)
		if (w->slot[i] == rj)
			w->slot[i] = NULL;
	running_free(rj);
	/* an idle daemon has no lease to renew */
	if (workers_running(w) == 0)
		(void)sd_event_source_set_enabled(w->renew, SD_EVENT_OFF);
	wake_call(&w->wake);
}

static int on_child(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	struct running *rj = userdata;
	struct workers *w = rj->w;
	char bug[32], job[32], why[128];
	bool final = false;
	int r;

	ids(rj, bug, job);
	if (si->si_code == CLD_EXITED && si->si_status == 0) {
		log_job(LOG_DEBUG, bug, job, "job process %d ended", (int)rj->pid);
		slot_clear(w, rj);
		return 0;
	}
	if (rj->timed_out)
		snprintf(why, sizeof(why), "killed after the job time limit");
	else if (si->si_code == CLD_EXITED)
		snprintf(why, sizeof(why), "job process exited with status %d",
			 si->si_status);
	else
		snprintf(why, sizeof(why), "job process killed by signal %s",
			 strsignal(si->si_status));
	r = store_job_fail(w->store, rj->job_id, w->owner, rj->attempt, why,
			   w->conf.retry_delay_usec, false, &final);
	if (r == -ESTALE)
		log_job(LOG_DEBUG, bug, job, "%s (already recorded)", why);
	else if (r < 0)
		log_job(LOG_ERR, bug, job, "cannot record job failure: %s", strerror(-r));
	else
		log_job(LOG_WARNING, bug, job, "%s%s", why,
			final ? "; no attempts left" : "; will retry");
	slot_clear(w, rj);
	return 0;
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct running *rj = userdata;
	char bug[32], job[32];

	ids(rj, bug, job);
	log_job(LOG_WARNING, bug, job, "job exceeded its time limit, killing it");
	rj->timed_out = true;
	kill(-rj->pid, SIGKILL);
	return 0;
}

static _noreturn_ void child_exec(struct workers *w, int64_t job_id)
{
	char id[32];
	sigset_t all;

	setpgid(0, 0);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	snprintf(id, sizeof(id), "%lld", (long long)job_id);
	execl(w->self_exe, w->self_exe, "--config", w->config_path, "--run-job",
	      id, "--owner", w->owner, (char *)NULL);
	_exit(127);
}

static int spawn(struct workers *w, int slot, struct store_job *j)
{
	struct running *rj = calloc(1, sizeof(*rj));
	char bug[32], job[32];
	int r;

	if (!rj)
		return -ENOMEM;
	rj->w = w;
	rj->job_id = j->id;
	rj->bug_id = j->bug_id;
	rj->attempt = j->attempts;
	rj->pid = fork();
	if (rj->pid < 0) {
		r = negerrno();
		free(rj);
		return r;
	}
	if (rj->pid == 0)
		child_exec(w, j->id);
	setpgid(rj->pid, rj->pid);
	w->slot[slot] = rj;
	r = sd_event_add_child(w->event, &rj->child, rj->pid, WEXITED, on_child, rj);
	if (r >= 0)
		r = sd_event_add_time_relative(w->event, &rj->timeout, CLOCK_MONOTONIC,
					       w->conf.job_timeout_usec,
					       1000000, on_timeout, rj);
	ids(rj, bug, job);
	if (r < 0) {
		kill(-rj->pid, SIGKILL);
		log_job(LOG_ERR, bug, job, "cannot watch job process: %s", strerror(-r));
		return r;
	}
	(void)sd_event_source_set_enabled(w->renew, SD_EVENT_ON);
	log_job(LOG_INFO, bug, job, "started %s job (attempt %d of %d), pid %d",
		j->kind, j->attempts, j->max_attempts, (int)rj->pid);
	return 0;
}

/* The configured number of job slots. */
static int slots(const struct workers *w)
{
	return w->conf.workers;
}

int workers_fill(struct workers *w)
{
	int max = slots(w);

	for (int i = 0; i < max; i++) {
		_cleanup_(store_job_freep) struct store_job *j = NULL;
		int r;

		if (w->slot[i])
			continue;
		r = store_job_lease(w->store, w->owner,
				    w->conf.lease_usec, &j);
		if (r == -ENOENT)
			return 0;
		if (r < 0)
			return r;
		r = spawn(w, i, j);
		if (r < 0)
			return r;
	}
	return 0;
}

bool workers_full(const struct workers *w)
{
	return workers_running(w) >= slots(w);
}

int workers_running(const struct workers *w)
{
	int n = 0;

	for (int i = 0; i < WORKERS_MAX; i++)
		n += w->slot[i] != NULL;
	return n;
}

/* A job that recorded its own end (done, failed for good, or requeued
 * for another attempt, which this daemon may have leased already) is no
 * longer running under this process's lease, but the process may still
 * be exiting: that one is left to end (its time limit still holds), as
 * killing it there can leave it unreaped (seen under AddressSanitizer,
 * whose leak check runs at exit).  A cancel, or a lease another daemon
 * took, is not such an end. */
static bool job_ended_itself(struct workers *w, const struct running *rj)
{
	_cleanup_(store_job_freep) struct store_job *j = NULL;

	if (store_job_get(w->store, rj->job_id, &j) < 0)
		return false;
	if (j->attempts > rj->attempt)
		return !streq(j->state, "running") || streq_ptr(j->lease_owner, w->owner);
	return streq(j->state, "done") || streq(j->state, "failed") || streq(j->state, "queued");
}

static int on_renew(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct workers *w = userdata;
	uint64_t lease = w->conf.lease_usec;

	for (int i = 0; i < WORKERS_MAX; i++) {
		struct running *rj = w->slot[i];
		int r;

		if (!rj)
			continue;
		r = store_job_renew(w->store, rj->job_id, w->owner, lease);
		if (r == -ESTALE && !job_ended_itself(w, rj)) {
			char bug[32], job[32];

			ids(rj, bug, job);
			log_job(LOG_WARNING, bug, job, "lease lost (cancelled?), stopping job");
			kill(-rj->pid, SIGKILL);
		}
	}
	/* renewing often also notices a cancelled job within seconds */
	return sd_event_source_set_time(s, usec + CLAMP(lease / 3, 1000000ULL, 5000000ULL));
}

/* Whether owner ("HOST:PID") is a daemon of this host that is gone. */
static bool owner_gone_here(const char *owner, const char *host)
{
	const char *p = owner ? startswith(owner, host) : NULL;
	int pid;

	if (!p || *p != ':' || parse_int(p + 1, &pid) < 0 || pid <= 0)
		return false;
	return kill(pid, 0) < 0 && errno == ESRCH;
}

/* Leases and outbox claims of a daemon on this host that is gone can be
 * taken back now instead of waiting for them to expire. */
static int reclaim_dead_owners(struct workers *w)
{
	_cleanup_(strv_freep) char **claimers = NULL;
	struct store_job **jobs = NULL;
	char host[128];
	size_t n = 0, nc = 0;
	const char *colon = strrchr(w->owner, ':');
	int r;

	snprintf(host, sizeof(host), "%.*s", (int)(colon - w->owner), w->owner);
	r = store_job_list(w->store, "running", 0, 0, &jobs, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n && r >= 0; i++) {
		const char *o = jobs[i]->lease_owner;
		int64_t k = 0;

		if (!owner_gone_here(o, host))
			continue;
		r = store_job_release_owner(w->store, o, &k);
		if (r >= 0 && k > 0)
			log_info("took back %lld job(s) from %s, which is gone", (long long)k, o);
	}
	store_job_list_free(jobs, n);
	if (r >= 0)
		r = store_outbox_claimers(w->store, &claimers, &nc);
	for (size_t i = 0; i < nc && r >= 0; i++) {
		int64_t k = 0;

		if (!owner_gone_here(claimers[i], host))
			continue;
		r = store_outbox_release_owner(w->store, claimers[i], &k);
		if (r >= 0 && k > 0)
			log_info("took back %lld outbox entr%s from %s, which is gone",
				 (long long)k, k == 1 ? "y" : "ies", claimers[i]);
	}
	return r;
}

int workers_new(sd_event *event, const struct config *cfg, struct store *store,
		const char *config_path, const char *self_exe,
		const char *owner, struct workers **ret)
{
	struct worker_conf conf;
	struct workers *w;
	int r;

	r = worker_conf_from_config(cfg, &conf);
	if (r < 0)
		return r;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->event = event;
	w->conf = conf;
	w->store = store;
	w->config_path = strdup(config_path);
	w->self_exe = strdup(self_exe);
	w->owner = strdup(owner);
	if (!w->config_path || !w->self_exe || !w->owner) {
		workers_free(w);
		return -ENOMEM;
	}
	r = reclaim_dead_owners(w);
	if (r >= 0)
		r = sd_event_add_time_relative(event, &w->renew, CLOCK_MONOTONIC,
					       1000000, 1000000, on_renew, w);
	/* on while a job runs: see spawn() and slot_clear() */
	if (r >= 0)
		r = sd_event_source_set_enabled(w->renew, SD_EVENT_OFF);
	if (r < 0) {
		workers_free(w);
		return r;
	}
	*ret = w;
	return 0;
}

int workers_set_config(struct workers *w, const struct config *cfg)
{
	return worker_conf_from_config(cfg, &w->conf);
}

void workers_set_wake(struct workers *w, struct wake wake)
{
	w->wake = wake;
}

void workers_free(struct workers *w)
{
	if (!w)
		return;
	for (int i = 0; i < WORKERS_MAX; i++) {
		struct running *rj = w->slot[i];

		if (!rj)
			continue;
		kill(-rj->pid, SIGKILL);
		while (waitpid(rj->pid, NULL, 0) < 0 && errno == EINTR)
			;
		running_free(rj);
		w->slot[i] = NULL;
	}
	if (w->store)
		store_job_release_owner(w->store, w->owner, NULL);
	sd_event_source_disable_unref(w->renew);
	free(w->config_path);
	free(w->self_exe);
	free(w->owner);
	free(w);
}
