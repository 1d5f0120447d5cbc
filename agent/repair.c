/* The repair workflow; see repair.h. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "common/buf.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "edits.h"
#include "kb.h"
#include "llm-internal.h"
#include "prompt.h"
#include "repair-internal.h"
#include "repro/report.h"
#include "repro/tree.h"
#include "udiff-internal.h"

#define INFRA_RETRIES 3
#define EXCERPT_MAX 4000

void repair_outcome_clear(struct repair_outcome *o)
{
	free(o->title);
	free(o->log);
	free(o->behaviour);
	free(o->selftests);
	free(o->regressions);
	free(o->selftest_note);
	free(o->leaks);
	*o = (struct repair_outcome){};
}

void repair_summary_free(struct repair_summary *s)
{
	if (!s)
		return;
	free(s->reason);
	free(s->diff);
	free(s->commit_message);
	free(s);
}

const char *repair_result_name(enum repair_result r)
{
	static const char *const names[] = { "validated", "not-reproducible", "already-fixed",
					     "no-reproducer", "gave-up" };

	return (unsigned)r < ARRAY_SIZE(names) ? names[r] : "?";
}

void repair_params_default(struct repair_params *p)
{
	*p = (struct repair_params){
		.have_reproducer = true,
		.limits = SEARCH_LIMITS_DEFAULT,
		.gates = GATE_LIMITS_DEFAULT,
		.turns = REPAIR_TURN_LIMITS_DEFAULT,
		.base_runs = 3,
		.validate_runs = 5,
		.locations = 3,
		.context_budget = 48 * 1024,
		.minimise = true,
		.read_reproduced = true,
		.critique = true,
	};
}

int repair_params_from_config(const struct config *c, struct repair_params *p)
{
	uint64_t size;
	int64_t v;
	int r;

	r = search_limits_from_config(c, &p->limits);
	if (r < 0)
		return r;
	(void)gate_limits_from_config(c, &p->gates);
	if (config_get_int(c, "agent", NULL, "base-runs", &v) >= 0)
		p->base_runs = (unsigned)v;
	if (config_get_int(c, "agent", NULL, "validate-runs", &v) >= 0)
		p->validate_runs = (unsigned)v;
	if (config_get_int(c, "agent", NULL, "locations", &v) >= 0)
		p->locations = (unsigned)v;
	if (config_get_size(c, "agent", NULL, "context-budget", &size) >= 0)
		p->context_budget = (size_t)size;
	(void)config_get_bool(c, "agent", NULL, "minimise", &p->minimise);
	(void)config_get_bool(c, "agent", NULL, "patch-review", &p->critique);
	(void)config_get_bool(c, "agent", NULL, "read-reproduced", &p->read_reproduced);
	if (config_get_int(c, "agent", NULL, "max-step-turns", &v) >= 0 && v > 0)
		p->turns.step_turns = (unsigned)v;
	if (config_get_int(c, "agent", NULL, "max-turns", &v) >= 0 && v > 0)
		p->turns.job_turns = (unsigned)v;
	if (config_get_size(c, "agent", NULL, "max-tool-answer", &size) >= 0 && size >= 1024)
		p->turns.tool_answer = (size_t)size;
	if (config_get_size(c, "agent", NULL, "max-step-answers", &size) >= 0 && size >= 1024)
		p->turns.step_answers = (size_t)size;
	if (config_get_size(c, "agent", NULL, "max-context", &size) >= 0 && size >= 16 * 1024)
		p->turns.context = (size_t)size;
	return 0;
}

static char *excerpt(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	/* the end of a log holds the error or the crash */
	return strdup(n > max ? s + n - max : s ?: "");
}

/* The report the model reads: its head (the title line and the first
 * trace) and its end, the middle cut at line ends when it is long. */
#define REPORT_HEAD_MAX (8u * 1024)
#define REPORT_TAIL_MAX (4u * 1024)

static char *report_for_model(const char *s, size_t head, size_t tail)
{
	size_t n = s ? strlen(s) : 0, h = head, t = n - tail;
	char *out;

	if (n <= head + tail)
		return strdup(s ?: "");
	while (h > 0 && s[h - 1] != '\n')
		h--;
	while (t < n && s[t - 1] != '\n')
		t++;
	if (h == 0)
		h = head;
	if (asprintf(&out, "%.*s[... %zu bytes of the report left out ...]\n%s", (int)h, s,
		     t - h, s + t) < 0)
		return NULL;
	return out;
}

static int finish(struct repair_ctx *c, enum repair_result res, const char *fmt, ...)
	_printf_(3, 4);
static int finish(struct repair_ctx *c, enum repair_result res, const char *fmt, ...)
{
	va_list ap;

	c->sum->result = res;
	free(c->sum->reason);
	va_start(ap, fmt);
	if (vasprintf(&c->sum->reason, fmt, ap) < 0)
		c->sum->reason = NULL;
	va_end(ap);
	repair_progress(c, "done", "%s: %s", repair_result_name(res), c->sum->reason ?: "");
	return 0;
}

/* --- toolstack calls, each an event ---------------------------------------- */

/* --- a rerun's prefix: the earlier run's events answer ---------------------- */

bool repair_replaying(const struct repair_ctx *c)
{
	return c->rerun && !rerun_is_live(c->rerun);
}

void repair_rerun_step(struct repair_ctx *c, const char *step)
{
	if (!c->rerun || rerun_enter(c->rerun, step) <= 0)
		return;
	repair_event(c, step, "rerun.live", 0,
		     json_pack("{s:s, s:I, s:s?}", "from", rerun_from(c->rerun), "checkpoint",
			       (json_int_t)rerun_checkpoint(c->rerun), "directive", c->p->directive),
		     json_pack("{s:o}", "replayed", rerun_counts(c->rerun)), "live", NULL);
	repair_progress(c, step, "rerun: live from step %s on", step);
}

int repair_replay_next(struct repair_ctx *c, const char *kind, const char *step,
		       const json_t **ret)
{
	_cleanup_free_ char *err = NULL;
	int r = rerun_next(c->rerun, kind, step, ret, &err);

	if (r == -ESTALE && !c->rerun_error)
		c->rerun_error = TAKE_PTR(err);
	return r;
}

const char *repair_build_verdict(int r, const char *ok)
{
	return r >= 0 ? ok : r == -ENOEXEC ? "build-error" : "infra-error";
}

int repair_build_verdict_errno(const char *verdict, const char *ok)
{
	return streq(verdict, ok) ? 0 : streq(verdict, "build-error") ? -ENOEXEC : -EIO;
}

/* The recorded build: its verdict and log; the diff must be the one the
 * earlier run built. */
static int replay_build(struct repair_ctx *c, const char *step, const char *diff, char **ret_log)
{
	const json_t *e;
	const char *v;
	int r = repair_replay_next(c, "tool.build", step, &e);

	if (r < 0)
		return r;
	if (!streq_ptr(json_get_str(json_object_get(e, "input"), "diff"), diff ?: "(base)")) {
		if (!c->rerun_error)
			c->rerun_error = strdup_printf("rerun: step %s built another diff than the earlier "
						       "run's event %lld", step, (long long)json_get_int(e, "id", 0));
		return -ESTALE;
	}
	v = json_get_str(e, "verdict") ?: "";
	*ret_log = strdup(json_get_str(json_object_get(e, "output"), "log") ?: "");
	if (!*ret_log)
		return -ENOMEM;
	return repair_build_verdict_errno(v, "built");
}

