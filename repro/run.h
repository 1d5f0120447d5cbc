/* Reproducer runs and verdicts: boot the kernel in a VM, copy a statically
 * linked reproducer in over SSH, run it with a time limit and classify the
 * serial console with the crash parser.  Infrastructure failures are
 * retried a bounded number of times and never count as a result. */
#ifndef KFIX_REPRO_RUN_H
#define KFIX_REPRO_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox.h"
#include "vm.h"

enum run_outcome {
	RUN_CRASHED,
	RUN_NO_CRASH,
	RUN_BUILD_ERROR,
	RUN_BOOT_ERROR,
	RUN_INFRA_ERROR,
};
const char *run_outcome_to_string(enum run_outcome o);

struct run_result {
	enum run_outcome outcome;
	char *title;	/* RUN_CRASHED (and a boot crash): the report's title */
	char *report;	/* RUN_CRASHED: the report text */
	char *message;	/* boot and infra errors: why */
	char *console;	/* the console, bounded; NULL when unavailable */
	/* How the reproducer ended when the guest survived it: on its own
	 * with exit_status (exit_signal set when a signal ended it), or
	 * killed at kfix's time-out, as looping reproducers are.
	 * exit_status is -1 when unknown (a crash, a lost guest). */
	int exit_status, exit_signal;
	bool timed_out;
	char *output;	/* the tail of what it printed, bounded */
	/* With run_opts.leak_check on a kernel with kmemleak: what kmemleak
	 * reported after the run (NULL: none), and whether it could look. */
	char *leaks;
	bool leak_checked;
	/* With run_opts.trace_read: the trace buffer's lines after the
	 * reproducer (trace_printk's output), bounded; NULL when the guest
	 * kernel has no trace buffer or the guest was lost. */
	char *trace;
	uint64_t boot_usec, run_usec;
};
/* The run's reproducer ended on its own with a failure: a non-zero
 * status or a signal. */
bool run_result_failed_exit(const struct run_result *r);
void run_result_free(struct run_result *r);

/* Compiles a C reproducer on this host: gcc -static -pthread -O1 plus
 * flags (syzbot gives some per bug), in the sandbox given: it sees its
 * own folder read-only and writes only out_path's folder, so an
 * #include of a host file finds nothing.  On a compiler error returns
 * -EINVAL with the compiler's message in *ret_error; -ENOENT with a
 * message when the sandbox is not installed. */
int run_compile_repro(const char *c_file, char *const *flags, const char *out_path,
		      enum sandbox_kind sandbox, char **ret_error);

/* syzbot's options for a syz reproducer (its "repro-opts"). */
struct syz_opts {
	bool threaded, collide, repeat, fault;
	int repeat_times;	/* with repeat: 0 runs until the time limit */
	int procs;
	char sandbox[16];	/* none, setuid, namespace or android */
	int fault_call, fault_nth;
};
/* Threaded, repeated, one process, no sandbox. */
void syz_opts_default(struct syz_opts *o);
/* Parses syzbot's JSON ({"threaded":true,"procs":6,...}) or the older
 * "{Threaded:true Procs:6 ...}" form; -EINVAL for anything else or for a
 * value syz-execprog would not take. */
int syz_opts_parse(const char *text, size_t len, struct syz_opts *ret);
/* The options of a program that starts with syzbot's "# {...}" line;
 * -ENOENT when it has none. */
int syz_opts_from_program(const char *prog, size_t len, struct syz_opts *ret);
/* syz-execprog's argument vector (NULL-terminated) for the program, as
 * syzkaller builds it to reproduce: every element is a fixed word, a
 * checked number or one of the given paths. */
int syz_execprog_argv(const struct syz_opts *o, const char *execprog, const char *executor,
		      const char *prog, char ***ret);
/* syzkaller's tools for an amd64 guest in the build at dir: *ret_bin gets
 * DIR/bin/linux_amd64 when syz-execprog and syz-executor are both there;
 * -ENOENT otherwise, with *ret_missing (if given) the first one missing. */
int syz_tools_find(const char *dir, char **ret_bin, char **ret_missing);

