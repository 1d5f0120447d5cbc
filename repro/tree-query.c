/* History and content queries on a tree: grep, log, blame, ancestry. */
#include "config.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "repro/tree-internal.h"

#define GREP_BLOB_MAX (16u << 20)
#define LOG_WALK_DEFAULT 100000

struct grep_state {
	struct tree *t;
	const char *prefix;
	size_t prefix_len;
	const char *needle;
	size_t needle_len;
	regex_t re;
	bool use_re;
	size_t max_hits, hits;
	tree_grep_fn cb;
	void *userdata;
	char path[4096];
	int error;
};

/* Reports the line around each match in data[0..len) (NUL-terminated). */
static int grep_blob(struct grep_state *g, const char *path, const char *data,
		     size_t len)
{
	size_t pos = 0, counted = 0;
	unsigned line_no = 1;

	while (pos < len) {
		size_t m;

		if (g->use_re) {
			regmatch_t rm;

			if (regexec(&g->re, data + pos, 1, &rm,
				    pos > 0 ? REG_NOTBOL : 0) != 0)
				return 0;
			m = pos + (size_t)rm.rm_so;
		} else {
			const char *p = memmem(data + pos, len - pos, g->needle,
					       g->needle_len);
			if (!p)
				return 0;
			m = (size_t)(p - data);
		}
		size_t ls = m, le = m;
		while (ls > 0 && data[ls - 1] != '\n')
			ls--;
		while (le < len && data[le] != '\n')
			le++;
		for (; counted < ls; counted++)
			line_no += data[counted] == '\n';
		g->hits++;
		if (g->cb && g->cb(path, line_no, data + ls, le - ls, g->userdata))
			return 1;
		if (g->max_hits && g->hits >= g->max_hits)
			return 1;
		pos = le + 1;
	}
	return 0;
}

static bool prefix_wants_dir(const struct grep_state *g, const char *dir)
{
	size_t n = strlen(dir);

	if (!g->prefix_len)
		return true;
	/* dir ("a/b/") is inside the prefix or leads to it. */
	return strncmp(dir, g->prefix, MIN(n, g->prefix_len)) == 0;
}

static int grep_walk_cb(const char *root, const git_tree_entry *e, void *payload)
{
	struct grep_state *g = payload;
	_cleanup_(git_blob_freep) git_blob *blob = NULL;
	_cleanup_free_ char *copy = NULL;
	git_object_size_t size;
	int r;

	if ((size_t)snprintf(g->path, sizeof(g->path), "%s%s", root,
			     git_tree_entry_name(e)) >= sizeof(g->path) - 1)
		return 1;
	if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
		strcat(g->path, "/");
		return prefix_wants_dir(g, g->path) ? 0 : 1;
	}
	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB ||
	    git_tree_entry_filemode(e) == GIT_FILEMODE_LINK)
		return 0;
	if (g->prefix_len && strncmp(g->path, g->prefix, g->prefix_len) != 0)
		return 0;
	r = git_blob_lookup(&blob, g->t->repo, git_tree_entry_id(e));
	if (r < 0) {
		g->error = tree_fail_git(g->t, r, "cannot read %s", g->path);
		return -1;
	}
	size = git_blob_rawsize(blob);
	if (size == 0 || size > GREP_BLOB_MAX || git_blob_is_binary(blob))
		return 0;
	/* regexec needs a terminated string. */
	copy = malloc(size + 1);
	if (!copy) {
		g->error = -ENOMEM;
		return -1;
	}
	memcpy(copy, git_blob_rawcontent(blob), size);
	copy[size] = 0;
	if (grep_blob(g, g->path, copy, size))
		return -1;
	return 0;
}

static char *regex_quote(const char *s)
{
	char *out = malloc(strlen(s) * 2 + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (strchr("\\^$.|?*+()[]{}", *s))
			*o++ = '\\';
		*o++ = *s;
	}
	*o = 0;
	return out;
}

static void regfreep(regex_t **re)
{
	if (*re)
		regfree(*re);
}