/* The recorded run's outcome, as the toolstack gave it. */
static int replay_run(struct repair_ctx *c, const char *step, unsigned runs,
		      struct repair_outcome *ret)
{
	const json_t *e, *o;
	int r = repair_replay_next(c, "tool.run", step, &e);

	if (r < 0)
		return r;
	if (json_get_int(json_object_get(e, "input"), "runs", -1) != runs) {
		if (!c->rerun_error)
			c->rerun_error = strdup_printf("rerun: step %s asked for %u runs, the earlier run's "
						       "event %lld for others", step, runs,
						       (long long)json_get_int(e, "id", 0));
		return -ESTALE;
	}
	if (json_get_str(e, "error"))
		return -EIO;
	o = json_object_get(e, "output");
	ret->runs = runs;
	ret->crashed = (unsigned)json_get_int(o, "crashed", 0);
	ret->survived = (unsigned)json_get_int(o, "survived", 0);
	ret->infra = (unsigned)json_get_int(o, "infra", 0);
	ret->failed_exits = (unsigned)json_get_int(o, "failed_exits", 0);
	ret->leak_checked = (unsigned)json_get_int(o, "leak_checked", 0);
	ret->leaked = (unsigned)json_get_int(o, "leaked", 0);
	ret->boot_error = json_get_bool(o, "boot_error", false);
	ret->hung = json_get_bool(o, "hung", false);
	ret->title = json_get_strdup(o, "title");
	ret->log = json_get_strdup(o, "log");
	ret->behaviour = json_get_strdup(o, "behaviour");
	ret->leaks = json_get_strdup(o, "leaks");
	return 0;
}

int repair_do_build(struct repair_ctx *c, const char *step, const char *diff, char **ret_log)
{
	uint64_t t0 = trajectory_now();
	_cleanup_free_ char *log = NULL;
	int r = -EIO;

	repair_rerun_step(c, step);
	for (int i = 0; i < INFRA_RETRIES; i++) {
		free(log);
		log = NULL;
		r = repair_replaying(c) ? replay_build(c, step, diff, &log) : c->ts->build(c->ts->ud, diff, &log);
		if (r >= 0 || r == -ENOEXEC || r == -ESTALE)
			break;
	}
	if (r == -ESTALE)
		return r;
	repair_event(c, step, "tool.build", t0,
		     json_pack("{s:s}", "diff", diff ?: "(base)"),
		     json_pack("{s:s}", "log", log ?: ""),
		     repair_build_verdict(r, "built"),
		     r < 0 && r != -ENOEXEC ? strerror(-r) : NULL);
	if (ret_log)
		*ret_log = TAKE_PTR(log);
	return r;
}

static const char *run_verdict(const struct repair_outcome *o, char *buf, size_t n)
{
	if (o->crashed)
		snprintf(buf, n, "crashed %u/%u: %s", o->crashed, o->runs, o->title ?: "?");
	else
		snprintf(buf, n, "no crash in %u/%u", o->survived, o->runs);
	return buf;
}

int repair_do_run(struct repair_ctx *c, const char *step, unsigned runs,
		  struct repair_outcome *ret)
{
	int r = -EIO;

	for (int i = 0; i < INFRA_RETRIES; i++) {
		uint64_t t0 = trajectory_now();
		char v[512];

		repair_outcome_clear(ret);
		repair_rerun_step(c, step);
		if (repair_replaying(c)) {
			r = replay_run(c, step, runs, ret);
			if (r == -ESTALE)
				return r;
		} else {
			r = c->ts->run(c->ts->ud, runs, ret);
			c->live_runs += r >= 0;
		}
		repair_event(c, step, "tool.run", t0, json_pack("{s:i}", "runs", runs),
			     json_pack("{s:i, s:i, s:i, s:s?, s:s?, s:i, s:s?, s:i, s:i, s:s?, s:b, s:b}",
				       "crashed", ret->crashed, "survived", ret->survived,
				       "infra", ret->infra, "title", ret->title, "log", ret->log,
				       "failed_exits", ret->failed_exits, "behaviour", ret->behaviour,
				       "leak_checked", ret->leak_checked, "leaked", ret->leaked,
				       "leaks", ret->leaks, "boot_error", ret->boot_error,
				       "hung", ret->hung),
			     r < 0 ? "infra-error" : run_verdict(ret, v, sizeof(v)),
			     r < 0 ? strerror(-r) : NULL);
		/* Infrastructure faults are retried, never counted: a verdict
		 * needs every run asked for, except that one crash decides and
		 * a kernel that does not boot never will. */
		if (r >= 0 && (ret->crashed > 0 || ret->survived >= runs || ret->boot_error))
			return 0;
	}
	/* a kernel that loses the guest on every try hangs: its caller
	 * judges whether that is the patch's fault */
	if (r >= 0 && ret->hung)
		return 0;
	return r < 0 ? r : -EIO;
}

static bool same_crash(struct repair_ctx *c, const char *title)
{
	return report_titles_same(title, c->title);
}

/* A report without source lines (a raw console log, a mail's excerpt)
 * gives way to the crash just reproduced, which the toolstack symbolised
 * with the base kernel's vmlinux: its file:line are the tree's that the
 * model's tools read, and the gates map frames to functions by them. */
static int use_reproduced_report(struct repair_ctx *c, const struct repair_outcome *base)
{
	_cleanup_(report_freep) struct report *rep = NULL;
	struct crash_info *crash = NULL;
	_cleanup_free_ char *text = NULL, *shown = NULL;
	int r;

	if (!base->log || report_symbolised(c->report, c->report_len) ||
	    !report_symbolised(base->log, strlen(base->log)))
		return 0;
	r = report_parse(base->log, strlen(base->log), &rep);
	if (r < 0)
		return r;
	/* from the oops line on: the lines before it are the boot's and
	 * differ with each run's timing */
	text = strdup(report_oops_text(rep) ? report_oops_text(rep) : base->log);
	if (!text)
		return -ENOMEM;
	r = crash_info_parse(text, strlen(text), &crash);
	if (r < 0 && r != -ENOMSG)
		return r;
	shown = report_for_model(text, REPORT_HEAD_MAX, REPORT_TAIL_MAX);
	if (!shown) {
		crash_info_free(crash);
		return -ENOMEM;
	}
	if (crash) {
		crash_info_free(c->crash);
		c->crash = crash;
	}
	free(c->local_report);
	c->local_report = TAKE_PTR(text);
	c->report = c->local_report;
	c->report_len = strlen(c->local_report);
	repair_set_var(c, "report", shown);
	repair_event(c, "reproduce", "observation", 0, NULL,
		     json_pack("{s:s}", "report", c->local_report), "symbolised-report", NULL);
	return 0;
}

/* --- pre-checks and reproduction ---------------------------------------------- */

static char *find_extid(const char *report)
{
	const char *p = strstr(report, "syzbot+");
	size_t n = 0;

	if (!p)
		return NULL;
	p += 7;
	while (n < 40 && ((p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'f')))
		n++;
	return n >= 8 ? strndup(p, n) : NULL;
}

