/* Failure attribution over a trajectory; see diagnose.h.  The event
 * vocabulary read here is the one repair*.c writes: "tool.build" and
 * "tool.run" verdicts, "llm.call" errors, "localise"/"plan" locations,
 * "gate" verdicts, the "observation" of each candidate (search.c's score
 * names), "tool.probe" verdicts and the "guardrail" events. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "diagnose.h"
#include "udiff-internal.h"

#define EVIDENCE_MAX 400

const char *diag_family_name(enum diag_family f)
{
	static const char *const names[] = {
		"none", "infrastructure", "model-error", "localisation", "edits", "gates",
		"validation", "probes", "budget", "unknown",
	};

	return (unsigned)f < ARRAY_SIZE(names) ? names[f] : "unknown";
}

static const char *kind(const json_t *e)
{
	return json_get_str(e, "kind") ?: "";
}

static const char *verdict(const json_t *e)
{
	return json_get_str(e, "verdict") ?: "";
}

static bool is(const json_t *e, const char *k, const char *v)
{
	return streq(kind(e), k) && (!v || streq(verdict(e), v));
}

void diagnosis_free(struct diagnosis *d)
{
	if (!d)
		return;
	free(d->step);
	free(d->evidence);
	free(d->why);
	free(d->directive);
	free(d->from);
	free(d);
}

int diagnose_diff_files(const char *diff, char ***ret)
{
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_free_ char *err = NULL;
	_cleanup_strv_ char **files = NULL;

	if (diff && udiff_parse(diff, strlen(diff), &d, &err) >= 0)
		for (size_t i = 0; i < d->n_files; i++)
			if (!strv_contains(files, udiff_file_path(&d->files[i])) &&
			    strv_push(&files, udiff_file_path(&d->files[i])) < 0)
				return -ENOMEM;
	if (!files && !(files = calloc(1, sizeof(char *))))
		return -ENOMEM;
	*ret = TAKE_PTR(files);
	return 0;
}

/* A quote of the event: its error, else its verdict with the text that
 * says most (a candidate's result, a gate's reason, a log's tail). */
static char *quote(const json_t *e, const char *detail)
{
	const char *err = json_get_str(e, "error");
	char *q;

	if (err && detail)
		q = strdup_printf("%s: %s", err, detail);
	else if (err)
		q = strdup(err);
	else if (detail)
		q = strdup_printf("%s: %s", verdict(e), detail);
	else
		q = strdup(verdict(e));
	if (q && strlen(q) > EVIDENCE_MAX)
		strcpy(q + EVIDENCE_MAX - 3, "...");
	return q;
}

static int set(struct diagnosis *d, enum diag_family f, const json_t *e, const char *detail,
	       const char *from, const char *why, const char *directive)
{
	d->family = f;
	d->event = e ? json_get_int(e, "id", 0) : 0;
	d->step = strdup(e ? json_get_str(e, "step") ?: "run" : "run");
	d->evidence = e ? quote(e, detail) : strdup(detail ?: "");
	d->why = strdup(why);
	d->directive = strdup(directive ?: "");
	d->from = strdup(from);
	return d->step && d->evidence && d->why && d->directive && d->from ? 0 : -ENOMEM;
}

static bool run_ok(const json_t *e)
{
	json_t *o = json_object_get(e, "output");

	return is(e, "tool.run", NULL) && json_get_int(o, "crashed", 0) + json_get_int(o, "survived", 0) > 0;
}

/* An infrastructure failure that nothing after it got past. */
static const json_t *infra_failure(const json_t *events)
{
	const json_t *bad = NULL, *e;
	size_t i;

	json_array_foreach(events, i, e) {
		json_t *o = json_object_get(e, "output");
		bool failed = is(e, "tool.build", "infra-error") || is(e, "tool.run", "infra-error") ||
			      (is(e, "tool.run", NULL) && !run_ok(e) &&
			       (json_get_int(o, "infra", 0) > 0 || json_is_true(json_object_get(o, "boot_error"))));

		if (failed && !bad)
			bad = e;
		else if (bad && (is(e, "tool.build", "built") || run_ok(e)))
			bad = NULL;
	}
	return bad;
}

/* The last model call failed: that is what ended the run. */
static const json_t *model_failure(const json_t *events)
{
	const json_t *last = NULL, *e;
	size_t i;

	json_array_foreach(events, i, e)
		if (is(e, "llm.call", NULL))
			last = e;
	return last && json_get_str(last, "error") ? last : NULL;
}

