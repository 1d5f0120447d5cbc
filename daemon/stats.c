#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/strutil.h"
#include "stats.h"
#include "store.h"

#define LABEL_VALUE_MAX 64

static const struct family {
	const char *name, *help;
} families[] = {
	{ "kfix_builds_total", "Kernel builds by jobs, by result." },
	{ "kfix_build_duration_seconds", "Time of one kernel build, by result." },
	{ "kfix_vm_runs_total", "Reproducer runs in VMs by jobs, by outcome." },
	{ "kfix_vm_run_duration_seconds", "Time of one reproducer run in a VM, by outcome." },
	{ "kfix_llm_calls_total", "LLM calls by jobs, by model and result." },
	{ "kfix_llm_call_duration_seconds", "Time of one LLM call (retries included), by model." },
	{ "kfix_llm_tokens_total", "LLM tokens, by model and direction (input, output)." },
	{ "kfix_llm_cost_dollars_total", "LLM cost in US dollars (the configured prices), by model." },
};

static const char *const build_results[] = {
	"ok", "build-error", "patch-error", "config-error", "infra-error", NULL,
};
static const char *const run_outcomes[] = {
	"crashed", "no-crash", "build-error", "boot-error", "infra-error", NULL,
};

static const char *known_or_other(const char *v, const char *const *known)
{
	for (size_t i = 0; v && known[i]; i++)
		if (streq(v, known[i]))
			return known[i];
	return "other";
}

/* A model name as a label value: kept when it is short and plain (it
 * comes from the configuration), else "other". */
static void model_label(const char *model, char *buf, size_t n)
{
	size_t len = model ? strlen(model) : 0;

	if (len == 0 || len > LABEL_VALUE_MAX ||
	    strspn(model, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:/@+-") != len)
		model = "other";
	snprintf(buf, n, "%s", model);
}

/* Counter and histogram of one event, in one transaction. */
static int record(struct store *s, const char *total, const char *duration,
		  const char *labels, double seconds)
{
	int r = store_begin(s);

	if (r < 0)
		return r;
	r = store_metric_add(s, total, labels, 1);
	if (r >= 0)
		r = store_metric_observe(s, duration, labels, seconds < 0 ? 0 : seconds);
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	return store_commit(s);
}

int stats_build(struct store *s, const char *result, double seconds)
{
	char labels[64];

	snprintf(labels, sizeof(labels), "result=\"%s\"", known_or_other(result, build_results));
	return record(s, "kfix_builds_total", "kfix_build_duration_seconds", labels, seconds);
}

int stats_vm_run(struct store *s, const char *outcome, double seconds)
{
	char labels[64];

	snprintf(labels, sizeof(labels), "outcome=\"%s\"", known_or_other(outcome, run_outcomes));
	return record(s, "kfix_vm_runs_total", "kfix_vm_run_duration_seconds", labels, seconds);
}

int stats_llm_call(struct store *s, const char *model, bool ok, double seconds,
		   uint64_t tokens_in, uint64_t tokens_out, double cost)
{
	char m[LABEL_VALUE_MAX + 1], labels[160];
	int r = store_begin(s);

	if (r < 0)
		return r;
	model_label(model, m, sizeof(m));
	snprintf(labels, sizeof(labels), "model=\"%s\",result=\"%s\"", m, ok ? "ok" : "failed");
	r = store_metric_add(s, "kfix_llm_calls_total", labels, 1);
	snprintf(labels, sizeof(labels), "model=\"%s\"", m);
	if (r >= 0)
		r = store_metric_observe(s, "kfix_llm_call_duration_seconds", labels,
					 seconds < 0 ? 0 : seconds);
	if (r >= 0 && cost > 0)
		r = store_metric_add(s, "kfix_llm_cost_dollars_total", labels, cost);
	snprintf(labels, sizeof(labels), "model=\"%s\",direction=\"input\"", m);
	if (r >= 0 && tokens_in > 0)
		r = store_metric_add(s, "kfix_llm_tokens_total", labels, (double)tokens_in);
	snprintf(labels, sizeof(labels), "model=\"%s\",direction=\"output\"", m);
	if (r >= 0 && tokens_out > 0)
		r = store_metric_add(s, "kfix_llm_tokens_total", labels, (double)tokens_out);
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	return store_commit(s);
}

/* ---- rendering ---- */

static const char *family_help(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(families); i++)
		if (streq(families[i].name, name))
			return families[i].help;
	return "Recorded by kfix jobs.";
}

/* name{labels,extra} with the braces left out when both are empty. */
static int series(struct buf *out, const char *name, const char *suffix,
		  const char *labels, const char *extra)
{
	bool l = *labels, e = extra && *extra;

	if (!l && !e)
		return buf_printf(out, "%s%s", name, suffix);
	return buf_printf(out, "%s%s{%s%s%s}", name, suffix, labels, l && e ? "," : "",
			  e ? extra : "");
}

static int render_histogram(struct buf *out, const struct store_metric *m)
{
	int64_t cum = 0;
	int r = 0;

	for (size_t i = 0; i < STORE_METRIC_BUCKETS && r >= 0; i++) {
		char le[32];

		cum += m->bucket[i];
		snprintf(le, sizeof(le), "le=\"%g\"", store_metric_bounds[i]);
		r = series(out, m->name, "_bucket", m->labels, le);
		if (r >= 0)
			r = buf_printf(out, " %lld\n", (long long)cum);
	}
	if (r >= 0)
		r = series(out, m->name, "_bucket", m->labels, "le=\"+Inf\"");
	if (r >= 0)
		r = buf_printf(out, " %lld\n", (long long)m->count);
	if (r >= 0)
		r = series(out, m->name, "_sum", m->labels, NULL);
	if (r >= 0)
		r = buf_printf(out, " %.6f\n", m->value);
	if (r >= 0)
		r = series(out, m->name, "_count", m->labels, NULL);
	if (r >= 0)
		r = buf_printf(out, " %lld\n", (long long)m->count);
	return r;
}

int stats_render(struct store *s, struct buf *out)
{
	struct store_metric **ms = NULL;
	size_t n = 0;
	int r = store_metric_list(s, &ms, &n);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		const struct store_metric *m = ms[i];

		/* a family's series are adjacent: the list is ordered by name */
		if (i == 0 || !streq(ms[i - 1]->name, m->name))
			r = buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", m->name,
				       family_help(m->name), m->name,
				       m->histogram ? "histogram" : "counter");
		if (r < 0)
			break;
		if (m->histogram) {
			r = render_histogram(out, m);
			continue;
		}
		r = series(out, m->name, "", m->labels, NULL);
		if (r >= 0)
			r = buf_printf(out, " %.15g\n", m->value);
	}
	store_metric_list_free(ms, n);
	return r;
}