static int precheck(struct repair_ctx *c, bool *ret_done)
{
	_cleanup_(report_freep) struct report *rep = NULL;
	int r;

	*ret_done = true;
	c->report = c->p->report;
	c->report_len = c->p->report_len;
	r = crash_info_parse(c->report, c->report_len, &c->crash);
	if (r < 0 && r != -ENOMSG)
		return r;
	if (c->p->title)
		c->title = strdup(c->p->title);
	else if (report_parse(c->p->report, c->p->report_len, &rep) >= 0 && report_title(rep))
		c->title = strdup(report_title(rep));
	else if (c->crash)
		c->title = strdup(c->crash->title);
	if (!c->title)
		return finish(c, REPAIR_GAVE_UP, "the report holds no crash");
	c->extid = c->p->syzbot_id ? strdup(c->p->syzbot_id) : find_extid(c->p->report);
	repair_event(c, "precheck", "plan", 0, json_pack("{s:s, s:s?}", "title", c->title,
		     "syzbot", c->extid), NULL, NULL, NULL);
	if (!c->p->have_reproducer)
		return finish(c, REPAIR_NO_REPRODUCER, "no reproducer: nothing to test a fix with");
	if (c->extid && c->ts->already_fixed) {
		_cleanup_free_ char *needle = NULL, *commit = NULL;

		if (asprintf(&needle, "syzbot+%s@", c->extid) < 0)
			return -ENOMEM;
		if (c->ts->already_fixed(c->ts->ud, needle, &commit) == 1) {
			repair_event(c, "precheck", "observation", 0, NULL,
				     json_pack("{s:s}", "fixed_by", commit ?: ""), "already-fixed", NULL);
			return finish(c, REPAIR_ALREADY_FIXED, "already fixed by %s", commit ?: "?");
		}
	}
	*ret_done = false;
	return 0;
}

static int reproduce(struct repair_ctx *c, struct repair_outcome *base, bool *ret_done)
{
	_cleanup_free_ char *log = NULL;
	int r;

	*ret_done = true;
	repair_progress(c, "reproduce", "building the base kernel");
	r = repair_do_build(c, "reproduce", NULL, &log);
	if (r < 0)
		return r == -ENOEXEC ? finish(c, REPAIR_GAVE_UP, "the base kernel does not build") : r;
	repair_progress(c, "reproduce", "running the reproducer %u times", c->p->base_runs);
	r = repair_do_run(c, "reproduce", c->p->base_runs, base);
	if (r < 0)
		return r;
	if (base->boot_error)
		return finish(c, REPAIR_GAVE_UP, "the base kernel does not boot");
	if (base->crashed == 0 && base->hung)
		return -EIO; /* the base losing the guest is the VMs' fault, or no verdict */
	if (base->crashed == 0)
		return finish(c, REPAIR_NOT_REPRODUCED, "no crash in %u runs on the base kernel",
			      base->survived);
	if (!same_crash(c, base->title))
		return finish(c, REPAIR_NOT_REPRODUCED, "the base kernel crashed differently: %s (expected %s)",
			      base->title ?: "?", c->title);
	repair_progress(c, "reproduce", "reproduced %u/%u: %s", base->crashed, base->runs, base->title);
	if (c->p->read_reproduced) {
		r = use_reproduced_report(c, base);
		if (r < 0)
			return r;
	}
	*ret_done = false;
	return 0;
}

/* --- localisation --------------------------------------------------------- */

static size_t count_lines(const char *p, size_t n)
{
	size_t k = 1;

	for (size_t i = 0; i < n; i++)
		k += p[i] == '\n';
	return k;
}

static int add_code(struct repair_ctx *c, struct buf *b, const char *file, const char *fn,
		    unsigned line)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0, start = 0, end = 0;
	unsigned first = 1;
	char head[512];

	if (c->ts->read_file(c->ts->ud, file, &data, &len) < 0)
		return 0;
	if (!fn || c_find_function(data, len, fn, &start, &end, &first) < 0) {
		/* no definition found: 20 lines either side of the line */
		unsigned from = line > 20 ? line - 20 : 1, l = 1;

		for (size_t i = 0; i < len && l < from; i++)
			if (data[i] == '\n' && ++l == from)
				start = i + 1;
		first = from;
		end = start;
		for (l = from; end < len && l <= from + 40; end++)
			if (data[end] == '\n')
				l++;
	}
	snprintf(head, sizeof(head), "\n== %s: %s (from line %u)\n", file, fn ?: "?", first);
	/* numbered as read_file numbers them: 7 columns a line */
	if (b->len + strlen(head) + (end - start) + 8 * count_lines(data + start, end - start) >
	    b->max)
		return -E2BIG;
	(void)buf_puts(b, head);
	for (size_t i = start, l = first; i < end; l++) {
		const char *nl = memchr(data + i, '\n', end - i);
		size_t n = nl ? (size_t)(nl - (data + i)) : end - i;

		(void)buf_printf(b, "%6zu\t%.*s\n", l, (int)n, data + i);
		i += n + 1;
	}
	return 0;
}

/* Code of the crashing frames, closest first, until the budget is spent. */
static int build_context(struct repair_ctx *c)
{
	_cleanup_buf_ struct buf b = BUF_INIT(c->p->context_budget);
	_cleanup_strv_ char **seen = NULL;
	size_t used = 0;

	for (size_t i = 0; c->crash && i < c->crash->n_frames; i++) {
		const struct crash_frame *f = &c->crash->frames[i];
		char key[512];

		if (!f->file || crash_function_is_infra(f->function))
			continue;
		snprintf(key, sizeof(key), "%s:%s", f->file, f->function);
		if (strv_contains(seen, key))
			continue;
		(void)strv_push(&seen, key);
		if (add_code(c, &b, f->file, f->function, f->line) == -E2BIG)
			break;
		used++;
	}
	repair_set_var(c, "context", b.data ?: "(no source available for the frames)");
	repair_event(c, "localise", "observation", 0, json_pack("{s:i}", "budget",
		     (int)c->p->context_budget), json_pack("{s:i, s:i}", "functions", (int)used,
		     "bytes", (int)b.len), NULL, NULL);
	return 0;
}

static bool same_location(const json_t *a, const json_t *b)
{
	json_int_t as = json_get_int(a, "start_line", 0), ae = json_get_int(a, "end_line", as);
	json_int_t bs = json_get_int(b, "start_line", 0), be = json_get_int(b, "end_line", bs);

	if (!streq_ptr(json_get_str(a, "file"), json_get_str(b, "file")))
		return false;
	if (streq_ptr(json_get_str(a, "function"), json_get_str(b, "function")))
		return true;
	return as && bs && as <= be && bs <= ae;
}

static char *format_locations(const json_t *locs)
{
	_cleanup_buf_ struct buf b = BUF_INIT(64 * 1024);
	json_t *l;
	size_t i;

	json_array_foreach(locs, i, l)
		(void)buf_printf(&b, "%zu. %s: %s() lines %lld-%lld: %s\n", i + 1,
				 json_get_str(l, "file") ?: "?", json_get_str(l, "function") ?: "?",
				 (long long)json_get_int(l, "start_line", 0),
				 (long long)json_get_int(l, "end_line", 0),
				 json_get_str(l, "reason") ?: "");
	return b.len ? buf_steal(&b, NULL) : strdup("(none yet)");
}

