/* Building kselftests and running them in a guest; see selftest.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/proc.h"
#include "common/strutil.h"
#include "run.h"
#include "selftest-internal.h"
#include "ssh-internal.h"

#define SELFTESTS "tools/testing/selftests"
#define TEST_FILE_MAX (64 * 1024 * 1024)
#define CONSOLE_MAX (4 * 1024 * 1024)
#define GUEST_DIR "/tmp/kselftest"

const char *selftest_status_name(enum selftest_status s)
{
	static const char *const names[] = { "pass", "skip", "fail", "timeout", "crash",
					     "not-run" };

	return (size_t)s < ARRAY_SIZE(names) ? names[s] : "?";
}

void selftest_set_free(struct selftest_set *s)
{
	strv_free(s->names);
	strv_free(s->paths);
	free(s->unbuilt);
	*s = (struct selftest_set){ 0 };
}

void selftest_results_free(struct selftest_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->r[i].name);
		free(r->r[i].output);
		free(r->r[i].title);
	}
	free(r->r);
	free(r->error);
	*r = (struct selftest_results){ 0 };
}

/* make in the sandbox: src read-only, out writable. */
static int sandboxed_make(const char *src, const char *out, enum sandbox_kind kind,
			  uint64_t timeout, char *const *argv, bool quiet, struct proc_result *ret)
{
	_cleanup_strv_ char **boxed = NULL;
	struct sandbox sb = { .kind = kind, .ro = { src }, .n_ro = 1, .rw = { out }, .n_rw = 1 };
	struct proc_opts po = PROC_OPTS_DEFAULT;
	int r;

	po.timeout_usec = timeout;
	po.output_max = 256 * 1024;
	po.discard_stderr = quiet;
	r = sandbox_argv(&sb, argv, false, &boxed);
	if (r < 0)
		return r;
	return proc_run(boxed, &po, ret);
}

/* The UAPI headers the tests include, once per output folder. */
static int build_headers(const char *src, const char *out, enum sandbox_kind kind,
			 uint64_t timeout, char **ret_error)
{
	_cleanup_free_ char *o_arg = NULL, *done = NULL;
	struct proc_result pr = { 0 };
	int r;

	if (asprintf(&done, "%s/usr/.kfix-headers", out) < 0 || asprintf(&o_arg, "O=%s", out) < 0)
		return -ENOMEM;
	if (access(done, F_OK) == 0)
		return 0;
	{
		char *argv[] = { "make", "-s", "-C", (char *)src, o_arg, "headers", NULL };

		r = sandboxed_make(src, out, kind, timeout, argv, false, &pr);
	}
	if (r < 0)
		return r;
	if (pr.exit_code != 0) {
		r = error_set(ret_error, -ENOENT, "the kernel headers for the selftests did not "
			      "build: %s", pr.output ? pr.output : "");
		proc_result_free(&pr);
		return r;
	}
	proc_result_free(&pr);
	return write_file_atomic(done, "", 0, 0644);
}

/* make -k: one test that does not build (a library the host lacks)
 * leaves the others of the target. */
static int build_target(const char *src, const char *out, const char *target,
			enum sandbox_kind kind, uint64_t timeout)
{
	_cleanup_free_ char *dir = NULL, *o_arg = NULL, *t_arg = NULL, *k_arg = NULL;
	struct proc_result pr = { 0 };
	int r;

	if (asprintf(&dir, "%s/" SELFTESTS, src) < 0 || asprintf(&o_arg, "O=%s", out) < 0 ||
	    asprintf(&t_arg, "TARGETS=%s", target) < 0 ||
	    asprintf(&k_arg, "KHDR_INCLUDES=-isystem %s/usr/include", out) < 0)
		return -ENOMEM;
	{
		/* static: the guest may have no C library at all */
		char *argv[] = { "make", "-k", "-s", "-C", dir, o_arg, t_arg, k_arg,
				 "CC=gcc -static", NULL };

		r = sandboxed_make(src, out, kind, timeout, argv, false, &pr);
	}
	proc_result_free(&pr);
	return r;
}

/* The target's tests as kselftest's own runner lists them. */
static int list_tests(const char *src, const char *out, const char *target,
		      enum sandbox_kind kind, char ***ret)
{
	_cleanup_free_ char *dir = NULL, *o_arg = NULL, *c_arg = NULL;
	struct proc_result pr = { 0 };
	char *line, *save = NULL;
	int r;

