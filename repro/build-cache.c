#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build-internal.h"
#include "common/fileio.h"
#include "common/macro.h"
#include "common/strutil.h"

/*
 * The base kernel, kept aside.  Builds run in place: a patch is applied
 * to the source, built and reverted, and the reverted files get a new
 * mtime, so make compiles them again and links the whole kernel again
 * for the next base build, although the source is the one it was built
 * from.  Kept here, with what the source was then: its manifest (size
 * and mtime per file, as build-sync.c lists them), the .config, and a
 * copy of each file a patch touched, taken before the patch was applied.
 * A later base build whose .config is the same, and whose source differs
 * from the manifest only in files whose content equals their copy, is
 * the same kernel: its artifacts are copied back instead of a make.
 * Anything else (a file changed by someone, a new file, another config)
 * is a miss, and the next base build replaces what is kept.
 */

#define CACHE ".kfix-base"
#define MANIFEST_MAX (256 * 1024 * 1024)
#define FILE_MAX (64 * 1024 * 1024)
#define ARTIFACT_MAX (4ULL * 1024 * 1024 * 1024)

static const char *const artifacts[][2] = {
	{ "arch/x86/boot/bzImage", "bzImage" },
	{ "vmlinux", "vmlinux" },
	{ "System.map", "System.map" },
};

/* Copies a file without reading it whole into memory; the copy replaces
 * to only once complete.  durable: fsync before the rename. */
static int copy_file_large(const char *from, const char *to, bool durable)
{
	_cleanup_close_ int in = -1, out = -1;
	_cleanup_free_ char *tmp = NULL;
	struct stat st;
	off_t done = 0;
	int r = 0;

	in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0)
		return -errno;
	if (fstat(in, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((unsigned long long)st.st_size > ARTIFACT_MAX)
		return -EFBIG;
	if (asprintf(&tmp, "%s.kfix-tmp", to) < 0)
		return -ENOMEM;
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, st.st_mode & 0755);
	if (out < 0)
		return -errno;
	while (done < st.st_size) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)(st.st_size - done), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		done += n;
	}
	if (r == 0 && durable && fsync(out) < 0)
		r = -errno;
	if (r == 0 && rename(tmp, to) < 0)
		r = -errno;
	if (r < 0)
		(void)unlink(tmp);
	return r;
}

/* Between objdir and a cache folder: into the cache (durable) or back. */
static int copy_artifacts(const char *objdir, const char *cache, bool to_cache)
{
	for (size_t i = 0; i < ARRAY_SIZE(artifacts); i++) {
		_cleanup_free_ char *built = NULL, *kept = NULL;
		int r;

		if (asprintf(&built, "%s/%s", objdir, artifacts[i][0]) < 0 ||
		    asprintf(&kept, "%s/%s", cache, artifacts[i][1]) < 0)
			return -ENOMEM;
		r = to_cache ? copy_file_large(built, kept, true) : copy_file_large(kept, built, false);
		if (r < 0)
			return r;
	}
	return 0;
}

static int files_equal(const char *a, const char *b, bool *ret)
{
	_cleanup_free_ char *x = NULL, *y = NULL;
	size_t xl, yl;
	struct stat st;
	int r;

	/* a symlink that changed is not compared: a miss */
	if (lstat(b, &st) < 0 || !S_ISREG(st.st_mode)) {
		*ret = false;
		return 0;
	}
	r = read_file_bounded(a, FILE_MAX, &x, &xl);
	if (r == -ENOENT || r == -EFBIG) {
		*ret = false;
		return 0;
	}
	if (r < 0)
		return r;
	r = read_file_bounded(b, FILE_MAX, &y, &yl);
	if (r == -EFBIG) {
		*ret = false;
		return 0;
	}
	if (r < 0)
		return r;
	*ret = xl == yl && memcmp(x, y, xl) == 0;
	return 0;
}

