/* Source folders of configured trees; see source.h. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/slot.h"
#include "common/strutil.h"
#include "source.h"

#define SOURCE_FETCH_TIMEOUT (30ULL * 60 * 1000000)

void tree_conf_done(struct tree_conf *t)
{
	free(t->path);
	free(t->config);
	free(t->push_ssh_key);
	free(t->push_known_hosts);
	free(t->cache_dir);
	*t = (struct tree_conf){ 0 };
}

/* An unset key without a schema default stays NULL. */
static int tree_conf_path(const struct config *c, const char *name, const char *key, char **ret)
{
	int r = config_get_path(c, "tree", name, key, ret);

	return r == -ENOENT ? 0 : r;
}

int tree_conf_from_config(const struct config *c, const char *name, struct tree_conf *ret,
			  char **ret_error)
{
	_cleanup_(tree_conf_done) struct tree_conf t = { 0 };
	const char *n = name ?: "";
	int r;

	(void)config_get_string(c, "tree", n, "url", &t.url);
	(void)config_get_string(c, "tree", n, "branch", &t.branch);
	(void)config_get_string(c, "tree", n, "syzbot-namespace", &t.syzbot_namespace);
	(void)config_get_string(c, "tree", n, "moderation-address", &t.moderation_address);
	(void)config_get_string(c, "tree", n, "push-remote", &t.push_remote);
	(void)config_get_string(c, "tree", n, "command-auth", &t.command_auth);
	(void)config_get_string(c, "tree", n, "syzbot-test-after", &t.syzbot_test_after);
	(void)config_get_string(c, "tree", n, "selftests", &t.selftests);
	(void)config_get_string(c, "tree", n, "bisect-good", &t.bisect_good);
	(void)config_get_int(c, "tree", n, "priority", &t.priority);
	(void)config_get_int(c, "tree", n, "syzbot-tests-per-day", &t.syzbot_tests_per_day);
	(void)config_get_int(c, "tree", n, "bisect-runs", &t.bisect_runs);
	(void)config_get_int(c, "tree", n, "bisect-releases", &t.bisect_releases);
	(void)config_get_duration(c, "tree", n, "fetch-interval", &t.fetch_interval_usec);
	(void)config_get_duration(c, "tree", n, "syzbot-test-timeout",
				  &t.syzbot_test_timeout_usec);
	(void)config_get_bool(c, "tree", n, "ask-syzbot-test", &t.ask_syzbot_test);
	(void)config_get_bool(c, "tree", n, "bisect", &t.bisect);
	r = tree_conf_path(c, n, "path", &t.path);
	if (r >= 0)
		r = tree_conf_path(c, n, "config", &t.config);
	if (r >= 0)
		r = tree_conf_path(c, n, "push-ssh-key", &t.push_ssh_key);
	if (r >= 0)
		r = tree_conf_path(c, n, "push-known-hosts", &t.push_known_hosts);
	if (r >= 0)
		r = config_get_path(c, "kfix", NULL, "cache-dir", &t.cache_dir);
	if (r < 0) {
		if (ret_error)
			*ret_error = strdup_printf("tree '%s': %s", n, strerror(-r));
		return r;
	}
	*ret = t;
	t = (struct tree_conf){ 0 };
	return 0;
}

bool tree_conf_configured(const struct tree_conf *t)
{
	return t->url || t->path;
}

int source_configured(const struct config *cfg, const char *name)
{
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };

	if (!name || !*name || tree_conf_from_config(cfg, name, &tc, NULL) < 0)
		return -ENOENT;
	return tree_conf_configured(&tc) ? 0 : -ENOENT;
}

static bool has_git(const char *dir)
{
	_cleanup_free_ char *git = NULL;

	return asprintf(&git, "%s/.git", dir) >= 0 && access(git, F_OK) == 0;
}

