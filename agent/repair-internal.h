/* Private to agent/: the state of one repair shared by its steps. */
#ifndef KFIX_AGENT_REPAIR_INTERNAL_H
#define KFIX_AGENT_REPAIR_INTERNAL_H

#include <jansson.h>

#include "crashinfo-internal.h"
#include "llm.h"
#include "repair.h"
#include "search.h"
#include "trajectory.h"

struct repair_ctx {
	const struct repair_params *p;
	const struct repair_toolstack *ts;
	struct llm *llm;
	struct trajectory *traj;
	struct crash_info *crash;
	/* The report the model and the gates read: the bug's, or the crash
	 * reproduced here when only that one names source lines (then owned,
	 * in local_report). */
	const char *report;
	size_t report_len;
	char *local_report;
	char *title;		/* the title to reproduce */
	char *extid;		/* syzbot id or NULL */
	json_t *tools;		/* all tool definitions */
	json_t *vars;		/* prompt variables */
	json_t *locations;
	json_t *hypotheses;	/* ranked */
	json_t *attempts;	/* every attempt, for feedback and distillation */
	json_t *lessons;	/* strings: knowledge base + reflections */
	char *probe_output;
	/* The gates' verdicts on the last validated diff, for the "Tested"
	 * section: "pass: scope, size, ..." and one line per flag. */
	char *gates_passed;
	/* What the adversarial review of that diff found; NULL when there
	 * was none ([agent] patch-review = no). */
	char *review;
	char *fixes_how;	/* how the Fixes: tag was found, for the mail */
	struct search *search;
	struct repair_summary *sum;
	unsigned turns;		/* model calls so far */
	unsigned probe_rounds;
	json_t *tool_counts;	/* tool name -> calls, for the figures */
	int64_t run_event;	/* parent of every step */
	uint64_t t_start;
	struct rerun *rerun;	/* a rerun's replay of the earlier run, or NULL */
	char *rerun_error;	/* why the rerun left the record (-ESTALE) */
	unsigned live_runs;	/* reproducer runs that really ran */
};

/* A rerun's prefix (rerun.c): the earlier run's events answer for the
 * model and the builds and runs until the engine first acts in step
 * `from`.  rerun_enter() returns 1 when step makes the rerun live;
 * rerun_next() gives the next recorded event of kind, which must be of
 * the same step (-ESTALE with *ret_error when the run left the record). */
struct rerun;
int rerun_new(const json_t *events, const char *from, struct rerun **ret, char **ret_error);
void rerun_free(struct rerun *r);
DEFINE_CLEANUP(struct rerun, rerun_free);
int rerun_enter(struct rerun *r, const char *step);
bool rerun_is_live(const struct rerun *r);
const char *rerun_from(const struct rerun *r);
int rerun_next(struct rerun *r, const char *kind, const char *step, const json_t **ret,
	       char **ret_error);
json_t *rerun_counts(const struct rerun *r);
int64_t rerun_checkpoint(const struct rerun *r);

/* Called before the engine acts in step (a model step, a build, a run):
 * may turn a rerun live, which is an event.  repair_replaying(): the
 * rerun is still in its prefix. */
void repair_rerun_step(struct repair_ctx *c, const char *step);
bool repair_replaying(const struct repair_ctx *c);
/* A build's or compile check's result as its event's verdict (ok for
 * success, "build-error", "infra-error"), and back, for a replay. */
const char *repair_build_verdict(int r, const char *ok);
int repair_build_verdict_errno(const char *verdict, const char *ok);
/* The next recorded event of kind for step, in the prefix; -ESTALE (the
 * reason kept for the run's error) when the record has none. */
int repair_replay_next(struct repair_ctx *c, const char *kind, const char *step,
		       const json_t **ret);

/* Asks the model with prompt NAME offering the tools in names (the first
 * one is the step's main tool); returns the tool called and its
 * arguments.  Logs an llm.call event. */
int repair_ask(struct repair_ctx *c, const char *step, const char *prompt,
	       const char *const *names, char **ret_tool, json_t **ret_args,
	       char **ret_error);
/* The same as a conversation whose answer tools may send the model
 * back: act returns 0 to end the step with that call, > 0 with
 * *ret_feedback to make feedback the call's result and let the model go
 * on (a failed edit, a probe that does not build), < 0 on failure. */
typedef int (*repair_act_fn)(struct repair_ctx *c, const char *tool, const json_t *args,
			     void *ud, char **ret_feedback);
int repair_converse(struct repair_ctx *c, const char *step, const char *prompt,
		    const char *const *names, repair_act_fn act, void *ud, char **ret_tool,
		    json_t **ret_args, char **ret_error);
/* The execution tools the model may call in step (repair.c), and one such
 * call; -ENOENT for a name that is none. */
json_t *repair_exec_defs(struct repair_ctx *c, const char *step);
int repair_exec_call(struct repair_ctx *c, const char *step, const char *name,
		     const json_t *args, char **ret_answer);
/* Builds base plus diff and runs the reproducer on it, each an event;
 * infrastructure failures are retried. */
int repair_do_build(struct repair_ctx *c, const char *step, const char *diff, char **ret_log);
int repair_do_run(struct repair_ctx *c, const char *step, unsigned runs,
		  struct repair_outcome *ret);
/* The probe step (repair-probe.c). */
int repair_ground(struct repair_ctx *c, char **ret_error);
/* Adds an event under the run. */
int64_t repair_event(struct repair_ctx *c, const char *step, const char *kind,
		     uint64_t start, json_t *input, json_t *output,
		     const char *verdict, const char *error);
void repair_progress(struct repair_ctx *c, const char *step, const char *fmt, ...)
	_printf_(3, 4);
void repair_set_var(struct repair_ctx *c, const char *key, const char *value);

/* One patch attempt and how far it got. */
struct attempt {
	int node;
	unsigned hyp;	 /* index in c->hypotheses of the hypothesis it came from */
	int loc;	 /* index in c->locations it was asked at; -1: anywhere */
	enum attempt_score score;
	char *diff;
	char *result;	 /* one line */
	char *evidence;	 /* crash excerpt, build log, gate reason */
	char *patch_type;
	char *gates;	 /* the gates' summary, once validated */
	char *review;	 /* the review's findings, once it found none */
	struct repair_outcome outcome;
};
void repair_attempt_clear(struct attempt *a);

/* Asks for a patch for hypothesis hyp (at location loc unless -1, as a
 * refinement of node parent unless 0), applies, registers and judges it;
 * the record goes into c->attempts. */
int repair_attempt(struct repair_ctx *c, const char *step, unsigned hyp, int loc, int parent,
		   struct attempt *a, char **ret_error);
/* The prompts' {{hypothesis}}: the one of index hyp_idx. */
void repair_set_hypothesis(struct repair_ctx *c, unsigned hyp_idx);
/* The attempts so far as the model reads them. */
char *repair_feedback(const json_t *attempts);

/* The search over hypotheses, locations and refinements (repair-search.c):
 * *best gets the validated attempt, when one was. */
int repair_search(struct repair_ctx *c, struct attempt *best, char **ret_error);

/* Explanation, commit message and output files of a validated repair. */
int repair_explain(struct repair_ctx *c, const char *diff, const json_t *hypothesis,
		   const char *patch_type, const struct repair_outcome *base,
		   const struct repair_outcome *patched, char **ret_error);
/* Wraps text at width columns (words longer than width stay whole). */
char *repair_wrap(const char *text, unsigned width);

#endif
