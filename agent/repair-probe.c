/* Execution grounding: probes the model writes (kAgent), built and run
 * by the engine, on the base or on top of a candidate patch.  A probe
 * that does not apply, is refused by the gates or does not compile is
 * answered with the reason, so the model can correct it; a probe that
 * ran is answered with its lines and how the run ended.  Candidate edits
 * can be compiled alone (check_compile), the touched objects only. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "gates.h"
#include "llm-internal.h"
#include "repair-internal.h"

/* Probe rounds in one repair: each is a kernel build and a VM run. */
#define PROBE_ROUNDS_MAX 8
#define COMPILER_MESSAGES_MAX 4000

static const char *next_line(const char *l)
{
	const char *e = strchr(l, '\n');

	return e ? e + 1 : l + strlen(l);
}

static bool has_marker(const char *l)
{
	const char *e = strchr(l, '\n');
	size_t n = e ? (size_t)(e - l) : strlen(l);

	return memmem(l, n, KFIX_PROBE_MARKER, strlen(KFIX_PROBE_MARKER)) != NULL;
}

static bool same_line(const char *a, const char *b)
{
	size_t na = strcspn(a, "\n"), nb = strcspn(b, "\n");

	return na == nb && memcmp(a, b, na) == 0;
}

/* A probe edit only inserts lines, each carrying the marker: "after" is
 * "before" with such lines added. */
static bool probe_edit_ok(const json_t *e)
{
	const char *b = json_get_str(e, "before"), *a = json_get_str(e, "after");
	bool added = false;

	if (!a || !b)
		return false;
	while (*a) {
		if (*b && same_line(a, b)) {
			b = next_line(b);
		} else if (has_marker(a)) {
			added = true;
		} else
			return false;
		a = next_line(a);
	}
	return !*b && added;
}

/* A trace_printk line, read back or dumped with an oops, starts with the
 * task, its pid, the CPU, flags and a time ("<...>-49 0..... 140009us :"
 * dumped, "kfix-rep-52 [000] ..... 4.801: " read back), which vary from
 * run to run (the task's name is known to the buffer or not): from
 * "FUNCTION: marker" on, it is what the probe printed.  A printk line's
 * stamp ends in "] " and the line is kept whole, its "pfx: " included. */
static const char *trace_text(const char *l, size_t n)
{
	const char *m = memmem(l, n, KFIX_PROBE_MARKER, strlen(KFIX_PROBE_MARKER)), *f;
	size_t k;

	if (!m || m - l < 4 || m[-1] != ' ' || m[-2] != ':')
		return l;
	f = m - 2;
	while (f > l && (isalnum((unsigned char)f[-1]) || f[-1] == '_' || f[-1] == '.'))
		f--;
	if (f == m - 2 || f == l || f[-1] != ' ')
		return l;
	k = (size_t)(f - l);
	if (k >= 5 && !memcmp(f - 5, "us : ", 5))
		return f;
	return k >= 3 && f[-2] == ':' && isdigit((unsigned char)f[-3]) ? f : l;
}

static char *probe_lines(const char *log)
{
	_cleanup_buf_ struct buf b = BUF_INIT(16 * 1024);

	for (const char *l = log; l && *l; l = next_line(l))
		if (has_marker(l)) {
			const char *t = trace_text(l, (size_t)(next_line(l) - l));

			(void)buf_append_trunc(&b, t, (size_t)(next_line(l) - t));
		}
	return b.len ? buf_steal(&b, NULL) : strdup("(no probe line was printed)\n");
}

/* A rerun's prefix: the recorded probe round (the probe lines stand for
 * the console they were read from). */
static int replay_probe(struct repair_ctx *c, const char *step, struct repair_outcome *o,
			char **ret_log)
{
	const json_t *e, *out;
	const char *v;
	int r = repair_replay_next(c, "tool.probe", step, &e);

	if (r < 0)
		return r;
	v = json_get_str(e, "verdict") ?: "";
	out = json_object_get(e, "output");
	if (streq(v, "build-error")) {
		*ret_log = strdup(json_get_str(out, "compiler") ?: "");
		return *ret_log ? -ENOEXEC : -ENOMEM;
	}
	if (json_get_str(e, "error"))
		return -EIO;
	o->runs = 1;
	o->crashed = streq(v, "crashed");
	o->survived = !o->crashed;
	o->log = strdup(json_get_str(out, "probe_lines") ?: "");
	o->title = json_get_strdup(out, "title");
	return o->log ? 0 : -ENOMEM;
}

