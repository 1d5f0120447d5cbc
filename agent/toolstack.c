/* The real toolstack; see toolstack.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/strutil.h"
#include "edits.h"
#include "explore.h"
#include "gates.h"
#include "llm-internal.h"
#include "repro/build.h"
#include "repro/run.h"
#include "repro/selftest.h"
#include "repro/report.h"
#include "repro/tags.h"
#include "repro/tree.h"
#include "repro/vm.h"
#include "toolstack.h"

#define LOG_EXCERPT (64u * 1024)
#define BZIMAGE_MAX (256u << 20)

struct toolstack {
	struct toolstack_opts o;
	struct toolstack_conf conf;
	struct tree *tree;
	char base[TREE_OID_HEX];
	bool have_base;
	struct repair_toolstack ops;
	/* kernels: set up when [build] and [vm] are configured */
	bool kernels;
	struct build_opts bo;
	char *build_dir, *bzimage, *binary;
	char *syz_bin;		/* a syz program's tools (NULL: a C reproducer) */
	struct syz_opts syz;
	struct vm_opts vm;
	unsigned n_patch;
	bool patched;	/* the last kernel built carries a patch */
	bool probing;	/* ... and it is the model's probes, not a candidate */
	bool tracing;	/* ... some of which write to the trace buffer */
	bool leak_bug;	/* the crash is kmemleak's report */
	struct explore *explore;	/* made on the first exploration call */
	bool built_patch;	/* a patched kernel went through the build folder */
	char *base_vmlinux;	/* a link to the base kernel's, for the tools */
	struct tags *tags;	/* the base's symbol index, once made or loaded */
	char *vmlinux;		/* of the last kernel built: runs' crashes are symbolised */
	bool tags_tried;
	/* kselftests: the selection rule, a copy of the base's bzImage, and
	 * per selection the built tests and their results on the base */
	const char *st_spec;
	uint64_t st_timeout;
	char *base_kernel;
	struct st_entry {
		char *key;
		struct selftest_set set;
		struct selftest_results base;
		char *note;
	} st[SELFTEST_MAX_TARGETS];
	size_t n_st;
};

static void st_entry_free(struct st_entry *e)
{
	free(e->key);
	selftest_set_free(&e->set);
	selftest_results_free(&e->base);
	free(e->note);
	*e = (struct st_entry){ 0 };
}

/* The base's bzImage, which the next patched build replaces: a copy
 * (the image is rewritten in place, a link would follow it). */
static int keep_base_kernel(struct toolstack *t, const char *bzimage)
{
	_cleanup_free_ char *dst = NULL;
	int r;

	if (!t->st_spec || streq(t->st_spec, "none") || !bzimage ||
	    asprintf(&dst, "%s/bzImage.base", t->o.scratch) < 0)
		return 0;
	r = copy_file_bounded(bzimage, dst, BZIMAGE_MAX);
	if (r >= 0) {
		free(t->base_kernel);
		t->base_kernel = TAKE_PTR(dst);
	}
	return r;
}

/* The tools read the base kernel's vmlinux: a hard link keeps it when a
 * patched build replaces the file (the linker writes a new one). */
static void keep_base_vmlinux(struct toolstack *t, const char *vmlinux)
{
	_cleanup_free_ char *dst = NULL;

	if (t->base_vmlinux || !vmlinux || !t->o.scratch || access(vmlinux, R_OK) < 0 ||
	    asprintf(&dst, "%s/vmlinux.base", t->o.scratch) < 0)
		return;
	(void)unlink(dst);
	if (link(vmlinux, dst) == 0)
		t->base_vmlinux = TAKE_PTR(dst);
}

static int ts_read(void *ud, const char *path, char **ret, size_t *ret_len)
{
	struct toolstack *t = ud;
	_cleanup_free_ char *full = NULL;
	struct stat st;

	if (t->tree)
		return tree_read_file(t->tree, t->base, path, 0, ret, ret_len);
	/* a plain folder: its files as they are, regular files only */
	if (strstr(path, "..") || path[0] == '/' || asprintf(&full, "%s/%s", t->o.src, path) < 0)
		return -EINVAL;
	if (lstat(full, &st) < 0 || !S_ISREG(st.st_mode))
		return -ENOENT;
	return read_file_bounded(full, 8u << 20, ret, ret_len);
}

