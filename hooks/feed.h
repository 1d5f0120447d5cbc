/* The syzbot feed poller: one per [feed "name"], driven by libcurl's
 * multi interface inside the sd-event loop.
 *
 * A round fetches the open-bug list (GET {url}/{namespace}?json=1, or one
 * list per configured subsystem), then each new or changed bug (its
 * "last-updated" differs from the one remembered) as bug JSON, applies
 * the filters, downloads the chosen crash's report, reproducers and
 * kernel config into <state-dir>/artifacts/<feed>/<extid>/ (each within
 * its size limit, written atomically) and only then hands the bug to the
 * daemon, with the local paths.  A text that cannot be had leaves the
 * whole bug for the next round; texts already saved from the same URL
 * are not downloaded again.  It is polite: one request
 * at a time per feed and at least request-interval apart (1 s minimum
 * without a token), conditional list requests (If-None-Match /
 * If-Modified-Since), and a 429 stops the round and backs off
 * (Retry-After when sent).  Positions (list validators, last-updated per
 * bug, the day's count) go through the ops so that the daemon keeps them
 * in its store and a restart does not fetch everything again. */
#ifndef KFIX_HOOKS_FEED_H
#define KFIX_HOOKS_FEED_H

#include <systemd/sd-event.h>

#include "common/macro.h"
#include "syzbot.h"

struct config;
struct metrics;

struct feed_bug {
	const char *feed;
	const char *extid;
	const char *title;
	const char *link;	  /* the bug's dashboard page */
	const char *tree;	  /* [feed] tree, else the crash's kernel-source-git */
	const char *base_commit;  /* kernel-source-commit */
	/* Absolute local paths of the saved texts (NULL: the crash has none):
	 * <state-dir>/artifacts/<feed>/<extid>/report.txt, repro.c, repro.syz,
	 * kernel.config. */
	const char *report, *repro_c, *repro_syz, *kernel_config;
	/* Where they came from (absolute URLs). */
	const char *report_url, *repro_c_url, *repro_syz_url, *kernel_config_url;
	const struct syzbot_bug *bug;
};

struct feed_ops {
	/* -ENOENT when the key was never set. */
	int (*state_get)(void *userdata, const char *key, char **ret);
	int (*state_set)(void *userdata, const char *key, const char *value);
	/* 1 when the bug is new, 0 when it was known already, <0 on error
	 * (the bug is then fetched again next round). */
	int (*bug)(void *userdata, const struct feed_bug *b);
	/* A listed bug that has fix commits (it is no longer open for kfix);
	 * called every round it is listed so.  May be NULL. */
	void (*fixed)(void *userdata, const char *feed, const char *extid, const char *commit);
	/* Every bug on the feed's open lists (sorted, strcmp order), after
	 * a round in which each list was fetched whole: a bug this feed
	 * handed over that is missing has left the open list (fixed,
	 * invalid or a duplicate).  Not called when a list answered 304 or
	 * failed.  May be NULL. */
	void (*listed)(void *userdata, const char *feed, char *const *extids, size_t n);
};

/* One [feed "NAME"] section, read when the feeds start or reload. */
struct feed_conf {
	char *base, *ns, *tree, *token;	/* url without trailing '/'; token NULL: unset */
	char **trees, **types, **subsystems; /* NULL: no filter */
	bool c_only;
	int64_t max_per_day;
	uint64_t max_text, max_repro;	/* bytes */
	uint64_t interval, gap, timeout, backoff; /* usec, at least 1 s */
};

/* -EINVAL when url is not set. */
int feed_conf_from_config(const struct config *cfg, const char *name, struct feed_conf *ret);
void feed_conf_clear(struct feed_conf *c);

struct feeds;

int feeds_new(sd_event *event, const struct config *cfg, struct metrics *metrics,
	      const struct feed_ops *ops, void *userdata, struct feeds **ret,
	      char **ret_error);
/* Checks the [feed] sections of cfg (a reload's first step). */
int feeds_check(struct feeds *f, const struct config *cfg, char **ret_error);
/* Replaces the feeds by those of cfg; on failure the old ones stay.  A
 * feed kept by name keeps its next poll time. */
int feeds_reload(struct feeds *f, const struct config *cfg, char **ret_error);
void feeds_free(struct feeds *f);
DEFINE_CLEANUP(struct feeds, feeds_free)
size_t feeds_count(struct feeds *f);

#endif
