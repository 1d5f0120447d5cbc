/* Unified diffs: a strict reader (untrusted text, bounded) and a small
 * applier.  libgit2 writes every diff kfix produces, but its reader
 * (git_diff_from_buffer) refuses what people and syzbot's #syz test mails
 * send: plain "diff -u" without "diff --git" lines, a time after a path,
 * paths without a/ and b/, "/dev/null" without a mode line; and its
 * applier takes a hunk only at its stated line, where this one looks
 * both ways within a window.  tests/unit/test-udiff.c checks this reader
 * and applier against libgit2 on the diffs libgit2 writes. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "udiff-internal.h"

static void hunk_clear(struct udiff_hunk *h)
{
	for (size_t i = 0; i < h->n_lines; i++)
		free(h->lines[i].text);
	free(h->lines);
	free(h->section);
}

void udiff_free(struct udiff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_files; i++) {
		struct udiff_file *f = &d->files[i];

		for (size_t j = 0; j < f->n_hunks; j++)
			hunk_clear(&f->hunks[j]);
		free(f->hunks);
		free(f->old_path);
		free(f->new_path);
		free(f->header);
	}
	free(d->files);
	free(d);
}

const char *udiff_file_path(const struct udiff_file *f)
{
	return f->new_path ?: f->old_path ?: "";
}

/* "a/x/y.c" -> "x/y.c"; "/dev/null" -> NULL.  Paths are kept verbatim
 * otherwise: the gates judge them. */
static int parse_path(const char *s, size_t n, char **ret)
{
	const char *tab = memchr(s, '\t', n);

	/* "diff -u" puts the file's time after a tab */
	if (tab)
		n = (size_t)(tab - s);
	while (n > 0 && (s[n - 1] == '\t' || s[n - 1] == ' '))
		n--;
	if (n == 9 && strncmp(s, "/dev/null", 9) == 0) {
		*ret = NULL;
		return 0;
	}
	if (n > 2 && (s[0] == 'a' || s[0] == 'b') && s[1] == '/') {
		s += 2;
		n -= 2;
	}
	*ret = strndup(s, n);
	return *ret ? 0 : -ENOMEM;
}

static int parse_range(const char *s, unsigned *start, unsigned *len, const char **end)
{
	char *e;
	unsigned long a, b = 1;

	a = strtoul(s, &e, 10);
	if (e == s || a > 100000000)
		return -EBADMSG;
	if (*e == ',') {
		s = e + 1;
		b = strtoul(s, &e, 10);
		if (e == s || b > 100000000)
			return -EBADMSG;
	}
	*start = (unsigned)a;
	*len = (unsigned)b;
	*end = e;
	return 0;
}

static int parse_hunk_header(const char *line, struct udiff_hunk *h)
{
	const char *p = startswith(line, "@@ -"), *sec;

	if (!p || parse_range(p, &h->old_start, &h->old_len, &p) < 0)
		return -EBADMSG;
	if (!(p = startswith(p, " +")) || parse_range(p, &h->new_start, &h->new_len, &p) < 0)
		return -EBADMSG;
	if (!(p = startswith(p, " @@")))
		return -EBADMSG;
	sec = *p == ' ' ? p + 1 : p;
	h->section = strdup(sec);
	return h->section ? 0 : -ENOMEM;
}

struct parser {
	struct udiff *d;
	struct udiff_file *f;
	struct udiff_hunk *h;
	unsigned old_left, new_left;
	struct buf header;
	unsigned lineno;
};