static int localise(struct repair_ctx *c, char **ret_error)
{
	static const char *const tools[] = { "propose_location", "no_more_locations", NULL };
	_cleanup_buf_ struct buf hints = BUF_INIT(8192);
	int r;

	r = build_context(c);
	if (r < 0)
		return r;
	if (c->p->hints)
		(void)buf_printf(&hints, "\nThe fix is expected in these files:\n%s\n", c->p->hints);
	repair_set_var(c, "hints", hints.data ?: "");
	for (unsigned i = 0; i < c->p->locations; i++) {
		_cleanup_free_ char *tool = NULL, *earlier = format_locations(c->locations);
		_cleanup_json_ json_t *args = NULL;
		bool dup = false;
		json_t *l;
		size_t k;

		repair_set_var(c, "earlier", earlier);
		r = repair_ask(c, "localise", "localise", tools, &tool, &args, ret_error);
		if (r < 0)
			return r;
		if (streq(tool, "no_more_locations") || !json_get_str(args, "file"))
			break;
		json_array_foreach(c->locations, k, l)
			dup |= same_location(l, args);
		repair_event(c, "localise", "plan", 0, json_incref(args), NULL,
			     dup ? "merged" : "new location", NULL);
		/* a repeat means the model has nothing new to offer */
		if (dup)
			break;
		json_array_append(c->locations, args);
	}
	{
		_cleanup_free_ char *locs = format_locations(c->locations);

		repair_set_var(c, "locations", locs);
		repair_progress(c, "localise", "%zu candidate location(s)", json_array_size(c->locations));
	}
	return 0;
}

/* --- hypotheses ------------------------------------------------------------------ */

static char *format_hypotheses(const json_t *hyps)
{
	_cleanup_buf_ struct buf b = BUF_INIT(64 * 1024);
	json_t *h;
	size_t i;

	json_array_foreach(hyps, i, h)
	{
		json_int_t loc = json_get_int(h, "location", 0);

		(void)buf_printf(&b, "%zu. %s\n   Evidence: %s\n   Fix: %s\n", i,
				 json_get_str(h, "root_cause") ?: "?", json_get_str(h, "evidence") ?: "",
				 json_get_str(h, "fix_idea") ?: "");
		if (loc > 0)
			(void)buf_printf(&b, "   At location %lld\n", (long long)loc);
	}
	return buf_steal(&b, NULL) ?: strdup("");
}

static int hypothesise(struct repair_ctx *c, char **ret_error)
{
	static const char *const state[] = { "state_hypotheses", NULL };
	static const char *const rank[] = { "rank_hypotheses", NULL };
	_cleanup_free_ char *tool = NULL, *tool2 = NULL, *text = NULL;
	_cleanup_json_ json_t *args = NULL, *order = NULL;
	json_t *hyps, *ranked = json_array(), *idx;
	size_t i;
	int r;

	r = repair_ask(c, "hypotheses", "hypotheses", state, &tool, &args, ret_error);
	if (r < 0) {
		json_decref(ranked);
		return r;
	}
	hyps = json_object_get(args, "hypotheses");
	if (json_array_size(hyps) == 0) {
		json_decref(ranked);
		*ret_error = strdup_printf("the model stated no hypothesis");
		return -EBADMSG;
	}
	text = format_hypotheses(hyps);
	repair_set_var(c, "hypotheses", text);
	if (json_array_size(hyps) > 1) {
		r = repair_ask(c, "hypotheses", "review", rank, &tool2, &order, ret_error);
		if (r < 0) {
			json_decref(ranked);
			return r;
		}
		json_array_foreach(json_object_get(order, "order"), i, idx) {
			json_t *h = json_array_get(hyps, (size_t)json_integer_value(idx));

			if (json_is_integer(idx) && h && json_array_size(ranked) < c->p->limits.branching)
				json_array_append(ranked, h);
		}
	}
	/* whatever the review left out keeps its stated order */
	json_array_foreach(hyps, i, idx) {
		bool have = false;
		json_t *h;
		size_t k;

		json_array_foreach(ranked, k, h)
			have |= h == idx;
		if (!have && json_array_size(ranked) < c->p->limits.branching)
			json_array_append(ranked, idx);
	}
	c->hypotheses = ranked;
	repair_event(c, "hypotheses", "plan", 0, NULL, json_incref(ranked), "ranked", NULL);
	repair_progress(c, "hypotheses", "%zu hypothes%s to pursue", json_array_size(ranked),
			json_array_size(ranked) == 1 ? "is" : "es");
	return 0;
}

/* --- attempts ---------------------------------------------------------------------- */

void repair_attempt_clear(struct attempt *a)
{
	free(a->diff);
	free(a->result);
	free(a->evidence);
	free(a->patch_type);
	free(a->gates);
	free(a->review);
	repair_outcome_clear(&a->outcome);
	*a = (struct attempt){};
}

static void set_result(struct attempt *a, enum attempt_score s, const char *evidence,
		       const char *fmt, ...) _printf_(4, 5);
static void set_result(struct attempt *a, enum attempt_score s, const char *evidence,
		       const char *fmt, ...)
{
	va_list ap;

	a->score = s;
	free(a->result);
	va_start(ap, fmt);
	if (vasprintf(&a->result, fmt, ap) < 0)
		a->result = NULL;
	va_end(ap);
	free(a->evidence);
	a->evidence = excerpt(evidence, EXCERPT_MAX);
}

