/* kfixctl: shared pieces of the subcommands. */
#ifndef KFIX_CTL_H
#define KFIX_CTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct config;
struct store;

struct ctl {
	const char *config_path;
	const char *url;      /* --url: the daemon's API */
	bool json;
	struct config *cfg;   /* loaded on first use */
	struct store *store;  /* opened on first use, or before run with CTL_STORE */
	int64_t id;           /* the first operand, with CTL_ID */
};

/* What kfixctl checks before a command runs, so that commands do not
 * each repeat it. */
enum {
	CTL_COUNT = 1 << 0, /* min_args..max_args operands, no options */
	CTL_ID = 1 << 1,    /* the first operand is a row id, parsed into id */
	CTL_STORE = 1 << 2, /* the store is opened (after the operands check) */
};

struct ctl_cmd {
	const char *name;
	int (*run)(struct ctl *c, int argc, char **argv);
	const char *args;
	const char *summary;
	void (*help)(FILE *f);  /* more for COMMAND --help (NULL: none) */
	unsigned flags;
	int min_args, max_args; /* with CTL_COUNT */
};

/* Subcommands return the process exit code: 0 ok, 1 failure, 2 usage. */
int ctl_status(struct ctl *c, int argc, char **argv);
int ctl_bugs(struct ctl *c, int argc, char **argv);
int ctl_bug(struct ctl *c, int argc, char **argv);
int ctl_jobs(struct ctl *c, int argc, char **argv);
int ctl_job(struct ctl *c, int argc, char **argv);
int ctl_retry(struct ctl *c, int argc, char **argv);
int ctl_cancel(struct ctl *c, int argc, char **argv);
int ctl_submit(struct ctl *c, int argc, char **argv);
int ctl_outbox(struct ctl *c, int argc, char **argv);
int ctl_patches(struct ctl *c, int argc, char **argv);
int ctl_patch(struct ctl *c, int argc, char **argv);
int ctl_publish(struct ctl *c, int argc, char **argv);
int ctl_approve(struct ctl *c, int argc, char **argv);
int ctl_compare(struct ctl *c, int argc, char **argv);
int ctl_bisect(struct ctl *c, int argc, char **argv);
int ctl_reject(struct ctl *c, int argc, char **argv);
int ctl_pause(struct ctl *c, int argc, char **argv);
int ctl_resume(struct ctl *c, int argc, char **argv);
int ctl_drain(struct ctl *c, int argc, char **argv);
int ctl_report(struct ctl *c, int argc, char **argv);
int ctl_tree(struct ctl *c, int argc, char **argv);
int ctl_mail(struct ctl *c, int argc, char **argv);
int ctl_reproduce(struct ctl *c, int argc, char **argv);
int ctl_test_patch(struct ctl *c, int argc, char **argv);
int ctl_check_patch(struct ctl *c, int argc, char **argv);
int ctl_explore(struct ctl *c, int argc, char **argv);
void ctl_explore_help(FILE *f);
int ctl_repair(struct ctl *c, int argc, char **argv);
int ctl_trace(struct ctl *c, int argc, char **argv);
int ctl_bundle(struct ctl *c, int argc, char **argv);
int ctl_bench(struct ctl *c, int argc, char **argv);
int ctl_diagnose(struct ctl *c, int argc, char **argv);
int ctl_rerun(struct ctl *c, int argc, char **argv);
/* The values of every secret of the config and of the API tokens in the
 * environment (NULL-terminated), for scrubbing what leaves kfix. */
int ctl_known_secrets(const struct config *cfg, char ***ret);
int ctl_build(struct ctl *c, int argc, char **argv);

int ctl_config(struct ctl *c, struct config **ret);
/* Calls the daemon's REST API (--url, else [http] url, else [http]
 * listen) with the api-token (admin-token when admin; KFIX_API_TOKEN and
 * KFIX_ADMIN_TOKEN first); -ENOTCONN when no daemon listens there, or no
 * address or token is known, so that the caller uses the store. */
struct store_stats;
int ctl_api_call(struct ctl *c, const char *method, const char *path, bool admin,
		 json_t **ret);
/* An admin POST for a command acting on a running daemon: 0 when kfixctl
 * should act on the store instead (no daemon answers, and no --url);
 * else 1 with *ret_exit the command's exit code, the answer in
 * *ret_answer when it is 0, and the daemon's error printed when not. */
int ctl_api_action(struct ctl *c, const char *cmd, const char *path, const json_t *body,
		   json_t **ret_answer, int *ret_exit);
int ctl_api_stats(struct ctl *c, struct store_stats *ret);
int ctl_store(struct ctl *c, struct store **ret);
int ctl_parse_id(const char *cmd, const char *s, int64_t *ret);
/* COMMAND [--OPTION VALUE]... ID: options (NULL-terminated, at most
 * CTL_OPTIONS_MAX) are the long names; ret_values gets each one's value
 * in the same order (NULL when absent), ret_id the id; a usage error is
 * printed. */
#define CTL_OPTIONS_MAX 4
int ctl_parse_option_id(const char *cmd, const char *usage, int argc, char **argv,
			const char *const *options, const char **ret_values, int64_t *ret_id);
/* A job's trajectory events; an empty array when it left none. */
int ctl_job_trajectory(struct ctl *c, int64_t id, json_t **ret);
void ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Formats a unix time as "YYYY-MM-DD HH:MM" (UTC), "-" for 0. */
const char *ctl_time(int64_t t, char *buf, size_t n);
#include <jansson.h>
/* Prints j (taken over) indented; returns the exit code. */
int ctl_print_json(json_t *j);
/* Prints untrusted text with control characters escaped. */
void ctl_print_escaped(const char *label, const char *s);

#endif
