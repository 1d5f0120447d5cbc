/* The "equivalent" judgement of fixcompare.h: two fixes are the same
 * change when, file by file, they remove and add the same C tokens in the
 * same order, up to layout (blanks, line breaks, comments) and up to the
 * names of what each fix itself declares (a new local variable, a new
 * label).
 *
 * Layout: each changed line is cut into tokens (words, literals, every
 * other character on its own) and comments are dropped, so re-indenting
 * or re-wrapping a line changes nothing.  A line a fix only re-indents
 * shows up as the same tokens removed and added at a hunk's edge; those
 * are trimmed.
 *
 * Renames: a word of an added line is the fix's own name when the file
 * before the change does not hold it (or, without that file, no removed
 * or context line of the diff does), it is not a C keyword, and where it
 * first appears it is declared: after a type word or a '*', after goto,
 * or as a label.  Such names become $1, $2, ... in the order they first
 * appear.  A call to a function neither side's file held before (kfree
 * against vfree) is no declaration and keeps its name. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/macro.h"
#include "common/strutil.h"
#include "fixcompare-internal.h"

#define NAMES_MAX 4096 /* renamed words per side; more keep their names */

struct tok {
	char kind; /* '-' or '+' */
	char *text;
	bool line_start;
};

struct toks {
	struct tok *v;
	size_t n, alloc;
};

static void toks_clear(struct toks *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].text);
	free(t->v);
	*t = (struct toks){};
}

