/* Configuration in git-config syntax, read with libgit2's config parser.
 *
 * Every key kfix knows is declared in one schema table (conf-schema.c)
 * with its type, default and range; loading validates the whole file
 * against it, so a typo is an error at start-up, not a silent default. */
#ifndef KFIX_CONF_H
#define KFIX_CONF_H

#include <stdbool.h>
#include <stdint.h>

#define KFIX_CONFIG_DEFAULT SYSCONFDIR "/kfix/kfix.conf"
#define CONFIG_SECRET_MAX (64 * 1024)

enum config_type {
	CONFIG_STRING,
	CONFIG_INT,
	CONFIG_BOOL,
	CONFIG_DURATION, /* "30s", "5min" */
	CONFIG_SIZE,	 /* "64K", "10M" */
	CONFIG_PATH,	 /* absolute, or relative to the config file */
	CONFIG_SECRET,	 /* "secret:NAME" (systemd credential), "file:PATH" or literal */
	CONFIG_ENUM,	 /* one of a '|'-separated list */
	CONFIG_LIST,	 /* may repeat */
};

struct config_key {
	const char *section;
	bool named;	    /* [section "name"] */
	const char *key;
	enum config_type type;
	const char *dflt;   /* NULL: no default */
	int64_t min, max;   /* CONFIG_INT */
	const char *values; /* CONFIG_ENUM */
};

extern const struct config_key config_schema[];

struct config;

/* Loads and validates path.  On failure *ret_error (when non-NULL) gets a
 * message naming the file, the line where known and the key. */
int config_load(const char *path, struct config **ret, char **ret_error);
/* An empty configuration (all defaults), for tools run without a file. */
int config_new_empty(struct config **ret);
void config_free(struct config *c);
const char *config_path(const struct config *c);

/* sub is the subsection name for [section "sub"], NULL otherwise.  Unset
 * keys return the schema default, or -ENOENT when there is none. */
int config_get_string(const struct config *c, const char *section,
		      const char *sub, const char *key, const char **ret);
int config_get_int(const struct config *c, const char *section,
		   const char *sub, const char *key, int64_t *ret);
int config_get_bool(const struct config *c, const char *section,
		    const char *sub, const char *key, bool *ret);
int config_get_duration(const struct config *c, const char *section,
			const char *sub, const char *key, uint64_t *ret_usec);
int config_get_size(const struct config *c, const char *section,
		    const char *sub, const char *key, uint64_t *ret);
/* Resolves CONFIG_PATH values relative to the config file's folder. */
int config_get_path(const struct config *c, const char *section,
		    const char *sub, const char *key, char **ret);
/* A path in [kfix] state-dir, the one place kfix keeps its state: sub
 * is relative ("kfix.db", "jobs/12"), or NULL for the folder itself. */
int config_state_path(const struct config *c, const char *sub, char **ret);
/* Reads the secret's value (credential, file or literal), trailing
 * newline removed. */
int config_get_secret(const struct config *c, const char *section,
		      const char *sub, const char *key, char **ret);
/* Calls fn for each key the file sets, in file order, with its schema
 * type, until fn returns non-zero, which is returned. */
int config_each(const struct config *c,
		int (*fn)(const char *section, const char *sub, const char *key,
			  const char *value, enum config_type type, void *ud),
		void *ud);
/* All values of a repeatable key, in file order (NULL-terminated). */
int config_get_list(const struct config *c, const char *section,
		    const char *sub, const char *key, char ***ret);
/* Names of all [section "name"] blocks, in file order. */
int config_subsections(const struct config *c, const char *section,
		       char ***ret);
/* Sets a value in memory (tests, command-line overrides). */
int config_set(struct config *c, const char *section, const char *sub,
	       const char *key, const char *value);

#endif
