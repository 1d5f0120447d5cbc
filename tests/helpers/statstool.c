/* Records jobs' numbers in a store the way a job process does, for the
 * shell tests of /metrics:
 *   statstool DB build RESULT SECONDS
 *   statstool DB vm-run OUTCOME SECONDS
 *   statstool DB llm MODEL ok|failed SECONDS TOKENS-IN TOKENS-OUT COST */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "daemon/stats.h"
#include "daemon/store.h"

int main(int argc, char **argv)
{
	struct store *s = NULL;
	int r = -1;

	if (argc < 5) {
		fprintf(stderr, "usage: statstool DB build|vm-run|llm ARGS...\n");
		return 2;
	}
	if (store_open(argv[1], &s) < 0) {
		fprintf(stderr, "cannot open %s\n", argv[1]);
		return 1;
	}
	if (streq(argv[2], "build") && argc == 5)
		r = stats_build(s, argv[3], strtod(argv[4], NULL));
	else if (streq(argv[2], "vm-run") && argc == 5)
		r = stats_vm_run(s, argv[3], strtod(argv[4], NULL));
	else if (streq(argv[2], "llm") && argc == 9)
		r = stats_llm_call(s, argv[3], streq(argv[4], "ok"), strtod(argv[5], NULL),
				   strtoull(argv[6], NULL, 10), strtoull(argv[7], NULL, 10),
				   strtod(argv[8], NULL));
	else
		fprintf(stderr, "statstool: bad arguments\n");
	if (r < 0)
		fprintf(stderr, "statstool: %s\n", store_errmsg(s));
	store_close(s);
	return r < 0 ? 1 : 0;
}