/* "pass: scope, size, ...", then "flag: GATE: REASON" lines. */
static int gates_summary(const struct gate_verdicts *v, char **ret)
{
	_cleanup_buf_ struct buf b = BUF_INIT(16 * 1024);

	(void)buf_puts(&b, "passed:");
	for (size_t i = 0, n = 0; i < gate_verdicts_count(v); i++) {
		const char *name, *reason;
		enum gate_status st;

		gate_verdicts_get(v, i, &name, &st, &reason);
		if (st == GATE_PASS && !streq(name, "parse"))
			(void)buf_printf(&b, "%s %s", n++ ? "," : "", name);
	}
	for (size_t i = 0; i < gate_verdicts_count(v); i++) {
		const char *name, *reason;
		enum gate_status st;

		gate_verdicts_get(v, i, &name, &st, &reason);
		if (st == GATE_FLAG)
			(void)buf_printf(&b, "\n  flagged by %s: %s", name, reason);
		else if (st == GATE_SKIP)
			(void)buf_printf(&b, "\n  skipped %s: %s", name, reason);
	}
	if (b.truncated || !b.data)
		return -ENOMEM;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

/* The first line of s, bounded, for a one-line result. */
static const char *first_line(const char *s, char *buf, size_t n)
{
	snprintf(buf, n, "%.*s", (int)strcspn(s ?: "", "\n"), s ?: "");
	return buf;
}

/* Judges a diff: gates, build, validation runs. */
/* Crash gone, reproducer content, nothing leaked: the kernel's own
 * tests of the changed code must still pass. */
static int run_selftests(struct repair_ctx *c, const char *step, struct attempt *a)
{
	const struct repair_outcome *o = &a->outcome;
	uint64_t t0 = trajectory_now();
	int r;

	if (!c->ts->selftests || o->crashed || o->runs == 0 || o->boot_error || o->hung ||
	    o->failed_exits || o->leaked)
		return 0;
	repair_rerun_step(c, step);
	if (repair_replaying(c)) {
		const json_t *e, *so;

		r = repair_replay_next(c, "tool.selftests", step, &e);
		if (r < 0)
			return r;
		so = json_object_get(e, "output");
		a->outcome.selftests = json_get_strdup(so, "results");
		a->outcome.selftest_regressions = (unsigned)json_get_int(so, "regressions", 0);
		a->outcome.regressions = json_get_strdup(so, "report");
		a->outcome.selftest_note = json_get_strdup(so, "note");
		r = json_get_str(e, "error") ? -EIO : 0;
	} else
		r = c->ts->selftests(c->ts->ud, a->diff, &a->outcome);
	if (r == -ENOMEM)
		return r;
	repair_event(c, step, "tool.selftests", t0, NULL,
		     json_pack("{s:s?, s:i, s:s?, s:s?}", "results", o->selftests, "regressions",
			       o->selftest_regressions, "report", o->regressions, "note",
			       o->selftest_note),
		     r < 0 ? "infra-error" : o->selftest_regressions ? "regressed" :
		     o->selftests ? "passed" : "none", r < 0 ? strerror(-r) : NULL);
	/* an infrastructure failure of the tests is said in the mail, not
	 * held against the patch */
	if (r < 0 && !a->outcome.selftest_note &&
	    asprintf(&a->outcome.selftest_note, "the selftests could not run: %s", strerror(-r)) < 0)
		return -ENOMEM;
	return 0;
}

static int judge(struct repair_ctx *c, const char *step, struct attempt *a)
{
	_cleanup_(gate_verdicts_freep) struct gate_verdicts *v = NULL;
	_cleanup_free_ char *log = NULL, *crash = NULL, *gates = NULL;
	uint64_t t0 = trajectory_now();
	char verdict[512];
	int r;

	r = gates_run(a->diff, strlen(a->diff), c->report, c->report_len, c->p->src_dir,
		      &c->p->gates, &v);
	if (r < 0)
		return r;
	repair_event(c, step, "gate", t0, json_pack("{s:s}", "diff", a->diff),
		     gate_verdicts_to_json(v), gate_verdicts_accepted(v) ? "accepted" : "rejected",
		     NULL);
	if (!gate_verdicts_accepted(v)) {
		set_result(a, SCORE_REJECTED, gate_verdicts_failure(v),
			   "rejected by an integrity gate: %s", gate_verdicts_failure(v));
		return 0;
	}
	r = gates_summary(v, &gates);
	if (r < 0)
		return r;
	r = repair_do_build(c, step, a->diff, &log);
	if (r == -ENOEXEC) {
		set_result(a, SCORE_BUILD_ERROR, log, "the patched kernel does not build");
		return 0;
	}
	if (r < 0)
		return r;
	r = repair_do_run(c, step, c->p->validate_runs, &a->outcome);
	if (r < 0)
		return r;
	if (a->outcome.crashed > 0 && a->outcome.log) {
		r = crash_excerpt(a->outcome.log, strlen(a->outcome.log), EXCERPT_MAX, &crash);
		if (r < 0)
			return r;
	}
	r = run_selftests(c, step, a);
	if (r < 0)
		return r;
	/* The base booted and ran the reproducer: a patched kernel that
	 * does not boot or hangs is the patch's failure, shown to the model. */
	if (a->outcome.boot_error || (a->outcome.hung && a->outcome.crashed == 0))
		set_result(a, SCORE_BUILD_ERROR, a->outcome.log,
			   a->outcome.boot_error ? "the patched kernel does not boot" :
			   "the patched kernel hangs: the guest stopped answering and printed no crash");
	else if (a->outcome.crashed == 0 && a->outcome.failed_exits > 0)
		set_result(a, SCORE_OTHER_CRASH, a->outcome.behaviour,
			   "the crash is gone but the behaviour changed: the reproducer failed in "
			   "%u/%u runs (%s)", a->outcome.failed_exits, a->outcome.runs,
			   first_line(a->outcome.behaviour, verdict, sizeof(verdict)));
	else if (a->outcome.crashed == 0 && a->outcome.leaked > 0)
		set_result(a, SCORE_OTHER_CRASH, a->outcome.leaks,
			   "the crash is gone but kmemleak found memory the reproducer leaked in "
			   "%u/%u runs", a->outcome.leaked, a->outcome.runs);
	else if (a->outcome.crashed == 0 && a->outcome.selftest_regressions > 0)
		set_result(a, SCORE_OTHER_CRASH, a->outcome.regressions,
			   "the crash is gone but %u kselftest(s) that pass on the base kernel do not "
			   "on the patched kernel", a->outcome.selftest_regressions);
	else if (a->outcome.crashed == 0) {
		set_result(a, SCORE_VALIDATED, NULL, "no crash in %u/%u runs", a->outcome.survived,
			   a->outcome.runs);
		free(a->gates);
		a->gates = TAKE_PTR(gates);
	}
	else if (same_crash(c, a->outcome.title))
		set_result(a, SCORE_SAME_CRASH, crash, "still crashes (%u/%u): %s",
			   a->outcome.crashed, a->outcome.runs, a->outcome.title);
	else
		set_result(a, SCORE_OTHER_CRASH, crash, "a different crash (%u/%u): %s",
			   a->outcome.crashed, a->outcome.runs, a->outcome.title ?: "?");
	snprintf(verdict, sizeof(verdict), "%s", attempt_score_name(a->score));
	repair_event(c, step, "observation", 0, NULL, json_pack("{s:s}", "result", a->result),
		     verdict, NULL);
	return 0;
}

/* The adversarial review of a patch that stopped the crash.  Crash gone
 * is not fixed (CrashFixer's crash-stopping patches were judged half
 * wrong by hand): with the tree's tools, the model looks for a correct
 * caller whose behaviour the change alters, and what deleted code did.
 * Anything but "correct" makes the attempt a failure fed back. */
static int critique(struct repair_ctx *c, struct attempt *a, char **ret_error)
{
	static const char *const tools[] = { "review_patch", NULL };
	_cleanup_free_ char *tool = NULL;
	_cleanup_json_ json_t *args = NULL;
	const char *verdict, *findings;
	char line[512];
	int r;

	if (!c->p->critique || a->score != SCORE_VALIDATED)
		return 0;
	repair_set_var(c, "diff", a->diff);
	repair_set_var(c, "gates", a->gates ?: "");
	r = repair_ask(c, "review", "critique", tools, &tool, &args, ret_error);
	if (r < 0)
		return r;
	verdict = json_get_str(args, "verdict");
	findings = json_get_str(args, "findings");
	if (!findings || !*findings)
		findings = "(the review gave no findings)";
	repair_event(c, "review", "review", 0, json_pack("{s:s}", "diff", a->diff),
		     json_incref(args), verdict ?: "none", NULL);
	if (streq_ptr(verdict, "correct")) {
		free(a->review);
		a->review = excerpt(findings, EXCERPT_MAX);
		if (!a->review)
			return -ENOMEM;
		/* one list item of the "Tested" section */
		for (char *p = a->review; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
		return 0;
	}
	set_result(a, SCORE_OTHER_CRASH, findings,
		   "the crash is gone but the review found that the change alters what correct "
		   "callers get: %s", first_line(findings, line, sizeof(line)));
	repair_event(c, "review", "observation", 0, NULL, json_pack("{s:s}", "result", a->result),
		     attempt_score_name(a->score), NULL);
	return 0;
}

char *repair_feedback(const json_t *attempts)
{
	_cleanup_buf_ struct buf b = BUF_INIT(64 * 1024);
	json_t *a;
	size_t i;

	json_array_foreach(attempts, i, a)
		(void)buf_printf(&b, "Attempt %zu (%s):\n%s\nResult: %s\n%s%s\n\n", i + 1,
				 json_get_str(a, "hypothesis") ?: "",
				 json_get_str(a, "diff") ?: "(no diff)", json_get_str(a, "result") ?: "",
				 json_get_str(a, "reflection") ? "Reflection: " : "",
				 json_get_str(a, "reflection") ?: "");
	return b.len ? buf_steal(&b, NULL) : strdup("(none: this is the first attempt)");
}

static void set_lessons_var(struct repair_ctx *c)
{
	_cleanup_buf_ struct buf b = BUF_INIT(16 * 1024);
	json_t *l;
	size_t i;

	json_array_foreach(c->lessons, i, l)
		(void)buf_printf(&b, "- %s\n", json_string_value(l));
	repair_set_var(c, "lessons", b.len ? b.data : "");
}

/* Edits whose "before" does not match go back to the model with the
 * closest match, this often in one step; then the attempt is lost. */
#define EDIT_CORRECTIONS_MAX 3

struct patch_answer {
	const char *step;
	unsigned corrections;
	int r;		/* of apply */
	char *diff, *err;
};

static int patch_act(struct repair_ctx *c, const char *tool, const json_t *args, void *ud,
		     char **ret_feedback)
{
	struct patch_answer *pa = ud;

	(void)tool;
	free(pa->diff);
	free(pa->err);
	pa->diff = pa->err = NULL;
	pa->r = c->ts->apply(c->ts->ud, json_object_get(args, "edits"), &pa->diff, &pa->err);
	if (pa->r != -EINVAL || pa->corrections >= EDIT_CORRECTIONS_MAX)
		return 0;
	pa->corrections++;
	repair_event(c, pa->step, "guardrail", 0, NULL, json_pack("{s:s?}", "error", pa->err),
		     "edits sent back", NULL);
	*ret_feedback = strdup_printf("error: the edits do not apply: %s\nCorrect them and call "
				      "propose_patch again.", pa->err ?: "?");
	return *ret_feedback ? 1 : -ENOMEM;
}

void repair_set_hypothesis(struct repair_ctx *c, unsigned hyp_idx)
{
	const json_t *hyp = json_array_get(c->hypotheses, hyp_idx);
	_cleanup_free_ char *t = strdup_printf("%s\nEvidence: %s\nFix idea: %s",
					       json_get_str(hyp, "root_cause") ?: "",
					       json_get_str(hyp, "evidence") ?: "",
					       json_get_str(hyp, "fix_idea") ?: "");

	repair_set_var(c, "hypothesis", t ?: "");
}

/* Where the candidate is asked for: one of the localised places. */
static void set_target_var(struct repair_ctx *c, int loc)
{
	const json_t *l = loc >= 0 ? json_array_get(c->locations, (size_t)loc) : NULL;
	_cleanup_free_ char *t = NULL;

	if (l)
		t = strdup_printf("This candidate fixes it at location %d: %s: %s() lines %lld-%lld "
				  "(change other places only where the fix needs them).\n\n", loc + 1,
				  json_get_str(l, "file") ?: "?", json_get_str(l, "function") ?: "?",
				  (long long)json_get_int(l, "start_line", 0),
				  (long long)json_get_int(l, "end_line", 0));
	repair_set_var(c, "target", t ?: "");
}

/* A refinement shows the patch it refines: edits apply to the
 * unpatched tree, so whatever the model keeps it writes again. */
static void set_refine_var(struct repair_ctx *c, int parent)
{
	const char *diff = parent > 0 ? search_node_diff(c->search, parent) : NULL;
	_cleanup_free_ char *t = NULL;

	if (diff)
		t = strdup_printf("Refine this earlier patch, which ended %s (the edits apply to the "
				  "unpatched tree: write again every change you keep):\n%s\n",
				  attempt_score_name(search_node_score(c->search, parent)), diff);
	repair_set_var(c, "refine", t ?: "");
}

int repair_attempt(struct repair_ctx *c, const char *step, unsigned hyp_idx, int loc, int parent,
		   struct attempt *a, char **ret_error)
{
	static const char *const tools[] = { "propose_patch", NULL };
	_cleanup_free_ char *tool = NULL, *err = NULL, *fb = NULL;
	_cleanup_json_ json_t *args = NULL;
	const json_t *hyp = json_array_get(c->hypotheses, hyp_idx);
	struct patch_answer pa = { .step = step };
	int r, dup = 0;

	repair_set_hypothesis(c, hyp_idx);
	fb = repair_feedback(c->attempts);
	repair_set_var(c, "feedback", fb);
	set_lessons_var(c);
	set_target_var(c, loc);
	set_refine_var(c, parent);
	r = repair_converse(c, step, "patch", tools, patch_act, &pa, &tool, &args, ret_error);
	if (r < 0) {
		free(pa.diff);
		free(pa.err);
		return r;
	}
	a->patch_type = strdup(json_get_str(args, "patch_type") ?: "root-cause fix");
	a->hyp = hyp_idx;
	a->loc = loc;
	r = pa.r;
	a->diff = pa.diff;
	err = pa.err;
	if (r == -EINVAL || (r >= 0 && !a->diff)) {
		_cleanup_free_ char *key = strdup_printf("unusable edits %u", search_iterations(c->search));

		a->node = search_add(c->search, 0, hyp_idx, key, NULL);
		set_result(a, SCORE_UNUSABLE, err, "the edits do not apply: %s", err ?: "?");
		search_score(c->search, a->node, SCORE_UNUSABLE);
	} else if (r < 0) {
		*ret_error = strdup_printf("applying edits: %s", err ?: strerror(-r));
		return r;
	} else {
		a->node = search_add(c->search, parent, hyp_idx, a->diff, &dup);
		if (a->node == -ELOOP)
			a->node = search_add(c->search, 0, hyp_idx, a->diff, &dup);
		if (a->node == -EEXIST) {
			set_result(a, search_node_score(c->search, dup), NULL,
				   "identical to attempt node %d, which ended %s", dup,
				   attempt_score_name(search_node_score(c->search, dup)));
			search_score(c->search, dup, search_node_score(c->search, dup));
			a->node = 0;
			repair_event(c, step, "guardrail", 0, NULL, NULL, "duplicate patch", NULL);
		} else if (a->node < 0) {
			return a->node;
		} else {
			r = judge(c, step, a);
			if (r >= 0)
				r = critique(c, a, ret_error);
			if (r < 0)
				return r;
			search_score(c->search, a->node, a->score);
		}
	}
	json_array_append_new(c->attempts, json_pack("{s:i, s:s, s:s?, s:s, s:s, s:s?, s:i}",
		"node", a->node, "hypothesis", json_get_str(hyp, "root_cause") ?: "",
		"diff", a->diff, "result", a->result ?: "", "score", attempt_score_name(a->score),
		"patch_type", a->patch_type, "location", loc + 1));
	repair_progress(c, step, "attempt %zu: %s", json_array_size(c->attempts), a->result ?: "");
	return 0;
}

/* Drops hunks one at a time while the rest still validates; *smaller is
 * the smallest patch that did (diff NULL when no hunk could go). */
static int drop_hunks(struct repair_ctx *c, const struct attempt *best,
		      struct attempt *smaller)
{
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_free_ bool *keep = NULL;
	_cleanup_free_ char *err = NULL;
	int r;

	r = udiff_parse(best->diff, strlen(best->diff), &d, &err);
	if (r < 0 || d->n_hunks < 2)
		return 0;
	keep = malloc(d->n_hunks * sizeof(*keep));
	if (!keep)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_hunks; i++)
		keep[i] = true;
	for (size_t i = 0; i < d->n_hunks; i++) {
		struct attempt t = {};
		size_t left = 0;

		for (size_t k = 0; k < d->n_hunks; k++)
			left += keep[k];
		if (left < 2)
			break;
		keep[i] = false;
		r = udiff_format(d, keep, &t.diff);
		if (r < 0)
			return r;
		repair_progress(c, "minimise", "trying without hunk %zu of %zu", i + 1, d->n_hunks);
		r = judge(c, "minimise", &t);
		if (r < 0) {
			repair_attempt_clear(&t);
			return r;
		}
		repair_event(c, "minimise", "plan", 0, json_pack("{s:i}", "dropped_hunk", (int)i + 1),
			     NULL, t.score == SCORE_VALIDATED ? "hunk not needed" : "hunk needed", NULL);
		if (t.score == SCORE_VALIDATED) {
			repair_attempt_clear(smaller);
			*smaller = t;
		} else {
			keep[i] = true;
			repair_attempt_clear(&t);
		}
	}
	return 0;
}

/* The smaller patch is reviewed again; the reviewed full one stays when
 * the review rejects it. */
static int minimise(struct repair_ctx *c, struct attempt *best, char **ret_error)
{
	struct attempt smaller = {};
	int r = drop_hunks(c, best, &smaller);

	if (r >= 0 && smaller.diff) {
		smaller.hyp = best->hyp;
		smaller.patch_type = strdup(best->patch_type ?: "root-cause fix");
		r = smaller.patch_type ? critique(c, &smaller, ret_error) : -ENOMEM;
	}
	if (r >= 0 && smaller.diff && smaller.score == SCORE_VALIDATED) {
		repair_attempt_clear(best);
		*best = smaller;
		return 0;
	}
	if (r >= 0 && smaller.diff)
		repair_event(c, "minimise", "plan", 0, NULL, NULL,
			     "the review rejected the smaller patch: the full one stays", NULL);
	repair_attempt_clear(&smaller);
	return r;
}

static void learn(struct repair_ctx *c, const struct attempt *best)
{
	_cleanup_free_ char *subsystem = NULL;
	_cleanup_json_ json_t *e = NULL;
	const char *file = c->crash && c->crash->n_frames ? c->crash->frames[0].file : NULL;

	if (!c->p->kb_path)
		return;
	for (size_t i = 0; c->crash && i < c->crash->n_frames && !file; i++)
		file = c->crash->frames[i].file;
	subsystem = kb_subsystem_of(file);
	e = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s?, s:s?, s:O}",
		      "time", (json_int_t)(trajectory_now() / 1000000), "title", c->title,
		      "type", c->crash && c->crash->type ? c->crash->type : "",
		      "subsystem", subsystem ?: "", "outcome", repair_result_name(c->sum->result),
		      "root_cause", json_get_str(json_array_get(c->hypotheses, best ? best->hyp : 0),
						 "root_cause"),
		      "patch_shape", best && best->patch_type ? best->patch_type : NULL,
		      "lessons", c->lessons);
	if (e && kb_add(c->p->kb_path, e) >= 0)
		repair_event(c, "learn", "memory.write", 0, NULL, json_incref(e), NULL, NULL);
}

