/* Probes (execution grounding): printk lines tagged with a unique marker,
 * inserted on top of the base or a candidate patch for one build and run;
 * the tagged console lines come back in order with the crash.  The probe
 * edits live in their own patch, applied only for that build, so they
 * never leak into a candidate fix. */
#ifndef KFIX_REPRO_PROBE_H
#define KFIX_REPRO_PROBE_H

#include <stddef.h>

#include "build.h"
#include "run.h"

struct probe_point {
	const char *file; /* relative to the source tree */
	int line;	  /* the printk goes after this line (1-based) */
	const char *args; /* printk format and arguments: "\"x=%d\", x" */
};

/* "KFIXPROBE" and 16 random hex digits. */
int probe_marker_new(char ret[static 32]);

/* A unified diff inserting one printk(KERN_ERR "MARKER n: " ...) per
 * point (n is the point's index).  -EINVAL for a line outside the file or
 * args holding a newline. */
int probe_make_patch(const char *src, const struct probe_point *points, size_t n,
		     const char *marker, char **ret_patch);

/* The marker's console lines, in order, without the marker prefix. */
int probe_extract(const char *console, size_t len, const char *marker, char ***ret_lines);

struct probe_result {
	struct build_result build;
	struct run_result run;
	char **lines;
};
void probe_result_free(struct probe_result *r);

/* Builds o (its patches, then the probes) and runs the reproducer once. */
int probe_run(const struct build_opts *o, const struct run_opts *ro,
	      const struct probe_point *points, size_t n, struct probe_result *ret);

#endif
