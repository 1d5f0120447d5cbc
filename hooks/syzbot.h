/* The public syzbot dashboard JSON (`?json=1`), version 1.
 *
 * Bug list: {"version": 1, "Bugs": [{"title", "link", "last-updated",
 * "fix-commits"}]}; one bug: {"version": 1, "title", "id", "status",
 * "first-crash", "last-crash", "fix-time", "close-time", "fix-commits",
 * "cause-commit", "discussions", "crashes": [...]}.  Links in it are
 * relative and HTML-escaped; the parsers return them absolute. */
#ifndef KFIX_HOOKS_SYZBOT_H
#define KFIX_HOOKS_SYZBOT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"

#define SYZBOT_JSON_MAX (32u * 1024 * 1024)

struct syzbot_list_entry {
	char *title;
	char *link;	    /* absolute */
	char *extid;	    /* from the link's extid= */
	char *last_updated; /* as sent; compared, never parsed */
	size_t n_fix_commits;
	char *fix_commit;   /* the first fix commit's hash (hex), if given */
};

struct syzbot_list {
	struct syzbot_list_entry *bugs;
	size_t n;
};

struct syzbot_crash {
	char *title;
	char *syz_reproducer, *c_reproducer, *kernel_config, *report_link; /* absolute */
	char *repro_opts;
	char *kernel_source_git, *kernel_source_commit;
	char *syzkaller_git, *syzkaller_commit;
};

struct syzbot_bug {
	char *title, *id, *status;
	char *extid; /* from a relay's "extid" member; NULL in dashboard JSON */
	char *first_crash, *last_crash, *fix_time, *close_time;
	size_t n_fix_commits;
	struct syzbot_crash *crashes;
	size_t n_crashes;
};

/* On -EBADMSG, *ret_error says what is wrong (caller frees). */
int syzbot_parse_list(const char *data, size_t len, const char *base_url,
		      struct syzbot_list **ret, char **ret_error);
int syzbot_parse_bug(const char *data, size_t len, const char *base_url,
		     struct syzbot_bug **ret, char **ret_error);
void syzbot_list_free(struct syzbot_list *l);
void syzbot_bug_free(struct syzbot_bug *b);
DEFINE_CLEANUP(struct syzbot_list, syzbot_list_free)
DEFINE_CLEANUP(struct syzbot_bug, syzbot_bug_free)

/* HTML-unescapes a relative link and puts base_url in front. */
int syzbot_link(const char *base_url, const char *link, char **ret);
/* The value of extid= in a link, or NULL. */
char *syzbot_link_extid(const char *link);
/* The crash to work on: the first with a C reproducer, else (unless
 * need_c) the first with a syz reproducer, else the first; NULL if none. */
const struct syzbot_crash *syzbot_bug_pick_crash(const struct syzbot_bug *b,
						 bool need_c);

#endif
