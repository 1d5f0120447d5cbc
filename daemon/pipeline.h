/* What the reproduce, repair and retest jobs share: the bug's inputs as
 * local files, the tree's source under the tree's lock, the real
 * toolstack wrapped so that every kernel build takes a build slot and
 * every VM run a VM slot, and the job's output folder STATE/jobs/ID. */
#ifndef KFIX_PIPELINE_H
#define KFIX_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/repair.h"
#include "jobs.h"
#include "source.h"

struct job_ctx;
struct slot;
struct store_bug;
struct toolstack;

struct pipeline {
	struct job_ctx *ctx;
	struct store_bug *bug;
	char *dir;	   /* STATE/jobs/ID: outputs of this job */
	char *scratch;	   /* DIR/scratch: the toolstack's builds and patches */
	char *report;	   /* the crash report's text */
	size_t report_len;
	char *title;	   /* its crash title (syzkaller's rules) */
	char *repro;	   /* DIR/repro.c: a copy of the bug's C reproducer */
	char *kconfig;	   /* the bug's kernel config, else the tree's */
	struct tree_conf tree;	   /* the bug's [tree], read when the job opens */
	struct jobs_conf jobs;	   /* the [kfix] job settings */
	struct source src;
	struct slot *tree_lock;
	struct toolstack *ts;
	struct repair_params params;
	char *prompts_dir;
	char *knowledge_base;	   /* [agent] knowledge-base, else the state's */
	const char *mail_from;	   /* [mail] from; NULL: no identity to answer as */
	/* the slot-taking wrapper around the toolstack */
	const struct repair_toolstack *inner;
	struct repair_toolstack ops;
	struct repair_outcome cached; /* the reproduce job's base outcome */
	int cache_state;	      /* 1: next base build, 2: next run served */
	unsigned builds, runs;	      /* done for real by this job */
	const char *fail_state;	      /* where a failed bug goes (NULL: gave-up) */
};

/* Loads the job's bug and checks its inputs: a configured tree, a C
 * reproducer, a report and a kernel config that are readable local files.
 * A bad input is a permanent failure with a message saying which. */
int pipeline_open(struct job_ctx *ctx, struct pipeline *p);
/* Takes the tree's lock and checks out rev (NULL: the tree's head), then
 * sets up the toolstack (the reproducer is compiled here). */
int pipeline_prepare(struct pipeline *p, const char *rev);
void pipeline_clear(struct pipeline *p);

/* The toolstack the engine and the jobs use. */
const struct repair_toolstack *pipeline_ops(struct pipeline *p);
/* The engine's first base build and run are answered with o (already
 * measured by the reproduce job) instead of doing them again. */
int pipeline_cache_base(struct pipeline *p, const struct repair_outcome *o);

/* Builds (diff NULL: the base) and runs the reproducer `runs` times.
 * Returns 0 with *ret_built false when the kernel does not build (log in
 * *ret_log); infrastructure failures are errors. */
int pipeline_test(struct pipeline *p, const char *diff, unsigned runs,
		  struct repair_outcome *ret, bool *ret_built, char **ret_log);

/* For a failure after the bug moved on: the last attempt (or a permanent
 * failure) gives the bug up (or moves it to fail_state) with the reason, so that no bug stays
 * reproducing or repairing with nothing working on it.  Returns r. */
int pipeline_fail_bug(struct pipeline *p, int r);

bool pipeline_same_crash(const struct pipeline *p, const char *title);

/* STATE/jobs/ID. */
int pipeline_job_dir(const struct job_ctx *ctx, int64_t job_id, char **ret);

/* An outcome as JSON (and back), for the files of a job's folder. */
int pipeline_outcome_save(const char *path, const struct repair_outcome *o,
			  const char *base);
int pipeline_outcome_load(const char *path, struct repair_outcome *ret);
/* "crashed 3 of 3: TITLE" / "survived 5 of 5". */
char *pipeline_outcome_text(const struct repair_outcome *o);

/* A JSON file of the job's folder, or a JSON text, for ctx->result. */
int pipeline_read_json(const char *path, char **ret);
int pipeline_write_json(const char *path, json_t *j);

#endif
