/* The search over candidate patches (PhoenixRepair's multi-location
 * sampling): a line per distinct place to fix (the best hypothesis that
 * names it, and the first hypothesis at the localised places no line
 * covers), one candidate per line and round, reflection between rounds,
 * refinement from the line's best node rather than its last when the
 * last did worse (rollback), a selector that keeps the better half of
 * the lines after each round, then a final candidate written from the
 * lessons distilled from every attempt. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/strutil.h"
#include "llm-internal.h"
#include "repair-internal.h"

/* Lines of one search: a hypothesis and a place. */
#define LINES_MAX 8

struct line {
	unsigned hyp;		/* index in c->hypotheses */
	int loc;		/* index in c->locations; -1: wherever the model likes */
	unsigned fresh;		/* fresh patches so far */
	int best_node;		/* its best attempt (0: none yet) */
	enum attempt_score best;
	struct attempt last;	/* to reflect on before the next round */
	size_t record;		/* last's entry in c->attempts */
	bool tried, done;
};

/* A hypothesis's place: the 1-based "location" it names, when valid. */
static int hyp_location(const struct repair_ctx *c, unsigned hyp)
{
	json_int_t l = json_get_int(json_array_get(c->hypotheses, hyp), "location", 0);

	return l >= 1 && (size_t)l <= json_array_size(c->locations) ? (int)l - 1 : -1;
}

static bool place_taken(const struct line *lines, size_t n, int loc)
{
	for (size_t i = 0; i < n; i++)
		if (lines[i].loc == -1 || lines[i].loc == loc)
			return true;
	return false;
}

/* A line per hypothesis with a place of its own, in rank order (one
 * without a place is a line of its own); then the first hypothesis at
 * each localised place no line covers, up to `branching` lines. */
static size_t lines_plan(const struct repair_ctx *c, struct line *lines)
{
	size_t max = MIN((size_t)c->p->limits.branching, (size_t)LINES_MAX), n = 0;

	if (max == 0)
		max = 1;
	for (size_t h = 0; h < json_array_size(c->hypotheses) && n < max; h++) {
		int loc = hyp_location(c, (unsigned)h);
		bool dup = false;

		for (size_t i = 0; i < n && loc >= 0; i++)
			dup |= lines[i].loc == loc;
		if (!dup)
			lines[n++] = (struct line){ .hyp = (unsigned)h, .loc = loc };
	}
	for (size_t l = 0; l < json_array_size(c->locations) && n < max; l++)
		if (!place_taken(lines, n, (int)l))
			lines[n++] = (struct line){ .hyp = 0, .loc = (int)l };
	return n;
}

/* The next hypothesis no line has taken; -1 when none is left. */
static int hyp_unused(const struct repair_ctx *c, const bool *used)
{
	for (size_t h = 0; h < json_array_size(c->hypotheses); h++)
		if (!used[h])
			return (int)h;
	return -1;
}

/* Reflection on the line's last attempt; returns the model's next move. */
static int reflect(struct repair_ctx *c, struct line *ln, char **ret_next, char **ret_error)
{
	static const char *const tools[] = { "reflect", NULL };
	_cleanup_free_ char *tool = NULL;
	_cleanup_json_ json_t *args = NULL;
	const struct attempt *a = &ln->last;
	json_t *l, *rec;
	size_t i;
	int r;

	repair_set_hypothesis(c, ln->hyp);
	repair_set_var(c, "diff", a->diff ?: "(none)");
	repair_set_var(c, "result", a->result ?: "");
	repair_set_var(c, "evidence", a->evidence ?: "");
	r = repair_ask(c, "reflect", "reflect", tools, &tool, &args, ret_error);
	if (r < 0)
		return r;
	json_array_foreach(json_object_get(args, "lessons"), i, l)
		if (json_is_string(l) && json_array_size(c->lessons) < 32)
			json_array_append(c->lessons, l);
	rec = json_array_get(c->attempts, ln->record);
	if (rec)
		json_object_set_new(rec, "reflection",
				    json_string(json_get_str(args, "analysis") ?: ""));
	repair_event(c, "reflect", "reflection", 0, NULL, json_incref(args),
		     json_get_str(args, "next"), NULL);
	*ret_next = strdup(json_get_str(args, "next") ?: "new_patch");
	return *ret_next ? 0 : -ENOMEM;
}