static int ts_apply(void *ud, const json_t *edits, char **ret_diff, char **ret_error)
{
	return edits_apply_fn(ts_read, ud, edits, ret_diff, ret_error);
}

static char *build_log(const struct build_result *res)
{
	_cleanup_buf_ struct buf b = BUF_INIT(LOG_EXCERPT);

	(void)buf_printf(&b, "%s\n", res->message ?: build_status_to_string(res->status));
	for (size_t i = 0, n = 0; i < res->n_errors && n < 20; i++) {
		const char *f = res->errors[i].file ?: "";

		/* only the tree's own files: a message about a file outside
		 * it could quote what the model must not read */
		if (f[0] == '/' || strstr(f, "..") || startswith(f, "<"))
			continue;
		(void)buf_printf(&b, "%s:%d: error: %s\n", f, res->errors[i].line,
				 res->errors[i].message ?: "");
		n++;
	}
	return buf_steal(&b, NULL);
}

static int ts_build(void *ud, const char *diff, char **ret_log)
{
	struct toolstack *t = ud;
	struct build_result res = {};
	_cleanup_free_ char *path = NULL;
	char *patches[] = { NULL, NULL };
	int r;

	if (!t->kernels) {
		*ret_log = strdup("no [build] and [vm] sections configured, or no --config/--repro");
		return -ENOSYS;
	}
	if (diff) {
		if (asprintf(&path, "%s/patch-%u.diff", t->o.scratch, ++t->n_patch) < 0)
			return -ENOMEM;
		r = write_file_atomic(path, diff, strlen(diff), 0644);
		if (r < 0)
			return r;
		patches[0] = path;
	}
	t->bo.patches = diff ? patches : NULL;
	t->patched = diff != NULL;
	/* probe lines carry the marker, which the gates refuse in a patch */
	t->probing = diff && strstr(diff, KFIX_PROBE_MARKER);
	t->tracing = t->probing && strstr(diff, "trace_printk");
	t->built_patch |= t->patched;
	r = build_kernel(&t->bo, &res);
	t->bo.patches = NULL;
	if (r < 0)
		return r;
	free(t->bzimage);
	t->bzimage = NULL;
	*ret_log = build_log(&res);
	switch (res.status) {
	case BUILD_OK:
		if (!diff) {
			keep_base_vmlinux(t, res.vmlinux);
			(void)keep_base_kernel(t, res.bzimage);
		}
		free(t->vmlinux);
		t->vmlinux = res.vmlinux ? strdup(res.vmlinux) : NULL;
		t->bzimage = TAKE_PTR(res.bzimage);
		r = t->bzimage ? 0 : -EIO;
		break;
	case BUILD_FAILED:
	case BUILD_BAD_PATCH:
		r = -ENOEXEC;
		break;
	default:
		r = -EIO;
	}
	build_result_free(&res);
	return r;
}

static int ts_compile(void *ud, const char *diff, char **ret_log)
{
	struct toolstack *t = ud;
	struct build_result res = {};
	_cleanup_free_ char *path = NULL;
	char *patches[] = { NULL, NULL };
	int r;

	if (!t->kernels)
		return -ENOSYS;
	if (asprintf(&path, "%s/check-%u.diff", t->o.scratch, ++t->n_patch) < 0)
		return -ENOMEM;
	r = write_file_atomic(path, diff, strlen(diff), 0644);
	if (r < 0)
		return r;
	patches[0] = path;
	t->bo.patches = patches;
	r = build_check_patch(&t->bo, &res);
	t->bo.patches = NULL;
	(void)unlink(path);
	if (r < 0)
		return r;
	*ret_log = build_log(&res);
	r = res.status == BUILD_OK ? 0 : res.status == BUILD_FAILED ||
	    res.status == BUILD_BAD_PATCH ? -ENOEXEC : -EIO;
	build_result_free(&res);
	return r;
}

/* trace_printk's lines follow the console's when the run read the
 * trace buffer back (after a crash they are in the console already). */
