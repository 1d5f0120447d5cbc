/* Comparing two fixes of one bug; see fixcompare.h.
 *
 * The two diffs are usually against different commits (the developers'
 * fix lands weeks after kfix's base), so a hunk's place is taken relative
 * to the start of the function it is in, found in each side's own
 * pre-image: unrelated changes above the function do not move it.  The
 * similarity is a Dice coefficient over the changed lines' tokens, each
 * marked with its side of the diff ("+kfree" is not "-kfree"); comments
 * and punctuation are left out, since they change no behaviour. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/macro.h"
#include "common/strutil.h"
#include "fixcompare-internal.h"
#include "repro/tree.h"

struct place {
	const char *file; /* borrowed from the side's files */
	char *func;	  /* "path:name", or NULL outside any function */
	bool rel;	  /* lo, hi count from the function's first line */
	unsigned lo, hi;
};

struct side {
	struct udiff *d;
	char **files, **funcs, **tokens, **lines;
	size_t n_files, n_funcs, n_tokens, n_lines;
	size_t a_tokens, a_lines;
	struct place *places;
	size_t n_places;
	char **known; /* per file of d: see fixcompare_canon() */
	char *canon;
};

static void side_clear(struct side *s)
{
	strv_free(s->files);
	strv_free(s->funcs);
	for (size_t i = 0; i < s->n_tokens; i++)
		free(s->tokens[i]);
	free(s->tokens);
	for (size_t i = 0; i < s->n_lines; i++)
		free(s->lines[i]);
	free(s->lines);
	for (size_t i = 0; i < s->n_places; i++)
		free(s->places[i].func);
	free(s->places);
	for (size_t i = 0; s->known && i < s->d->n_files; i++)
		free(s->known[i]);
	free(s->known);
	free(s->canon);
	udiff_free(s->d);
}

/* Appends s (taken) to a counted array: tokens and lines are many. */
static int push(char ***v, size_t *n, size_t *alloc, char *s)
{
	if (!s)
		return -ENOMEM;
	if (*n + 2 > *alloc) {
		size_t a = *alloc ? *alloc * 2 : 16;
		char **nv = realloc(*v, a * sizeof(char *));

		if (!nv) {
			free(s);
			return -ENOMEM;
		}
		*v = nv;
		*alloc = a;
	}
	(*v)[(*n)++] = s;
	return 0;
}

/* Files and functions are few: a string list, each once. */
static int add_once(char ***v, size_t *n, const char *s)
{
	int r;

	if (strv_contains(*v, s))
		return 0;
	r = strv_push(v, s);
	if (r >= 0)
		(*n)++;
	return r;
}

static int token_add(struct side *s, char kind, const char *p, size_t len)
{
	char *t;

	if (s->n_tokens >= FIXCOMPARE_TOKENS_MAX)
		return 0;
	t = malloc(len + 2);
	if (!t)
		return -ENOMEM;
	t[0] = kind;
	memcpy(t + 1, p, len);
	t[len + 1] = '\0';
	return push(&s->tokens, &s->n_tokens, &s->a_tokens, t);
}

static bool is_word(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static size_t quoted_len(const char *p)
{
	size_t i = 1;

	while (p[i] && p[i] != p[0])
		i += p[i] == '\\' && p[i + 1] ? 2 : 1;
	return p[i] ? i + 1 : i;
}

/* Words, literals and operators of one changed line. */
static int tokenize(struct side *s, char kind, const char *p)
{
	static const char ops[] = "+-*/%=<>!&|^~?:.";
	int r = 0;

	while (*p && r >= 0) {
		size_t n = 1;

		if (p[0] == '/' && p[1] == '/')
			break;
		if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");

			p = e ? e + 2 : p + strlen(p);
			continue;
		}
		if (is_word(*p)) {
			while (is_word(p[n]))
				n++;
			r = token_add(s, kind, p, n);
		} else if (*p == '"' || *p == '\'') {
			n = quoted_len(p);
			r = token_add(s, kind, p, n);
		} else if (strchr(ops, *p)) {
			while (p[n] && strchr(ops, p[n]) && !(p[n] == '/' && (p[n + 1] == '*' || p[n + 1] == '/')))
				n++;
			r = token_add(s, kind, p, n);
		}
		p += n;
	}
	return r;
}

