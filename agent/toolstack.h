/* The real toolstack behind the repair engine: the base tree through
 * repro/tree.h (files at the base commit, blame for Fixes:, log for
 * "already fixed" and subject style) and kernel builds and VM runs
 * through repro/ when this build has them. */
#ifndef KFIX_AGENT_TOOLSTACK_H
#define KFIX_AGENT_TOOLSTACK_H

#include <stdint.h>

#include "agent/repair.h"
#include "common/macro.h"

struct config;
struct toolstack;

struct toolstack_opts {
	const char *src;	/* kernel source folder (a git checkout or a plain folder) */
	const char *commit;	/* base revision; NULL: HEAD */
	const char *scratch;	/* folder for snapshots and builds */
	const char *kconfig;	/* kernel .config */
	const char *repro;	/* reproducer (C source) */
	const struct config *cfg;
	const char *tree;	/* [tree "NAME"] of the bug, for its selftests; may be NULL */
	/* The bug's title: a leak's (run_title_is_leak) is seen only by
	 * kmemleak, which then scans after every run, the base's too. */
	const char *title;
};

/* What the toolstack reads from the configuration, read once when it
 * starts. */
struct toolstack_conf {
	char *build, *vm;	/* the first [build] and [vm] sections; NULL: none */
	char *index_dir;	/* symbol indexes; NULL: the scratch folder */
	char *selftests;	/* the tree's selection rule, else [agent]'s */
	uint64_t selftest_timeout_usec;
};
/* tree is the bug's [tree "NAME"], or NULL. */
int toolstack_conf_from_config(const struct config *c, const char *tree,
			       struct toolstack_conf *ret);
void toolstack_conf_free(struct toolstack_conf *tc);

int toolstack_new(const struct toolstack_opts *o, struct toolstack **ret, char **ret_error);
void toolstack_free(struct toolstack *t);
DEFINE_CLEANUP(struct toolstack, toolstack_free);
const struct repair_toolstack *toolstack_ops(struct toolstack *t);
/* The base commit id (40 hex), or NULL for a plain folder. */
const char *toolstack_base(const struct toolstack *t);

#endif