static int add_file(struct parser *p)
{
	struct udiff *d = p->d;
	struct udiff_file *nf;

	if (d->n_files >= UDIFF_MAX_FILES)
		return -E2BIG;
	nf = realloc(d->files, (d->n_files + 1) * sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	d->files = nf;
	p->f = &nf[d->n_files++];
	memset(p->f, 0, sizeof(*p->f));
	p->h = NULL;
	buf_reset(&p->header);
	return 0;
}

static int add_hunk(struct parser *p, const char *line)
{
	struct udiff_file *f = p->f;
	struct udiff_hunk *nh;
	int r;

	if (p->d->n_hunks >= UDIFF_MAX_HUNKS)
		return -E2BIG;
	nh = realloc(f->hunks, (f->n_hunks + 1) * sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	f->hunks = nh;
	p->h = &nh[f->n_hunks++];
	memset(p->h, 0, sizeof(*p->h));
	p->d->n_hunks++;
	r = parse_hunk_header(line, p->h);
	if (r < 0)
		return r;
	p->old_left = p->h->old_len;
	p->new_left = p->h->new_len;
	if (!f->header) {
		f->header = strdup(p->header.data ?: "");
		if (!f->header)
			return -ENOMEM;
	}
	return 0;
}

static int add_line(struct parser *p, char kind, const char *text)
{
	struct udiff_hunk *h = p->h;
	struct udiff_line *nl;

	if ((kind != '+' && p->old_left == 0) || (kind != '-' && p->new_left == 0))
		return -EBADMSG;
	if (kind != '+')
		p->old_left--;
	if (kind != '-')
		p->new_left--;
	nl = realloc(h->lines, (h->n_lines + 1) * sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	h->lines = nl;
	nl[h->n_lines].kind = kind;
	nl[h->n_lines].text = strdup(text);
	if (!nl[h->n_lines].text)
		return -ENOMEM;
	h->n_lines++;
	return 0;
}

static int header_line(struct parser *p, const char *line)
{
	const char *v;
	int r = 0;

	if (startswith(line, "diff --git ") ||
	    /* plain "diff -u" output: each file starts at its "--- " line */
	    (startswith(line, "--- ") && (!p->f || p->f->n_hunks > 0))) {
		r = add_file(p);
		if (r < 0)
			return r;
	} else if (!p->f)
		return 0; /* preamble: mail headers, commit message */
	if (p->h && (p->old_left || p->new_left))
		return -EBADMSG;
	p->h = NULL;
	if ((v = startswith(line, "--- ")))
		r = (free(p->f->old_path), parse_path(v, strlen(v), &p->f->old_path));
	else if ((v = startswith(line, "+++ ")))
		r = (free(p->f->new_path), parse_path(v, strlen(v), &p->f->new_path));
	else if (startswith(line, "Binary files ") || startswith(line, "GIT binary patch"))
		p->f->binary = true;
	else if ((v = startswith(line, "new mode ")) || (v = startswith(line, "old mode ")))
		p->f->mode_change = true;
	else if ((v = startswith(line, "new file mode ")) || (v = startswith(line, "deleted file mode "))) {
		if (startswith(v, "120"))
			p->f->symlink = true;
	} else if ((v = startswith(line, "diff --git a/"))) {
		/* paths for hunk-less diffs (mode changes, binaries) */
		const char *sp = strstr(v, " b/");

		if (sp && !p->f->old_path && !(p->f->old_path = strndup(v, (size_t)(sp - v))))
			return -ENOMEM;
		if (sp && !p->f->new_path && !(p->f->new_path = strdup(sp + 3)))
			return -ENOMEM;
	}
	if (r < 0)
		return r;
	r = buf_puts(&p->header, line);
	return r < 0 ? r : buf_puts(&p->header, "\n");
}

static int parse_line(struct parser *p, const char *line)
{
	if (startswith(line, "@@ ")) {
		if (!p->f || (p->h && (p->old_left || p->new_left)))
			return -EBADMSG;
		return add_hunk(p, line);
	}
	if (p->h && (p->old_left || p->new_left)) {
		if (line[0] == '+' || line[0] == '-' || line[0] == ' ')
			return add_line(p, line[0], line + 1);
		if (line[0] == '\0')
			return add_line(p, ' ', ""); /* stripped trailing space */
		if (line[0] == '\\')
			return 0; /* "\ No newline at end of file" */
		return -EBADMSG;
	}
	if (line[0] == '\\')
		return 0;
	return header_line(p, line);
}

int udiff_parse(const char *text, size_t len, struct udiff **ret, char **ret_error)
{
	_cleanup_(udiff_freep) struct udiff *d = calloc(1, sizeof(*d));
	_cleanup_free_ char *copy = NULL;
	_cleanup_buf_ struct buf hdr = BUF_INIT(64 * 1024);
	struct parser p = { .d = d };
	char *line, *next;
	int r;

	if (!d)
		return -ENOMEM;
	if (len > UDIFF_MAX) {
		*ret_error = strdup_printf("patch larger than %u bytes", UDIFF_MAX);
		return -E2BIG;
	}
	copy = strndup(text, len);
	if (!copy)
		return -ENOMEM;
	p.header = hdr;
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!next && !*line)
			break;
		p.lineno++;
		r = parse_line(&p, line);
		if (r < 0) {
			buf_free(&p.header);
			*ret_error = strdup_printf("patch line %u: %s", p.lineno,
						   r == -E2BIG ? "too many files or hunks" : "malformed");
			return r;
		}
	}
	buf_free(&p.header);
	if (p.h && (p.old_left || p.new_left)) {
		*ret_error = strdup_printf("patch ends inside a hunk");
		return -EBADMSG;
	}
	if (d->n_files == 0) {
		*ret_error = strdup_printf("no \"diff --git\" section in the patch");
		return -EBADMSG;
	}
	*ret = TAKE_PTR(d);
	return 0;
}

/* Lines of text as pointers into a copy (NUL-separated). */
static int split_lines(char *s, char ***ret, size_t *ret_n)
{
	size_t n = 0, cap = 0;
	char **v = NULL;

	while (*s) {
		char *nl = strchr(s, '\n');

		if (n == cap) {
			char **nv = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof(*v));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = s;
		if (!nl)
			break;
		*nl = '\0';
		s = nl + 1;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static bool hunk_matches(const struct udiff_hunk *h, char **lines, size_t n, size_t at)
{
	size_t k = at;

	/* an insertion may go after the last line, not beyond it */
	if (at > n)
		return false;
	for (size_t i = 0; i < h->n_lines; i++) {
		if (h->lines[i].kind == '+')
			continue;
		if (k >= n || !streq(lines[k], h->lines[i].text))
			return false;
		k++;
	}
	return true;
}

int udiff_apply_file(const struct udiff_file *f, const char *old, char **ret_new)
{
	_cleanup_free_ char *copy = strdup(old ?: "");
	_cleanup_free_ char **lines = NULL;
	_cleanup_buf_ struct buf out = BUF_INIT(64 * 1024 * 1024);
	size_t n = 0, pos = 0;
	int r;

	if (!copy)
		return -ENOMEM;
	r = split_lines(copy, &lines, &n);
	if (r < 0)
		return r;
	for (size_t j = 0; j < f->n_hunks; j++) {
		const struct udiff_hunk *h = &f->hunks[j];
		size_t want = h->old_start > 0 ? h->old_start - 1 : 0, at = SIZE_MAX;

		if (h->old_len == 0 && h->old_start > 0)
			want = h->old_start; /* pure insertion after line old_start */
		for (size_t off = 0; off <= 50 && at == SIZE_MAX; off++) {
			if (want + off >= pos && hunk_matches(h, lines, n, want + off))
				at = want + off;
			else if (off && want >= off && want - off >= pos &&
				 hunk_matches(h, lines, n, want - off))
				at = want - off;
		}
		if (at == SIZE_MAX)
			return -ESRCH;
		for (; pos < at; pos++)
			if ((r = buf_printf(&out, "%s\n", lines[pos])) < 0)
				return r;
		for (size_t i = 0; i < h->n_lines; i++) {
			if (h->lines[i].kind != '-' &&
			    (r = buf_printf(&out, "%s\n", h->lines[i].text)) < 0)
				return r;
			if (h->lines[i].kind != '+')
				pos++;
		}
	}
	for (; pos < n; pos++)
		if ((r = buf_printf(&out, "%s\n", lines[pos])) < 0)
			return r;
	*ret_new = buf_steal(&out, NULL);
	return *ret_new ? 0 : -ENOMEM;
}

/* shift: how much earlier the hunk starts in the new file once the
 * dropped hunks before it are gone. */
static int format_hunk(struct buf *b, const struct udiff_hunk *h, long shift)
{
	int r;

	r = buf_printf(b, "@@ -%u,%u +%ld,%u @@%s%s\n", h->old_start, h->old_len,
		       (long)h->new_start - shift, h->new_len,
		       *h->section ? " " : "", h->section);
	for (size_t i = 0; r >= 0 && i < h->n_lines; i++)
		r = buf_printf(b, "%c%s\n", h->lines[i].kind, h->lines[i].text);
	return r;
}

int udiff_format(const struct udiff *d, const bool *keep, char **ret)
{
	_cleanup_buf_ struct buf b = BUF_INIT(UDIFF_MAX);
	size_t idx = 0;
	int r;

	for (size_t i = 0; i < d->n_files; i++) {
		const struct udiff_file *f = &d->files[i];
		bool any = false;
		long shift = 0;

		for (size_t j = 0; j < f->n_hunks; j++)
			any |= keep[idx + j];
		if (any && (r = buf_puts(&b, f->header ?: "")) < 0)
			return r;
		for (size_t j = 0; j < f->n_hunks; j++, idx++) {
			const struct udiff_hunk *h = &f->hunks[j];

			if (!keep[idx]) {
				shift += (long)h->new_len - (long)h->old_len;
				continue;
			}
			r = format_hunk(&b, h, shift);
			if (r < 0)
				return r;
		}
	}
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}
