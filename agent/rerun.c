/* A rerun of a repair from one of its steps (kfixctl repair --rerun).
 *
 * The engine runs again from the start; until it first acts in the
 * chosen step it is in the prefix, where the earlier run's trajectory
 * answers for the model and for the builds and VM runs: each model call,
 * build, run, probe, compile and selftest run takes the next recorded
 * event of its kind, in order, and must ask what that event asked (the
 * step and prompt of a model call, the diff of a build).  Nothing of the
 * prefix reaches the model or a VM.  A request the record does not hold
 * means the engine took another path than the recorded run: the rerun
 * stops with -ESTALE rather than invent an answer.  From the chosen step
 * on everything is live and the operator's directive is in every
 * prompt.
 *
 * Exploration tools (read_file, grep, ...) read the base tree: they run
 * in the prefix too, and give what they gave. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/strutil.h"
#include "repair-internal.h"

static const char *const kinds[] = { "llm.call", "tool.build", "tool.run", "tool.probe",
				     "tool.compile", "tool.selftests", NULL };

struct rerun {
	char *from;
	json_t *queue[6];  /* per kind: the prefix's events, in order */
	size_t next[6];
	bool live;
	int64_t checkpoint; /* the recorded run's first event of the step */
	json_t *seen;	    /* the steps of the prefix */
};

static int kind_index(const char *kind)
{
	for (int i = 0; kinds[i]; i++)
		if (streq(kinds[i], kind))
			return i;
	return -1;
}

void rerun_free(struct rerun *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(r->queue); i++)
		json_decref(r->queue[i]);
	json_decref(r->seen);
	free(r->from);
	free(r);
}

int rerun_new(const json_t *events, const char *from, struct rerun **ret, char **ret_error)
{
	_cleanup_(rerun_freep) struct rerun *r = calloc(1, sizeof(*r));
	const json_t *e;
	size_t i;

	if (!r || !(r->from = strdup(from)) || !(r->seen = json_object()))
		return -ENOMEM;
	for (size_t k = 0; k < ARRAY_SIZE(r->queue); k++)
		if (!(r->queue[k] = json_array()))
			return -ENOMEM;
	json_array_foreach(events, i, e) {
		const char *step = json_get_str(e, "step");
		int k;

		if (step && streq(step, from)) {
			r->checkpoint = json_get_int(e, "id", 0);
			break;
		}
		k = kind_index(json_get_str(e, "kind") ?: "");
		if (k >= 0 && json_array_append(r->queue[k], (json_t *)e) < 0)
			return -ENOMEM;
		if (step && json_object_set_new(r->seen, step, json_true()) < 0)
			return -ENOMEM;
	}
	/* "run" is every event's parent: from there nothing is replayed */
	if (!r->checkpoint && !streq(from, "run"))
		return error_set(ret_error, -ENOENT, "the earlier run never reached step %s", from);
	*ret = TAKE_PTR(r);
	return 0;
}

/* Live at the step, or at any step the prefix never had: the engine is
 * past the checkpoint then (a step like "precheck" acts through none of
 * the calls that enter steps). */
int rerun_enter(struct rerun *r, const char *step)
{
	if (r->live || (!streq(step, r->from) && json_object_get(r->seen, step)))
		return 0;
	r->live = true;
	return 1;
}

bool rerun_is_live(const struct rerun *r)
{
	return r->live;
}

const char *rerun_from(const struct rerun *r)
{
	return r->from;
}

int rerun_next(struct rerun *r, const char *kind, const char *step, const json_t **ret,
	       char **ret_error)
{
	int k = kind_index(kind);
	const json_t *e;

	if (k < 0)
		return -EINVAL;
	e = json_array_get(r->queue[k], r->next[k]);
	if (!e)
		return error_set(ret_error, -ESTALE,
				 "rerun: %s in step %s, but the earlier run had no more %s before step %s",
				 kind, step, kind, r->from);
	if (!streq_ptr(json_get_str(e, "step"), step))
		return error_set(ret_error, -ESTALE,
				 "rerun: %s in step %s where the earlier run's (event %lld) was in step %s",
				 kind, step, (long long)json_get_int(e, "id", 0), json_get_str(e, "step") ?: "?");
	r->next[k]++;
	*ret = e;
	return 0;
}

json_t *rerun_counts(const struct rerun *r)
{
	json_t *o = json_object();

	for (size_t k = 0; o && kinds[k]; k++)
		json_object_set_new(o, kinds[k], json_integer((json_int_t)r->next[k]));
	return o;
}

int64_t rerun_checkpoint(const struct rerun *r)
{
	return r->checkpoint;
}

int repair_rerun_resolve(const json_t *events, const char *from, char **ret_step,
			 char **ret_error)
{
	const json_t *e;
	uint64_t id = 0;
	size_t i;
	bool by_id = parse_uint64(from, &id) >= 0;

	json_array_foreach(events, i, e) {
		const char *step = json_get_str(e, "step");

		if (!step || (by_id ? json_get_int(e, "id", 0) != (json_int_t)id : !streq(step, from)))
			continue;
		*ret_step = strdup(step);
		return *ret_step ? 0 : -ENOMEM;
	}
	return error_set(ret_error, -ENOENT, by_id ? "the earlier run has no event %s" :
			 "the earlier run never reached step %s", from);
}
