/* Importing a plain source folder (no .git) as a one-commit repository.
 *
 * The scratch repository keeps its index, so a later import only re-reads
 * files whose stat data changed.  The snapshot commit has a fixed author
 * and date: the same folder content always gives the same commit id, so
 * build caches keyed by commit stay valid.  The source folder itself is
 * never written. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/strutil.h"
#include "repro/tree-internal.h"

#define SNAPSHOT_REF "refs/heads/snapshot"

static int snapshot_commit(git_repository *repo, const git_oid *tree_oid)
{
	_cleanup_(git_tree_freep) git_tree *tr = NULL;
	_cleanup_(git_signature_freep) git_signature *sig = NULL;
	_cleanup_(git_reference_freep) git_reference *ref = NULL, *head = NULL;
	git_oid commit;
	int r;

	r = git_tree_lookup(&tr, repo, tree_oid);
	if (r == 0)
		r = git_signature_new(&sig, "kfix", "kfix@localhost", 0, 0);
	if (r == 0)
		r = git_commit_create(&commit, repo, NULL, sig, sig, NULL,
				      "kfix snapshot of a source folder\n", tr, 0, NULL);
	if (r == 0)
		r = git_reference_create(&ref, repo, SNAPSHOT_REF, &commit, 1,
					 "kfix snapshot");
	if (r == 0)
		r = git_reference_symbolic_create(&head, repo, "HEAD", SNAPSHOT_REF, 1,
						  NULL);
	return r;
}

struct import {
	git_index *index;
	char **seen; /* paths found, for dropping entries of deleted files */
	size_t n, cap;
};

static int seen_add(struct import *im, const char *path)
{
	if (im->n == im->cap) {
		size_t cap = im->cap ? im->cap * 2 : 4096;
		char **v = reallocarray(im->seen, cap, sizeof(char *));

		if (!v)
			return -ENOMEM;
		im->seen = v;
		im->cap = cap;
	}
	im->seen[im->n] = strdup(path);
	return im->seen[im->n++] ? 0 : -ENOMEM;
}

/* The index's stat data says whether the file must be read again. */
static int import_file(struct import *im, const char *path, const struct stat *st)
{
	const git_index_entry *e = git_index_get_bypath(im->index, path, 0);
	int r;

	if (!e || e->mtime.seconds != (int32_t)st->st_mtim.tv_sec ||
	    (e->mtime.nanoseconds && e->mtime.nanoseconds != (uint32_t)st->st_mtim.tv_nsec) ||
	    e->file_size != (uint32_t)st->st_size || e->ino != (uint32_t)st->st_ino) {
		r = git_index_add_bypath(im->index, path);
		if (r < 0)
			return tree_errno(r);
	}
	return seen_add(im, path);
}

static int import_dir(struct import *im, int dfd, const char *rel)
{
	DIR *d;
	struct dirent *de;
	int r = 0;

	d = fdopendir(dfd);
	if (!d) {
		r = negerrno();
		close(dfd);
		return r;
	}
	while (r >= 0 && (de = readdir(d))) {
		_cleanup_free_ char *path = NULL;
		struct stat st;

		if (streq(de->d_name, ".") || streq(de->d_name, "..") ||
		    (!*rel && streq(de->d_name, ".git")))
			continue;
		if (asprintf(&path, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			r = sub < 0 ? negerrno() : import_dir(im, sub, path);
		} else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
			r = import_file(im, path, &st);
		}
	}
	closedir(d);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Drops the entries of files that are gone from the folder. */
static int import_prune(struct import *im)
{
	_cleanup_strv_ char **gone = NULL;
	int r;

	qsort(im->seen, im->n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < git_index_entrycount(im->index); i++) {
		const git_index_entry *e = git_index_get_byindex(im->index, i);
		const char *p = e->path;

		if (!bsearch(&p, im->seen, im->n, sizeof(char *), cmp_str)) {
			r = strv_push(&gone, e->path);
			if (r < 0)
				return r;
		}
	}
	for (char **g = gone; g && *g; g++) {
		r = git_index_remove_bypath(im->index, *g);
		if (r < 0)
			return tree_errno(r);
	}
	return 0;
}

/* Not git_index_add_all: it honours .gitignore, and Debian's linux-source
 * tarball ignores every top-level entry except debian/; the folder is what
 * the user asked for, so every file counts (it should be clean: no
 * in-tree build). */
static int import_all(git_index *index, const char *src)
{
	struct import im = { .index = index };
	int fd, r;

	fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	r = import_dir(&im, fd, "");
	if (r >= 0)
		r = import_prune(&im);
	for (size_t i = 0; i < im.n; i++)
		free(im.seen[i]);
	free(im.seen);
	return r;
}

int tree_snapshot_import(struct tree *t, const char *src, const char *scratch)
{
	_cleanup_(git_index_freep) git_index *index = NULL;
	char real[PATH_MAX];
	git_oid tree_oid;
	int r;

	if (!realpath(src, real))
		return tree_fail(t, negerrno(), "cannot resolve %s", src);
	r = mkdir_p(scratch, 0755);
	if (r < 0)
		return tree_fail(t, r, "cannot create %s", scratch);
	r = git_repository_open_bare(&t->repo, scratch);
	if (r == GIT_ENOTFOUND)
		r = git_repository_init(&t->repo, scratch, 1);
	if (r < 0)
		return tree_fail_git(t, r, "cannot open snapshot repository %s", scratch);
	t->snapshot = true;
	t->path = strdup(git_repository_path(t->repo));
	if (!t->path)
		return -ENOMEM;
	/* Only in memory: nothing is written into the source folder. */
	r = git_repository_set_workdir(t->repo, real, 0);
	if (r == 0)
		r = git_repository_index(&index, t->repo);
	if (r < 0)
		return tree_fail_git(t, r, "cannot import %s", src);
	/* the walk's failures are errno values, libgit2's mapped to them */
	r = import_all(index, real);
	if (r < 0)
		return tree_fail(t, r, "cannot import %s: %s", src, strerror(-r));
	r = git_index_write(index);
	if (r == 0)
		r = git_index_write_tree(&tree_oid, index);
	if (r == 0)
		r = snapshot_commit(t->repo, &tree_oid);
	if (r < 0)
		return tree_fail_git(t, r, "cannot import %s", src);
	return 0;
}
