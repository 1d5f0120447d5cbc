/* kfixctl report parse|symbolize: the crash report parser from the
 * command line. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"
#include "repro/report.h"

/* The log to parse: mapped when it is a regular file, read otherwise. */
struct input {
	char *data;
	size_t len;
	bool mapped;
};

static void input_done(struct input *in)
{
	if (in->mapped && in->len > 0)
		munmap(in->data, in->len);
	else
		free(in->data);
	*in = (struct input){};
}

static int input_open(const char *path, struct input *ret)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	*ret = (struct input){};
	if (streq(path, "-"))
		return read_fd_bounded(STDIN_FILENO, REPORT_INPUT_MAX, &ret->data, &ret->len);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return negerrno();
	if (!S_ISREG(st.st_mode))
		return read_fd_bounded(fd, REPORT_INPUT_MAX, &ret->data, &ret->len);
	if ((uint64_t)st.st_size > REPORT_INPUT_MAX)
		return -E2BIG;
	if (st.st_size == 0) {
		ret->data = strdup("");
		return ret->data ? 0 : -ENOMEM;
	}
	ret->data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (ret->data == MAP_FAILED) {
		ret->data = NULL;
		return negerrno();
	}
	ret->len = (size_t)st.st_size;
	ret->mapped = true;
	return 0;
}

static json_t *jstrv(char *const *v)
{
	json_t *a = json_array();

	for (size_t i = 0; a && v && v[i]; i++)
		if (json_array_append_new(a, json_str_or_null(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static int print_json(const struct report *r)
{
	_cleanup_json_ json_t *j = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:b, s:b, s:o}",
					     "title", json_str_or_null(report_title(r)),
					     "alt_titles", jstrv(report_alt_titles(r)),
					     "type", json_str_or_null(report_type(r)),
					     "frame", json_str_or_null(report_frame(r)),
					     "frames", jstrv(report_frames(r)),
					     "guilty_file", json_str_or_null(report_guilty_file(r)),
					     "corrupted", report_corrupted(r),
					     "suppressed", report_suppressed(r),
					     "panicked", report_panicked(r),
					     "report", json_str_or_null(report_text(r)));

	if (!j)
		return 1;
	return json_print(j) < 0 ? 1 : 0;
}

static void print_text_block(const char *text)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		_cleanup_free_ char *e = str_escape(p, n, REPORT_LINE_MAX);

		printf("  %s\n", e ? e : "?");
		p += n + (nl ? 1 : 0);
	}
}

static int print_plain(const struct report *r)
{
	char *const *alts = report_alt_titles(r);
	int proc, id;

	if (!report_title(r)) {
		printf("no crash\n");
		return 0;
	}
	ctl_print_escaped("title:", report_title(r));
	for (size_t i = 0; alts[i]; i++)
		ctl_print_escaped("alt title:", alts[i]);
	ctl_print_escaped("type:", report_type(r));
	ctl_print_escaped("frame:", report_frame(r));
	ctl_print_escaped("guilty file:", report_guilty_file(r));
	printf("%-14s %s%s%s\n", "flags:", report_corrupted(r) ? "corrupted " : "",
	       report_suppressed(r) ? "suppressed " : "", report_panicked(r) ? "panicked" : "");
	if (report_corrupted(r))
		ctl_print_escaped("corrupted by:", report_corrupted_reason(r));
	if (report_executor(r, &proc, &id))
		printf("%-14s proc=%d, id=%d\n", "executor:", proc, id);
	printf("%-14s %zu-%zu\n", "log bytes:", report_start(r), report_end(r));
	printf("report:\n");
	print_text_block(report_text(r));
	return 0;
}

static int report_parse_cmd(struct ctl *c, int argc, char **argv)
{
	_cleanup_(report_freep) struct report *rep = NULL;
	struct input in;
	int r;

	if (argc != 2) {
		ctl_err("usage: kfixctl report parse [--json] FILE|-");
		return 2;
	}
	r = input_open(argv[1], &in);
	if (r < 0) {
		ctl_err("report parse: cannot read %s: %s", argv[1], strerror(-r));
		return 1;
	}
	r = report_parse(in.data, in.len, &rep);
	input_done(&in);
	if (r < 0) {
		ctl_err("report parse: %s", strerror(-r));
		return 1;
	}
	return c->json ? print_json(rep) : print_plain(rep);
}

static int report_symbolize_cmd(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "vmlinux", required_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_free_ char *out = NULL;
	const char *vmlinux = NULL, *path = "-";
	struct input in;
	int ch, r;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "v:", opts, NULL)) != -1) {
		if (ch != 'v') {
			ctl_err("usage: kfixctl report symbolize --vmlinux FILE [FILE|-]");
			return 2;
		}
		vmlinux = optarg;
	}
	if (!vmlinux || argc - optind > 1) {
		ctl_err("usage: kfixctl report symbolize --vmlinux FILE [FILE|-]");
		return 2;
	}
	if (optind < argc)
		path = argv[optind];
	r = input_open(path, &in);
	if (r < 0) {
		ctl_err("report symbolize: cannot read %s: %s", path, strerror(-r));
		return 1;
	}
	r = report_symbolize(in.data, in.len, vmlinux, &out);
	input_done(&in);
	if (r < 0) {
		ctl_err("report symbolize: %s: %s", vmlinux, strerror(-r));
		return 1;
	}
	if (c->json) {
		_cleanup_json_ json_t *j = json_pack("{s:o}", "report", json_str_or_null(out));

		return j && json_print(j) >= 0 ? 0 : 1;
	}
	fputs(out, stdout);
	return 0;
}

int ctl_report(struct ctl *c, int argc, char **argv)
{
	if (argc >= 2 && streq(argv[1], "parse"))
		return report_parse_cmd(c, argc - 1, argv + 1);
	if (argc >= 2 && streq(argv[1], "symbolize"))
		return report_symbolize_cmd(c, argc - 1, argv + 1);
	ctl_err("usage: kfixctl report parse [--json] FILE|- | report symbolize --vmlinux FILE [FILE|-]");
	return 2;
}
