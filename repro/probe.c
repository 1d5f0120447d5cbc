#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/strutil.h"
#include "probe.h"

#define SOURCE_MAX (8 * 1024 * 1024)
#define PATCH_MAX (1024 * 1024)
#define LINES_MAX 10000

int probe_marker_new(char ret[static 32])
{
	unsigned char r[8];

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return -EIO;
	snprintf(ret, 32, "KFIXPROBE%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3],
		 r[4], r[5], r[6], r[7]);
	return 0;
}

static int cmp_point(const void *a, const void *b)
{
	const struct probe_point *const *x = a, *const *y = b;
	int c = strcmp((*x)->file, (*y)->file);

	return c ? c : (*x)->line - (*y)->line;
}

/* The text of line n (1-based) and its length, or NULL. */
static const char *line_at(const char *text, size_t len, int n, size_t *ret_len)
{
	const char *p = text, *end = text + len;

	for (int i = 1; i < n && p < end; i++) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			return NULL;
		p = eol + 1;
	}
	if (p >= end)
		return NULL;
	{
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		*ret_len = (size_t)((eol ? eol : end) - p);
	}
	return p;
}

static int file_hunks(struct buf *out, const char *src, const struct probe_point *const *pts,
		      size_t n, const struct probe_point *base, const char *marker)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	size_t len;
	int r;

	if (strstr(pts[0]->file, "..") || pts[0]->file[0] == '/')
		return -EINVAL;
	if (asprintf(&path, "%s/%s", src, pts[0]->file) < 0)
		return -ENOMEM;
	r = read_file_bounded(path, SOURCE_MAX, &text, &len);
	if (r < 0)
		return r;
	r = buf_printf(out, "--- a/%s\n+++ b/%s\n", pts[0]->file, pts[0]->file);
	for (size_t i = 0; i < n && r >= 0; i++) {
		size_t ll;
		const char *l = line_at(text, len, pts[i]->line, &ll);

		if (!l || strchr(pts[i]->args, '\n'))
			return -EINVAL;
		r = buf_printf(out, "@@ -%d,1 +%d,2 @@\n %.*s\n+\tprintk(KERN_ERR \"%s %td: \" %s);\n",
			       pts[i]->line, pts[i]->line + (int)i, (int)ll, l, marker,
			       pts[i] - base, pts[i]->args);
	}
	return r < 0 ? r : 0;
}

int probe_make_patch(const char *src, const struct probe_point *points, size_t n,
		     const char *marker, char **ret_patch)
{
	_cleanup_free_ const struct probe_point **sorted = NULL;
	_cleanup_buf_ struct buf out = BUF_INIT(PATCH_MAX);
	int r;

	if (n == 0)
		return -EINVAL;
	sorted = calloc(n, sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (points[i].line < 1)
			return -EINVAL;
		sorted[i] = &points[i];
	}
	qsort(sorted, n, sizeof(*sorted), cmp_point);
	for (size_t i = 0; i < n;) {
		size_t k = i;

		while (k < n && streq(sorted[k]->file, sorted[i]->file))
			k++;
		r = file_hunks(&out, src, sorted + i, k - i, points, marker);
		if (r < 0)
			return r;
		i = k;
	}
	*ret_patch = buf_steal(&out, NULL);
	return *ret_patch ? 0 : -ENOMEM;
}

int probe_extract(const char *console, size_t len, const char *marker, char ***ret_lines)
{
	_cleanup_strv_ char **v = NULL;
	const char *p = console, *end = console + len;
	size_t ml = strlen(marker), n = 0;

	while (p < end && n < LINES_MAX) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *m = memmem(p, (size_t)(eol - p), marker, ml);

		if (m) {
			_cleanup_free_ char *line = NULL;
			const char *s = m + ml;

			if (s < eol && *s == ' ')
				s++;
			line = str_escape(s, (size_t)(eol - s), 1000);
			if (!line || strv_push(&v, line) < 0)
				return -ENOMEM;
			n++;
		}
		p = eol + 1;
	}
	*ret_lines = TAKE_PTR(v);
	return 0;
}

void probe_result_free(struct probe_result *r)
{
	build_result_free(&r->build);
	run_result_free(&r->run);
	strv_free(r->lines);
	r->lines = NULL;
}

int probe_run(const struct build_opts *o, const struct run_opts *ro,
	      const struct probe_point *points, size_t n, struct probe_result *ret)
{
	_cleanup_(probe_result_free) struct probe_result res = { 0 };
	_cleanup_free_ char *patch = NULL, *path = NULL;
	_cleanup_strv_ char **patches = NULL;
	struct build_opts bo = *o;
	struct run_opts r1 = *ro;
	char marker[32], tmpl[] = "/tmp/kfix-probe-XXXXXX";
	_cleanup_close_ int fd = -1;
	int r;

	r = probe_marker_new(marker);
	if (r < 0)
		return r;
	r = probe_make_patch(o->src, points, n, marker, &patch);
	if (r < 0)
		return r;
	fd = mkstemp(tmpl);
	if (fd < 0)
		return -errno;
	path = strdup(tmpl);
	if (!path)
		return -ENOMEM;
	r = write_file_atomic(path, patch, strlen(patch), 0600);
	if (r < 0) {
		(void)unlink(path);
		return r;
	}
	for (size_t i = 0; o->patches && o->patches[i]; i++)
		if (strv_push(&patches, o->patches[i]) < 0)
			return -ENOMEM;
	if (strv_push(&patches, path) < 0)
		return -ENOMEM;
	bo.patches = patches;
	r = build_kernel(&bo, &res.build);
	(void)unlink(path);
	if (r < 0)
		return r;
	if (res.build.status == BUILD_OK) {
		r1.kernel = res.build.bzimage;
		r = run_once(&r1, &res.run);
		if (r < 0)
			return r;
		if (res.run.console) {
			r = probe_extract(res.run.console, strlen(res.run.console), marker,
					  &res.lines);
			if (r < 0)
				return r;
		}
	} else
		res.run.outcome = RUN_BUILD_ERROR;
	*ret = res;
	res = (struct probe_result){ 0 };
	return 0;
}
