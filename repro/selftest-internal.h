/* What selftest.c and selftest-select.c share with the KUnit side
 * (selftest-kunit.c): KUnit suites are selection entries "kunit:SUITE",
 * built into the kernel rather than into the selftests folder, and run
 * at boot in a guest of their own. */
#ifndef KFIX_REPRO_SELFTEST_INTERNAL_H
#define KFIX_REPRO_SELFTEST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "selftest.h"
#include "vm.h"

#define KUNIT_PREFIX "kunit:"

bool kunit_entry(const char *name);

/* A suite name as KUnit's filter_glob takes it, with no glob character
 * and nothing a shell or the kernel command line would split. */
bool kunit_suite_name_ok(const char *s);

/* The suites ("kunit:SUITE") of the .c files that MAINTAINERS lists in
 * the sections covering a changed file, then those of the .c files of
 * each changed file's folder and of its tests/ subfolder, whose object
 * the kernel in objdir was built with; nothing when objdir is NULL.
 * Adds to *v up to max entries in all. */
int kunit_select(const char *src, const char *objdir, char *const *files, char ***v,
		 size_t max);

/* Reads SUITE's KTAP block off a console: its cases, its result line.
 * A console without the suite is SELFTEST_NOT_RUN (the kernel does not
 * have it); a suite with no result line, SELFTEST_FAIL. */
int kunit_parse(const char *console, size_t len, const char *suite,
		struct selftest_result *res);

/* Boots kernel in a fresh guest with kunit.enable=1 and
 * kunit.filter_glob=SUITE and reads the suite's result.  A guest that
 * does not come up because the kernel crashed is SELFTEST_CRASH; one
 * that cannot start for the infrastructure's reasons sets *ret_error. */
int kunit_run(const struct vm_opts *vm, const struct vm_backend *b, const char *kernel,
	      const char *suite, struct selftest_result *res, char **ret_error);

#endif
