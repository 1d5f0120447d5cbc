/* See explore.h. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "explore.h"
#include "repro/maintainers.h"
#include "repro/tags.h"
#include "repro/tree.h"
#include "repro/vmlinux.h"

#define FILE_MAX (16u * 1024 * 1024)
#define LINE_SHOWN_MAX 300
#define GREP_PATTERN_MAX 256

struct explore {
	struct tree *t;
	const char *rev;
	char *vmlinux;	/* the base kernel's, once built; NULL before */
	const struct tags *tags;	/* the symbol index of the base, when there is one */
};

int explore_new(struct tree *t, const char *rev, struct explore **ret)
{
	struct explore *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->t = t;
	e->rev = rev;
	*ret = e;
	return 0;
}

void explore_free(struct explore *e)
{
	if (!e)
		return;
	free(e->vmlinux);
	free(e);
}

void explore_set_tags(struct explore *e, const struct tags *t)
{
	e->tags = t;
}

int explore_set_vmlinux(struct explore *e, const char *path)
{
	char *p = path ? strdup(path) : NULL;

	if (path && !p)
		return -ENOMEM;
	free(e->vmlinux);
	e->vmlinux = p;
	return 0;
}

/* A path inside the tree: relative, no "." or ".." component, not into
 * .git, printable. */
static const char *path_refusal(const char *p)
{
	if (!p || !*p)
		return "a path is needed";
	if (p[0] == '/')
		return "paths are relative to the top of the tree";
	if (strlen(p) > 4096)
		return "path too long";
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == '\\')
			return "the path holds a control character or a backslash";
	for (const char *s = p; s;) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return "no . or .. in paths: the tools see only the tree";
		if (n == 4 && !strncmp(s, ".git", 4))
			return "the repository's own files are not part of the tree";
		if (n == 0 && e)
			return "empty path component";
		s = e ? e + 1 : NULL;
	}
	return NULL;
}

