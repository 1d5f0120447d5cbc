/* libFuzzer harness for the agent's readers of untrusted text: the first
 * byte picks the target (OpenAI body, Anthropic body, patch through the
 * gates, crash report, diff re-emission), the rest is the input. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/crashinfo-internal.h"
#include "agent/gates.h"
#include "agent/llm-internal.h"
#include "agent/udiff-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char report[] =
	"BUG: KASAN: use-after-free in foo+0x1/0x2 a/b.c:3\nCall Trace:\n foo+0x1/0x2 a/b.c:3\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data + 1;
	size_t len = size ? size - 1 : 0;
	char *s;

	if (size == 0)
		return 0;
	/* the readers take NUL-terminated text where the callers do */
	s = strndup(text, len);
	if (!s)
		return 0;
	switch (data[0] % 5) {
	case 0:
	case 1: {
		const struct llm_provider *p = data[0] % 5 ? &llm_provider_anthropic
							   : &llm_provider_openai;
		struct llm_response *r = NULL;
		char *err = NULL;

		(void)p->decode(text, len, &r, &err);
		llm_response_free(r);
		free(err);
		break;
	}
	case 2: {
		struct gate_verdicts *v = NULL;
		struct gate_limits l = GATE_LIMITS_DEFAULT;

		l.checkpatch = false;
		if (gates_run(text, len, report, sizeof(report) - 1, NULL, &l, &v) >= 0)
			gate_verdicts_free(v);
		break;
	}
	case 3: {
		struct crash_info *c = NULL;

		if (crash_info_parse(text, len, &c) >= 0)
			crash_info_free(c);
		break;
	}
	default: {
		struct udiff *d = NULL;
		char *err = NULL, *out = NULL;

		if (udiff_parse(s, strlen(s), &d, &err) >= 0) {
			bool *keep = calloc(d->n_hunks + 1, sizeof(*keep));

			for (size_t i = 0; keep && i < d->n_hunks; i++)
				keep[i] = i % 2 == 0;
			if (keep && udiff_format(d, keep, &out) >= 0)
				free(out);
			for (size_t i = 0; i < d->n_files; i++) {
				char *applied = NULL;

				if (udiff_apply_file(&d->files[i], s, &applied) >= 0)
					free(applied);
			}
			free(keep);
			udiff_free(d);
		}
		free(err);
	}
	}
	free(s);
	return 0;
}
