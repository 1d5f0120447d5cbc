/* Where the kernel source of a configured [tree "NAME"] lives.
 *
 * A tree has either a url (a bare mirror CACHE/trees/NAME.git that kfix
 * fetches, with one worktree CACHE/worktrees/NAME checked out at the
 * bug's base commit) or a path (a local source folder used as it is:
 * never fetched, never checked out; a plain folder without .git has no
 * history, so its patches carry no base commit and get no branch). */
#ifndef KFIX_SOURCE_H
#define KFIX_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "repro/tree.h"

struct config;

/* A [tree "NAME"] section, read once where a job or request starts so
 * that the defaults stay in the schema.  Strings are the config's and
 * live as long as it does; paths, the token and the list are owned. */
struct tree_conf {
	const char *url;		/* NULL: no mirror */
	char *path;			/* NULL: not a local folder */
	const char *branch;
	char *config;
	const char *syzbot_namespace;
	const char *moderation_address;
	const char *push_remote;
	char *push_ssh_key;
	char *push_known_hosts;
	const char *command_auth;
	int64_t priority;
	uint64_t fetch_interval_usec;
	bool ask_syzbot_test;
	const char *syzbot_test_after;
	int64_t syzbot_tests_per_day;
	uint64_t syzbot_test_timeout_usec;
	const char *selftests;
	bool bisect;
	const char *bisect_good;
	int64_t bisect_runs;
	int64_t bisect_releases;
	char *cache_dir;		/* [kfix] cache-dir: where the mirror lives */
};

/* An unconfigured name reads as the schema's defaults, with neither url
 * nor path.  The push-token is not read here: only a push needs it. */
int tree_conf_from_config(const struct config *c, const char *name, struct tree_conf *ret,
			  char **ret_error);
void tree_conf_done(struct tree_conf *t);
/* Whether the section has a url or path. */
bool tree_conf_configured(const struct tree_conf *t);

struct source {
	char *dir;		 /* the kernel source to build */
	char base[TREE_OID_HEX]; /* base commit checked out; "" for a plain folder */
	bool plain;		 /* a path without git */
};

/* -ENOENT when name is no [tree] section with a url or path. */
int source_configured(const struct config *cfg, const char *name);

/* The tree's repository: the mirror (url) or the repository at path;
 * -ENOTSUP for a plain folder.  On failure *ret_error says why. */
int source_open_tree(const struct config *cfg, const char *name,
		     struct tree **ret, char **ret_error);

/* The source folder at rev (NULL: the tree's branch head): a mirror is
 * fetched when rev is unknown (or always when rev is NULL) and its
 * worktree checked out.  The caller holds the tree's lock
 * (source_lock), since the worktree and in-place builds are shared. */
int source_checkout(const struct config *cfg, const char *name, const char *rev,
		    struct source *ret, char **ret_error);
void source_clear(struct source *s);

/* Moves a checked-out source to rev, for bisection: a mirror's worktree
 * is checked out there; a path tree's own folder too (refusing to
 * overwrite local changes), after its HEAD was noted so that
 * source_restore puts it back, even after a crash (source_checkout of
 * the tree restores first).  The caller holds the tree's lock. */
int source_move(const struct config *cfg, const char *name, struct source *s, const char *rev,
		char **ret_error);
int source_restore(const struct config *cfg, const char *name, char **ret_error);
/* A path tree: its own folder is built (and moved), not a worktree. */
bool source_in_place(const struct config *cfg, const char *name);

struct slot;
/* The tree's lock: one job at a time works in a tree's source folder. */
int source_lock(const struct config *cfg, const char *name, uint64_t timeout_usec,
		struct slot **ret);

#endif
