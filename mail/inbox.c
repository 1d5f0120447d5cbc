/* public-inbox v2 archives through libgit2. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>

#include "common/fileio.h"
#include "common/strutil.h"
#include "inbox.h"
#include "mail-internal.h"

#define INBOX_EPOCH_MAX 10000

struct inbox {
	char *url;
	char *cache;
};

DEFINE_CLEANUP(git_repository, git_repository_free)
DEFINE_CLEANUP(git_remote, git_remote_free)
DEFINE_CLEANUP(git_revwalk, git_revwalk_free)
DEFINE_CLEANUP(git_commit, git_commit_free)
DEFINE_CLEANUP(git_tree, git_tree_free)
DEFINE_CLEANUP(git_tree_entry, git_tree_entry_free)
DEFINE_CLEANUP(git_blob, git_blob_free)
DEFINE_CLEANUP(git_reference, git_reference_free)

static const char *git_msg(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown libgit2 error";
}

int inbox_open(const char *url, const char *cache_dir, struct inbox **ret,
	       char **ret_error)
{
	_cleanup_free_ struct inbox *ib = calloc(1, sizeof(*ib));
	int r;

	if (!ib)
		return -ENOMEM;
	r = mkdir_p(cache_dir, 0750);
	if (r < 0)
		return error_set(ret_error, r, "%s: %s", cache_dir, strerror(-r));
	ib->url = strdup(url);
	ib->cache = strdup(cache_dir);
	if (!ib->url || !ib->cache) {
		free(ib->url);
		free(ib->cache);
		return -ENOMEM;
	}
	git_libgit2_init();
	*ret = TAKE_PTR(ib);
	return 0;
}

void inbox_free(struct inbox *ib)
{
	if (!ib)
		return;
	free(ib->url);
	free(ib->cache);
	free(ib);
	git_libgit2_shutdown();
}

/* Mirrors epoch n into cache/n.git; -ENOENT when the archive has none. */
static int epoch_fetch(struct inbox *ib, int n, git_repository **ret, char **ret_error)
{
	_cleanup_(git_repository_freep) git_repository *repo = NULL;
	_cleanup_(git_remote_freep) git_remote *remote = NULL;
	_cleanup_free_ char *path = NULL, *url = NULL;
	char *spec = "+refs/heads/*:refs/heads/*";
	git_strarray specs = { &spec, 1 };
	git_fetch_options fo = GIT_FETCH_OPTIONS_INIT;
	git_remote_create_options ro = GIT_REMOTE_CREATE_OPTIONS_INIT;
	struct stat st;

	if (asprintf(&path, "%s/%d.git", ib->cache, n) < 0 ||
	    asprintf(&url, "%s/git/%d.git", ib->url, n) < 0)
		return -ENOMEM;
	if (stat(path, &st) == 0) {
		if (git_repository_open_bare(&repo, path) < 0)
			return error_set(ret_error, -EIO, "%s: %s", path, git_msg());
	} else if (git_repository_init(&repo, path, 1) < 0) {
		return error_set(ret_error, -EIO, "%s: %s", path, git_msg());
	}
	/* no url.*.insteadOf from the host's git config: the archive is the
	 * configured one (and libgit2 1.5 leaks in the insteadOf lookup) */
	ro.repository = repo;
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	if (git_remote_create_with_opts(&remote, url, &ro) < 0)
		return error_set(ret_error, -EIO, "%s: %s", url, git_msg());
	fo.prune = GIT_FETCH_NO_PRUNE;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	if (git_remote_fetch(remote, &specs, &fo, NULL) < 0)
		return error_set(ret_error, -ENOENT, "fetching %s: %s", url, git_msg());
	*ret = TAKE_PTR(repo);
	return 0;
}

