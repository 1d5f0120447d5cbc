/* Timings of the tree operations a repair job does on a kernel-sized
 * tree: import of a plain source folder, worktree checkout (first and
 * repeated), edit + diff, revert, grep, function lookup.
 *
 * Uses the folder named by KFIX_BENCH_KERNEL_SRC (e.g. an unpacked
 * linux-source tarball) and KFIX_BENCH_FILE / KFIX_BENCH_FUNC inside it
 * when set, else a generated tree of 20000 files. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fileio.h"
#include "repro/tree.h"

#define GEN_FILES 20000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int make_tree(const char *dir)
{
	char path[512];

	for (unsigned i = 0; i < GEN_FILES; i++) {
		FILE *f;

		if (i < 50) {
			snprintf(path, sizeof(path), "%s/d%02u", dir, i);
			if (mkdir_p(path, 0755) < 0)
				return -1;
		}
		snprintf(path, sizeof(path), "%s/d%02u/f%05u.c", dir, i % 50, i);
		f = fopen(path, "we");
		if (!f)
			return -1;
		fprintf(f, "// file %u\nstatic int fn_%u(int x)\n{\n\treturn x + %u;\n}\n",
			i, i, i);
		if (fclose(f) != 0)
			return -1;
	}
	return 0;
}

static int count_hit(const char *path, unsigned line_no, const char *line,
		     size_t len, void *userdata)
{
	(void)path;
	(void)line_no;
	(void)line;
	(void)len;
	(*(unsigned *)userdata)++;
	return 0;
}

#define STEP(label, expr)                                                      \
	do {                                                                   \
		double t0 = now();                                             \
		int r_ = (expr);                                               \
		printf("%-40s %8.3f s%s\n", label, now() - t0,                 \
		       r_ < 0 ? "  FAILED" : "");                              \
		if (r_ < 0) {                                                  \
			fprintf(stderr, "%s: %s %s\n", label, strerror(-r_),   \
				tree_error(t));                       \
			return 1;                                              \
		}                                                              \
	} while (0)

static void dir_cleanup(char (*dir)[256])
{
	if ((*dir)[0])
		rm_rf(*dir);
}

static void tree_cleanup(struct tree **t)
{
	tree_free(*t);
}

int main(void)
{
	const char *src = getenv("KFIX_BENCH_KERNEL_SRC");
	const char *file = getenv("KFIX_BENCH_FILE");
	const char *func = getenv("KFIX_BENCH_FUNC");
	const char *tmp = getenv("TMPDIR");
	_cleanup_(dir_cleanup) char dir[256] = "";
	char gen[300], scratch[300], slot[300];
	_cleanup_free_ char *diff = NULL, *text = NULL, *err = NULL;
	_cleanup_(tree_cleanup) struct tree *t = NULL;
	char oid[TREE_OID_HEX];
	unsigned hits = 0, line;
	struct edit e = { 0 };

	snprintf(dir, sizeof(dir), "%s/kfix-bench-tree-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		dir[0] = 0;
		return 1;
	}
	snprintf(scratch, sizeof(scratch), "%s/snapshot.git", dir);
	snprintf(slot, sizeof(slot), "%s/slot", dir);
	if (!src) {
		snprintf(gen, sizeof(gen), "%s/src", dir);
		STEP("generate 20000 files", make_tree(gen));
		src = gen;
		file = "d07/f00007.c";
		func = "fn_7";
	}
	if (!file || !func) {
		file = "mm/slub.c";
		func = "kmem_cache_free";
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("source: %s\n", src);
	STEP("import folder (first)", tree_open_path(src, scratch, &t));
	tree_free(t);
	t = NULL;
	STEP("import folder (unchanged, again)", tree_open_path(src, scratch, &t));
	STEP("resolve HEAD", tree_resolve(t, "HEAD", oid));
	STEP("worktree checkout (first)", tree_worktree_checkout(t, slot, oid, NULL));
	STEP("worktree checkout (same commit)", tree_worktree_checkout(t, slot, oid, NULL));
	STEP("read function", tree_read_function(t, oid, file, func, &text, &line));
	e.file = (char *)file;
	e.before = text;
	if (asprintf(&e.after, "/* kfix bench */\n%s", text) < 0)
		return 1;
	STEP("apply one edit", tree_apply_edits(slot, &e, 1, &err));
	STEP("diff against base", tree_diff(slot, oid, &diff));
	free(e.after);
	STEP("revert by checkout", tree_worktree_checkout(t, slot, oid, NULL));
	STEP("grep fixed string, whole tree",
	     tree_grep(t, oid, NULL, "kmem_cache_free", 0, 0, count_hit, &hits));
	printf("grep hits: %u, diff bytes: %zu\n", hits, strlen(diff));
	return 0;
}