static int toks_push(struct toks *t, char kind, const char *p, size_t len, bool line_start)
{
	if (t->n >= FIXCOMPARE_TOKENS_MAX)
		return 0;
	if (t->n == t->alloc) {
		size_t a = t->alloc ? t->alloc * 2 : 64;
		struct tok *nv = realloc(t->v, a * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->alloc = a;
	}
	t->v[t->n].text = strndup(p, len);
	if (!t->v[t->n].text)
		return -ENOMEM;
	t->v[t->n].kind = kind;
	t->v[t->n].line_start = line_start;
	t->n++;
	return 0;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* One changed line; *in_comment carries a block comment across lines of
 * the same kind. */
static int cut_line(struct toks *t, char kind, const char *p, bool *in_comment)
{
	bool first = true;
	int r = 0;

	while (*p && r >= 0) {
		size_t n = 1;

		if (*in_comment) {
			const char *e = strstr(p, "*/");

			*in_comment = !e;
			p = e ? e + 2 : p + strlen(p);
			continue;
		}
		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if (p[0] == '/' && p[1] == '/')
			break;
		if (p[0] == '/' && p[1] == '*') {
			*in_comment = true;
			p += 2;
			continue;
		}
		if (word_char(*p)) {
			while (word_char(p[n]))
				n++;
		} else if (*p == '"' || *p == '\'') {
			while (p[n] && p[n] != p[0])
				n += p[n] == '\\' && p[n + 1] ? 2 : 1;
			n += p[n] ? 1 : 0;
		}
		r = toks_push(t, kind, p, n, first);
		first = false;
		p += n;
	}
	return r;
}

/* The changed tokens of one hunk, minus the tokens removed and added
 * alike at its two ends (a line only re-indented or re-wrapped). */
static int hunk_tokens(const struct udiff_hunk *h, struct toks *out)
{
	_cleanup_(toks_clear) struct toks del = {}, add = {};
	bool cd = false, ca = false;
	size_t pre = 0, suf = 0;
	int r = 0;

	for (size_t i = 0; i < h->n_lines && r >= 0; i++) {
		const struct udiff_line *l = &h->lines[i];

		if (l->kind == '-')
			r = cut_line(&del, '-', l->text, &cd);
		else if (l->kind == '+')
			r = cut_line(&add, '+', l->text, &ca);
	}
	if (r < 0)
		return r;
	while (pre < del.n && pre < add.n && streq(del.v[pre].text, add.v[pre].text))
		pre++;
	while (suf < del.n - pre && suf < add.n - pre &&
	       streq(del.v[del.n - 1 - suf].text, add.v[add.n - 1 - suf].text))
		suf++;
	for (size_t i = pre; i < del.n - suf && r >= 0; i++)
		r = toks_push(out, '-', del.v[i].text, strlen(del.v[i].text), del.v[i].line_start);
	for (size_t i = pre; i < add.n - suf && r >= 0; i++)
		r = toks_push(out, '+', add.v[i].text, strlen(add.v[i].text), add.v[i].line_start);
	return r;
}

static bool is_keyword(const char *w)
{
	static const char *const kw[] = {
		"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
		"else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
		"register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
		"switch", "typedef", "typeof", "union", "unsigned", "void", "volatile", "while",
		"bool", "true", "false", "NULL", NULL
	};

	for (size_t i = 0; kw[i]; i++)
		if (streq(kw[i], w))
			return true;
	return false;
}

/* Words before a name that do not make it a declaration. */
static bool is_statement_word(const char *w)
{
	return streq(w, "return") || streq(w, "sizeof") || streq(w, "case") ||
	       streq(w, "else") || streq(w, "do") || streq(w, "typeof");
}

static bool is_word_tok(const struct tok *t)
{
	return word_char(t->text[0]) && !isdigit((unsigned char)t->text[0]);
}

/* Where token i first appears, is it declared? */
static bool declared_at(const struct toks *t, size_t i)
{
	const struct tok *prev = i > 0 && !t->v[i].line_start ? &t->v[i - 1] : NULL;
	const struct tok *next = i + 1 < t->n && !t->v[i + 1].line_start ? &t->v[i + 1] : NULL;

	if (t->v[i].line_start && next && streq(next->text, ":"))
		return true; /* a label */
	if (!prev)
		return false;
	if (streq(prev->text, "goto"))
		return true;
	if (streq(prev->text, "*")) {
		/* "type *name": skip further stars back to the type word */
		while (i > 0 && !t->v[i].line_start && streq(t->v[i - 1].text, "*"))
			i--;
		prev = i > 0 && !t->v[i].line_start ? &t->v[i - 1] : NULL;
	}
	return prev && is_word_tok(prev) && !is_statement_word(prev->text);
}

struct names {
	char **from;
	size_t n;
};

static void names_clear(struct names *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->from[i]);
	free(m->from);
	*m = (struct names){};
}

static ssize_t names_find(const struct names *m, const char *w)
{
	for (size_t i = 0; i < m->n; i++)
		if (streq(m->from[i], w))
			return (ssize_t)i;
	return -1;
}

static int names_add(struct names *m, const char *w)
{
	char **nv;

	if (m->n >= NAMES_MAX)
		return 0;
	nv = realloc(m->from, (m->n + 1) * sizeof(char *));
	if (!nv)
		return -ENOMEM;
	m->from = nv;
	m->from[m->n] = strdup(w);
	if (!m->from[m->n])
		return -ENOMEM;
	m->n++;
	return 0;
}

/* Does the side already know w: is it a word of known (the file before
 * the change, else the diff's removed and context lines)? */
static bool known_word(const char *known, const char *w)
{
	size_t len = strlen(w);

	for (const char *p = known; p && (p = strstr(p, w)); p += len)
		if ((p == known || !word_char(p[-1])) && !word_char(p[len]))
			return true;
	return false;
}

/* Renames the side's own names and appends one "kind text" line per
 * token to out. */
static int canon_append(const struct toks *t, const char *known, struct names *m, struct buf *out)
{
	int r = 0;

	for (size_t i = 0; i < t->n && r >= 0; i++) {
		const struct tok *x = &t->v[i];
		ssize_t at = -1;

		if (x->kind == '+' && is_word_tok(x) && !is_keyword(x->text)) {
			at = names_find(m, x->text);
			if (at < 0 && !known_word(known, x->text) && declared_at(t, i)) {
				r = names_add(m, x->text);
				at = r >= 0 ? names_find(m, x->text) : -1;
			}
		}
		if (r >= 0 && at >= 0)
			r = buf_printf(out, "%c$%zd\n", x->kind, at + 1);
		else if (r >= 0)
			r = buf_printf(out, "%c%s\n", x->kind, x->text);
	}
	return r;
}

static int cmp_file(const void *a, const void *b, void *ud)
{
	const struct udiff *d = ud;
	const struct udiff_file *f = &d->files[*(const size_t *)a];
	const struct udiff_file *g = &d->files[*(const size_t *)b];
	int c = strcmp(udiff_file_path(f), udiff_file_path(g));

	return c ? c : (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

int fixcompare_canon(const struct udiff *d, char *const *known, char **ret)
{
	_cleanup_(names_clear) struct names m = {};
	_cleanup_free_ size_t *order = calloc(d->n_files ? d->n_files : 1, sizeof(size_t));
	_cleanup_buf_ struct buf out = BUF_INIT(FIXCOMPARE_CANON_MAX);
	int r = 0;

	if (!order)
		return -ENOMEM;
	/* the diff lists files in its own order; the stream sorts them */
	for (size_t i = 0; i < d->n_files; i++)
		order[i] = i;
	qsort_r(order, d->n_files, sizeof(size_t), cmp_file, (void *)d);
	for (size_t i = 0; i < d->n_files && r >= 0; i++) {
		const struct udiff_file *f = &d->files[order[i]];

		r = buf_printf(&out, "@%s\n", udiff_file_path(f));
		for (size_t h = 0; h < f->n_hunks && r >= 0; h++) {
			_cleanup_(toks_clear) struct toks t = {};

			r = hunk_tokens(&f->hunks[h], &t);
			if (r >= 0)
				r = canon_append(&t, known[order[i]], &m, &out);
		}
	}
	if (r < 0)
		return r;
	*ret = buf_steal(&out, NULL);
	return *ret ? 0 : -ENOMEM;
}
