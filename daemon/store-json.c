/* The store's rows as JSON, one shape for kfixctl --json and the API. */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/strutil.h"
#include "store.h"

int store_event_add_json(struct store *s, int64_t bug_id, int64_t job_id, const char *kind,
			 json_t *detail)
{
	_cleanup_free_ char *text = detail ? json_dumps(detail, JSON_COMPACT) : NULL;

	json_decref(detail);
	return text ? store_event_add(s, bug_id, job_id, kind, text) : -ENOMEM;
}

const struct store_evidence_text store_evidence_texts[] = {
	{ "patch_type", "Patch type" }, { "evidence", "Execution evidence" },
	{ "tested", "Tested" },		{ "not_tested", "Not tested" },
	{ "changes", "Changes" },	{ NULL, NULL },
};

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

json_t *store_patch_json(const struct store_patch *p, bool full)
{
	json_t *j = json_pack("{s:I, s:I, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I}",
			      "id", (json_int_t)p->id, "bug", (json_int_t)p->bug_id,
			      "version", p->version, "state", json_str_or_null(p->state),
			      "subject", json_str_or_null(p->subject), "branch", json_str_or_null(p->branch),
			      "message_id", json_str_or_null(p->message_id), "sent_to",
			      json_str_or_null(p->sent_to), "decided_by", json_str_or_null(p->decided_by),
			      "reason", json_str_or_null(p->reason), "created",
			      (json_int_t)p->created, "updated", (json_int_t)p->updated);

	if (j && full) {
		json_object_set_new(j, "message", json_str_or_null(p->message));
		json_object_set_new(j, "diff", json_str_or_null(p->diff));
		json_object_set_new(j, "explanation", json_str_or_null(p->explanation));
		json_object_set_new(j, "base_commit", json_str_or_null(p->base_commit));
		json_object_set_new(j, "evidence", p->evidence
			? json_loads(p->evidence, 0, NULL) : json_null());
	}
	return j;
}

/* syzbot's "#syz test" answers about this patch, oldest first. */
/* The patch's events of one kind, with "result" set to as_result when
 * given, appended to arr with their event id (for the merge below). */
static void patch_events(struct store *s, const struct store_patch *p, const char *kind,
			 const char *as_result, json_t *arr)
{
	/* the newest hundred: the caller puts them in order */
	struct store_query q = { .state = kind, .bug_id = p->bug_id, .newest = true, .limit = 100 };
	struct store_event **ev = NULL;
	size_t n = 0;

	if (store_event_query(s, &q, &ev, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		json_t *d = ev[i]->detail ? json_loads(ev[i]->detail, 0, NULL) : NULL;

		if (json_is_object(d) && json_get_int(d, "patch", 0) == p->id) {
			if (as_result)
				json_object_set_new(d, "result", json_string(as_result));
			json_object_set_new(d, "event", json_integer(ev[i]->id));
			json_object_set_new(d, "at", json_integer(ev[i]->ts / 1000000));
			json_array_append(arr, d);
		}
		json_decref(d);
	}
	store_event_list_free(ev, n);
}

static int by_event(const void *a, const void *b)
{
	json_int_t x = json_get_int(*(json_t *const *)a, "event", 0),
		   y = json_get_int(*(json_t *const *)b, "event", 0);

	return (x > y) - (x < y);
}

json_t *store_patch_syzbot_tests(struct store *s, const struct store_patch *p)
{
	json_t *all = json_array(), *arr = json_array();
	json_t **v;
	size_t n;

	if (!all || !arr) {
		json_decref(all);
		return arr;
	}
	patch_events(s, p, "patch.syzbot-test-asked", "asked", all);
	patch_events(s, p, "patch.syzbot-test-skipped", "not-asked", all);
	patch_events(s, p, "patch.syzbot-test-timeout", "no-answer", all);
	patch_events(s, p, "patch.syzbot-test", NULL, all);
	n = json_array_size(all);
	v = calloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; v && i < n; i++)
		v[i] = json_array_get(all, i);
	if (v)
		qsort(v, n, sizeof(*v), by_event);
	for (size_t i = 0; v && i < n; i++)
		json_array_append(arr, v[i]);
	free(v);
	json_decref(all);
	return arr;
}