/* The line with its blanks folded; NULL for lines that say nothing
 * (blank, a lone brace). */
static char *norm_line(char kind, const char *text)
{
	size_t len = strlen(text), k = 1;
	char *o = malloc(len + 2);
	bool blank = false;

	if (!o)
		return NULL;
	o[0] = kind;
	for (const char *p = text; *p; p++) {
		if (isspace((unsigned char)*p)) {
			blank = k > 1;
			continue;
		}
		if (blank)
			o[k++] = ' ';
		blank = false;
		o[k++] = *p;
	}
	o[k] = '\0';
	if (k == 1 || strspn(o + 1, "{};") == k - 1) {
		free(o);
		return strdup("");
	}
	return o;
}

static int line_add(struct side *s, char kind, const char *text)
{
	char *l = norm_line(kind, text);

	if (l && !*l) {
		free(l);
		return 0;
	}
	return push(&s->lines, &s->n_lines, &s->a_lines, l);
}

/* "static int foo(struct x *a)" -> "foo": the last word before '('. */
static char *name_from_section(const char *sec)
{
	const char *paren = sec ? strchr(sec, '(') : NULL, *e, *b;

	if (!paren)
		return NULL;
	e = paren;
	while (e > sec && isspace((unsigned char)e[-1]))
		e--;
	b = e;
	while (b > sec && is_word(b[-1]))
		b--;
	return b < e ? strndup(b, (size_t)(e - b)) : NULL;
}

/* Without the file: the last definition-like line (git's default rule:
 * it starts with a letter or '_') of the context before the first change,
 * else the hunk's section line, which names the definition above the
 * hunk's first line. */
static char *name_from_context(const struct udiff_hunk *h)
{
	const char *cand = NULL;

	for (size_t i = 0; i < h->n_lines && h->lines[i].kind == ' '; i++) {
		const char *t = h->lines[i].text;

		if ((isalpha((unsigned char)t[0]) || t[0] == '_') && strchr(t, '('))
			cand = t;
	}
	return name_from_section(cand ? cand : h->section);
}

static char *func_at(const char *text, size_t len, unsigned line, unsigned *ret_first)
{
	size_t name, start, end, n = 0;
	unsigned first;

	if (!text || c_function_at_line(text, len, line, &name, &start, &end, &first) < 0)
		return NULL;
	while (name + n < len && is_word(text[name + n]))
		n++;
	*ret_first = first;
	return n ? strndup(text + name, n) : NULL;
}

static int func_add(struct side *s, const char *path, const char *name, char **ret_key)
{
	char *key;
	int r;

	if (asprintf(&key, "%s:%s", path, name) < 0)
		return -ENOMEM;
	r = add_once(&s->funcs, &s->n_funcs, key);
	if (r < 0 || !ret_key)
		free(key);
	else
		*ret_key = key;
	return r;
}

/* The old lines a hunk changes: removed lines, and for an insertion the
 * line it follows. */
static int hunk_scan(struct side *s, const struct udiff_hunk *h, unsigned *ret_lo,
		     unsigned *ret_hi)
{
	unsigned old = h->old_start, lo = UINT_MAX, hi = 0;
	int r = 0;

	for (size_t i = 0; i < h->n_lines && r >= 0; i++) {
		const struct udiff_line *l = &h->lines[i];
		unsigned pos = l->kind == '-' ? old : (old > 1 ? old - 1 : 1);

		if (l->kind == ' ') {
			old++;
			continue;
		}
		lo = MIN(lo, pos);
		hi = MAX(hi, pos);
		if (l->kind == '-')
			old++;
		r = tokenize(s, l->kind, l->text);
		if (r >= 0)
			r = line_add(s, l->kind, l->text);
	}
	*ret_lo = lo;
	*ret_hi = hi;
	return r;
}

