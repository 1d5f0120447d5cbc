/* kfixctl explore: one of the agent's exploration tools, answered as the
 * model would see it (for checking what the agent can learn, and for
 * timing the tools on a real tree). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/explore.h"
#include "common/json.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "ctl.h"
#include "repro/tags.h"
#include "repro/tree.h"

#define USAGE "usage: kfixctl explore --src DIR [--commit REV] [--vmlinux F] [--index F] TOOL [JSON-ARGS]"

int ctl_explore(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "src", required_argument, NULL, 's' }, { "commit", required_argument, NULL, 'C' },
		{ "vmlinux", required_argument, NULL, 'v' }, { "index", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_(explore_freep) struct explore *e = NULL;
	_cleanup_json_ json_t *args = NULL;
	_cleanup_free_ char *out = NULL;
	const char *src = NULL, *rev = "HEAD", *vmlinux = NULL, *index = NULL;
	_cleanup_(tags_freep) struct tags *tags = NULL;
	char oid[TREE_OID_HEX];
	struct tree *t = NULL;
	json_error_t jerr;
	int ch, r;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "s:C:v:i:", opts, NULL)) != -1)
		switch (ch) {
		case 'i': index = optarg; break;
		case 's': src = optarg; break;
		case 'C': rev = optarg; break;
		case 'v': vmlinux = optarg; break;
		default: ctl_err(USAGE); return 2;
		}
	if (!src || argc - optind < 1 || argc - optind > 2) {
		ctl_err(USAGE);
		return 2;
	}
	args = optind + 1 < argc ? json_loads(argv[optind + 1], 0, &jerr) : json_object();
	if (!json_is_object(args)) {
		ctl_err("explore: the arguments must be a JSON object");
		return 2;
	}
	if (index && access(index, F_OK) < 0) {
		_cleanup_free_ char *err = NULL;
		uint64_t t0 = clock_mono_usec();

		/* the index is of the checkout: src must be at the commit */
		r = tags_build(src, index, &err);
		if (r < 0) {
			ctl_err("explore: cannot index %s: %s", src, err ?: strerror(-r));
			return 1;
		}
		fprintf(stderr, "indexed %s in %.1fs\n", src, (clock_mono_usec() - t0) / 1e6);
	}
	if (index && (r = tags_open(index, &tags)) < 0) {
		ctl_err("explore: cannot open the index %s: %s", index, strerror(-r));
		return 1;
	}
	r = tree_open_path(src, NULL, &t);
	if (r < 0) {
		ctl_err("explore: cannot open %s: %s", src, strerror(-r));
		return 1;
	}
	r = tree_resolve(t, rev, oid);
	if (r >= 0)
		r = explore_new(t, oid, &e);
	if (r >= 0 && vmlinux)
		r = explore_set_vmlinux(e, vmlinux);
	if (r >= 0 && tags)
		explore_set_tags(e, tags);
	if (r >= 0)
		r = explore_call(e, argv[optind], args, &out);
	if (r == -ENOENT)
		ctl_err("explore: no tool %s", argv[optind]);
	else if (r < 0)
		ctl_err("explore: %s", tree_error(t) ?: strerror(-r));
	if (r >= 0 && c->json) {
		json_t *a = json_str_or_null(out);
		_cleanup_json_ json_t *j = json_pack("{s:s, s:o}", "tool", argv[optind], "answer", a);

		r = j && json_print(j) >= 0 ? 0 : -EIO;
	} else if (r >= 0)
		printf("%s%s", out, endswith(out, "\n") ? "" : "\n");
	tree_free(t);
	return r < 0 ? 1 : 0;
}

/* The tools, as the model is told of them: name, then each parameter
 * with its type and description. */
void ctl_explore_help(FILE *f)
{
	_cleanup_json_ json_t *defs = explore_tool_defs();
	const json_t *d;
	size_t i;

	fprintf(f, "\nTools (JSON-ARGS is an object of their parameters):\n");
	json_array_foreach(defs, i, d) {
		const json_t *props = json_object_get(json_object_get(d, "parameters"), "properties");
		const char *k;
		const json_t *v;

		fprintf(f, "  %s\n      %s\n", json_get_str(d, "name") ?: "?",
			json_get_str(d, "description") ?: "");
		json_object_foreach((json_t *)props, k, v)
			fprintf(f, "      %s (%s): %s\n", k, json_get_str(v, "type") ?: "?",
				json_get_str(v, "description") ?: "");
	}
}
