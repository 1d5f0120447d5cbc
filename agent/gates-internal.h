/* Private to agent/: what the gates share.  gates.c runs them and holds
 * the line-level gates; gates-path.c judges whether the crashing path
 * still runs; gates-resources.c whether releases stay balanced. */
#ifndef KFIX_AGENT_GATES_INTERNAL_H
#define KFIX_AGENT_GATES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"
#include "gates.h"

struct crash_info;
struct udiff;
struct udiff_file;
struct udiff_line;

#define GATE_FILE_MAX (8u * 1024 * 1024)
#define MAX_VERDICTS 16

struct gate_verdict {
	const char *name;
	enum gate_status status;
	char *reason;
};

struct gate_verdicts {
	struct gate_verdict v[MAX_VERDICTS];
	size_t n;
	char *failure;
};

struct gate_ctx {
	const struct udiff *d;
	const struct crash_info *crash; /* NULL when the report was unreadable */
	const char *src;
	const struct gate_limits *lim;
	struct gate_verdicts *out;
};

int gate_verdict(struct gate_ctx *g, const char *name, enum gate_status st,
		 const char *fmt, ...) _printf_(4, 5);

bool gate_ident_char(char c);
/* Removes comments and string literals from one line (comment state is
 * carried across lines in *in_comment). */
void gate_strip_code(const char *in, char *out, size_t max, bool *in_comment);
/* Occurrences of NAME( as a whole identifier. */
unsigned gate_count_calls(const char *code, const char *name);

typedef int (*line_fn)(struct gate_ctx *g, const struct udiff_file *f,
		       const struct udiff_line *l, const char *code, void *ud);
/* Calls fn for every added/removed line with its comment-stripped code
 * (raw: as written); stops at the first non-zero return. */
int gate_each_changed_line(struct gate_ctx *g, line_fn fn, void *ud, bool raw);

/* The base file of f and the file after the patch, both whole; -ESRCH
 * when the patch does not apply, 0 with both NULL when there is no tree
 * or the file is unreadable. */
int gate_file_texts(const struct gate_ctx *g, const struct udiff_file *f, char **ret_old,
		    char **ret_new);
/* The line of the patched file that old_line of the base became; -ENOENT
 * when the patch removes it. */
int gate_map_line(const struct udiff_file *f, unsigned old_line, unsigned *ret_new_line);

/* Three-valued constant evaluation of a C condition (the text inside the
 * parentheses): 1 always true, 0 always false, -1 not constant. */
int gate_cond_value(const char *cond, size_t len);

int gate_amputation(struct gate_ctx *g);
int gate_resources(struct gate_ctx *g);

#endif
