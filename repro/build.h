/* Kernel builds: an out-of-tree (O=) directory kept per (tree, config) so
 * that a build after a small patch is incremental, patches applied to the
 * source only for the duration of a build, a kept build log, and compiler
 * errors parsed into file:line:message for the agent. */
#ifndef KFIX_REPRO_BUILD_H
#define KFIX_REPRO_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox.h"

struct config;

enum build_stage {
	BUILD_STAGE_PATCH,	/* applying the patches */
	BUILD_STAGE_CONFIG,	/* make olddefconfig */
	BUILD_STAGE_COMPILE,	/* make, up to the first link step of vmlinux */
	BUILD_STAGE_LINK,	/* vmlinux, kallsyms, bzImage */
	BUILD_STAGE_DONE,
};
const char *build_stage_to_string(enum build_stage s);

/* Where a running build is, for whoever watches it (kfixctl's progress
 * line, the daemon's status).  See build.c for how the estimate is made. */
struct build_progress {
	enum build_stage stage;
	unsigned steps;		/* kbuild steps done: the CC, AS, LD... lines */
	unsigned expected;	/* steps this build is expected to take; 0: unknown */
	int percent;		/* 0-99 while running, 100 when done; -1: unknown */
	const char *target;	/* the last step's target (untrusted: escape) */
};
typedef void (*build_progress_fn)(void *userdata, const struct build_progress *p);

/* A build host reached over SSH: it keeps a copy of the source (sent
 * whole the first time, then only the files that changed) and the O=
 * directories, under dir.  Bounded copies, so that build_opts stay a
 * plain value that callers copy. */
struct build_remote {
	char host[256];		/* "": build locally */
	char user[64];
	int port;
	char key[1024];		/* private key file */
	char known_hosts[1024];
	char dir[1024];		/* on the build host; relative: to the user's home */
};

struct build_opts {
	const char *src;	   /* kernel source; patched in place while building */
	const char *config;	   /* a .config (full, or partial for olddefconfig) */
	const char *dir;	   /* where the O= directories live */
	const char *name;	   /* tree name: the O= dir is DIR/NAME--CONFIGNAME */
	char *const *patches;	   /* applied in order for this build (NULL-terminated) */
	int jobs;		   /* make -j; 0: number of CPUs */
	bool ccache;
	/* Where make runs: a build of a tree with model-written edits runs
	 * code nobody reviewed (its Makefiles, host programs, the compiler
	 * reading what the sources include). */
	enum sandbox_kind sandbox;
	uint64_t timeout_usec;	   /* 0: none */
	build_progress_fn progress; /* optional; called from the building thread */
	void *userdata;
	struct build_remote remote;
};

/* Fills opts from [build "name"] (jobs, ccache, dir, timeout, and the
 * build host when host is not "local"); the strings stay owned by cfg. */
int build_opts_from_config(const struct config *cfg, const char *name,
			   struct build_opts *opts, char **ret_dir);

/* Checks every [build "name"] as a build would read it, so that a
 * mistyped build host is found when the config is loaded rather than at
 * the first build.  On failure *ret_error says which section and why. */
int build_check_config(const struct config *cfg, char **ret_error);

enum build_status {
	BUILD_OK,
	BUILD_FAILED,	     /* the compiler or linker refused: build-error */
	BUILD_BAD_PATCH,     /* a patch does not apply */
	BUILD_BAD_CONFIG,    /* options the VM needs are missing */
	BUILD_INFRA,	     /* time-out, disk full, make missing */
};

struct build_error {
	char *file;	/* relative to the source tree; "" for link errors */
	int line;
	char *message;
};

struct build_result {
	enum build_status status;
	char *message;	      /* one line for people, untrusted text escaped */
	char *objdir;
	char *log_path;	      /* the full make output, kept */
	char *bzimage, *vmlinux, *system_map;
	struct build_error *errors;
	size_t n_errors;
	uint64_t usec;
	bool kept;	      /* the base kernel kept from an earlier build, no make */
};
void build_result_free(struct build_result *r);

const char *build_status_to_string(enum build_status s);

/* Returns 0 with ret->status telling the outcome; < 0 only when kfix
 * itself failed (memory, cannot create the build directory). */
int build_kernel(const struct build_opts *o, struct build_result *ret);

/* The folder the kernel of o is built in (its vmlinux, its objects). */
int build_objdir(const struct build_opts *o, char **ret);

/* Compiles only the .c files the patches touch (make path/file.o), for
 * fast feedback before a full build. */
int build_check_patch(const struct build_opts *o, struct build_result *ret);

/* Checks that the patches apply to the clean source (patch --dry-run),
 * before any time is spent building: BUILD_OK or BUILD_BAD_PATCH. */
int build_check_apply(const struct build_opts *o, struct build_result *ret);

/* file:line: error: message lines of a gcc/ld log, at most max. */
int build_parse_errors(const char *log, size_t len, const char *src, size_t max,
		       struct build_error **ret, size_t *ret_n);
void build_errors_free(struct build_error *e, size_t n);

/* The .c files a unified diff touches (NULL-terminated). */
int build_patch_files(const char *patch, size_t len, char ***ret);

#endif