/* The compiler's errors, with the lines after each, from a build log. */
static char *compiler_messages(const char *log)
{
	_cleanup_buf_ struct buf b = BUF_INIT(COMPILER_MESSAGES_MAX);
	int after = 0;

	for (const char *l = log ?: ""; *l; l = next_line(l)) {
		size_t n = (size_t)(next_line(l) - l);

		if (memmem(l, n, "error:", 6) || memmem(l, n, "Error ", 6))
			after = 4;
		if (after > 0) {
			(void)buf_append_trunc(&b, l, n);
			after--;
		}
	}
	if (b.len == 0) {
		size_t len = strlen(log ?: "");

		(void)buf_puts(&b, log ? log + (len > 2000 ? len - 2000 : 0) : "(no build log)");
	}
	return buf_steal(&b, NULL) ?: strdup("");
}

/* Edits to a diff, through the gates a probe passes: model-written code
 * is built on the build host.  *ret_refusal says why not, for the model. */
static int gated_diff(struct repair_ctx *c, const json_t *edits, char **ret_diff,
		      char **ret_refusal)
{
	_cleanup_(gate_verdicts_freep) struct gate_verdicts *v = NULL;
	_cleanup_free_ char *diff = NULL, *err = NULL;
	int r;

	r = c->ts->apply(c->ts->ud, edits, &diff, &err);
	if (r == -EINVAL || (r >= 0 && !diff)) {
		*ret_refusal = strdup_printf("the edits do not apply: %s", err ?: "?");
		return *ret_refusal ? 0 : -ENOMEM;
	}
	if (r < 0)
		return r;
	r = gates_run_probe(diff, strlen(diff), c->p->src_dir, &v);
	if (r < 0)
		return r;
	if (!gate_verdicts_accepted(v)) {
		*ret_refusal = strdup_printf("refused: %s", gate_verdicts_failure(v));
		return *ret_refusal ? 0 : -ENOMEM;
	}
	*ret_diff = TAKE_PTR(diff);
	return 0;
}

/* Every edit of the probe must be a probe edit; patch edits, when given,
 * come first and are what the probe goes on top of. */
static int probe_diff(struct repair_ctx *c, const json_t *args, char **ret_diff,
		      char **ret_refusal)
{
	const json_t *edits = json_object_get(args, "edits"), *patch = json_object_get(args, "patch_edits");
	_cleanup_json_ json_t *all = json_array();
	json_t *e;
	size_t i;

	if (!all)
		return -ENOMEM;
	if (json_array_size(edits) == 0) {
		*ret_refusal = strdup("the probe has no edits");
		return 0;
	}
	json_array_foreach(edits, i, e)
		if (!probe_edit_ok(e)) {
			*ret_refusal = strdup_printf("probe edit %zu must only add lines, each containing "
						     "\"%s\" (put candidate changes in patch_edits)",
						     i, KFIX_PROBE_MARKER);
			return *ret_refusal ? 0 : -ENOMEM;
		}
	if (json_is_array(patch))
		json_array_extend(all, (json_t *)patch);
	json_array_extend(all, (json_t *)edits);
	return gated_diff(c, all, ret_diff, ret_refusal);
}

/* One probe round.  *ret_answer is for the model; *ret_ran says whether
 * the probe ran (its lines are then in c->probe_output too). */