static char *console_and_trace(const struct run_result *rr)
{
	char *s = NULL;

	if (!rr->trace || !*rr->trace)
		return strdup(rr->console);
	return asprintf(&s, "%s\n--- the trace buffer after the run ---\n%s", rr->console,
			rr->trace) < 0 ? NULL : s;
}

static int ts_run(void *ud, unsigned runs, struct repair_outcome *ret)
{
	struct toolstack *t = ud;
	struct run_series s = {};
	struct run_opts ro = {
		.vm = &t->vm, .backend = vm_backend_find(t->vm.backend ?: "qemu"),
		.kernel = t->bzimage, .repro = t->binary, .runs = (int)runs,
		.syz_bin = t->syz_bin, .syz = t->syz_bin ? &t->syz : NULL,
		.max_attempts = 2 * (int)runs,
		/* leaks are the patch's question: the base crashes anyway,
		 * and a probe run answers the model's; a leak bug's runs are
		 * all scanned (leak_is_crash) */
		.leak_check = t->patched && !t->probing && t->vm.leak_check,
		.leak_is_crash = t->leak_bug,
		.trace_read = t->tracing,
	};
	unsigned lost = 0;
	int r;

	if (!t->kernels || !t->bzimage || !ro.backend)
		return -ENOSYS;
	r = run_series(&ro, &s);
	if (r < 0)
		return r;
	ret->runs = (unsigned)s.counted;
	ret->crashed = (unsigned)s.crashed;
	ret->survived = (unsigned)(s.counted - s.crashed);
	ret->infra = (unsigned)(s.attempts - s.counted);
	ret->title = s.title ? strdup(s.title) : NULL;
	ret->boot_error = s.boot_error;
	for (size_t i = 0; i < s.n_results; i++) {
		const struct run_result *rr = &s.results[i];

		/* probes are in the console; the crash report when there is
		 * one; why it did not boot when it did not */
		if (!ret->log && rr->console)
			ret->log = console_and_trace(rr);
		else if (!ret->log && rr->report)
			ret->log = strdup(rr->report);
		else if (!ret->log && rr->outcome == RUN_BOOT_ERROR && rr->message)
			ret->log = strdup(rr->message);
		lost += rr->outcome == RUN_INFRA_ERROR && rr->console;
		ret->leak_checked += rr->leak_checked;
		if (rr->leaks && ret->leaked++ == 0)
			ret->leaks = strdup(rr->leaks);
		if (run_result_failed_exit(rr) && ret->failed_exits++ == 0 &&
		    asprintf(&ret->behaviour, rr->exit_signal ? "killed by signal %d\n%s" :
			     "exit status %d\n%s", rr->exit_signal ?: rr->exit_status,
			     rr->output ?: "") < 0)
			ret->behaviour = NULL;
	}
	/* the guest booted (a console) and was lost on every try */
	ret->hung = s.counted == 0 && lost > 0 && lost == s.n_results;
	run_series_free(&s);
	/* file:line for every frame, as the tools number the lines */
	if (ret->log && t->vmlinux) {
		char *sym = NULL;

		if (report_symbolize(ret->log, strlen(ret->log), t->vmlinux, &sym) >= 0) {
			free(ret->log);
			ret->log = sym;
		}
	}
	return 0;
}

/* The base kernel when this toolstack never built it (the reproduce job
 * of kfixd did): the patched image is set aside, the base built and
 * kept; the next candidate builds its own kernel anyway. */
static int build_base_for_tests(struct toolstack *t)
{
	_cleanup_free_ char *patched = NULL, *log = NULL;
	int r;

	if (asprintf(&patched, "%s/bzImage.patched", t->o.scratch) < 0)
		return -ENOMEM;
	r = copy_file_bounded(t->bzimage, patched, BZIMAGE_MAX);
	if (r < 0)
		return r;
	r = ts_build(t, NULL, &log);
	if (r < 0)
		return r;
	free(t->bzimage);
	t->bzimage = TAKE_PTR(patched);
	t->patched = true;
	return t->base_kernel ? 0 : -EIO;
}

