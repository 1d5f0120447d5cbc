/* Commits, branches, notes and push: what the publisher hands to
 * maintainers. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "common/strutil.h"
#include "common/url.h"
#include "repro/hostkey.h"
#include "repro/tree-internal.h"

#define PUSH_REFSPECS_MAX 64

static int make_signature(const struct tree_signature *s, git_signature **ret)
{
	if (!s || !s->name || !s->email)
		return git_signature_new(ret, "kfix", "kfix@localhost",
					 (git_time_t)time(NULL), 0);
	return git_signature_new(ret, s->name, s->email,
				 (git_time_t)(s->time ? s->time : time(NULL)),
				 s->offset);
}

/* Stores the worktree file path as a blob of t's repository. */
static int blob_from_worktree(struct tree *t, const char *dir, const char *path,
			      git_oid *ret_oid, git_filemode_t *ret_mode)
{
	_cleanup_free_ char *full = NULL, *data = NULL;
	struct stat st;
	size_t len = 0;
	int r;

	if (tree_path_check(path, NULL) < 0)
		return tree_fail(t, -EPERM, "forbidden path %.200s", path);
	if (asprintf(&full, "%s/%s", dir, path) < 0)
		return -ENOMEM;
	if (lstat(full, &st) < 0)
		return tree_fail(t, negerrno(), "cannot stat %.200s", path);
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlink(full, target, sizeof(target));

		if (n < 0 || (size_t)n >= sizeof(target))
			return tree_fail(t, -EINVAL, "bad symlink %.200s", path);
		r = git_blob_create_from_buffer(ret_oid, t->repo, target, (size_t)n);
		*ret_mode = GIT_FILEMODE_LINK;
	} else {
		r = read_file_bounded(full, TREE_PATCH_MAX, &data, &len);
		if (r < 0)
			return tree_fail(t, r, "cannot read %.200s", path);
		r = git_blob_create_from_buffer(ret_oid, t->repo, data, len);
		*ret_mode = (st.st_mode & 0111) ? GIT_FILEMODE_BLOB_EXECUTABLE :
						  GIT_FILEMODE_BLOB;
	}
	if (r < 0)
		return tree_fail_git(t, r, "cannot store %.200s", path);
	return 0;
}

int tree_commit(struct tree *t, const char *dir, const char *base,
		const char *message, const struct tree_signature *author,
		const struct tree_signature *committer,
		char ret_oid[TREE_OID_HEX])
{
	_cleanup_(git_repository_freep) git_repository *w = NULL;
	_cleanup_(git_diff_freep) git_diff *d = NULL;
	_cleanup_(git_commit_freep) git_commit *bc = NULL;
	_cleanup_(git_tree_freep) git_tree *btree = NULL, *ntree = NULL;
	_cleanup_(git_signature_freep) git_signature *as = NULL, *cs = NULL;
	_cleanup_free_ git_tree_update *ups = NULL;
	_cleanup_free_ git_oid *oids = NULL;
	_cleanup_free_ char *msg = NULL;
	git_oid tree_oid, commit_oid;
	size_t n;
	int r;

	if (!message || !*message)
		return tree_fail(t, -EINVAL, "empty commit message");
	r = tree_lookup_commit_t(t, base, &bc);
	if (r < 0)
		return r;
	r = tree_open_worktree(dir, &w);
	if (r < 0)
		return tree_fail_git(t, r, "cannot open worktree %s", dir);
	r = tree_worktree_diff(w, git_oid_tostr_s(git_commit_id(bc)), &d);
	if (r < 0)
		return tree_fail_git(t, r, "cannot diff worktree %s", dir);
	n = git_diff_num_deltas(d);
	ups = calloc(n ? n : 1, sizeof(*ups));
	oids = calloc(n ? n : 1, sizeof(*oids));
	if (!ups || !oids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *dl = git_diff_get_delta(d, i);
		git_filemode_t mode;

		if (dl->status == GIT_DELTA_DELETED) {
			ups[i] = (git_tree_update){ .action = GIT_TREE_UPDATE_REMOVE,
						    .path = dl->old_file.path };
			continue;
		}
		r = blob_from_worktree(t, dir, dl->new_file.path, &oids[i], &mode);
		if (r < 0)
			return r;
		ups[i] = (git_tree_update){ .action = GIT_TREE_UPDATE_UPSERT,
					    .id = oids[i],
					    .filemode = mode,
					    .path = dl->new_file.path };
	}
	r = git_commit_tree(&btree, bc);
	if (r == 0)
		r = git_tree_create_updated(&tree_oid, t->repo, btree, n, ups);
	if (r == 0)
		r = git_tree_lookup(&ntree, t->repo, &tree_oid);
	if (r < 0)
		return tree_fail_git(t, r, "cannot build the commit's tree");
	r = make_signature(author, &as);
	if (r == 0)
		r = make_signature(committer ? committer : author, &cs);
	if (r < 0)
		return tree_fail_git(t, r, "bad author or committer");
	if (asprintf(&msg, "%s%s", message,
		     endswith(message, "\n") ? "" : "\n") < 0)
		return -ENOMEM;
	r = git_commit_create(&commit_oid, t->repo, NULL, as, cs, NULL, msg, ntree,
			      1, (const git_commit **)&bc);
	if (r < 0)
		return tree_fail_git(t, r, "cannot create commit");
	git_oid_tostr(ret_oid, TREE_OID_HEX, &commit_oid);
	return 0;
}