static int probe_round(struct repair_ctx *c, const char *step, const json_t *args,
		       char **ret_answer, bool *ret_ran)
{
	_cleanup_free_ char *diff = NULL, *refusal = NULL, *log = NULL, *lines = NULL;
	struct repair_outcome o = {};
	uint64_t t0;
	int r;

	*ret_ran = false;
	if (c->probe_rounds >= PROBE_ROUNDS_MAX) {
		*ret_answer = strdup_printf("error: the %d probe rounds of this repair are spent",
					    PROBE_ROUNDS_MAX);
		return *ret_answer ? 0 : -ENOMEM;
	}
	r = probe_diff(c, args, &diff, &refusal);
	if (r < 0)
		return r;
	if (refusal) {
		repair_event(c, step, "guardrail", 0, json_incref((json_t *)args), NULL,
			     "probe refused", refusal);
		*ret_answer = strdup_printf("error: %s", refusal);
		return *ret_answer ? 0 : -ENOMEM;
	}
	c->probe_rounds++;
	repair_progress(c, step, "building and running with probes (round %u)", c->probe_rounds);
	t0 = trajectory_now();
	repair_rerun_step(c, step);
	if (c->ts->probe && repair_replaying(c)) {
		r = replay_probe(c, step, &o, &log);
		if (r == -ESTALE)
			return r;
	} else if (c->ts->probe)
		r = c->ts->probe(c->ts->ud, diff, &o);
	else if ((r = repair_do_build(c, step, diff, &log)) >= 0)
		r = repair_do_run(c, step, 1, &o);
	if (r == -ENOEXEC) {
		_cleanup_free_ char *msgs = compiler_messages(log ?: o.log);

		repair_event(c, step, "tool.probe", t0, json_pack("{s:s}", "diff", diff),
			     json_pack("{s:s}", "compiler", msgs ?: ""), "build-error", NULL);
		repair_outcome_clear(&o);
		*ret_answer = strdup_printf("error: the probe does not compile:\n%s", msgs ?: "");
		return *ret_answer ? 0 : -ENOMEM;
	}
	if (r < 0) {
		repair_event(c, step, "tool.probe", t0, json_pack("{s:s}", "diff", diff), NULL,
			     "probe failed", strerror(-r));
		repair_outcome_clear(&o);
		*ret_answer = strdup_printf("error: the probe could not be run (%s); go on without it",
					    strerror(-r));
		return *ret_answer ? 0 : -ENOMEM;
	}
	lines = probe_lines(o.log);
	repair_event(c, step, "tool.probe", t0, json_pack("{s:s}", "diff", diff),
		     json_pack("{s:s, s:s?}", "probe_lines", lines, "title", o.title),
		     o.crashed ? "crashed" : "no crash", NULL);
	r = asprintf(ret_answer, "%s\nThe run %s%s%s\n", lines,
		     o.crashed ? "crashed: " : "did not crash",
		     o.title ?: "", json_array_size(json_object_get(args, "patch_edits")) ?
		     " (with the patch edits applied)" : "");
	repair_outcome_clear(&o);
	if (r < 0)
		return -ENOMEM;
	free(c->probe_output);
	if (!(c->probe_output = strdup(*ret_answer)))
		return -ENOMEM;
	repair_set_var(c, "probe_output", c->probe_output);
	*ret_ran = true;
	return 0;
}

/* request_probes in the probe step: a probe that ran ends the step, one
 * that failed goes back to the model. */
static int ground_act(struct repair_ctx *c, const char *tool, const json_t *args, void *ud,
		      char **ret_feedback)
{
	bool ran;
	int r;

	(void)ud;
	if (!streq(tool, "request_probes"))
		return 0;
	r = probe_round(c, "probe", args, ret_feedback, &ran);
	if (r < 0 || ran || c->probe_rounds >= PROBE_ROUNDS_MAX)
		return r < 0 ? r : 0;
	return 1;
}

int repair_ground(struct repair_ctx *c, char **ret_error)
{
	static const char *const tools[] = { "request_probes", "skip_probes", NULL };
	_cleanup_free_ char *tool = NULL;
	_cleanup_json_ json_t *args = NULL;

	repair_set_var(c, "probe_output", "(no probes were run)");
	return repair_converse(c, "probe", "probe", tools, ground_act, NULL, &tool, &args,
			       ret_error);
}

/* A tool call's edits as a diff, or (*ret_diff left NULL) the gates'
 * refusal of them as the tool's answer. */
static int edits_diff(struct repair_ctx *c, const json_t *args, char **ret_diff,
		      char **ret_answer)
{
	_cleanup_free_ char *refusal = NULL;
	int r;

	r = gated_diff(c, json_object_get(args, "edits"), ret_diff, &refusal);
	if (r < 0 || !refusal)
		return r;
	*ret_answer = strdup_printf("error: %s", refusal);
	return *ret_answer ? 0 : -ENOMEM;
}

/* check_compile: the candidate edits compiled, object by object, against
 * the cached build (no link, no run): seconds instead of a build. */