static char *join(char *const *v)
{
	struct buf b = BUF_INIT(EVIDENCE_MAX);

	for (size_t i = 0; v[i]; i++)
		(void)buf_printf(&b, "%s%s", i ? ", " : "", v[i]);
	return b.data ? buf_steal(&b, NULL) : strdup("");
}

static bool touches(char *const *files, char *const *fix_files)
{
	for (size_t i = 0; files && files[i]; i++)
		if (strv_contains(fix_files, files[i]))
			return true;
	return false;
}

/* With the developers' fix known: no location and no candidate in any of
 * its files.  ret_first is the first location proposed (or NULL). */
static int localisation_missed(const json_t *events, char *const *fix_files, bool *ret_missed,
			       const json_t **ret_first, char **ret_where)
{
	struct buf where = BUF_INIT(EVIDENCE_MAX);
	const json_t *e, *first = NULL;
	bool hit = false;
	size_t i;

	json_array_foreach(events, i, e) {
		_cleanup_strv_ char **files = NULL;
		const char *f = json_get_str(json_object_get(e, "input"), "file");

		if (streq(json_get_str(e, "step") ?: "", "localise") && is(e, "plan", NULL) && f) {
			first = first ?: e;
			hit |= strv_contains(fix_files, f);
			(void)buf_printf(&where, "%s%s", where.len ? ", " : "", f);
		}
		if ((is(e, "gate", NULL) || is(e, "tool.probe", NULL)) &&
		    diagnose_diff_files(json_get_str(json_object_get(e, "input"), "diff"), &files) < 0)
			return buf_free(&where), -ENOMEM;
		hit |= touches(files, fix_files);
	}
	*ret_missed = !hit;
	*ret_first = first;
	*ret_where = where.data ? buf_steal(&where, NULL) : strdup("no location proposed");
	return *ret_where ? 0 : -ENOMEM;
}

/* search.c's scores, worst first */
static int score_rank(const char *v)
{
	static const char *const scores[] = { "unusable", "rejected", "build-error",
					      "same-crash", "other-crash", "validated" };

	for (size_t i = 0; i < ARRAY_SIZE(scores); i++)
		if (streq(v, scores[i]))
			return (int)i + 1;
	return 0;
}

static const json_t *first_with(const json_t *events, const char *k, const char *v)
{
	const json_t *e;
	size_t i;

	json_array_foreach(events, i, e)
		if (is(e, k, v))
			return e;
	return NULL;
}

/* The gate that said no, with its reason. */
static char *gate_reason(const json_t *gate)
{
	json_t *g;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(gate, "output"), "gates"), i, g)
		if (streq(json_get_str(g, "verdict") ?: "", "reject"))
			return strdup_printf("%s: %s", json_get_str(g, "gate") ?: "?",
					     json_get_str(g, "reason") ?: "");
	return strdup("rejected");
}

static int candidates(const json_t *events, struct diagnosis *d, bool *ret_done)
{
	const json_t *e, *best = NULL;
	int rank = 0;
	size_t i;

	json_array_foreach(events, i, e)
		if (is(e, "observation", NULL) && score_rank(verdict(e)) > rank) {
			rank = score_rank(verdict(e));
			best = e;
		}
	*ret_done = true;
	if (rank >= 4) {
		_cleanup_free_ char *directive = strdup_printf(
			"Every candidate that ran still crashed (%s). The hypothesis behind them is "
			"likely wrong: find where the object the crash names was freed or sized "
			"before writing another patch.",
			json_get_str(json_object_get(best, "output"), "result") ?: verdict(best));

		return directive ? set(d, DIAG_VALIDATION, best,
				       json_get_str(json_object_get(best, "output"), "result"),
				       "hypotheses", "candidates were built and run, and the kernel still crashed",
				       directive)
				 : -ENOMEM;
	}
	if (rank == 3)
		return set(d, DIAG_EDITS, best, json_get_str(json_object_get(best, "output"), "result"),
			   "patch", "no candidate built",
			   "Check every edit with the compile tool before proposing the patch.");
	if (rank == 2) {
		const json_t *g = first_with(events, "gate", "rejected");
		_cleanup_free_ char *why = gate_reason(g ?: best);
		_cleanup_free_ char *directive = why ? strdup_printf(
			"Every candidate was rejected by an integrity gate (%s). Change what the "
			"gate says is wrong; do not silence the check or the report.", why) : NULL;

		return directive ? set(d, DIAG_GATES, g ?: best, why, "patch",
				       "every candidate was rejected by a gate", directive)
				 : -ENOMEM;
	}
	e = first_with(events, "guardrail", "edits sent back");
	if (rank == 1 || e)
		return set(d, DIAG_EDITS, e ?: best,
			   json_get_str(json_object_get(e ?: best, "output"), "error"), "patch",
			   "the edits never applied to the tree",
			   "Copy the lines an edit replaces exactly as read_file shows them, "
			   "indentation included, and keep each edit small.");
	*ret_done = false;
	return 0;
}