static int head_of(git_repository *repo, git_oid *ret)
{
	_cleanup_(git_reference_freep) git_reference *ref = NULL, *direct = NULL;

	if (git_reference_lookup(&ref, repo, "refs/heads/master") < 0 &&
	    git_reference_lookup(&ref, repo, "refs/heads/main") < 0)
		return -ENOENT;
	if (git_reference_resolve(&direct, ref) < 0)
		return -ENOENT;
	git_oid_cpy(ret, git_reference_target(direct));
	return 0;
}

static int message_of(git_repository *repo, const git_oid *id, git_blob **ret)
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	_cleanup_(git_tree_freep) git_tree *t = NULL;
	_cleanup_(git_tree_entry_freep) git_tree_entry *e = NULL;

	if (git_commit_lookup(&c, repo, id) < 0 || git_commit_tree(&t, c) < 0)
		return -EIO;
	/* a deletion (public-inbox-learn rm) leaves a commit without "m" */
	if (git_tree_entry_bypath(&e, t, "m") < 0)
		return -ENOENT;
	if (git_blob_lookup(ret, repo, git_tree_entry_id(e)) < 0)
		return -EIO;
	return 0;
}

static int parse_pos(const char *pos, int *ret_epoch, git_oid *ret_oid, bool *ret_has)
{
	const char *colon;
	int e;

	*ret_epoch = 0;
	*ret_has = false;
	if (!pos || !*pos)
		return 0;
	colon = strchr(pos, ':');
	if (!colon)
		return -EINVAL;
	{
		_cleanup_free_ char *num = strndup(pos, (size_t)(colon - pos));

		if (!num || parse_int(num, &e) < 0 || e < 0 || e > INBOX_EPOCH_MAX)
			return -EINVAL;
	}
	*ret_epoch = e;
	if (colon[1] == '\0' || colon[1] == '\n')
		return 0;
	if (strlen(colon + 1) < GIT_OID_HEXSZ || git_oid_fromstrn(ret_oid, colon + 1, GIT_OID_HEXSZ) < 0)
		return -EINVAL;
	*ret_has = true;
	return 0;
}

static char *pos_format(int epoch, const git_oid *oid)
{
	char hex[GIT_OID_HEXSZ + 1] = "";
	char *s;

	if (oid)
		git_oid_tostr(hex, sizeof(hex), oid);
	return asprintf(&s, "%d:%s", epoch, hex) < 0 ? NULL : s;
}

struct walk_state {
	inbox_message_fn fn;
	void *userdata;
	int max, count, epoch;
	git_oid last;
	bool has_last;
};

/* Walks epoch's new commits; stops early at st->max. */
static int walk_epoch(git_repository *repo, struct walk_state *st, char **ret_error)
{
	_cleanup_(git_revwalk_freep) git_revwalk *w = NULL;
	git_oid head, id;

	if (head_of(repo, &head) < 0)
		return 0; /* an empty epoch */
	if (git_revwalk_new(&w, repo) < 0)
		return error_set(ret_error, -EIO, "revwalk: %s", git_msg());
	git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (git_revwalk_push(w, &head) < 0)
		return error_set(ret_error, -EIO, "revwalk: %s", git_msg());
	if (st->has_last && git_revwalk_hide(w, &st->last) < 0)
		return error_set(ret_error, -ESTALE, "the stored position is not in the archive: %s",
			    git_msg());
	while (st->count < st->max && git_revwalk_next(&id, w) == 0) {
		_cleanup_(git_blob_freep) git_blob *b = NULL;
		int r = message_of(repo, &id, &b);

		if (r == 0 && (size_t)git_blob_rawsize(b) <= MAIL_SIZE_MAX) {
			const char *raw = git_blob_rawcontent(b);
			size_t len = (size_t)git_blob_rawsize(b);
			_cleanup_(mail_freep) struct mail *m = NULL;
			_cleanup_free_ char *pos = pos_format(st->epoch, &id);

			if (!pos)
				return -ENOMEM;
			(void)mail_parse(raw, len, 0, &m, NULL);
			r = st->fn(m, raw, len, pos, st->userdata);
			if (r < 0)
				return error_set(ret_error, r, "message %s was not taken: %s", pos,
					    strerror(-r));
			st->count++;
		} else if (r == -EIO) {
			return error_set(ret_error, r, "reading a commit: %s", git_msg());
		}
		git_oid_cpy(&st->last, &id);
		st->has_last = true;
	}
	return 0;
}

