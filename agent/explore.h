/* The agent's exploration tools: what a kernel developer reads before
 * writing a fix, as tool calls a model can make.  Every tool is
 * read-only and works on the base commit through libgit2: no shell, no
 * working tree, no path outside the tree (absolute paths, "..", ".git"
 * are refused), and every answer is bounded.  A tool call's mistakes
 * (a missing file, a bad pattern) are answers the model reads, not
 * errors of the engine. */
#ifndef KFIX_AGENT_EXPLORE_H
#define KFIX_AGENT_EXPLORE_H

#include <jansson.h>

#include "common/macro.h"

struct tags;
struct tree;
struct explore;

/* Lines of a read_file window, grep hits, log entries, blame lines, and
 * the bytes of any one answer. */
#define EXPLORE_READ_LINES_MAX 200
#define EXPLORE_GREP_HITS_MAX 100
#define EXPLORE_LOG_MAX 30
#define EXPLORE_ANSWER_MAX (32u * 1024)

/* Tools on tree t at commit rev (both must outlive the explorer). */
int explore_new(struct tree *t, const char *rev, struct explore **ret);
void explore_free(struct explore *e);
DEFINE_CLEANUP(struct explore, explore_free);

/* The symbol index of the base (repro/tags.h; borrowed, NULL: none):
 * find_definition answers from it instead of searching the tree. */
void explore_set_tags(struct explore *e, const struct tags *t);

/* The base kernel's vmlinux for struct_layout, symbolize and
 * disassemble (NULL: not built; those tools then say so). */
int explore_set_vmlinux(struct explore *e, const char *path);

/* The tools' definitions ({name, description, parameters} each), in the
 * form the LLM providers take. */
json_t *explore_tool_defs(void);

/* Runs tool name with args.  0 with the answer in *ret (text for the
 * model, at most EXPLORE_ANSWER_MAX bytes, "error: ..." when the call was
 * wrong); -ENOENT for a name that is no exploration tool; other negative
 * errno only for failures of kfix itself. */
int explore_call(struct explore *e, const char *name, const json_t *args, char **ret);

#endif