static const json_t *probes_all_failed(const json_t *events)
{
	const json_t *e, *first = NULL;
	size_t i;

	json_array_foreach(events, i, e) {
		if (is(e, "tool.probe", "crashed") || is(e, "tool.probe", "no crash"))
			return NULL;
		if (!first && (is(e, "tool.probe", NULL) || is(e, "guardrail", "probe refused")))
			first = e;
	}
	return first;
}

static bool says_budget(const char *s)
{
	return s && (strstr(s, "budget") || strstr(s, "wall-clock") || strstr(s, "stagnation") ||
		     strstr(s, "turn limit"));
}

static const json_t *budget_stop(const json_t *events, const char **ret_text)
{
	const json_t *e;
	size_t i;

	json_array_foreach(events, i, e) {
		const char *t = json_get_str(json_object_get(e, "output"), "reason") ?:
				json_get_str(e, "error");

		if (says_budget(t) || says_budget(json_get_str(e, "verdict"))) {
			*ret_text = says_budget(t) ? t : verdict(e);
			return e;
		}
	}
	return NULL;
}

static int classify(const json_t *events, char *const *fix_files, struct diagnosis *d)
{
	const json_t *e, *end = first_with(events, "run.end", NULL);
	_cleanup_free_ char *where = NULL;
	const char *text = NULL;
	bool done, missed;
	int r;

	if (end && streq(verdict(end), "validated"))
		return set(d, DIAG_NONE, end, NULL, "run", "the repair validated a patch", NULL);
	if ((e = infra_failure(events)))
		return set(d, DIAG_INFRA, e, NULL, json_get_str(e, "step") ?: "run",
			   "a build or VM host failed, not the patch",
			   "Nothing to tell the model: rerun once the build and VM hosts are healthy.");
	if ((e = model_failure(events)))
		return set(d, DIAG_MODEL, e, NULL, json_get_str(e, "step") ?: "run",
			   "the model endpoint failed",
			   "Check the provider's endpoint, key, quota and time-out, then rerun.");
	if (fix_files && fix_files[0]) {
		r = localisation_missed(events, fix_files, &missed, &e, &where);
		if (r < 0)
			return r;
		if (missed) {
			_cleanup_free_ char *fixed = join(fix_files);
			_cleanup_free_ char *directive = fixed ? strdup_printf(
				"The fix is expected in %s. Read it first and say which of its "
				"functions the crash passes through.", fixed) : NULL;

			return directive ? set(d, DIAG_LOCALISATION,
					       e ?: first_with(events, "llm.call", NULL), where, "localise",
					       "no location or candidate was in a file the fix changed",
					       directive)
					 : -ENOMEM;
		}
	}
	r = candidates(events, d, &done);
	if (r < 0 || done)
		return r;
	if ((e = probes_all_failed(events)))
		return set(d, DIAG_PROBES, e, NULL, "probe", "every probe failed to build or run",
			   "Keep probes to one printk per function, on lines the crash passes, and "
			   "compile them before running.");
	if ((e = budget_stop(events, &text)))
		return set(d, DIAG_BUDGET, e, text, json_get_str(e, "step") ?: "run",
			   "the budget or the stagnation guard stopped the search",
			   "Raise the budget, or rerun from the hypotheses with a narrower one.");
	if (!first_with(events, "plan", "new location") && first_with(events, "llm.call", NULL))
		return set(d, DIAG_LOCALISATION, first_with(events, "llm.call", NULL),
			   "no location proposed", "localise", "no location was ever proposed",
			   "Name the function the crash's first frame in kernel code is in, and the "
			   "file it is defined in.");
	return set(d, DIAG_UNKNOWN, end, end ? NULL : "the trajectory has no end", "run",
		   "no rule matched", NULL);
}

int diagnose_trajectory(const json_t *events, char *const *fix_files, struct diagnosis **ret)
{
	_cleanup_(diagnosis_freep) struct diagnosis *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	if (!json_is_array(events))
		return -EINVAL;
	r = classify(events, fix_files, d);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(d);
	return 0;
}

json_t *diagnosis_json(const struct diagnosis *d)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:s, s:{s:s, s:s}}", "family",
			 diag_family_name(d->family), "step", d->step, "event", (json_int_t)d->event,
			 "evidence", d->evidence, "why", d->why, "recovery", "from", d->from,
			 "directive", d->directive);
}