struct run_opts {
	const struct vm_opts *vm;
	const struct vm_backend *backend;
	const char *kernel;	   /* bzImage on this host */
	const char *repro;	   /* static binary on this host, or a syz program */
	/* A syz program: syzkaller's bin/linux_amd64 folder on this host,
	 * whose syz-execprog and syz-executor go to the guest with it. */
	const char *syz_bin;
	const struct syz_opts *syz;
	uint64_t timeout_usec;	   /* per run; 0: the VM's run-timeout */
	int runs;		   /* counted runs wanted */
	int max_attempts;	   /* including infra errors */
	int parallel;		   /* VMs at once; 0: the VM's count */
	bool stop_on_crash;
	/* Scan with kmemleak after the reproducer (when the guest kernel
	 * has it), with the leaks from before it cleared. */
	bool leak_check;
	/* The bug is a leak (run_title_is_leak): the run is scanned as with
	 * leak_check, and kmemleak's first object is its crash when the
	 * console has none. */
	bool leak_is_crash;
	/* trace_printk probes: boot with ftrace_dump_on_oops (a crash dumps
	 * the trace buffer to the console), empty the buffer before the
	 * reproducer and read it back after it. */
	bool trace_read;
	/* Called after each attempt, from the thread that ran it, under
	 * the series lock. */
	void (*progress)(void *userdata, const struct run_result *r, int counted, int attempts);
	void *userdata;
};

int run_once(const struct run_opts *o, struct run_result *ret);

/* A guest command's ending: "PROGRAM >FILE 2>&1" followed by this prints
 * the tail of FILE and how PROGRAM ended (the shell's $?), which
 * run_trailer_parse() reads back. */
#define RUN_OUTPUT_TAIL 4096
#define RUN_STATUS_MARK "kfix-status "
#define RUN_STR_(x) #x
#define RUN_STR(x) RUN_STR_(x)
#define RUN_TRAILER(file) \
	"; s=$?; tail -c " RUN_STR(RUN_OUTPUT_TAIL) " " file "; echo; echo " RUN_STATUS_MARK "$s"
/* The status and the printable tail before it; -ENOENT when the trailer
 * is missing (the guest went away). */
int run_trailer_parse(const char *out, int *ret_status, char **ret_output);

struct run_series {
	int attempts, counted, crashed;
	struct run_result *results; /* every attempt, in completion order */
	size_t n_results;
	const char *title;	    /* first crash title, points into results */
	bool boot_error;	    /* a run found the kernel unbootable */
};
void run_series_free(struct run_series *s);

int run_series(const struct run_opts *o, struct run_series *ret);

enum verdict {
	VERDICT_FIXED,
	VERDICT_NOT_FIXED,
	VERDICT_NOT_REPRODUCED,
	VERDICT_REPRODUCED,
	VERDICT_BUILD_ERROR,
	VERDICT_BOOT_ERROR,
	VERDICT_INFRA_ERROR,
	/* The crash is gone, but the reproducer ended with a failure or
	 * kmemleak found what the run leaked: not a fix. */
	VERDICT_BEHAVIOUR_CHANGED,
	VERDICT_LEAKED,
	/* The crash is gone, but a kselftest that passes on the base
	 * kernel does not on the patched one. */
	VERDICT_SELFTEST_REGRESSION,
};
const char *verdict_to_string(enum verdict v);

/* True for a kmemleak report's title ("memory leak in FUNC"): such a bug
 * is seen only by scanning after the reproducer (run_opts.leak_is_crash). */
bool run_title_is_leak(const char *title);
/* True when title is the bug's title or one of its alternatives (any
 * crash matches when titles is empty). */
bool run_title_matches(const char *title, char *const *titles);

/* The base's verdict alone: reproduced, not-reproduced, boot-error or
 * infra-error (fewer than runs_wanted counted runs and no crash). */
enum verdict verdict_base(const struct run_series *base, char *const *titles, int runs_wanted);
/* Fixed needs a reproduced base and a patched kernel that survived
 * runs_wanted counted runs with no crash at all, on which the reproducer
 * never ended with a failure (running until the time-out is judged by
 * the crash alone) and kmemleak, where it looked, found no leak. */
enum verdict verdict_patch(enum verdict base, const struct run_series *patched, int runs_wanted);

/* Picks the crash report out of a console: 0 with title and report when
 * one is found, -ENOENT when not. */
int run_classify_console(const char *console, size_t len, char **ret_title, char **ret_report);

#endif