static int answer_error(char **ret, const char *fmt, ...) _printf_(2, 3);
static int answer_error(char **ret, const char *fmt, ...)
{
	_cleanup_buf_ struct buf b = BUF_INIT(1024);
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (buf_printf(&b, "error: %s", msg) < 0)
		return -ENOMEM;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

static int finish(struct buf *b, char **ret)
{
	if (b->truncated)
		(void)buf_puts(b, "\n[cut: the answer reached its size limit]\n");
	if (!b->data && buf_puts(b, "") < 0)
		return -ENOMEM;
	*ret = buf_steal(b, NULL);
	return *ret ? 0 : -ENOMEM;
}

/* One line for the model: untrusted bytes made printable, long lines cut. */
static void put_line(struct buf *b, const char *l, size_t n)
{
	size_t k = n > LINE_SHOWN_MAX ? LINE_SHOWN_MAX : n;

	for (size_t i = 0; i < k; i++) {
		char c = l[i];

		(void)buf_append(b, (unsigned char)c < 0x20 && c != '\t' ? "?" : &c, 1);
	}
	(void)buf_puts(b, k < n ? " [...]\n" : "\n");
}

static unsigned arg_uint(const json_t *args, const char *key, unsigned dflt)
{
	json_int_t v = json_get_int(args, key, (json_int_t)dflt);

	return v < 0 ? 0 : v > 0x7fffffff ? 0x7fffffff : (unsigned)v;
}

/* --- read_file, list_dir -------------------------------------------------- */

static int tool_read_file(struct explore *e, const json_t *args, char **ret)
{
	const char *path = json_get_str(args, "path"), *why = path_refusal(path);
	_cleanup_free_ char *data = NULL;
	_cleanup_buf_ struct buf b = BUF_INIT(EXPLORE_ANSWER_MAX);
	unsigned start = arg_uint(args, "start", 1), end, line = 1, total = 0;
	size_t len;
	int r;

	if (why)
		return answer_error(ret, "%s", why);
	start = start ? start : 1;
	end = arg_uint(args, "end", start + EXPLORE_READ_LINES_MAX - 1);
	if (end < start)
		return answer_error(ret, "end (%u) is before start (%u)", end, start);
	if (end - start + 1 > EXPLORE_READ_LINES_MAX)
		end = start + EXPLORE_READ_LINES_MAX - 1;
	r = tree_read_file(e->t, e->rev, path, FILE_MAX, &data, &len);
	if (r == -ENOENT)
		return answer_error(ret, "%s: no such file at the base commit", path);
	if (r == -EISDIR)
		return answer_error(ret, "%s is a folder: use list_dir", path);
	if (r == -EFBIG)
		return answer_error(ret, "%s is larger than %u bytes", path, FILE_MAX);
	if (r < 0)
		return r;
	if (memchr(data, '\0', len))
		return answer_error(ret, "%s is a binary file", path);
	for (size_t i = 0; i < len; i++)
		total += data[i] == '\n';
	total += len > 0 && data[len - 1] != '\n';
	(void)buf_printf(&b, "%s, lines %u-%u of %u:\n", path, start, end < total ? end : total,
			 total);
	for (const char *l = data, *stop = data + len; l < stop && line <= end; line++) {
		const char *nl = memchr(l, '\n', (size_t)(stop - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(stop - l);

		if (line >= start) {
			(void)buf_printf(&b, "%6u\t", line);
			put_line(&b, l, n);
		}
		l = nl ? nl + 1 : stop;
	}
	if (start > total)
		(void)buf_printf(&b, "(the file has only %u lines)\n", total);
	return finish(&b, ret);
}

struct dir_list {
	struct buf *b;
	unsigned n;
};

static int on_entry(const char *name, bool is_dir, void *ud)
{
	struct dir_list *d = ud;

	if (d->n++ >= 1000) {
		(void)buf_puts(d->b, "[more entries not shown]\n");
		return 1;
	}
	return buf_printf(d->b, "%s%s\n", name, is_dir ? "/" : "") < 0;
}

static int tool_list_dir(struct explore *e, const json_t *args, char **ret)
{
	const char *path = json_get_str(args, "path") ?: "";
	_cleanup_buf_ struct buf b = BUF_INIT(EXPLORE_ANSWER_MAX);
	struct dir_list d = { .b = &b };
	const char *why = *path ? path_refusal(path) : NULL;
	int r;

	if (why)
		return answer_error(ret, "%s", why);
	r = tree_list_dir(e->t, e->rev, path, on_entry, &d);
	if (r == -ENOENT || r == -ENOTDIR)
		return answer_error(ret, "%s: %s", path, r == -ENOENT ? "no such folder" : "not a folder");
	if (r < 0)
		return r;
	return finish(&b, ret);
}

/* --- grep, find_definition ------------------------------------------------ */

struct hits {
	struct buf *b;
	unsigned n;
};

static int on_hit(const char *path, unsigned line_no, const char *line, size_t len, void *ud)
{
	struct hits *h = ud;

	h->n++;
	(void)buf_printf(h->b, "%s:%u: ", path, line_no);
	put_line(h->b, line, len);
	return h->b->truncated;
}

/* glibc's regcomp copies the pattern's tree for every repetition of a
 * repeated group, and its matcher backtracks on back-references: a
 * pattern from the model could cost kfix gigabytes or hours.  Patterns
 * a developer greps with need none of that: at most 16 repetitions,
 * bounds up to 100, no repetition of a repetition, groups 8 deep, no
 * back-references. */
static const char *regex_refusal(const char *p)
{
	bool has_rep[10] = { false };	/* per group depth: holds a repetition */
	unsigned reps = 0, depth = 0;
	bool after_rep = false;

	for (; *p; p++) {
		bool rep = false;

		if (*p == '\\') {
			if (p[1] >= '1' && p[1] <= '9')
				return "no back-references (\\1 ... \\9) in patterns";
			if (p[1])
				p++;
		} else if (*p == '[') {
			/* a bracket expression: "]" right after "[" or "[^" is literal */
			p += p[1] == '^';
			p += p[1] == ']';
			while (p[1] && p[1] != ']')
				p += p[1] == '[' && (p[2] == ':' || p[2] == '.' || p[2] == '=') &&
				     strchr(p + 3, ']') ? (size_t)(strchr(p + 3, ']') - p) : 1;
			if (!p[1])
				return NULL;	/* regcomp says what is wrong */
			p++;
		} else if (*p == '(') {
			if (++depth >= ARRAY_SIZE(has_rep))
				return "groups nest more than 8 deep";
			has_rep[depth] = false;
		} else if (*p == ')' && depth > 0) {
			/* a group holding a repetition counts as one for what follows */
			rep = has_rep[depth];
			has_rep[--depth] |= rep;
		} else if (*p == '*' || *p == '+' || *p == '?' || *p == '{') {
			if (*p == '{') {
				char *end;
				unsigned long n = strtoul(p + 1, &end, 10);

				if (n > 100 || (*end == ',' && strtoul(end + 1, &end, 10) > 100))
					return "repetition bounds above 100";
				if (*end != '}')
					continue;
				p = end;
			}
			if (after_rep)
				return "a repetition of a repetition (like a++ or (a*)*)";
			if (++reps > 16)
				return "more than 16 repetitions";
			has_rep[depth] = rep = true;
		}
		after_rep = rep;
	}
	return NULL;
}

static int tool_grep(struct explore *e, const json_t *args, char **ret)
{
	const char *pattern = json_get_str(args, "pattern"), *path = json_get_str(args, "path");
	bool regex = json_is_true(json_object_get(args, "regex"));
	_cleanup_buf_ struct buf b = BUF_INIT(EXPLORE_ANSWER_MAX);
	struct hits h = { .b = &b };
	const char *why = path && *path ? path_refusal(path) : NULL, *why_re;
	int r;

	if (!pattern || !*pattern)
		return answer_error(ret, "a pattern is needed");
	if (strlen(pattern) > GREP_PATTERN_MAX)
		return answer_error(ret, "the pattern is longer than %d bytes", GREP_PATTERN_MAX);
	why_re = regex ? regex_refusal(pattern) : NULL;
	if (why_re)
		return answer_error(ret, "%s", why_re);
	if (why)
		return answer_error(ret, "%s", why);
	r = tree_grep(e->t, e->rev, path, pattern, regex ? TREE_GREP_REGEX : 0,
		      EXPLORE_GREP_HITS_MAX, on_hit, &h);
	if (r == -EINVAL)
		return answer_error(ret, "%s", tree_error(e->t));
	if (r < 0)
		return r;
	if (h.n == 0)
		(void)buf_puts(&b, "no match\n");
	else if (h.n >= EXPLORE_GREP_HITS_MAX)
		(void)buf_printf(&b, "[stopped at %u matches: narrow the path or the pattern]\n",
				 EXPLORE_GREP_HITS_MAX);
	return finish(&b, ret);
}

/* Where a definition of symbol may start: a function (or a macro that
 * defines one, SYSCALL_DEFINEn(symbol, ...)), a struct, union or enum, a
 * #define. */
struct def_state {
	struct explore *e;
	const char *sym;
	struct buf *b;
	unsigned found;
	char *last_path;	/* the file looked at last */
};

static int on_def_candidate(const char *path, unsigned line_no, const char *line, size_t len,
			    void *ud)
{
	struct def_state *d = ud;
	_cleanup_free_ char *text = NULL;
	unsigned first = 0;

	(void)line_no;
	(void)line;
	(void)len;
	if (!endswith(path, ".c") && !endswith(path, ".h"))
		return 0;
	/* one answer per file, and one read: grep reports every matching
	 * line of a file, one after the other */
	if (d->last_path && streq(d->last_path, path))
		return 0;
	free(d->last_path);
	if (!(d->last_path = strdup(path)))
		return -1;
	if (tree_read_function(d->e->t, d->e->rev, path, d->sym, &text, &first) < 0)
		return 0;
	d->found++;
	(void)buf_printf(d->b, "%s:%u: definition of %s:\n", path, first, d->sym);
	{
		unsigned at = first, shown = 0;

		for (const char *l = text; *l && shown < EXPLORE_READ_LINES_MAX; at++, shown++) {
			const char *nl = strchr(l, '\n');
			size_t n = nl ? (size_t)(nl - l) : strlen(l);

			(void)buf_printf(d->b, "%6u\t", at);
			put_line(d->b, l, n);
			l = nl ? nl + 1 : l + n;
		}
		if (shown >= EXPLORE_READ_LINES_MAX)
			(void)buf_puts(d->b, "[the rest: read_file]\n");
	}
	return d->found >= 5 || d->b->truncated;
}

static bool ident_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 128)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	return true;
}

/* --- definitions from the index ----------------------------------------------- */

/* Lines from..to of a file at the base, numbered. */
static void put_lines(struct explore *e, struct buf *b, const char *path, unsigned from,
		      unsigned to, bool until_close)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	unsigned at = 1;

	if (tree_read_file(e->t, e->rev, path, FILE_MAX, &data, &len) < 0)
		return;
	for (const char *l = data; *l && at <= to; at++) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);

		if (at >= from) {
			(void)buf_printf(b, "%6u\t", at);
			put_line(b, l, n);
			/* a struct ends at its closing brace, a macro at its
			 * last continuation */
			if (until_close && at > from && n >= 2 && l[0] == '}' && memchr(l, ';', n))
				break;
			if (!until_close && (n == 0 || l[n - 1] != '\\'))
				break;
		}
		l = nl ? nl + 1 : l + n;
	}
}

