/* Git-hosting webhook events (GitHub, Gitea, Forgejo, GitLab): push and
 * comment events, and the "#kfix WORD" commands in comments on the
 * review of a kfix branch (kfix/<bug>/v<N>). */
#ifndef KFIX_HOOKS_FORGE_H
#define KFIX_HOOKS_FORGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/macro.h"

#define FORGE_JSON_MAX (8u * 1024 * 1024)

enum forge_provider {
	FORGE_GITHUB,
	FORGE_GITEA,
	FORGE_FORGEJO,
	FORGE_GITLAB,
	_FORGE_PROVIDER_MAX,
};

enum forge_kind {
	FORGE_PING,
	FORGE_PUSH,
	FORGE_COMMENT,
	FORGE_OTHER, /* a valid event kfix does not act on */
};

struct forge_event {
	enum forge_kind kind;
	char *repo;    /* owner/name */
	char *ref;     /* push: refs/heads/... */
	char *after;   /* push: new head commit */
	char *branch;  /* the kfix branch the event is about, if any */
	char *author;
	char *body;    /* comment text */
	char *command; /* "repair", "retest", "upstream", "reject" from the comment */
	int64_t bug;   /* from branch kfix/<bug>/v<N>, 0 if none */
	int version;
	/* comment: where it was made, for an answer (forge-api.h), and its
	 * id (0 when the forge gives none) */
	int64_t number;	    /* pull/merge request or issue */
	int64_t project;    /* gitlab's numeric project id */
	int64_t comment_id;
};

int forge_provider_from_string(const char *s, enum forge_provider *ret);
const char *forge_provider_to_string(enum forge_provider p);
const char *forge_kind_to_string(enum forge_kind k);
/* The provider's event-type header (X-GitHub-Event, ...). */
const char *forge_event_header(enum forge_provider p);

/* event_type is the value of the provider's event header. */
int forge_event_parse(enum forge_provider p, const char *event_type,
		      const char *data, size_t len, struct forge_event **ret,
		      char **ret_error);
void forge_event_free(struct forge_event *e);
DEFINE_CLEANUP(struct forge_event, forge_event_free)

/* "kfix/<bug>/v<N>" anywhere in s (a ref, a title). */
int forge_find_kfix_branch(const char *s, int64_t *ret_bug, int *ret_version);
/* The first "#kfix WORD" starting a line that is not quoted ("> ");
 * -ENOENT when there is none, -EINVAL for an unknown word. */
int kfix_command_find(const char *text, char **ret_word);

#endif
