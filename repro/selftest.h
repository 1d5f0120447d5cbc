/* The kernel's own regression tests in validation: the kselftests
 * (tools/testing/selftests/TARGET) that cover the files a patch touches,
 * built once per base tree and run in a guest, and the KUnit suites the
 * kernel was built with beside those files, each run at boot in a guest
 * of its own ("kunit:SUITE"); both on the base kernel and on the patched
 * kernel.  A test that passes on the base and not on the patched kernel
 * is a regression: the patch is not a fix, whatever the crash does. */
#ifndef KFIX_REPRO_SELFTEST_H
#define KFIX_REPRO_SELFTEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/macro.h"
#include "sandbox.h"
#include "vm.h"

/* At most this many targets and tests: a patch touching half the tree
 * does not start hours of tests. */
#define SELFTEST_MAX_TARGETS 8
#define SELFTEST_MAX_TESTS 64

/* Which tests cover the changed files (paths relative to the tree).
 * spec: "auto" (MAINTAINERS: the selftests folders listed in the
 * sections whose F: patterns match a changed file; then folders named
 * like the changed files' directories; then the KUnit suites of the .c
 * files those sections list, and of the changed files' folders and their
 * tests/ subfolders, whose object the kernel in objdir has, none when
 * objdir is NULL), "none", or a list
 * of TARGET, TARGET:TEST or kunit:SUITE words separated by spaces or
 * commas.  *ret is a NULL-terminated list of such words (empty: none
 * cover them); -EINVAL with a message for a malformed spec. */
int selftest_select(const char *src, const char *objdir, const char *spec, char *const *files,
		    char ***ret, char **ret_error);

/* The files a unified diff changes (its "--- a/" and "+++ b/" paths). */
int selftest_patch_files(const char *patch, size_t len, char ***ret);

/* The built tests: "TARGET:TEST" names and where each binary or script
 * is on this host. */
struct selftest_set {
	char **names;
	char **paths;
	size_t n;
	char *unbuilt;	/* targets that did not build, one per line; NULL: none */
};
void selftest_set_free(struct selftest_set *s);

/* Builds the selected tests of the tree in src into out_dir (the kernel's
 * UAPI headers first, then each target with make -k, statically linked
 * for a minimal guest), in the sandbox given: src read-only, out_dir
 * writable.  A second call with the same selection finds them built.
 * -ENOENT with a message when nothing could be built. */
int selftest_build(const char *src, char *const *selection, const char *out_dir,
		   enum sandbox_kind sandbox, uint64_t timeout_usec, struct selftest_set *ret,
		   char **ret_error);

enum selftest_status {
	SELFTEST_PASS,
	SELFTEST_SKIP,	  /* kselftest's exit status 4 */
	SELFTEST_FAIL,
	SELFTEST_TIMEOUT, /* killed at the time limit */
	SELFTEST_CRASH,	  /* the kernel crashed: title says how */
	SELFTEST_NOT_RUN, /* the guest was lost before it */
};
const char *selftest_status_name(enum selftest_status s);

struct selftest_result {
	char *name;
	enum selftest_status status;
	int exit_status;
	char *output;	/* the tail of what it printed */
	char *title;	/* SELFTEST_CRASH */
};

struct selftest_results {
	struct selftest_result *r;
	size_t n;
	char *error;	/* the guest did not boot or was lost: why */
	uint64_t usec;
};
void selftest_results_free(struct selftest_results *r);

/* Boots kernel in a fresh guest, copies the tests in and runs them one
 * after another, each with timeout_usec.  A guest that does not boot is
 * an error in ->error with no results. */
int selftest_run(const struct vm_opts *vm, const struct vm_backend *backend, const char *kernel,
		 const struct selftest_set *set, uint64_t timeout_usec,
		 struct selftest_results *ret);

/* After the base kernel's run: the KUnit suites the base kernel does not
 * have (its config does not build them) leave the set, each named in
 * ->unbuilt, so that the patched kernel does not boot for them. */
int selftest_set_prune(struct selftest_set *set, const struct selftest_results *base);

/* The tests that passed on the base and did not on the patched kernel:
 * their count, and in *ret_text (NULL when none) one paragraph each with
 * the patched kernel's output. */
int selftest_regressions(const struct selftest_results *base,
			 const struct selftest_results *patched, char **ret_text);

/* One line per test: "TARGET:TEST: pass on the base, pass on the patch". */
int selftest_summary(const struct selftest_results *base, const struct selftest_results *patched,
		     char **ret);

json_t *selftest_results_to_json(const struct selftest_results *r);

#endif
