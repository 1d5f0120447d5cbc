/* A symbol index of a kernel source tree: Universal Ctags run once per
 * base commit over the checkout (functions, SYSCALL_DEFINEn syscalls,
 * macros, structs, unions, enums, typedefs, fields, globals), kept as a
 * sorted tags file and looked up by binary search in the mapped file, so
 * that loading it from the cache costs nothing. */
#ifndef KFIX_REPRO_TAGS_H
#define KFIX_REPRO_TAGS_H

#include "common/macro.h"

struct tags;

/* Indexes src_dir into path (written aside and renamed: a crash leaves
 * no half index).  On failure *ret_error says why. */
int tags_build(const char *src_dir, const char *path, char **ret_error);

int tags_open(const char *path, struct tags **ret);
void tags_free(struct tags *t);
DEFINE_CLEANUP(struct tags, tags_free);

/* Calls fn for each entry of name (kind: "function", "macro", "struct",
 * "member", ...) in the file's order; fn returns non-zero to stop. */
typedef int (*tags_fn)(const char *file, unsigned line, const char *kind, void *ud);
int tags_find(const struct tags *t, const char *name, tags_fn fn, void *ud);

#endif