	if (asprintf(&dir, "%s/" SELFTESTS "/%s", src, target) < 0 ||
	    asprintf(&o_arg, "OUTPUT=%s/kselftest/%s", out, target) < 0 ||
	    asprintf(&c_arg, "COLLECTION=%s", target) < 0)
		return -ENOMEM;
	{
		char *argv[] = { "make", "-s", "--no-print-directory", "-C", dir, o_arg, c_arg,
				 "emit_tests", NULL };

		/* the tree's Makefile runs: in the sandbox too */
		r = sandboxed_make(src, out, kind, 60 * 1000000ULL, argv, true, &pr);
	}
	if (r < 0)
		return r;
	for (line = strtok_r(pr.output ? pr.output : (char *)"", "\n", &save); line && r >= 0;
	     line = strtok_r(NULL, "\n", &save))
		if (startswith(line, target) && line[strlen(target)] == ':')
			r = strv_push(ret, line);
	proc_result_free(&pr);
	return r;
}

static bool wanted(char *const *selection, const char *target, const char *name)
{
	for (size_t i = 0; selection[i]; i++)
		if (streq(selection[i], target) || streq(selection[i], name))
			return true;
	return false;
}

/* A test is the binary the build wrote, or a script of the tree. */
static int add_test(const char *src, const char *out, const char *name,
		    struct selftest_set *set)
{
	_cleanup_free_ char *built = NULL, *script = NULL;
	const char *colon = strchr(name, ':');
	struct stat st;
	char *path;

	if (!colon || set->n >= SELFTEST_MAX_TESTS || strchr(colon + 1, '/') ||
	    strstr(name, ".."))
		return 0;
	if (asprintf(&built, "%s/kselftest/%.*s/%s", out, (int)(colon - name), name, colon + 1) < 0 ||
	    asprintf(&script, "%s/" SELFTESTS "/%.*s/%s", src, (int)(colon - name), name,
		     colon + 1) < 0)
		return -ENOMEM;
	if (lstat(built, &st) == 0 && S_ISREG(st.st_mode))
		path = built;
	else if (lstat(script, &st) == 0 && S_ISREG(st.st_mode))
		path = script;
	else
		return 1; /* listed but not built */
	if (strv_push(&set->names, name) < 0 || strv_push(&set->paths, path) < 0)
		return -ENOMEM;
	set->n++;
	return 0;
}

static int add_kunit(const char *name, struct selftest_set *set)
{
	if (set->n >= SELFTEST_MAX_TESTS || !kunit_suite_name_ok(name + strlen(KUNIT_PREFIX)))
		return 0;
	if (strv_push(&set->names, name) < 0 || strv_push(&set->paths, name) < 0)
		return -ENOMEM;
	set->n++;
	return 0;
}

static int target_name(const char *entry, char *buf, size_t n)
{
	size_t len = strcspn(entry, ":");

	if (len >= n)
		return -EINVAL;
	memcpy(buf, entry, len);
	buf[len] = '\0';
	return 0;
}

int selftest_build(const char *src, char *const *selection, const char *out_dir,
		   enum sandbox_kind sandbox, uint64_t timeout_usec, struct selftest_set *ret,
		   char **ret_error)
{
	_cleanup_(selftest_set_free) struct selftest_set set = { 0 };
	_cleanup_strv_ char **targets = NULL;
	_cleanup_buf_ struct buf unbuilt = BUF_INIT(16 * 1024);
	int r;

	for (size_t i = 0; selection && selection[i]; i++) {
		char t[160];

		if (kunit_entry(selection[i])) {
			/* built into the kernel: nothing to build here */
			r = add_kunit(selection[i], &set);
			if (r < 0)
				return r;
			continue;
		}
		if (target_name(selection[i], t, sizeof(t)) < 0)
			return -EINVAL;
		if (!strv_contains(targets, t) && strv_push(&targets, t) < 0)
			return -ENOMEM;
	}
	if (!targets && set.n == 0)
		return error_set(ret_error, -ENOENT, "no selftests selected");
	r = targets ? mkdir_p(out_dir, 0755) : 0;
	if (r >= 0 && targets)
		r = build_headers(src, out_dir, sandbox, timeout_usec, ret_error);
	if (r < 0)
		return r;
	for (size_t i = 0; targets && targets[i]; i++) {
		_cleanup_strv_ char **tests = NULL;
		size_t before = set.n;

		r = build_target(src, out_dir, targets[i], sandbox, timeout_usec);
		if (r >= 0)
			r = list_tests(src, out_dir, targets[i], sandbox, &tests);
		if (r < 0)
			return r;
		for (size_t j = 0; tests && tests[j]; j++) {
			if (!wanted(selection, targets[i], tests[j]))
				continue;
			r = add_test(src, out_dir, tests[j], &set);
			if (r < 0)
				return r;
			if (r > 0)
				(void)buf_printf(&unbuilt, "%s\n", tests[j]);
		}
		if (set.n == before)
			(void)buf_printf(&unbuilt, "%s: nothing built\n", targets[i]);
	}
	if (set.n == 0)
		return error_set(ret_error, -ENOENT, "none of the selected selftests built:\n%s",
				 unbuilt.data ? unbuilt.data : "");
	if (unbuilt.len && !(set.unbuilt = buf_steal(&unbuilt, NULL)))
		return -ENOMEM;
	*ret = set;
	set = (struct selftest_set){ 0 };
	return 0;
}

