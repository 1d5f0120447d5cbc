#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <time.h>

#include "log.h"

#define LOG_LINE_MAX 8192

static int log_level = LOG_INFO;
static bool log_to_journal;
static char log_ident[32] = "kfix";
static char ctx_bug[64];
static char ctx_job[64];

/* systemd sets JOURNAL_STREAM=dev:inode for the stream it gave us. */
static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

void log_setup(const char *ident, enum log_target target)
{
	if (ident)
		snprintf(log_ident, sizeof(log_ident), "%s", ident);
	switch (target) {
	case LOG_TARGET_AUTO:
		log_to_journal = stderr_is_journal();
		break;
	case LOG_TARGET_JOURNAL:
		log_to_journal = true;
		break;
	case LOG_TARGET_STDERR:
		log_to_journal = false;
		break;
	}
}

void log_set_level(int prio)
{
	if (prio >= LOG_EMERG && prio <= LOG_DEBUG)
		log_level = prio;
}

int log_get_level(void)
{
	return log_level;
}

int log_parse_level(const char *s, int *ret_prio)
{
	static const char *const names[] = { "emerg",  "alert", "crit",
					     "err",    "warning", "notice",
					     "info",   "debug" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcasecmp(s, names[i]) == 0) {
			*ret_prio = (int)i;
			return 0;
		}
	if (strcasecmp(s, "error") == 0) {
		*ret_prio = LOG_ERR;
		return 0;
	}
	if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0') {
		*ret_prio = s[0] - '0';
		return 0;
	}
	return -EINVAL;
}

void log_set_context(const char *bug, const char *job)
{
	snprintf(ctx_bug, sizeof(ctx_bug), "%s", bug ? bug : "");
	snprintf(ctx_job, sizeof(ctx_job), "%s", job ? job : "");
}

static void log_write_journal(int prio, const char *bug, const char *job,
			      const char *file, int line, const char *func,
			      const char *msg)
{
	char f_msg[LOG_LINE_MAX + 16], f_prio[16], f_bug[80], f_job[80];
	char f_file[256], f_line[32], f_func[128], f_ident[64];
	struct iovec iov[8];
	int n = 0;

#define IOV_ADD(buf, ...)                                                      \
	do {                                                                   \
		int _l = snprintf(buf, sizeof(buf), __VA_ARGS__);              \
		iov[n].iov_base = buf;                                         \
		iov[n].iov_len = (size_t)MIN(_l, (int)sizeof(buf) - 1);        \
		n++;                                                           \
	} while (0)
	IOV_ADD(f_msg, "MESSAGE=%s", msg);
	IOV_ADD(f_prio, "PRIORITY=%d", prio);
	IOV_ADD(f_ident, "SYSLOG_IDENTIFIER=%s", log_ident);
	IOV_ADD(f_file, "CODE_FILE=%s", file);
	IOV_ADD(f_line, "CODE_LINE=%d", line);
	IOV_ADD(f_func, "CODE_FUNC=%s", func);
	if (bug && *bug)
		IOV_ADD(f_bug, "KFIX_BUG=%s", bug);
	if (job && *job)
		IOV_ADD(f_job, "KFIX_JOB=%s", job);
#undef IOV_ADD
	sd_journal_sendv(iov, n);
}

static void log_write_stderr(int prio, const char *bug, const char *job,
			     const char *msg)
{
	static const char *const tag[] = { "emerg", "alert", "crit", "error",
					   "warning", "notice", "info", "debug" };
	char ctx[160] = "";
	struct timespec ts;
	struct tm tm;
	char when[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if ((bug && *bug) || (job && *job))
		snprintf(ctx, sizeof(ctx), " [%s%s%s%s%s]",
			 bug && *bug ? "bug " : "", bug && *bug ? bug : "",
			 bug && *bug && job && *job ? " " : "",
			 job && *job ? "job " : "", job && *job ? job : "");
	fprintf(stderr, "%s.%03ld %s[%d] %s:%s %s\n", when, ts.tv_nsec / 1000000,
		log_ident, (int)getpid(), tag[prio & 7], ctx, msg);
}

void log_internal(int prio, const char *bug, const char *job, const char *file,
		  int line, const char *func, const char *fmt, ...)
{
	char msg[LOG_LINE_MAX];
	int saved = errno;
	va_list ap;

	if (prio > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!bug && ctx_bug[0])
		bug = ctx_bug;
	if (!job && ctx_job[0])
		job = ctx_job;
	if (log_to_journal)
		log_write_journal(prio, bug, job, file, line, func, msg);
	else
		log_write_stderr(prio, bug, job, msg);
	errno = saved;
}
