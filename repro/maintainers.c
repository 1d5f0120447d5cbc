/* MAINTAINERS sections and get_maintainer.pl's matching rules; see
 * maintainers.h. */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/strutil.h"
#include "maintainers.h"

/* A section with more tag lines than this is not MAINTAINERS as the
 * kernel writes it (the largest has a few hundred). */
#define SECTION_TAGS_MAX 4096
#define SECTIONS_MAX 20000

void maintainers_free(struct maintainers *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->s[i].title);
		strv_free(m->s[i].tags);
	}
	free(m->s);
	free(m);
}

const char *maintainers_tag(const char *line, char tag)
{
	if (line[0] != tag || line[1] != ':' || (line[2] != '\t' && line[2] != ' '))
		return NULL;
	return line + 3 + strspn(line + 3, " \t");
}

static bool is_tag_line(const char *l, size_t n)
{
	return n >= 3 && 'A' <= l[0] && l[0] <= 'Z' && l[1] == ':' && (l[2] == '\t' || l[2] == ' ');
}

static int add_section(struct maintainers *m, const char *title, size_t n)
{
	struct maint_section *s;

	if (m->n >= SECTIONS_MAX)
		return -E2BIG;
	s = realloc(m->s, (m->n + 1) * sizeof(*m->s));
	if (!s)
		return -ENOMEM;
	m->s = s;
	m->s[m->n] = (struct maint_section){ .title = strndup(title, n) };
	if (!m->s[m->n].title)
		return -ENOMEM;
	m->n++;
	return 0;
}

/* A section is a title line followed by tag lines; a blank line or a line
 * that is not a tag ends it.  The title is the last untagged line before
 * the first tag. */
int maintainers_parse(const char *data, size_t len, struct maintainers **ret)
{
	_cleanup_(maintainers_freep) struct maintainers *m = calloc(1, sizeof(*m));
	const char *p = data, *end = data + len, *title = NULL;
	size_t title_len = 0;
	bool open = false;
	int r = 0;

	if (!m)
		return -ENOMEM;
	while (p < end && r >= 0) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((eol ? eol : end) - p);
		_cleanup_free_ char *line = NULL;

		if (n && p[n - 1] == '\r')
			n--;
		if (!is_tag_line(p, n)) {
			open = false;
			title = n ? p : NULL;
			title_len = n;
		} else if (open || title) {
			struct maint_section *s;

			if (!open) {
				r = add_section(m, title, title_len);
				open = r >= 0;
			}
			s = &m->s[m->n - 1];
			if (r >= 0 && strv_len(s->tags) < SECTION_TAGS_MAX) {
				line = strndup(p, n);
				r = line ? strv_push(&s->tags, line) : -ENOMEM;
			}
			title = NULL;
		}
		p = eol ? eol + 1 : end;
	}
	if (r < 0)
		return r;
	*ret = TAKE_PTR(m);
	return 0;
}

static int depth(const char *s)
{
	int d = 0;

	for (; *s; s++)
		d += *s == '/';
	return d;
}

/* get_maintainer.pl's F:/X: rule: the pattern, its globs made regex
 * ('*' crossing '/' too), matches the start of the path, and either
 * ends in '/' or has as many '/' as the path.  A folder named without
 * its slash is a folder (get_maintainer.pl looks at the disk). */
static bool pattern_matches(const char *pat, const char *file)
{
	_cleanup_free_ char *prefix = NULL;
	size_t n = strlen(pat);

	if (!n || asprintf(&prefix, "%s*", pat) < 0)
		return false;
	if (fnmatch(prefix, file, 0) == 0 && (pat[n - 1] == '/' || depth(pat) == depth(file)))
		return true;
	return !strpbrk(pat, "*?[") && strncmp(pat, file, n) == 0 && file[n] == '/';
}

/* N: is a Perl regex over the path; those MAINTAINERS has are plain
 * enough for POSIX extended syntax, and one that is not matches
 * nothing. */
static bool regex_matches(const char *re, const char *file)
{
	regex_t rx;
	bool m;

	if (strlen(re) > 256 || regcomp(&rx, re, REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	m = regexec(&rx, file, 0, NULL, 0) == 0;
	regfree(&rx);
	return m;
}

bool maintainers_covers(const struct maint_section *s, const char *file)
{
	bool in = false;
	const char *v;

	for (size_t i = 0; s->tags && s->tags[i] && !in; i++) {
		if ((v = maintainers_tag(s->tags[i], 'F')))
			in = pattern_matches(v, file);
		else if ((v = maintainers_tag(s->tags[i], 'N')))
			in = regex_matches(v, file);
	}
	for (size_t i = 0; in && s->tags && s->tags[i]; i++)
		if ((v = maintainers_tag(s->tags[i], 'X')) && pattern_matches(v, file))
			return false;
	return in;
}

static bool covers_any(const struct maint_section *s, char *const *files)
{
	for (size_t j = 0; files && files[j]; j++)
		if (maintainers_covers(s, files[j]))
			return true;
	return false;
}

int maintainers_each_file(const char *src, char *const *files, maintainers_file_fn fn,
			  void *userdata)
{
	_cleanup_(maintainers_freep) struct maintainers *m = NULL;
	_cleanup_free_ char *path = NULL, *data = NULL;
	size_t len;
	int r;

	if (asprintf(&path, "%s/MAINTAINERS", src) < 0)
		return -ENOMEM;
	r = read_file_bounded(path, MAINTAINERS_FILE_MAX, &data, &len);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	r = maintainers_parse(data, len, &m);
	for (size_t i = 0; r == 0 && i < m->n; i++) {
		const struct maint_section *s = &m->s[i];

		for (size_t j = 0; r == 0 && s->tags && s->tags[j] && covers_any(s, files); j++) {
			const char *f = maintainers_tag(s->tags[j], 'F');

			if (f)
				r = fn(f, userdata);
		}
	}
	return r;
}
