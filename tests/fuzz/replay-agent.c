/* Replays the saved agent fuzzer inputs through the harness without
 * libFuzzer, so a normal `make check` guards against regressions. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/fileio.h"
#include "common/macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(void)
{
	_cleanup_free_ char *dir = NULL;
	const char *top = getenv("top_srcdir");
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	if (asprintf(&dir, "%s/tests/fuzz/corpus-agent", top ? top : ".") < 0)
		return 1;
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "cannot open %s\n", dir);
		return 1;
	}
	while ((de = readdir(d))) {
		_cleanup_free_ char *path = NULL, *data = NULL;
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&path, "%s/%s", dir, de->d_name) < 0 ||
		    read_file_bounded(path, 16u << 20, &data, &len) < 0) {
			closedir(d);
			return 1;
		}
		LLVMFuzzerTestOneInput((const uint8_t *)data, len);
		n++;
	}
	closedir(d);
	printf("replayed %u inputs\n", n);
	return n > 0 ? 0 : 1;
}