/* Built and run on the base once per selection. */
static int st_base(struct toolstack *t, char **sel, struct st_entry **ret)
{
	_cleanup_buf_ struct buf k = BUF_INIT(16 * 1024);
	_cleanup_free_ char *key = NULL, *objdir = NULL, *out = NULL;
	struct st_entry *e;
	int r;

	for (size_t i = 0; sel[i]; i++)
		(void)buf_printf(&k, "%s ", sel[i]);
	if (!(key = buf_steal(&k, NULL)))
		return -ENOMEM;
	for (size_t i = 0; i < t->n_st; i++)
		if (streq(t->st[i].key, key)) {
			*ret = &t->st[i];
			return 0;
		}
	if (t->n_st == ARRAY_SIZE(t->st))
		st_entry_free(&t->st[--t->n_st]);
	e = &t->st[t->n_st];
	r = build_objdir(&t->bo, &objdir);
	if (r < 0 || asprintf(&out, "%s.selftests", objdir) < 0)
		return r < 0 ? r : -ENOMEM;
	r = selftest_build(t->o.src, sel, out, t->bo.sandbox, t->bo.timeout_usec, &e->set,
			   &e->note);
	if (r < 0 && r != -ENOENT)
		return r;
	if (r >= 0 && !t->base_kernel)
		r = build_base_for_tests(t);
	if (r >= 0)
		r = selftest_run(&t->vm, vm_backend_find(t->vm.backend ?: "qemu"), t->base_kernel,
				 &e->set, t->st_timeout, &e->base);
	if (r >= 0)
		r = selftest_set_prune(&e->set, &e->base);
	if (r < 0 && r != -ENOENT) {
		st_entry_free(e);
		return r;
	}
	e->key = TAKE_PTR(key);
	t->n_st++;
	*ret = e;
	return 0;
}

static int ts_selftests(void *ud, const char *diff, struct repair_outcome *ret)
{
	struct toolstack *t = ud;
	_cleanup_strv_ char **files = NULL, **sel = NULL;
	_cleanup_(selftest_results_free) struct selftest_results patched = {};
	_cleanup_free_ char *err = NULL, *objdir = NULL;
	struct st_entry *e;
	int r;

	if (!t->kernels || !t->bzimage || !t->patched)
		return -ENOSYS;
	r = build_objdir(&t->bo, &objdir);
	if (r >= 0)
		r = selftest_patch_files(diff, strlen(diff), &files);
	if (r >= 0)
		r = selftest_select(t->o.src, objdir, t->st_spec, files, &sel, &err);
	if (r == -EINVAL || r == -E2BIG) {
		ret->selftest_note = TAKE_PTR(err);
		return 0;
	}
	if (r < 0)
		return r;
	if (!sel[0]) {
		ret->selftest_note =
			strdup(streq(t->st_spec, "none") ? "selftests = none"
			       : "no kselftest or KUnit suite covers the changed files");
		return ret->selftest_note ? 0 : -ENOMEM;
	}
	r = st_base(t, sel, &e);
	if (r < 0)
		return r;
	if (e->note || e->base.error) {
		ret->selftest_note = strdup(e->note ?: e->base.error);
		return ret->selftest_note ? 0 : -ENOMEM;
	}
	r = selftest_run(&t->vm, vm_backend_find(t->vm.backend ?: "qemu"), t->bzimage, &e->set,
			 t->st_timeout, &patched);
	if (r < 0)
		return r;
	r = selftest_regressions(&e->base, &patched, &ret->regressions);
	if (r < 0)
		return r;
	ret->selftest_regressions = (unsigned)r;
	return selftest_summary(&e->base, &patched, &ret->selftests);
}

/* Without a configuration the index stays with the job's scratch files. */
static char *index_path(const struct toolstack *t)
{
	const char *dir = t->conf.index_dir ?: t->o.scratch;
	char *path = NULL;

	if (!dir || mkdir_p(dir, 0755) < 0 || asprintf(&path, "%s/%s.tags", dir, t->base) < 0)
		return NULL;
	return path;
}

/* The index is made of the checkout, so only when it is at the base;
 * without one find_definition searches the tree (slower, same answers). */