int tree_branch_create(struct tree *t, const char *name, const char *oid,
		       bool force)
{
	_cleanup_(git_reference_freep) git_reference *ref = NULL, *nref = NULL;
	_cleanup_free_ char *full = NULL;
	git_oid id;
	int valid = 0, r;

	if (!name || asprintf(&full, "refs/heads/%s", name) < 0)
		return -ENOMEM;
	if (git_reference_name_is_valid(&valid, full) < 0 || !valid)
		return tree_fail(t, -EINVAL, "invalid branch name '%.200s'", name);
	if (!oid || git_oid_fromstr(&id, oid) < 0)
		return tree_fail(t, -EINVAL, "invalid commit id");
	r = git_reference_lookup(&ref, t->repo, full);
	if (r == 0) {
		const git_oid *cur = git_reference_target(ref);

		if (cur && git_oid_equal(cur, &id))
			return 0;
		if (!force)
			return tree_fail(t, -EEXIST, "branch %s exists at %s", name,
					 cur ? git_oid_tostr_s(cur) : "?");
	} else if (r != GIT_ENOTFOUND) {
		return tree_fail_git(t, r, "cannot look up %s", full);
	}
	r = git_reference_create(&nref, t->repo, full, &id, force, "kfix branch");
	if (r < 0)
		return tree_fail_git(t, r, "cannot create branch %s", name);
	return 0;
}

int tree_note_add(struct tree *t, const char *notes_ref, const char *oid,
		  const char *text, const struct tree_signature *sig)
{
	_cleanup_(git_note_freep) git_note *old = NULL;
	_cleanup_(git_signature_freep) git_signature *s = NULL;
	git_oid id, out;
	int r;

	if (!notes_ref || !text || !oid || git_oid_fromstr(&id, oid) < 0)
		return tree_fail(t, -EINVAL, "invalid note arguments");
	r = git_note_read(&old, t->repo, notes_ref, &id);
	if (r == 0 && streq_ptr(git_note_message(old), text))
		return 0;
	if (r < 0 && r != GIT_ENOTFOUND)
		return tree_fail_git(t, r, "cannot read note");
	r = make_signature(sig, &s);
	if (r < 0)
		return tree_fail_git(t, r, "bad signature");
	r = git_note_create(&out, t->repo, notes_ref, s, s, &id, text, 1);
	if (r < 0)
		return tree_fail_git(t, r, "cannot write note");
	return 0;
}

struct push_state {
	struct tree *t;
	const struct tree_push_auth *auth;
	int port;
	bool key_offered, token_offered;
	uint64_t deadline;
	bool timed_out;
	bool hostkey_refused;
	char reason[512];
	char rejected[512];
};

/* Port of an ssh://host:port/ URL, -1 when absent (scp-like or default). */
static int url_port(const char *text)
{
	struct url u;

	if (!startswith(text, "ssh://") && !startswith(text, "git+ssh://"))
		return -1;
	return url_parse(text, &u) >= 0 && u.port ? u.port : -1;
}

/* 0 when host's key is in known_hosts; otherwise a reason in s. */
static int check_known_host(struct push_state *s, const git_cert_hostkey *hk,
			    const char *host)
{
	const struct hostkey_check c = {
		.known_hosts = s->auth ? s->auth->known_hosts : NULL,
		.host = host,
		.port = s->port,
	};
	enum hostkey_verdict v = HOSTKEY_UNSUPPORTED;
	_cleanup_free_ char *m = NULL;
	int r = 0;

	if (hk->type & GIT_CERT_SSH_RAW)
		r = hostkey_verify(&c, hk->hostkey, hk->hostkey_len, &v);
	if (r < 0)
		return r;
	if (v == HOSTKEY_MATCH)
		return 0;
	s->hostkey_refused = true;
	if (hostkey_message(&c, v, &m) < 0)
		return -ENOMEM;
	snprintf(s->reason, sizeof(s->reason), "%s", m);
	return -EKEYREJECTED;
}

static int push_cert_cb(git_cert *cert, int valid, const char *host, void *payload)
{
	struct push_state *s = payload;

	if (cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2)
		return valid ? 0 : GIT_PASSTHROUGH; /* TLS: libgit2's own verdict */
	return check_known_host(s, (const git_cert_hostkey *)cert, host) < 0 ?
		       GIT_ECERTIFICATE :
		       0;
}