/* A path from a patch or a manifest that stays inside the tree. */
static bool path_safe(const char *p)
{
	return p[0] && p[0] != '/' && !strstr(p, "..") && !strchr(p, '\\') && !strchr(p, '"');
}

/* Whether src is still the source the kept kernel was built from; the
 * walk's plan (its manifest is the source as it is now) in *plan. */
static int source_matches(const char *cache, const char *src, struct sync_plan *plan, bool *ret)
{
	_cleanup_free_ char *mpath = NULL, *manifest = NULL;
	size_t len = 0;
	bool same = true;
	int r;

	if (asprintf(&mpath, "%s/manifest", cache) < 0)
		return -ENOMEM;
	r = read_file_bounded(mpath, MANIFEST_MAX, &manifest, &len);
	if (r == -ENOENT || r == -EFBIG) {
		same = false;
		free(manifest);
		manifest = NULL;
		len = 0;
	} else if (r < 0)
		return r;
	r = sync_plan_make(src, manifest, len, plan);
	if (r < 0)
		return r;
	if (plan->n_removed > 0)
		same = false;
	for (const char *c = plan->changed; same && c < plan->changed + plan->changed_len;
	     c += strlen(c) + 1) {
		_cleanup_free_ char *orig = NULL, *cur = NULL;

		if (!path_safe(c)) {
			same = false;
			break;
		}
		if (asprintf(&orig, "%s/orig/%s", cache, c) < 0 || asprintf(&cur, "%s/%s", src, c) < 0)
			return -ENOMEM;
		r = files_equal(orig, cur, &same);
		if (r < 0)
			return r;
	}
	*ret = same;
	return 0;
}

static int cache_path(const char *objdir, char **ret)
{
	return asprintf(ret, "%s/" CACHE, objdir) < 0 ? -ENOMEM : 0;
}

/* The files a patch names ("--- a/X", "+++ b/X"), into *v; false when one
 * is not a plain path in the tree. */
static int patch_paths(const char *patch, size_t len, char ***v, bool *ret_ok)
{
	const char *p = patch, *end = patch + len;

	*ret_ok = true;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *name, *stop, *slash;
		_cleanup_free_ char *f = NULL;

		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > 4 && (strncmp(p, "--- ", 4) == 0 || strncmp(p, "+++ ", 4) == 0)) {
			name = p + 4;
			stop = memchr(name, '\t', (size_t)(eol - name));
			if (!stop)
				stop = eol;
			while (stop > name && stop[-1] == '\r')
				stop--;
			if (!((size_t)(stop - name) == 9 && strncmp(name, "/dev/null", 9) == 0)) {
				slash = memchr(name, '/', (size_t)(stop - name));
				if (!slash || !(f = strndup(slash + 1, (size_t)(stop - slash - 1))))
					return slash ? -ENOMEM : (*ret_ok = false, 0);
				if (!path_safe(f) || strchr(f, ' ')) {
					*ret_ok = false;
					return 0;
				}
				if (!strv_contains(*v, f) && strv_push(v, f) < 0)
					return -ENOMEM;
			}
		}
		p = eol + 1;
	}
	return 0;
}

/* Keeps, before the patches are applied, a copy of each file they touch,
 * so that their revert can be told from a change; or drops what is kept
 * when the source is no longer the one it was built from. */
