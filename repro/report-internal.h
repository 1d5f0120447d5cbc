/* Private to repro/report*.c: the oops table and the regex helpers. */
#ifndef KFIX_REPORT_INTERNAL_H
#define KFIX_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

/* A stack part that is not a regex but "parse a call trace from here". */
#define STACK_TRACE "@stack"

enum frame_picker {
	PICK_FIRST,      /* the first frame not skipped */
	PICK_STALL,      /* the frame before a dispatch anchor (rcu stalls, lockups) */
	PICK_HUNG_TASK,  /* rtnl_lock / synchronize_rcu buckets, then non-waiting frames */
};

/* How the guilty function is found: parts are regexes matched line by line
 * in order (a capture yields a frame) or STACK_TRACE; parts2 is tried when
 * parts yields nothing.  skip: substrings (or ^/$ anchored) of functions
 * to pass over, on top of the generic list. */
struct stack_fmt {
	const char *parts[5];
	const char *parts2[5];
	const char *skip[24];
	enum frame_picker picker;
};

/* One way an oops of a family is titled.  title is searched in the report;
 * when report is set it must match too and its captures replace title's.
 * fmt builds the title: {1}..{9} are captures, {frame} the guilty frame,
 * {origin} the first frame (same skip list) of the stack after a line
 * matching origin (without such a frame the report is corrupted, as the
 * origin is a part of syzkaller's stack).  alt builds an alternative
 * title the same way. */
struct oops_format {
	const char *title;
	const char *report;
	const char *fmt;
	const char *alt;
	const struct stack_fmt *stack;
	const char *origin;
	bool no_stack_trace; /* its reports legitimately carry no call trace */
	bool corrupted;      /* matching this format means the report is cut */
};

/* An oops family: a fixed header string that starts a report, its title
 * formats, and regexes that veto the header on a line. */
struct oops {
	const char *header;
	const struct oops_format *formats;
	const char *const *suppressions;
	/* the header alone is too common: a format's title must match too */
	bool strict;
};

/* A string to find, and optionally a regex that must then match the line. */
struct line_pattern {
	const char *literal;
	const char *regex;
};

extern const struct oops report_oopses[];
extern const size_t report_n_oopses;
extern const char *const report_skip_frames[];
extern const char *const report_stack_starts[];
extern const char report_riscv_stack_start[];
extern const char *const report_frame_res[];
extern const char *const report_corrupted_lines[];
extern const char *const report_stall_anchors[];
extern const char *const report_strip_prefixes[];
extern const char *const report_guilty_ignores[];
extern const char *const report_guilty_line_ignores[];
extern const char *const report_stall_irq_entries[];
extern const struct line_pattern report_log_suppressions[];
extern const char *const report_start_ignores[];
extern const char *const report_info_with_stack[];
extern const char *const report_rip_frame;
extern const struct stack_fmt report_trace_fmt;

/* Regex matching (PCRE2, compiled once with {{FUNC}}-style macros
 * expanded, bounded by a match limit).  Returns the number of capture
 * pairs filled in ovec (>= 1) or 0 when it does not match. */
#define RE_MAX_GROUPS 10
int re_search(const char *pattern, const char *s, size_t len, size_t start, size_t ovec[2 * RE_MAX_GROUPS]);
static inline bool re_match(const char *pattern, const char *s, size_t len)
{
	size_t ov[2 * RE_MAX_GROUPS];
	return re_search(pattern, s, len, 0, ov) > 0;
}
/* Whether any regex of a NULL-terminated list matches (one alternation,
 * compiled once per list). */
bool re_match_any(const char *const *list, const char *s, size_t len);
/* Compiles every pattern of the tables; <0 if one does not compile. */
int re_init(void);

/* Title helpers (report-title.c). */
char *title_normalize(const char *t);
const char *title_type(const char *title);

/* Stack helpers (report-stack.c). */
/* The guilty frame of a stack: canonical is how titles name it (syscall
 * prefixes stripped, or a stall/hang bucket), raw the frame as printed. */
struct picked_frame {
	char *canonical;
	char *raw;
};
/* A line that starts a stack (report_stack_starts); a frame line
 * (report_frame_res): its number of capture groups, 0 if not one. */
bool stack_start_line(const char *l, size_t n);
int frame_line(const char *l, size_t n, size_t *ov);
size_t frame_strip_offset(const char *f, size_t n);
const char *frame_strip(const char *f);
/* What stack_extract_frame saw: a fault-injection stack cutting into the
 * report. */
#define STACK_CUT 1u
int stack_extract_frame(const struct stack_fmt *sf, const char *text, size_t len,
			struct picked_frame *ret_pick, char ***ret_frames, unsigned *ret_flags);
void picked_frame_done(struct picked_frame *p);
char *guilty_file(const char *text, size_t len, const char *title);

#endif
