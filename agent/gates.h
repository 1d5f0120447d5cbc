/* Integrity gates: the engine's own judgement of a candidate patch,
 * independent of the model.  A patch that stops a crash by removing the
 * check that fired, by not running the crashing code, or by touching the
 * test itself is rejected before it is ever built. */
#ifndef KFIX_AGENT_GATES_H
#define KFIX_AGENT_GATES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"

/* Every probe the engine inserts carries this marker in a comment, so a
 * probe that leaks into a patch is recognised. */
#define KFIX_PROBE_MARKER "kfix-probe"

struct config;
struct gate_verdicts;

struct gate_limits {
	unsigned max_hunks;
	unsigned max_files;
	unsigned max_lines;	/* added + removed lines */
	bool checkpatch;
	const char *reproducer; /* path inside the tree to protect, or NULL */
};

#define GATE_LIMITS_DEFAULT ((struct gate_limits){ 5, 2, 60, true, NULL })

/* FLAG: accepted, but the patch does something that is the fix only in
 * some cases (the faulting line deleted, a release removed without a
 * tree to check): the validation's behaviour checks and the reviewer
 * are told. */
enum gate_status { GATE_PASS, GATE_FAIL, GATE_SKIP, GATE_FLAG };

int gate_limits_from_config(const struct config *c, struct gate_limits *ret);

/* Runs every gate on diff (unified, git format).  report is the crash
 * report text; src_dir the base tree (NULL: the checks needing file
 * contents fall back to the hunks alone, checkpatch is skipped).  Fails
 * only on resource errors: a rejection is a verdict. */
int gates_run(const char *diff, size_t diff_len, const char *report,
	      size_t report_len, const char *src_dir,
	      const struct gate_limits *lim, struct gate_verdicts **ret);

/* The gates a probe must pass: parse and scope (the tree's own C files,
 * nothing the build host runs, no file read from outside the tree). */
int gates_run_probe(const char *diff, size_t diff_len, const char *src_dir,
		    struct gate_verdicts **ret);

/* The tree's own scripts/checkpatch.pl on a diff: its ERROR and WARNING
 * lines (escaped, at most max bytes) and their counts.  -ENOENT when the
 * tree has no checkpatch.pl, -ETIMEDOUT when it did not finish. */
struct checkpatch_result {
	unsigned n_errors, n_warnings;
	char *report;
};
void checkpatch_result_free(struct checkpatch_result *r);
int checkpatch_run(const char *src, const char *diff, size_t len, size_t max,
		   struct checkpatch_result *ret);

bool gate_verdicts_accepted(const struct gate_verdicts *v);
size_t gate_verdicts_count(const struct gate_verdicts *v);
void gate_verdicts_get(const struct gate_verdicts *v, size_t i, const char **ret_name,
		       enum gate_status *ret_status, const char **ret_reason);
/* How many verdicts are flags. */
size_t gate_verdicts_flags(const struct gate_verdicts *v);
/* "gate: reason" of the first failure, or NULL when accepted. */
const char *gate_verdicts_failure(const struct gate_verdicts *v);
json_t *gate_verdicts_to_json(const struct gate_verdicts *v);
const char *gate_status_name(enum gate_status s);
void gate_verdicts_free(struct gate_verdicts *v);
DEFINE_CLEANUP(struct gate_verdicts, gate_verdicts_free);

#endif
