#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "build-internal.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "common/strutil.h"
#include "ssh-internal.h"

/* What the build host has of the source: an id (also kept on the build
 * host, so that a wiped or replaced build host gets the whole tree again)
 * and the size and mtime of each file sent. */
#define MANIFEST ".kfix-remote-manifest"
#define SYNC_ID ".kfix-sync-id"
#define MANIFEST_MAX (256 * 1024 * 1024)
#define SHORT_USEC (120 * 1000000ULL)
#define SEND_USEC (3600 * 1000000ULL)

struct build_ssh {
	struct ssh *ssh;
	char *dir;	/* the build host's folder, absolute */
	char *src;	/* dir/NAME.src: the copy of the source */
	char *obj;	/* dir/NAME: the O= directory */
	char *where;	/* user@host:obj, for people */
	char *q_src, *q_obj; /* shell-quoted */
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static void build_ssh_free(struct build_ssh *b)
{
	if (!b)
		return;
	ssh_free(b->ssh);
	free(b->dir);
	free(b->src);
	free(b->obj);
	free(b->where);
	free(b->q_src);
	free(b->q_obj);
	free(b);
}
DEFINE_CLEANUP(struct build_ssh, build_ssh_free);

static bool no_space_in(const char *out)
{
	return out && (strstr(out, "No space left on device") || strstr(out, "Disk quota exceeded"));
}

/* Runs a short command; its exit status, or < 0 when the connection
 * failed.  The output (bounded) in *ret_out when asked. */
static int host_run(struct build_ssh *b, const char *cmd, const void *in, size_t in_len,
		    size_t out_max, char **ret_out, size_t *ret_len)
{
	struct ssh_exec_result x = { 0 };
	int r;

	r = ssh_exec(b->ssh, cmd, in, in_len, SHORT_USEC, out_max, &x);
	if (r < 0)
		return r;
	r = x.lost ? -ECONNRESET : x.timed_out ? -ETIMEDOUT : x.exit_status < 0 ? -EIO
									     : x.exit_status;
	if (ret_out) {
		if (ret_len)
			*ret_len = x.output_len;
		*ret_out = TAKE_PTR(x.output);
	}
	ssh_exec_result_free(&x);
	return r;
}

static int infra(struct build_result *res, const char *what, const char *out)
{
	_cleanup_free_ char *esc = str_escape(out ? out : "", out ? strlen(out) : 0, 300);

	return build_set_message(res, BUILD_INFRA, "build host: %s%s%s", what,
				 esc && *esc ? ": " : "", esc ? esc : "");
}

static int no_space_remote(struct build_ssh *b, struct build_result *res)
{
	return build_set_message(res, BUILD_INFRA,
				 "no space left on device: the disk holding %s is full "
				 "(an infrastructure error, not the patch's)", b->where);
}

/* Creates the folders and learns their absolute names: the compiler
 * prints those, and the error parser strips them. */
static int locate(struct build_ssh *b, const struct build_opts *o, const char *objdir,
		  struct build_result *res)
{
	_cleanup_free_ char *q = ssh_quote(o->remote.dir), *cmd = NULL, *out = NULL;
	const char *name = base_name(objdir);
	size_t len = 0;
	int r;

