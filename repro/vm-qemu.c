#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/strutil.h"
#include "report.h"
#include "ssh-internal.h"
#include "vm.h"

#define KERNEL_MAX (256 * 1024 * 1024)
#define QEMU_OUT_MAX (64 * 1024)
/* A boot failure's explanation: the end of qemu's output, the console's
 * end scanned for a crash report, and how much of either is shown. */
#define QEMU_OUT_SHOWN 4096
#define CONSOLE_SCANNED (48 * 1024)
#define CONSOLE_SHOWN 2000
/* A VM outlives its run by at most this much if kfix and sshd both fail
 * to stop it. */
#define VM_MAX_LIFETIME_SEC 3600
/* A VM folder this much older than any VM can live was left by a kfix
 * killed before its VM started (the watcher removes the others). */
#define VM_STALE_MIN (VM_MAX_LIFETIME_SEC / 60 + 30)

struct vm {
	const struct vm_opts *o;
	struct ssh *host;
	struct ssh *guest;
	struct ssh_job *job;
	char *dir; /* on the VM host */
	int port;
};

static void qemu_stop(struct vm *vm)
{
	if (!vm)
		return;
	ssh_free(vm->guest);
	if (vm->job)
		(void)ssh_job_finish(vm->job, 15 * 1000000ULL, NULL);
	if (vm->host && vm->dir) {
		_cleanup_free_ char *q = ssh_quote(vm->dir), *cmd = NULL;
		struct ssh_exec_result r = { 0 };

		if (q && asprintf(&cmd, "rm -rf %s", q) >= 0 &&
		    ssh_exec(vm->host, cmd, NULL, 0, 10 * 1000000ULL, 4096, &r) >= 0)
			ssh_exec_result_free(&r);
	}
	ssh_free(vm->host);
	free(vm->dir);
	free(vm);
}
DEFINE_CLEANUP(struct vm, qemu_stop);

static int host_run(struct vm *vm, const char *cmd, const void *in, size_t in_len,
		    char **ret_out)
{
	struct ssh_exec_result r = { 0 };
	int k;

	k = ssh_exec(vm->host, cmd, in, in_len, 120 * 1000000ULL, QEMU_OUT_MAX, &r);
	if (k < 0)
		return k;
	k = r.lost || r.timed_out ? -EIO : r.exit_status;
	if (ret_out)
		*ret_out = TAKE_PTR(r.output);
	ssh_exec_result_free(&r);
	return k;
}

static bool is_loopback(const char *h)
{
	return streq(h, "localhost") || streq(h, "::1") || startswith(h, "127.");
}

/* The remote script: qemu in the background under a time limit, and a
 * watcher (ssh_watch_script) that stops it, with its process group, as
 * soon as our channel's stdin closes, which happens when kfix stops the
 * VM, exits, is killed or loses the connection.  When qemu was still
 * running then, the watcher removes the VM's folder too, which a kfix
 * that was killed cannot do.  (The channel also closes when the script
 * exits: then kfix still reads qemu.out and removes the folder itself.)
 * A folder whose VM never started is swept by a later VM's start. */