int base_cache_note(const char *objdir, const char *src, char *const *patches, size_t patch_max)
{
	_cleanup_free_ char *cache = NULL;
	_cleanup_strv_ char **files = NULL;
	_cleanup_(sync_plan_free) struct sync_plan plan = { 0 };
	bool same, ok = true;
	int r;

	r = cache_path(objdir, &cache);
	if (r < 0)
		return r;
	if (access(cache, F_OK) < 0)
		return 0;
	r = source_matches(cache, src, &plan, &same);
	if (r < 0)
		return r;
	for (size_t i = 0; same && ok && patches[i]; i++) {
		_cleanup_free_ char *data = NULL;
		size_t len;

		r = read_file_bounded(patches[i], patch_max, &data, &len);
		if (r < 0)
			return r;
		r = patch_paths(data, len, &files, &ok);
		if (r < 0)
			return r;
	}
	if (!same || !ok)
		return rm_rf(cache);
	for (size_t i = 0; files && files[i]; i++) {
		_cleanup_free_ char *orig = NULL, *cur = NULL, *dir = NULL;
		struct stat st;

		if (asprintf(&orig, "%s/orig/%s", cache, files[i]) < 0 ||
		    asprintf(&cur, "%s/%s", src, files[i]) < 0)
			return -ENOMEM;
		/* kept already (an earlier patch), or new: the revert removes it */
		if (access(orig, F_OK) == 0 || lstat(cur, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		dir = strdup(orig);
		if (!dir)
			return -ENOMEM;
		*strrchr(dir, '/') = '\0';
		r = mkdir_p(dir, 0755);
		if (r >= 0)
			r = copy_file_bounded(cur, orig, FILE_MAX);
		if (r < 0) {
			(void)rm_rf(cache);
			return r;
		}
	}
	return 0;
}

/* Copies the kept kernel into objdir when it is the one a build of src
 * with objdir's .config would make.  Otherwise *ret_manifest is the
 * source as it is, for base_cache_store() once make has built it. */
int base_cache_lookup(const char *objdir, const char *src, bool *ret_hit, char **ret_manifest,
		      size_t *ret_len)
{
	_cleanup_free_ char *cache = NULL, *kept = NULL, *cur = NULL;
	_cleanup_(sync_plan_free) struct sync_plan plan = { 0 };
	bool same, config_same;
	int r;

	r = cache_path(objdir, &cache);
	if (r < 0)
		return r;
	if (asprintf(&kept, "%s/config", cache) < 0 || asprintf(&cur, "%s/.config", objdir) < 0)
		return -ENOMEM;
	r = files_equal(kept, cur, &config_same);
	if (r < 0)
		return r;
	r = source_matches(cache, src, &plan, &same);
	if (r < 0)
		return r;
	same = same && config_same;
	/* a copy that fails half way is an error; the next base build
	 * copies again, a patched one links anew */
	if (same) {
		r = copy_artifacts(objdir, cache, false);
		if (r < 0)
			return r;
	} else {
		*ret_manifest = TAKE_PTR(plan.manifest);
		*ret_len = plan.manifest_len;
	}
	*ret_hit = same;
	return 0;
}

/* Keeps the kernel just built from the unpatched source whose manifest
 * base_cache_lookup() gave before make ran: a file edited during the
 * build then differs from it, and the kept kernel is not used for it. */
int base_cache_store(const char *objdir, const char *manifest, size_t len)
{
	_cleanup_free_ char *cache = NULL, *tmp = NULL, *config = NULL, *kept = NULL,
			    *mpath = NULL;
	int r;

	r = cache_path(objdir, &cache);
	if (r < 0)
		return r;
	if (asprintf(&tmp, "%s.tmp", cache) < 0 || asprintf(&config, "%s/.config", objdir) < 0 ||
	    asprintf(&kept, "%s/config", tmp) < 0 || asprintf(&mpath, "%s/manifest", tmp) < 0)
		return -ENOMEM;
	r = rm_rf(tmp);
	if (r >= 0)
		r = mkdir_p(tmp, 0755);
	if (r >= 0)
		r = copy_artifacts(objdir, tmp, true);
	if (r >= 0)
		r = copy_file_bounded(config, kept, FILE_MAX);
	if (r >= 0)
		r = write_file_atomic(mpath, manifest, len, 0644);
	if (r >= 0)
		r = rm_rf(cache);
	if (r < 0)
		return r;
	return rename(tmp, cache) < 0 ? -errno : 0;
}
