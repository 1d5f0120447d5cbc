/* Fetching a bug's texts given as links (see fetch.c). */
#ifndef KFIX_FETCH_H
#define KFIX_FETCH_H

#include <stdbool.h>
#include <stddef.h>

/* A bug's texts: the store's field, the file it is kept in, its limit. */
struct fetch_text {
	const char *field, *file;
	size_t max;
};
#define FETCH_TEXTS 4
extern const struct fetch_text fetch_texts[FETCH_TEXTS];

struct config;
struct store;
struct store_bug;

struct fetch_conf {
	char **text_hosts;	/* [kfix] text-hosts: the only hosts contacted */
};

int fetch_conf_from_config(const struct config *cfg, struct fetch_conf *ret);
void fetch_conf_clear(struct fetch_conf *c);

bool fetch_is_link(const char *value);
/* Downloads every text of b that is an http(s) link into
 * STATE-DIR/artifacts/bug-ID/ and stores the file's path in its place.
 * -EPERM: a host not in [kfix] text-hosts; -EFBIG: too large; -EAGAIN:
 * the server failed (worth a retry).  *ret_fetched counts the downloads. */
int fetch_bug_texts(const struct config *cfg, struct store *store, const struct store_bug *b,
		    int *ret_fetched, char **ret_error);

#endif