static int hunk_place(struct side *s, const char *path, const char *text, size_t len,
		      const struct udiff_hunk *h, struct place *p)
{
	_cleanup_free_ char *name = NULL, *name2 = NULL;
	unsigned first = 0, first2 = 0;
	int r;

	r = hunk_scan(s, h, &p->lo, &p->hi);
	if (r < 0 || p->lo == UINT_MAX)
		return r;
	name = func_at(text, len, p->lo, &first);
	if (name) {
		p->rel = true;
		p->lo -= MIN(p->lo, first);
		p->hi -= MIN(p->hi, first);
		/* a hunk that runs into the next function changes it too */
		name2 = func_at(text, len, p->hi + first, &first2);
		if (name2 && !streq(name2, name) && (r = func_add(s, path, name2, NULL)) < 0)
			return r;
	} else if (!text) {
		name = name_from_context(h);
	}
	return name ? func_add(s, path, name, &p->func) : 0;
}

/* Without the file before the change, what the diff shows of it. */
static char *known_from_diff(const struct udiff_file *f)
{
	struct buf b = BUF_INIT(FIXCOMPARE_CANON_MAX);

	for (size_t k = 0; k < f->n_hunks; k++)
		for (size_t i = 0; i < f->hunks[k].n_lines; i++) {
			const struct udiff_line *l = &f->hunks[k].lines[i];

			if (l->kind != '+' && buf_printf(&b, "%s\n", l->text) < 0) {
				buf_free(&b);
				return NULL;
			}
		}
	return buf_steal(&b, NULL);
}

static int side_analyse(const struct fixcompare_side *in, struct side *s, char **ret_error)
{
	size_t len = in->diff_len ? in->diff_len : (in->diff ? strlen(in->diff) : 0);
	int r;

	r = udiff_parse(in->diff ? in->diff : "", len, &s->d, ret_error);
	if (r < 0)
		return r;
	s->places = calloc(s->d->n_hunks ? s->d->n_hunks : 1, sizeof(*s->places));
	s->known = calloc(s->d->n_files ? s->d->n_files : 1, sizeof(char *));
	if (!s->places || !s->known)
		return -ENOMEM;
	for (size_t i = 0; i < s->d->n_files; i++) {
		const struct udiff_file *f = &s->d->files[i];
		const char *path = udiff_file_path(f);
		_cleanup_free_ char *text = NULL;
		size_t tlen = 0;

		const char *file = NULL;

		r = add_once(&s->files, &s->n_files, path);
		if (r < 0)
			return r;
		/* the list's own copy, which the places borrow */
		for (size_t j = 0; !file; j++)
			if (streq(s->files[j], path))
				file = s->files[j];
		if (f->old_path && in->read_old && in->read_old(in->ud, f->old_path, &text, &tlen) < 0)
			text = NULL;
		for (size_t k = 0; k < f->n_hunks; k++) {
			struct place *p = &s->places[s->n_places++];

			p->file = file;
			r = hunk_place(s, path, text, tlen, &f->hunks[k], p);
			if (r < 0)
				return r;
		}
		s->known[i] = text ? TAKE_PTR(text) : known_from_diff(f);
		if (!s->known[i])
			return -ENOMEM;
	}
	return fixcompare_canon(s->d, s->known, &s->canon);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 2 |A n B| / (|A| + |B|) over multisets. */
static double dice(char **a, size_t na, char **b, size_t nb)
{
	size_t i = 0, j = 0, common = 0;

	if (na + nb == 0)
		return 1.0;
	if (na)
		qsort(a, na, sizeof(char *), cmp_str);
	if (nb)
		qsort(b, nb, sizeof(char *), cmp_str);
	while (i < na && j < nb) {
		int c = strcmp(a[i], b[j]);

		if (c == 0) {
			common++;
			i++;
			j++;
		} else if (c < 0) {
			i++;
		} else {
			j++;
		}
	}
	return 2.0 * (double)common / (double)(na + nb);
}

static bool overlap(const struct place *a, const struct place *b)
{
	if (!a->file || !b->file || !streq(a->file, b->file) || a->rel != b->rel)
		return false;
	if (!a->func != !b->func || (a->func && !streq(a->func, b->func)))
		return false;
	return a->lo <= b->hi + FIXCOMPARE_SLACK && b->lo <= a->hi + FIXCOMPARE_SLACK;
}

static json_t *strv_json(char **v, size_t n)
{
	json_t *a = json_array();

	if (n)
		qsort(v, n, sizeof(char *), cmp_str);
	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *sets_json(char **a, size_t na, char **b, size_t nb, size_t *ret_shared)
{
	_cleanup_json_ json_t *shared = json_array(), *ja = strv_json(a, na), *jb = strv_json(b, nb);

	/* both sorted now: the shared ones come out sorted too */
	for (size_t i = 0; shared && i < na; i++)
		for (size_t j = 0; j < nb; j++)
			if (streq(a[i], b[j]) && json_array_append_new(shared, json_string(a[i])) < 0)
				return NULL;
	if (!shared || !ja || !jb)
		return NULL;
	*ret_shared = json_array_size(shared);
	return json_pack("{s:O, s:O, s:O}", "kfix", ja, "developer", jb, "shared", shared);
}

/* How many of a's places meet one of b's. */
static size_t count_overlapping(const struct side *a, const struct side *b)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n_places; i++)
		for (size_t j = 0; j < b->n_places; j++)
			if (overlap(&a->places[i], &b->places[j])) {
				n++;
				break;
			}
	return n;
}