#define INDEX_HITS_MAX 64
#define INDEX_SHOWN_MAX 8

struct idx_hit {
	char *file;
	unsigned line;
	char kind[16];
	int rank;
};

struct idx_state {
	const char *path;
	bool syscall;		/* the symbol names a syscall's wrapper */
	struct idx_hit hits[INDEX_HITS_MAX];
	size_t n;
};

/* Definitions before uses of the name as a field or a variable, and the
 * x86 kernel (the one syzbot builds) before other architectures. */
static int rank_of(const char *file, const char *kind)
{
	bool other_arch = startswith(file, "arch/") && !startswith(file, "arch/x86/");
	bool primary = streq(kind, "function") || streq(kind, "struct") || streq(kind, "union") ||
		       streq(kind, "enum") || streq(kind, "typedef") || streq(kind, "macro");

	return (primary ? 0 : streq(kind, "member") ? 4 : 2) + other_arch;
}

static int on_tag(const char *file, unsigned line, const char *kind, void *ud)
{
	struct idx_state *d = ud;
	struct idx_hit *h;

	if (d->path && *d->path && !startswith(file, d->path))
		return 0;
	if (d->syscall && !streq(kind, "function"))
		return 0;
	if (d->n >= INDEX_HITS_MAX)
		return 1;
	h = &d->hits[d->n];
	if (!(h->file = strdup(file)))
		return -ENOMEM;
	h->line = line;
	snprintf(h->kind, sizeof(h->kind), "%s", kind);
	h->rank = rank_of(file, kind);
	d->n++;
	return 0;
}

