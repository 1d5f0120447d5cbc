/* Job kinds: what a leased job does, run in its own child process. */
#ifndef KFIX_JOBS_H
#define KFIX_JOBS_H

#include <stdbool.h>
#include <stdint.h>

struct config;
struct store;
struct store_job;

struct job_ctx {
	struct config *cfg;
	struct store *store;
	struct store_job *job;
	const char *owner;
	char *result;	 /* JSON set by the handler on success */
	char *error;	 /* message set by the handler on failure */
	bool permanent;	 /* failure should not be retried */
};

/* The [kfix] keys of running jobs, read where a job or a slot wait starts. */
struct jobs_conf {
	uint64_t job_timeout_usec;
	uint64_t retry_delay_usec;
	int64_t job_attempts;
	int64_t build_slots, vm_slots, llm_slots;
};

int jobs_conf_from_config(const struct config *c, struct jobs_conf *ret);

typedef int (*job_handler_t)(struct job_ctx *ctx);

struct job_kind {
	const char *name;
	job_handler_t run;
	const char *doc;
};

/* The kinds of job, each defined in its own file. */
extern const struct job_kind job_kind_selftest, job_kind_reproduce, job_kind_repair,
	job_kind_iterate, job_kind_retest, job_kind_publish, job_kind_archive_poll, job_kind_compare,
	job_kind_bisect;

const struct job_kind *jobs_find(const char *name);

/* Runs one leased job in the current (child) process and records its end
 * in the store.  Returns the process exit code. */
int jobs_run_child(const char *config_path, int64_t job_id, const char *owner);

/* Records a step as done; a resumed job skips steps already done. */
int job_step_done(struct job_ctx *ctx, const char *step);
bool job_step_passed(const struct job_ctx *ctx, const char *step);
struct slot;
/* Waits for one of the kfix.RESOURCE-slots slots ("build", "vm", "llm"),
 * shared by all job processes of this state directory. */
int job_slot_acquire(struct job_ctx *ctx, const char *resource,
		     struct slot **ret);

/* Sets ctx->error (formatted) and returns r. */
int job_fail(struct job_ctx *ctx, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