/* dropbear has no SFTP: each test travels as a command's stdin. */
static int copy_test(const struct vm_backend *b, struct vm *vm, const char *name,
		     const char *path, bool *ret_lost)
{
	_cleanup_free_ char *data = NULL, *cmd = NULL, *dir = NULL, *file = NULL;
	const char *colon = strchr(name, ':');
	struct vm_exec_result x = { 0 };
	size_t len;
	int r;

	r = read_file_bounded(path, TEST_FILE_MAX, &data, &len);
	if (r < 0)
		return r;
	if (asprintf(&dir, GUEST_DIR "/%.*s", (int)(colon - name), name) < 0 ||
	    asprintf(&file, "%s/%s", dir, colon + 1) < 0)
		return -ENOMEM;
	{
		_cleanup_free_ char *qd = ssh_quote(dir), *qf = ssh_quote(file);

		if (!qd || !qf ||
		    asprintf(&cmd, "mkdir -p %s && cat > %s && chmod +x %s", qd, qf, qf) < 0)
			return -ENOMEM;
	}
	r = b->exec(vm, cmd, data, len, 120 * 1000000ULL, &x);
	if (r < 0)
		return r;
	*ret_lost = x.lost || x.exit_status != 0;
	vm_exec_result_free(&x);
	return 0;
}

static int parse_outcome(const struct vm_exec_result *x, struct selftest_result *res)
{
	int status, r;

	r = run_trailer_parse(x->output ? x->output : "", &status, &res->output);
	if (r == -ENOENT) {
		res->status = SELFTEST_NOT_RUN;
		return 0;
	}
	if (r < 0)
		return r;
	res->exit_status = status;
	/* kselftest.h: KSFT_PASS 0, KSFT_SKIP 4; 137 is KILL at the limit */
	res->status = status == 0 ? SELFTEST_PASS : status == 4 ? SELFTEST_SKIP :
		      status == 128 + 9 ? SELFTEST_TIMEOUT : SELFTEST_FAIL;
	return 0;
}

static int run_test(const struct vm_backend *b, struct vm *vm, const char *name,
		    uint64_t timeout, struct selftest_result *res, bool *ret_lost)
{
	_cleanup_free_ char *cmd = NULL, *dir = NULL, *qd = NULL, *qt = NULL, *test = NULL;
	const char *colon = strchr(name, ':');
	struct vm_exec_result x = { 0 };
	int r;

	if (asprintf(&dir, GUEST_DIR "/%.*s", (int)(colon - name), name) < 0 ||
	    asprintf(&test, "./%s", colon + 1) < 0 || !(qd = ssh_quote(dir)) ||
	    !(qt = ssh_quote(test)))
		return -ENOMEM;
	if (asprintf(&cmd, "cd %s && timeout -s KILL %llu %s >" GUEST_DIR ".out 2>&1 </dev/null"
		     RUN_TRAILER(GUEST_DIR ".out"), qd, (unsigned long long)(timeout / 1000000 + 1),
		     qt) < 0)
		return -ENOMEM;
	r = b->exec(vm, cmd, NULL, 0, timeout + 30 * 1000000ULL, &x);
	if (r < 0)
		return r;
	*ret_lost = x.lost || x.timed_out;
	r = *ret_lost ? 0 : parse_outcome(&x, res);
	vm_exec_result_free(&x);
	return r;
}