static int cmp_hit(const void *a, const void *b)
{
	const struct idx_hit *x = a, *y = b;

	/* the index's order (by file) within a rank: qsort is not stable */
	return x->rank != y->rank ? x->rank - y->rank : strcmp(x->file, y->file) ?:
	       (int)x->line - (int)y->line;
}

static void show_hit(struct explore *e, struct buf *b, const struct idx_hit *h, const char *sym)
{
	_cleanup_free_ char *text = NULL;
	unsigned first = 0;

	if (streq(h->kind, "member")) {
		(void)buf_printf(b, "%s:%u: field %s:\n", h->file, h->line, sym);
		put_lines(e, b, h->file, h->line, h->line, false);
	} else if (streq(h->kind, "function") &&
		   tree_read_function(e->t, e->rev, h->file, sym, &text, &first) >= 0) {
		unsigned at = first, shown = 0;

		(void)buf_printf(b, "%s:%u: definition of %s:\n", h->file, first, sym);
		for (const char *l = text; *l && shown < EXPLORE_READ_LINES_MAX; at++, shown++) {
			const char *nl = strchr(l, '\n');
			size_t n = nl ? (size_t)(nl - l) : strlen(l);

			(void)buf_printf(b, "%6u\t", at);
			put_line(b, l, n);
			l = nl ? nl + 1 : l + n;
		}
		if (shown >= EXPLORE_READ_LINES_MAX)
			(void)buf_puts(b, "[the rest: read_file]\n");
	} else {
		bool body = streq(h->kind, "struct") || streq(h->kind, "union") ||
			    streq(h->kind, "enum");

		(void)buf_printf(b, "%s:%u: %s %s:\n", h->file, h->line, h->kind, sym);
		put_lines(e, b, h->file, h->line, h->line + (body ? EXPLORE_READ_LINES_MAX : 30), body);
	}
}

static int find_in_index(struct explore *e, const char *sym, const char *name, const char *path,
			 char **ret)
{
	_cleanup_buf_ struct buf b = BUF_INIT(EXPLORE_ANSWER_MAX);
	struct idx_state *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	d->path = path;
	d->syscall = !streq(name, sym);
	r = tags_find(e->tags, name, on_tag, d);
	if (r >= 0) {
		qsort(d->hits, d->n, sizeof(d->hits[0]), cmp_hit);
		for (size_t i = 0; i < d->n && i < INDEX_SHOWN_MAX && !b.truncated; i++)
			show_hit(e, &b, &d->hits[i], sym);
		if (d->n > INDEX_SHOWN_MAX)
			(void)buf_printf(&b, "[%zu more: give a path]\n", d->n - INDEX_SHOWN_MAX);
		if (d->n == 0)
			(void)buf_printf(&b, "no definition of %s found%s%s\n", sym,
					 path ? " under " : "", path ?: "");
	}
	for (size_t i = 0; i < d->n; i++)
		free(d->hits[i].file);
	free(d);
	return r < 0 ? r : finish(&b, ret);
}

