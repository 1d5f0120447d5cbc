/* The repair workflow (kAgent-style, with PhoenixRepair's multi-location
 * sampling and distilled final round): pre-checks, reproduce on base,
 * localise, probes, hypotheses, a search tree of patches judged by the
 * integrity gates and validated by the toolstack, reflection, a final
 * distilled round, minimisation and the explanation.
 *
 * The engine never touches kernels itself: builds and VM runs sit behind
 * struct repair_toolstack, so the engine's logic is tested with a
 * scripted toolstack and the real one plugs in the repro/ module. */
#ifndef KFIX_AGENT_REPAIR_H
#define KFIX_AGENT_REPAIR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/gates.h"
#include "agent/search.h"
#include "common/macro.h"

struct config;
struct llm;

struct repair_outcome {
	unsigned runs;		/* attempted */
	unsigned crashed;
	unsigned survived;
	unsigned infra;		/* infrastructure failures: not results */
	char *title;		/* first crash's title, NULL if none */
	char *log;		/* crash report or console excerpt (probe lines) */
	/* Counted runs without a crash in which the reproducer ended on its
	 * own with a failure (non-zero status, a signal), and how the first
	 * did with the tail of its output. */
	unsigned failed_exits;
	char *behaviour;
	/* Runs kmemleak looked at after the reproducer, runs it found leaks
	 * in, and the first report. */
	unsigned leak_checked, leaked;
	char *leaks;
	bool boot_error;	/* the kernel did not boot: no run will count */
	bool hung;		/* every attempt lost the guest without a crash */
	/* The kselftests covering the patch, run on the base and on this
	 * kernel once the crash was gone: one line per test, the tests that
	 * passed on the base and not here (with their output), or why none
	 * ran. */
	char *selftests;
	unsigned selftest_regressions;
	char *regressions;
	char *selftest_note;
};
void repair_outcome_clear(struct repair_outcome *o);

struct repair_toolstack {
	void *ud;
	/* A file of the base tree. */
	int (*read_file)(void *ud, const char *path, char **ret, size_t *ret_len);
	/* Edits (JSON array of {file, before, after}) -> diff against base;
	 * -EINVAL with a message for the model when an edit is wrong. */
	int (*apply)(void *ud, const json_t *edits, char **ret_diff, char **ret_error);
	/* Builds base plus diff (NULL: base).  -ENOEXEC: does not compile,
	 * *ret_log says why; other errors are infrastructure failures. */
	int (*build)(void *ud, const char *diff, char **ret_log);
	/* Runs the reproducer `runs` times on the last kernel built. */
	int (*run)(void *ud, unsigned runs, struct repair_outcome *ret);
	/* Optional (NULL: build + one run): a probe run. */
	int (*probe)(void *ud, const char *diff, struct repair_outcome *ret);
	/* Optional: "Fixes: 123456789abc (\"subject\")" for the commit that
	 * introduced the bug (a bisection's culprit) or else that last changed
	 * file:line, an ancestor of the base either way; *ret_how says which,
	 * for the mail ("found by bisection: ..." / "the blame candidate:
	 * ...").  -ENOENT when none is known. */
	int (*fixes_tag)(void *ud, const char *file, unsigned line, char **ret, char **ret_how);
	/* Optional: 1 and the commit when the base already contains a commit
	 * whose message holds needle, 0 when not. */
	int (*already_fixed)(void *ud, const char *needle, char **ret_commit);
	/* Optional: recent commit subjects touching file, one per line. */
	int (*recent_subjects)(void *ud, const char *file, char **ret);
	/* Optional: compiles only the objects diff touches against the
	 * cached build, without linking; -ENOEXEC with the compiler's
	 * messages in *ret_log when it does not compile. */
	int (*compile)(void *ud, const char *diff, char **ret_log);
	/* Optional (NULL: the model gets no exploration tools): runs an
	 * exploration tool of explore.h on the base tree; same contract as
	 * explore_call(). */
	int (*explore)(void *ud, const char *name, const json_t *args, char **ret);
	/* Optional: the kernel's own tests that cover diff, on the base
	 * kernel and on the last kernel built (which carries diff); fills
	 * the selftest fields of *ret. */
	int (*selftests)(void *ud, const char *diff, struct repair_outcome *ret);
};

