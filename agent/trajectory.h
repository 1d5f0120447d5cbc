/* The trajectory of a job: every step (LLM call, tool call, build, run,
 * gate verdict, reflection) as one JSON line in jobs/<id>/trajectory.jsonl,
 * written and flushed as it happens so a crashed job still leaves its
 * story behind.
 *
 * Event: {"id", "parent", "step", "kind", "ts", "start_us", "duration_ms",
 *         "input", "output", "tokens": {"in", "out"}, "cost", "verdict",
 *         "error"}; absent members are omitted. */
#ifndef KFIX_AGENT_TRAJECTORY_H
#define KFIX_AGENT_TRAJECTORY_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "common/macro.h"

/* Longest string kept in an event's input or output. */
#define TRAJECTORY_TEXT_MAX (32u * 1024)
#define TRAJECTORY_FILE_MAX (256u * 1024 * 1024)

struct trajectory;

struct traj_event {
	const char *step;	/* workflow step: "reproduce", "localise", ... */
	const char *kind;	/* "llm.call", "tool.build", "tool.run", "gate", ... */
	int64_t parent;		/* 0: none */
	uint64_t start_usec;	/* CLOCK_REALTIME; 0: now */
	uint64_t duration_usec;
	const json_t *input;	/* borrowed; strings are cut to TRAJECTORY_TEXT_MAX */
	const json_t *output;
	uint64_t tokens_in, tokens_out;
	double cost;
	const char *verdict;
	const char *error;
};

int trajectory_open(const char *path, struct trajectory **ret);
void trajectory_close(struct trajectory *t);
DEFINE_CLEANUP(struct trajectory, trajectory_close);
int trajectory_add(struct trajectory *t, const struct traj_event *e, int64_t *ret_id);
uint64_t trajectory_now(void); /* CLOCK_REALTIME in microseconds */

/* Reads a trajectory file into an array of events (bad lines skipped). */
int trajectory_load(const char *path, json_t **ret_events);
/* A readable timeline with totals. */
void trajectory_print(const json_t *events, FILE *f);
/* Totals over events: LLM calls, tokens, cost, time per kind family
 * ("llm", "build", "vm", "other"); {"llm_calls", "tokens_in", ...}. */
json_t *trajectory_summary(const json_t *events);

#endif