static int tool_find_definition(struct explore *e, const json_t *args, char **ret)
{
	const char *sym = json_get_str(args, "symbol"), *path = json_get_str(args, "path");
	_cleanup_buf_ struct buf b = BUF_INIT(EXPLORE_ANSWER_MAX);
	struct def_state d = { .e = e, .b = &b };
	const char *why = path && *path ? path_refusal(path) : NULL, *name;
	char pattern[512];
	int r;

	if (!ident_ok(sym))
		return answer_error(ret, "symbol must be a C identifier");
	if (why)
		return answer_error(ret, "%s", why);
	/* a syscall's wrappers name the SYSCALL_DEFINE that defines it */
	name = c_syscall_name(sym, NULL) ?: sym;
	if (e->tags)
		return find_in_index(e, sym, name, path, ret);
	d.sym = sym;
	snprintf(pattern, sizeof(pattern),
		 "(^|[^A-Za-z0-9_])%s[ \t]*\\(|SYSCALL_DEFINE[0-9]\\(%s,|^(struct|union|enum)[ \t]+%s[ \t]*\\{|"
		 "^#[ \t]*define[ \t]+%s([ \t(]|$)", name, name, name, name);
	r = tree_grep(e->t, e->rev, path, pattern, TREE_GREP_REGEX, 2000, on_def_candidate, &d);
	free(d.last_path);
	if (r < 0 && r != -EINVAL)
		return r;
	{
		/* types and macros of that name too: the lines that start them */
		struct hits h = { .b = &b };

		snprintf(pattern, sizeof(pattern),
			 "^(struct|union|enum)[ \t]+%s[ \t]*\\{|^#[ \t]*define[ \t]+%s([ \t(]|$)|"
			 "^typedef .*[^A-Za-z0-9_]%s;", name, name, name);
		r = tree_grep(e->t, e->rev, path, pattern, TREE_GREP_REGEX, 20, on_hit, &h);
		if (r < 0 && r != -EINVAL)
			return r;
		if (h.n == 0 && d.found == 0)
			(void)buf_printf(&b, "no definition of %s found%s%s\n", sym, path ? " under " : "",
					 path ?: "");
		else if (h.n > 0)
			(void)buf_puts(&b, "(read_file around these lines for the whole definition)\n");
	}
	return finish(&b, ret);
}

/* Uses of a symbol in C sources and headers: the callers to check when
 * a function or a field changes. */
static int on_ref(const char *path, unsigned line_no, const char *line, size_t len, void *ud)
{
	if (!endswith(path, ".c") && !endswith(path, ".h"))
		return 0;
	return on_hit(path, line_no, line, len, ud);
}

static int tool_find_references(struct explore *e, const json_t *args, char **ret)
{
	const char *sym = json_get_str(args, "symbol"), *path = json_get_str(args, "path");
	_cleanup_buf_ struct buf b = BUF_INIT(EXPLORE_ANSWER_MAX);
	struct hits h = { .b = &b };
	const char *why = path && *path ? path_refusal(path) : NULL;
	char pattern[512];
	int r;

	if (!ident_ok(sym))
		return answer_error(ret, "symbol must be a C identifier");
	if (why)
		return answer_error(ret, "%s", why);
	snprintf(pattern, sizeof(pattern), "(^|[^A-Za-z0-9_])%s([^A-Za-z0-9_]|$)",
		 c_syscall_name(sym, NULL) ?: sym);
	r = tree_grep(e->t, e->rev, path, pattern, TREE_GREP_REGEX, EXPLORE_GREP_HITS_MAX,
		      on_ref, &h);
	if (r < 0 && r != -EINVAL)
		return r;
	if (h.n == 0)
		(void)buf_printf(&b, "no reference to %s found\n", sym);
	else if (h.n >= EXPLORE_GREP_HITS_MAX)
		(void)buf_printf(&b, "[stopped at %u references: give a path]\n",
				 EXPLORE_GREP_HITS_MAX);
	return finish(&b, ret);
}