static void open_index(struct toolstack *t)
{
	_cleanup_free_ char *path = NULL, *err = NULL;
	char head[TREE_OID_HEX];

	t->tags_tried = true;
	if (!t->have_base || tree_resolve(t->tree, "HEAD", head) < 0 || !streq(head, t->base) ||
	    !(path = index_path(t)))
		return;
	if (access(path, R_OK) < 0 && tags_build(t->o.src, path, &err) < 0)
		return;
	(void)tags_open(path, &t->tags);
}

static int ts_explore(void *ud, const char *name, const json_t *args, char **ret)
{
	struct toolstack *t = ud;
	int r;

	if (!t->explore) {
		r = explore_new(t->tree, t->base, &t->explore);
		if (r < 0)
			return r;
	}
	if (!t->tags_tried) {
		open_index(t);
		if (t->tags)
			explore_set_tags(t->explore, t->tags);
	}
	/* built by an earlier job (the reproduce job of kfixd) */
	if (!t->base_vmlinux && !t->built_patch && t->kernels) {
		_cleanup_free_ char *dir = NULL, *v = NULL;

		if (build_objdir(&t->bo, &dir) >= 0 && asprintf(&v, "%s/vmlinux", dir) >= 0)
			keep_base_vmlinux(t, v);
	}
	if (t->base_vmlinux) {
		r = explore_set_vmlinux(t->explore, t->base_vmlinux);
		if (r < 0)
			return r;
	}
	return explore_call(t->explore, name, args, ret);
}

static int first_section(const struct config *cfg, const char *section, char **ret)
{
	_cleanup_strv_ char **names = NULL;
	int r = config_subsections(cfg, section, &names);

	if (r < 0 || !names || !names[0])
		return r == -ENOMEM ? r : 0;
	*ret = strdup(names[0]);
	return *ret ? 0 : -ENOMEM;
}

void toolstack_conf_free(struct toolstack_conf *tc)
{
	free(tc->build);
	free(tc->vm);
	free(tc->index_dir);
	free(tc->selftests);
	*tc = (struct toolstack_conf){ 0 };
}

/* Symbol indexes live in [agent] index-dir, else in the cache folder's
 * index/: both outlive a job, so the next job on the base finds them. */
static int index_dir_from_config(const struct config *c, char **ret)
{
	_cleanup_free_ char *cache = NULL;

	if (config_get_path(c, "agent", NULL, "index-dir", ret) >= 0)
		return 0;
	if (config_get_path(c, "kfix", NULL, "cache-dir", &cache) < 0)
		return 0;
	return asprintf(ret, "%s/index", cache) < 0 ? -ENOMEM : 0;
}

int toolstack_conf_from_config(const struct config *c, const char *tree,
			       struct toolstack_conf *ret)
{
	_cleanup_(toolstack_conf_free) struct toolstack_conf tc = { 0 };
	const char *spec = NULL;
	int r;

	if ((r = first_section(c, "build", &tc.build)) < 0 ||
	    (r = first_section(c, "vm", &tc.vm)) < 0 ||
	    (r = index_dir_from_config(c, &tc.index_dir)) < 0 ||
	    (r = config_get_duration(c, "agent", NULL, "selftest-timeout",
				     &tc.selftest_timeout_usec)) < 0)
		return r;
	if (!tree || config_get_string(c, "tree", tree, "selftests", &spec) < 0 || !spec) {
		r = config_get_string(c, "agent", NULL, "selftests", &spec);
		if (r < 0)
			return r;
	}
	tc.selftests = strdup(spec);
	if (!tc.selftests)
		return -ENOMEM;
	*ret = tc;
	tc = (struct toolstack_conf){ 0 };
	return 0;
}

#define SYZ_PROG_MAX (1u << 20) /* as large as a C reproducer may be */

/* A syz program runs with the VM section's syzkaller build and the
 * options on its own "# {...}" line (syzkaller's defaults without one). */