/* The guest went away in the middle of a test: the kernel crashed (its
 * report names how) or hung. */
static void crashed(const struct vm_backend *b, struct vm *vm, struct selftest_result *res)
{
	_cleanup_free_ char *console = NULL, *report = NULL;
	size_t len = 0;
	uint64_t deadline = clock_mono_usec() + 20 * 1000000ULL;

	while (!b->exited(vm) && clock_mono_usec() < deadline)
		usleep(50 * 1000);
	res->status = SELFTEST_CRASH;
	if (b->console(vm, CONSOLE_MAX, &console, &len) >= 0)
		(void)run_classify_console(console, len, &res->title, &report);
}

static int run_all(const struct vm_backend *b, struct vm *vm, const struct selftest_set *set,
		   uint64_t timeout, struct selftest_results *res)
{
	bool lost = false;
	int r = 0;

	for (size_t i = 0; i < set->n && !lost && r >= 0; i++)
		if (!kunit_entry(set->names[i]))
			r = copy_test(b, vm, set->names[i], set->paths[i], &lost);
	if (r < 0)
		return r;
	for (size_t i = 0; i < set->n; i++) {
		struct selftest_result *t;

		if (kunit_entry(set->names[i]))
			continue;
		t = &res->r[res->n++];
		*t = (struct selftest_result){ .status = SELFTEST_NOT_RUN, .exit_status = -1,
					       .name = strdup(set->names[i]) };
		if (!t->name)
			return -ENOMEM;
		if (lost)
			continue;
		r = run_test(b, vm, set->names[i], timeout, t, &lost);
		if (r < 0)
			return r;
		if (lost)
			crashed(b, vm, t);
	}
	if (lost && !res->error && !(res->error = strdup("the guest was lost during the selftests")))
		return -ENOMEM;
	return 0;
}

static size_t n_kselftests(const struct selftest_set *set)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n; i++)
		n += !kunit_entry(set->names[i]);
	return n;
}

/* A guest per suite, after the kselftests' guest (if it came up). */
static int run_kunit(const struct vm_opts *vmo, const struct vm_backend *b, const char *kernel,
		     const struct selftest_set *set, struct selftest_results *res)
{
	for (size_t i = 0; i < set->n; i++) {
		_cleanup_free_ char *err = NULL;
		struct selftest_result *t;
		int r;

		if (!kunit_entry(set->names[i]))
			continue;
		t = &res->r[res->n++];
		*t = (struct selftest_result){ .status = SELFTEST_NOT_RUN, .exit_status = -1,
					       .name = strdup(set->names[i]) };
		if (!t->name)
			return -ENOMEM;
		r = kunit_run(vmo, b, kernel, set->names[i] + strlen(KUNIT_PREFIX), t, &err);
		if (r < 0)
			return r;
		if (err) {
			/* the infrastructure failed: no later guest would start */
			if (!res->error)
				res->error = TAKE_PTR(err);
			break;
		}
	}
	return 0;
}

int selftest_set_prune(struct selftest_set *set, const struct selftest_results *base)
{
	_cleanup_buf_ struct buf note = BUF_INIT(16 * 1024);
	size_t k = 0;

	if (set->unbuilt)
		(void)buf_puts(&note, set->unbuilt);
	for (size_t i = 0; i < set->n; i++) {
		const struct selftest_result *b = NULL;

		for (size_t j = 0; j < base->n && !b; j++)
			if (streq(base->r[j].name, set->names[i]))
				b = &base->r[j];
		if (kunit_entry(set->names[i]) && b && b->status == SELFTEST_NOT_RUN &&
		    !base->error) {
			(void)buf_printf(&note, "%s: not in the base kernel (its config does not "
					 "build it)\n", set->names[i]);
			free(set->names[i]);
			free(set->paths[i]);
			continue;
		}
		set->names[k] = set->names[i];
		set->paths[k++] = set->paths[i];
	}
	if (k == set->n)
		return 0;
	set->n = k;
	set->names[k] = set->paths[k] = NULL;
	free(set->unbuilt);
	set->unbuilt = buf_steal(&note, NULL);
	return set->unbuilt ? 0 : -ENOMEM;
}