/* --- history ---------------------------------------------------------------- */

static int on_commit(const struct tree_commit_info *c, void *ud)
{
	struct buf *b = ud;
	char day[16] = "";
	time_t t = (time_t)c->author_time;
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	(void)buf_printf(b, "%.12s %s (%s, %s)\n", c->oid, c->subject ?: "", c->author_name ?: "",
			 day);
	return b->truncated;
}

static int tool_git_log(struct explore *e, const json_t *args, char **ret)
{
	const char *path = json_get_str(args, "path");
	_cleanup_buf_ struct buf b = BUF_INIT(EXPLORE_ANSWER_MAX);
	const char *paths[2] = { path, NULL };
	unsigned n = arg_uint(args, "max", 10);
	struct tree_log_opts o = { .from = e->rev, .paths = path && *path ? paths : NULL,
				   .max_results = n == 0 || n > EXPLORE_LOG_MAX ? EXPLORE_LOG_MAX : n,
				   .max_walk = 20000 };
	const char *why = path && *path ? path_refusal(path) : NULL;
	int r;

	if (why)
		return answer_error(ret, "%s", why);
	r = tree_log(e->t, &o, on_commit, &b);
	if (r < 0)
		return r;
	if (r == 0)
		(void)buf_puts(&b, "no commit\n");
	return finish(&b, ret);
}

static int on_blame(unsigned final_line, const char *commit, const char *orig_path,
		    unsigned orig_line, void *ud)
{
	struct buf *b = ud;

	(void)orig_line;
	return buf_printf(b, "%6u %.12s %s\n", final_line, commit, orig_path) < 0;
}

static int tool_git_blame(struct explore *e, const json_t *args, char **ret)
{
	const char *path = json_get_str(args, "path"), *why = path_refusal(path);
	_cleanup_buf_ struct buf b = BUF_INIT(EXPLORE_ANSWER_MAX);
	unsigned start = arg_uint(args, "start", 1), end;
	int r;

	if (why)
		return answer_error(ret, "%s", why);
	start = start ? start : 1;
	end = arg_uint(args, "end", start + 49);
	if (end < start)
		return answer_error(ret, "end is before start");
	if (end - start + 1 > EXPLORE_READ_LINES_MAX)
		end = start + EXPLORE_READ_LINES_MAX - 1;
	r = tree_blame_lines(e->t, e->rev, path, start, end, on_blame, &b);
	if (r == -ENOENT)
		return answer_error(ret, "%s: no such file or line", path);
	if (r < 0)
		return answer_error(ret, "cannot blame %s: %s", path, tree_error(e->t));
	return finish(&b, ret);
}

static bool hex_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 7 || n > 40)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static int tool_git_show(struct explore *e, const json_t *args, char **ret)
{
	const char *commit = json_get_str(args, "commit");
	_cleanup_free_ char *diff = NULL;
	_cleanup_buf_ struct buf b = BUF_INIT(EXPLORE_ANSWER_MAX);
	char oid[TREE_OID_HEX];
	bool cut = false;
	int r;

	if (!hex_ok(commit))
		return answer_error(ret, "commit must be 7 to 40 lower-case hex digits");
	if (tree_resolve(e->t, commit, oid) < 0)
		return answer_error(ret, "no commit %s", commit);
	/* only history the base contains: nothing from the future */
	if (tree_is_ancestor(e->t, oid, e->rev) != 1)
		return answer_error(ret, "%s is not in the base commit's history", commit);
	r = tree_diff_commits(e->t, NULL, oid, EXPLORE_ANSWER_MAX - 1024, &diff, &cut);
	if (r < 0)
		return answer_error(ret, "cannot show %s: %s", commit, tree_error(e->t));
	(void)buf_printf(&b, "commit %s\n", oid);
	(void)tree_commit_show(e->t, oid, on_commit, &b);
	(void)buf_printf(&b, "\n%s%s", diff ?: "", cut ? "\n[the diff is cut]\n" : "");
	return finish(&b, ret);
}

/* --- the table --------------------------------------------------------------- */

/* --- the built kernel ---------------------------------------------------------- */

static int kernel_answer(int r, char *text, const char *what, char **ret)
{
	if (r == -ENOENT)
		return answer_error(ret, "the built kernel has no %s", what);
	if (r == -ENOEXEC)
		return answer_error(ret, "the built kernel has no debug information");
	if (r < 0 && r != -ENOMEM)
		return answer_error(ret, "cannot read the built kernel: %s", strerror(-r));
	if (r < 0)
		return r;
	*ret = text;
	return 0;
}

