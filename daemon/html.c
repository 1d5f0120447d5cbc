/* Escaping for the dashboard's pages. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "common/strutil.h"
#include "html.h"

#define REPLACEMENT "\xef\xbf\xbd"

int html_escape(struct buf *b, const char *s, size_t n)
{
	size_t i = 0, start = 0, k;
	int r = 0;

	while (i < n && r >= 0) {
		unsigned char c = (unsigned char)s[i];
		const char *rep = NULL;

		k = utf8_seq_len(s + i, n - i);
		if (k == 0 || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
			rep = REPLACEMENT, k = k ?: 1;
		else if (c == '&')
			rep = "&amp;";
		else if (c == '<')
			rep = "&lt;";
		else if (c == '>')
			rep = "&gt;";
		else if (c == '"')
			rep = "&quot;";
		else if (c == '\'')
			rep = "&#39;";
		if (rep) {
			r = buf_append(b, s + start, i - start);
			if (r >= 0)
				r = buf_puts(b, rep);
			start = i + k;
		}
		i += k;
	}
	return r < 0 ? r : buf_append(b, s + start, i - start);
}

static int url_escape(struct buf *b, const char *s)
{
	int r = 0;

	for (; s && *s && r >= 0; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c))
			r = buf_append(b, s, 1);
		else
			r = buf_printf(b, "%%%02X", c);
	}
	return r;
}

static int conversion(struct buf *b, char spec, va_list *ap)
{
	const char *s;

	switch (spec) {
	case 's':
		s = va_arg(*ap, const char *);
		return s ? html_escape(b, s, strlen(s)) : 0;
	case 'H':
		s = va_arg(*ap, const char *);
		return s ? buf_puts(b, s) : 0;
	case 'q':
		return url_escape(b, va_arg(*ap, const char *));
	case 'd':
		return buf_printf(b, "%d", va_arg(*ap, int));
	case 'u':
		return buf_printf(b, "%u", va_arg(*ap, unsigned));
	case 'D':
		return buf_printf(b, "%" PRId64, va_arg(*ap, int64_t));
	case 'F':
		return buf_printf(b, "%.2f", va_arg(*ap, double));
	case '%':
		return buf_puts(b, "%");
	default:
		return -EINVAL;
	}
}

int html_fmt(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int r = 0;

	va_start(ap, fmt);
	while (*fmt && r >= 0) {
		const char *pc = strchr(fmt, '%');

		if (!pc) {
			r = buf_puts(b, fmt);
			break;
		}
		r = buf_append(b, fmt, (size_t)(pc - fmt));
		if (r >= 0)
			r = pc[1] ? conversion(b, pc[1], &ap) : -EINVAL;
		fmt = pc[1] ? pc + 2 : pc + 1;
	}
	va_end(ap);
	return r;
}
