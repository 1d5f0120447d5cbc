/* A sandbox for commands that build or compile code kfix did not write:
 * kernels carrying model-written edits, and reproducers from strangers.
 * With bubblewrap the command sees a read-only system (/usr and the
 * loader's files), its read-only inputs and writable outputs, a private
 * /tmp, /dev and /proc, and nothing else: no network, no kfix state,
 * credentials or home, no capabilities, its own PID namespace, and only
 * an allowed set of environment variables. */
#ifndef KFIX_REPRO_SANDBOX_H
#define KFIX_REPRO_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"

#define SANDBOX_MAX_PATHS 8

enum sandbox_kind {
	SANDBOX_NONE,	/* the command runs as kfix does: only for trusted input */
	SANDBOX_BWRAP,
};

struct sandbox {
	enum sandbox_kind kind;
	const char *ro[SANDBOX_MAX_PATHS];	/* inputs, absolute */
	const char *rw[SANDBOX_MAX_PATHS];	/* outputs, absolute */
	size_t n_ro, n_rw;
	const char *chdir;			/* NULL: the first rw path */
};

/* "bwrap" or "none"; -EINVAL for anything else. */
int sandbox_kind_parse(const char *s, enum sandbox_kind *ret);
const char *sandbox_kind_name(enum sandbox_kind k);

/* -ENOENT when the kind needs a tool this host lacks. */
int sandbox_available(enum sandbox_kind k);

/* The command line that runs argv in the sandbox (argv itself for
 * SANDBOX_NONE), NULL-terminated, owned by the caller.  remote: the
 * paths are a remote host's, whose /bin and /lib layout is not looked
 * at here (they are bound when they exist). */
int sandbox_argv(const struct sandbox *sb, char *const *argv, bool remote, char ***ret);

#endif
