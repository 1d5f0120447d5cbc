/* HTML for the dashboard: every text that reaches a page goes through
 * one escaping printf, so a crash title, a mail subject or a model's
 * answer is shown as text and never read as markup. */
#ifndef KFIX_DAEMON_HTML_H
#define KFIX_DAEMON_HTML_H

#include <stddef.h>

#include "common/buf.h"

/* Escapes &, <, >, " and ' and replaces bytes that are not UTF-8, and
 * control characters other than tab and newline, by U+FFFD. */
int html_escape(struct buf *b, const char *s, size_t n);

/* A printf whose conversions are:
 *   %s  text, escaped (NULL: nothing)   %H  trusted markup, as is
 *   %q  a URL query value, percent-encoded
 *   %d  int   %u  unsigned   %D  int64_t   %F  double, 2 decimals
 *   %%  a per cent sign
 * Any other conversion is a programming error: -EINVAL. */
int html_fmt(struct buf *b, const char *fmt, ...);

#endif
