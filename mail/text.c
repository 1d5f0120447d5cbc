/* Line-level helpers over decoded mail text. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "mail-internal.h"

bool text_next_line(const char **pos, const char **ret_line, size_t *ret_len)
{
	const char *p = *pos, *nl;
	size_t n;

	if (!p || !*p)
		return false;
	nl = strchr(p, '\n');
	n = nl ? (size_t)(nl - p) : strlen(p);
	*pos = nl ? nl + 1 : p + n;
	if (n > 0 && p[n - 1] == '\r')
		n--;
	*ret_line = p;
	*ret_len = n;
	return true;
}

bool line_is_quoted(const char *line, size_t len)
{
	/* "> x", ">> x" and the " > x" some clients produce */
	for (size_t i = 0; i < len; i++) {
		if (line[i] == '>')
			return true;
		if (line[i] != ' ')
			return false;
	}
	return false;
}

static bool has_prefix(const char *l, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && memcmp(l, p, k) == 0;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* ^index [0-9a-f]+\.\.[0-9a-f]+ */
static bool is_index_line(const char *l, size_t n)
{
	size_t i = 6, start;

	if (!has_prefix(l, n, "index "))
		return false;
	start = i;
	while (i < n && is_hex(l[i]))
		i++;
	if (i == start || i + 2 >= n || l[i] != '.' || l[i + 1] != '.')
		return false;
	return is_hex(l[i + 2]);
}

static bool followed_by_nonspace(const char *l, size_t n, size_t k)
{
	return n > k && !isspace((unsigned char)l[k]);
}

static bool diff_start(const char *l, size_t n)
{
	if (has_prefix(l, n, "--- ") || has_prefix(l, n, "+++ "))
		return followed_by_nonspace(l, n, 4);
	if (has_prefix(l, n, "Index: "))
		return followed_by_nonspace(l, n, 7);
	if (has_prefix(l, n, "new file mode "))
		return n > 14 && isdigit((unsigned char)l[14]);
	return has_prefix(l, n, "diff --git") || is_index_line(l, n);
}

static bool diff_continues(const char *l, size_t n)
{
	return n == 0 || l[0] == ' ' || l[0] == '+' || l[0] == '-' || l[0] == '@' ||
	       has_prefix(l, n, "================");
}

char *diff_extract(const char *text)
{
	_cleanup_buf_ struct buf b = BUF_INIT(MAIL_TEXT_MAX);
	const char *pos = text, *l;
	bool in_diff = false;
	size_t n;

	while (text_next_line(&pos, &l, &n)) {
		bool take = false;

		if (diff_start(l, n)) {
			in_diff = true;
			take = true;
		} else if (in_diff) {
			if ((n == 2 && memcmp(l, "--", 2) == 0) ||
			    (n == 3 && memcmp(l, "-- ", 3) == 0) || (n > 0 && l[0] == '>')) {
				in_diff = false;
				continue;
			}
			take = diff_continues(l, n);
		}
		if (take && (buf_append(&b, l, n) < 0 || buf_puts(&b, "\n") < 0))
			return NULL;
	}
	if (b.len == 0)
		return NULL;
	/* blank lines kept inside a diff are noise at its end */
	while (b.len >= 2 && b.data[b.len - 1] == '\n' && b.data[b.len - 2] == '\n')
		b.data[--b.len] = '\0';
	return buf_steal(&b, NULL);
}