	if (!q || asprintf(&cmd, "mkdir -p %s && cd %s && pwd -P", q, q) < 0)
		return -ENOMEM;
	r = host_run(b, cmd, NULL, 0, 4096, &out, &len);
	if (r != 0)
		return no_space_in(out) ? no_space_remote(b, res)
					: infra(res, "cannot create the build folder", out);
	while (len > 0 && out[len - 1] == '\n')
		out[--len] = '\0';
	if (out[0] != '/' || strchr(out, '\n'))
		return infra(res, "unexpected answer to pwd", out);
	b->dir = TAKE_PTR(out);
	if (asprintf(&b->src, "%s/%s.src", b->dir, name) < 0 ||
	    asprintf(&b->obj, "%s/%s", b->dir, name) < 0 ||
	    asprintf(&b->where, "%s@%s:%s", o->remote.user, o->remote.host, b->obj) < 0)
		return -ENOMEM;
	b->q_src = ssh_quote(b->src);
	b->q_obj = ssh_quote(b->obj);
	return b->q_src && b->q_obj ? 0 : -ENOMEM;
}

/* The manifest saved by the last sync, when the build host still has the
 * copy it describes; NULL (send everything) otherwise. */
static int last_manifest(struct build_ssh *b, const char *objdir, char **ret_id,
			 char **ret_body, size_t *ret_len)
{
	_cleanup_free_ char *path = NULL, *data = NULL, *cmd = NULL, *remote = NULL;
	size_t len;
	char *nl;

	*ret_body = NULL;
	*ret_len = 0;
	if (asprintf(&path, "%s/" MANIFEST, objdir) < 0 ||
	    asprintf(&cmd, "cat %s/" SYNC_ID " 2>/dev/null", b->q_src) < 0)
		return -ENOMEM;
	if (read_file_bounded(path, MANIFEST_MAX, &data, &len) < 0 ||
	    !startswith(data, "id ") || !(nl = strchr(data, '\n')))
		return 0;
	*nl = '\0';
	if (host_run(b, cmd, NULL, 0, 256, &remote, NULL) != 0 ||
	    !streq(remote, data + 3))
		return 0;
	*ret_id = strdup(data + 3);
	if (!*ret_id)
		return -ENOMEM;
	*ret_len = len - (size_t)(nl + 1 - data);
	memmove(data, nl + 1, *ret_len + 1);
	*ret_body = TAKE_PTR(data);
	return 0;
}

static int new_id(char **ret)
{
	unsigned char v[12];

	if (getrandom(v, sizeof(v), 0) != sizeof(v))
		return -EIO;
	return asprintf(ret, "%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x", v[0], v[1],
			v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]) < 0
		       ? -ENOMEM
		       : 0;
}

/* The whole tree keeps its mtimes (older than anything built from it, so
 * an O= directory already there stays valid); files sent later get the
 * build host's time of arrival, as a local edit would: newer than every
 * object built there before, whatever the two clocks say and however
 * close the previous build was (tar keeps whole seconds only). */
static int send_files(struct build_ssh *b, const struct build_opts *o, const char *objdir,
		      const struct sync_plan *p, bool whole, struct build_result *res)
{
	_cleanup_free_ char *list = NULL, *tarf = NULL, *cmd = NULL;
	_cleanup_close_ int fd = -1;
	struct proc_opts po = PROC_OPTS_DEFAULT;
	struct proc_result pr = { 0 };
	struct ssh_stream_opts so = { .in_fd = -1, .out_fd = -1, .timeout_usec = SEND_USEC,
				      .output_max = 16384 };
	struct ssh_exec_result x = { 0 };
	int r;

	if (asprintf(&list, "%s/.kfix-sync-list", objdir) < 0 ||
	    asprintf(&tarf, "%s/.kfix-sync.tar", objdir) < 0)
		return -ENOMEM;
	r = write_file_atomic(list, p->changed, p->changed_len, 0600);
	if (r < 0)
		return r;
	po.timeout_usec = SEND_USEC;
	po.output_max = 16384;
	r = proc_run((char *const[]){ "tar", "-c", "-f", tarf, "-C", (char *)o->src,
				      "--no-recursion", "--null", "-T", list, NULL },
		     &po, &pr);
	(void)unlink(list);
	if (r < 0 || pr.exit_code != 0) {
		bool full = no_space_in(pr.output);

		proc_result_free(&pr);
		(void)unlink(tarf);
		if (r < 0)
			return r;
		return full ? build_set_message(res, BUILD_INFRA,
						"no space left on device for %s", tarf)
			    : build_set_message(res, BUILD_INFRA, "tar of the source failed");
	}
	proc_result_free(&pr);
	fd = open(tarf, O_RDONLY | O_CLOEXEC);
	(void)unlink(tarf);
	if (fd < 0)
		return -errno;
	if (asprintf(&cmd, "mkdir -p %s && tar -x %s-f - -C %s", b->q_src, whole ? "" : "-m ",
		     b->q_src) < 0)
		return -ENOMEM;
	so.in_fd = fd;
	r = ssh_exec_stream(b->ssh, cmd, &so, &x);
	if (r < 0)
		return infra(res, "lost the connection while sending the source", NULL);
	r = x.exit_status;
	if (r != 0)
		r = no_space_in(x.output) ? no_space_remote(b, res)
			: infra(res, x.lost ? "lost the connection while sending the source"
					    : "cannot unpack the source", x.output);
	ssh_exec_result_free(&x);
	return r;
}

