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

/* The arch entry points and the SYSCALL_DEFINE wrappers the kernel
 * generates around a syscall body (arch/x86/include/asm/syscall_wrapper.h,
 * arch/arm64/..., include/linux/syscalls.h): a crash frame names one of
 * them, the tree defines SYSCALL_DEFINEn(name, ...). */
static const char *const syscall_arch_prefixes[] = {
	"__x64_", "__ia32_", "__x32_", "__arm64_", "__riscv_", "__s390x_", "__s390_",
	"__powerpc_",
};

const char *c_syscall_name(const char *sym, bool *ret_compat)
{
	const char *p = sym, *q;

	for (size_t i = 0; i < sizeof(syscall_arch_prefixes) / sizeof(*syscall_arch_prefixes); i++)
		if (strncmp(p, syscall_arch_prefixes[i], strlen(syscall_arch_prefixes[i])) == 0) {
			p += strlen(syscall_arch_prefixes[i]);
			break;
		}
	if (strncmp(p, "__se_", 5) == 0 || strncmp(p, "__do_", 5) == 0)
		p += 5;
	if (strncmp(p, "compat_sys_", 11) == 0) {
		q = p + 11;
		if (ret_compat)
			*ret_compat = true;
	} else if (strncmp(p, "sys_", 4) == 0) {
		q = p + 4;
		if (ret_compat)
			*ret_compat = false;
	} else
		return NULL;
	return *q ? q : NULL;
}

/* SYSCALL_DEFINE3(name, ...) and COMPAT_SYSCALL_DEFINE3(name, ...) match
 * "name", "sys_name" and every wrapper c_syscall_name() knows. */
static bool syscall_matches(struct scan *sc, const char *w, size_t n,
			    const char *func)
{
	struct scan t = *sc;
	const char *want = c_syscall_name(func, NULL) ?: func;
	size_t start;

	if (!(n > 14 && (memcmp(w, "SYSCALL_DEFINE", 14) == 0 ||
			 (n > 21 && memcmp(w, "COMPAT_SYSCALL_DEFINE", 21) == 0))))
		return false;
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

/* The definition ends with the line of its closing brace. */
static size_t line_end_after(const char *text, size_t len, size_t pos)
{
	while (pos < len && text[pos] != '\n')
		pos++;
	return pos < len ? pos + 1 : pos;
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
		end = line_end_after(text, len, sc.pos);
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

/* Line of pos, 1-based. */
static unsigned line_of(const char *s, size_t pos)
{
	unsigned line = 1;

	for (size_t i = 0; i < pos; i++)
		line += s[i] == '\n';
	return line;
}

int c_function_at_line(const char *text, size_t len, unsigned line, size_t *ret_name,
		       size_t *ret_start, size_t *ret_end, unsigned *ret_first_line)
{
	struct scan sc = { .s = text, .len = len };
	size_t at;
	unsigned cur = 1;

	if (line == 0)
		return -EINVAL;
	for (at = 0; at < len && cur < line; at++)
		cur += text[at] == '\n';
	if (cur < line)
		return -ENOENT;
	/* Every definition at depth 0 is a candidate: macros that define
	 * functions (SYSCALL_DEFINE3, BPF_CALL_2, DEFINE_...) look like one. */
	while (sc.pos < sc.len) {
		char c = text[sc.pos];
		size_t w, body, start, end;

		if (skip_noise(&sc))
			continue;
		if (c == '{') {
			if (!skip_balanced(&sc, '{', '}'))
				return -ENOENT;
			continue;
		}
		if (!is_ident(c) || (sc.pos > 0 && is_ident(text[sc.pos - 1]))) {
			sc.pos++;
			continue;
		}
		w = sc.pos;
		while (sc.pos < sc.len && is_ident(text[sc.pos]))
			sc.pos++;
		if (!is_definition(&sc, &body))
			continue;
		sc.pos = body;
		if (!skip_balanced(&sc, '{', '}'))
			return -ENOENT;
		if (sc.pos <= at)
			continue;
		start = include_type_line(text, line_begin(text, w));
		if (start > at)
			return -ENOENT;
		end = line_end_after(text, len, sc.pos);
		*ret_name = w;
		*ret_start = start;
		*ret_end = end;
		if (ret_first_line)
			*ret_first_line = line_of(text, start);
		return 0;
	}
	return -ENOENT;
}
