/* Private to agent/: reading unified diffs (git format) and applying them
 * to file contents, for the gates and for minimisation. */
#ifndef KFIX_AGENT_UDIFF_INTERNAL_H
#define KFIX_AGENT_UDIFF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"

#define UDIFF_MAX (4u * 1024 * 1024)
#define UDIFF_MAX_FILES 256
#define UDIFF_MAX_HUNKS 4096

struct udiff_line {
	char kind; /* '+', '-' or ' ' */
	char *text; /* without the kind character and the newline */
};

struct udiff_hunk {
	unsigned old_start, old_len, new_start, new_len;
	char *section; /* text after the second "@@" (function context) */
	struct udiff_line *lines;
	size_t n_lines;
};

struct udiff_file {
	char *old_path; /* NULL for /dev/null */
	char *new_path;
	char *header;	/* the "diff --git" block up to the first hunk */
	bool binary;
	bool mode_change;
	bool symlink;
	struct udiff_hunk *hunks;
	size_t n_hunks;
};

struct udiff {
	struct udiff_file *files;
	size_t n_files;
	size_t n_hunks;
};

int udiff_parse(const char *text, size_t len, struct udiff **ret, char **ret_error);
void udiff_free(struct udiff *d);
DEFINE_CLEANUP(struct udiff, udiff_free);

/* The file's path after the patch (or before, for a deletion). */
const char *udiff_file_path(const struct udiff_file *f);
/* Applies f's hunks to old (exact context match at the stated lines,
 * with a small search window). */
int udiff_apply_file(const struct udiff_file *f, const char *old, char **ret_new);
/* Re-emits d keeping only the hunks whose global index has keep[i] set
 * (files left without hunks are dropped). */
int udiff_format(const struct udiff *d, const bool *keep, char **ret);

#endif