static int sync_source(struct build_ssh *b, const struct build_opts *o, const char *objdir,
		       struct build_result *res)
{
	_cleanup_(sync_plan_free) struct sync_plan p = { 0 };
	_cleanup_free_ char *id = NULL, *old = NULL, *cmd = NULL, *out = NULL, *mpath = NULL;
	_cleanup_buf_ struct buf m = BUF_INIT(MANIFEST_MAX + 64);
	size_t old_len = 0;
	int r;

	r = last_manifest(b, objdir, &id, &old, &old_len);
	if (r < 0)
		return r;
	r = sync_plan_make(o->src, old, old_len, &p);
	if (r < 0)
		return build_set_message(res, BUILD_INFRA, "cannot list the source %s: %s",
					 o->src, strerror(-r));
	if (p.n_changed == 0 && p.n_removed == 0)
		return 0;
	/* Whatever happens next, the build host's copy no longer matches a
	 * manifest until the new one is written; a fresh copy starts
	 * clean. */
	if (asprintf(&cmd, old ? "rm -f %s/" SYNC_ID : "rm -rf %s && mkdir -p %s", b->q_src,
		     b->q_src) < 0)
		return -ENOMEM;
	r = host_run(b, cmd, NULL, 0, 4096, &out, NULL);
	if (r != 0)
		return infra(res, "cannot reset the copy of the source", out);
	if (p.n_changed > 0) {
		r = send_files(b, o, objdir, &p, !old, res);
		if (r < 0 || res->status != BUILD_OK)
			return r;
	}
	if (p.n_removed > 0) {
		free(cmd);
		free(out);
		out = NULL;
		if (asprintf(&cmd, "cd %s && xargs -0 -r rm -f --", b->q_src) < 0)
			return -ENOMEM;
		r = host_run(b, cmd, p.removed, p.removed_len, 4096, &out, NULL);
		if (r != 0)
			return infra(res, "cannot remove deleted files", out);
	}
	free(id);
	id = NULL;
	r = new_id(&id);
	if (r < 0)
		return r;
	free(cmd);
	free(out);
	out = NULL;
	if (asprintf(&cmd, "cat > %s/" SYNC_ID, b->q_src) < 0)
		return -ENOMEM;
	r = host_run(b, cmd, id, strlen(id), 4096, &out, NULL);
	if (r != 0)
		return no_space_in(out) ? no_space_remote(b, res)
					: infra(res, "cannot record the copy", out);
	if (buf_printf(&m, "id %s\n", id) < 0 || buf_append(&m, p.manifest, p.manifest_len) < 0 ||
	    asprintf(&mpath, "%s/" MANIFEST, objdir) < 0)
		return -ENOMEM;
	return write_file_atomic(mpath, m.data, m.len, 0644);
}

static int ssh_open(const struct build_opts *o, const char *objdir, struct build_result *res,
		    struct build_host **ret)
{
	_cleanup_(build_ssh_freep) struct build_ssh *b = NULL;
	_cleanup_free_ char *msg = NULL;
	struct build_host *h;
	struct ssh_target t = {
		.host = o->remote.host,
		.port = o->remote.port,
		.user = o->remote.user,
		.key = o->remote.key[0] ? o->remote.key : NULL,
		.known_hosts = o->remote.known_hosts[0] ? o->remote.known_hosts : NULL,
		.timeout_usec = 20 * 1000000ULL,
	};
	int r;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	r = ssh_connect(&t, &b->ssh, &msg);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return build_set_message(res, BUILD_INFRA, "build host %s",
					 msg ? msg : strerror(-r));
	r = locate(b, o, objdir, res);
	if (r < 0 || res->status != BUILD_OK)
		return r;
	r = sync_source(b, o, objdir, res);
	if (r < 0 || res->status != BUILD_OK)
		return r;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	*h = (struct build_host){ .o = o, .objdir = objdir, .ssh = TAKE_PTR(b) };
	*ret = h;
	return 0;
}

