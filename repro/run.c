#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "common/strutil.h"
#include "report.h"
#include "run.h"
#include "ssh-internal.h"

#define REPRO_MAX (64 * 1024 * 1024)
#define CONSOLE_MAX (4 * 1024 * 1024)
/* syz-execprog is a static Go program of some tens of MiB. */
#define SYZ_TOOL_MAX (256 * 1024 * 1024)
/* After the reproducer ends, late reports (RCU callbacks, workqueues) get
 * this long to reach the console. */
#define SETTLE_USEC (1500 * 1000ULL)
/* A guest that dropped SSH has this long to finish its panic and stop. */
#define PANIC_WAIT_USEC (20 * 1000000ULL)
/* What is kept of kmemleak's report. */
#define LEAKS_MAX (16 * 1024)

const char *run_outcome_to_string(enum run_outcome o)
{
	static const char *const names[] = {
		[RUN_CRASHED] = "crashed", [RUN_NO_CRASH] = "no-crash",
		[RUN_BUILD_ERROR] = "build-error", [RUN_BOOT_ERROR] = "boot-error",
		[RUN_INFRA_ERROR] = "infra-error",
	};
	return (unsigned)o < ARRAY_SIZE(names) ? names[o] : "unknown";
}

const char *verdict_to_string(enum verdict v)
{
	static const char *const names[] = {
		[VERDICT_FIXED] = "fixed", [VERDICT_NOT_FIXED] = "not-fixed",
		[VERDICT_NOT_REPRODUCED] = "not-reproduced", [VERDICT_REPRODUCED] = "reproduced",
		[VERDICT_BUILD_ERROR] = "build-error", [VERDICT_BOOT_ERROR] = "boot-error",
		[VERDICT_INFRA_ERROR] = "infra-error",
		[VERDICT_BEHAVIOUR_CHANGED] = "behaviour-changed", [VERDICT_LEAKED] = "leaked",
		[VERDICT_SELFTEST_REGRESSION] = "selftest-regression",
	};
	return (unsigned)v < ARRAY_SIZE(names) ? names[v] : "unknown";
}

void run_result_free(struct run_result *r)
{
	free(r->title);
	free(r->report);
	free(r->message);
	free(r->console);
	free(r->output);
	free(r->leaks);
	free(r->trace);
	*r = (struct run_result){ .exit_status = -1 };
}

bool run_result_failed_exit(const struct run_result *r)
{
	return r->outcome == RUN_NO_CRASH && !r->timed_out &&
	       (r->exit_signal > 0 || r->exit_status > 0);
}

void run_series_free(struct run_series *s)
{
	for (size_t i = 0; i < s->n_results; i++)
		run_result_free(&s->results[i]);
	free(s->results);
	*s = (struct run_series){ 0 };
}

/* path made absolute (its folder resolved, the last name kept, so a
 * file not yet written works too), and that folder. */
static int abs_path(const char *path, char **ret, char *dir, size_t n)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *d = slash ? strndup(path, (size_t)(slash - path) ?: 1) : strdup(".");
	_cleanup_free_ char *real = NULL;

	if (!d)
		return -ENOMEM;
	real = realpath(d, NULL);
	if (!real)
		return -errno;
	snprintf(dir, n, "%s", real);
	return asprintf(ret, "%s/%s", real, slash ? slash + 1 : path) < 0 ? -ENOMEM : 0;
}

int run_compile_repro(const char *c_file, char *const *flags, const char *out_path,
		      enum sandbox_kind sandbox, char **ret_error)
{
	_cleanup_strv_ char **argv = NULL, **boxed = NULL;
	struct proc_opts po = PROC_OPTS_DEFAULT;
	struct proc_result pr = { 0 };
	char in_dir[4096], out_dir[4096];
	_cleanup_free_ char *abs_c = NULL, *abs_out = NULL;
	struct sandbox sb = { .kind = sandbox, .ro = { in_dir }, .n_ro = 1, .rw = { out_dir },
			      .n_rw = 1 };
	int r;

	if (sandbox_available(sandbox) < 0) {
		*ret_error = strdup("the sandbox for untrusted code (bwrap) is not installed: "
				    "install bubblewrap, or set [build] sandbox = none");
		return -ENOENT;
	}
	/* the sandbox starts in out_dir: both paths absolute */
	r = abs_path(c_file, &abs_c, in_dir, sizeof(in_dir));
	if (r >= 0)
		r = abs_path(out_path, &abs_out, out_dir, sizeof(out_dir));
	if (r < 0)
		return r;

