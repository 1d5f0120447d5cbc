/* Replays the inputs kept in a corpus folder through a libFuzzer harness
 * without libFuzzer, so that crashers found once stay fixed (run by make
 * check, under ASan in the sanitizer build). */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

DEFINE_CLEANUP(DIR, closedir)

int main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir");
	_cleanup_free_ char *dir = NULL;
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *e;
	int n = 0;

	if (asprintf(&dir, "%s/%s", top ? top : ".", REPLAY_CORPUS) < 0)
		return 1;
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "%s: cannot open\n", dir);
		return 1;
	}
	while ((e = readdir(d))) {
		_cleanup_free_ char *path = NULL, *data = NULL;
		size_t len;

		if (e->d_name[0] == '.')
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0 ||
		    read_file_bounded(path, 1 << 24, &data, &len) < 0) {
			fprintf(stderr, "%s: cannot read\n", e->d_name);
			return 1;
		}
		LLVMFuzzerTestOneInput((const uint8_t *)data, len);
		n++;
	}
	printf("replayed %d inputs from %s\n", n, REPLAY_CORPUS);
	return n > 0 ? 0 : 1;
}