static int qemu_command(const struct vm *vm, char **ret)
{
	const struct vm_opts *o = vm->o;
	_cleanup_free_ char *dir = ssh_quote(vm->dir), *qemu = ssh_quote(o->qemu),
			    *image = ssh_quote(o->image), *work = ssh_quote(o->workdir),
			    *append = NULL, *qappend = NULL, *rm = NULL, *watch = NULL;

	if (!dir || !qemu || !image || !work)
		return -ENOMEM;
	if (asprintf(&append, "console=ttyS0 panic=-1 oops=panic panic_on_warn=1 %s",
		     o->cmdline ? o->cmdline : "") < 0)
		return -ENOMEM;
	qappend = ssh_quote(append);
	if (!qappend || asprintf(&rm, "cd /; rm -rf %s", dir) < 0 ||
	    ssh_watch_script("q", rm, &watch) < 0)
		return -ENOMEM;
	return asprintf(ret,
			"find %s -mindepth 1 -maxdepth 1 -type d -name 'vm-*' -mmin +%d "
			"-exec rm -rf {} + >/dev/null 2>&1; "
			"cd %s || exit 1; exec 3<&0; "
			"timeout -k 5 %d %s -m %d -smp %d -display none -monitor none "
			"-no-reboot -kernel bzImage -initrd %s -append %s "
			"-netdev user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:%d-:22 "
			"-device virtio-net-pci,netdev=n0 -serial file:console.log "
			"</dev/null >qemu.out 2>&1 & q=$!; %s"
			"exec 3<&-; wait $q; rc=$?; echo \"qemu exited $rc\" >>qemu.out; exit $rc",
			work, VM_STALE_MIN, dir, VM_MAX_LIFETIME_SEC, qemu, o->memory, o->cpus,
			image, qappend, vm->port, watch) < 0
		       ? -ENOMEM
		       : 0;
}

static int pick_port(void)
{
	unsigned v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (unsigned)getpid() * 2654435761u;
	return 20000 + (int)(v % 40000);
}

/* The VM host is this machine (see qemu_start): the kernel is copied
 * there by the VM host's user, which saves sending some MiB through SSH
 * for every VM.  When that user cannot read our build folder, the kernel
 * travels as a command's stdin as for any host. */
static int copy_kernel_locally(struct vm *vm, const char *kernel)
{
	_cleanup_free_ char *abs = realpath(kernel, NULL), *qk = NULL, *qd = NULL, *cmd = NULL;

	if (!abs)
		return -errno;
	qk = ssh_quote(abs);
	qd = ssh_quote(vm->dir);
	if (!qk || !qd ||
	    asprintf(&cmd, "mkdir -p %s && cp -- %s %s/bzImage 2>/dev/null", qd, qk, qd) < 0)
		return -ENOMEM;
	return host_run(vm, cmd, NULL, 0, NULL) == 0 ? 0 : -EACCES;
}

static int prepare_host(struct vm *vm, const char *kernel, char **ret_error)
{
	_cleanup_free_ char *data = NULL, *cmd = NULL, *q = NULL, *out = NULL;
	unsigned rnd = 0;
	size_t len;
	int r;

	(void)getrandom(&rnd, sizeof(rnd), 0);
	if (asprintf(&vm->dir, "%s/vm-%d-%08x", vm->o->workdir, getpid(), rnd) < 0)
		return -ENOMEM;
	r = copy_kernel_locally(vm, kernel);
	if (r == 0 || r == -ENOMEM)
		return r;
	r = read_file_bounded(kernel, KERNEL_MAX, &data, &len);
	if (r < 0)
		return asprintf(ret_error, "cannot read kernel %s: %s", kernel, strerror(-r)) < 0
			       ? -ENOMEM
			       : r;
	q = ssh_quote(vm->dir);
	if (!q || asprintf(&cmd, "mkdir -p %s && cat > %s/bzImage", q, q) < 0)
		return -ENOMEM;
	r = host_run(vm, cmd, data, len, &out);
	if (r != 0)
		return asprintf(ret_error, "cannot copy the kernel to the VM host: %s",
				out ? out : "connection lost") < 0
			       ? -ENOMEM
			       : -EIO;
	return 0;
}

static int connect_guest(struct vm *vm, uint64_t banner_usec, struct ssh **ret, char **ret_error)
{
	struct ssh_target g = {
		.host = vm->o->ssh_host,
		.port = vm->port,
		.user = vm->o->guest_user,
		.key = vm->o->guest_key,
		.known_hosts = vm->o->guest_known_hosts,
		.pin_any_host = true,
		.timeout_usec = 10 * 1000000ULL,
		.banner_timeout_usec = banner_usec,
	};

	return ssh_connect(&g, ret, ret_error);
}

