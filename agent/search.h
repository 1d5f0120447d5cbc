/* The search tree of repair attempts (hypotheses x patches) and the
 * convergence guards that end it.
 *
 * Nodes are attempts; a node's score orders how far it got:
 * rejected by a gate < build error < same crash < other crash < validated.
 * A new best score is progress; K attempts without progress is
 * stagnation.  The same diff twice is refused. */
#ifndef KFIX_AGENT_SEARCH_H
#define KFIX_AGENT_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "common/macro.h"

struct config;
struct search;

enum attempt_score {
	SCORE_NONE = 0,		/* not evaluated */
	SCORE_UNUSABLE,		/* edits did not apply */
	SCORE_REJECTED,		/* an integrity gate said no */
	SCORE_BUILD_ERROR,
	SCORE_SAME_CRASH,
	SCORE_OTHER_CRASH,	/* the crash moved: partial progress */
	SCORE_VALIDATED,
};

struct search_limits {
	unsigned branching;	/* hypotheses pursued, patches per hypothesis */
	unsigned depth;		/* refinements of one patch line */
	unsigned max_iterations;
	unsigned stagnation;
	uint64_t max_tokens;
	double max_cost;
	uint64_t wall_usec;
};

#define SEARCH_LIMITS_DEFAULT \
	((struct search_limits){ 3, 3, 12, 4, 2000000, 25.0, 4ull * 3600 * 1000000 })

int search_limits_from_config(const struct config *c, struct search_limits *ret);

int search_new(const struct search_limits *l, uint64_t now_usec, struct search **ret);
void search_free(struct search *s);
DEFINE_CLEANUP(struct search, search_free);

/* Registers an attempt under parent (0: a root, i.e. a fresh patch for a
 * hypothesis).  Returns the node id (> 0); -EEXIST when an earlier node
 * had the same diff (*ret_dup gets its id); -ELOOP when parent is already
 * at the maximum depth. */
int search_add(struct search *s, int parent, unsigned hypothesis, const char *diff,
	       int *ret_dup);
/* Records the outcome of node; returns true when it is a new best. */
bool search_score(struct search *s, int node, enum attempt_score score);
/* Counts resources used, for the budget guards. */
void search_spend(struct search *s, uint64_t tokens, double cost);

/* NULL while the search may continue, else why it must stop (static). */
const char *search_should_stop(const struct search *s, uint64_t now_usec);

int search_best(const struct search *s);	/* 0: none yet */
enum attempt_score search_node_score(const struct search *s, int node);
unsigned search_node_depth(const struct search *s, int node);
const char *search_node_diff(const struct search *s, int node);
unsigned search_iterations(const struct search *s);
const char *attempt_score_name(enum attempt_score s);

#endif
