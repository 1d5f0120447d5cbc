/* Parsing throughput over 20,000 generated messages (syzbot reports,
 * replies with commands, multipart mails with base64 patches, QP text),
 * and the memory bound: peak RSS must not grow with the message count. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/buf.h"
#include "mail/parse.h"

#define BENCH_MESSAGES 20000

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int gen(struct buf *b, int i)
{
	buf_reset(b);
	switch (i % 4) {
	case 0:
		return buf_printf(b,
			"From: syzbot <syzbot+%08x%012x@syzkaller.appspotmail.com>\n"
			"Message-ID: <%d.report@google.com>\nSubject: [syzbot] [fs?] WARNING in f%d (%d)\n"
			"To: a@example.org, b@example.org\n\nHello,\n\nsyzbot found the following issue on:\n\n"
			"HEAD commit:    1234567890ab Linux 6.%d\ngit tree:       upstream\n"
			"console output: https://syzkaller.appspot.com/x/log.txt?x=%x\n"
			"kernel config:  https://syzkaller.appspot.com/x/.config?x=%x\n"
			"dashboard link: https://syzkaller.appspot.com/bug?extid=%08x%012x\n"
			"compiler:       gcc 12\nsyz repro:      https://syzkaller.appspot.com/x/repro.syz?x=%x\n\n"
			"IMPORTANT: if you fix the issue, please add the following tag to the commit:\n"
			"Reported-by: syzbot+%08x%012x@syzkaller.appspotmail.com\n\n"
			"WARNING: CPU: 0 PID: %d at fs/f.c:%d f%d+0x1/0x2\nCall Trace:\n f%d+0x1/0x2\n\n---\n"
			"#syz test: git://repo/address.git branch-or-commit-hash\n",
			i, i, i, i, i % 7, i % 20, i, i, i, i, i, i, i, i, i, i, i);
	case 1:
		return buf_printf(b,
			"From: Dev %d <dev%d@example.org>\nMessage-ID: <%d.reply@example.org>\n"
			"In-Reply-To: <%d.report@google.com>\nReferences: <%d.report@google.com>\n"
			"Subject: Re: [syzbot] [fs?] WARNING in f%d\nTo: syzbot+%08x%012x@syzkaller.appspotmail.com\n"
			"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n"
			"On Mon, syzbot wrote:\n> WARNING in f\n\nThis looks like a r=C3=A9gression.\n\n"
			"#syz test: git://git.kernel.org/a.git\n master\n\n"
			"diff --git a/fs/f.c b/fs/f.c\n--- a/fs/f.c\n+++ b/fs/f.c\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n\n"
			"Reviewed-by: X <x@example.org>\n",
			i, i, i, i - 1, i - 1, i, i, i);
	case 2:
		return buf_printf(b,
			"From: Dev <dev@example.org>\nMessage-ID: <%d.mp@example.org>\nSubject: [PATCH] x: y %d\n"
			"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b%d\"\n\n--b%d\n"
			"Content-Type: text/plain\n\nSee attached.\n--b%d\n"
			"Content-Type: text/x-patch; name=p.diff\nContent-Disposition: attachment; filename=p.diff\n"
			"Content-Transfer-Encoding: base64\n\n"
			"ZGlmZiAtLWdpdCBhL2YuYyBiL2YuYwotLS0gYS9mLmMKKysrIGIvZi5jCkBAIC0xICsxIEBACi1hCith\nCg==\n"
			"--b%d--\n",
			i, i, i, i, i, i);
	default:
		return buf_printf(b,
			"From: list@example.org\nMessage-ID: <%d.other@example.org>\nSubject: weekly %d\n"
			"Content-Type: text/plain; charset=iso-8859-1\n\nNothing to see %d.\n", i, i, i);
	}
}

int main(void)
{
	struct buf b = BUF_INIT(1 << 20);
	double t0, t;
	long rss1 = 0;
	size_t bytes = 0;
	int kinds[5] = { 0 };

	for (int i = 0; i < BENCH_MESSAGES; i++) {
		struct mail *m = NULL;

		if (gen(&b, i) < 0)
			return 1;
		if (mail_parse(b.data, b.len, 0, &m, NULL) < 0)
			return 1;
		mail_free(m);
		if (i == 0)
			t0 = now(); /* after the one-time GMime set-up */
		bytes += b.len;
		if (i == 1000)
			rss1 = max_rss_kb();
	}
	t = now() - t0;
	for (int i = 0; i < 4; i++) {
		struct mail *m = NULL;

		gen(&b, i);
		mail_parse(b.data, b.len, 0, &m, NULL);
		kinds[mail_kind(m)]++;
		mail_free(m);
	}
	printf("parsed %d messages (%.1f MB) in %.2f s: %.0f messages/s, %.1f MB/s\n",
	       BENCH_MESSAGES, (double)bytes / 1e6, t, (BENCH_MESSAGES - 1) / t,
	       (double)bytes / 1e6 / t);
	printf("peak RSS after 1,000: %ld KiB; after %d: %ld KiB\n", rss1, BENCH_MESSAGES,
	       max_rss_kb());
	buf_free(&b);
	/* all four generated kinds must be told apart */
	if (kinds[MAIL_KIND_SYZBOT_REPORT] != 1 || kinds[MAIL_KIND_REPLY] != 1 ||
	    kinds[MAIL_KIND_PATCH] != 1 || kinds[MAIL_KIND_OTHER] != 1) {
		fprintf(stderr, "kinds misclassified\n");
		return 1;
	}
	/* memory is bounded per message, not per archive */
	return max_rss_kb() > rss1 + 8192 ? 1 : 0;
}