/* What the console says of a boot that never reached SSH.  A kernel that
 * crashed while booting gets its crash report, from the crash on: that is
 * what a developer (or the model) reads first, and unlike the console's
 * last bytes it does not start at a line whose place varies with the
 * boot's timing.  Otherwise the console's last bytes. */
static char *console_story(const char *console, size_t len)
{
	_cleanup_(report_freep) struct report *rep = NULL;
	_cleanup_free_ char *title = NULL, *text = NULL;
	const char *t;
	char *s;

	if (report_parse(console, len, &rep) >= 0 && report_title(rep) &&
	    (t = report_text(rep))) {
		title = str_escape(report_title(rep), strlen(report_title(rep)), 200);
		text = str_escape(t, strlen(t), CONSOLE_SHOWN);
		if (!title || !text)
			return NULL;
		return asprintf(&s, " " VM_BOOT_CRASH_STORY "%s; its report: %s", title,
				text) < 0 ? NULL : s;
	}
	t = len > CONSOLE_SHOWN ? console + len - CONSOLE_SHOWN : console;
	text = str_escape(t, len - (size_t)(t - console), CONSOLE_SHOWN);
	return text && asprintf(&s, " console tail: %s", text) >= 0 ? s : NULL;
}

/* Explains a VM that stopped or never answered, from qemu's own output
 * and whether the kernel printed anything. */
static void boot_failure(struct vm *vm, bool exited, enum vm_failure *ret_failure,
			 char **ret_error)
{
	_cleanup_free_ char *out = NULL, *cmd = NULL, *q = ssh_quote(vm->dir), *esc = NULL,
			    *story = NULL;
	char *mark;
	bool console;

	/* qemu's own output shows why qemu failed; the console, a crash
	 * during boot (the run's boot error). */
	if (q && asprintf(&cmd, "tail -c %d %s/qemu.out; test -s %s/console.log && "
			  "echo KFIX-CONSOLE && tail -c %d %s/console.log", QEMU_OUT_SHOWN, q, q,
			  CONSOLE_SCANNED, q) >= 0)
		(void)host_run(vm, cmd, NULL, 0, &out);
	mark = out ? strstr(out, "KFIX-CONSOLE\n") : NULL;
	console = mark != NULL;
	if (mark) {
		*mark = '\0';
		story = console_story(mark + 13, strlen(mark + 13));
	}
	esc = str_escape(out ? out : "", out ? strlen(out) : 0, 300);
	*ret_failure = console ? VM_NO_BOOT : VM_INFRA;
	free(*ret_error);
	if (asprintf(ret_error, "%s%s%s%s%s",
		     exited ? "the VM stopped before guest SSH answered"
			    : "guest SSH never answered",
		     console ? "" : " (no console output)", esc && *esc ? ": " : "",
		     esc ? esc : "", story ? story : "") < 0)
		*ret_error = NULL;
}

static int qemu_start(const struct vm_opts *o, const char *kernel, struct vm **ret,
		      enum vm_failure *ret_failure, char **ret_error)
{
	_cleanup_(qemu_stopp) struct vm *vm = NULL;
	_cleanup_free_ char *cmd = NULL;
	struct ssh_target h = {
		.host = o->ssh_host,
		.port = o->ssh_port,
		.user = o->ssh_user,
		.key = o->ssh_key,
		.known_hosts = o->known_hosts,
		.timeout_usec = 20 * 1000000ULL,
	};
	/* How long a connection may stay silent before a fresh one is
	 * tried: short while the guest boots, then growing, in case the
	 * guest is up but slow to greet (a loaded host under emulation). */
	uint64_t banner = 1000 * 1000ULL;
	unsigned silent = 0;
	uint64_t deadline;
	int r;

