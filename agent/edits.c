/* Applying search/replace edits; see edits.h. */
#include "config.h"

#include <errno.h>
#include <git2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "edits.h"
#include "llm-internal.h"

#define EDIT_FILE_MAX (8u * 1024 * 1024)
#define EDITS_MAX 32
#define EDIT_FILES_MAX 8

struct edited {
	const char *path;
	char *old;
	char *new;
};

int edits_diff_buffers(const char *path, const char *old, const char *new,
		       char **ret_diff)
{
	git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
	git_patch *patch = NULL;
	git_buf out = GIT_BUF_INIT;
	int r;

	git_libgit2_init();
	opts.context_lines = 3;
	r = git_patch_from_buffers(&patch, old, strlen(old), path, new, strlen(new), path, &opts);
	if (r == 0)
		r = git_patch_to_buf(&out, patch);
	git_patch_free(patch);
	if (r == 0) {
		*ret_diff = strndup(out.ptr ?: "", out.size);
		r = *ret_diff ? 0 : -ENOMEM;
	} else
		r = -EIO;
	git_buf_dispose(&out);
	git_libgit2_shutdown();
	return r;
}

static bool path_ok(const char *p)
{
	if (!*p || p[0] == '/' || strstr(p, ".."))
		return false;
	for (const char *c = p; *c; c++)
		if (!(('a' <= *c && *c <= 'z') || ('A' <= *c && *c <= 'Z') ||
		      ('0' <= *c && *c <= '9') || strchr("_-./+,", *c)))
			return false;
	return true;
}

struct disk {
	const char *src;
};

/* Reads a regular file of the tree on disk; symlinks are refused so an
 * edit cannot reach outside it. */
static int read_disk(void *ud, const char *path, char **ret, size_t *ret_len)
{
	const struct disk *d = ud;
	_cleanup_free_ char *full = NULL;
	struct stat st;

	if (asprintf(&full, "%s/%s", d->src, path) < 0)
		return -ENOMEM;
	if (lstat(full, &st) < 0 || !S_ISREG(st.st_mode))
		return -ENOENT;
	return read_file_bounded(full, EDIT_FILE_MAX, ret, ret_len);
}

static int load(edits_read_fn rd, void *ud, struct edited *files, size_t *n, const char *path,
		struct edited **ret, char **ret_error)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r;

	for (size_t i = 0; i < *n; i++)
		if (streq(files[i].path, path)) {
			*ret = &files[i];
			return 0;
		}
	if (*n >= EDIT_FILES_MAX) {
		*ret_error = strdup_printf("edits touch more than %d files", EDIT_FILES_MAX);
		return -EINVAL;
	}
	r = rd(ud, path, &data, &len);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || len > EDIT_FILE_MAX || strlen(data) != len) {
		*ret_error = strdup_printf("%s is not a text file of the tree", path);
		return -EINVAL;
	}
	files[*n].path = path;
	files[*n].old = data;
	files[*n].new = strdup(data);
	data = NULL;
	if (!files[*n].new)
		return -ENOMEM;
	*ret = &files[(*n)++];
	return 0;
}

struct lines {
	const char **at;
	size_t *len;
	uint64_t *key;	/* the line without blanks, hashed; 0: a blank line */
	size_t n;
};

static void lines_free(struct lines *l)
{
	free(l->at);
	free(l->len);
	free(l->key);
}

static uint64_t squeezed_key(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	bool any = false;

	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') {
			h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
			any = true;
		}
	return any ? h | 1 : 0;
}

static bool grow(void *pp, size_t n, size_t size)
{
	void **p = pp, *q = reallocarray(*p, n, size);

	if (!q)
		return false;
	*p = q;
	return true;
}

static int split_lines(const char *text, size_t max, struct lines *ret)
{
	struct lines l = {};
	size_t cap = 0;

	for (const char *p = text; *p && l.n < max;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (l.n == cap) {
			cap = cap ? cap * 2 : 256;
			if (!grow(&l.at, cap, sizeof(*l.at)) || !grow(&l.len, cap, sizeof(*l.len)) ||
			    !grow(&l.key, cap, sizeof(*l.key))) {
				lines_free(&l);
				return -ENOMEM;
			}
		}
		l.at[l.n] = p;
		l.len[l.n] = n;
		l.key[l.n++] = squeezed_key(p, n);
		p = e ? e + 1 : p + n;
	}
	*ret = l;
	return 0;
}

/* Where "before" comes closest: the window of its length in which the
 * most of its non-blank lines agree with the file's when spaces and tabs
 * are ignored (the first such window), shown with its line numbers and
 * the file's real text, so that a model can copy it. */
