/* libFuzzer harness for the model's tool calls: the first byte picks an
 * exploration tool, the rest is its arguments as the model would send
 * them (JSON, bounded like a provider's response), run on a small git
 * tree made once; and, for byte values past the tools, search/replace
 * edits applied to the same tree (the closest-match answer included).
 * Whatever the arguments, an answer stays bounded and inside the tree. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/edits.h"
#include "agent/explore.h"
#include "common/fileio.h"
#include "repro/tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/kfix-fuzz-explore.XXXXXX";
static struct tree *tree;
static char base[TREE_OID_HEX];
static json_t *defs;

static void put(const char *rel, const char *text)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if (write_file_atomic(p, text, strlen(text), 0644) < 0)
		abort();
}

static void cleanup(void)
{
	tree_free(tree);
	json_decref(defs);
	(void)rm_rf(dir);
}

static void setup(void)
{
	char cmd[512], p[256];

	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	snprintf(p, sizeof(p), "%s/ipc", dir);
	if (mkdir_p(p, 0755) < 0)
		abort();
	put("ipc/msg.c", "#include \"msg.h\"\n\nstatic void freeque(struct q *q)\n{\n\tq->n = 0;\n}\n\n"
			 "SYSCALL_DEFINE1(msgq, int, n)\n{\n\treturn n;\n}\n");
	put("ipc/msg.h", "#define MSGMAX 8192\nstruct q {\n\tint n;\n};\n");
	snprintf(cmd, sizeof(cmd), "cd %s && git init -q && git -c user.name=F -c user.email=f@example.org "
		 "add -A && git -c user.name=F -c user.email=f@example.org commit -qm base", dir);
	if (system(cmd) != 0 || tree_open_path(dir, NULL, &tree) < 0 ||
	    tree_resolve(tree, "HEAD", base) < 0 || !(defs = explore_tool_defs()))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct explore *e = NULL;
	json_t *args;
	char *out = NULL, *diff = NULL, *err = NULL;
	size_t n_tools;

	if (!tree)
		setup();
	if (size == 0 || size > 64 * 1024)
		return 0;
	args = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, NULL);
	if (!args)
		return 0;
	n_tools = json_array_size(defs);
	if (data[0] % (n_tools + 1) < n_tools) {
		const char *name = json_string_value(json_object_get(
			json_array_get(defs, data[0] % (n_tools + 1)), "name"));

		if (explore_new(tree, base, &e) >= 0 && explore_call(e, name, args, &out) >= 0 &&
		    strlen(out) > EXPLORE_ANSWER_MAX + 256)
			abort();
	} else if (edits_apply(dir, json_is_array(args) ? args : json_object_get(args, "edits"),
			       &diff, &err) >= 0 && !diff)
		abort();
	free(out);
	free(diff);
	free(err);
	explore_free(e);
	json_decref(args);
	return 0;
}
