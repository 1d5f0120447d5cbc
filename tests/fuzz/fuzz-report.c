/* libFuzzer harness for the crash report parser: any bytes must give a
 * report (or a clean error) and every accessor must return sane values.
 * Built with --enable-fuzzing; the same entry point replays the saved
 * inputs of tests/fuzz/corpus-report/ in `make check` (replay-report.c). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "repro/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report *r = NULL;
	char *copy, *t = NULL, *f = NULL;

	if (report_parse((const char *)data, size, &r) < 0)
		return 0;
	if (report_title(r)) {
		check(strlen(report_title(r)) <= 120);
		check(report_text(r) != NULL);
		check(strlen(report_text(r)) <= REPORT_TEXT_MAX + REPORT_LINE_MAX);
		check(report_start(r) < size || size == 0);
		check(report_end(r) <= size);
		check(report_matches_title(r, report_title(r)));
		for (char *const *a = report_alt_titles(r); *a; a++)
			check(report_matches_title(r, *a));
	} else
		check(report_text(r) == NULL);
	for (char *const *fr = report_frames(r); *fr; fr++)
		check(**fr != 0);
	(void)report_type(r);
	(void)report_frame(r);
	(void)report_guilty_file(r);
	report_free(r);

	/* the title normaliser and the guilty file scan take C strings */
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = 0;
	if (report_normalize_title(copy, &t) == 0) {
		check(strlen(t) <= 120);
		free(t);
	}
	if (report_guilty_file_of(copy, strlen(copy), copy, &f) == 0)
		free(f);
	free(copy);
	return 0;
}