static const char *verdict_of(bool equivalent, double sim, size_t shared_files, size_t files_a, size_t files_b,
			      size_t overlapping, size_t shared_funcs)
{
	if (equivalent)
		return "same";
	if (sim >= 0.8 && overlapping && shared_files == files_a && shared_files == files_b)
		return "same";
	if (overlapping)
		return "same-place";
	if (shared_funcs)
		return "same-function";
	return shared_files ? "same-file" : "different";
}

bool fixcompare_verdict_matches(const char *verdict)
{
	return verdict && (streq(verdict, "same") || streq(verdict, "same-place"));
}

static double round2(double x)
{
	return (double)(long)(x * 100.0 + 0.5) / 100.0;
}

int fixcompare_diffs(const struct fixcompare_side *kfix, const struct fixcompare_side *dev,
		     json_t **ret, char **ret_error)
{
	_cleanup_(side_clear) struct side a = {}, b = {};
	_cleanup_json_ json_t *files = NULL, *funcs = NULL;
	size_t overlapping, shared_files = 0, shared_funcs = 0;
	const char *verdict;
	bool equivalent;
	double sim, lsim;
	json_t *o;
	int r;

	r = side_analyse(kfix, &a, ret_error);
	if (r >= 0)
		r = side_analyse(dev, &b, ret_error);
	if (r < 0)
		return r;
	overlapping = count_overlapping(&b, &a);
	sim = dice(a.tokens, a.n_tokens, b.tokens, b.n_tokens);
	lsim = dice(a.lines, a.n_lines, b.lines, b.n_lines);
	files = sets_json(a.files, a.n_files, b.files, b.n_files, &shared_files);
	funcs = sets_json(a.funcs, a.n_funcs, b.funcs, b.n_funcs, &shared_funcs);
	if (!files || !funcs)
		return -ENOMEM;
	/* the same tokens changed, every hunk of each at a hunk of the other */
	equivalent = streq(a.canon, b.canon) && shared_files == a.n_files &&
		     shared_files == b.n_files && overlapping == b.n_places &&
		     count_overlapping(&a, &b) == a.n_places;
	verdict = verdict_of(equivalent, sim, shared_files, a.n_files, b.n_files, overlapping, shared_funcs);
	o = json_pack("{s:s, s:b, s:b, s:f, s:f, s:O, s:O, s:{s:I, s:I, s:I}}", "verdict", verdict,
		      "matches", fixcompare_verdict_matches(verdict), "equivalent", equivalent,
		      "similarity", round2(sim),
		      "line_similarity", round2(lsim), "files", files, "functions", funcs, "hunks",
		      "kfix", (json_int_t)a.n_places, "developer", (json_int_t)b.n_places,
		      "overlapping", (json_int_t)overlapping);
	if (!o)
		return -ENOMEM;
	*ret = o;
	return 0;
}
