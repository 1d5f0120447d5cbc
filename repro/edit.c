/* Search/replace edits on a worktree, confined to it.
 *
 * Edits come from an LLM, so they are hostile input: every path is
 * checked by components and opened with O_NOFOLLOW one directory at a
 * time from the worktree's top, so neither ".." nor a symlink (planted by
 * an earlier patch, say) can lead a write outside the tree.  All edits
 * are computed in memory first and written only when every one of them
 * applies, so a failed batch leaves the worktree as it was. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/strutil.h"
#include "repro/tree-internal.h"

/* Opens the folder holding path below rootfd without following symlinks;
 * *ret_name points into path at the last component. */
static int open_parent(int rootfd, const char *path, int *ret_fd,
		       const char **ret_name)
{
	_cleanup_close_ int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	const char *p = path, *slash;

	if (fd < 0)
		return negerrno();
	while ((slash = strchr(p, '/'))) {
		char comp[256];
		int nfd;

		if ((size_t)(slash - p) >= sizeof(comp))
			return -ENAMETOOLONG;
		memcpy(comp, p, slash - p);
		comp[slash - p] = 0;
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0)
			return errno == ENOTDIR ? -ELOOP : negerrno();
		close(fd);
		fd = nfd;
		p = slash + 1;
	}
	*ret_fd = TAKE_FD(fd);
	*ret_name = p;
	return 0;
}

struct edit_file {
	const char *path;
	char *data;
	size_t len;
	mode_t mode;
	bool is_new;
};

static int fail(char **ret_error, int r, size_t i, const char *path,
		const char *fmt, ...) _printf_(5, 6);
static int fail(char **ret_error, int r, size_t i, const char *path,
		const char *fmt, ...)
{
	_cleanup_free_ char *esc = path ? str_escape(path, strlen(path), 200) : NULL;
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	if (!ret_error)
		return r;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (asprintf(ret_error, "edit %zu (%s): %s", i + 1, esc ? esc : "?",
		     msg ? msg : "error") < 0)
		*ret_error = NULL;
	return r;
}

static int load_file(int rootfd, const char *path, bool create,
		     struct edit_file *f, const char **ret_error)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	const char *name;
	struct stat st;
	int r;

	r = open_parent(rootfd, path, &dfd, &name);
	if (r == -ELOOP) {
		*ret_error = "a folder on the path is a symlink or not a folder";
		return r;
	}
	if (r < 0) {
		*ret_error = "folder does not exist";
		return r;
	}
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT && create) {
		f->path = path;
		f->mode = 0644;
		f->is_new = true;
		f->data = strdup("");
		return f->data ? 0 : -ENOMEM;
	}
	if (fd < 0) {
		*ret_error = errno == ELOOP ? "file is a symlink" :
			     errno == ENOENT ? "file does not exist" :
					     "cannot open file";
		return negerrno();
	}
	if (create) {
		*ret_error = "file already exists (an empty 'before' creates a new file)";
		return -EEXIST;
	}
	if (fstat(fd, &st) < 0)
		return negerrno();
	if (!S_ISREG(st.st_mode)) {
		*ret_error = "not a regular file";
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > EDIT_FILE_MAX) {
		*ret_error = "file is too large to edit";
		return -EFBIG;
	}
	r = read_fd_bounded(fd, EDIT_FILE_MAX, &f->data, &f->len);
	if (r < 0) {
		*ret_error = "cannot read file";
		return r;
	}
	f->path = path;
	f->mode = st.st_mode & 07777;
	return 0;
}

static unsigned line_of(const char *s, size_t off)
{
	unsigned line = 1;

	for (size_t i = 0; i < off; i++)
		line += s[i] == '\n';
	return line;
}

/* Text with runs of blanks collapsed to one space and blanks before a
 * newline dropped; map[i] is the source offset of output byte i. */
