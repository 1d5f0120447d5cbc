/* Safe header lines: the only place where composed mail gets headers.
 * Structured values (addresses, Message-IDs) with control characters are
 * refused; free text is cleaned, RFC 2047-encoded when not ASCII and
 * folded, so a hostile title can never start a header line. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "header-internal.h"

/* after our headers: glib redefines MIN/MAX itself */
#include <glib.h>

/* git format-patch folds a plain subject at 78 columns (RFC 5322's
 * recommended line length): a subject git leaves on one line stays on one
 * here too, which tools that compare the two (b4) expect. */
#define FOLD_WIDTH 78

static bool is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

static bool all_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

/* Control characters (CR, LF, TAB, ...) become single spaces. */
static char *clean_text(const char *s)
{
	_cleanup_buf_ struct buf b = BUF_INIT(HEADER_VALUE_MAX);

	for (; *s; s++) {
		char c = is_ctl((unsigned char)*s) ? ' ' : *s;

		if (c == ' ' && (b.len == 0 || b.data[b.len - 1] == ' '))
			continue;
		if (buf_append_trunc(&b, &c, 1) < 0)
			return NULL;
	}
	if (b.len > 0 && b.data[b.len - 1] == ' ')
		b.data[--b.len] = '\0';
	return buf_take_str(&b);
}

/* The bytes of one encoded word (39 make a line under 78 columns). */
#define WORD_BYTES 39

static int put_b64(struct buf *b, const unsigned char *p, size_t n)
{
	/* the size g_base64_encode_step asks for, without line breaks */
	char out[(WORD_BYTES / 3 + 1) * 4 + 4];
	int state = 0, save = 0;
	size_t len;

	if (n > WORD_BYTES)
		return -E2BIG;
	len = g_base64_encode_step(p, n, FALSE, out, &state, &save);
	len += g_base64_encode_close(FALSE, out + len, &state, &save);
	return buf_append(b, out, len) < 0 ? -E2BIG : 0;
}

/* Appends text as words folded at FOLD_WIDTH; col is the current column.
 * Not g_mime_utils_unstructured_header_fold: it breaks a word longer than
 * a line inside the word with a tab, which unfolding keeps in the text. */
static int put_folded_ascii(struct buf *b, const char *text, size_t col)
{
	const char *p = text;

	while (*p) {
		const char *sp = strchr(p, ' ');
		size_t w = sp ? (size_t)(sp - p) : strlen(p);

		if (p != text) {
			if (col + 1 + w > FOLD_WIDTH) {
				if (buf_puts(b, "\n") < 0)
					return -E2BIG;
				col = 0;
			}
			if (buf_puts(b, " ") < 0)
				return -E2BIG;
			col++;
		}
		if (buf_append(b, p, w) < 0)
			return -E2BIG;
		col += w;
		p += w;
		if (*p == ' ')
			p++;
	}
	return 0;
}

/* The bytes of the next encoded word: all that is left when it fits, else
 * a multiple of 3 that ends on a UTF-8 character.  GMime's reader joins
 * adjacent words before decoding, so base64 padding in a word another
 * follows would end the text there. */
static size_t word_len(const unsigned char *p, size_t n)
{
	size_t k;

	if (n <= WORD_BYTES)
		return n;
	for (k = WORD_BYTES - WORD_BYTES % 3; k >= 3; k -= 3)
		if ((p[k] & 0xc0) != 0x80)
			return k;
	/* not UTF-8: no character to keep whole */
	return WORD_BYTES;
}

/* Encoded words of at most WORD_BYTES each, never splitting a UTF-8
 * character, one per folded line.  Not GMime's g_mime_utils_header_encode_*:
 * they choose Q or B per word (a lowercase "?b?" in phrases), leave a long
 * word in one encoded word far past 78 columns and copy invalid UTF-8 into
 * the header unencoded. */
static int put_encoded(struct buf *b, const char *text)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t n = strlen(text);
	bool first = true;

	while (n > 0) {
		size_t k = word_len(p, n);

		if ((!first && buf_puts(b, "\n ") < 0) || buf_puts(b, "=?UTF-8?B?") < 0 ||
		    put_b64(b, p, k) < 0 || buf_puts(b, "?=") < 0)
			return -E2BIG;
		first = false;
		p += k;
		n -= k;
	}
	return 0;
}

int header_put_text(struct buf *b, const char *name, const char *value)
{
	_cleanup_free_ char *v = clean_text(value);

	if (!v)
		return -ENOMEM;
	if (buf_printf(b, "%s: ", name) < 0)
		return -E2BIG;
	if (all_ascii(v) ? put_folded_ascii(b, v, strlen(name) + 2) < 0 : put_encoded(b, v) < 0)
		return -E2BIG;
	return buf_puts(b, "\n");
}

