/* libFuzzer harness for the C function finder: the first line is the
 * function name, the rest the source text.  The result, when found, must
 * lie inside the text and start at a line start. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "repro/tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	char name[128];
	size_t n, start, end;
	unsigned line;

	if (!nl || (size_t)(nl - (const char *)data) >= sizeof(name))
		return 0;
	n = (size_t)(nl - (const char *)data);
	memcpy(name, data, n);
	name[n] = 0;
	if (c_find_function(nl + 1, size - n - 1, name, &start, &end, &line) == 0) {
		if (start > end || end > size - n - 1 || line == 0)
			abort();
		if (start > 0 && nl[start] != '\n')
			abort();
	}
	return 0;
}