	if (strv_push(&argv, "gcc") < 0 || strv_push(&argv, "-static") < 0 ||
	    strv_push(&argv, "-pthread") < 0 || strv_push(&argv, "-O1") < 0 ||
	    strv_push(&argv, "-w") < 0 || strv_push(&argv, "-o") < 0 ||
	    strv_push(&argv, abs_out) < 0 || strv_push(&argv, abs_c) < 0)
		return -ENOMEM;
	for (size_t i = 0; flags && flags[i]; i++)
		if (strv_push(&argv, flags[i]) < 0)
			return -ENOMEM;
	po.timeout_usec = 120 * 1000000ULL;
	po.output_max = 64 * 1024;
	r = sandbox_argv(&sb, argv, false, &boxed);
	if (r < 0)
		return r;
	r = proc_run(boxed, &po, &pr);
	if (r < 0)
		return r;
	if (pr.exit_code != 0 && pr.output && startswith(pr.output, "bwrap: ")) {
		/* the sandbox did not start: not the reproducer's fault */
		*ret_error = str_escape(pr.output, strcspn(pr.output, "\n"), 500);
		proc_result_free(&pr);
		return -EPERM;
	}
	if (pr.exit_code != 0) {
		*ret_error = str_escape(pr.output ? pr.output : "", pr.output_len, 2000);
		proc_result_free(&pr);
		return -EINVAL;
	}
	proc_result_free(&pr);
	return 0;
}

static int set_msg(struct run_result *r, enum run_outcome o, const char *msg)
{
	r->outcome = o;
	free(r->message);
	r->message = strdup(msg ? msg : "");
	return r->message ? 0 : -ENOMEM;
}

/* Fetches and classifies the console; a crash found there decides. */
static int take_console(const struct run_opts *o, struct vm *vm, struct run_result *res)
{
	size_t len = 0;
	int r;

	r = o->backend->console(vm, CONSOLE_MAX, &res->console, &len);
	if (r < 0)
		return 0;
	r = run_classify_console(res->console, len, &res->title, &res->report);
	return r == -ENOENT ? 0 : r;
}

static void vm_stopp(const struct run_opts *o, struct vm **vm)
{
	if (*vm)
		o->backend->stop(*vm);
	*vm = NULL;
}

/* What goes to the guest: the reproducer, and for a syz program
 * syzkaller's two binaries. */
struct guest_files {
	const char *name[3];
	char *data[3];
	size_t len[3];
	size_t n;
};

static void guest_files_free(struct guest_files *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->data[i]);
	g->n = 0;
}

static int guest_files_load(const struct run_opts *o, struct guest_files *g)
{
	static const char *const syz_tools[] = { "syz-execprog", "syz-executor" };
	int r;

	g->name[0] = o->syz_bin ? "kfix-repro.syz" : "kfix-repro";
	r = read_file_bounded(o->repro, REPRO_MAX, &g->data[0], &g->len[0]);
	if (r < 0)
		return r;
	g->n = 1;
	for (size_t i = 0; o->syz_bin && i < ARRAY_SIZE(syz_tools); i++) {
		_cleanup_free_ char *p = NULL;

		if (asprintf(&p, "%s/%s", o->syz_bin, syz_tools[i]) < 0)
			return -ENOMEM;
		r = read_file_bounded(p, SYZ_TOOL_MAX, &g->data[g->n], &g->len[g->n]);
		if (r < 0)
			return r;
		g->name[g->n++] = syz_tools[i];
	}
	return 0;
}

/* The command that runs the reproducer in the guest's /tmp.  busybox's
 * timeout kills it; the channel's own limit is the backstop if the guest
 * hangs.  A syz program's options reach the command line only as the
 * checked words syz_execprog_argv makes, each quoted all the same. */
