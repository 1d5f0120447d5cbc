/* Finding a C function definition in source text without a parser.
 *
 * Kernel sources are regular enough that a scan which skips comments,
 * string and character literals and preprocessor lines, and tracks brace
 * depth, finds definitions reliably: at depth 0, the name followed by a
 * parenthesised list and then '{' (before any ';') is a definition; a ';'
 * first means a prototype or a call in an initialiser.  SYSCALL_DEFINEn
 * (name, ...) definitions are matched by the syscall's name. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "repro/tree.h"

struct scan {
	const char *s;
	size_t len, pos;
};

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static bool at_line_start(const struct scan *sc, size_t pos)
{
	while (pos > 0 && (sc->s[pos - 1] == ' ' || sc->s[pos - 1] == '\t'))
		pos--;
	return pos == 0 || sc->s[pos - 1] == '\n';
}

/* Skips a comment, literal or preprocessor line at pos; returns true when
 * something was skipped. */
static bool skip_noise(struct scan *sc)
{
	const char *s = sc->s;
	size_t i = sc->pos, n = sc->len;

	if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
		const char *e = memmem(s + i + 2, n - i - 2, "*/", 2);
		sc->pos = e ? (size_t)(e - s) + 2 : n;
		return true;
	}
	if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
		while (i < n && s[i] != '\n')
			i++;
		sc->pos = i;
		return true;
	}
	if (s[i] == '"' || s[i] == '\'') {
		char q = s[i++];
		while (i < n && s[i] != q && s[i] != '\n')
			i += (s[i] == '\\' && i + 1 < n) ? 2 : 1;
		sc->pos = i < n ? i + 1 : n;
		return true;
	}
	if (s[i] == '#' && at_line_start(sc, i)) {
		while (i < n && s[i] != '\n')
			i += (s[i] == '\\' && i + 1 < n) ? 2 : 1;
		sc->pos = i;
		return true;
	}
	return false;
}

/* Advances to the next significant character (not space, not noise). */
static void skip_space(struct scan *sc)
{
	while (sc->pos < sc->len) {
		if (isspace((unsigned char)sc->s[sc->pos]))
			sc->pos++;
		else if (!skip_noise(sc))
			break;
	}
}

/* With pos on an opening bracket, moves past its matching closer. */
static bool skip_balanced(struct scan *sc, char open, char close)
{
	int depth = 0;

	while (sc->pos < sc->len) {
		char c = sc->s[sc->pos];

		if (skip_noise(sc))
			continue;
		sc->pos++;
		if (c == open)
			depth++;
		else if (c == close && --depth == 0)
			return true;
	}
	return false;
}

static bool word_eq(const char *w, size_t n, const char *name)
{
	return strlen(name) == n && memcmp(w, name, n) == 0;
}

/* SYSCALL_DEFINE3(name, ...) and COMPAT_SYSCALL_DEFINE3(name, ...) match
 * "name", "sys_name" and "__x64_sys_name". */
static bool syscall_matches(struct scan *sc, const char *w, size_t n,
			    const char *func)
{
	struct scan t = *sc;
	const char *want = func;
	size_t start;

	if (!(n > 14 && (memcmp(w, "SYSCALL_DEFINE", 14) == 0 ||
			 (n > 21 && memcmp(w, "COMPAT_SYSCALL_DEFINE", 21) == 0))))
		return false;
	if (strncmp(want, "__x64_", 6) == 0)
		want += 6;
	if (strncmp(want, "__se_", 5) == 0)
		want += 5;
	if (strncmp(want, "compat_sys_", 11) == 0)
		want += 11;
	else if (strncmp(want, "sys_", 4) == 0)
		want += 4;
	skip_space(&t);
	if (t.pos >= t.len || t.s[t.pos] != '(')
		return false;
	t.pos++;
	skip_space(&t);
	start = t.pos;
	while (t.pos < t.len && is_ident(t.s[t.pos]))
		t.pos++;
	return word_eq(t.s + start, t.pos - start, want);
}

/* After the name: "(...)" then anything but ';' up to '{'.  Sets *body to
 * the '{'. */
static bool is_definition(struct scan *sc, size_t *body)
{
	struct scan t = *sc;

	skip_space(&t);
	if (t.pos >= t.len || t.s[t.pos] != '(')
		return false;
	if (!skip_balanced(&t, '(', ')'))
		return false;
	for (;;) {
		skip_space(&t);
		if (t.pos >= t.len)
			return false;
		switch (t.s[t.pos]) {
		case '{':
			*body = t.pos;
			return true;
		case ';':
		case '=':
		case ',':
		case '}':
		case ')':
			return false;
		case '(':
			if (!skip_balanced(&t, '(', ')'))
				return false;
			break;
		default:
			t.pos++;
		}
	}
}

static size_t line_begin(const char *s, size_t pos)
{
	while (pos > 0 && s[pos - 1] != '\n')
		pos--;
	return pos;
}

/* The return type often sits alone on the line before the name. */
static size_t include_type_line(const char *s, size_t start)
{
	size_t prev_end, prev, last;

	if (start == 0 || (s[start] == ' ' || s[start] == '\t'))
		return start;
	prev_end = start - 1; /* the '\n' */
	prev = line_begin(s, prev_end);
	if (prev == prev_end || s[prev] == '#' || s[prev] == ' ' || s[prev] == '\t')
		return start;
	last = prev_end;
	while (last > prev && isspace((unsigned char)s[last - 1]))
		last--;
	if (last == prev)
		return start;
	switch (s[last - 1]) {
	case ';':
	case '}':
	case '{':
	case ')':
	case '\\':
	case ',':
		return start;
	case '/':
		return start; /* end of a comment */
	}
	return prev;
}

int c_find_function(const char *text, size_t len, const char *func,
		    size_t *ret_start, size_t *ret_end, unsigned *ret_first_line)
{
	struct scan sc = { .s = text, .len = len };
	int depth = 0;

	if (!func || !*func)
		return -EINVAL;
	while (sc.pos < sc.len) {
		char c = text[sc.pos];

		if (skip_noise(&sc))
			continue;
		if (c == '{' || c == '}') {
			depth += c == '{' ? 1 : -1;
			if (depth < 0)
				depth = 0;
			sc.pos++;
			continue;
		}
		if (!is_ident(c) || (sc.pos > 0 && is_ident(text[sc.pos - 1]))) {
			sc.pos++;
			continue;
		}
		size_t w = sc.pos, body, start, end;
		unsigned line = 1;

		while (sc.pos < sc.len && is_ident(text[sc.pos]))
			sc.pos++;
		if (depth != 0)
			continue;
		if (!word_eq(text + w, sc.pos - w, func) &&
		    !syscall_matches(&sc, text + w, sc.pos - w, func))
			continue;
		if (!is_definition(&sc, &body))
			continue;
		sc.pos = body;
		if (!skip_balanced(&sc, '{', '}'))
			return -ENOENT;
		end = sc.pos;
		while (end < len && text[end] != '\n')
			end++;
		if (end < len)
			end++;
		start = include_type_line(text, line_begin(text, w));
		for (size_t i = 0; i < start; i++)
			line += text[i] == '\n';
		*ret_start = start;
		*ret_end = end;
		if (ret_first_line)
			*ret_first_line = line;
		return 0;
	}
	return -ENOENT;
}