/* Whether the archive has begun epoch n (its mirror is dropped if not). */
static bool epoch_exists(struct inbox *ib, int n)
{
	_cleanup_(git_repository_freep) git_repository *repo = NULL;
	_cleanup_free_ char *path = NULL;
	git_oid head;

	if (n > INBOX_EPOCH_MAX || asprintf(&path, "%s/%d.git", ib->cache, n) < 0)
		return false;
	if (epoch_fetch(ib, n, &repo, NULL) == 0 && head_of(repo, &head) == 0)
		return true;
	(void)rm_rf(path);
	return false;
}

/* Whether the archive has epoch n, asked of the remote without fetching
 * it: a list's old epochs are large, and the head needs only the last. */
static int epoch_listed(struct inbox *ib, int n, bool *ret)
{
	_cleanup_(git_remote_freep) git_remote *remote = NULL;
	_cleanup_free_ char *url = NULL;
	const git_remote_head **heads;
	size_t count = 0;

	if (asprintf(&url, "%s/git/%d.git", ib->url, n) < 0)
		return -ENOMEM;
	if (git_remote_create_detached(&remote, url) < 0)
		return -EIO;
	/* an epoch that cannot be listed is one the archive has not begun */
	*ret = git_remote_connect(remote, GIT_DIRECTION_FETCH, NULL, NULL, NULL) == 0 &&
	       git_remote_ls(&heads, &count, remote) == 0 && count > 0;
	return 0;
}

int inbox_head(struct inbox *ib, char **ret_pos, char **ret_error)
{
	_cleanup_(git_repository_freep) git_repository *repo = NULL;
	git_oid head;
	bool more = true;
	char *pos;
	int n = 0, r;

	while (more && n < INBOX_EPOCH_MAX) {
		r = epoch_listed(ib, n + 1, &more);
		if (r < 0)
			return error_set(ret_error, r, "listing epoch %d: %s", n + 1, git_msg());
		if (more)
			n++;
	}
	if (epoch_fetch(ib, n, &repo, ret_error) < 0)
		return -EAGAIN;
	pos = pos_format(n, head_of(repo, &head) == 0 ? &head : NULL);
	if (!pos)
		return -ENOMEM;
	*ret_pos = pos;
	return 0;
}

int inbox_poll(struct inbox *ib, const char *pos, int max, inbox_message_fn fn,
	       void *userdata, char **ret_pos, int *ret_count, char **ret_error)
{
	struct walk_state st = { .fn = fn, .userdata = userdata, .max = max };
	int epoch, r;

	if (parse_pos(pos, &epoch, &st.last, &st.has_last) < 0)
		return error_set(ret_error, -EINVAL, "bad inbox position");
	for (;;) {
		_cleanup_(git_repository_freep) git_repository *repo = NULL;

		/* the current epoch must fetch: a failure is the network's */
		r = epoch_fetch(ib, epoch, &repo, ret_error);
		if (r < 0) {
			r = -EAGAIN;
			break;
		}
		st.epoch = epoch;
		r = walk_epoch(repo, &st, ret_error);
		if (r < 0 || st.count >= st.max || !epoch_exists(ib, epoch + 1))
			break;
		epoch++;
		st.has_last = false;
	}
	*ret_pos = pos_format(epoch, st.has_last ? &st.last : NULL);
	if (!*ret_pos)
		return -ENOMEM;
	if (ret_count)
		*ret_count = st.count;
	return r;
}
