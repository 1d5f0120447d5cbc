/* Asking syzbot to test kfix's patches ([tree] ask-syzbot-test): a
 * "#syz test" mail in the bug's thread, once per patch version, at most
 * syzbot-tests-per-day a day per tree.  Once asked, the upstream mail
 * waits for syzbot's answer (matched by its thread, intake-mail.c): "OK"
 * sends it with syzbot's Tested-by; a crash holds the patch and asks the
 * repair for a new version with syzbot's report; a failed build holds it
 * for the moderators. */
#ifndef KFIX_DAEMON_SYZTEST_H
#define KFIX_DAEMON_SYZTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct config;
struct mail;
struct store;
struct store_bug;
struct store_patch;

/* Of syzbot's answer, kept and given to a new version. */
#define SYZTEST_TEXT_MAX (16u * 1024)

enum syztest_state {
	SYZTEST_OFF,	     /* not asked for this tree, or not a syzbot bug */
	SYZTEST_TO_ASK,	     /* to be asked now */
	SYZTEST_WAITING,     /* asked, no answer yet */
	SYZTEST_OK,	     /* the reproducer did not trigger any issue */
	SYZTEST_CRASH,	     /* still crashing */
	SYZTEST_BUILD_ERROR, /* syzbot could not build or boot it */
	SYZTEST_SKIPPED,     /* the day's requests were used up */
	SYZTEST_NO_ANSWER,   /* asked, and syzbot-test-timeout passed */
};

/* Where patch p of bug b stands, from the store's events; *ret_title:
 * syzbot's title of a crash (static storage of the event, copied). */
int syztest_state(struct store *s, const struct config *cfg, const struct store_bug *b,
		  const struct store_patch *p, enum syztest_state *ret, char **ret_title);

/* What syzbot's tests of the bug's versions up to cur said, as lines
 * "- ..." for a mail's Tested and Not tested sections (NULL: nothing). */
int syztest_notes(struct store *s, const struct config *cfg, const struct store_bug *b,
		  const struct store_patch *cur, char **ret_tested, char **ret_not_tested);

/* Requests syzbot left unanswered for the tree's syzbot-test-timeout
 * get an event patch.syzbot-test-timeout, and an approved patch that
 * waited goes on to its upstream stage, untested.  Looks at most once a
 * SYZTEST_SCAN_EVERY, at the newest SYZTEST_SCAN_MAX requests. */
#define SYZTEST_SCAN_MAX 500
#define SYZTEST_SCAN_EVERY (10ull * 1000000)
int syztest_schedule(const struct config *cfg, struct store *s);

/* When the request goes: "approval" (default) or "validation". */
bool syztest_after_validation(const struct config *cfg, const char *tree);

struct syztest_request {
	const char *from, *message_id; /* the bot; the request's Message-ID */
	const struct mail *report;     /* syzbot's report mail, or NULL */
	const char *report_mid;	       /* else its Message-ID, or NULL */
};

/* Composes the request and queues it (outbox, the patch's mails, an event)
 * in the caller's transaction.  When the day's limit is reached nothing
 * is sent, an event says so, and *ret_skipped is set. */
int syztest_ask(struct store *s, const struct config *cfg, const struct store_bug *b,
		const struct store_patch *p, const struct syztest_request *rq, bool *ret_skipped,
		char **ret_error);

/* syzbot answered about patch p (result "ok", "crash" or "build-error",
 * text the answer's body): an approved patch waiting for it goes on to
 * its upstream stage, and a crash asks for a new version.  In the
 * caller's transaction. */
int syztest_answered(struct store *s, const struct store_patch *p, const char *result,
		     const char *title, const char *message_id, const char *text);

#endif
