#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "build-internal.h"
#include "common/buf.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "common/strutil.h"
#include "common/url.h"

#define JOURNAL ".kfix-applied"
#define LOG_MAX (64 * 1024 * 1024)
#define PATCH_MAX (16 * 1024 * 1024)
#define KEPT_MSG "kfix: the base kernel built earlier from this source and config, kept aside, is used\n"
#define CONFIG_MAX (4 * 1024 * 1024)
#define ERRORS_MAX 50

/* What the VM and the crash reports need from any config. */
static const char *const required_options[] = {
	"CONFIG_BLK_DEV_INITRD", "CONFIG_SERIAL_8250_CONSOLE", "CONFIG_NET",
	"CONFIG_INET", "CONFIG_VIRTIO_NET", "CONFIG_VIRTIO_PCI", "CONFIG_PRINTK",
};

const char *build_status_to_string(enum build_status s)
{
	static const char *const names[] = {
		[BUILD_OK] = "ok", [BUILD_FAILED] = "build-error",
		[BUILD_BAD_PATCH] = "patch-error", [BUILD_BAD_CONFIG] = "config-error",
		[BUILD_INFRA] = "infra-error",
	};
	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

void build_errors_free(struct build_error *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].file);
		free(e[i].message);
	}
	free(e);
}

void build_result_free(struct build_result *r)
{
	free(r->message);
	free(r->objdir);
	free(r->log_path);
	free(r->bzimage);
	free(r->vmlinux);
	free(r->system_map);
	build_errors_free(r->errors, r->n_errors);
	*r = (struct build_result){ 0 };
}

