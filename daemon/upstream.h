/* Learning from the fixes that land: when a bug kfix patched is fixed
 * upstream, a compare job (job-compare.c) compares the developers' fix
 * with kfix's patch.  Anything that hints at such a fix asks for the
 * check with an event "request.compare" (syzbot's list of fixed bugs, a
 * push to a watched branch, kfixctl compare, and a periodic look at the
 * watched branches, [kfix] upstream-check); the scheduler turns a request
 * into one job per bug. */
#ifndef KFIX_DAEMON_UPSTREAM_H
#define KFIX_DAEMON_UPSTREAM_H

#include <stdint.h>

struct config;
struct store;
struct json_t;

/* Records a request.compare event; commit (syzbot's fix commit) may be
 * NULL: the job then looks for the bug's syzbot id in the branch. */
int upstream_ask(struct store *s, int64_t bug, const char *by, const char *commit);
/* The scheduler's side of a request: a compare job, unless the bug has
 * no patch (an event request.ignored says so) or one is queued already. */
int upstream_request(struct store *s, int64_t bug, const struct json_t *detail);
/* Asks for every bug of tree (NULL: all trees) whose patch is out
 * (validated, awaiting approval, sent) and whose fix was not found yet;
 * at most UPSTREAM_ASK_MAX per call. */
#define UPSTREAM_ASK_MAX 200
int upstream_ask_open(struct store *s, const char *tree, const char *by);
/* The periodic look, every [kfix] upstream-check (0: never). */
int upstream_schedule(struct store *s, uint64_t every_usec);

#endif