int tree_grep(struct tree *t, const char *rev, const char *path_prefix,
	      const char *pattern, unsigned flags, size_t max_hits,
	      tree_grep_fn cb, void *userdata)
{
	/* g outlives re, which points into it. */
	_cleanup_free_ struct grep_state *g = NULL;
	_cleanup_(regfreep) regex_t *re = NULL;
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	_cleanup_(git_tree_freep) git_tree *root = NULL;
	_cleanup_free_ char *quoted = NULL;
	int r;

	if (!pattern || !*pattern || strlen(pattern) > 4096)
		return tree_fail(t, -EINVAL, "empty or too long pattern");
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	*g = (struct grep_state){
		.t = t,
		.prefix = path_prefix ? path_prefix : "",
		.prefix_len = path_prefix ? strlen(path_prefix) : 0,
		.needle = pattern,
		.needle_len = strlen(pattern),
		.max_hits = max_hits,
		.cb = cb,
		.userdata = userdata,
	};
	if (flags & (TREE_GREP_REGEX | TREE_GREP_ICASE)) {
		const char *expr = pattern;
		char msg[256];

		if (!(flags & TREE_GREP_REGEX)) {
			quoted = regex_quote(pattern);
			if (!quoted)
				return -ENOMEM;
			expr = quoted;
		}
		r = regcomp(&g->re, expr,
			    REG_EXTENDED | REG_NEWLINE |
				    ((flags & TREE_GREP_ICASE) ? REG_ICASE : 0));
		if (r != 0) {
			regerror(r, &g->re, msg, sizeof(msg));
			return tree_fail(t, -EINVAL, "bad regular expression: %s", msg);
		}
		re = &g->re;
		g->use_re = true;
	}
	r = tree_lookup_commit_t(t, rev, &c);
	if (r < 0)
		return r;
	r = git_commit_tree(&root, c);
	if (r < 0)
		return tree_fail_git(t, r, "cannot read commit tree");
	r = git_tree_walk(root, GIT_TREEWALK_PRE, grep_walk_cb, g);
	if (g->error < 0)
		return g->error;
	if (r < 0 && r != GIT_EUSER && r != -1)
		return tree_fail_git(t, r, "tree walk failed");
	return (int)MIN(g->hits, (size_t)0x7fffffff);
}

static int walk_start(struct tree *t, const char *rev, git_revwalk **ret)
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	_cleanup_(git_revwalk_freep) git_revwalk *w = NULL;
	int r;

	if (t->snapshot)
		return tree_fail(t, -ENOTSUP, "an imported folder has no history");
	r = tree_lookup_commit_t(t, rev ? rev : "HEAD", &c);
	if (r < 0)
		return r;
	r = git_revwalk_new(&w, t->repo);
	if (r < 0)
		return tree_fail_git(t, r, "revwalk");
	git_revwalk_sorting(w, GIT_SORT_TIME);
	r = git_revwalk_push(w, git_commit_id(c));
	if (r < 0)
		return tree_fail_git(t, r, "revwalk");
	*ret = TAKE_PTR(w);
	return 0;
}

int tree_log_grep(struct tree *t, const char *from_rev, const char *needle,
		  size_t max_commits, char ret_commit[TREE_OID_HEX])
{
	_cleanup_(git_revwalk_freep) git_revwalk *w = NULL;
	size_t n = 0, nl;
	git_oid oid;
	int r;

	if (!needle || !*needle)
		return tree_fail(t, -EINVAL, "empty needle");
	nl = strlen(needle);
	r = walk_start(t, from_rev, &w);
	if (r < 0)
		return r;
	while ((max_commits == 0 || n < max_commits) &&
	       (r = git_revwalk_next(&oid, w)) == 0) {
		_cleanup_(git_commit_freep) git_commit *c = NULL;
		const char *msg;

		n++;
		r = git_commit_lookup(&c, t->repo, &oid);
		if (r < 0)
			return tree_fail_git(t, r, "cannot read commit");
		msg = git_commit_message_raw(c);
		if (msg && memmem(msg, strlen(msg), needle, nl)) {
			git_oid_tostr(ret_commit, TREE_OID_HEX, &oid);
			return 1;
		}
	}
	if (r < 0 && r != GIT_ITEROVER)
		return tree_fail_git(t, r, "revwalk");
	return 0;
}

