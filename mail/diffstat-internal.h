/* Private to mail/: the diffstat of a patch mail. */
#ifndef KFIX_MAIL_DIFFSTAT_INTERNAL_H
#define KFIX_MAIL_DIFFSTAT_INTERNAL_H

#include "mail-internal.h"

/* Appends git's diffstat lines and summary for diff to out. */
int diffstat_format(const char *diff, struct buf *out);

#endif
