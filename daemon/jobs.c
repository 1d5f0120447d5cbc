#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <signal.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/log.h"
#include "common/slot.h"
#include "common/strutil.h"
#include "child.h"
#include "jobs.h"
#include "store.h"

/* Every kind, declared beside its code (jobs.h). */
static const struct job_kind *const kinds[] = {
	&job_kind_selftest, &job_kind_reproduce, &job_kind_repair, &job_kind_iterate,
	&job_kind_retest, &job_kind_publish, &job_kind_archive_poll, &job_kind_compare,
	&job_kind_bisect, NULL,
};

const struct job_kind *jobs_find(const char *name)
{
	for (size_t i = 0; kinds[i]; i++)
		if (streq(kinds[i]->name, name))
			return kinds[i];
	return NULL;
}

bool job_step_passed(const struct job_ctx *ctx, const char *step)
{
	const char *cp = ctx->job->checkpoint;
	size_t n = strlen(step);

	for (const char *p = cp; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == n && strncmp(p, step, n) == 0)
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

int job_step_done(struct job_ctx *ctx, const char *step)
{
	char *cp;
	int r;

	if (job_step_passed(ctx, step))
		return 0;
	if (asprintf(&cp, "%s%s%s", ctx->job->checkpoint ? ctx->job->checkpoint : "",
		     ctx->job->checkpoint && *ctx->job->checkpoint ? "," : "", step) < 0)
		return -ENOMEM;
	r = store_job_checkpoint(ctx->store, ctx->job->id, ctx->owner, cp);
	if (r < 0) {
		free(cp);
		return r;
	}
	free(ctx->job->checkpoint);
	ctx->job->checkpoint = cp;
	return 0;
}

int jobs_conf_from_config(const struct config *c, struct jobs_conf *ret)
{
	struct jobs_conf jc = { 0 };

	(void)config_get_duration(c, "kfix", NULL, "job-timeout", &jc.job_timeout_usec);
	(void)config_get_duration(c, "kfix", NULL, "retry-delay", &jc.retry_delay_usec);
	(void)config_get_int(c, "kfix", NULL, "job-attempts", &jc.job_attempts);
	(void)config_get_int(c, "kfix", NULL, "build-slots", &jc.build_slots);
	(void)config_get_int(c, "kfix", NULL, "vm-slots", &jc.vm_slots);
	(void)config_get_int(c, "kfix", NULL, "llm-slots", &jc.llm_slots);
	*ret = jc;
	return 0;
}

static int slots_of(const struct jobs_conf *jc, const char *resource, int64_t *ret)
{
	if (streq(resource, "build"))
		*ret = jc->build_slots;
	else if (streq(resource, "vm"))
		*ret = jc->vm_slots;
	else if (streq(resource, "llm"))
		*ret = jc->llm_slots;
	else
		return -EINVAL;
	return 0;
}

int job_slot_acquire(struct job_ctx *ctx, const char *resource,
		     struct slot **ret)
{
	_cleanup_free_ char *dir = NULL;
	struct jobs_conf jc;
	int64_t max;
	int r;

	r = jobs_conf_from_config(ctx->cfg, &jc);
	if (r >= 0)
		r = slots_of(&jc, resource, &max);
	if (r < 0)
		return -EINVAL;
	r = config_state_path(ctx->cfg, "slots", &dir);
	if (r < 0)
		return r;
	return slot_acquire(dir, resource, (int)max, jc.job_timeout_usec, ret);
}

int job_fail(struct job_ctx *ctx, int r, const char *fmt, ...)
{
	va_list ap;

	free(ctx->error);
	va_start(ap, fmt);
	if (vasprintf(&ctx->error, fmt, ap) < 0)
		ctx->error = NULL;
	va_end(ap);
	return r;
}

static pid_t owner_pid(const char *owner)
{
	const char *colon = strrchr(owner, ':');
	int pid;

	if (!colon || parse_int(colon + 1, &pid) < 0)
		return 0;
	return pid;
}

static void job_ctx_clear(struct job_ctx *ctx)
{
	store_job_free(ctx->job);
	config_free(ctx->cfg);
	free(ctx->result);
	free(ctx->error);
}

int jobs_run_child(const char *config_path, int64_t job_id, const char *owner)
{
	_cleanup_(store_closep) struct store *store = NULL;
	_cleanup_(job_ctx_clear) struct job_ctx ctx = { .owner = owner };
	const struct job_kind *kind;
	char bug[32], job[32];
	struct jobs_conf jc;
	int r;

	/* a job never outlives the daemon that leased it; the owner names
	 * the daemon's pid, which catches a daemon that died before prctl */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (owner_pid(owner) > 0 && getppid() != owner_pid(owner))
		return 1;
	if (child_open(config_path, &ctx.cfg, &store) < 0 ||
	    jobs_conf_from_config(ctx.cfg, &jc) < 0)
		return 1;
	ctx.store = store;
	r = store_job_get(store, job_id, &ctx.job);
	if (r < 0 || !streq(ctx.job->state, "running") ||
	    !streq_ptr(ctx.job->lease_owner, owner)) {
		log_error("job %lld is not leased to %s", (long long)job_id, owner);
		return 1;
	}
	snprintf(bug, sizeof(bug), "%lld", (long long)ctx.job->bug_id);
	snprintf(job, sizeof(job), "%lld", (long long)job_id);
	log_set_context(ctx.job->bug_id ? bug : NULL, job);
	kind = jobs_find(ctx.job->kind);
	if (!kind)
		r = job_fail(&ctx, -EOPNOTSUPP, "unknown job kind '%s'", ctx.job->kind);
	else
		r = kind->run(&ctx);
	if (!kind)
		ctx.permanent = true;
	if (r >= 0) {
		r = store_job_finish(store, job_id, owner, ctx.result);
		if (r < 0)
			log_error("cannot record job end: %s", strerror(-r));
		else
			log_info("job %s done", ctx.job->kind);
	} else {
		bool final = false;

		log_warning("job %s failed: %s", ctx.job->kind,
			    ctx.error ? ctx.error : strerror(-r));
		r = store_job_fail(store, job_id, owner, ctx.job->attempts,
				   ctx.error ? ctx.error : strerror(-r), jc.retry_delay_usec,
				   ctx.permanent, &final);
		if (r < 0)
			log_error("cannot record job failure: %s", strerror(-r));
	}
	return r < 0 ? 1 : 0;
}
