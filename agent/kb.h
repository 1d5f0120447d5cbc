/* The knowledge base: one JSON line per finished repair
 *   {"time", "title", "type", "subsystem", "outcome", "root_cause",
 *    "patch_shape", "lessons": [...], "upstream": {...}}
 * and retrieval of the entries closest to a new bug (same crash type,
 * same subsystem, shared title words). */
#ifndef KFIX_AGENT_KB_H
#define KFIX_AGENT_KB_H

#include <jansson.h>
#include <stddef.h>

#define KB_FILE_MAX (64u * 1024 * 1024)

int kb_add(const char *path, const json_t *entry);
/* When the bug's real fix lands: every entry with this title gets lesson
 * first in its lessons and "upstream" set (a second call for the same
 * upstream object adds no lesson); when no entry has the title, fallback
 * is added with them.  The file is rewritten and renamed into place under
 * the lock kb_add takes. */
int kb_amend(const char *path, const char *title, const json_t *upstream, const char *lesson,
	     const json_t *fallback);
/* Up to max entries, best first; an empty array when none match or the
 * file does not exist yet. */
int kb_query(const char *path, const char *type, const char *subsystem,
	     const char *title, size_t max, json_t **ret);
/* "net/sctp/socket.c" -> "net/sctp"; "mm/slub.c" -> "mm". */
char *kb_subsystem_of(const char *file);

#endif