/* Whether c changes one of paths relative to its first parent. */
static int commit_touches(git_commit *c, const char *const *paths)
{
	_cleanup_(git_tree_freep) git_tree *tr = NULL, *ptr = NULL;
	_cleanup_(git_commit_freep) git_commit *parent = NULL;
	int r;

	r = git_commit_tree(&tr, c);
	if (r < 0)
		return r;
	if (git_commit_parentcount(c) > 0) {
		r = git_commit_parent(&parent, c, 0);
		if (r < 0)
			return r;
		r = git_commit_tree(&ptr, parent);
		if (r < 0)
			return r;
	}
	for (const char *const *p = paths; *p; p++) {
		_cleanup_(git_tree_entry_freep) git_tree_entry *a = NULL, *b = NULL;
		bool ha, hb;

		ha = git_tree_entry_bypath(&a, tr, *p) == 0;
		hb = ptr && git_tree_entry_bypath(&b, ptr, *p) == 0;
		if (ha != hb)
			return 1;
		if (ha && !git_oid_equal(git_tree_entry_id(a), git_tree_entry_id(b)))
			return 1;
	}
	return 0;
}

static int report_commit(git_commit *c, tree_log_fn cb, void *userdata)
{
	const git_signature *a = git_commit_author(c);
	char oid[TREE_OID_HEX];
	struct tree_commit_info info = {
		.oid = oid,
		.subject = git_commit_summary(c),
		.message = git_commit_message(c),
		.author_name = a ? a->name : "",
		.author_email = a ? a->email : "",
		.author_time = a ? (int64_t)a->when.time : 0,
		.parents = git_commit_parentcount(c),
	};

	git_oid_tostr(oid, sizeof(oid), git_commit_id(c));
	if (!info.subject)
		info.subject = "";
	if (!info.message)
		info.message = "";
	return cb ? cb(&info, userdata) : 0;
}

int tree_log(struct tree *t, const struct tree_log_opts *opts, tree_log_fn cb,
	     void *userdata)
{
	_cleanup_(git_revwalk_freep) git_revwalk *w = NULL;
	size_t walked = 0, found = 0;
	size_t max_walk = opts->max_walk ? opts->max_walk : LOG_WALK_DEFAULT;
	git_oid oid;
	int r;

	r = walk_start(t, opts->from, &w);
	if (r < 0)
		return r;
	while (walked < max_walk && (r = git_revwalk_next(&oid, w)) == 0) {
		_cleanup_(git_commit_freep) git_commit *c = NULL;

		walked++;
		r = git_commit_lookup(&c, t->repo, &oid);
		if (r < 0)
			return tree_fail_git(t, r, "cannot read commit");
		if (!opts->include_merges && git_commit_parentcount(c) > 1)
			continue;
		if (opts->paths && opts->paths[0]) {
			r = commit_touches(c, opts->paths);
			if (r < 0)
				return tree_fail_git(t, r, "cannot compare trees");
			if (r == 0)
				continue;
		}
		found++;
		if (report_commit(c, cb, userdata) != 0)
			break;
		if (opts->max_results && found >= opts->max_results)
			break;
	}
	if (r < 0 && r != GIT_ITEROVER)
		return tree_fail_git(t, r, "revwalk");
	return (int)MIN(found, (size_t)0x7fffffff);
}

int tree_commit_show(struct tree *t, const char *rev, tree_log_fn cb, void *userdata)
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	int r;

	if (t->snapshot)
		return tree_fail(t, -ENOTSUP, "an imported folder has no history");
	r = tree_lookup_commit_t(t, rev, &c);
	if (r < 0)
		return r;
	(void)report_commit(c, cb, userdata);
	return 0;
}

