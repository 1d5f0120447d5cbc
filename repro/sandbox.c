/* See sandbox.h.  The command line is built from fixed words and the
 * paths the caller gives: nothing of the sandboxed input reaches it. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strutil.h"
#include "sandbox.h"

#define BWRAP "bwrap"

/* The system the tools run from, read-only; each bound when it exists
 * (a symlink such as a merged /bin is followed to its directory). */
static const char *const system_dirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
};
/* What the loader, gcc's alternatives and perl read under /etc: not
 * /etc itself, which holds the host's secrets. */
static const char *const etc_files[] = {
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/perl", "/etc/localtime",
};
/* The environment a build may see: the rest (tokens, credentials
 * directories, agent sockets) stays outside. */
static const char *const env_allowed[] = {
	"PATH", "LANG", "LC_ALL", "TZ", "SOURCE_DATE_EPOCH", "ARCH", "CROSS_COMPILE", "LLVM",
	"CC", "HOSTCC",
};
static const char *const env_prefixes[] = { "KBUILD_", "CCACHE_", "LC_" };

int sandbox_kind_parse(const char *s, enum sandbox_kind *ret)
{
	if (streq(s, "bwrap") || streq(s, "bubblewrap"))
		*ret = SANDBOX_BWRAP;
	else if (streq(s, "none"))
		*ret = SANDBOX_NONE;
	else
		return -EINVAL;
	return 0;
}

const char *sandbox_kind_name(enum sandbox_kind k)
{
	return k == SANDBOX_BWRAP ? "bwrap" : "none";
}

int sandbox_available(enum sandbox_kind k)
{
	static const char *const dirs[] = { "/usr/bin", "/bin", "/usr/local/bin" };

	if (k == SANDBOX_NONE)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char p[64];

		snprintf(p, sizeof(p), "%s/" BWRAP, dirs[i]);
		if (access(p, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

static int push2(char ***v, const char *a, const char *b)
{
	return strv_push(v, a) < 0 || strv_push(v, b) < 0 ? -ENOMEM : 0;
}

static int push3(char ***v, const char *a, const char *b, const char *c)
{
	return strv_push(v, a) < 0 || push2(v, b, c) < 0 ? -ENOMEM : 0;
}

static bool env_ok(const char *name, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(env_allowed); i++)
		if (strlen(env_allowed[i]) == n && !strncmp(name, env_allowed[i], n))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(env_prefixes); i++)
		if (n > strlen(env_prefixes[i]) && startswith(name, env_prefixes[i]))
			return true;
	return false;
}

/* The allowed variables of our environment, and each PATH directory
 * bound read-only so that the tools found here are found inside. */
static int push_env(char ***v, bool remote)
{
	extern char **environ;

	if (remote)
		return push3(v, "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin");
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		_cleanup_free_ char *name = NULL;

		if (!eq || !env_ok(*e, (size_t)(eq - *e)))
			continue;
		if (!(name = strndup(*e, (size_t)(eq - *e))) || push3(v, "--setenv", name, eq + 1) < 0)
			return -ENOMEM;
	}
	{
		const char *path = getenv("PATH");
		_cleanup_free_ char *copy = strdup(path ? path : "/usr/bin:/bin");
		char *save = NULL;

		if (!copy)
			return -ENOMEM;
		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
			if (d[0] == '/' && !startswith(d, "/usr/") && !streq(d, "/usr") &&
			    push3(v, "--ro-bind-try", d, d) < 0)
				return -ENOMEM;
	}
	return 0;
}

int sandbox_argv(const struct sandbox *sb, char *const *argv, bool remote, char ***ret)
{
	_cleanup_strv_ char **v = NULL;
	const char *cwd = sb->chdir ? sb->chdir : sb->n_rw ? sb->rw[0] : "/tmp";

	if (sb->kind == SANDBOX_NONE) {
		for (size_t i = 0; argv[i]; i++)
			if (strv_push(&v, argv[i]) < 0)
				return -ENOMEM;
		*ret = TAKE_PTR(v);
		return 0;
	}
	if (strv_push(&v, BWRAP) < 0 || strv_push(&v, "--die-with-parent") < 0 ||
	    strv_push(&v, "--new-session") < 0 || strv_push(&v, "--unshare-all") < 0 ||
	    push2(&v, "--cap-drop", "ALL") < 0 || strv_push(&v, "--clearenv") < 0)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(system_dirs); i++)
		if (push3(&v, "--ro-bind-try", system_dirs[i], system_dirs[i]) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(etc_files); i++)
		if (push3(&v, "--ro-bind-try", etc_files[i], etc_files[i]) < 0)
			return -ENOMEM;
	if (push2(&v, "--dev", "/dev") < 0 || push2(&v, "--proc", "/proc") < 0 ||
	    push2(&v, "--tmpfs", "/tmp") < 0)
		return -ENOMEM;
	/* inputs, then outputs: an output inside an input stays writable */
	for (size_t i = 0; i < sb->n_ro; i++)
		if (push3(&v, "--ro-bind", sb->ro[i], sb->ro[i]) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < sb->n_rw; i++)
		if (push3(&v, "--bind", sb->rw[i], sb->rw[i]) < 0)
			return -ENOMEM;
	if (push_env(&v, remote) < 0 || push3(&v, "--setenv", "HOME", "/tmp") < 0 ||
	    push2(&v, "--chdir", cwd) < 0 || strv_push(&v, "--") < 0)
		return -ENOMEM;
	for (size_t i = 0; argv[i]; i++)
		if (strv_push(&v, argv[i]) < 0)
			return -ENOMEM;
	*ret = TAKE_PTR(v);
	return 0;
}