int selftest_run(const struct vm_opts *vmo, const struct vm_backend *backend, const char *kernel,
		 const struct selftest_set *set, uint64_t timeout_usec,
		 struct selftest_results *ret)
{
	_cleanup_(selftest_results_free) struct selftest_results res = { 0 };
	_cleanup_free_ char *msg = NULL;
	enum vm_failure failure = VM_OK;
	uint64_t start = clock_mono_usec();
	struct vm *vm = NULL;
	int r;

	res.r = calloc(set->n ? set->n : 1, sizeof(*res.r));
	if (!res.r)
		return -ENOMEM;
	if (n_kselftests(set) > 0) {
		r = backend->start(vmo, kernel, &vm, &failure, &msg);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			if (asprintf(&res.error, "the guest did not start: %s",
				     msg ? msg : strerror(-r)) < 0)
				return -ENOMEM;
		} else {
			r = run_all(backend, vm, set, timeout_usec, &res);
			backend->stop(vm);
			if (r < 0)
				return r;
		}
	}
	r = run_kunit(vmo, backend, kernel, set, &res);
	if (r < 0)
		return r;
	res.usec = clock_mono_usec() - start;
	*ret = res;
	res = (struct selftest_results){ 0 };
	return 0;
}

static const struct selftest_result *find(const struct selftest_results *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (streq(r->r[i].name, name))
			return &r->r[i];
	return NULL;
}

int selftest_regressions(const struct selftest_results *base,
			 const struct selftest_results *patched, char **ret_text)
{
	_cleanup_buf_ struct buf b = BUF_INIT(64 * 1024);
	int n = 0;

	for (size_t i = 0; i < patched->n; i++) {
		const struct selftest_result *p = &patched->r[i], *o = find(base, p->name);

		if (!o || o->status != SELFTEST_PASS || p->status == SELFTEST_PASS)
			continue;
		n++;
		(void)buf_printf(&b, "selftest %s passed on the base kernel and ", p->name);
		if (p->status == SELFTEST_CRASH)
			(void)buf_printf(&b, "crashed the patched kernel: %s\n",
					 p->title ? p->title : "no report on the console");
		else if (p->status == SELFTEST_NOT_RUN)
			(void)buf_puts(&b, "did not run on the patched kernel: the guest was lost "
				       "before it\n");
		else if (p->status == SELFTEST_SKIP)
			(void)buf_puts(&b, "was skipped on the patched kernel (a feature it "
				       "needs is gone)\n");
		else if (kunit_entry(p->name))
			(void)buf_printf(&b, "failed on the patched kernel (%d case(s) failed)\n",
					 p->exit_status);
		else
			(void)buf_printf(&b, "%s on the patched kernel (exit status %d)\n",
					 p->status == SELFTEST_TIMEOUT ? "ran into the time limit"
								       : "failed",
					 p->exit_status);
		if (p->output && *p->output)
			(void)buf_printf(&b, "its output:\n%s\n", p->output);
		(void)buf_puts(&b, "\n");
	}
	*ret_text = NULL;
	if (n && !(*ret_text = buf_steal(&b, NULL)))
		return -ENOMEM;
	return n;
}

int selftest_summary(const struct selftest_results *base, const struct selftest_results *patched,
		     char **ret)
{
	_cleanup_buf_ struct buf b = BUF_INIT(64 * 1024);

	for (size_t i = 0; i < patched->n; i++) {
		const struct selftest_result *p = &patched->r[i], *o = find(base, p->name);

		(void)buf_printf(&b, "%s: %s on the base, %s on the patch\n", p->name,
				 o ? selftest_status_name(o->status) : "not run",
				 selftest_status_name(p->status));
	}
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

json_t *selftest_results_to_json(const struct selftest_results *r)
{
	json_t *o = json_object(), *a = json_array();

	if (!o || !a) {
		json_decref(o);
		json_decref(a);
		return NULL;
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct selftest_result *t = &r->r[i];

		json_array_append_new(a, json_pack("{s:s, s:s, s:i, s:o, s:o}", "name", t->name,
						   "status", selftest_status_name(t->status),
						   "exit_status", t->exit_status, "output",
						   json_str_or_null(t->output), "title",
						   json_str_or_null(t->title)));
	}
	json_object_set_new(o, "tests", a);
	json_object_set_new(o, "error", json_str_or_null(r->error));
	json_object_set_new(o, "ms", json_integer((json_int_t)(r->usec / 1000)));
	return o;
}
