/* The kernel's MAINTAINERS file: its sections, and which of them cover a
 * file by get_maintainer.pl's rules (F: and X: patterns, N: regexes).
 * Used to pick the kselftests of a patch and to answer the model's
 * "who maintains this" question. */
#ifndef KFIX_REPRO_MAINTAINERS_H
#define KFIX_REPRO_MAINTAINERS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"

/* MAINTAINERS is about 800 KiB; this leaves room to grow. */
#define MAINTAINERS_FILE_MAX (16 * 1024 * 1024)

struct maint_section {
	char *title;
	char **tags;	/* "M:\tName <addr>", "F:\tpath/", ... in file order */
};

struct maintainers {
	struct maint_section *s;
	size_t n;
};

/* Sections of a MAINTAINERS text (the preamble before the first section
 * with tags is not one). */
int maintainers_parse(const char *data, size_t len, struct maintainers **ret);
void maintainers_free(struct maintainers *m);
DEFINE_CLEANUP(struct maintainers, maintainers_free)

/* True when the section covers file (a path from the top of the tree):
 * an F: pattern matches it and no X: pattern does, or an N: regex
 * matches it. */
bool maintainers_covers(const struct maint_section *s, const char *file);

/* Calls fn with each F: pattern of the sections of SRC/MAINTAINERS that
 * cover one of files, in file order, until fn returns non-zero (that
 * value is returned; > 0 stops without an error).  A tree without a
 * MAINTAINERS file has none. */
typedef int (*maintainers_file_fn)(const char *pattern, void *userdata);
int maintainers_each_file(const char *src, char *const *files, maintainers_file_fn fn,
			  void *userdata);

/* The value of a tag line ("F:\tnet/" -> "net/"), or NULL when the line
 * is not of that tag. */
const char *maintainers_tag(const char *line, char tag);

#endif