/* What the line does next after its reflection: *ret_parent is the node
 * to refine (0: a fresh patch).  False when the line is spent. */
static bool line_next(struct repair_ctx *c, struct line *ln, const char *next, bool *used,
		      int *ret_parent)
{
	int parent = 0;

	if (streq(next, "new_hypothesis")) {
		int h = hyp_unused(c, used);

		if (h < 0)
			return false;
		used[h] = true;
		repair_attempt_clear(&ln->last);
		*ln = (struct line){ .hyp = (unsigned)h, .loc = hyp_location(c, (unsigned)h) };
		*ret_parent = 0;
		return true;
	}
	if (streq(next, "refine") && ln->last.node > 0) {
		parent = ln->last.node;
		/* rollback: the last change made things worse than the
		 * line's best, which is refined instead */
		if (ln->best_node > 0 && ln->best > ln->last.score) {
			parent = ln->best_node;
			repair_event(c, "patch", "plan", 0,
				     json_pack("{s:i, s:i}", "from", ln->last.node, "to", parent),
				     NULL, "rollback", NULL);
		}
		if (search_node_depth(c->search, parent) >= c->p->limits.depth)
			parent = 0;
	}
	if (parent == 0 && ln->fresh >= c->p->limits.branching)
		return false;
	*ret_parent = parent;
	return true;
}

static bool budget_stop(const char *why)
{
	return why && (strstr(why, "budget") || strstr(why, "wall-clock"));
}

/* The line's next candidate; *ret_validated when it is the fix. */
static int line_step(struct repair_ctx *c, struct line *ln, bool *used, struct attempt *best,
		     bool *ret_validated, char **ret_error)
{
	_cleanup_free_ char *next = NULL;
	struct attempt a = { .loc = -1 };
	int parent = 0, r;

	if (ln->tried) {
		r = reflect(c, ln, &next, ret_error);
		if (r < 0)
			return r;
		if (!line_next(c, ln, next, used, &parent)) {
			ln->done = true;
			return 0;
		}
	}
	if (parent == 0)
		ln->fresh++;
	r = repair_attempt(c, "patch", ln->hyp, ln->loc, parent, &a, ret_error);
	if (r < 0) {
		repair_attempt_clear(&a);
		return r;
	}
	ln->tried = true;
	ln->record = json_array_size(c->attempts) - 1;
	if (a.score == SCORE_VALIDATED) {
		repair_attempt_clear(best);
		*best = a;
		*ret_validated = true;
		return 0;
	}
	if (a.node > 0 && (ln->best_node == 0 || a.score > ln->best)) {
		ln->best_node = a.node;
		ln->best = a.score;
	}
	repair_attempt_clear(&ln->last);
	ln->last = a;
	return 0;
}

static int by_best(const void *x, const void *y)
{
	const struct line *a = *(const struct line *const *)x, *b = *(const struct line *const *)y;

	if (a->best != b->best)
		return a->best > b->best ? -1 : 1;
	return a < b ? -1 : a > b;	/* rank order among equals */
}

/* After a round: the better half of the lines that are still going on,
 * by how far their best candidate got, goes on. */