static int tool_struct_layout(struct explore *e, const json_t *args, char **ret)
{
	const char *type = json_get_str(args, "type");
	const char *name = type && startswith(type, "struct ") ? type + 7 :
			   type && startswith(type, "union ") ? type + 6 : type;
	char *text = NULL;
	int r;

	if (!ident_ok(name))
		return answer_error(ret, "type must be a struct or union tag, like \"struct sock\"");
	if (!e->vmlinux)
		return answer_error(ret, "no kernel has been built yet");
	r = vmlinux_struct_layout(e->vmlinux, type, EXPLORE_ANSWER_MAX, &text);
	return kernel_answer(r, text, type, ret);
}

static int tool_symbolize(struct explore *e, const json_t *args, char **ret)
{
	const char *a = json_get_str(args, "address");
	char *end = NULL, *text = NULL;
	unsigned long long addr;
	int r;

	if (!a || strlen(a) > 20)
		return answer_error(ret, "address must be hex, like ffffffff81234567");
	errno = 0;
	addr = strtoull(a, &end, 16);
	if (errno || end == a || *end)
		return answer_error(ret, "address must be hex, like ffffffff81234567");
	if (!e->vmlinux)
		return answer_error(ret, "no kernel has been built yet");
	r = vmlinux_symbolize(e->vmlinux, addr, EXPLORE_ANSWER_MAX, &text);
	return kernel_answer(r, text, "function at that address", ret);
}

static int tool_disassemble(struct explore *e, const json_t *args, char **ret)
{
	const char *fn = json_get_str(args, "function");
	char *text = NULL;
	int r;

	if (!ident_ok(fn))
		return answer_error(ret, "function must be a C identifier");
	if (!e->vmlinux)
		return answer_error(ret, "no kernel has been built yet");
	r = vmlinux_disassemble(e->vmlinux, fn, EXPLORE_ANSWER_MAX, &text);
	return kernel_answer(r, text, "function of that name", ret);
}

/* --- maintainers ------------------------------------------------------------ */

/* F: lines shown per section: the networking section alone has hundreds. */
#define MAINT_FILES_SHOWN 12

static void put_section(struct buf *b, const struct maint_section *s)
{
	unsigned files = 0;

	(void)buf_printf(b, "%s\n", s->title);
	for (size_t i = 0; s->tags && s->tags[i]; i++) {
		char tag = s->tags[i][0];

		/* keywords and name regexes say how get_maintainer matches,
		 * not who to ask */
		if (tag == 'K' || tag == 'N' || (tag == 'F' && ++files > MAINT_FILES_SHOWN))
			continue;
		put_line(b, s->tags[i], strlen(s->tags[i]));
	}
	if (files > MAINT_FILES_SHOWN)
		(void)buf_printf(b, "[%u more F: lines]\n", files - MAINT_FILES_SHOWN);
	(void)buf_puts(b, "\n");
}

static int tool_maintainers(struct explore *e, const json_t *args, char **ret)
{
	const char *path = json_get_str(args, "path"), *why = path_refusal(path);
	_cleanup_buf_ struct buf b = BUF_INIT(EXPLORE_ANSWER_MAX);
	_cleanup_(maintainers_freep) struct maintainers *m = NULL;
	_cleanup_free_ char *data = NULL, *folder = NULL;
	unsigned n = 0;
	size_t len;
	int r;

	if (why)
		return answer_error(ret, "%s", why);
	/* a folder asked for without its slash is still the folder */
	if (!endswith(path, "/") && asprintf(&folder, "%s/", path) < 0)
		return -ENOMEM;
	r = tree_read_file(e->t, e->rev, "MAINTAINERS", MAINTAINERS_FILE_MAX, &data, &len);
	if (r == -ENOENT)
		return answer_error(ret, "the tree has no MAINTAINERS file at the base commit");
	if (r < 0)
		return r;
	r = maintainers_parse(data, len, &m);
	if (r < 0)
		return r;
	for (size_t i = 0; i < m->n && !b.truncated; i++)
		if (maintainers_covers(&m->s[i], path) ||
		    (folder && maintainers_covers(&m->s[i], folder))) {
			n++;
			put_section(&b, &m->s[i]);
		}
	if (!n)
		(void)buf_printf(&b, "no MAINTAINERS section covers %s\n", path);
	return finish(&b, ret);
}

