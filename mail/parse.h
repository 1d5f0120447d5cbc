/* Reading mail: RFC 5322/MIME through GMime, then what kfix understands
 * of it: syzbot reports and test results, #syz and #kfix commands,
 * patches (found the way syzbot finds them), reviewer trailers and review
 * comments.  Every mail is untrusted: sizes are bounded and nothing of it
 * ever reaches a shell. */
#ifndef KFIX_MAIL_PARSE_H
#define KFIX_MAIL_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/macro.h"

struct config;

/* Larger messages are refused with -EFBIG (a clear error, no parse). */
#define MAIL_SIZE_MAX (16U * 1024 * 1024)
/* syzbot honours at most this many commands per mail; so does kfix. */
#define MAIL_COMMANDS_MAX 3

enum mail_kind {
	MAIL_KIND_OTHER,
	MAIL_KIND_SYZBOT_REPORT,
	MAIL_KIND_SYZBOT_TEST_RESULT,
	MAIL_KIND_REPLY,
	MAIL_KIND_PATCH,
};

enum mail_test_result {
	MAIL_TEST_NONE,
	MAIL_TEST_OK,	       /* the reproducer did not trigger any issue */
	MAIL_TEST_CRASH,       /* still triggering an issue */
	MAIL_TEST_BUILD_ERROR, /* the build/boot failed */
};

/* What a syzbot mail (or a reply in a syzbot thread) says; absent fields
 * are NULL.  Owned by the struct mail. */
struct mail_syzbot {
	const char *extid;
	const char *title;
	const char *head_commit;
	const char *git_tree;
	const char *git_branch;
	const char *console_log;
	const char *kernel_config;
	const char *dashboard;
	const char *syz_repro;
	const char *c_repro;
	const char *compiler;
	const char *userspace_arch;
	bool found_reproducer;	     /* "syzbot has found a reproducer ..." */
	enum mail_test_result test;  /* for test-result mails */
	const char *report;	     /* the crash report text */
};

struct mail_command {
	const char *name; /* "syz-test", "syz-fix", ..., "kfix-upstream", ... */
	const char *args; /* "" when none; test: the two tokens joined by ' ' */
	bool kfix;	  /* a #kfix command (needs an allowed sender) */
};

struct mail_trailer {
	const char *key; /* "Reviewed-by" */
	const char *value;
};

struct mail;

/* What mail_parse() checks before GMime sees a byte: the size (-EFBIG
 * over max, 0: MAIL_SIZE_MAX) and, in one pass over the raw bytes, the
 * counts of header fields, their sizes and MIME parts (-E2BIG).  Cheap
 * enough for the event loop; the parse itself is not. */
int mail_check_bounds(const char *data, size_t len, size_t max, char **ret_error);
/* Parses a raw message.  -EFBIG when larger than max (0: MAIL_SIZE_MAX),
 * -EBADMSG when it is not a message at all; *ret_error (may be NULL)
 * then gets a message for a human. */
int mail_parse(const char *data, size_t len, size_t max, struct mail **ret,
	       char **ret_error);
void mail_free(struct mail *m);
DEFINE_CLEANUP(struct mail, mail_free)

enum mail_kind mail_kind(const struct mail *m);
const char *mail_kind_name(enum mail_kind k);
/* Message-IDs without angle brackets; NULL when absent. */
const char *mail_message_id(const struct mail *m);
const char *mail_in_reply_to(const struct mail *m);
char *const *mail_references(const struct mail *m); /* never NULL */
const char *mail_from(const struct mail *m);	     /* addr-spec, lower case */
const char *mail_from_display(const struct mail *m); /* "Name <addr>" */
const char *mail_subject(const struct mail *m);	     /* decoded, UTF-8 */
char *const *mail_recipients(const struct mail *m);  /* To + Cc addr-specs */
const char *mail_body(const struct mail *m);	     /* first text part */
const struct mail_syzbot *mail_syzbot(const struct mail *m); /* or NULL */
const struct mail_command *mail_commands(const struct mail *m, size_t *ret_n);
/* The diff found as syzbot finds it (first attachment with a diff, else
 * the body), or NULL; base-commit: hint or NULL. */
const char *mail_patch(const struct mail *m);
const char *mail_base_commit(const struct mail *m);
const struct mail_trailer *mail_trailers(const struct mail *m, size_t *ret_n);
/* A reviewer's own words with the quoted lines they answer, for a v2
 * job; NULL when the mail has none. */
const char *mail_review_comments(const struct mail *m);

/* {"message_id", "in_reply_to", "from", "subject", "kind", "syzbot",
 *  "commands", "patch", "trailers"} as documented for kfixctl. */
int mail_to_json(const struct mail *m, json_t **ret);

/* Whether sender may give #kfix commands for tree: [tree "T"]
 * allow-commands, addresses or "@domain", compared case-insensitively. */
bool mail_sender_allowed(const struct config *cfg, const char *tree,
			 const char *sender);

#endif
