/* libFuzzer harness: any bytes through the whole mail parser and its
 * JSON view.  Crashers found are kept in tests/fuzz/corpus-mail/ and
 * replayed by tests/unit/test-mail-fuzz-replay. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "common/json.h"
#include "mail/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_(mail_freep) struct mail *m = NULL;
	_cleanup_free_ char *err = NULL;

	if (mail_parse((const char *)data, size, 1 << 20, &m, &err) == 0) {
		_cleanup_json_ json_t *j = NULL;

		if (mail_to_json(m, &j) == 0) {
			char *s = json_dumps(j, 0);

			free(s);
		}
	}
	return 0;
}
