/* Growable byte buffer with a hard maximum.  Appending past the maximum
 * fails with -E2BIG (or truncates, for buf_append_trunc) instead of
 * growing: every buffer that holds untrusted input has a bound. */
#ifndef KFIX_BUF_H
#define KFIX_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

struct buf {
	char *data;	/* always NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
	size_t max;	/* largest len allowed */
	bool truncated; /* buf_append_trunc dropped bytes */
};

#define BUF_INIT(maximum) ((struct buf){ .max = (maximum) })

int buf_append(struct buf *b, const void *p, size_t n);
/* Appends what fits, records the loss in b->truncated; never fails for size. */
int buf_append_trunc(struct buf *b, const void *p, size_t n);
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) _printf_(2, 3);
int buf_vprintf(struct buf *b, const char *fmt, va_list ap) _printf_(2, 0);
void buf_reset(struct buf *b);
void buf_free(struct buf *b);
/* Hands the bytes to the caller (NUL-terminated); b is left empty. */
char *buf_steal(struct buf *b, size_t *ret_len);

static inline void buf_freep(struct buf *b)
{
	buf_free(b);
}
#define _cleanup_buf_ _cleanup_(buf_freep)

#endif
