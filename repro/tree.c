/* Opening trees (mirrors, repositories, imported folders), fetching,
 * resolving revisions and reading blobs. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "common/strutil.h"
#include "repro/tree-internal.h"

#define REV_MAX 1024

int tree_errno(int e)
{
	switch (e) {
	case 0:
		return 0;
	case GIT_ENOTFOUND:
		return -ENOENT;
	case GIT_EEXISTS:
		return -EEXIST;
	case GIT_EAMBIGUOUS:
	case GIT_EINVALIDSPEC:
	case GIT_EINVALID:
		return -EINVAL;
	case GIT_EBUFS:
		return -ENOBUFS;
	case GIT_EUSER:
		return -ECANCELED;
	case GIT_EBAREREPO:
		return -ENOTSUP;
	case GIT_ENONFASTFORWARD:
		return -EREMOTEIO;
	case GIT_ELOCKED:
		return -EBUSY;
	case GIT_EAUTH:
		return -EACCES;
	case GIT_ECERTIFICATE:
		return -EPERM;
	case GIT_EAPPLYFAIL:
	case GIT_ECONFLICT:
		return -ENOEXEC;
	case GIT_EDIRECTORY:
		return -EISDIR;
	default:
		return -EIO;
	}
}

static void tree_vfail(struct tree *t, bool with_git, const char *fmt,
		       va_list ap) _printf_(3, 0);
static void tree_vfail(struct tree *t, bool with_git, const char *fmt,
		       va_list ap)
{
	const git_error *ge = with_git ? git_error_last() : NULL;
	int n;

	if (!t)
		return;
	n = vsnprintf(t->error, sizeof(t->error), fmt, ap);
	if (ge && ge->message && n >= 0 && (size_t)n < sizeof(t->error))
		snprintf(t->error + n, sizeof(t->error) - n, ": %s", ge->message);
}

int tree_fail(struct tree *t, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tree_vfail(t, false, fmt, ap);
	va_end(ap);
	return r;
}

int tree_fail_git(struct tree *t, int git_error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tree_vfail(t, true, fmt, ap);
	va_end(ap);
	return tree_errno(git_error);
}

char *tree_git_message(const char *fmt, ...)
{
	const git_error *ge = git_error_last();
	char head[512];
	char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	if (asprintf(&s, "%s%s%s", head, ge && ge->message ? ": " : "",
		     ge && ge->message ? ge->message : "") < 0)
		return NULL;
	return s;
}

/* Why the last tree_open_* in this thread failed: there is no struct tree
 * to hold it then. */
static __thread char open_error[1024];

const char *tree_error(const struct tree *t)
{
	return t ? t->error : open_error;
}


const char *tree_path(const struct tree *t)
{
	return t->path;
}

bool tree_is_snapshot(const struct tree *t)
{
	return t->snapshot;
}

void tree_free(struct tree *t)
{
	if (!t)
		return;
	git_repository_free(t->repo);
	free(t->path);
	free(t);
	git_libgit2_shutdown();
}

static int tree_new(struct tree **ret)
{
	struct tree *t;
	int r;

	r = git_libgit2_init();
	if (r < 0)
		return -EIO;
	t = calloc(1, sizeof(*t));
	if (!t) {
		git_libgit2_shutdown();
		return -ENOMEM;
	}
	*ret = t;
	return 0;
}