static const char *ssh_src(struct build_host *h)
{
	return h->ssh->src;
}

static const char *ssh_objdir(struct build_host *h)
{
	return h->ssh->where;
}

static int ssh_put_config(struct build_host *h, const char *data, size_t len)
{
	_cleanup_free_ char *cmd = NULL;

	if (asprintf(&cmd, "mkdir -p %s && cat > %s/.config", h->ssh->q_obj, h->ssh->q_obj) < 0)
		return -ENOMEM;
	return host_run(h->ssh, cmd, data, len, 4096, NULL, NULL) == 0 ? 0 : -EIO;
}

static int ssh_get_config(struct build_host *h, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *cmd = NULL, *out = NULL;
	size_t len = 0;
	int r;

	if (asprintf(&cmd, "cat %s/.config", h->ssh->q_obj) < 0)
		return -ENOMEM;
	r = host_run(h->ssh, cmd, NULL, 0, max + 1, &out, &len);
	if (r != 0)
		return r < 0 ? r : -EIO;
	if (len > max)
		return -EFBIG;
	*ret = TAKE_PTR(out);
	*ret_len = len;
	return 0;
}

struct tee {
	int log_fd;
	struct follow *f;
};

static void tee_output(void *userdata, const char *data, size_t len)
{
	struct tee *t = userdata;

	/* The log is best effort, as for local builds: the follower has
	 * already seen a full disk. */
	if (t->log_fd >= 0 && write(t->log_fd, data, len) < 0)
		t->log_fd = -1;
	follow_output(t->f, data, len);
}

/* make runs in its own session under a watcher that kills the whole
 * session when our channel's stdin closes: when kfix times the build out,
 * is killed or loses the connection, nothing goes on building.  A lock
 * next to the O= directory keeps two builders (two kfix instances
 * sharing a build host) out of each other's way.  Every word but the
 * job count comes from the configuration or our own names, and is quoted
 * all the same. */
