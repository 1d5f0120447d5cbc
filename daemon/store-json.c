/* The store's rows as JSON, one shape for kfixctl --json and the API. */
#include "config.h"

#include <jansson.h>

#include "common/json.h"
#include "store.h"

json_t *store_bug_json(const struct store_bug *b)
{
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I}",
			 "id", (json_int_t)b->id, "source", json_str_or_null(b->source),
			 "source_id", json_str_or_null(b->source_id),
			 "title", json_str_or_null(b->title), "state", json_str_or_null(b->state),
			 "tree", json_str_or_null(b->tree),
			 "base_commit", json_str_or_null(b->base_commit),
			 "report", json_str_or_null(b->report),
			 "repro_c", json_str_or_null(b->repro_c),
			 "repro_syz", json_str_or_null(b->repro_syz),
			 "kernel_config", json_str_or_null(b->kernel_config),
			 "crash_report", json_str_or_null(b->crash_report),
			 "guilty_file", json_str_or_null(b->guilty_file),
			 "created", (json_int_t)b->created, "updated", (json_int_t)b->updated);
}

/* A job's result is JSON the job wrote: an object of the view, not a
 * string holding JSON (a text that is not JSON stays a string). */
static json_t *result_json(const char *result)
{
	json_t *r = result ? json_loads(result, JSON_REJECT_DUPLICATES, NULL) : NULL;

	return r ?: json_str_or_null(result);
}

json_t *store_job_json(const struct store_job *j)
{
	return json_pack("{s:I, s:I, s:o, s:o, s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I}",
			 "id", (json_int_t)j->id, "bug", (json_int_t)j->bug_id,
			 "kind", json_str_or_null(j->kind), "state", json_str_or_null(j->state),
			 "priority", j->priority, "attempts", j->attempts,
			 "max_attempts", j->max_attempts,
			 "lease_owner", json_str_or_null(j->lease_owner),
			 "checkpoint", json_str_or_null(j->checkpoint),
			 "error", json_str_or_null(j->error), "result", result_json(j->result),
			 "progress", json_str_or_null(j->progress),
			 "progress_at", (json_int_t)j->progress_at,
			 "created", (json_int_t)j->created, "started", (json_int_t)j->started,
			 "finished", (json_int_t)j->finished);
}