	*ret_failure = VM_INFRA;
	if (!is_loopback(o->ssh_host))
		return asprintf(ret_error, "VM host %s: guests are reached through the VM host's "
				"loopback, which kfix supports only when the VM host is local",
				o->ssh_host) < 0 ? -ENOMEM : -EOPNOTSUPP;
	if (!o->image)
		return asprintf(ret_error, "[vm \"%s\"] has no image", o->name) < 0 ? -ENOMEM
										   : -EINVAL;
	vm = calloc(1, sizeof(*vm));
	if (!vm)
		return -ENOMEM;
	vm->o = o;
	vm->port = pick_port();
	r = ssh_connect(&h, &vm->host, ret_error);
	if (r < 0)
		return r;
	r = prepare_host(vm, kernel, ret_error);
	if (r < 0)
		return r;
	r = qemu_command(vm, &cmd);
	if (r < 0)
		return r;
	r = ssh_job_start(vm->host, cmd, &vm->job);
	if (r < 0)
		return asprintf(ret_error, "cannot start qemu on the VM host") < 0 ? -ENOMEM : r;
	deadline = clock_mono_usec() + o->boot_timeout_usec;
	for (;;) {
		_cleanup_free_ char *msg = NULL;

		if (ssh_job_exited(vm->job)) {
			boot_failure(vm, true, ret_failure, ret_error);
			return -ECHILD;
		}
		r = connect_guest(vm, banner, &vm->guest, &msg);
		if (r == 0)
			break;
		if (r == -ETIMEDOUT && ++silent > 15)
			banner = MIN(banner + 500 * 1000ULL, 10 * 1000000ULL);
		if (r == -EKEYREJECTED || r == -EACCES) {
			/* The guest answered but refused us or showed another
			 * key: retrying cannot help. */
			*ret_error = TAKE_PTR(msg);
			return r;
		}
		if (clock_mono_usec() > deadline) {
			boot_failure(vm, false, ret_failure, ret_error);
			return -ETIMEDOUT;
		}
		/* a refused connection costs little on the VM host: poll often,
		 * so that little of the guest's ready time is lost waiting */
		usleep(200 * 1000);
	}
	*ret_failure = VM_OK;
	*ret = TAKE_PTR(vm);
	return 0;
}

static int qemu_exec(struct vm *vm, const char *cmd, const void *in, size_t in_len,
		     uint64_t timeout_usec, struct vm_exec_result *ret)
{
	struct ssh_exec_result r = { 0 };
	int k;

	k = ssh_exec(vm->guest, cmd, in, in_len, timeout_usec, 1024 * 1024, &r);
	if (k < 0) {
		if (k != -ECONNRESET && k != -EIO)
			return k;
		/* The guest died before the channel opened. */
		r.lost = true;
		r.exit_status = -1;
	}
	*ret = (struct vm_exec_result){ .exit_status = r.exit_status, .lost = r.lost,
					 .timed_out = r.timed_out, .output = r.output,
					 .output_len = r.output_len };
	return 0;
}

static bool qemu_exited(struct vm *vm)
{
	return ssh_job_exited(vm->job);
}

static int qemu_console(struct vm *vm, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *q = ssh_quote(vm->dir), *cmd = NULL;
	struct ssh_exec_result r = { 0 };
	int k;

	if (!q || asprintf(&cmd, "tail -c %zu %s/console.log", max, q) < 0)
		return -ENOMEM;
	k = ssh_exec(vm->host, cmd, NULL, 0, 60 * 1000000ULL, max + 1, &r);
	if (k < 0)
		return k;
	if (r.lost || r.timed_out || r.exit_status != 0) {
		ssh_exec_result_free(&r);
		return -EIO;
	}
	*ret = r.output;
	*ret_len = r.output_len;
	return 0;
}

const struct vm_backend vm_backend_qemu = {
	.name = "qemu",
	.start = qemu_start,
	.exec = qemu_exec,
	.exited = qemu_exited,
	.console = qemu_console,
	.stop = qemu_stop,
};