static int compile_round(struct repair_ctx *c, const char *step, const json_t *args,
			 char **ret_answer)
{
	_cleanup_free_ char *diff = NULL, *log = NULL;
	uint64_t t0 = trajectory_now();
	int r;

	r = edits_diff(c, args, &diff, ret_answer);
	if (r < 0 || !diff)
		return r;
	repair_rerun_step(c, step);
	if (repair_replaying(c)) {
		const json_t *e;
		const char *v;

		r = repair_replay_next(c, "tool.compile", step, &e);
		if (r < 0)
			return r;
		v = json_get_str(e, "verdict") ?: "";
		log = strdup(json_get_str(json_object_get(e, "output"), "log") ?: "");
		r = !log ? -ENOMEM : repair_build_verdict_errno(v, "compiles");
	} else
		r = c->ts->compile(c->ts->ud, diff, &log);
	repair_event(c, step, "tool.compile", t0, json_pack("{s:s}", "diff", diff),
		     json_pack("{s:s}", "log", log ?: ""),
		     repair_build_verdict(r, "compiles"),
		     r < 0 && r != -ENOEXEC ? strerror(-r) : NULL);
	if (r == -ENOEXEC) {
		_cleanup_free_ char *msgs = compiler_messages(log);

		*ret_answer = strdup_printf("error: does not compile:\n%s", msgs ?: "");
	} else if (r < 0)
		*ret_answer = strdup_printf("error: the compile check could not run (%s)", strerror(-r));
	else
		*ret_answer = strdup("The touched files compile (not linked, not run: only "
				     "propose_patch tests the fix).\n");
	return *ret_answer ? 0 : -ENOMEM;
}

/* checkpatch: the tree's checkpatch.pl on the candidate edits, the style
 * review a maintainer runs first (the gate rejects its errors). */
#define CHECKPATCH_ANSWER_MAX (8 * 1024)

static bool style_check_offered(const struct repair_ctx *c)
{
	return c->p->src_dir && c->p->gates.checkpatch;
}

static int checkpatch_round(struct repair_ctx *c, const char *step, const json_t *args,
			    char **ret_answer)
{
	_cleanup_(checkpatch_result_free) struct checkpatch_result res = { 0 };
	_cleanup_free_ char *diff = NULL;
	uint64_t t0 = trajectory_now();
	int r;

	r = edits_diff(c, args, &diff, ret_answer);
	if (r < 0 || !diff)
		return r;
	r = checkpatch_run(c->p->src_dir, diff, strlen(diff), CHECKPATCH_ANSWER_MAX, &res);
	if (r == -ENOMEM)
		return r;
	repair_event(c, step, "tool.checkpatch", t0, json_pack("{s:s}", "diff", diff),
		     json_pack("{s:i, s:i, s:s}", "errors", res.n_errors, "warnings",
			       res.n_warnings, "report", res.report ?: ""),
		     r < 0 ? "not-run" : res.n_errors ? "errors" : "clean",
		     r < 0 ? strerror(-r) : NULL);
	if (r < 0)
		*ret_answer = strdup_printf("error: checkpatch.pl could not run (%s)", strerror(-r));
	else
		*ret_answer = strdup_printf("checkpatch.pl: %u error(s), %u warning(s)%s\n%s",
					    res.n_errors, res.n_warnings,
					    res.n_errors ? " (a patch with errors is rejected)" : "",
					    res.report);
	return *ret_answer ? 0 : -ENOMEM;
}

/* Steps where the model may run a probe of its own. */
static bool probing_step(const char *step)
{
	return streq(step, "hypotheses") || streq(step, "patch") || streq(step, "final") ||
	       streq(step, "reflect");
}

json_t *repair_exec_defs(struct repair_ctx *c, const char *step)
{
	json_t *t, *out = json_array();
	size_t i;

	if (!out || !probing_step(step))
		return out;
	json_array_foreach(c->tools, i, t)
		if (streq_ptr(json_get_str(t, "name"), "run_probe") ||
		    (c->ts->compile && streq_ptr(json_get_str(t, "name"), "check_compile")) ||
		    (style_check_offered(c) && streq_ptr(json_get_str(t, "name"), "checkpatch")))
			json_array_append(out, t);
	return out;
}

int repair_exec_call(struct repair_ctx *c, const char *step, const char *name,
		     const json_t *args, char **ret_answer)
{
	bool ran;

	if (!probing_step(step))
		return -ENOENT;
	if (streq(name, "check_compile") && c->ts->compile)
		return compile_round(c, step, args, ret_answer);
	if (streq(name, "checkpatch") && style_check_offered(c))
		return checkpatch_round(c, step, args, ret_answer);
	if (!streq(name, "run_probe"))
		return -ENOENT;
	return probe_round(c, step, args, ret_answer, &ran);
}
