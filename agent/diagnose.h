/* Why a repair failed, read from its trajectory: the failure family, the
 * step and event it is attributed to, a quote of that event as evidence,
 * and one suggested recovery (a directive and the step to rerun from).
 *
 * Rules, not a model: each family is recognised by the events the agent
 * writes for it, and the earliest decisive one wins (a localisation that
 * never looked at the fixed file explains the failed candidates after
 * it; an infrastructure failure explains everything). */
#ifndef KFIX_AGENT_DIAGNOSE_H
#define KFIX_AGENT_DIAGNOSE_H

#include <jansson.h>
#include <stdint.h>

#include "common/macro.h"

enum diag_family {
	DIAG_NONE,	   /* validated: nothing to diagnose */
	DIAG_INFRA,	   /* build or VM hosts failed, not the patch */
	DIAG_MODEL,	   /* the model endpoint failed */
	DIAG_LOCALISATION, /* the fixed file was never looked at */
	DIAG_EDITS,	   /* edits never applied, or never built */
	DIAG_GATES,	   /* every candidate was rejected by a gate */
	DIAG_VALIDATION,   /* candidates ran and the kernel still crashed */
	DIAG_PROBES,	   /* every probe failed: no evidence to work from */
	DIAG_BUDGET,	   /* the budget or the stagnation guard stopped it */
	DIAG_UNKNOWN,
};

struct diagnosis {
	enum diag_family family;
	char *step;	 /* the step the failure is attributed to */
	int64_t event;	 /* that event's id, 0 when none */
	char *evidence;	 /* a quote of the event's own text */
	char *why;	 /* one sentence */
	char *directive; /* what to tell the agent on a rerun */
	char *from;	 /* the step to rerun from */
};

const char *diag_family_name(enum diag_family f);

/* events: a trajectory as trajectory_load() reads it.  fix_files: the
 * files the developers' fix changed (NULL-terminated; NULL when not
 * known), which is what tells a missed localisation apart. */
int diagnose_trajectory(const json_t *events, char *const *fix_files, struct diagnosis **ret);
json_t *diagnosis_json(const struct diagnosis *d);
void diagnosis_free(struct diagnosis *d);
DEFINE_CLEANUP(struct diagnosis, diagnosis_free);

/* The optional model pass (diagnose-llm.c): the model reads the run and
 * the rules' diagnosis and names its own.  Its answer stands (*ret) only
 * when its quote is word for word in the text of the event it names, its
 * family is one of these and its step one the run reached; otherwise
 * *ret stays NULL and *ret_refusal says why.  Negative: the call failed. */
struct llm;
int diagnose_with_model(struct llm *l, const json_t *events, const struct diagnosis *rules,
			struct diagnosis **ret, char **ret_refusal, char **ret_error);

/* The files a unified diff changes (NULL-terminated). */
int diagnose_diff_files(const char *diff, char ***ret);

#endif