int build_set_message(struct build_result *r, enum build_status st, const char *fmt, ...)
{
	va_list ap;
	int n;

	r->status = st;
	free(r->message);
	va_start(ap, fmt);
	n = vasprintf(&r->message, fmt, ap);
	va_end(ap);
	if (n < 0) {
		r->message = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Says plainly that the disk, not the patch, failed the build. */
static int no_space(struct build_result *r, const char *objdir)
{
	return build_set_message(r, BUILD_INFRA,
			   "no space left on device: the disk holding %s is full "
			   "(an infrastructure error, not the patch's)", objdir);
}

static int copy_bounded(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(dst, src, len);
	dst[len] = '\0';
	return 0;
}

/* host = ssh://[user@]host[:port] or a plain host name (user and port
 * then from ssh-user and ssh-port). */
static int parse_remote_host(const char *v, struct build_remote *rm)
{
	struct url u;
	int r;

	if (!startswith(v, "ssh://")) {
		/* user and port have keys of their own for a plain name */
		if (!*v || v[strcspn(v, "/@: \t")])
			return -EINVAL;
		return copy_bounded(rm->host, sizeof(rm->host), v, strlen(v));
	}
	r = url_parse(v, &u);
	if (r < 0)
		return r == -ENOMEM ? r : -EINVAL;
	/* a password does not belong in a config file; a path means nothing */
	if (u.password || u.query || !streq(u.path, "/"))
		return -EINVAL;
	if (*u.user && (r = copy_bounded(rm->user, sizeof(rm->user), u.user, strlen(u.user))) < 0)
		return r;
	if (u.port)
		rm->port = u.port;
	return copy_bounded(rm->host, sizeof(rm->host), u.host, strlen(u.host));
}

static int remote_from_config(const struct config *cfg, const char *name,
			      struct build_remote *rm)
{
	_cleanup_free_ char *key = NULL, *kh = NULL;
	const char *host = NULL, *user = NULL, *dir = NULL;
	int64_t port;
	int r;

	*rm = (struct build_remote){ 0 };
	if (config_get_string(cfg, "build", name, "host", &host) < 0 || streq(host, "local"))
		return 0;
	r = config_get_int(cfg, "build", name, "ssh-port", &port);
	if (r < 0)
		return r;
	rm->port = (int)port;
	r = parse_remote_host(host, rm);
	if (r < 0)
		return r;
	if (!rm->user[0] && config_get_string(cfg, "build", name, "ssh-user", &user) >= 0 &&
	    (r = copy_bounded(rm->user, sizeof(rm->user), user, strlen(user))) < 0)
		return r;
	if (config_get_path(cfg, "build", name, "ssh-key", &key) >= 0 &&
	    (r = copy_bounded(rm->key, sizeof(rm->key), key, strlen(key))) < 0)
		return r;
	if (config_get_path(cfg, "build", name, "known-hosts", &kh) >= 0 &&
	    (r = copy_bounded(rm->known_hosts, sizeof(rm->known_hosts), kh, strlen(kh))) < 0)
		return r;
	r = config_get_string(cfg, "build", name, "remote-dir", &dir);
	if (r < 0)
		return r;
	return copy_bounded(rm->dir, sizeof(rm->dir), dir, strlen(dir));
}

int build_opts_from_config(const struct config *cfg, const char *name,
			   struct build_opts *opts, char **ret_dir)
{
	_cleanup_free_ char *dir = NULL, *cache = NULL;
	const char *sb;
	int64_t jobs;
	int r;

	if ((r = config_get_int(cfg, "build", name, "jobs", &jobs)) < 0 ||
	    (r = config_get_bool(cfg, "build", name, "ccache", &opts->ccache)) < 0 ||
	    (r = config_get_string(cfg, "build", name, "sandbox", &sb)) < 0 ||
	    (r = config_get_duration(cfg, "build", name, "timeout", &opts->timeout_usec)) < 0)
		return r;
	opts->jobs = (int)jobs;
	if (sandbox_kind_parse(sb, &opts->sandbox) < 0)
		return -EINVAL;
	r = remote_from_config(cfg, name, &opts->remote);
	if (r < 0)
		return r;
	r = config_get_path(cfg, "build", name, "dir", &dir);
	if (r == -ENOENT) {
		r = config_get_path(cfg, "kfix", NULL, "cache-dir", &cache);
		if (r < 0)
			return r;
		if (asprintf(&dir, "%s/builds", cache) < 0)
			return -ENOMEM;
	} else if (r < 0)
		return r;
	*ret_dir = TAKE_PTR(dir);
	return 0;
}

int build_check_config(const struct config *cfg, char **ret_error)
{
	_cleanup_strv_ char **names = NULL;
	int r = config_subsections(cfg, "build", &names);

	if (r < 0)
		return r;
	for (char **n = names; n && *n; n++) {
		struct build_remote rm;
		const char *host = "";
		_cleanup_free_ char *en = NULL, *eh = NULL;

		r = remote_from_config(cfg, *n, &rm);
		if (r >= 0)
			continue;
		(void)config_get_string(cfg, "build", *n, "host", &host);
		en = str_escape(*n, strlen(*n), 64);
		eh = str_escape(host, strlen(host), 128);
		if (!en || !eh ||
		    asprintf(ret_error, "[build \"%s\"] host = %s: %s", en, eh,
			     r == -EINVAL ? "not ssh://[user@]host[:port], a host name or local"
					  : strerror(-r)) < 0)
			return -ENOMEM;
		return r;
	}
	return 0;
}

/* Runs a tool and returns its exit code (or -ETIMEDOUT); output in *ret_out. */
int run_tool(char *const argv[], uint64_t timeout_usec, int tee_fd, struct follow *f,
		    char **ret_out)
{
	struct proc_opts po = PROC_OPTS_DEFAULT;
	struct proc_result pr = { 0 };
	int r;

	po.timeout_usec = timeout_usec;
	po.tee_fd = tee_fd;
	po.output_max = 256 * 1024;
	if (f) {
		po.on_output = follow_output;
		po.userdata = f;
	}
	r = proc_run(argv, &po, &pr);
	if (r < 0)
		return r;
	if (ret_out)
		*ret_out = TAKE_PTR(pr.output);
	r = pr.timed_out ? -ETIMEDOUT : pr.exit_code < 0 ? -EINTR : pr.exit_code;
	proc_result_free(&pr);
	return r;
}

static int patch_run(const char *src, const char *file, bool reverse, bool dry, char **ret_out)
{
	char *argv[] = { "patch", "-p1", "--batch", "--silent", "--no-backup-if-mismatch",
			 "--reject-file=-", "-d", (char *)src, "-i", (char *)file,
			 reverse ? "-R" : "--forward", dry ? "--dry-run" : NULL, NULL };

	return run_tool(argv, 60 * 1000000ULL, -1, NULL, ret_out);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int journal_list(const char *src, char ***ret)
{
	_cleanup_free_ char *jdir = NULL;
	_cleanup_strv_ char **v = NULL;
	DIR *d;
	struct dirent *de;

	if (asprintf(&jdir, "%s/" JOURNAL, src) < 0)
		return -ENOMEM;
	d = opendir(jdir);
	if (!d) {
		*ret = NULL;
		return errno == ENOENT ? 0 : -errno;
	}
	while ((de = readdir(d))) {
		_cleanup_free_ char *p = NULL;

		if (!endswith(de->d_name, ".patch"))
			continue;
		if (asprintf(&p, "%s/%s", jdir, de->d_name) < 0 || strv_push(&v, p) < 0) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	if (v)
		qsort(v, strv_len(v), sizeof(char *), cmp_str);
	*ret = TAKE_PTR(v);
	return 0;
}

/* Undoes the patches of this or an interrupted earlier build, newest
 * first.  The reverted files get a new mtime, so make rebuilds them. */
static int journal_revert(const char *src, char **ret_error)
{
	_cleanup_strv_ char **v = NULL;
	_cleanup_free_ char *jdir = NULL;
	int r;

	r = journal_list(src, &v);
	if (r < 0)
		return r;
	for (size_t i = strv_len(v); i > 0; i--) {
		_cleanup_free_ char *out = NULL;

		r = patch_run(src, v[i - 1], true, false, &out);
		if (r != 0) {
			if (ret_error)
				*ret_error = str_escape(out ? out : "", out ? strlen(out) : 0, 400);
			return -EIO;
		}
		if (unlink(v[i - 1]) < 0)
			return -errno;
	}
	if (asprintf(&jdir, "%s/" JOURNAL, src) < 0)
		return -ENOMEM;
	(void)rmdir(jdir);
	return 0;
}

static int apply_patches(const struct build_opts *o, struct build_result *res)
{
	_cleanup_free_ char *jdir = NULL;
	int r;

	if (!o->patches || !o->patches[0])
		return 0;
	if (asprintf(&jdir, "%s/" JOURNAL, o->src) < 0)
		return -ENOMEM;
	r = mkdir_p(jdir, 0755);
	if (r < 0)
		return r;
	for (size_t i = 0; o->patches[i]; i++) {
		_cleanup_free_ char *out = NULL, *jfile = NULL, *esc = NULL;

		r = patch_run(o->src, o->patches[i], false, true, &out);
		if (r != 0) {
			esc = str_escape(out ? out : "", out ? strlen(out) : 0, 400);
			return build_set_message(res, BUILD_BAD_PATCH, "patch %s does not apply: %s",
					   o->patches[i], esc ? esc : "");
		}
		/* Journal first: a crash between the two steps leaves a
		 * journal entry whose reverse fails, which is reported,
		 * rather than an applied patch nobody knows about. */
		if (asprintf(&jfile, "%s/%02zu.patch", jdir, i) < 0)
			return -ENOMEM;
		r = copy_file_bounded(o->patches[i], jfile, PATCH_MAX);
		if (r < 0)
			return r;
		free(out);
		out = NULL;
		r = patch_run(o->src, o->patches[i], false, false, &out);
		if (r != 0) {
			(void)unlink(jfile);
			esc = str_escape(out ? out : "", out ? strlen(out) : 0, 400);
			return build_set_message(res, BUILD_BAD_PATCH, "patch %s failed: %s",
					   o->patches[i], esc ? esc : "");
		}
	}
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

int build_objdir(const struct build_opts *o, char **ret)
{
	_cleanup_free_ char *cfg = strdup(base_name(o->config));
	char *dot;

	if (!cfg)
		return -ENOMEM;
	dot = strrchr(cfg, '.');
	if (dot && dot != cfg)
		*dot = '\0';
	for (char *p = cfg; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			*p = '_';
	return asprintf(ret, "%s/%s--%s", o->dir, o->name ? o->name : base_name(o->src), cfg) < 0
		       ? -ENOMEM
		       : 0;
}

/* A build's backend and its state, closed with the build. */
struct build_run {
	const struct build_backend *b;
	struct build_host *h;
};

static void build_run_close(struct build_run *br)
{
	if (br->h)
		br->b->close(br->h);
	br->h = NULL;
}

/* Copies the config in and runs olddefconfig only when the input changed,
 * so an unchanged config costs nothing.  The mark lives in the local
 * objdir for both backends: it says what the build host was given. */
static int prepare_config(const struct build_opts *o, struct build_run *br, const char *objdir,
			  int log_fd, struct follow *f, struct build_result *res)
{
	_cleanup_free_ char *in = NULL, *old = NULL, *mark = NULL, *final = NULL;
	_cleanup_buf_ struct buf missing = BUF_INIT(4096);
	size_t in_len, old_len = 0, final_len;
	int r;

	r = read_file_bounded(o->config, CONFIG_MAX, &in, &in_len);
	if (r < 0)
		return build_set_message(res, BUILD_BAD_CONFIG, "cannot read config %s: %s",
					 o->config, strerror(-r));
	if (asprintf(&mark, "%s/.kfix-input-config", objdir) < 0)
		return -ENOMEM;
	if (read_file_bounded(mark, CONFIG_MAX, &old, &old_len) < 0 || old_len != in_len ||
	    memcmp(old, in, in_len) != 0) {
		r = br->b->put_config(br->h, in, in_len);
		if (r < 0)
			return r;
		r = br->b->make(br->h, (char *const[]){ "olddefconfig", NULL }, log_fd, f);
		if (r != 0 && f->no_space)
			return no_space(res, br->b->objdir(br->h));
		if (r != 0)
			return build_set_message(res, r == -ETIMEDOUT || r == -ECONNRESET ||
							      r == -EIO
							      ? BUILD_INFRA
							      : BUILD_FAILED,
						 "make olddefconfig failed (%d)", r);
		r = write_file_atomic(mark, in, in_len, 0644);
		if (r < 0)
			return r;
	}
	r = br->b->get_config(br->h, CONFIG_MAX, &final, &final_len);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(required_options); i++) {
		_cleanup_free_ char *needle = NULL;

		if (asprintf(&needle, "\n%s=y\n", required_options[i]) < 0)
			return -ENOMEM;
		/* the option may be the file's first line */
		if (!strstr(final, needle) && !startswith(final, needle + 1) &&
		    buf_printf(&missing, " %s", required_options[i]) < 0)
			return -ENOMEM;
	}
	if (missing.len > 0) {
		/* Forget the input so the next build re-runs olddefconfig. */
		(void)unlink(mark);
		return build_set_message(res, BUILD_BAD_CONFIG,
					 "config %s lacks options the VM needs:%s", o->config,
					 missing.data);
	}
	return 0;
}

static void unlockp(int *fd)
{
	if (*fd >= 0) {
		flock(*fd, LOCK_UN);
		close(*fd);
	}
}

static int lock_slot(const char *objdir, int *ret_fd)
{
	_cleanup_free_ char *p = NULL;
	int fd;

	if (asprintf(&p, "%s.lock", objdir) < 0)
		return -ENOMEM;
	fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0) {
		close(fd);
		return -errno;
	}
	*ret_fd = fd;
	return 0;
}

static bool is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int classify_log(struct build_run *br, struct build_result *res, int make_rc,
			bool disk_full)
{
	_cleanup_free_ char *log = NULL;
	size_t len = 0;
	int r;

	if (make_rc == -ETIMEDOUT)
		return build_set_message(res, BUILD_INFRA, "build timed out");
	if (make_rc == -ECONNRESET || make_rc == -EIO)
		return build_set_message(res, BUILD_INFRA,
					 "lost the connection to the build host during the build");
	(void)read_file_bounded(res->log_path, LOG_MAX, &log, &len);
	/* Compiler errors follow a full disk (truncated objects), and they
	 * are not the patch's fault. */
	if (disk_full || (log && strstr(log, "No space left on device")))
		return no_space(res, br->b->objdir(br->h));
	if (make_rc == 127 || make_rc < 0)
		return build_set_message(res, BUILD_INFRA, "cannot run make (%d)", make_rc);
	/* bwrap's own failure (no user namespaces, a seccomp filter that
	 * forbids mount): the sandbox, not the patch */
	if (make_rc != 0 && log && (startswith(log, "bwrap: ") || strstr(log, "\nbwrap: "))) {
		const char *why = startswith(log, "bwrap: ") ? log : strstr(log, "\nbwrap: ") + 1;

		return build_set_message(res, BUILD_INFRA, "the build sandbox could not start: %.*s",
					 (int)strcspn(why, "\n"), why);
	}
	/* the build host's own checks (lock, folders, the sandbox) */
	if (make_rc == 125)
	{
		const char *why = log ? strstr(log, "kfix: ") : NULL;

		return build_set_message(res, BUILD_INFRA, "the build host could not build: %.*s",
					 why ? (int)strcspn(why + 6, "\n") : 18,
					 why ? why + 6 : "see the build log");
	}
	if (log) {
		r = build_parse_errors(log, len, br->b->src(br->h), ERRORS_MAX, &res->errors,
				       &res->n_errors);
		if (r < 0)
			return r;
	}
	if (res->n_errors > 0) {
		_cleanup_free_ char *m = str_escape(res->errors[0].message,
						     strlen(res->errors[0].message), 200);
		return build_set_message(res, BUILD_FAILED, "build failed: %s:%d: %s (%zu errors)",
					 res->errors[0].file, res->errors[0].line, m ? m : "",
					 res->n_errors);
	}
	return build_set_message(res, BUILD_FAILED, "build failed, make exit %d (log: %s)",
				 make_rc, res->log_path);
}

static const struct build_backend *backend_of(const struct build_opts *o)
{
	return o->remote.host[0] ? &build_backend_ssh : &build_backend_local;
}

/* The artifacts, fetched from a build host into the local objdir. */
static int fetch_artifacts(struct build_run *br, struct build_result *res)
{
	static const char *const files[] = { "arch/x86/boot/bzImage", "System.map", "vmlinux" };
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		r = br->b->fetch(br->h, files[i]);
		if (r == -ENOSPC || r == -EDQUOT)
			return no_space(res, res->objdir);
		if (r < 0)
			return build_set_message(res, BUILD_INFRA,
						 "cannot fetch %s from the build host: %s",
						 files[i], strerror(-r));
	}
	return 0;
}

static int do_build(const struct build_opts *o, char *const *targets, struct build_result *res)
{
	_cleanup_(build_run_close) struct build_run br = { .b = backend_of(o) };
	_cleanup_close_ int log_fd = -1;
	_cleanup_free_ char *vmlinux = NULL;
	/* Only full kernel builds are estimated and recorded: a compile
	 * check of a few files says nothing about the next build. */
	bool kernel = streq(targets[0], "bzImage"), cold;
	bool patched = o->patches && o->patches[0];
	/* the base kernel is kept aside by local builds (build-cache.c),
	 * and any local patch first copies the files it touches */
	bool local = !o->remote.host[0], keep = kernel && local && !patched;
	_cleanup_free_ char *manifest = NULL;
	size_t manifest_len = 0;
	struct follow f = { .o = o, .p = { .percent = -1 } };
	int r, rc;

	if (asprintf(&vmlinux, "%s/vmlinux", res->objdir) < 0)
		return -ENOMEM;
	cold = !is_file(vmlinux);
	log_fd = open(res->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log_fd < 0)
		return -errno;
	if (patched) {
		follow_stage(&f, BUILD_STAGE_PATCH);
		if (local) {
			r = base_cache_note(res->objdir, o->src, o->patches, PATCH_MAX);
			if (r < 0)
				return r;
		}
	}
	r = apply_patches(o, res);
	if (r < 0 || res->status != BUILD_OK)
		return r;
	follow_stage(&f, BUILD_STAGE_CONFIG);
	r = br.b->open(o, res->objdir, res, &br.h);
	if (r < 0 || res->status != BUILD_OK)
		return r;
	r = prepare_config(o, &br, res->objdir, log_fd, &f, res);
	if (r < 0 || res->status != BUILD_OK)
		return r;
	if (keep) {
		bool hit = false;

		r = base_cache_lookup(res->objdir, o->src, &hit, &manifest, &manifest_len);
		if (r < 0)
			return r;
		if (hit) {
			res->kept = true;
			(void)!write(log_fd, KEPT_MSG, strlen(KEPT_MSG));
			follow_stage(&f, BUILD_STAGE_DONE);
			return 0;
		}
	}
	f.count = true;
	f.p.expected = kernel ? steps_expected(res->objdir, cold) : 0;
	f.p.percent = f.p.expected ? 0 : -1;
	follow_stage(&f, BUILD_STAGE_COMPILE);
	rc = br.b->make(br.h, targets, log_fd, &f);
	if (rc != 0)
		return classify_log(&br, res, rc, f.no_space);
	if (kernel) {
		r = fetch_artifacts(&br, res);
		if (r < 0 || res->status != BUILD_OK)
			return r;
		steps_record(res->objdir, cold, f.p.steps);
		/* a kernel not kept is built again next time: not a failure */
		if (manifest)
			(void)base_cache_store(res->objdir, manifest, manifest_len);
	}
	follow_stage(&f, BUILD_STAGE_DONE);
	return 0;
}

static int build_common(const struct build_opts *o, char *const *targets,
			struct build_result *ret)
{
	_cleanup_(build_result_free) struct build_result res = { 0 };
	_cleanup_(unlockp) int slot_lock = -1, src_lock = -1;
	_cleanup_free_ char *srclock = NULL, *revert_msg = NULL;
	uint64_t start = clock_mono_usec();
	int r, r2;

	r = build_objdir(o, &res.objdir);
	if (r < 0)
		return r;
	r = mkdir_p(res.objdir, 0755);
	if (r < 0)
		return r;
	if (asprintf(&res.log_path, "%s/kfix-build.log", res.objdir) < 0 ||
	    asprintf(&srclock, "%s/.kfix", o->src) < 0)
		return -ENOMEM;
	r = lock_slot(res.objdir, &slot_lock);
	if (r < 0)
		return r;
	r = lock_slot(srclock, &src_lock);
	if (r < 0)
		return r;
	/* a build host checks for itself (exit 125: infrastructure) */
	if (!o->remote.host[0] && sandbox_available(o->sandbox) < 0) {
		if (build_set_message(&res, BUILD_INFRA,
				      "the build sandbox (%s) is not installed: install bubblewrap, or "
				      "set [build] sandbox = none for trees whose edits you trust",
				      sandbox_kind_name(o->sandbox)) < 0)
			return -ENOMEM;
		*ret = res;
		res = (struct build_result){ 0 };
		return 0;
	}
	r = journal_revert(o->src, &revert_msg);
	if (r < 0) {
		if (build_set_message(&res, BUILD_INFRA,
				      "source %s holds a patch from an earlier build that does not revert: %s",
				      o->src, revert_msg ? revert_msg : strerror(-r)) < 0)
			return -ENOMEM;
		*ret = res;
		res = (struct build_result){ 0 };
		return 0;
	}
	r = do_build(o, targets, &res);
	r2 = journal_revert(o->src, &revert_msg);
	if (r == -ENOSPC || r == -EDQUOT)
		r = no_space(&res, res.objdir);
	if (r < 0)
		return r;
	if (r2 < 0 && res.status == BUILD_OK)
		build_set_message(&res, BUILD_INFRA, "cannot revert the patches: %s",
				  revert_msg ? revert_msg : strerror(-r2));
	if (res.status == BUILD_OK && streq(targets[0], "bzImage")) {
		if (asprintf(&res.bzimage, "%s/arch/x86/boot/bzImage", res.objdir) < 0 ||
		    asprintf(&res.vmlinux, "%s/vmlinux", res.objdir) < 0 ||
		    asprintf(&res.system_map, "%s/System.map", res.objdir) < 0)
			return -ENOMEM;
		if (!is_file(res.bzimage))
			build_set_message(&res, BUILD_FAILED, "make succeeded but %s is missing",
					  res.bzimage);
	}
	res.usec = clock_mono_usec() - start;
	*ret = res;
	res = (struct build_result){ 0 };
	return 0;
}

int build_kernel(const struct build_opts *o, struct build_result *ret)
{
	return build_common(o, (char *const[]){ "bzImage", NULL }, ret);
}

int build_check_patch(const struct build_opts *o, struct build_result *ret)
{
	_cleanup_strv_ char **files = NULL;
	int r;

	for (size_t i = 0; o->patches && o->patches[i]; i++) {
		_cleanup_free_ char *p = NULL;
		_cleanup_strv_ char **f = NULL;
		size_t len;

		r = read_file_bounded(o->patches[i], PATCH_MAX, &p, &len);
		if (r < 0)
			return r;
		r = build_patch_files(p, len, &f);
		if (r < 0)
			return r;
		for (size_t k = 0; f && f[k]; k++) {
			size_t n = strlen(f[k]);

			/* make builds path/file.o from path/file.c. */
			f[k][n - 1] = 'o';
			if (!strv_contains(files, f[k]) && strv_push(&files, f[k]) < 0)
				return -ENOMEM;
		}
	}
	if (!files) {
		*ret = (struct build_result){ .status = BUILD_OK };
		return 0;
	}
	return build_common(o, files, ret);
}

static char *strip_src(const char *path, size_t n, const char *src)
{
	size_t sl = src ? strlen(src) : 0;

	if (sl > 0 && n > sl && strncmp(path, src, sl) == 0 && path[sl] == '/') {
		path += sl + 1;
		n -= sl + 1;
	}
	while (n > 3 && strncmp(path, "../", 3) == 0) {
		path += 3;
		n -= 3;
	}
	return strndup(path, n);
}

static int push_error(struct build_error **v, size_t *n, char *file, int line, const char *msg,
		      size_t msg_len)
{
	struct build_error *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv) {
		free(file);
		return -ENOMEM;
	}
	*v = nv;
	nv[*n] = (struct build_error){ .file = file, .line = line,
				       .message = strndup(msg, msg_len) };
	if (!file || !nv[*n].message) {
		free(file);
		free(nv[*n].message);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

/* Recognises "path:line:col: error: msg", "path:line: error: msg" and
 * "ld: ...: undefined reference to ..." lines. */
int build_parse_errors(const char *log, size_t len, const char *src, size_t max,
		       struct build_error **ret, size_t *ret_n)
{
	struct build_error *v = NULL;
	size_t n = 0;
	const char *p = log, *end = log + len;
	int r;

	while (p < end && n < max) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *e, *colon;
		size_t ll;

		if (!eol)
			eol = end;
		ll = (size_t)(eol - p);
		e = memmem(p, ll, ": error: ", 9);
		if (!e)
			e = memmem(p, ll, ": fatal error: ", 15);
		colon = memchr(p, ':', ll);
		if (e && colon && colon < e && isdigit((unsigned char)colon[1])) {
			const char *msg = memchr(e + 1, ':', (size_t)(eol - e - 1));

			msg = msg ? msg + 2 : e;
			r = push_error(&v, &n, strip_src(p, (size_t)(colon - p), src),
				       atoi(colon + 1), msg, (size_t)(eol > msg ? eol - msg : 0));
			if (r < 0) {
				build_errors_free(v, n);
				return r;
			}
		} else if ((e = memmem(p, ll, "undefined reference to", 22))) {
			r = push_error(&v, &n, strdup(""), 0, e, (size_t)(eol - e));
			if (r < 0) {
				build_errors_free(v, n);
				return r;
			}
		}
		p = eol + 1;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int build_patch_files(const char *patch, size_t len, char ***ret)
{
	_cleanup_strv_ char **v = NULL;
	const char *p = patch, *end = patch + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *name;

		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > 6 && strncmp(p, "+++ b/", 6) == 0) {
			_cleanup_free_ char *f = NULL;
			const char *tab;

			name = p + 6;
			tab = memchr(name, '\t', (size_t)(eol - name));
			f = strndup(name, (size_t)((tab ? tab : eol) - name));
			if (!f)
				return -ENOMEM;
			if (endswith(f, ".c") && !strstr(f, "..") && f[0] != '/' &&
			    !strv_contains(v, f) && strv_push(&v, f) < 0)
				return -ENOMEM;
		}
		p = eol + 1;
	}
	*ret = TAKE_PTR(v);
	return 0;
}

int build_check_apply(const struct build_opts *o, struct build_result *ret)
{
	_cleanup_(build_result_free) struct build_result res = { 0 };
	_cleanup_(unlockp) int src_lock = -1;
	_cleanup_free_ char *srclock = NULL, *msg = NULL;
	int r;

	if (asprintf(&srclock, "%s/.kfix", o->src) < 0)
		return -ENOMEM;
	r = lock_slot(srclock, &src_lock);
	if (r < 0)
		return r;
	r = journal_revert(o->src, &msg);
	if (r < 0)
		return r;
	for (size_t i = 0; o->patches && o->patches[i]; i++) {
		_cleanup_free_ char *out = NULL, *esc = NULL;

		r = patch_run(o->src, o->patches[i], false, true, &out);
		if (r != 0) {
			esc = str_escape(out ? out : "", out ? strlen(out) : 0, 400);
			r = build_set_message(&res, BUILD_BAD_PATCH, "patch %s does not apply: %s",
					o->patches[i], esc ? esc : "");
			if (r < 0)
				return r;
			break;
		}
	}
	*ret = res;
	res = (struct build_result){ 0 };
	return 0;
}