static char *squeeze(const char *s, size_t len, size_t **ret_map, size_t *ret_len)
{
	_cleanup_free_ char *out = malloc(len + 1);
	_cleanup_free_ size_t *map = malloc((len + 1) * sizeof(size_t));
	size_t o = 0;

	if (!out || !map)
		return NULL;
	for (size_t i = 0; i < len;) {
		if (s[i] == ' ' || s[i] == '\t') {
			size_t j = i;
			while (j < len && (s[j] == ' ' || s[j] == '\t'))
				j++;
			if (j < len && s[j] != '\n' && o > 0) {
				map[o] = i;
				out[o++] = ' ';
			}
			i = j;
			continue;
		}
		map[o] = i;
		out[o++] = s[i++];
	}
	out[o] = 0;
	*ret_len = o;
	if (ret_map)
		*ret_map = TAKE_PTR(map);
	return TAKE_PTR(out);
}

/* Line where before matches when blanks are ignored, 0 when it does not. */
static unsigned fuzzy_line(const struct edit_file *f, const char *before)
{
	_cleanup_free_ size_t *map = NULL;
	_cleanup_free_ char *hay = NULL, *needle = NULL;
	size_t hl, nl;
	const char *p;

	hay = squeeze(f->data, f->len, &map, &hl);
	needle = squeeze(before, strlen(before), NULL, &nl);
	if (!hay || !needle || nl == 0)
		return 0;
	/* The needle may start with blanks that squeeze turned into one. */
	p = memmem(hay, hl, needle[0] == ' ' ? needle + 1 : needle,
		   needle[0] == ' ' ? nl - 1 : nl);
	return p ? line_of(f->data, map[p - hay]) : 0;
}

static int apply_one(struct edit_file *f, const struct edit *e, size_t i,
		     char **ret_error)
{
	size_t bl = strlen(e->before), al = e->after ? strlen(e->after) : 0;
	size_t count = 0, first = 0;
	char lines[128] = "";
	char *nd;

	if (f->is_new && bl == 0) {
		free(f->data);
		f->data = strdup(e->after ? e->after : "");
		f->len = al;
		return f->data ? 0 : -ENOMEM;
	}
	for (const char *p = f->data; (p = memmem(p, f->len - (p - f->data),
						  e->before, bl)); p++) {
		size_t off = (size_t)(p - f->data);
		size_t used = strlen(lines);

		if (count++ == 0)
			first = off;
		if (count <= 5 && used < sizeof(lines) - 16)
			snprintf(lines + used, sizeof(lines) - used, "%s%u",
				 count > 1 ? ", " : "", line_of(f->data, off));
	}
	if (count == 0) {
		unsigned l = fuzzy_line(f, e->before);

		if (l)
			return fail(ret_error, -ENOENT, i, e->file,
				    "'before' not found exactly, but it matches near line %u "
				    "when spaces and tabs are ignored: copy the text exactly",
				    l);
		return fail(ret_error, -ENOENT, i, e->file, "'before' not found");
	}
	if (count > 1)
		return fail(ret_error, -EEXIST, i, e->file,
			    "'before' occurs %zu times (lines %s%s); add context to "
			    "make it unique", count, lines, count > 5 ? ", ..." : "");
	if (f->len - bl + al > EDIT_FILE_MAX)
		return fail(ret_error, -EFBIG, i, e->file, "file would be too large");
	nd = malloc(f->len - bl + al + 1);
	if (!nd)
		return -ENOMEM;
	memcpy(nd, f->data, first);
	memcpy(nd + first, e->after ? e->after : "", al);
	memcpy(nd + first + al, f->data + first + bl, f->len - first - bl);
	f->len = f->len - bl + al;
	nd[f->len] = 0;
	free(f->data);
	f->data = nd;
	return 0;
}

