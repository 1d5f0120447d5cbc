/* Parser throughput and linearity.
 *
 *   corpus:      every syzkaller corpus log parsed one by one, then all of
 *                them concatenated into one log (MB/s)
 *   sparse-100M: a generated 100 MB console log with three crashes far apart
 *   linearity:   adversarial single lines of 2.5 MB and 10 MB; the 10 MB
 *                parse must take less than 8x the 2.5 MB one (4x is linear)
 *
 * Prints peak RSS too.  Exits 1 when linearity fails. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "repro/report.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double parse_secs(const char *s, size_t n, int reps)
{
	double best = 1e9;

	for (int i = 0; i < reps; i++) {
		struct report *r = NULL;
		double t = now();

		if (report_parse(s, n, &r) < 0) {
			fprintf(stderr, "parse failed\n");
			exit(1);
		}
		t = now() - t;
		report_free(r);
		if (t < best)
			best = t;
	}
	return best;
}

static void bench_corpus(const char *root)
{
	_cleanup_free_ char *dir = NULL;
	struct buf all = BUF_INIT((size_t)256 << 20);
	double t_each = 0, t_all;
	size_t files = 0;
	struct dirent *de;
	DIR *d;

	if (asprintf(&dir, "%s/report", root) < 0 || !(d = opendir(dir))) {
		printf("corpus: skipped (no %s/report; set KFIX_SYZKALLER_CORPUS)\n", root);
		return;
	}
	while ((de = readdir(d))) {
		_cleanup_free_ char *p = NULL, *data = NULL;
		const char *log;
		size_t len;

		if (de->d_name[0] == '.' || asprintf(&p, "%s/%s", dir, de->d_name) < 0 ||
		    read_file_bounded(p, 64u << 20, &data, &len) < 0)
			continue;
		log = strstr(data, "\n\n"); /* skip the expectations header */
		log = log ? log + 2 : data;
		len -= (size_t)(log - data);
		t_each += parse_secs(log, len, 1);
		buf_append(&all, log, len);
		files++;
	}
	closedir(d);
	t_all = parse_secs(all.data, all.len, 3);
	printf("corpus: %zu logs, %.1f MB: one by one %.1f MB/s; concatenated %.1f MB/s\n", files,
	       all.len / 1e6, all.len / 1e6 / t_each, all.len / 1e6 / t_all);
	buf_free(&all);
}

static const char crash[] =
	"[  100.000001][ T4242] ==================================================================\n"
	"[  100.000002][ T4242] BUG: KASAN: use-after-free in ip6_send_skb+0x2f5/0x330\n"
	"[  100.000003][ T4242] Read of size 8 at addr ffff88004fab1858 by task syz-executor0/4242\n"
	"[  100.000004][ T4242] Call Trace:\n"
	"[  100.000005][ T4242]  ip6_send_skb+0x2f5/0x330 net/ipv6/ip6_output.c:1748\n"
	"[  100.000006][ T4242]  rawv6_sendmsg+0x2ede/0x4400 net/ipv6/raw.c:932\n";

static void bench_sparse(void)
{
	const size_t size = 100u << 20;
	char *log = malloc(size + sizeof(crash));
	size_t n = 0, k = 0;
	double t;

	if (!log)
		exit(1);
	while (n < size) {
		if (k == 0 && n > size * 3 / 10) {
			memcpy(log + n, crash, sizeof(crash) - 1);
			n += sizeof(crash) - 1;
			k++;
		} else if ((k == 1 && n > size * 6 / 10) || (k == 2 && n > size * 9 / 10)) {
			memcpy(log + n, crash, sizeof(crash) - 1);
			n += sizeof(crash) - 1;
			k++;
		}
		n += (size_t)snprintf(log + n, size + sizeof(crash) - n,
				      "[ %6zu.%06zu][ T%zu] netdevsim netdevsim0 eth%zu: set link up, carrier on\n",
				      n / 100000, n % 1000000, n % 7000, n % 4);
	}
	t = parse_secs(log, n, 2);
	printf("sparse-100M: %.1f MB in %.2f s: %.1f MB/s\n", n / 1e6, t, n / 1e6 / t);
	free(log);
}

static char *repeat(const char *pattern, size_t len)
{
	size_t pl = strlen(pattern);
	char *s = malloc(len);

	if (!s)
		exit(1);
	for (size_t i = 0; i < len; i++)
		s[i] = pattern[i % pl];
	return s;
}

static int bench_linearity(void)
{
	static const char *const patterns[] = {
		"BUG: KASAN: a in f+", "WARNING: at a.c:1 f+", "INFO: task x blocked for more than 1 seconds ",
		"general protection fault: ", "[ 1.0][ T1] ", " ? f+0x1/0x2", "a.c:1 ", "BUG:",
		"Call Trace:", "(?:.*", "\xff\xfe",
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		char *s = repeat(patterns[i], 10u << 20);
		double small = parse_secs(s, (10u << 20) / 4, 3);
		double big = parse_secs(s, 10u << 20, 3);
		double ratio = big / (small > 1e-6 ? small : 1e-6);
		bool ok = ratio < 8.0 || big < 0.05;

		printf("linearity: %-48.48s 2.5MB %.3fs 10MB %.3fs ratio %.1f %s\n", patterns[i], small, big,
		       ratio, ok ? "ok" : "NOT LINEAR");
		bad |= !ok;
		free(s);
	}
	return bad;
}

int main(void)
{
	_cleanup_free_ char *root = NULL;
	const char *env = getenv("KFIX_SYZKALLER_CORPUS");
	const char *top = getenv("top_srcdir");
	struct rusage ru;
	int bad;

	if (env && *env)
		root = strdup(env);
	else if (asprintf(&root, "%s/../shared/testdata/syzkaller", top ? top : SRCDIR) < 0)
		return 1;
	bench_corpus(root);
	bench_sparse();
	bad = bench_linearity();
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS: %.1f MB (includes the benchmark's own 100 MB log)\n", ru.ru_maxrss / 1024.0);
	return bad;
}