static bool name_is_valid(const char *name)
{
	if (!name || !*name || name[0] == '.' || strlen(name) > 128)
		return false;
	for (const char *p = name; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789._-", *p))
			return false;
	return true;
}

static int mirror_setup_origin(git_repository *repo, const char *url)
{
	_cleanup_(git_remote_freep) git_remote *remote = NULL;
	int r;

	r = git_remote_lookup(&remote, repo, "origin");
	if (r == GIT_ENOTFOUND) {
		r = git_remote_create_with_fetchspec(
			&remote, repo, "origin", url, "+refs/heads/*:refs/heads/*");
		if (r < 0)
			return r;
		return git_remote_add_fetch(repo, "origin",
					    "+refs/tags/*:refs/tags/*");
	}
	if (r < 0)
		return r;
	if (!streq_ptr(git_remote_url(remote), url))
		return git_remote_set_url(repo, "origin", url);
	return 0;
}

static int open_mirror(struct tree *t, const char *cache_dir, const char *name,
		       const char *url)
{
	_cleanup_free_ char *dir = NULL;
	int r;

	if (!cache_dir || !url || !*url || !name_is_valid(name))
		return tree_fail(t, -EINVAL, "invalid tree name or url");
	if (asprintf(&dir, "%s/trees", cache_dir) < 0 ||
	    asprintf(&t->path, "%s/trees/%s.git", cache_dir, name) < 0)
		return -ENOMEM;
	r = mkdir_p(dir, 0755);
	if (r < 0)
		return tree_fail(t, r, "cannot create %s: %s", dir, strerror(-r));
	r = git_repository_open_bare(&t->repo, t->path);
	if (r == GIT_ENOTFOUND)
		r = git_repository_init(&t->repo, t->path, 1);
	if (r < 0)
		return tree_fail_git(t, r, "cannot open mirror %s", t->path);
	r = mirror_setup_origin(t->repo, url);
	if (r < 0)
		return tree_fail_git(t, r, "cannot set the remote of %s", t->path);
	return 0;
}

static int open_path(struct tree *t, const char *path, const char *scratch_dir)
{
	struct stat st;
	int r;

	if (!path)
		return -EINVAL;
	r = git_repository_open_ext(&t->repo, path,
				    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (r == 0) {
		t->path = strdup(git_repository_path(t->repo));
		return t->path ? 0 : -ENOMEM;
	}
	if (r != GIT_ENOTFOUND)
		return tree_fail_git(t, r, "cannot open %s", path);
	if (stat(path, &st) < 0)
		return tree_fail(t, negerrno(), "cannot open %s: %m", path);
	if (!S_ISDIR(st.st_mode))
		return tree_fail(t, -ENOTDIR, "%s is not a folder", path);
	if (!scratch_dir)
		return tree_fail(t, -ENOTSUP,
				 "%s is not a repository and no scratch folder was given",
				 path);
	return tree_snapshot_import(t, path, scratch_dir);
}

/* The message of a failed open outlives the struct that held it. */
static int open_failed(struct tree *t, int r)
{
	if (t && t->error[0])
		snprintf(open_error, sizeof(open_error), "%s", t->error);
	else
		snprintf(open_error, sizeof(open_error), "%s", strerror(-r));
	return r;
}

int tree_open_mirror(const char *cache_dir, const char *name, const char *url,
		     struct tree **ret)
{
	_cleanup_tree_ struct tree *t = NULL;
	int r;

	open_error[0] = 0;
	r = tree_new(&t);
	if (r < 0)
		return open_failed(NULL, r);
	r = open_mirror(t, cache_dir, name, url);
	if (r < 0)
		return open_failed(t, r);
	*ret = TAKE_PTR(t);
	return 0;
}

int tree_open_path(const char *path, const char *scratch_dir, struct tree **ret)
{
	_cleanup_tree_ struct tree *t = NULL;
	int r;

	open_error[0] = 0;
	r = tree_new(&t);
	if (r < 0)
		return open_failed(NULL, r);
	r = open_path(t, path, scratch_dir);
	if (r < 0)
		return open_failed(t, r);
	*ret = TAKE_PTR(t);
	return 0;
}

struct fetch_state {
	struct tree *tree;
	uint64_t deadline; /* CLOCK_MONOTONIC usec, 0: none */
	tree_progress_fn progress;
	void *userdata;
	bool timed_out, cancelled;
};

static int fetch_check_deadline(struct fetch_state *s)
{
	if (s->deadline && clock_mono_usec() > s->deadline) {
		s->timed_out = true;
		return -1;
	}
	return 0;
}

static int fetch_sideband(const char *str, int len, void *payload)
{
	(void)str;
	(void)len;
	return fetch_check_deadline(payload);
}

static int fetch_transfer(const git_indexer_progress *stats, void *payload)
{
	struct fetch_state *s = payload;
	struct tree_progress p = {
		.total_objects = stats->total_objects,
		.received_objects = stats->received_objects,
		.indexed_objects = stats->indexed_objects,
		.total_deltas = stats->total_deltas,
		.indexed_deltas = stats->indexed_deltas,
		.received_bytes = stats->received_bytes,
	};

	if (fetch_check_deadline(s) < 0)
		return -1;
	if (s->progress && s->progress(&p, s->userdata) != 0) {
		s->cancelled = true;
		return -1;
	}
	return 0;
}

/* Points the mirror's HEAD at the remote's default branch (master, main,
 * ...) so that "HEAD" means what it means upstream.  Best effort: an old
 * server may not say. */
static void mirror_follow_head(git_repository *repo, git_remote *remote)
{
	_cleanup_git_buf_ git_buf head = GIT_BUF_INIT;
	_cleanup_(git_reference_freep) git_reference *ref = NULL;

	if (git_remote_default_branch(&head, remote) < 0 || !head.ptr ||
	    !startswith(head.ptr, "refs/heads/"))
		return;
	if (git_reference_lookup(&ref, repo, head.ptr) == 0)
		(void)git_repository_set_head(repo, head.ptr);
}

int tree_fetch(struct tree *t, const char *refspec, uint64_t timeout_usec,
	       tree_progress_fn progress, void *userdata)
{
	_cleanup_(git_remote_freep) git_remote *remote = NULL;
	git_fetch_options opts = GIT_FETCH_OPTIONS_INIT;
	struct fetch_state s = {
		.tree = t,
		.deadline = timeout_usec ? clock_mono_usec() + timeout_usec : 0,
		.progress = progress,
		.userdata = userdata,
	};
	char *specs[1] = { (char *)refspec };
	git_strarray arr = { .strings = specs, .count = 1 };
	int r;

	if (t->snapshot)
		return tree_fail(t, -ENOTSUP, "an imported folder cannot be fetched");
	r = git_remote_lookup(&remote, t->repo, "origin");
	if (r < 0)
		return tree_fail_git(t, r, "no remote 'origin'");
	opts.callbacks.sideband_progress = fetch_sideband;
	opts.callbacks.transfer_progress = fetch_transfer;
	opts.callbacks.payload = &s;
	/* never prune: kfix's own branches (kfix/BUG/vN) live beside the
	 * mirrored ones until their push, and a fetch by another job in
	 * between must not delete them; a branch gone upstream only lingers */
	opts.prune = GIT_FETCH_NO_PRUNE;
	opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
	r = git_remote_fetch(remote, refspec ? &arr : NULL, &opts, "kfix fetch");
	if (s.timed_out)
		return tree_fail(t, -ETIMEDOUT, "fetch from %s timed out",
				 git_remote_url(remote));
	if (s.cancelled)
		return tree_fail(t, -ECANCELED, "fetch cancelled");
	if (r < 0)
		return tree_fail_git(t, r, "fetch from %s failed",
				     git_remote_url(remote));
	if (!refspec)
		mirror_follow_head(t->repo, remote);
	return 0;
}

int tree_lookup_commit(git_repository *repo, const char *rev, git_commit **ret)
{
	_cleanup_(git_object_freep) git_object *obj = NULL;
	git_object *peeled = NULL;
	int r;

	if (!rev || !*rev || strlen(rev) > REV_MAX)
		return GIT_EINVALIDSPEC;
	r = git_revparse_single(&obj, repo, rev);
	if (r < 0)
		return r;
	r = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	if (r < 0)
		return r;
	*ret = (git_commit *)peeled;
	return 0;
}

int tree_lookup_commit_t(struct tree *t, const char *rev, git_commit **ret)
{
	_cleanup_free_ char *esc = NULL;
	int r;

	r = tree_lookup_commit(t->repo, rev, ret);
	if (r == 0)
		return 0;
	esc = rev ? str_escape(rev, strlen(rev), 100) : NULL;
	if (r == GIT_ENOTFOUND || r == GIT_EINVALIDSPEC || r == GIT_EPEEL)
		return tree_fail(t, -ENOENT, "unknown commit '%s' in %s",
				 esc ? esc : "", t->path);
	if (r == GIT_EAMBIGUOUS)
		return tree_fail(t, -ENOENT,
				 "ambiguous revision '%s' in %s: use more digits",
				 esc ? esc : "", t->path);
	return tree_fail_git(t, r, "cannot resolve '%s'", esc ? esc : "");
}

int tree_resolve(struct tree *t, const char *rev, char ret_oid[TREE_OID_HEX])
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	int r;

	r = tree_lookup_commit_t(t, rev, &c);
	if (r < 0)
		return r;
	git_oid_tostr(ret_oid, TREE_OID_HEX, git_commit_id(c));
	return 0;
}

int tree_read_file(struct tree *t, const char *rev, const char *path,
		   size_t max, char **ret_data, size_t *ret_len)
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	_cleanup_(git_tree_freep) git_tree *root = NULL;
	_cleanup_(git_tree_entry_freep) git_tree_entry *e = NULL;
	_cleanup_(git_blob_freep) git_blob *blob = NULL;
	_cleanup_free_ char *esc = NULL;
	git_object_size_t size;
	char *data;
	int r;

	if (!path || !*path || path[0] == '/')
		return tree_fail(t, -EINVAL, "invalid path");
	if (max == 0)
		max = TREE_READ_MAX_DEFAULT;
	r = tree_lookup_commit_t(t, rev, &c);
	if (r < 0)
		return r;
	r = git_commit_tree(&root, c);
	if (r < 0)
		return tree_fail_git(t, r, "cannot read commit tree");
	esc = str_escape(path, strlen(path), 200);
	r = git_tree_entry_bypath(&e, root, path);
	if (r == GIT_ENOTFOUND)
		return tree_fail(t, -ENOENT, "no file '%s' at %.12s", esc ? esc : "",
				 git_oid_tostr_s(git_commit_id(c)));
	if (r < 0)
		return tree_fail_git(t, r, "cannot look up '%s'", esc ? esc : "");
	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return tree_fail(t, -EISDIR, "'%s' is not a file", esc ? esc : "");
	r = git_blob_lookup(&blob, t->repo, git_tree_entry_id(e));
	if (r < 0)
		return tree_fail_git(t, r, "cannot read '%s'", esc ? esc : "");
	size = git_blob_rawsize(blob);
	if (size > max)
		return tree_fail(t, -EFBIG, "'%s' is larger than %zu bytes",
				 esc ? esc : "", max);
	data = malloc(size + 1);
	if (!data)
		return -ENOMEM;
	memcpy(data, git_blob_rawcontent(blob), size);
	data[size] = 0;
	*ret_data = data;
	if (ret_len)
		*ret_len = size;
	return 0;
}

int tree_read_function(struct tree *t, const char *rev, const char *path,
		       const char *func, char **ret_text,
		       unsigned *ret_first_line)
{
	_cleanup_free_ char *data = NULL;
	size_t len, start, end;
	unsigned line;
	char *text;
	int r;

	r = tree_read_file(t, rev, path, 0, &data, &len);
	if (r < 0)
		return r;
	r = c_find_function(data, len, func, &start, &end, &line);
	if (r == -ENOENT)
		return tree_fail(t, r, "no definition of %.100s() in %.200s", func,
				 path);
	if (r < 0)
		return tree_fail(t, r, "cannot scan %.200s", path);
	text = strndup(data + start, end - start);
	if (!text)
		return -ENOMEM;
	*ret_text = text;
	if (ret_first_line)
		*ret_first_line = line;
	return 0;
}
