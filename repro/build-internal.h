/* Where builds run: a backend is a struct of function pointers, "local"
 * runs make here, "ssh" on a build host reached over SSH, which keeps its
 * own copy of the source and its own O= directories.  build.c does the
 * rest (patches, config checks, error parsing) and build-progress.c the
 * progress, the same way for both. */
#ifndef KFIX_REPRO_BUILD_INTERNAL_H
#define KFIX_REPRO_BUILD_INTERNAL_H

#include "build.h"
#include "common/macro.h"

/* Follows make's output while it runs: counts kbuild steps and notices a
 * full disk, whose message may never reach the log when the log is on
 * that same disk. */
struct follow {
	const struct build_opts *o;
	struct build_progress p;
	bool count;	/* the build itself, whose steps are counted */
	bool no_space;
	char line[512];
	size_t len;
	bool overlong;
};
void follow_output(void *userdata, const char *data, size_t len);
/* Sets the stage and reports it (BUILD_STAGE_DONE: 100%). */
void follow_stage(struct follow *f, enum build_stage st);
/* The kbuild steps the last cold (from scratch) or incremental build in
 * objdir took, 0 when unknown, and recording this build's count. */
unsigned steps_expected(const char *objdir, bool cold);
void steps_record(const char *objdir, bool cold, unsigned steps);

struct build_ssh;

/* One build's backend state. */
struct build_host {
	const struct build_opts *o;
	const char *objdir;	/* local: the O= directory; ssh: where the log
				 * and the fetched artifacts go */
	struct build_ssh *ssh;
};

struct build_backend {
	const char *name;
	/* Connects and brings the source where make runs.  A failure that
	 * is an outcome (host unreachable, refused, disk full) is set in
	 * res with BUILD_INFRA and 0 returned; < 0 only when kfix itself
	 * fails. */
	int (*open)(const struct build_opts *o, const char *objdir, struct build_result *res,
		    struct build_host **ret);
	/* The source folder as the compiler names it in messages. */
	const char *(*src)(struct build_host *h);
	/* The O= directory as people should look for it (the full disk). */
	const char *(*objdir)(struct build_host *h);
	int (*put_config)(struct build_host *h, const char *data, size_t len);
	int (*get_config)(struct build_host *h, size_t max, char **ret, size_t *ret_len);
	/* make's exit status, -ETIMEDOUT, or another -errno. */
	int (*make)(struct build_host *h, char *const *targets, int log_fd, struct follow *f);
	/* Makes objdir/rel present in the local objdir. */
	int (*fetch)(struct build_host *h, const char *rel);
	void (*close)(struct build_host *h);
};

extern const struct build_backend build_backend_local;
extern const struct build_backend build_backend_ssh;

/* Runs a tool and returns its exit code (or -ETIMEDOUT); output in
 * *ret_out.  f, when given, follows the output as it comes. */
int run_tool(char *const argv[], uint64_t timeout_usec, int tee_fd, struct follow *f,
	     char **ret_out);

/* For the ssh backend: the messages (build host's) and a full disk. */
int build_set_message(struct build_result *r, enum build_status st, const char *fmt, ...)
	_printf_(3, 4);

/* The files of the source tree (.git and kfix's own files left out),
 * compared with what was sent last time (a manifest of size and mtime per
 * file): changed holds the files to send, removed the ones to delete,
 * each NUL-terminated path after another.  manifest is the new list, to
 * be saved once the build host has the files. */
struct sync_plan {
	char *changed, *removed, *manifest;
	size_t changed_len, removed_len, manifest_len;
	size_t n_changed, n_removed;
};
void sync_plan_free(struct sync_plan *p);
int sync_plan_make(const char *src, const char *old_manifest, size_t old_len,
		   struct sync_plan *ret);

/* The local base kernel kept aside in objdir (build-cache.c), so that a
 * base build after a patched one need not compile the reverted files and
 * link again.  note: before patches are applied (copies of the files they
 * touch); lookup: after the config is in place, *ret_hit true when the
 * kept kernel was copied into objdir, else the source's manifest for
 * store, after make built it. */
int base_cache_note(const char *objdir, const char *src, char *const *patches, size_t patch_max);
int base_cache_lookup(const char *objdir, const char *src, bool *ret_hit, char **ret_manifest,
		      size_t *ret_len);
int base_cache_store(const char *objdir, const char *manifest, size_t len);

#endif