static bool addr_spec_ok(const char *s, size_t n)
{
	const char *at = memchr(s, '@', n);

	if (n == 0 || n > 254 || !at || at == s || at == s + n - 1)
		return false;
	for (size_t i = 0; i < n; i++)
		if (is_ctl((unsigned char)s[i]) || (unsigned char)s[i] >= 0x80 ||
		    strchr(" <>(),;:\\\"[]", s[i]))
			return false;
	return true;
}

int header_check_address(const char *a)
{
	const char *lt = strrchr(a, '<');

	for (const char *p = a; *p; p++)
		if (is_ctl((unsigned char)*p))
			return -EINVAL;
	if (!lt)
		return addr_spec_ok(a, strlen(a)) ? 0 : -EINVAL;
	if (!endswith(a, ">"))
		return -EINVAL;
	return addr_spec_ok(lt + 1, strlen(lt + 1) - 1) ? 0 : -EINVAL;
}

/* "Name <addr>" with the name quoted or encoded as needed.  Not GMime's
 * InternetAddressList: it encodes only the words that need it, in Latin-1
 * when they fit, as "=?iso-8859-1?b?...?=". */
static int put_address(struct buf *b, const char *a)
{
	const char *lt = strrchr(a, '<');
	_cleanup_free_ char *name = NULL;
	bool plain = true;

	if (header_check_address(a) < 0)
		return -EINVAL;
	if (!lt)
		return buf_puts(b, a);
	name = clean_text(strndupa(a, (size_t)(lt - a)));
	if (!name)
		return -ENOMEM;
	if (!*name)
		return buf_puts(b, lt);
	if (!all_ascii(name)) {
		if (put_encoded(b, name) < 0)
			return -E2BIG;
		return buf_printf(b, " %s", lt);
	}
	for (const char *p = name; *p; p++)
		plain &= !!strchr(" !#$%&'*+-/=?^_`{|}~", *p) || (*p >= 'a' && *p <= 'z') ||
			 (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
	if (plain)
		return buf_printf(b, "%s %s", name, lt);
	if (buf_puts(b, "\"") < 0)
		return -E2BIG;
	for (const char *p = name; *p; p++)
		if ((*p == '"' || *p == '\\') && buf_puts(b, "\\") < 0)
			return -E2BIG;
		else if (buf_append(b, p, 1) < 0)
			return -E2BIG;
	return buf_printf(b, "\" %s", lt);
}

int header_put_addresses(struct buf *b, const char *name, char *const *list)
{
	if (!list || !list[0])
		return 0;
	if (buf_printf(b, "%s: ", name) < 0)
		return -E2BIG;
	for (size_t i = 0; list[i]; i++) {
		int r = put_address(b, list[i]);

		if (r < 0)
			return r;
		if (buf_puts(b, list[i + 1] ? ",\n " : "\n") < 0)
			return -E2BIG;
	}
	return 0;
}

int header_put_address(struct buf *b, const char *name, const char *addr)
{
	char *one[] = { (char *)addr, NULL };

	return header_put_addresses(b, name, one);
}

int header_check_msgid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 250 || !strchr(id, '@'))
		return -EINVAL;
	for (const char *p = id; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '<' || *p == '>')
			return -EINVAL;
	return 0;
}

int header_put_msgids(struct buf *b, const char *name, char *const *ids)
{
	if (!ids || !ids[0])
		return 0;
	if (buf_printf(b, "%s:", name) < 0)
		return -E2BIG;
	for (size_t i = 0; ids[i]; i++) {
		if (header_check_msgid(ids[i]) < 0)
			return -EINVAL;
		if (buf_printf(b, "%s<%s>", i ? "\n " : " ", ids[i]) < 0)
			return -E2BIG;
	}
	return buf_puts(b, "\n");
}

int header_put_msgid(struct buf *b, const char *name, const char *id)
{
	char *one[] = { (char *)id, NULL };

	return id ? header_put_msgids(b, name, one) : 0;
}

int header_put_date(struct buf *b, time_t t)
{
	static const char days[][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char months[][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	struct tm tm;

	/* not strftime: the names must not follow the locale */
	if (!gmtime_r(&t, &tm))
		return -EINVAL;
	return buf_printf(b, "Date: %s, %02d %s %04d %02d:%02d:%02d +0000\n", days[tm.tm_wday],
			  tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour,
			  tm.tm_min, tm.tm_sec);
}