static int make_command(struct build_host *h, char *const *targets, char **ret)
{
	_cleanup_buf_ struct buf b = BUF_INIT(64 * 1024);
	const struct build_opts *o = h->o;
	struct sandbox sb = { .kind = o->sandbox, .ro = { h->ssh->src }, .n_ro = 1,
			      .rw = { h->ssh->obj }, .n_rw = 1 };
	_cleanup_strv_ char **box = NULL;
	_cleanup_free_ char *watch = NULL;
	int r;

	/* the sandbox's words before make's, each quoted */
	r = sandbox_argv(&sb, (char *const[]){ "make", NULL }, true, &box);
	if (r < 0)
		return r;
	if (buf_printf(&b, "mkdir -p %s && cd %s || exit 125; exec 3<&0 9>>%s.lock; "
		       "flock 9 || exit 125; ", h->ssh->q_obj, h->ssh->q_src, h->ssh->q_obj) < 0)
		return -ENOMEM;
	/* a make killed outright left truncated objects that look up to
	 * date: those written since its marker go (see build.c) */
	if (buf_printf(&b, "k=%s/.kfix-building; if [ -e \"$k\" ]; then find %s -newer \"$k\" -type f "
		       "\\( -name '*.o' -o -name '*.a' -o -name '*.ko' -o -name 'vmlinux*' -o "
		       "-name bzImage \\) -delete; fi; touch \"$k\" || exit 125; ",
		       h->ssh->q_obj, h->ssh->q_obj) < 0)
		return -ENOMEM;
	if (o->sandbox != SANDBOX_NONE &&
	    buf_puts(&b, "command -v bwrap >/dev/null || { echo 'kfix: the build sandbox (bwrap) "
		     "is not installed on this build host' >&2; exit 125; }; ") < 0)
		return -ENOMEM;
	if (buf_puts(&b, "setsid") < 0)
		return -ENOMEM;
	for (size_t i = 0; box[i]; i++) {
		_cleanup_free_ char *q = ssh_quote(box[i]);

		if (!q || buf_printf(&b, " %s", q) < 0)
			return -ENOMEM;
	}
	if (buf_printf(&b, " -C %s O=%s", h->ssh->q_src, h->ssh->q_obj) < 0)
		return -ENOMEM;
	if ((o->jobs > 0 ? buf_printf(&b, " -j%d", o->jobs) : buf_puts(&b, " -j$(nproc)")) < 0)
		return -ENOMEM;
	if (o->ccache && buf_puts(&b, " 'CC=ccache gcc'") < 0)
		return -ENOMEM;
	for (size_t i = 0; targets[i]; i++) {
		_cleanup_free_ char *q = ssh_quote(targets[i]);

		if (!q || buf_printf(&b, " %s", q) < 0)
			return -ENOMEM;
	}
	r = ssh_watch_script("m", NULL, &watch);
	if (r < 0)
		return r;
	if (buf_printf(&b, " </dev/null 3<&- 9>&- & m=$!; %s"
		       "exec 3<&-; wait $m; s=$?; rm -f \"$k\"; exit $s", watch) < 0)
		return -ENOMEM;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

static int ssh_make(struct build_host *h, char *const *targets, int log_fd, struct follow *f)
{
	_cleanup_free_ char *cmd = NULL;
	struct tee t = { .log_fd = log_fd, .f = f };
	struct ssh_stream_opts so = { .in_fd = -1, .hold_stdin = true, .out_fd = -1,
				      .on_output = tee_output, .userdata = &t,
				      .timeout_usec = h->o->timeout_usec, .output_max = 1 };
	struct ssh_exec_result x = { 0 };
	int r;

	r = make_command(h, targets, &cmd);
	if (r < 0)
		return r;
	r = ssh_exec_stream(h->ssh->ssh, cmd, &so, &x);
	if (r < 0)
		return r == -ENOMEM ? r : -ECONNRESET;
	r = x.timed_out ? -ETIMEDOUT : x.lost ? -ECONNRESET : x.exit_status < 0 ? -EIO
										 : x.exit_status;
	ssh_exec_result_free(&x);
	return r;
}

static int ssh_fetch(struct build_host *h, const char *rel)
{
	_cleanup_free_ char *path = NULL, *tmp = NULL, *q = ssh_quote(rel), *cmd = NULL, *dir = NULL;
	_cleanup_close_ int fd = -1;
	struct ssh_stream_opts so = { .in_fd = -1, .timeout_usec = SEND_USEC };
	struct ssh_exec_result x = { 0 };
	char *slash;
	int r;

	if (!q || asprintf(&path, "%s/%s", h->objdir, rel) < 0 ||
	    asprintf(&tmp, "%s.kfix-fetch", path) < 0 ||
	    asprintf(&cmd, "cat %s/%s", h->ssh->q_obj, q) < 0 || !(dir = strdup(path)))
		return -ENOMEM;
	slash = strrchr(dir, '/');
	*slash = '\0';
	r = mkdir_p(dir, 0755);
	if (r < 0)
		return r;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	so.out_fd = fd;
	r = ssh_exec_stream(h->ssh->ssh, cmd, &so, &x);
	if (r >= 0)
		r = x.lost ? -ECONNRESET : x.timed_out ? -ETIMEDOUT : x.exit_status != 0 ? -EIO : 0;
	ssh_exec_result_free(&x);
	if (r >= 0 && fsync(fd) < 0)
		r = -errno;
	if (r >= 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		(void)unlink(tmp);
	return r;
}

static void ssh_close(struct build_host *h)
{
	build_ssh_free(h->ssh);
	free(h);
}

const struct build_backend build_backend_ssh = {
	.name = "ssh",
	.open = ssh_open,
	.src = ssh_src,
	.objdir = ssh_objdir,
	.put_config = ssh_put_config,
	.get_config = ssh_get_config,
	.make = ssh_make,
	.fetch = ssh_fetch,
	.close = ssh_close,
};
