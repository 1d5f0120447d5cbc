#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "macro.h"
#include "proc.h"

#define PROC_OUTPUT_DEFAULT (1024 * 1024)
#define CANCEL_POLL_MS 500
#define CANCEL_GRACE_USEC (5 * 1000000ULL)

static _noreturn_ void child_exec(char *const argv[], const struct proc_opts *o,
				  int in_fd, int out_fd)
{
	int devnull;

	sigset_t none;

	setpgid(0, 0);
	/* the caller may block signals for its event loop: not the child */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (in_fd < 0) {
		devnull = open("/dev/null", O_RDONLY);
		in_fd = devnull;
	}
	if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0)
		_exit(127);
	if (o->discard_stderr) {
		devnull = open("/dev/null", O_WRONLY);
		if (devnull < 0 || dup2(devnull, STDERR_FILENO) < 0)
			_exit(127);
	} else if (dup2(out_fd, STDERR_FILENO) < 0) {
		_exit(127);
	}
	if (o->cwd && chdir(o->cwd) < 0)
		_exit(127);
	if (o->env)
		execvpe(argv[0], argv, o->env);
	else
		execvp(argv[0], argv);
	_exit(127);
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

/* Pumps stdin and output until the output pipe closes or time runs out. */
static int pump(int in_fd, int out_fd, const struct proc_opts *o,
		struct buf *out, bool *ret_timed_out)
{
	const char *in_p = o->stdin_data;
	size_t in_left = o->stdin_len;
	uint64_t deadline = o->timeout_usec ? clock_mono_usec() + o->timeout_usec : 0;
	char chunk[16384];

	for (;;) {
		struct pollfd pfd[2] = { { .fd = out_fd, .events = POLLIN },
					 { .fd = in_fd, .events = POLLOUT } };
		int timeout = -1, n;

		if (o->cancel && *o->cancel)
			return -ECANCELED;
		if (deadline) {
			uint64_t now = clock_mono_usec();

			if (now >= deadline) {
				*ret_timed_out = true;
				return 0;
			}
			timeout = (int)MIN((deadline - now) / 1000 + 1, 60000);
		}
		if (o->cancel)
			timeout = timeout < 0 ? CANCEL_POLL_MS : MIN(timeout, CANCEL_POLL_MS);
		n = poll(pfd, in_fd >= 0 ? 2 : 1, timeout);
		if (n < 0 && errno != EINTR)
			return negerrno();
		if (n <= 0)
			continue;
		if (in_fd >= 0 && (pfd[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = in_left ? write(in_fd, in_p, MIN(in_left, 65536)) : 0;

			if (w > 0) {
				in_p += w;
				in_left -= (size_t)w;
			}
			if (w < 0 ? errno != EAGAIN && errno != EINTR : in_left == 0) {
				close(in_fd);
				in_fd = -1;
			}
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t r = read(out_fd, chunk, sizeof(chunk));

			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r <= 0)
				break;
			if (o->tee_fd >= 0)
				write_all(o->tee_fd, chunk, (size_t)r);
			if (o->on_output)
				o->on_output(o->userdata, chunk, (size_t)r);
			buf_append_trunc(out, chunk, (size_t)r);
		}
	}
	if (in_fd >= 0)
		close(in_fd);
	return 0;
}

/* A cancelled child's group may stop its own (VMs, builds) before the
 * SIGKILL that follows. */
static void stop_gently(pid_t pid)
{
	uint64_t end = clock_mono_usec() + CANCEL_GRACE_USEC;

	kill(-pid, SIGTERM);
	while (clock_mono_usec() < end && waitpid(pid, NULL, WNOHANG) == 0)
		usleep(50 * 1000);
}

int proc_run(char *const argv[], const struct proc_opts *opts,
	     struct proc_result *ret)
{
	struct proc_opts o = opts ? *opts : PROC_OPTS_DEFAULT;
	struct buf out = BUF_INIT(o.output_max ? o.output_max : PROC_OUTPUT_DEFAULT);
	int outp[2] = { -1, -1 }, inp[2] = { -1, -1 };
	bool timed_out = false;
	int status = 0, r;
	pid_t pid;

	if (!argv || !argv[0])
		return -EINVAL;
	if (pipe2(outp, O_CLOEXEC) < 0)
		return negerrno();
	if (o.stdin_data && pipe2(inp, O_CLOEXEC) < 0) {
		r = negerrno();
		close(outp[0]);
		close(outp[1]);
		return r;
	}
	pid = fork();
	if (pid < 0) {
		r = negerrno();
		close(outp[0]);
		close(outp[1]);
		if (inp[0] >= 0) {
			close(inp[0]);
			close(inp[1]);
		}
		return r;
	}
	if (pid == 0)
		child_exec(argv, &o, inp[0], outp[1]);
	setpgid(pid, pid); /* closes the race with the child's own setpgid */
	close(outp[1]);
	if (inp[0] >= 0) {
		close(inp[0]);
		fcntl(inp[1], F_SETFL, O_NONBLOCK);
	}
	r = pump(inp[1], outp[0], &o, &out, &timed_out);
	close(outp[0]);
	if (r == -ECANCELED)
		stop_gently(pid);
	if (timed_out || r < 0)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	kill(-pid, SIGKILL); /* stragglers that kept running in the group */
	if (r < 0) {
		buf_free(&out);
		return r;
	}
	memset(ret, 0, sizeof(*ret));
	ret->timed_out = timed_out;
	ret->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	ret->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	ret->output_truncated = out.truncated;
	ret->output = buf_steal(&out, &ret->output_len);
	return ret->output ? 0 : -ENOMEM;
}

void proc_result_free(struct proc_result *r)
{
	free(r->output);
	r->output = NULL;
}