struct tool {
	const char *name, *description, *params;
	int (*fn)(struct explore *e, const json_t *args, char **ret);
};

static const struct tool tools[] = {
	{ "read_file", "Read lines start..end (at most 200) of a file of the kernel tree at the base "
		       "commit, with line numbers.",
	  "{\"path\": [\"string\", \"path from the top of the tree\"], \"start\": [\"integer\", "
	  "\"first line, 1-based\"], \"end\": [\"integer\", \"last line\"]}", tool_read_file },
	{ "list_dir", "List a folder of the kernel tree (\"\" for the top); folders end in /.",
	  "{\"path\": [\"string\", \"folder\"]}", tool_list_dir },
	{ "grep", "Search the tree for a fixed string (or an extended regular expression with "
		  "regex=true), optionally under a path; answers file:line: text, at most 100.",
	  "{\"pattern\": [\"string\", \"what to find\"], \"path\": [\"string\", \"folder or file to "
	  "search\"], \"regex\": [\"boolean\", \"pattern is a POSIX extended regex\"]}", tool_grep },
	{ "find_definition", "Where a function (also one a macro defines, such as a SYSCALL_DEFINE "
			     "syscall), struct, union, enum or macro is defined, with its text.",
	  "{\"symbol\": [\"string\", \"C identifier, or a syscall wrapper like __x64_sys_read\"], "
	  "\"path\": [\"string\", \"optional folder to look in\"]}", tool_find_definition },
	{ "find_references", "Every line of a .c or .h file that uses a symbol (callers of a "
			     "function, users of a field or macro), as file:line: text, at most 100.",
	  "{\"symbol\": [\"string\", \"C identifier\"], \"path\": [\"string\", \"optional "
	  "folder to look in\"]}", tool_find_references },
	{ "struct_layout", "Offsets and sizes of a struct's or union's members in the built base "
			   "kernel (from its DWARF, like pahole), holes included.",
	  "{\"type\": [\"string\", \"struct or union tag, like struct sock\"]}", tool_struct_layout },
	{ "symbolize", "The function, file:line and inlined frames of an address of the built base "
		       "kernel.",
	  "{\"address\": [\"string\", \"hex, like ffffffff81234567\"]}", tool_symbolize },
	{ "disassemble", "The machine code of a function of the built base kernel (objdump).",
	  "{\"function\": [\"string\", \"C identifier\"]}", tool_disassemble },
	{ "git_log", "The latest commits of the base's history, optionally only those touching a "
		     "path: id, subject, author, date.",
	  "{\"path\": [\"string\", \"file or folder\"], \"max\": [\"integer\", \"at most 30\"]}",
	  tool_git_log },
	{ "git_blame", "Which commit last changed each of lines start..end of a file.",
	  "{\"path\": [\"string\", \"file\"], \"start\": [\"integer\", \"first line\"], \"end\": "
	  "[\"integer\", \"last line\"]}", tool_git_blame },
	{ "maintainers", "The MAINTAINERS sections that cover a file or folder (get_maintainer.pl's "
			 "rules): maintainers, reviewers, list, status, tree, and the files each "
			 "section holds.",
	  "{\"path\": [\"string\", \"file or folder from the top of the tree\"]}",
	  tool_maintainers },
	{ "git_show", "A commit of the base's history: its subject and its diff.",
	  "{\"commit\": [\"string\", \"7 to 40 hex digits\"]}", tool_git_show },
};

json_t *explore_tool_defs(void)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < ARRAY_SIZE(tools); i++) {
		json_t *spec = json_loads(tools[i].params, 0, NULL), *props = json_object(), *v;
		const char *key;

		json_object_foreach(spec, key, v)
			json_object_set_new(props, key, json_pack("{s:s, s:s}", "type",
				json_string_value(json_array_get(v, 0)), "description",
				json_string_value(json_array_get(v, 1))));
		json_decref(spec);
		json_array_append_new(arr, json_pack("{s:s, s:s, s:{s:s, s:o}}", "name", tools[i].name,
			"description", tools[i].description, "parameters", "type", "object",
			"properties", props));
	}
	return arr;
}

int explore_call(struct explore *e, const char *name, const json_t *args, char **ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
		if (name && streq(name, tools[i].name)) {
			if (args && !json_is_object(args))
				return answer_error(ret, "the arguments must be an object");
			return tools[i].fn(e, args, ret);
		}
	return -ENOENT;
}