static void select_lines(struct repair_ctx *c, struct line *lines, size_t n, unsigned round)
{
	struct line *live[LINES_MAX];
	_cleanup_json_ json_t *kept = json_array(), *dropped = json_array();
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!lines[i].done)
			live[k++] = &lines[i];
	if (k < 2)
		return;
	qsort(live, k, sizeof(*live), by_best);
	for (size_t i = 0; i < k; i++) {
		json_t *j = json_pack("{s:i, s:i, s:s}", "hypothesis", live[i]->hyp, "location",
				      live[i]->loc + 1, "best", attempt_score_name(live[i]->best));

		if (i < (k + 1) / 2)
			json_array_append_new(kept, j);
		else {
			json_array_append_new(dropped, j);
			live[i]->done = true;
		}
	}
	repair_event(c, "patch", "plan", 0, json_pack("{s:i}", "round", round),
		     json_pack("{s:O, s:O}", "kept", kept, "dropped", dropped), "selected", NULL);
}

static void lines_clear(struct line *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		repair_attempt_clear(&lines[i].last);
}

/* Rounds until a candidate validates, every line is spent or a guard of
 * the search says stop. */
static int search_rounds(struct repair_ctx *c, struct attempt *best, char **ret_error)
{
	struct line lines[LINES_MAX];
	bool *used = calloc(json_array_size(c->hypotheses) + 1, sizeof(bool));
	bool validated = false, live = true;
	size_t n = lines_plan(c, lines);
	int r = 0;

	if (!used)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		used[lines[i].hyp] = true;
	repair_event(c, "patch", "plan", 0, NULL,
		     json_pack("{s:i}", "lines", (int)n), "candidate lines", NULL);
	for (unsigned round = 1; live && !validated && r >= 0; round++) {
		live = false;
		for (size_t i = 0; i < n && !validated && r >= 0; i++) {
			if (lines[i].done)
				continue;
			if (search_should_stop(c->search, trajectory_now())) {
				live = false;
				break;
			}
			r = line_step(c, &lines[i], used, best, &validated, ret_error);
			live |= !lines[i].done;
		}
		if (r >= 0 && !validated && live)
			select_lines(c, lines, n, round);
	}
	lines_clear(lines, n);
	free(used);
	return r;
}

/* PhoenixRepair's final round: lessons from every attempt, then a fresh
 * patch written with them. */
static int final_round(struct repair_ctx *c, struct attempt *best, char **ret_error)
{
	static const char *const tools[] = { "distil_lessons", NULL };
	_cleanup_free_ char *tool = NULL, *all = repair_feedback(c->attempts);
	_cleanup_json_ json_t *args = NULL;
	struct attempt a = { .loc = -1 };
	json_t *l;
	size_t i;
	int r;

	repair_set_var(c, "attempts", all);
	r = repair_ask(c, "final", "distil", tools, &tool, &args, ret_error);
	if (r < 0)
		return r;
	json_array_clear(c->lessons);
	json_array_foreach(json_object_get(args, "lessons"), i, l)
		if (json_is_string(l))
			json_array_append(c->lessons, l);
	if (json_get_str(args, "fix_shape"))
		json_array_append_new(c->lessons, json_sprintf("The fix should look like: %s",
							       json_get_str(args, "fix_shape")));
	repair_event(c, "final", "reflection", 0, NULL, json_incref(args), "distilled", NULL);
	/* a fresh start: earlier diffs are not shown, only the lessons */
	json_array_clear(c->attempts);
	r = repair_attempt(c, "final", 0, -1, 0, &a, ret_error);
	if (r >= 0 && a.score == SCORE_VALIDATED) {
		repair_attempt_clear(best);
		*best = a;
		return 0;
	}
	repair_attempt_clear(&a);
	return r;
}

int repair_search(struct repair_ctx *c, struct attempt *best, char **ret_error)
{
	const char *why;
	int r;

	r = search_rounds(c, best, ret_error);
	why = search_should_stop(c->search, trajectory_now());
	if (r >= 0 && best->score != SCORE_VALIDATED && json_array_size(c->attempts) > 0 &&
	    !budget_stop(why))
		r = final_round(c, best, ret_error);
	return r;
}