static void recall(struct repair_ctx *c)
{
	_cleanup_free_ char *subsystem = NULL;
	_cleanup_json_ json_t *hits = NULL;
	_cleanup_buf_ struct buf b = BUF_INIT(16 * 1024);
	const char *file = NULL;
	json_t *h, *l;
	size_t i, k;

	repair_set_var(c, "knowledge", "");
	for (size_t f = 0; c->crash && f < c->crash->n_frames && !file; f++)
		if (!crash_function_is_infra(c->crash->frames[f].function))
			file = c->crash->frames[f].file;
	if (!c->p->kb_path)
		return;
	subsystem = kb_subsystem_of(file);
	if (kb_query(c->p->kb_path, c->crash ? c->crash->type : NULL, subsystem, c->title, 3,
		     &hits) < 0 || json_array_size(hits) == 0)
		return;
	(void)buf_puts(&b, "\nLessons from similar bugs fixed before:\n");
	json_array_foreach(hits, i, h) {
		(void)buf_printf(&b, "* %s (%s): %s\n", json_get_str(h, "title") ?: "",
				 json_get_str(h, "patch_shape") ?: "", json_get_str(h, "root_cause") ?: "");
		json_array_foreach(json_object_get(h, "lessons"), k, l)
			(void)buf_printf(&b, "  - %s\n", json_string_value(l) ?: "");
	}
	repair_set_var(c, "knowledge", b.data);
	repair_event(c, "localise", "memory.read", 0, NULL, json_incref(hits), NULL, NULL);
}

