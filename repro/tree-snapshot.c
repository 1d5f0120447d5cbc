/* Importing a plain source folder (no .git) as a one-commit repository.
 *
 * The scratch repository keeps its index, so a later import only re-reads
 * files whose stat data changed.  The snapshot commit has a fixed author
 * and date: the same folder content always gives the same commit id, so
 * build caches keyed by commit stay valid.  The source folder itself is
 * never written. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
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
	if (r == 0)
		r = git_index_add_all(index, NULL, GIT_INDEX_ADD_DEFAULT, NULL, NULL);
	if (r == 0)
		r = git_index_update_all(index, NULL, NULL, NULL);
	if (r == 0)
		r = git_index_write(index);
	if (r == 0)
		r = git_index_write_tree(&tree_oid, index);
	if (r == 0)
		r = snapshot_commit(t->repo, &tree_oid);
	if (r < 0)
		return tree_fail_git(t, r, "cannot import %s", src);
	return 0;
}
