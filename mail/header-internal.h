/* Private to mail/: writing header lines safely. */
#ifndef KFIX_MAIL_HEADER_INTERNAL_H
#define KFIX_MAIL_HEADER_INTERNAL_H

#include <time.h>

#include "mail-internal.h"

#define HEADER_VALUE_MAX 4096

/* Each appends "Name: value\n" (folded); -EINVAL on a value that cannot be
 * written safely. */
int header_put_text(struct buf *b, const char *name, const char *value);
int header_put_address(struct buf *b, const char *name, const char *addr);
int header_put_addresses(struct buf *b, const char *name, char *const *list);
int header_put_msgid(struct buf *b, const char *name, const char *id);
int header_put_msgids(struct buf *b, const char *name, char *const *ids);
int header_put_date(struct buf *b, time_t t);
int header_check_address(const char *a);
int header_check_msgid(const char *id);

#endif