static int load_tools(struct repair_ctx *c)
{
	_cleanup_free_ char *path = NULL, *data = NULL;
	json_error_t err;
	size_t len;
	int r;

	if (asprintf(&path, "%s/tools.json", c->p->prompts_dir ?: prompt_default_dir()) < 0)
		return -ENOMEM;
	r = read_file_bounded(path, PROMPT_FILE_MAX, &data, &len);
	if (r < 0)
		return r;
	r = json_parse_bounded(data, len, PROMPT_FILE_MAX, &c->tools, &err);
	return r < 0 ? r : json_is_array(c->tools) ? 0 : -EBADMSG;
}

static void ctx_free(struct repair_ctx *c)
{
	rerun_free(c->rerun);
	free(c->rerun_error);
	crash_info_free(c->crash);
	free(c->local_report);
	free(c->title);
	free(c->extid);
	free(c->probe_output);
	free(c->gates_passed);
	free(c->review);
	free(c->fixes_how);
	json_decref(c->tools);
	json_decref(c->tool_counts);
	json_decref(c->vars);
	json_decref(c->locations);
	json_decref(c->hypotheses);
	json_decref(c->attempts);
	json_decref(c->lessons);
	search_free(c->search);
	trajectory_close(c->traj);
}

static int setup(struct repair_ctx *c, char **ret_error)
{
	_cleanup_free_ char *path = NULL, *report = NULL;
	char num[32];
	int r;

	r = mkdir_p(c->p->out_dir, 0755);
	if (r >= 0 && asprintf(&path, "%s/trajectory.jsonl", c->p->out_dir) < 0)
		r = -ENOMEM;
	if (r >= 0)
		r = trajectory_open(path, &c->traj);
	if (r < 0) {
		*ret_error = strdup_printf("cannot write to %s: %s", c->p->out_dir, strerror(-r));
		return r;
	}
	r = load_tools(c);
	if (r < 0) {
		*ret_error = strdup_printf("cannot load %s/tools.json: %s",
					   c->p->prompts_dir ?: prompt_default_dir(), strerror(-r));
		return r;
	}
	c->vars = json_object();
	c->locations = json_array();
	c->attempts = json_array();
	c->lessons = json_array();
	c->tool_counts = json_object();
	c->sum = calloc(1, sizeof(*c->sum));
	if (!c->vars || !c->locations || !c->attempts || !c->lessons || !c->tool_counts ||
	    !c->sum)
		return -ENOMEM;
	r = search_new(&c->p->limits, trajectory_now(), &c->search);
	if (r < 0)
		return r;
	report = report_for_model(c->p->report, REPORT_HEAD_MAX, REPORT_TAIL_MAX);
	repair_set_var(c, "report", report);
	/* empty for a first repair: its prompts read as they always did */
	repair_set_var(c, "review", c->p->review ? c->p->review : "");
	repair_set_var(c, "marker", KFIX_PROBE_MARKER);
	repair_set_var(c, "target", "");
	repair_set_var(c, "refine", "");
	snprintf(num, sizeof(num), "%u", c->p->gates.max_hunks);
	repair_set_var(c, "max_hunks", num);
	snprintf(num, sizeof(num), "%u", c->p->gates.max_files);
	repair_set_var(c, "max_files", num);
	snprintf(num, sizeof(num), "%u", c->p->limits.branching);
	repair_set_var(c, "branching", num);
	return 0;
}