static int setup_syz(struct toolstack *t, const char *vname, char **ret_error)
{
	_cleanup_free_ char *missing = NULL, *prog = NULL;
	size_t len;
	int r;

	r = syz_tools_find(t->vm.syzkaller, &t->syz_bin, &missing);
	if (r < 0) {
		*ret_error = missing ? strdup_printf("%s is missing: build syzkaller there", missing)
				     : strdup_printf("a syz reproducer needs [vm \"%s\"] syzkaller = DIR",
						     vname);
		return r == -EINVAL ? -ENOENT : r;
	}
	r = read_file_bounded(t->o.repro, SYZ_PROG_MAX, &prog, &len);
	if (r < 0) {
		*ret_error = strdup_printf("the syz reproducer cannot be read: %s", strerror(-r));
		return r;
	}
	r = syz_opts_from_program(prog, len, &t->syz);
	if (r == -ENOENT)
		syz_opts_default(&t->syz);
	else if (r < 0) {
		*ret_error = strdup_printf("the syz reproducer's options are not syzbot's or hold a "
					   "value syz-execprog does not take");
		return r;
	}
	t->binary = strdup(t->o.repro);
	return t->binary ? 0 : -ENOMEM;
}

/* Builds and runs need [build "x"] and [vm "y"], a kernel config and a
 * reproducer; without them the toolstack only reads the tree. */
static int setup_kernels(struct toolstack *t, char **ret_error)
{
	const char *bname = t->conf.build, *vname = t->conf.vm;
	_cleanup_free_ char *msg = NULL;
	int r;

	if (!t->o.cfg || !t->o.kconfig || !t->o.repro || !bname || !vname)
		return 0;
	r = build_opts_from_config(t->o.cfg, bname, &t->bo, &t->build_dir);
	if (r >= 0)
		r = vm_opts_from_config(t->o.cfg, vname, &t->vm);
	if (r < 0) {
		*ret_error = strdup_printf("[build \"%s\"] or [vm \"%s\"]: %s", bname, vname, strerror(-r));
		return r;
	}
	t->bo.src = t->o.src;
	t->bo.config = t->o.kconfig;
	t->bo.dir = t->build_dir;
	t->st_spec = t->conf.selftests;
	t->st_timeout = t->conf.selftest_timeout_usec;
	if (endswith(t->o.repro, ".c")) {
		if (asprintf(&t->binary, "%s/repro", t->o.scratch) < 0)
			return -ENOMEM;
		r = run_compile_repro(t->o.repro, NULL, t->binary, t->bo.sandbox, &msg);
		if (r < 0) {
			*ret_error = strdup_printf("the reproducer does not compile: %s", msg ?: strerror(-r));
			return r;
		}
	} else if (endswith(t->o.repro, ".syz")) {
		r = setup_syz(t, vname, ret_error);
		if (r < 0)
			return r;
	} else if (!(t->binary = strdup(t->o.repro)))
		return -ENOMEM;
	t->kernels = true;
	return 0;
}

struct blame_hit {
	char commit[TREE_OID_HEX];
};

static int on_blame(unsigned final_line, const char *commit, const char *orig_path,
		    unsigned orig_line, void *userdata)
{
	struct blame_hit *h = userdata;

	snprintf(h->commit, sizeof(h->commit), "%s", commit);
	return 1;
}

static int ts_fixes(void *ud, const char *file, unsigned line, char **ret, char **ret_how)
{
	struct toolstack *t = ud;
	struct blame_hit h = {};
	_cleanup_free_ char *subject = NULL;
	int r;

	if (!t->have_base)
		return -ENOENT;
	r = tree_blame_lines(t->tree, t->base, file, line, line, on_blame, &h);
	if (r < 0 || !h.commit[0])
		return -ENOENT;
	/* a Fixes: tag must name an ancestor of the base */
	if (tree_is_ancestor(t->tree, h.commit, t->base) != 1)
		return -ENOENT;
	if (tree_commit_subject(t->tree, h.commit, &subject) < 0)
		return -ENOENT;
	if (asprintf(ret, "Fixes: %.12s (\"%s\")", h.commit, subject) < 0)
		return -ENOMEM;
	if (asprintf(ret_how, "it names the blame candidate, the last commit that changed "
		     "%s:%u, the first line the patch changes, which need not be the commit "
		     "that introduced the bug", file, line) < 0) {
		free(*ret);
		return -ENOMEM;
	}
	return 0;
}

