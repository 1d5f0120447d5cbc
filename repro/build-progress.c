/* Build progress: following make's output for kbuild steps and a full
 * disk, and the step counts of earlier builds that the percentage is
 * estimated from.  Apart from build.c because it is the same for every
 * backend and reads nothing but make's output. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build-internal.h"
#include "common/fileio.h"
#include "common/strutil.h"

/* Progress is counted in kbuild steps (the lines of make's quiet output:
 * CC, AS, AR, LD, KSYMS...) rather than in compiled objects, because the
 * link steps (vmlinux.o, the kallsyms passes, bzImage) are a few lines but
 * most of an incremental build's time: counting objects alone would show
 * 100% with half the time left.  How many steps make will run is not
 * known in advance (make -n walks the whole tree, and kbuild's per-option
 * dependency tracking decides what rebuilds), so the estimate is what the
 * previous build of the same O= directory took, of the same kind: a build
 * that starts without a vmlinux compiles everything and is compared with
 * the last such cold build, a build that starts with one is incremental
 * (after a patch) and is compared with the last incremental build, which
 * touched a similar number of files.  The estimate is capped at 99% until
 * make returns.  Without a previous build of the kind the percentage is
 * unknown and only the count is given: no number beats a wrong one. */
#define STEPS_FILE ".kfix-steps"

const char *build_stage_to_string(enum build_stage s)
{
	static const char *const names[] = {
		[BUILD_STAGE_PATCH] = "patch", [BUILD_STAGE_CONFIG] = "config",
		[BUILD_STAGE_COMPILE] = "compile", [BUILD_STAGE_LINK] = "link",
		[BUILD_STAGE_DONE] = "done",
	};
	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

static void follow_report(struct follow *f)
{
	if (f->o->progress)
		f->o->progress(f->o->userdata, &f->p);
}

void follow_stage(struct follow *f, enum build_stage st)
{
	f->p.stage = st;
	f->p.target = NULL;
	if (st == BUILD_STAGE_DONE) {
		f->p.percent = 100;
		f->p.expected = f->p.steps;
	}
	follow_report(f);
}

/* The target of a kbuild quiet-mode line ("  CC      kernel/sys.o",
 * "  CC [M]  drivers/x.o", "  HOSTCC  scripts/basic/fixdep"), or NULL. */
static const char *kbuild_step(const char *line)
{
	const char *p = line + 2, *tag = p;

	if (strncmp(line, "  ", 2) != 0 || !isupper((unsigned char)*p))
		return NULL;
	while (isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')
		p++;
	if (p - tag > 12 || *p != ' ')
		return NULL;
	while (*p == ' ')
		p++;
	if (strncmp(p, "[M]", 3) == 0)
		for (p += 3; *p == ' '; p++)
			;
	return *p && !strchr(p, ' ') ? p : NULL;
}

static void follow_line(struct follow *f, const char *line)
{
	const char *target;

	if (strstr(line, "No space left on device") || strstr(line, "Disk quota exceeded"))
		f->no_space = true;
	if (!f->count || !(target = kbuild_step(line)))
		return;
	f->p.steps++;
	f->p.target = target;
	if (f->p.stage == BUILD_STAGE_COMPILE &&
	    (startswith(target, "vmlinux") || startswith(target, ".tmp_vmlinux")))
		f->p.stage = BUILD_STAGE_LINK;
	if (f->p.expected > 0)
		f->p.percent = (int)MIN(99, (uint64_t)f->p.steps * 100 / f->p.expected);
	follow_report(f);
	f->p.target = NULL;
}

void follow_output(void *userdata, const char *data, size_t len)
{
	struct follow *f = userdata;

	for (size_t i = 0; i < len; i++) {
		if (data[i] != '\n') {
			if (f->len + 1 < sizeof(f->line))
				f->line[f->len++] = data[i];
			else
				f->overlong = true;
			continue;
		}
		f->line[f->len] = '\0';
		/* Compiler diagnostics can be long; steps never are. */
		if (!f->overlong || strstr(f->line, "No space left"))
			follow_line(f, f->line);
		f->len = 0;
		f->overlong = false;
	}
}

/* The steps the last build of this kind took in objdir; 0 when unknown. */
unsigned steps_expected(const char *objdir, bool cold)
{
	_cleanup_free_ char *p = NULL, *data = NULL;
	unsigned c = 0, w = 0;
	size_t len;

	if (asprintf(&p, "%s/" STEPS_FILE, objdir) < 0 ||
	    read_file_bounded(p, 256, &data, &len) < 0 ||
	    sscanf(data, "cold %u warm %u", &c, &w) != 2)
		return 0;
	return cold ? c : w;
}

/* Best effort: a missing record only costs the next build's percentage. */
void steps_record(const char *objdir, bool cold, unsigned steps)
{
	_cleanup_free_ char *p = NULL, *data = NULL;
	unsigned c = steps_expected(objdir, true), w = steps_expected(objdir, false);
	int n;

	if (cold)
		c = steps;
	else
		w = steps;
	if (asprintf(&p, "%s/" STEPS_FILE, objdir) < 0 ||
	    (n = asprintf(&data, "cold %u warm %u\n", c, w)) < 0)
		return;
	(void)write_file_atomic(p, data, (size_t)n, 0644);
}