static int on_subject(const struct tree_commit_info *ci, void *userdata)
{
	char **ret = userdata;

	*ret = strdup(ci->subject ? ci->subject : "");
	return 1;
}

int tree_commit_subject(struct tree *t, const char *rev, char **ret)
{
	char *s = NULL;
	int r = tree_commit_show(t, rev, on_subject, &s);

	if (r < 0)
		return r;
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

int tree_blame_lines(struct tree *t, const char *rev, const char *path,
		     unsigned first, unsigned last, tree_blame_fn cb,
		     void *userdata)
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	_cleanup_(git_blame_freep) git_blame *b = NULL;
	_cleanup_free_ char *data = NULL;
	git_blame_options opts = GIT_BLAME_OPTIONS_INIT;
	char oid[TREE_OID_HEX];
	unsigned lines = 0;
	size_t len;
	int r;

	if (t->snapshot)
		return tree_fail(t, -ENOTSUP, "an imported folder has no history");
	if (!path || first == 0 || (last && last < first))
		return tree_fail(t, -EINVAL, "invalid line range");
	r = tree_lookup_commit_t(t, rev, &c);
	if (r < 0)
		return r;
	/* libgit2 does not check the range against the file. */
	git_oid_tostr(oid, sizeof(oid), git_commit_id(c));
	r = tree_read_file(t, oid, path, 0, &data, &len);
	if (r < 0)
		return r;
	for (size_t i = 0; i < len; i++)
		lines += data[i] == '\n';
	if (len > 0 && data[len - 1] != '\n')
		lines++;
	if (first > lines)
		return tree_fail(t, -ERANGE, "line %u is past the end of %.200s (%u lines)",
				 first, path, lines);
	if (last == 0 || last > lines)
		last = lines;
	opts.newest_commit = *git_commit_id(c);
	opts.min_line = first;
	opts.max_line = last;
	r = git_blame_file(&b, t->repo, path, &opts);
	if (r == GIT_ENOTFOUND)
		return tree_fail(t, -ENOENT, "no file '%.200s' at that commit", path);
	if (r < 0)
		return tree_fail_git(t, r, "blame of %.200s failed", path);
	for (unsigned l = first; l <= last; l++) {
		const git_blame_hunk *h = git_blame_get_hunk_byline(b, l);

		if (!h)
			break;
		git_oid_tostr(oid, sizeof(oid), &h->final_commit_id);
		if (cb && cb(l, oid, h->orig_path ? h->orig_path : path,
			     (unsigned)(h->orig_start_line_number +
					(l - h->final_start_line_number)),
			     userdata))
			break;
	}
	return 0;
}

int tree_is_ancestor(struct tree *t, const char *ancestor, const char *commit)
{
	_cleanup_(git_commit_freep) git_commit *a = NULL, *c = NULL;
	int r;

	if (t->snapshot)
		return tree_fail(t, -ENOTSUP, "an imported folder has no history");
	r = tree_lookup_commit_t(t, ancestor, &a);
	if (r < 0)
		return r;
	r = tree_lookup_commit_t(t, commit, &c);
	if (r < 0)
		return r;
	if (git_oid_equal(git_commit_id(a), git_commit_id(c)))
		return 1;
	r = git_graph_descendant_of(t->repo, git_commit_id(c), git_commit_id(a));
	if (r < 0)
		return tree_fail_git(t, r, "ancestry check failed");
	return r;
}

struct diff_cap {
	struct buf *b;
	size_t file_start; /* offset where the current file's text began */
	bool truncated;
};

