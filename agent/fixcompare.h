/* Comparing kfix's patch for a bug with the fix its developers landed:
 * which files and functions each changes, which hunks touch the same
 * place, and how alike the changed lines are.  The answer is JSON:
 *   {"verdict", "matches", "equivalent", "similarity", "line_similarity",
 *    "files":     {"kfix": [...], "developer": [...], "shared": [...]},
 *    "functions": {"kfix": [...], "developer": [...], "shared": [...]},
 *    "hunks":     {"kfix": N, "developer": N, "overlapping": N}}
 * Functions are "path:name".  "equivalent" is true when both make the same
 * change up to layout and the names of what they declare, at the same
 * places (see fixcompare-equiv.c).  The verdict, strongest first:
 *   same           equivalent, or the changed lines are alike (similarity
 *                  >= 0.8), in the same files, and their hunks meet
 *   same-place     at least one hunk of each changes the same lines of the
 *                  same function (within FIXCOMPARE_SLACK lines)
 *   same-function  they change a function in common, at other lines
 *   same-file      they change a file in common, in other functions
 *   different      nothing in common
 * "matches" is true for same and same-place: kfix found where the bug
 * is fixed. */
#ifndef KFIX_AGENT_FIXCOMPARE_H
#define KFIX_AGENT_FIXCOMPARE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define FIXCOMPARE_SLACK 3
#define FIXCOMPARE_TOKENS_MAX 200000 /* per side; more are not counted */

struct fixcompare_side {
	const char *diff;
	size_t diff_len;
	/* The file before the change, to find the function a line is in;
	 * NULL, or an error, falls back to the hunk's section line. */
	int (*read_old)(void *ud, const char *path, char **ret_text, size_t *ret_len);
	void *ud;
};

int fixcompare_diffs(const struct fixcompare_side *kfix, const struct fixcompare_side *dev,
		     json_t **ret, char **ret_error);
bool fixcompare_verdict_matches(const char *verdict);

/* The optional model judge (fixcompare-judge.c): shown both diffs, the
 * model says whether ours is the same fix as theirs.  *ret is
 * {"equivalent", "reason", "tokens_in", "tokens_out", "cost"}; -EBADMSG
 * with *ret_error when its answer is not a judge_equivalence call. */
struct llm;
int fixcompare_judge(struct llm *l, const char *ours, const char *theirs, json_t **ret,
		     char **ret_error);

#endif
