/* The real toolstack; see toolstack.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "edits.h"
#include "llm-internal.h"
#include "repro/tree.h"
#include "toolstack.h"

struct toolstack {
	struct toolstack_opts o;
	struct tree *tree;
	char base[TREE_OID_HEX];
	bool have_base;
	struct repair_toolstack ops;
};

static int ts_read(void *ud, const char *path, char **ret, size_t *ret_len)
{
	struct toolstack *t = ud;

	return tree_read_file(t->tree, t->base, path, 0, ret, ret_len);
}

static int ts_apply(void *ud, const json_t *edits, char **ret_diff, char **ret_error)
{
	return edits_apply_fn(ts_read, ud, edits, ret_diff, ret_error);
}

static int ts_build(void *ud, const char *diff, char **ret_log)
{
	*ret_log = strdup("kernel builds are not available in this kfix build");
	return -ENOSYS;
}

static int ts_run(void *ud, unsigned runs, struct repair_outcome *ret)
{
	return -ENOSYS;
}

struct blame_hit {
	char commit[TREE_OID_HEX];
};

static int on_blame(unsigned final_line, const char *commit, const char *orig_path,
		    unsigned orig_line, void *userdata)
{
	struct blame_hit *h = userdata;

	snprintf(h->commit, sizeof(h->commit), "%s", commit);
	return 1;
}

static int on_subject(const struct tree_commit_info *ci, void *userdata)
{
	char **ret = userdata;

	*ret = strdup(ci->subject ?: "");
	return 1;
}

static int ts_fixes(void *ud, const char *file, unsigned line, char **ret)
{
	struct toolstack *t = ud;
	struct blame_hit h = {};
	struct tree_log_opts lo = { .max_results = 1 };
	_cleanup_free_ char *subject = NULL;
	int r;

	if (!t->have_base)
		return -ENOENT;
	r = tree_blame_lines(t->tree, t->base, file, line, line, on_blame, &h);
	if (r < 0 || !h.commit[0])
		return -ENOENT;
	/* a Fixes: tag must name an ancestor of the base */
	if (tree_is_ancestor(t->tree, h.commit, t->base) != 1)
		return -ENOENT;
	lo.from = h.commit;
	if (tree_log(t->tree, &lo, on_subject, &subject) < 0 || !subject)
		return -ENOENT;
	return asprintf(ret, "Fixes: %.12s (\"%s\")", h.commit, subject) < 0 ? -ENOMEM : 0;
}

static int ts_fixed(void *ud, const char *needle, char **ret_commit)
{
	struct toolstack *t = ud;
	char oid[TREE_OID_HEX];
	int r;

	if (!t->have_base)
		return 0;
	r = tree_log_grep(t->tree, t->base, needle, 100000, oid);
	if (r == 1)
		*ret_commit = strdup(oid);
	return r < 0 ? 0 : r;
}

static int on_recent(const struct tree_commit_info *ci, void *userdata)
{
	(void)buf_printf(userdata, "%s\n", ci->subject ?: "");
	return 0;
}

static int ts_recent(void *ud, const char *file, char **ret)
{
	struct toolstack *t = ud;
	const char *paths[] = { file, NULL };
	struct tree_log_opts lo = { .from = t->base, .paths = paths, .max_results = 8,
				    .max_walk = 20000 };
	_cleanup_buf_ struct buf b = BUF_INIT(8192);

	if (!t->have_base || tree_log(t->tree, &lo, on_recent, &b) <= 0)
		return -ENOENT;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

int toolstack_new(const struct toolstack_opts *o, struct toolstack **ret, char **ret_error)
{
	_cleanup_(toolstack_freep) struct toolstack *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->o = *o;
	r = tree_open_path(o->src, o->scratch, &t->tree);
	if (r < 0) {
		*ret_error = llm_errorf("cannot open the tree %s: %s", o->src, strerror(-r));
		return r;
	}
	r = tree_resolve(t->tree, o->commit ?: "HEAD", t->base);
	if (r < 0) {
		*ret_error = llm_errorf("cannot resolve %s in %s: %s", o->commit ?: "HEAD",
					o->src, tree_error(t->tree));
		return r;
	}
	t->have_base = !tree_is_snapshot(t->tree);
	t->ops = (struct repair_toolstack){
		.ud = t, .read_file = ts_read, .apply = ts_apply, .build = ts_build,
		.run = ts_run, .fixes_tag = ts_fixes, .already_fixed = ts_fixed,
		.recent_subjects = ts_recent,
	};
	*ret = TAKE_PTR(t);
	return 0;
}

void toolstack_free(struct toolstack *t)
{
	if (!t)
		return;
	if (t->tree)
		tree_free(t->tree);
	free(t);
}

const struct repair_toolstack *toolstack_ops(struct toolstack *t)
{
	return &t->ops;
}

const char *toolstack_base(const struct toolstack *t)
{
	return t->have_base ? t->base : NULL;
}