static int open_tree(const char *name, const struct tree_conf *tc, struct tree **ret,
		     char **ret_error)
{
	int r;

	if (tc->path) {
		if (!has_git(tc->path)) {
			*ret_error = strdup_printf("tree %s: %s is a plain folder without history", name,
					    tc->path);
			return -ENOTSUP;
		}
		r = tree_open_path(tc->path, NULL, ret);
		if (r < 0)
			*ret_error = strdup_printf("tree %s: %s", name, tree_error(NULL));
		return r;
	}
	if (!tc->url) {
		*ret_error = strdup_printf("tree '%s' is not configured", name);
		return -ENOENT;
	}
	r = tree_open_mirror(tc->cache_dir, name, tc->url, ret);
	if (r < 0)
		*ret_error = strdup_printf("tree %s: %s", name, tree_error(NULL));
	return r;
}

int source_open_tree(const struct config *cfg, const char *name,
		     struct tree **ret, char **ret_error)
{
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
	int r;

	r = tree_conf_from_config(cfg, name, &tc, ret_error);
	if (r < 0)
		return r;
	return open_tree(name, &tc, ret, ret_error);
}

static int checkout_mirror(const char *name, const struct tree_conf *tc, const char *rev,
			   struct source *s, char **ret_error)
{
	_cleanup_tree_ struct tree *t = NULL;
	const char *branch = tc->branch;
	int r;

	r = open_tree(name, tc, &t, ret_error);
	if (r < 0)
		return r;
	if (!rev || tree_resolve(t, rev, s->base) < 0) {
		r = tree_fetch(t, NULL, SOURCE_FETCH_TIMEOUT, NULL, NULL);
		if (r < 0) {
			*ret_error = strdup_printf("tree %s: fetch: %s", name, tree_error(t));
			return r;
		}
	}
	r = tree_resolve(t, rev ? rev : branch, s->base);
	if (r < 0) {
		*ret_error = strdup_printf("tree %s: %s", name, tree_error(t));
		return r;
	}
	if (asprintf(&s->dir, "%s/worktrees/%s", tc->cache_dir, name) < 0)
		return -ENOMEM;
	r = tree_worktree_checkout(t, s->dir, s->base, s->base);
	if (r < 0)
		*ret_error = strdup_printf("tree %s: checkout %s: %s", name, s->base, tree_error(t));
	return r;
}

/* STATE/trees/NAME.checkout: where a path tree's HEAD was before kfix
 * checked out another commit in its folder, until it is put back. */
static int restore_marker(const struct config *cfg, const char *name, bool create, char **ret)
{
	_cleanup_free_ char *dir = NULL;
	int r = config_state_path(cfg, "trees", &dir);

	if (r >= 0 && create)
		r = mkdir_p(dir, 0750);
	if (r < 0)
		return r;
	return asprintf(ret, "%s/%s.checkout", dir, name) < 0 ? -ENOMEM : 0;
}

bool source_in_place(const struct config *cfg, const char *name)
{
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };

	return tree_conf_from_config(cfg, name, &tc, NULL) >= 0 && tc.path;
}

int source_restore(const struct config *cfg, const char *name, char **ret_error)
{
	_cleanup_free_ char *marker = NULL, *text = NULL;
	_cleanup_json_ json_t *j = NULL;
	_cleanup_tree_ struct tree *t = NULL;
	json_error_t jerr;
	size_t len = 0;
	int r;

	r = restore_marker(cfg, name, false, &marker);
	if (r < 0)
		return r;
	r = read_file_bounded(marker, 4096, &text, &len);
	if (r == -ENOENT)
		return 0;
	if (r < 0 || json_parse_bounded(text, len, 4096, &j, &jerr) < 0 ||
	    !json_get_str(j, "commit")) {
		*ret_error = strdup_printf("tree %s: %s is unreadable; put the folder back by hand and "
				    "remove it", name, marker);
		return r < 0 ? r : -EBADMSG;
	}
	r = source_open_tree(cfg, name, &t, ret_error);
	if (r < 0)
		return r;
	r = tree_checkout_here(t, json_get_str(j, "commit"), json_get_str(j, "ref"));
	if (r < 0) {
		*ret_error = strdup_printf("tree %s: putting it back at %.12s: %s", name,
				    json_get_str(j, "commit"), tree_error(t));
		return r;
	}
	return unlink(marker) < 0 && errno != ENOENT ? negerrno() : 0;
}