static int diff_cap_line(const git_diff_delta *delta, const git_diff_hunk *hunk,
			 const git_diff_line *line, void *payload)
{
	struct diff_cap *d = payload;
	char origin[2] = { line->origin, 0 };
	bool with_origin = line->origin == GIT_DIFF_LINE_CONTEXT ||
			   line->origin == GIT_DIFF_LINE_ADDITION ||
			   line->origin == GIT_DIFF_LINE_DELETION;

	(void)hunk;
	if (line->origin == GIT_DIFF_LINE_FILE_HDR)
		d->file_start = d->b->len;
	if ((with_origin && buf_puts(d->b, origin) < 0) ||
	    buf_append(d->b, line->content, line->content_len) < 0) {
		/* Drop the partial file, unless it is the only one. */
		if (d->file_start > 0) {
			d->b->len = d->file_start;
			d->b->data[d->b->len] = 0;
		}
		d->truncated = true;
		(void)delta;
		return 1;
	}
	return 0;
}

int tree_diff_commits(struct tree *t, const char *old, const char *new_rev,
		      size_t max, char **ret_diff, bool *ret_truncated)
{
	_cleanup_(git_commit_freep) git_commit *nc = NULL, *oc = NULL;
	_cleanup_(git_tree_freep) git_tree *nt = NULL, *ot = NULL;
	_cleanup_(git_diff_freep) git_diff *d = NULL;
	_cleanup_buf_ struct buf b = BUF_INIT(max ? max : TREE_PATCH_MAX);
	struct diff_cap cap = { .b = &b };
	int r;

	r = tree_lookup_commit_t(t, new_rev, &nc);
	if (r < 0)
		return r;
	if (old)
		r = tree_lookup_commit_t(t, old, &oc);
	else if (git_commit_parentcount(nc) > 0)
		r = git_commit_parent(&oc, nc, 0) < 0 ? -EIO : 0;
	if (r < 0)
		return r;
	r = git_commit_tree(&nt, nc);
	if (r == 0 && oc)
		r = git_commit_tree(&ot, oc);
	if (r == 0)
		r = git_diff_tree_to_tree(&d, t->repo, ot, nt, NULL);
	if (r < 0)
		return tree_fail_git(t, r, "cannot diff commits");
	r = git_diff_print(d, GIT_DIFF_FORMAT_PATCH, diff_cap_line, &cap);
	if (r < 0 && !cap.truncated)
		return tree_fail_git(t, r, "cannot print diff");
	if (buf_puts(&b, "") < 0 && !b.data)
		return -ENOMEM;
	*ret_diff = buf_steal(&b, NULL);
	if (!*ret_diff)
		return -ENOMEM;
	if (ret_truncated)
		*ret_truncated = cap.truncated;
	return 0;
}

int tree_list_dir(struct tree *t, const char *rev, const char *path, tree_dir_fn cb,
		  void *userdata)
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	_cleanup_(git_tree_freep) git_tree *root = NULL, *sub = NULL;
	git_tree_entry *e = NULL;
	const git_tree *dir;
	int r;

	r = tree_lookup_commit_t(t, rev, &c);
	if (r < 0)
		return r;
	r = git_commit_tree(&root, c);
	if (r < 0)
		return tree_fail_git(t, r, "cannot read commit tree");
	dir = root;
	if (path && *path) {
		r = git_tree_entry_bypath(&e, root, path);
		if (r == GIT_ENOTFOUND)
			return tree_fail(t, -ENOENT, "no such folder");
		if (r < 0)
			return tree_fail_git(t, r, "cannot look up the folder");
		if (git_tree_entry_type(e) != GIT_OBJECT_TREE) {
			git_tree_entry_free(e);
			return tree_fail(t, -ENOTDIR, "not a folder");
		}
		r = git_tree_lookup(&sub, t->repo, git_tree_entry_id(e));
		git_tree_entry_free(e);
		if (r < 0)
			return tree_fail_git(t, r, "cannot read the folder");
		dir = sub;
	}
	for (size_t i = 0; i < git_tree_entrycount(dir); i++) {
		const git_tree_entry *x = git_tree_entry_byindex(dir, i);

		if (cb(git_tree_entry_name(x), git_tree_entry_type(x) == GIT_OBJECT_TREE, userdata))
			break;
	}
	return 0;
}
