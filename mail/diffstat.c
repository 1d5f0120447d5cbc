/* A diffstat in git's layout, computed from a unified diff by following
 * hunk line counts (so a removed line reading "-- x" is not mistaken for
 * a file header). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diffstat-internal.h"

#define DIFFSTAT_FILES_MAX 512
#define DIFFSTAT_GRAPH_MAX 50

struct file_stat {
	char *name;
	long add, del;
};

struct stats {
	struct file_stat f[DIFFSTAT_FILES_MAX];
	size_t n;
};

static void stats_free(struct stats *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->f[i].name);
}

static struct file_stat *file_new(struct stats *s, const char *l, size_t n)
{
	/* "diff --git a/X b/Y": the name after " b/" */
	const char *b = NULL;

	for (size_t i = 0; i + 3 <= n; i++)
		if (memcmp(l + i, " b/", 3) == 0)
			b = l + i + 3;
	if (!b || s->n >= DIFFSTAT_FILES_MAX)
		return NULL;
	s->f[s->n].name = strndup(b, (size_t)(l + n - b));
	if (!s->f[s->n].name)
		return NULL;
	return &s->f[s->n++];
}

static void parse(struct stats *s, const char *diff)
{
	const char *pos = diff, *l;
	struct file_stat *cur = NULL;
	long old_left = 0, new_left = 0;
	size_t n;

	while (text_next_line(&pos, &l, &n)) {
		if (old_left > 0 || new_left > 0) {
			char c = n ? l[0] : ' ';

			if (c == '\\')
				continue;
			if (c == '-' || c == ' ')
				old_left--;
			if (c == '+' || c == ' ')
				new_left--;
			if (cur && c == '+')
				cur->add++;
			if (cur && c == '-')
				cur->del++;
			continue;
		}
		if (n > 11 && memcmp(l, "diff --git ", 11) == 0) {
			cur = file_new(s, l, n);
		} else if (n > 3 && memcmp(l, "@@ -", 4) == 0) {
			long a = 0, b = 1, c = 0, d = 1;
			_cleanup_free_ char *h = strndup(l, n);

			if (!h)
				return;
			if (sscanf(h, "@@ -%ld,%ld +%ld,%ld", &a, &b, &c, &d) < 4) {
				b = 1;
				d = 1;
				if (sscanf(h, "@@ -%ld +%ld,%ld", &a, &c, &d) < 3 &&
				    sscanf(h, "@@ -%ld,%ld +%ld", &a, &b, &c) < 3)
					b = d = 1;
			}
			old_left = b;
			new_left = d;
		}
	}
}

static int digits(long v)
{
	int d = 1;

	while (v >= 10)
		v /= 10, d++;
	return d;
}

int diffstat_format(const char *diff, struct buf *out)
{
	_cleanup_(stats_free) struct stats s = { .n = 0 };
	long max = 0, tadd = 0, tdel = 0;
	int namew = 0, countw;

	parse(&s, diff);
	if (s.n == 0)
		return 0;
	for (size_t i = 0; i < s.n; i++) {
		namew = MAX(namew, (int)strlen(s.f[i].name));
		max = MAX(max, s.f[i].add + s.f[i].del);
		tadd += s.f[i].add;
		tdel += s.f[i].del;
	}
	countw = digits(max);
	for (size_t i = 0; i < s.n; i++) {
		long a = s.f[i].add, d = s.f[i].del;

		if (max > DIFFSTAT_GRAPH_MAX) {
			/* scale, but keep at least one mark for a non-zero count */
			a = a ? MAX(1, a * DIFFSTAT_GRAPH_MAX / max) : 0;
			d = d ? MAX(1, d * DIFFSTAT_GRAPH_MAX / max) : 0;
		}
		if (buf_printf(out, " %-*s | %*ld ", namew, s.f[i].name, countw,
			       s.f[i].add + s.f[i].del) < 0)
			return -E2BIG;
		for (long k = 0; k < a; k++)
			if (buf_puts(out, "+") < 0)
				return -E2BIG;
		for (long k = 0; k < d; k++)
			if (buf_puts(out, "-") < 0)
				return -E2BIG;
		/* git leaves no trailing blank after a zero count */
		if (a + d == 0 && out->len > 0 && out->data[out->len - 1] == ' ')
			out->data[--out->len] = '\0';
		if (buf_puts(out, "\n") < 0)
			return -E2BIG;
	}
	if (buf_printf(out, " %zu file%s changed", s.n, s.n == 1 ? "" : "s") < 0 ||
	    (tadd && buf_printf(out, ", %ld insertion%s(+)", tadd, tadd == 1 ? "" : "s") < 0) ||
	    (tdel && buf_printf(out, ", %ld deletion%s(-)", tdel, tdel == 1 ? "" : "s") < 0) ||
	    buf_puts(out, "\n") < 0)
		return -E2BIG;
	return 0;
}
