#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build-internal.h"
#include "common/buf.h"
#include "common/strutil.h"

/* A kernel tree has some 80,000 files; far more means a wrong folder. */
#define FILES_MAX (1024 * 1024)
#define DEPTH_MAX 64

struct entry {
	char *line; /* "path\tsize\tmtime" as in the manifest */
	size_t path_len;
};

struct walk {
	struct entry *v;
	size_t n, cap;
	struct buf path;
};

static void walk_free(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].line);
	free(w->v);
	buf_free(&w->path);
}

/* kfix's own files in the source (patch journal, locks) and git's data
 * stay here. */
static bool skipped(const char *name, bool top)
{
	return streq(name, ".") || streq(name, "..") ||
	       (top && (streq(name, ".git") || startswith(name, ".kfix")));
}

static int walk_add(struct walk *w, const struct stat *st)
{
	struct entry *nv;
	char *line;

	if (w->n >= FILES_MAX)
		return -EFBIG;
	if (w->n == w->cap) {
		nv = realloc(w->v, (w->cap ? w->cap * 2 : 4096) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		w->v = nv;
		w->cap = w->cap ? w->cap * 2 : 4096;
	}
	if (asprintf(&line, "%s\t%jd\t%jd.%09ld", w->path.data, (intmax_t)st->st_size,
		     (intmax_t)st->st_mtim.tv_sec, st->st_mtim.tv_nsec) < 0)
		return -ENOMEM;
	w->v[w->n++] = (struct entry){ .line = line, .path_len = w->path.len };
	return 0;
}

static int walk_dir(struct walk *w, int dfd, int depth)
{
	DIR *d;
	struct dirent *de;
	size_t base = w->path.len;
	int r = 0;

	if (depth > DEPTH_MAX)
		return -ELOOP;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while (r >= 0 && (errno = 0, de = readdir(d))) {
		struct stat st;

		if (skipped(de->d_name, depth == 0))
			continue;
		/* Names with control characters would break the manifest's
		 * lines; a kernel tree has none. */
		for (const char *p = de->d_name; *p && r >= 0; p++)
			if ((unsigned char)*p < 0x20)
				r = -EINVAL;
		if (r < 0)
			break;
		w->path.len = base;
		if ((base > 0 && buf_puts(&w->path, "/") < 0) || buf_puts(&w->path, de->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

			r = sub < 0 ? -errno : walk_dir(w, sub, depth + 1);
		} else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
			r = walk_add(w, &st);
	}
	if (r >= 0 && errno != 0)
		r = -errno;
	closedir(d);
	w->path.len = base;
	if (w->path.data)
		w->path.data[base] = '\0';
	return r;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	size_t n = MIN(x->path_len, y->path_len);
	int c = memcmp(x->line, y->line, n);

	return c ? c : (x->path_len > y->path_len) - (x->path_len < y->path_len);
}

void sync_plan_free(struct sync_plan *p)
{
	free(p->changed);
	free(p->removed);
	free(p->manifest);
	*p = (struct sync_plan){ 0 };
}

/* The path of a manifest line ("path\t..."), and its length. */
static size_t line_path(const char *line, const char *end)
{
	const char *tab = memchr(line, '\t', (size_t)(end - line));

	return tab ? (size_t)(tab - line) : (size_t)(end - line);
}

static int push_path(struct buf *b, const char *p, size_t n)
{
	if (buf_append(b, p, n) < 0 || buf_append(b, "", 1) < 0)
		return -ENOMEM;
	return 0;
}

/* Both lists are sorted by path: one pass finds what changed. */
static int compare(const struct walk *w, const char *old, size_t old_len, struct sync_plan *p,
		   struct buf *changed, struct buf *removed)
{
	const char *o = old, *end = old + old_len;
	size_t i = 0;

	while (i < w->n || o < end) {
		const char *eol = o < end ? memchr(o, '\n', (size_t)(end - o)) : NULL;
		size_t opl, olen;
		int c;

		if (o < end && !eol)
			eol = end;
		opl = o < end ? line_path(o, eol) : 0;
		olen = o < end ? (size_t)(eol - o) : 0;
		if (i >= w->n)
			c = 1;
		else if (o >= end)
			c = -1;
		else {
			size_t n = MIN(w->v[i].path_len, opl);

			c = memcmp(w->v[i].line, o, n);
			if (!c)
				c = (w->v[i].path_len > opl) - (w->v[i].path_len < opl);
		}
		if (c < 0 || (c == 0 && (strlen(w->v[i].line) != olen ||
					 memcmp(w->v[i].line, o, olen) != 0))) {
			if (push_path(changed, w->v[i].line, w->v[i].path_len) < 0)
				return -ENOMEM;
			p->n_changed++;
		} else if (c > 0) {
			if (push_path(removed, o, opl) < 0)
				return -ENOMEM;
			p->n_removed++;
		}
		if (c <= 0)
			i++;
		if (c >= 0)
			o = eol + 1;
	}
	return 0;
}

int sync_plan_make(const char *src, const char *old_manifest, size_t old_len,
		   struct sync_plan *ret)
{
	_cleanup_(walk_free) struct walk w = { .path = BUF_INIT(8192) };
	_cleanup_buf_ struct buf changed = BUF_INIT(1 << 30), removed = BUF_INIT(1 << 30),
				 manifest = BUF_INIT(1 << 30);
	struct sync_plan p = { 0 };
	int fd, r;

	fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (buf_puts(&w.path, "") < 0) {
		close(fd);
		return -ENOMEM;
	}
	r = walk_dir(&w, fd, 0);
	if (r < 0)
		return r;
	if (w.n > 0) /* an empty tree has no array at all */
		qsort(w.v, w.n, sizeof(*w.v), cmp_entry);
	for (size_t i = 0; i < w.n; i++)
		if (buf_printf(&manifest, "%s\n", w.v[i].line) < 0)
			return -ENOMEM;
	r = compare(&w, old_manifest ? old_manifest : "", old_manifest ? old_len : 0, &p,
		    &changed, &removed);
	if (r < 0)
		return r;
	if ((!changed.data && buf_puts(&changed, "") < 0) ||
	    (!removed.data && buf_puts(&removed, "") < 0) ||
	    (!manifest.data && buf_puts(&manifest, "") < 0))
		return -ENOMEM;
	p.changed = buf_steal(&changed, &p.changed_len);
	p.removed = buf_steal(&removed, &p.removed_len);
	p.manifest = buf_steal(&manifest, &p.manifest_len);
	*ret = p;
	return 0;
}