int source_move(const struct config *cfg, const char *name, struct source *s, const char *rev,
		char **ret_error)
{
	_cleanup_tree_ struct tree *t = NULL;
	_cleanup_free_ char *marker = NULL, *ref = NULL, *text = NULL;
	char head[TREE_OID_HEX];
	int r;

	if (s->plain) {
		*ret_error = strdup_printf("tree %s: a plain folder has no other revisions", name);
		return -ENOTSUP;
	}
	r = source_open_tree(cfg, name, &t, ret_error);
	if (r < 0)
		return r;
	if (!source_in_place(cfg, name)) {
		r = tree_worktree_checkout(t, s->dir, rev, s->base);
		if (r < 0)
			*ret_error = strdup_printf("tree %s: checkout %.40s: %s", name, rev, tree_error(t));
		return r;
	}
	r = restore_marker(cfg, name, true, &marker);
	if (r < 0)
		return r;
	if (access(marker, F_OK) < 0) {
		/* first move: remember where the folder was, before touching it */
		_cleanup_json_ json_t *j = NULL;

		r = tree_head(t, &ref, head);
		if (r < 0) {
			*ret_error = strdup_printf("tree %s: %s", name, tree_error(t));
			return r;
		}
		j = json_pack("{s:s, s:s?}", "commit", head, "ref", ref);
		text = j ? json_dumps(j, JSON_COMPACT) : NULL;
		if (!text)
			return -ENOMEM;
		r = write_file_atomic(marker, text, strlen(text), 0640);
		if (r < 0) {
			*ret_error = strdup_printf("tree %s: %s: %s", name, marker, strerror(-r));
			return r;
		}
	}
	r = tree_checkout_here(t, rev, NULL);
	if (r >= 0)
		r = tree_resolve(t, "HEAD", s->base);
	if (r < 0)
		*ret_error = strdup_printf("tree %s: %s", name, tree_error(t));
	return r;
}

int source_checkout(const struct config *cfg, const char *name, const char *rev,
		    struct source *ret, char **ret_error)
{
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
	struct source s = {};
	const char *path;
	int r;

	if (source_configured(cfg, name) < 0) {
		*ret_error = strdup_printf("tree '%s' is not configured", name ? name : "");
		return -ENOENT;
	}
	r = tree_conf_from_config(cfg, name, &tc, ret_error);
	if (r < 0)
		return r;
	path = tc.path;
	if (!path) {
		r = checkout_mirror(name, &tc, rev, &s, ret_error);
		if (r < 0) {
			source_clear(&s);
			return r;
		}
		*ret = s;
		return 0;
	}
	if (access(path, R_OK | X_OK) < 0) {
		r = negerrno();
		*ret_error = strdup_printf("tree %s: %s: %s", name, path, strerror(-r));
		return r;
	}
	s.plain = !has_git(path);
	if (!s.plain) {
		_cleanup_tree_ struct tree *t = NULL;

		/* a job that moved the folder to another commit and died */
		r = source_restore(cfg, name, ret_error);
		if (r < 0)
			return r;

		/* a local repository is built as it is checked out */
		r = tree_open_path(path, NULL, &t);
		if (r >= 0)
			r = tree_resolve(t, "HEAD", s.base);
		if (r < 0) {
			*ret_error = strdup_printf("tree %s: %s", name, t ? tree_error(t) : tree_error(NULL));
			return r;
		}
	}
	s.dir = TAKE_PTR(tc.path);
	*ret = s;
	return 0;
}

void source_clear(struct source *s)
{
	free(s->dir);
	*s = (struct source){};
}

int source_lock(const struct config *cfg, const char *name, uint64_t timeout_usec,
		struct slot **ret)
{
	_cleanup_free_ char *dir = NULL, *lock = NULL;
	int r;

	r = config_state_path(cfg, "slots", &dir);
	if (r < 0)
		return r;
	if (asprintf(&lock, "tree-%s", name) < 0)
		return -ENOMEM;
	return slot_acquire(dir, lock, 1, timeout_usec, ret);
}
