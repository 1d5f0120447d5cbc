/* Writing mail: patch mail in git format-patch form, replies (refusals,
 * syzbot test requests) and the recipients of a patch, from the tree's own
 * scripts/get_maintainer.pl.
 *
 * Every header value is checked: addresses and Message-IDs with control
 * characters are refused (-EINVAL), free text (subjects, names) has its
 * control characters replaced and is folded and RFC 2047-encoded as
 * needed, so no input can add a header line. */
#ifndef KFIX_MAIL_COMPOSE_H
#define KFIX_MAIL_COMPOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "mail/parse.h"

/* One row of the reproduction table: "base 3f1e2a9b" / "crashed 3 of 3". */
struct mail_repro_row {
	const char *kernel;
	const char *result;
};

struct patch_mail {
	const char *from;	 /* the bot identity, "kfix <kfix@example.org>" */
	const char *author;	 /* NULL, or the human who signs off ("Name <addr>"):
				  * then an in-body From: line makes them the
				  * author, as git format-patch does */
	const char *message_id;	 /* without <>, fixed per message (idempotent retries) */
	const char *in_reply_to; /* the syzbot report's Message-ID, or NULL */
	char *const *references; /* NULL-terminated, or NULL */
	char *const *to;	 /* "Name <addr>" or "addr" */
	char *const *cc;
	time_t date;
	int version;	   /* <= 1: [PATCH], N: [PATCH vN] */
	bool rfc;	   /* [PATCH RFC ...] */
	const char *summary; /* "subsys: do something", one line */
	const char *body;    /* commit message body, already wrapped */
	const struct mail_trailer *trailers; /* put in the kernel's order */
	size_t n_trailers;
	const char *howto;	 /* RFC mail: how a moderator answers, first below "---" */
	const char *changes;	 /* version > 1: "Changes since v<N-1>:" lines, first below "---" */
	const char *prev_link;	 /* version > 1: where the version before is ("Link to v<N-1>:") */
	const char *explanation; /* below "---": root cause */
	const char *patch_type;	 /* root-cause fix, defensive check or workaround */
	const char *evidence;	 /* execution evidence */
	const struct mail_repro_row *repro;
	size_t n_repro;
	const char *tested;	/* what ran and passed: runs, kmemleak, gates */
	const char *not_tested; /* what was not tested, said plainly */
	const char *diff;	/* "diff --git ..." as produced by libgit2 */
	const char *base_commit; /* 40 hex digits */
};

/* The whole message (headers, body, LF line ends). */
int mail_compose_patch(const struct patch_mail *p, char **ret, char **ret_error);
/* The commit message of the bot's branch: the summary, the body, then what
 * the mail gives below "---" (root cause, patch type, evidence, the
 * reproduction table, what was and was not tested), and the trailers
 * last, so that a reviewer of the branch reads the story in git log. */
int mail_compose_commit_message(const struct patch_mail *p, char **ret, char **ret_error);

/* The polite, one-time answer to a #kfix command from a sender that is not
 * allowed for the tree.  Whether it was already sent is the caller's to
 * remember (key: mail_refusal_key()). */
int mail_compose_refusal(const struct mail *orig, const char *from,
			 const char *message_id, const char *tree, time_t date,
			 char **ret, char **ret_error);
/* "kfix-refusal:<sender>:<tree>": one refusal per sender and tree. */
int mail_refusal_key(const struct mail *orig, const char *tree, char **ret);

/* A short note from kfix (e.g. to the moderators), as a reply to
 * in_reply_to when not NULL ("Re: " is added to the subject).  text is
 * the body, LF line ends, sent as is. */
int mail_compose_notice(const char *from, char *const *to, const char *message_id,
			const char *in_reply_to, const char *subject, const char *text,
			time_t date, char **ret, char **ret_error);

/* A request to syzbot to test a patch, in the bug's thread. */
struct syz_test_mail {
	const char *from, *message_id;
	const char *extid;	     /* to syzbot+EXTID@syzkaller.appspotmail.com */
	const struct mail *report;   /* syzbot's report mail (subject, thread), or NULL */
	const char *report_mid;	     /* without the mail: its Message-ID, or NULL */
	const char *title;	     /* without the mail: the bug's title ("Re: [syzbot] T") */
	char *const *cc;	     /* NULL-terminated, or NULL */
	const char *git_tree, *branch; /* NULL: a bare "#syz test" (the bug's own tree) */
	const char *diff;
	time_t date;
};

/* "#syz test: TREE BRANCH" (or "#syz test") and the patch inline, as
 * syzbot parses it (pkg/email: a command starts a line; the diff is the
 * body's). */
int mail_compose_syz_test(const struct syz_test_mail *m, char **ret, char **ret_error);

/* Runs TREE/scripts/get_maintainer.pl (argv vector, never a shell) on the
 * diff; *ret gets the addresses it prints ("Name <addr>" or "addr"). */
int mail_maintainers(const char *tree_dir, const char *diff, char ***ret,
		     char **ret_error);

/* Recipients of the upstream patch mail: To the people and lists
 * get_maintainer.pl named, Cc the syzbot address, the report's own
 * recipients (its lists) and extra_cc (e.g. the author and sign-offs of
 * the commit the patch fixes; may be NULL); each address once, compared
 * as addr-specs, malformed ones left out.  report may be NULL (no
 * syzbot report). */
int mail_upstream_recipients(const struct mail *report, char *const *maintainers,
			     char *const *extra_cc, char ***ret_to, char ***ret_cc);

/* The trailer order of kernel commits: Fixes, Assisted-by, Reviewed-by,
 * Acked-by, Tested-by, Reported-by, Suggested-by, Closes, Link, others,
 * Signed-off-by; stable within a key. */
void mail_trailers_sort(struct mail_trailer *t, size_t n);

#endif
