/* The attempt tree and its guards; see search.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/conf.h"
#include "common/strutil.h"
#include "search.h"

#define SEARCH_MAX_NODES 1024

struct node {
	int parent;
	unsigned depth;
	unsigned hypothesis;
	char *diff;
	uint64_t hash;
	enum attempt_score score;
};

struct search {
	struct search_limits l;
	struct node *nodes; /* index 0 unused */
	size_t n;
	int best;
	unsigned since_progress;
	uint64_t tokens;
	double cost;
	uint64_t started;
};

const char *attempt_score_name(enum attempt_score s)
{
	static const char *const names[] = { "none", "unusable", "rejected", "build-error",
					     "same-crash", "other-crash", "validated" };

	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "?";
}

int search_limits_from_config(const struct config *c, struct search_limits *ret)
{
	int64_t branching, depth, iterations, stagnation, tokens;
	uint64_t wall;
	const char *cost;
	char *end;
	double d;
	int r;

	if ((r = config_get_int(c, "agent", NULL, "branching", &branching)) < 0 ||
	    (r = config_get_int(c, "agent", NULL, "depth", &depth)) < 0 ||
	    (r = config_get_int(c, "agent", NULL, "max-iterations", &iterations)) < 0 ||
	    (r = config_get_int(c, "agent", NULL, "stagnation", &stagnation)) < 0 ||
	    (r = config_get_int(c, "agent", NULL, "max-tokens", &tokens)) < 0 ||
	    (r = config_get_duration(c, "agent", NULL, "wall-clock", &wall)) < 0 ||
	    (r = config_get_string(c, "agent", NULL, "max-cost", &cost)) < 0)
		return r;
	d = strtod(cost, &end);
	if (end == cost || *end || d < 0)
		return -EINVAL;
	*ret = (struct search_limits){
		.branching = (unsigned)branching, .depth = (unsigned)depth,
		.max_iterations = (unsigned)iterations, .stagnation = (unsigned)stagnation,
		.max_tokens = (uint64_t)tokens, .max_cost = d, .wall_usec = wall,
	};
	return 0;
}

int search_new(const struct search_limits *l, uint64_t now_usec, struct search **ret)
{
	struct search *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->l = *l;
	s->started = now_usec;
	s->n = 1;
	s->nodes = calloc(1, sizeof(*s->nodes));
	if (!s->nodes) {
		free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

void search_free(struct search *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->nodes[i].diff);
	free(s->nodes);
	free(s);
}

/* FNV-1a over the diff's changed lines only: context and hunk offsets
 * differ between otherwise identical patches. */
static uint64_t diff_hash(const char *diff)
{
	uint64_t h = 1469598103934665603ull;
	const char *l = diff;

	while (l && *l) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);

		if ((l[0] == '+' || l[0] == '-') && !startswith(l, "+++") && !startswith(l, "---"))
			for (size_t i = 0; i < n; i++) {
				if (l[i] == ' ' || l[i] == '\t')
					continue;
				h ^= (unsigned char)l[i];
				h *= 1099511628211ull;
			}
		l = e ? e + 1 : NULL;
	}
	return h;
}

int search_add(struct search *s, int parent, unsigned hypothesis, const char *diff,
	       int *ret_dup)
{
	uint64_t h = diff_hash(diff ?: "");
	struct node *nn;
	unsigned depth = 1;

	if (parent < 0 || (size_t)parent >= s->n)
		return -EINVAL;
	if (parent > 0) {
		depth = s->nodes[parent].depth + 1;
		if (depth > s->l.depth)
			return -ELOOP;
	}
	for (size_t i = 1; i < s->n; i++)
		if (s->nodes[i].hash == h) {
			if (ret_dup)
				*ret_dup = (int)i;
			return -EEXIST;
		}
	if (s->n >= SEARCH_MAX_NODES)
		return -E2BIG;
	nn = realloc(s->nodes, (s->n + 1) * sizeof(*nn));
	if (!nn)
		return -ENOMEM;
	s->nodes = nn;
	nn[s->n] = (struct node){ .parent = parent, .depth = depth, .hypothesis = hypothesis,
				  .diff = strdup(diff ?: ""), .hash = h };
	if (!nn[s->n].diff)
		return -ENOMEM;
	return (int)s->n++;
}

bool search_score(struct search *s, int node, enum attempt_score score)
{
	if (node <= 0 || (size_t)node >= s->n)
		return false;
	s->nodes[node].score = score;
	if (!s->best || score > s->nodes[s->best].score) {
		s->best = node;
		s->since_progress = 0;
		return true;
	}
	s->since_progress++;
	return false;
}

void search_spend(struct search *s, uint64_t tokens, double cost)
{
	s->tokens += tokens;
	s->cost += cost;
}

const char *search_should_stop(const struct search *s, uint64_t now_usec)
{
	if (s->best && s->nodes[s->best].score == SCORE_VALIDATED)
		return "validated";
	if (s->n - 1 >= s->l.max_iterations)
		return "iteration limit reached";
	if (s->tokens >= s->l.max_tokens)
		return "token budget spent";
	if (s->l.max_cost > 0 && s->cost >= s->l.max_cost)
		return "cost budget spent";
	if (s->l.wall_usec && now_usec - s->started >= s->l.wall_usec)
		return "wall-clock limit reached";
	if (s->since_progress >= s->l.stagnation)
		return "stagnation: no progress in the last attempts";
	return NULL;
}

int search_best(const struct search *s)
{
	return s->best;
}

enum attempt_score search_node_score(const struct search *s, int node)
{
	return node > 0 && (size_t)node < s->n ? s->nodes[node].score : SCORE_NONE;
}

unsigned search_node_depth(const struct search *s, int node)
{
	return node > 0 && (size_t)node < s->n ? s->nodes[node].depth : 0;
}

const char *search_node_diff(const struct search *s, int node)
{
	return node > 0 && (size_t)node < s->n ? s->nodes[node].diff : NULL;
}

unsigned search_iterations(const struct search *s)
{
	return (unsigned)(s->n - 1);
}