static int workflow(struct repair_ctx *c, char **ret_error)
{
	struct repair_outcome base = {};
	struct attempt best = {};
	const char *why;
	bool done;
	int r;

	r = precheck(c, &done);
	if (r < 0 || done)
		return r;
	repair_set_var(c, "title", c->title);
	repair_set_var(c, "type", c->crash && c->crash->type ? c->crash->type : "unknown");
	r = reproduce(c, &base, &done);
	if (r < 0 || done) {
		repair_outcome_clear(&base);
		return r;
	}
	recall(c);
	r = localise(c, ret_error);
	if (r >= 0)
		r = repair_ground(c, ret_error);
	if (r >= 0)
		r = hypothesise(c, ret_error);
	if (r >= 0)
		r = repair_search(c, &best, ret_error);
	if (r >= 0 && best.score == SCORE_VALIDATED && c->p->minimise)
		r = minimise(c, &best, ret_error);
	if (r >= 0 && best.score == SCORE_VALIDATED) {
		c->sum->diff = TAKE_PTR(best.diff);
		c->gates_passed = TAKE_PTR(best.gates);
		c->review = TAKE_PTR(best.review);
		/* the explanation and the lesson are the validated patch's */
		r = repair_explain(c, c->sum->diff, json_array_get(c->hypotheses, best.hyp),
				   best.patch_type ?: "root-cause fix", &base, &best.outcome, ret_error);
		if (r >= 0)
			r = finish(c, REPAIR_VALIDATED, "validated after %u attempt(s)",
				   search_iterations(c->search));
	} else if (r >= 0) {
		why = search_should_stop(c->search, trajectory_now());
		r = finish(c, REPAIR_GAVE_UP, "no validated patch: %s (best attempt: %s)",
			   why ?: "every hypothesis tried",
			   attempt_score_name(search_node_score(c->search, search_best(c->search))));
	}
	c->sum->attempts = search_iterations(c->search);
	if (r >= 0)
		learn(c, best.score == SCORE_VALIDATED ? &best : NULL);
	repair_outcome_clear(&base);
	repair_attempt_clear(&best);
	return r;
}

static int write_summary(struct repair_ctx *c)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	_cleanup_json_ json_t *j = NULL;

	j = json_pack("{s:s, s:s?, s:s?, s:s?, s:i, s:i, s:i, s:O, s:I, s:I, s:f}",
		      "result", repair_result_name(c->sum->result), "reason", c->sum->reason,
		      "review", c->review,
		      "title", c->title, "attempts", c->sum->attempts, "llm_calls", c->sum->llm_calls,
		      "tool_calls", c->sum->tool_calls, "tools", c->tool_counts,
		      "tokens_in", (json_int_t)c->sum->tokens_in,
		      "tokens_out", (json_int_t)c->sum->tokens_out, "cost", c->sum->cost);
	if (!j || asprintf(&path, "%s/summary.json", c->p->out_dir) < 0)
		return -ENOMEM;
	text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!text)
		return -ENOMEM;
	return write_file_atomic(path, text, strlen(text), 0644);
}

int repair_run(const struct repair_params *p, const struct repair_toolstack *ts,
	       struct llm *llm, struct repair_summary **ret, char **ret_error)
{
	_cleanup_free_ char *err = NULL;
	struct repair_ctx c = { .p = p, .ts = ts, .llm = llm, .t_start = trajectory_now() };
	struct traj_event start = { .step = "run", .kind = "run.start" };
	int r;

	r = setup(&c, &err);
	if (r >= 0 && p->rerun_events)
		r = rerun_new(p->rerun_events, p->rerun_from ?: "run", &c.rerun, &err);
	if (r >= 0) {
		_cleanup_json_ json_t *in = json_pack("{s:s, s:s?, s:b}", "model", llm_model(llm),
						      "base", p->base_commit, "replay",
						      llm_is_replay(llm));

		if (in && c.rerun)
			json_object_set_new(in, "rerun", json_pack("{s:s, s:s?}", "from", rerun_from(c.rerun),
								   "directive", p->directive));
		start.input = in;
		r = trajectory_add(c.traj, &start, &c.run_event);
	}
	/* from "run" a rerun is live from its first step */
	if (r >= 0 && c.rerun)
		repair_rerun_step(&c, "run");
	if (r >= 0)
		r = workflow(&c, &err);
	if (r == -ESTALE && c.rerun_error) {
		free(err);
		err = TAKE_PTR(c.rerun_error);
	}
	/* a rerun counts only when its tools ran: a validation the record
	 * made is the earlier run's, not this one's */
	if (r >= 0 && c.rerun && c.sum->result == REPAIR_VALIDATED && c.live_runs == 0)
		r = finish(&c, REPAIR_GAVE_UP, "the rerun replayed every run of its patch: nothing "
			   "validated it live (rerun from an earlier step)");
	if (c.traj) {
		/* why it ended, for whoever diagnoses the run from its trajectory */
		_cleanup_json_ json_t *why = json_pack("{s:s?}", "reason", c.sum ? c.sum->reason : NULL);
		struct traj_event end = { .step = "run", .kind = "run.end", .parent = c.run_event,
					  .output = why,
					  .start_usec = c.t_start,
					  .duration_usec = trajectory_now() - c.t_start,
					  .verdict = c.sum ? repair_result_name(c.sum->result) : NULL,
					  .error = r < 0 ? (err ?: strerror(-r)) : NULL };

		(void)trajectory_add(c.traj, &end, NULL);
	}
	if (r >= 0)
		r = write_summary(&c);
	if (r < 0) {
		if (ret_error)
			*ret_error = err ? TAKE_PTR(err) : strdup_printf("%s", strerror(-r));
		repair_summary_free(c.sum);
	} else
		*ret = c.sum;
	ctx_free(&c);
	return r;
}