/* The model's conversation in each step: it may call exploration and
 * execution tools any number of times before the step's answer tool,
 * within these limits. */
struct repair_turn_limits {
	unsigned step_turns;	/* model calls in one step */
	unsigned job_turns;	/* model calls in the whole repair */
	size_t tool_answer;	/* bytes of one tool answer shown to the model */
	size_t step_answers;	/* tool answer bytes in one step */
	size_t context;		/* request bytes above which older answers are compressed */
	unsigned repeats;	/* the same call this often: the loop judge stops the step */
	unsigned stale;		/* turns in a row that brought nothing new: likewise */
};
#define REPAIR_TURN_LIMITS_DEFAULT \
	{ 40, 250, 16u * 1024, 192u * 1024, 320u * 1024, 3, 6 }

typedef void (*repair_progress_fn)(void *ud, const char *step, const char *message);

struct repair_params {
	const char *report;	  /* crash report / console log */
	size_t report_len;
	const char *src_dir;	  /* base tree on disk (gates, checkpatch); may be NULL */
	const char *base_commit;  /* for base-commit: */
	const char *syzbot_id;	  /* extid for Reported-by/Closes; NULL: from the report */
	const char *title;	  /* the crash to fix (syzbot's title); NULL: the report's */
	const char *hints;	  /* file hints, one path per line; NULL */
	/* A rerun from a step of an earlier run (see agent/rerun.c): that
	 * run's events as trajectory_load() reads them, the step from which
	 * everything is live again, and the operator's directive shown to the
	 * model from there on (NULL: none).  rerun_events NULL: a first run. */
	const json_t *rerun_events;
	const char *rerun_from;
	const char *directive;
	/* The model and the gates read the reproduced crash, symbolised,
	 * when the report names no source lines ([agent] read-reproduced). */
	bool read_reproduced;
	/* A new version of a published patch: the earlier version and the
	 * reviewers' comments (rendered from prompts/iterate.txt), shown
	 * with the hypotheses and patch requests; NULL for a first repair. */
	const char *review;
	bool have_reproducer;
	const char *out_dir;	  /* patch, explanation, trajectory, summary */
	const char *prompts_dir;  /* NULL: prompt_default_dir() */
	const char *kb_path;	  /* NULL: no knowledge base */
	struct search_limits limits;
	struct gate_limits gates;
	struct repair_turn_limits turns;
	unsigned base_runs;
	unsigned validate_runs;
	unsigned locations;
	size_t context_budget;
	bool minimise;
	/* The adversarial review of every patch that stops the crash: the
	 * model looks for correct callers whose behaviour it changes. */
	bool critique;
	repair_progress_fn progress;
	void *progress_ud;
};

void repair_params_default(struct repair_params *p);
int repair_params_from_config(const struct config *c, struct repair_params *p);

enum repair_result {
	REPAIR_VALIDATED,
	REPAIR_NOT_REPRODUCED,
	REPAIR_ALREADY_FIXED,
	REPAIR_NO_REPRODUCER,
	REPAIR_GAVE_UP,
};
const char *repair_result_name(enum repair_result r);

struct repair_summary {
	enum repair_result result;
	char *reason;		/* why it ended */
	char *diff;		/* the final (minimised) diff, when validated */
	char *commit_message;
	unsigned attempts;
	unsigned llm_calls;
	unsigned tool_calls;	/* exploration and execution calls */
	uint64_t tokens_in, tokens_out;
	double cost;
};
void repair_summary_free(struct repair_summary *s);
DEFINE_CLEANUP(struct repair_summary, repair_summary_free);

/* Runs one repair.  Fails only when the repair could not be carried out
 * (I/O, the model unreachable, toolstack down): a bug that is not fixed
 * is a summary with result != REPAIR_VALIDATED. */
/* Where a rerun of events would go live: from is a step name or an
 * event's id ("12"), resolved to that event's step.  -ENOENT with
 * *ret_error when the earlier run never reached it. */
int repair_rerun_resolve(const json_t *events, const char *from, char **ret_step,
			 char **ret_error);

int repair_run(const struct repair_params *p, const struct repair_toolstack *ts,
	       struct llm *llm, struct repair_summary **ret, char **ret_error);

#endif
