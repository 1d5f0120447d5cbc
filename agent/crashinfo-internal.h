/* Private to agent/: what the gates and prompts need from a crash report
 * (title, type, the functions on the crashing stack).  The full parser
 * with syzkaller's title rules lives in repro/; this reader only has to
 * find the crash site, in a syzkaller-style report file (TITLE:/TYPE:
 * header) or a raw console log. */
#ifndef KFIX_AGENT_CRASHINFO_INTERNAL_H
#define KFIX_AGENT_CRASHINFO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"

#define CRASH_MAX_FRAMES 32

struct crash_frame {
	char *function;
	char *file; /* "net/core/skbuff.c" or NULL */
	unsigned line;
};

struct crash_info {
	char *title;
	char *type;	      /* KASAN, WARNING, BUG, LOCKDEP, ... */
	char *site;	      /* function named by the title or RIP, or NULL */
	struct crash_frame frames[CRASH_MAX_FRAMES];
	size_t n_frames;
};

int crash_info_parse(const char *text, size_t len, struct crash_info **ret);
void crash_info_free(struct crash_info *c);
DEFINE_CLEANUP(struct crash_info, crash_info_free);
/* Reporting machinery (kasan_report, __warn, dump_stack, ...), never the
 * place of the bug. */
bool crash_function_is_infra(const char *fn);
/* The crash site first, then the first non-infra frames, at most max
 * names, without duplicates; a NULL-terminated vector of borrowed names. */
size_t crash_info_suspects(const struct crash_info *c, const char **ret, size_t max);
/* What a model is shown of a crashed run: the first crash report cut out
 * of the console log at its boundaries, console timestamps and carriage
 * returns stripped, KASAN's page and shadow memory dumps left out, at
 * most max bytes (the head: the header and the top of the stack).  Without a report, the end of the log likewise.  Runs
 * then differ only in numbers, which replay comparisons mask. */
int crash_excerpt(const char *log, size_t len, size_t max, char **ret);

#endif