static int ts_fixed(void *ud, const char *needle, char **ret_commit)
{
	struct toolstack *t = ud;
	char oid[TREE_OID_HEX];
	int r;

	if (!t->have_base)
		return 0;
	r = tree_log_grep(t->tree, t->base, needle, 100000, oid);
	if (r == 1)
		*ret_commit = strdup(oid);
	return r < 0 ? 0 : r;
}

static int on_recent(const struct tree_commit_info *ci, void *userdata)
{
	(void)buf_printf(userdata, "%s\n", ci->subject ?: "");
	return 0;
}

static int ts_recent(void *ud, const char *file, char **ret)
{
	struct toolstack *t = ud;
	const char *paths[] = { file, NULL };
	struct tree_log_opts lo = { .from = t->base, .paths = paths, .max_results = 8,
				    .max_walk = 20000 };
	_cleanup_buf_ struct buf b = BUF_INIT(8192);

	if (!t->have_base || tree_log(t->tree, &lo, on_recent, &b) <= 0)
		return -ENOENT;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

int toolstack_new(const struct toolstack_opts *o, struct toolstack **ret, char **ret_error)
{
	_cleanup_(toolstack_freep) struct toolstack *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->o = *o;
	t->leak_bug = run_title_is_leak(o->title);
	if (o->cfg && (r = toolstack_conf_from_config(o->cfg, o->tree, &t->conf)) < 0)
		return r;
	{
		_cleanup_free_ char *git = NULL;

		if (asprintf(&git, "%s/.git", o->src) < 0)
			return -ENOMEM;
		/* importing a whole plain kernel folder into a snapshot
		 * repository costs minutes; history needs git anyway */
		if (access(git, F_OK) < 0) {
			t->ops = (struct repair_toolstack){
				.ud = t, .read_file = ts_read, .apply = ts_apply,
				.build = ts_build, .run = ts_run,
			};
			r = setup_kernels(t, ret_error);
			if (r < 0)
				return r;
			t->ops.selftests = t->kernels ? ts_selftests : NULL;
			*ret = TAKE_PTR(t);
			return 0;
		}
	}
	r = tree_open_path(o->src, o->scratch, &t->tree);
	if (r < 0) {
		*ret_error = strdup_printf("cannot open the tree %s: %s", o->src, strerror(-r));
		return r;
	}
	r = tree_resolve(t->tree, o->commit ?: "HEAD", t->base);
	if (r < 0) {
		*ret_error = strdup_printf("cannot resolve %s in %s: %s", o->commit ?: "HEAD",
					   o->src, tree_error(t->tree));
		return r;
	}
	t->have_base = !tree_is_snapshot(t->tree);
	r = setup_kernels(t, ret_error);
	if (r < 0)
		return r;
	t->ops = (struct repair_toolstack){
		.ud = t, .read_file = ts_read, .apply = ts_apply, .build = ts_build,
		.run = ts_run, .fixes_tag = ts_fixes, .already_fixed = ts_fixed,
		.recent_subjects = ts_recent, .explore = ts_explore,
		.compile = t->kernels ? ts_compile : NULL,
		.selftests = t->kernels ? ts_selftests : NULL,
	};
	*ret = TAKE_PTR(t);
	return 0;
}

void toolstack_free(struct toolstack *t)
{
	if (!t)
		return;
	explore_free(t->explore);
	tags_free(t->tags);
	if (t->tree)
		tree_free(t->tree);
	free(t->build_dir);
	free(t->vmlinux);
	if (t->base_vmlinux)
		(void)unlink(t->base_vmlinux);
	free(t->base_vmlinux);
	free(t->bzimage);
	free(t->binary);
	free(t->syz_bin);
	for (size_t i = 0; i < t->n_st; i++)
		st_entry_free(&t->st[i]);
	free(t->base_kernel);
	vm_opts_free(&t->vm);
	toolstack_conf_free(&t->conf);
	free(t);
}

const struct repair_toolstack *toolstack_ops(struct toolstack *t)
{
	return &t->ops;
}

const char *toolstack_base(const struct toolstack *t)
{
	return t->have_base ? t->base : NULL;
}
