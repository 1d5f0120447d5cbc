/* Kernel crash reports: turns a console log into the crash title, type,
 * guilty frame and file the way syzkaller/syzbot do, so that "the same
 * crash" means the same thing to kfix as to syzbot.  Symbolisation of
 * func+0xOFF/0xSIZE frames with a vmlinux lives here too.
 *
 * The log is untrusted: any bytes (NULs, invalid UTF-8, CRs, 10 MB lines)
 * are accepted.  Parsing time is linear in the input and the memory it
 * allocates is bounded by REPORT_TEXT_MAX plus a few small tables,
 * whatever the input size (the input itself stays the caller's). */
#ifndef KFIX_REPORT_H
#define KFIX_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"

/* Largest log report_parse accepts (-E2BIG above). */
#define REPORT_INPUT_MAX ((size_t)1 << 30)
/* Largest extracted report text; longer reports are cut (and the cut is
 * not counted as corruption: syzbot's own reports are bounded too). */
#define REPORT_TEXT_MAX ((size_t)1 << 20)
/* Longest line kept in the extracted report; longer ones are cut. */
#define REPORT_LINE_MAX 4096

struct report;

/* Parses a console log.  Returns 0 and a report; a log with no crash gives
 * a report whose title is NULL.  -E2BIG above REPORT_INPUT_MAX, -ENOMEM. */
int report_parse(const char *log, size_t len, struct report **ret_report);
void report_free(struct report *r);
DEFINE_CLEANUP(struct report, report_free)

const char *report_title(const struct report *r);          /* NULL: no crash */
char *const *report_alt_titles(const struct report *r);     /* NULL-terminated, may be empty */
const char *report_type(const struct report *r);            /* e.g. "KASAN-USE-AFTER-FREE-READ", NULL if none */
const char *report_frame(const struct report *r);           /* guilty function */
char *const *report_frames(const struct report *r);         /* call trace function names */
const char *report_guilty_file(const struct report *r);
bool report_corrupted(const struct report *r);
bool report_suppressed(const struct report *r);
bool report_panicked(const struct report *r);
const char *report_text(const struct report *r);            /* extracted report, NULL if no crash */
/* The same from its oops line on: without the console lines printed just
 * before it, which change with every run's timing. */
const char *report_oops_text(const struct report *r);
size_t report_start(const struct report *r);                /* offsets in the log */
size_t report_end(const struct report *r);
/* Why the report is judged corrupted (NULL if it is not). */
const char *report_corrupted_reason(const struct report *r);
/* syz-executor process and program id when the log names them; false if not. */
bool report_executor(const struct report *r, int *ret_proc, int *ret_id);

/* Titles the VM layer gives to failures that leave no kernel report. */
#define REPORT_TITLE_LOST_CONNECTION "lost connection to test machine"
#define REPORT_TITLE_NO_OUTPUT "no output from test machine"
#define REPORT_TITLE_REBOOT "unexpected kernel reboot"

/* A report known by its title only (the REPORT_TITLE_* failures of the VM
 * layer): the title is normalised, the type derived from it, and the last
 * REPORT_TEXT_MAX bytes of the log become the report text. */
int report_from_title(const char *title, const char *log, size_t len, struct report **ret_report);

/* true when title equals t or one of the alt titles ("same crash" in
 * syzbot's sense). */
bool report_matches_title(const struct report *r, const char *t);

/* Whether two titles name the same crash under syzbot's conventions: a
 * " (N)" counter syzbot adds to a recurring bug's title is ignored, and
 * the function after the last " in " is compared with all its syscall
 * prefixes stripped ("... in __x64_sys_foo", "... in sys_foo" and
 * "... in foo" are one crash). */
bool report_titles_same(const char *a, const char *b);

/* The guilty source file of an (already symbolised) report text: the first
 * file that is not a generic helper.  Returns 0 and NULL when none. */
int report_guilty_file_of(const char *text, size_t len, const char *title, char **ret_file);

/* Applies syzkaller's title normalisation (ADDR, NUM, LINE, ...) to t. */
int report_normalize_title(const char *t, char **ret_title);

/* Symbolises func+0xOFF/0xSIZE frames of a report text with vmlinux
 * (libdw, inlined frames), returning a new text. */
int report_symbolize(const char *text, size_t len, const char *vmlinux, char **ret_text);

/* Whether a report's frames carry source lines ("file.c:N"), as a
 * symbolised report's do. */
bool report_symbolised(const char *text, size_t len);

#endif
