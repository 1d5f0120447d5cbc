#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

static int buf_reserve(struct buf *b, size_t n)
{
	size_t want, ncap;
	char *p;

	if (n > b->max || b->len > b->max - n)
		return -E2BIG;
	want = b->len + n + 1;
	if (want <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 256;
	while (ncap < want)
		ncap = ncap > SIZE_MAX / 2 ? want : ncap * 2;
	if (ncap > b->max + 1)
		ncap = b->max + 1;
	p = realloc(b->data, ncap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = ncap;
	return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
	int r = buf_reserve(b, n);

	if (r < 0)
		return r;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_append_trunc(struct buf *b, const void *p, size_t n)
{
	size_t room = b->max - b->len;

	if (n > room) {
		b->truncated = true;
		n = room;
	}
	return buf_append(b, p, n);
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n, r;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return -EINVAL;
	r = buf_reserve(b, (size_t)n);
	if (r < 0)
		return r;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->truncated = false;
	if (b->data)
		b->data[0] = '\0';
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->truncated = false;
}

char *buf_steal(struct buf *b, size_t *ret_len)
{
	char *p;

	/* an empty buffer has no storage yet: the result is still a string */
	if (!b->data && buf_reserve(b, 0) < 0)
		return NULL;
	b->data[b->len] = '\0';
	p = b->data;
	if (ret_len)
		*ret_len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