json_t *store_outbox_json(const struct store_outbox *o)
{
	return json_pack("{s:I, s:I, s:o, s:o, s:o, s:i, s:I, s:o, s:I, s:I}",
			 "id", (json_int_t)o->id, "bug", (json_int_t)o->bug_id, "kind",
			 json_str_or_null(o->kind), "idem_key", json_str_or_null(o->idem_key), "state",
			 json_str_or_null(o->state), "tries", o->tries, "next_try",
			 (json_int_t)o->next_try, "last_error", json_str_or_null(o->last_error),
			 "created", (json_int_t)o->created, "sent", (json_int_t)o->sent);
}

json_t *store_event_json(const struct store_event *e)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:o, s:o}", "id", (json_int_t)e->id,
			 "ts_usec", (json_int_t)e->ts, "bug", (json_int_t)e->bug_id,
			 "job", (json_int_t)e->job_id, "kind", json_str_or_null(e->kind), "detail",
			 json_str_or_null(e->detail));
}

json_t *store_inbox_json(const struct store_inbox *in)
{
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:I, s:o}",
			 "id", (json_int_t)in->id, "key", json_str_or_null(in->key), "type",
			 json_str_or_null(in->type), "hook", json_str_or_null(in->hook), "provider",
			 json_str_or_null(in->provider), "event", json_str_or_null(in->event), "received",
			 (json_int_t)in->received, "size", (json_int_t)in->payload_len,
			 "state", json_str_or_null(in->state), "bug", (json_int_t)in->bug_id,
			 "detail", json_str_or_null(in->detail));
}

json_t *store_stats_json(const struct store_stats *st)
{
	json_t *bugs = json_object();

	for (size_t i = 0; store_bug_states[i] && bugs; i++)
		json_object_set_new(bugs, store_bug_states[i], json_integer(st->bugs_by_state[i]));
	return json_pack("{s:s, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:{s:I, s:I, s:I}, s:{s:I},"
			 " s:{s:I, s:I}}",
			 "scheduler", st->scheduler, "bugs", bugs, "jobs", "queued", (json_int_t)st->jobs_queued,
			 "running", (json_int_t)st->jobs_running, "done",
			 (json_int_t)st->jobs_done, "failed", (json_int_t)st->jobs_failed,
			 "cancelled", (json_int_t)st->jobs_cancelled, "oldest_queued",
			 (json_int_t)st->oldest_queued, "outbox", "pending",
			 (json_int_t)st->outbox_pending, "sent", (json_int_t)st->outbox_sent,
			 "parked", (json_int_t)st->outbox_parked, "llm", "wait_until",
			 (json_int_t)st->llm_wait_until, "upstream", "compared",
			 (json_int_t)st->upstream_compared, "matched", (json_int_t)st->upstream_matched);
}

/* What the bug's jobs spent on the model (their results' "llm"). */
json_t *store_bug_llm_json(struct store *s, int64_t bug)
{
	struct store_job **jobs = NULL;
	json_int_t calls = 0, tin = 0, tout = 0;
	double cost = 0;
	size_t n = 0;

	if (store_job_list(s, NULL, bug, 0, &jobs, &n) < 0)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		_cleanup_json_ json_t *r = jobs[i]->result ? json_loads(jobs[i]->result, 0, NULL) : NULL;
		json_t *l = r ? json_object_get(r, "llm") : NULL;

		if (!json_is_object(l))
			continue;
		calls += json_get_int(l, "calls", 0);
		tin += json_get_int(l, "tokens_in", 0);
		tout += json_get_int(l, "tokens_out", 0);
		cost += json_number_value(json_object_get(l, "cost"));
	}
	store_job_list_free(jobs, n);
	return json_pack("{s:I, s:I, s:I, s:f}", "calls", calls, "tokens_in", tin,
			 "tokens_out", tout, "cost", cost);
}