static int push_cred_cb(git_credential **out, const char *url,
			const char *user_from_url, unsigned int allowed,
			void *payload)
{
	struct push_state *s = payload;
	const struct tree_push_auth *a = s->auth;
	const char *user;
	_cleanup_free_ char *pub = NULL;

	(void)url;
	if (!a) {
		snprintf(s->reason, sizeof(s->reason), "authentication required");
		return GIT_EAUTH;
	}
	user = a->username ? a->username : user_from_url ? user_from_url : "git";
	if (allowed & GIT_CREDENTIAL_USERNAME)
		return git_credential_username_new(out, user);
	/* libgit2 asks again after a refusal: each credential is offered once. */
	if ((allowed & GIT_CREDENTIAL_SSH_KEY) && a->ssh_key && !s->key_offered) {
		const char *pubkey = a->ssh_pubkey;

		s->key_offered = true;
		if (!pubkey && asprintf(&pub, "%s.pub", a->ssh_key) >= 0 &&
		    access(pub, R_OK) == 0)
			pubkey = pub;
		return git_credential_ssh_key_new(out, user, pubkey, a->ssh_key, NULL);
	}
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && a->token &&
	    !s->token_offered) {
		s->token_offered = true;
		return git_credential_userpass_plaintext_new(
			out, a->username ? a->username : user_from_url ? user_from_url : "kfix",
			a->token);
	}
	snprintf(s->reason, sizeof(s->reason), "%s",
		 s->key_offered || s->token_offered ?
			 "authentication failed: credentials refused" :
			 "no usable credentials configured");
	return GIT_EAUTH;
}

static int push_update_cb(const char *refname, const char *status, void *payload)
{
	struct push_state *s = payload;

	if (status && !s->rejected[0])
		snprintf(s->rejected, sizeof(s->rejected), "%.200s rejected: %.200s",
			 refname, status);
	return 0;
}

static int push_progress_cb(unsigned current, unsigned total, size_t bytes,
			    void *payload)
{
	struct push_state *s = payload;

	(void)current;
	(void)total;
	(void)bytes;
	if (s->deadline && clock_mono_usec() > s->deadline) {
		s->timed_out = true;
		return -1;
	}
	return 0;
}

static int push_sideband_cb(const char *str, int len, void *payload)
{
	(void)str;
	(void)len;
	return push_progress_cb(0, 0, 0, payload);
}

int tree_push(struct tree *t, const char *url, const char *const *refspecs,
	      const struct tree_push_auth *auth, uint64_t timeout_usec)
{
	_cleanup_(git_remote_freep) git_remote *remote = NULL;
	git_push_options opts = GIT_PUSH_OPTIONS_INIT;
	struct push_state s = { .t = t, .auth = auth };
	char *specs[PUSH_REFSPECS_MAX];
	git_strarray arr = { .strings = specs };
	int r;

	if (!url || !refspecs || !refspecs[0])
		return tree_fail(t, -EINVAL, "nothing to push");
	for (; refspecs[arr.count]; arr.count++) {
		if (arr.count >= PUSH_REFSPECS_MAX)
			return tree_fail(t, -E2BIG, "too many refspecs");
		specs[arr.count] = (char *)refspecs[arr.count];
	}
	s.port = url_port(url);
	s.deadline = timeout_usec ? clock_mono_usec() + timeout_usec : 0;
	r = git_remote_create_anonymous(&remote, t->repo, url);
	if (r < 0)
		return tree_fail_git(t, r, "invalid remote URL");
	opts.callbacks.certificate_check = push_cert_cb;
	opts.callbacks.credentials = push_cred_cb;
	opts.callbacks.push_update_reference = push_update_cb;
	opts.callbacks.push_transfer_progress = push_progress_cb;
	opts.callbacks.sideband_progress = push_sideband_cb;
	opts.callbacks.payload = &s;
	r = git_remote_push(remote, &arr, &opts);
	if (s.timed_out)
		return tree_fail(t, -ETIMEDOUT, "push timed out");
	if (r < 0 && s.reason[0]) {
		return tree_fail(t, s.hostkey_refused ? -EPERM : -EACCES, "push refused: %s",
				 s.reason);
	}
	if (r < 0)
		return tree_fail_git(t, r, "push of %s%s to %s failed", refspecs[0],
				     refspecs[1] ? " ..." : "", url);
	if (s.rejected[0])
		return tree_fail(t, -EREMOTEIO, "push: %s", s.rejected);
	return 0;
}

int tree_format_patch(struct tree *t, const char *rev, const char *prefix,
		      unsigned reroll, char **ret_mail)
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	_cleanup_git_buf_ git_buf buf = GIT_BUF_INIT;
	git_email_create_options opts = GIT_EMAIL_CREATE_OPTIONS_INIT;
	char *s;
	int r;

	r = tree_lookup_commit_t(t, rev, &c);
	if (r < 0)
		return r;
	if (git_commit_parentcount(c) != 1)
		return tree_fail(t, -EINVAL, "only a commit with one parent makes a patch");
	opts.subject_prefix = prefix ? prefix : "PATCH";
	opts.reroll_number = reroll > 1 ? reroll : 0;
	r = git_email_create_from_commit(&buf, c, &opts);
	if (r < 0)
		return tree_fail_git(t, r, "cannot format the patch");
	if (buf.size > TREE_PATCH_MAX)
		return tree_fail(t, -E2BIG, "patch is too large");
	s = strndup(buf.ptr, buf.size);
	if (!s)
		return -ENOMEM;
	*ret_mail = s;
	return 0;
}