static char *closest_match(const char *text, const char *before)
{
	_cleanup_buf_ struct buf b = BUF_INIT(8 * 1024);
	struct lines t = {}, w = {};
	size_t best = 0, best_at = 0, wanted = 0;

	if (split_lines(text, 1u << 20, &t) < 0 || split_lines(before, 100, &w) < 0) {
		lines_free(&t);
		return NULL;
	}
	for (size_t k = 0; k < w.n; k++)
		wanted += w.key[k] != 0;
	for (size_t s = 0; s < t.n; s++) {
		size_t agree = 0;

		for (size_t k = 0; k < w.n && s + k < t.n; k++)
			agree += w.key[k] && w.key[k] == t.key[s + k];
		if (agree > best) {
			best = agree;
			best_at = s;
		}
	}
	if (best == 0)
		(void)buf_puts(&b, "No line of it occurs in the file: read the file and copy "
			       "the text from there.");
	else {
		size_t from = best_at, to = best_at + w.n < t.n ? best_at + w.n : t.n;

		(void)buf_printf(&b, "Closest match: lines %zu-%zu, where %zu of its %zu lines agree "
				 "when spaces and tabs are ignored%s. The file reads there:\n",
				 from + 1, to, best, wanted,
				 best == wanted && w.n == to - from ? " (only the blanks differ)" : "");
		for (size_t i = from; i < to && i < from + 60; i++)
			(void)buf_printf(&b, "%6zu\t%.*s\n", i + 1, (int)t.len[i], t.at[i]);
	}
	lines_free(&t);
	lines_free(&w);
	return buf_steal(&b, NULL);
}

static int replace_once(struct edited *f, const char *before, const char *after,
			size_t idx, char **ret_error)
{
	const char *hit = strstr(f->new, before);
	size_t nb = strlen(before), na = strlen(after), len = strlen(f->new);
	char *out;

	if (!*before) {
		*ret_error = strdup_printf("edit %zu: \"before\" is empty", idx);
		return -EINVAL;
	}
	if (!hit) {
		_cleanup_free_ char *near = closest_match(f->new, before);

		*ret_error = strdup_printf("edit %zu: \"before\" text not found in %s "
					   "(copy it exactly, whitespace included). %s", idx, f->path,
					   near ?: "");
		return -EINVAL;
	}
	if (strstr(hit + 1, before)) {
		*ret_error = strdup_printf("edit %zu: \"before\" text occurs more than once in %s; "
					   "include more context", idx, f->path);
		return -EINVAL;
	}
	if (len - nb + na > EDIT_FILE_MAX)
		return -E2BIG;
	out = malloc(len - nb + na + 1);
	if (!out)
		return -ENOMEM;
	memcpy(out, f->new, (size_t)(hit - f->new));
	memcpy(out + (hit - f->new), after, na);
	strcpy(out + (hit - f->new) + na, hit + nb);
	free(f->new);
	f->new = out;
	return 0;
}

int edits_apply(const char *src_dir, const json_t *edits, char **ret_diff,
		char **ret_error)
{
	struct disk d = { src_dir };

	return edits_apply_fn(read_disk, &d, edits, ret_diff, ret_error);
}

int edits_apply_fn(edits_read_fn rd, void *ud, const json_t *edits, char **ret_diff,
		   char **ret_error)
{
	struct edited files[EDIT_FILES_MAX] = {};
	size_t n = 0, i;
	_cleanup_buf_ struct buf out = BUF_INIT(4 * 1024 * 1024);
	json_t *e;
	int r = 0;

	if (!json_is_array(edits) || json_array_size(edits) == 0 ||
	    json_array_size(edits) > EDITS_MAX) {
		*ret_error = strdup_printf("edits must be a list of 1 to %d edits", EDITS_MAX);
		return -EINVAL;
	}
	json_array_foreach(edits, i, e) {
		const char *file = json_get_str(e, "file"), *before = json_get_str(e, "before");
		const char *after = json_get_str(e, "after");
		struct edited *f;

		if (!file || !before || !after) {
			*ret_error = strdup_printf("edit %zu lacks file, before or after", i);
			r = -EINVAL;
			break;
		}
		if (!path_ok(file)) {
			*ret_error = strdup_printf("edit %zu: path is not inside the tree", i);
			r = -EINVAL;
			break;
		}
		r = load(rd, ud, files, &n, file, &f, ret_error);
		if (r >= 0)
			r = replace_once(f, before, after, i, ret_error);
		if (r < 0)
			break;
	}
	for (size_t k = 0; r >= 0 && k < n; k++) {
		_cleanup_free_ char *d = NULL;

		if (streq(files[k].old, files[k].new))
			continue;
		r = edits_diff_buffers(files[k].path, files[k].old, files[k].new, &d);
		if (r >= 0)
			r = buf_puts(&out, d);
	}
	for (size_t k = 0; k < n; k++) {
		free(files[k].old);
		free(files[k].new);
	}
	if (r < 0)
		return r;
	if (out.len == 0) {
		*ret_error = strdup_printf("the edits change nothing");
		return -EINVAL;
	}
	*ret_diff = buf_steal(&out, NULL);
	return *ret_diff ? 0 : -ENOMEM;
}