static int guest_command(const struct run_opts *o, uint64_t timeout, char **ret)
{
	_cleanup_buf_ struct buf b = BUF_INIT(4096);
	_cleanup_strv_ char **argv = NULL;
	struct syz_opts dflt;
	int r;

	if (buf_printf(&b, "cd /tmp && timeout -s KILL %llu",
		       (unsigned long long)(timeout / 1000000 + 1)) < 0)
		return -ENOMEM;
	if (o->syz_bin) {
		syz_opts_default(&dflt);
		r = syz_execprog_argv(o->syz ? o->syz : &dflt, "./syz-execprog",
				      "/tmp/syz-executor", "kfix-repro.syz", &argv);
	} else
		r = strv_push(&argv, "./kfix-repro");
	if (r < 0)
		return r;
	for (size_t i = 0; argv[i]; i++) {
		_cleanup_free_ char *q = ssh_quote(argv[i]);

		if (!q || buf_printf(&b, " %s", q) < 0)
			return -ENOMEM;
	}
	/* The output goes to a file so that only its tail travels back,
	 * then how the reproducer ended. */
	if (buf_puts(&b, " >kfix-repro.out 2>&1" RUN_TRAILER("kfix-repro.out")) < 0)
		return -ENOMEM;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

int run_trailer_parse(const char *out, int *ret_status, char **ret_output)
{
	const char *mark = NULL;
	int status;
	size_t n;

	for (const char *p = out; (p = strstr(p, RUN_STATUS_MARK)); p++)
		if (p == out || p[-1] == '\n')
			mark = p;
	if (!mark || sscanf(mark + strlen(RUN_STATUS_MARK), "%d", &status) != 1 || status < 0)
		return -ENOENT;
	n = (size_t)(mark - out);
	if (n > 0 && out[n - 1] == '\n')
		n--; /* the echo after the tail */
	*ret_output = str_printable_tail(out, n, RUN_OUTPUT_TAIL);
	if (!*ret_output)
		return -ENOMEM;
	*ret_status = status;
	return 0;
}

/* How the reproducer ended: the status the shell saw (128 + N for
 * signal N; KILL at the time-out is the time-out) and its output. */
static int parse_status(const struct vm_exec_result *x, uint64_t timeout,
			struct run_result *res)
{
	int status, r;

	r = run_trailer_parse(x->output ? x->output : "", &status, &res->output);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if (status > 128 && status < 128 + 65) {
		res->exit_signal = status - 128;
		res->exit_status = 0;
		res->timed_out = status == 128 + 9 && res->run_usec + 1000000ULL >= timeout;
	} else
		res->exit_status = status;
	return 0;
}

/* Extra runs of a quick reproducer before kmemleak looks (see
 * run_in_vm): only the first run is counted and judged. */
#define LEAK_RERUNS 4

/* debugfs may not be mounted in the guest; a kernel without kmemleak
 * answers with a marker. */
#define KMEMLEAK_PREP                                                                   \
	"d=/sys/kernel/debug; [ -e $d/kmemleak ] || mount -t debugfs none $d 2>/dev/null; " \
	"[ -e $d/kmemleak ] || { echo kfix-no-kmemleak; exit 0; }; "

/* Before the reproducer: what boot leaked is not the patch's. */
static void leaks_clear(const struct run_opts *o, struct vm *vm)
{
	struct vm_exec_result x = { 0 };

	if (o->backend->exec(vm, KMEMLEAK_PREP "echo scan > $d/kmemleak; echo clear > $d/kmemleak",
			     NULL, 0, 120 * 1000000ULL, &x) >= 0)
		vm_exec_result_free(&x);
}

/* After it: kmemleak reports objects older than five seconds, and an
 * object found unreferenced is reported on the next scan only if it did
 * not change meanwhile, so two scans a second apart, as syzkaller's leak
 * checker does. */
static int leaks_scan(const struct run_opts *o, struct vm *vm, struct run_result *res)
{
	struct vm_exec_result x = { 0 };
	int r;

	r = o->backend->exec(vm, KMEMLEAK_PREP "sleep 5; echo scan > $d/kmemleak; sleep 1; "
			     "echo scan > $d/kmemleak; cat $d/kmemleak", NULL, 0, 180 * 1000000ULL, &x);
	if (r < 0)
		return r;
	/* no output at all is kmemleak's answer when it found nothing */
	if (!x.lost && !x.timed_out && x.exit_status == 0 &&
	    !(x.output && strstr(x.output, "kfix-no-kmemleak"))) {
		res->leak_checked = true;
		if (x.output && strstr(x.output, "unreferenced object") &&
		    !(res->leaks = str_printable_tail(x.output, x.output_len, LEAKS_MAX))) {
			vm_exec_result_free(&x);
			return -ENOMEM;
		}
	}
	vm_exec_result_free(&x);
	return 0;
}

bool run_title_is_leak(const char *title)
{
	return title && startswith(title, "memory leak in ");
}

/* kmemleak's first object, as syzkaller reports it ("BUG: memory leak"
 * and the record), classified like a console's crash.  It is added to
 * the console too, as syzkaller's leak checker prints it to its log: what
 * reads a run's console (symbolisation, probes, the model) sees it. */
static int leak_as_crash(struct run_result *res)
{
	const char *first = strstr(res->leaks, "unreferenced object");
	const char *next = first ? strstr(first + 1, "unreferenced object") : NULL;
	_cleanup_free_ char *text = NULL;
	char *console;
	int r;

	if (!first)
		return 0;
	if (asprintf(&text, "BUG: memory leak\n%.*s",
		     (int)(next ? (size_t)(next - first) : strlen(first)), first) < 0)
		return -ENOMEM;
	r = run_classify_console(text, strlen(text), &res->title, &res->report);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	if (asprintf(&console, "%s%s%s", res->console ?: "",
		     res->console && !endswith(res->console, "\n") ? "\n" : "", text) < 0)
		return -ENOMEM;
	free(res->console);
	res->console = console;
	return 0;
}

/* tracefs may not be mounted; a kernel without a trace buffer answers
 * with a marker. */
#define TRACE_PREP                                                                      \
	"t=/sys/kernel/tracing; [ -e $t/trace ] || mount -t tracefs nodev $t 2>/dev/null; " \
	"[ -e $t/trace ] || { echo kfix-no-trace; exit 0; }; "
/* What is kept of the trace buffer: its last lines (a literal: it is
 * also a word of the guest's command). */
#define TRACE_MAX 16384

static void trace_clear(const struct run_opts *o, struct vm *vm)
{
	struct vm_exec_result x = { 0 };

	if (o->backend->exec(vm, TRACE_PREP "echo > $t/trace", NULL, 0, 60 * 1000000ULL, &x) >= 0)
		vm_exec_result_free(&x);
}

/* The buffer without its header of "#" lines. */
static int trace_take(const struct run_opts *o, struct vm *vm, struct run_result *res)
{
	struct vm_exec_result x = { 0 };
	int r;

	r = o->backend->exec(vm, TRACE_PREP "grep -v '^#' $t/trace | tail -c " RUN_STR(TRACE_MAX),
			     NULL, 0, 60 * 1000000ULL, &x);
	if (r < 0)
		return r;
	if (!x.lost && !x.timed_out && x.exit_status == 0 && x.output &&
	    !strstr(x.output, "kfix-no-trace") &&
	    !(res->trace = str_printable_tail(x.output, x.output_len, TRACE_MAX))) {
		vm_exec_result_free(&x);
		return -ENOMEM;
	}
	vm_exec_result_free(&x);
	return 0;
}

static int run_in_vm(const struct run_opts *o, struct vm *vm, const struct guest_files *g,
		     struct run_result *res)
{
	struct vm_exec_result x = { 0 };
	uint64_t timeout = o->timeout_usec ? o->timeout_usec : o->vm->run_timeout_usec;
	uint64_t start, deadline;
	/* a leak bug is seen by the scan alone */
	bool scan = o->leak_check || o->leak_is_crash;
	_cleanup_free_ char *cmd = NULL;
	bool lost = false;
	int r;

	for (size_t i = 0; i < g->n && !lost; i++) {
		_cleanup_free_ char *copy = NULL;

		/* dropbear has no SFTP: files travel as a command's stdin. */
		if (asprintf(&copy, "cat > /tmp/%s && chmod +x /tmp/%s", g->name[i],
			     g->name[i]) < 0)
			return -ENOMEM;
		r = o->backend->exec(vm, copy, g->data[i], g->len[i], 120 * 1000000ULL, &x);
		if (r < 0)
			return r;
		lost = x.lost || x.exit_status != 0;
		vm_exec_result_free(&x);
	}
	if (!lost && scan)
		leaks_clear(o, vm);
	if (!lost && o->trace_read)
		trace_clear(o, vm);
	start = clock_mono_usec();
	if (!lost) {
		r = guest_command(o, timeout, &cmd);
		if (r < 0)
			return r;
		r = o->backend->exec(vm, cmd, NULL, 0, timeout + 30 * 1000000ULL, &x);
		if (r < 0)
			return r;
		lost = x.lost || x.timed_out;
		res->run_usec = clock_mono_usec() - start;
		r = lost ? 0 : parse_status(&x, timeout, res);
		vm_exec_result_free(&x);
		if (r < 0)
			return r;
	}
	res->run_usec = clock_mono_usec() - start;
	if (!lost && o->trace_read) {
		r = trace_take(o, vm, res);
		if (r < 0)
			return r;
	}
	/* One leaked object can stay reachable through a stale pointer
	 * (freed memory that a live object reuses): a reproducer that ends
	 * quickly runs again before the scan, as syzkaller's leak checking
	 * repeats its programs; one that runs until the time-out repeats
	 * itself already. */
	for (int i = 0; !lost && scan && !res->timed_out && i < LEAK_RERUNS; i++) {
		r = o->backend->exec(vm, cmd, NULL, 0, timeout + 30 * 1000000ULL, &x);
		if (r < 0)
			return r;
		lost = x.lost || x.timed_out;
		vm_exec_result_free(&x);
	}
	if (!lost && scan) {
		r = leaks_scan(o, vm, res);
		if (r < 0)
			return r;
	}
	if (lost) {
		deadline = clock_mono_usec() + PANIC_WAIT_USEC;
		/* The panic is printed by now or soon; the VM's exit is
		 * what the console waits for: notice it quickly. */
		while (!o->backend->exited(vm) && clock_mono_usec() < deadline)
			usleep(50 * 1000);
	} else
		usleep(SETTLE_USEC);
	r = take_console(o, vm, res);
	if (r >= 0 && !res->title && o->leak_is_crash && res->leaks)
		r = leak_as_crash(res);
	if (r < 0)
		return r;
	if (res->title)
		res->outcome = RUN_CRASHED;
	else if (lost)
		return set_msg(res, RUN_INFRA_ERROR, "lost the guest's SSH without a crash report");
	else
		res->outcome = RUN_NO_CRASH;
	return 0;
}

/* The VM's options, with ftrace_dump_on_oops on its command line when
 * the run reads the trace buffer: a crash then prints the buffer to the
 * console, where the probe lines are taken from. */
static int vm_opts_tracing(const struct run_opts *o, struct vm_opts *ret, char **ret_cmdline)
{
	*ret = *o->vm;
	if (!o->trace_read)
		return 0;
	if (asprintf(ret_cmdline, "%s%sftrace_dump_on_oops", o->vm->cmdline ?: "",
		     o->vm->cmdline ? " " : "") < 0)
		return -ENOMEM;
	ret->cmdline = *ret_cmdline;
	return 0;
}

int run_once(const struct run_opts *o, struct run_result *ret)
{
	_cleanup_(run_result_free) struct run_result res = { .exit_status = -1 };
	_cleanup_(guest_files_free) struct guest_files g = { 0 };
	_cleanup_free_ char *msg = NULL, *cmdline = NULL;
	struct vm_opts vmo;
	struct vm *vm = NULL;
	enum vm_failure failure = VM_OK;
	uint64_t start = clock_mono_usec();
	int r;

	r = guest_files_load(o, &g);
	if (r < 0)
		return r;
	r = vm_opts_tracing(o, &vmo, &cmdline);
	if (r < 0)
		return r;
	r = o->backend->start(&vmo, o->kernel, &vm, &failure, &msg);
	if (r < 0) {
		if (r == -ENOMEM)
			return r;
		r = set_msg(&res, failure == VM_NO_BOOT ? RUN_BOOT_ERROR : RUN_INFRA_ERROR,
			    msg ? msg : strerror(-r));
		if (r < 0)
			return r;
		*ret = res;
		res = (struct run_result){ 0 };
		return 0;
	}
	res.boot_usec = clock_mono_usec() - start;
	r = run_in_vm(o, vm, &g, &res);
	vm_stopp(o, &vm);
	if (r < 0)
		return r;
	*ret = res;
	res = (struct run_result){ 0 };
	return 0;
}

struct series_state {
	const struct run_opts *o;
	pthread_mutex_t lock;
	struct run_series s;
	int inflight;
	bool stop;
	int error;
};

static bool counted(enum run_outcome o)
{
	return o == RUN_CRASHED || o == RUN_NO_CRASH;
}

static int series_record(struct series_state *st, struct run_result *r)
{
	struct run_series *s = &st->s;
	struct run_result *nv = realloc(s->results, (s->n_results + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	s->results = nv;
	nv[s->n_results++] = *r;
	*r = (struct run_result){ 0 };
	r = &nv[s->n_results - 1];
	if (counted(r->outcome))
		s->counted++;
	if (r->outcome == RUN_CRASHED) {
		s->crashed++;
		if (st->o->stop_on_crash)
			st->stop = true;
	}
	if (r->outcome == RUN_BOOT_ERROR) {
		/* A kernel that cannot boot will not boot on retry. */
		s->boot_error = true;
		st->stop = true;
	}
	if (st->o->progress)
		st->o->progress(st->o->userdata, r, s->counted, s->attempts);
	return 0;
}

static void *series_worker(void *arg)
{
	struct series_state *st = arg;

	for (;;) {
		struct run_result r = { .exit_status = -1 };
		int k;

		pthread_mutex_lock(&st->lock);
		if (st->stop || st->error < 0 || st->s.counted + st->inflight >= st->o->runs ||
		    st->s.attempts >= st->o->max_attempts) {
			pthread_mutex_unlock(&st->lock);
			return NULL;
		}
		st->s.attempts++;
		st->inflight++;
		pthread_mutex_unlock(&st->lock);

		k = run_once(st->o, &r);

		pthread_mutex_lock(&st->lock);
		st->inflight--;
		if (k < 0)
			st->error = k;
		else
			k = series_record(st, &r);
		if (k < 0)
			st->error = k;
		pthread_mutex_unlock(&st->lock);
		run_result_free(&r);
	}
}

int run_series(const struct run_opts *o, struct run_series *ret)
{
	struct series_state st = { .o = o, .lock = PTHREAD_MUTEX_INITIALIZER };
	int parallel = o->parallel > 0 ? o->parallel : o->vm->count;
	pthread_t threads[64];
	int n = 0;

	if (parallel < 1)
		parallel = 1;
	parallel = MIN(parallel, (int)ARRAY_SIZE(threads));
	parallel = MIN(parallel, o->runs);
	for (int i = 1; i < parallel; i++) {
		if (pthread_create(&threads[n], NULL, series_worker, &st) != 0)
			break;
		n++;
	}
	series_worker(&st);
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	pthread_mutex_destroy(&st.lock);
	if (st.error < 0) {
		run_series_free(&st.s);
		return st.error;
	}
	for (size_t i = 0; i < st.s.n_results; i++)
		if (st.s.results[i].outcome == RUN_CRASHED) {
			st.s.title = st.s.results[i].title;
			break;
		}
	*ret = st.s;
	return 0;
}

bool run_title_matches(const char *title, char *const *titles)
{
	if (!title)
		return false;
	if (!titles || !titles[0])
		return true;
	for (size_t i = 0; titles[i]; i++)
		if (report_titles_same(titles[i], title))
			return true;
	return false;
}

enum verdict verdict_base(const struct run_series *base, char *const *titles, int runs_wanted)
{
	for (size_t i = 0; i < base->n_results; i++)
		if (base->results[i].outcome == RUN_CRASHED &&
		    run_title_matches(base->results[i].title, titles))
			return VERDICT_REPRODUCED;
	if (base->boot_error)
		return VERDICT_BOOT_ERROR;
	if (base->counted < runs_wanted)
		return VERDICT_INFRA_ERROR;
	return VERDICT_NOT_REPRODUCED;
}

enum verdict verdict_patch(enum verdict base, const struct run_series *patched, int runs_wanted)
{
	if (base != VERDICT_REPRODUCED)
		return base;
	if (patched->crashed > 0)
		return VERDICT_NOT_FIXED;
	if (patched->boot_error)
		return VERDICT_BOOT_ERROR;
	if (patched->counted < runs_wanted)
		return VERDICT_INFRA_ERROR;
	for (size_t i = 0; i < patched->n_results; i++)
		if (run_result_failed_exit(&patched->results[i]))
			return VERDICT_BEHAVIOUR_CHANGED;
	for (size_t i = 0; i < patched->n_results; i++)
		if (patched->results[i].leaks)
			return VERDICT_LEAKED;
	return VERDICT_FIXED;
}