static int write_one(int rootfd, const struct edit_file *f)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	_cleanup_free_ char *tmp = NULL;
	const char *name;
	size_t off = 0;
	int r;

	r = open_parent(rootfd, f->path, &dfd, &name);
	if (r < 0)
		return r;
	if (asprintf(&tmp, ".%.200s.kfix-edit", name) < 0)
		return -ENOMEM;
	(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    f->mode);
	if (fd < 0)
		return negerrno();
	while (off < f->len) {
		ssize_t n = write(fd, f->data + off, f->len - off);
		if (n < 0) {
			r = negerrno();
			(void)unlinkat(dfd, tmp, 0);
			return r;
		}
		off += (size_t)n;
	}
	if (fchmod(fd, f->mode) < 0 || renameat(dfd, tmp, dfd, name) < 0) {
		r = negerrno();
		(void)unlinkat(dfd, tmp, 0);
		return r;
	}
	return 0;
}

static int track_created(const char *dir, const struct edit_file *files,
			 size_t n, char **ret_error)
{
	_cleanup_free_ const char **created = calloc(n ? n : 1, sizeof(char *));
	size_t k = 0;
	int r;

	if (!created)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (files[i].is_new)
			created[k++] = files[i].path;
	r = tree_worktree_track_new(dir, created, k);
	if (r < 0 && ret_error)
		*ret_error = strdup("cannot record the new files in the index");
	return r;
}

static void edit_files_free(struct edit_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(files[i].data);
	free(files);
}

int tree_apply_edits(const char *dir, const struct edit *edits, size_t n,
		     char **ret_error)
{
	_cleanup_close_ int rootfd = -1;
	struct edit_file *files = NULL;
	size_t nfiles = 0;
	int r = 0;

	if (n > EDIT_COUNT_MAX) {
		if (ret_error && asprintf(ret_error, "too many edits (%zu, at most %u)",
					  n, EDIT_COUNT_MAX) < 0)
			*ret_error = NULL;
		return -E2BIG;
	}
	rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return negerrno();
	files = calloc(n ? n : 1, sizeof(*files));
	if (!files)
		return -ENOMEM;
	for (size_t i = 0; i < n && r >= 0; i++) {
		const struct edit *e = &edits[i];
		const char *why = NULL;
		struct edit_file *f = NULL;

		r = tree_path_check(e->file, &why);
		if (r < 0) {
			r = fail(ret_error, r, i, e->file, "%s", why);
			break;
		}
		if (!e->before || strlen(e->before) > EDIT_TEXT_MAX ||
		    (e->after && strlen(e->after) > EDIT_TEXT_MAX)) {
			r = fail(ret_error, -E2BIG, i, e->file,
				 "'before' missing or text longer than %u bytes",
				 EDIT_TEXT_MAX);
			break;
		}
		for (size_t k = 0; k < nfiles; k++)
			if (streq(files[k].path, e->file))
				f = &files[k];
		if (f && !*e->before) {
			r = fail(ret_error, -EEXIST, i, e->file,
				 "file already edited in this batch; 'before' is empty");
			break;
		}
		if (!f) {
			f = &files[nfiles];
			r = load_file(rootfd, e->file, !*e->before, f, &why);
			if (r < 0) {
				r = fail(ret_error, r, i, e->file, "%s",
					 why ? why : strerror(-r));
				break;
			}
			nfiles++;
		}
		r = apply_one(f, e, i, ret_error);
	}
	for (size_t k = 0; k < nfiles && r >= 0; k++) {
		r = write_one(rootfd, &files[k]);
		if (r < 0 && ret_error && asprintf(ret_error, "cannot write %s: %s",
						   files[k].path, strerror(-r)) < 0)
			*ret_error = NULL;
	}
	if (r >= 0)
		r = track_created(dir, files, nfiles, ret_error);
	edit_files_free(files, nfiles);
	return r < 0 ? r : 0;
}

void edit_free_array(struct edit *edits, size_t n)
{
	if (!edits)
		return;
	for (size_t i = 0; i < n; i++) {
		free(edits[i].file);
		free(edits[i].before);
		free(edits[i].after);
		free(edits[i].why);
	}
	free(edits);
}
