#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "slot.h"

#define SLOT_MAX 1024
#define SLOT_POLL_USEC 100000

struct slot {
	int fd;
	int index;
};

static int slot_open(const char *dir, const char *name, int i)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s.%d.lock", dir, name, i) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
}

/* Tries every slot once; 0 with the fd of the one taken, -EAGAIN if none. */
static int try_all(const char *dir, const char *name, int max, int *ret_fd,
		   int *ret_index)
{
	for (int i = 0; i < max; i++) {
		int fd = slot_open(dir, name, i);

		if (fd < 0)
			return negerrno();
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			*ret_fd = fd;
			*ret_index = i;
			return 0;
		}
		close(fd);
		if (errno != EWOULDBLOCK)
			return negerrno();
	}
	return -EAGAIN;
}

int slot_acquire(const char *dir, const char *name, int max,
		 uint64_t timeout_usec, struct slot **ret)
{
	uint64_t waited = 0;
	struct slot *s;
	int fd = -1, index = 0, r;

	if (max < 1 || max > SLOT_MAX || !name[0] || strchr(name, '/'))
		return -EINVAL;
	r = mkdir_p(dir, 0750);
	if (r < 0)
		return r;
	/* polling keeps this simple and fair enough: slots are held for
	 * minutes (a build, a VM run), so a 100 ms poll costs nothing */
	while ((r = try_all(dir, name, max, &fd, &index)) == -EAGAIN &&
	       waited < timeout_usec) {
		struct timespec ts = { 0, SLOT_POLL_USEC * 1000 };

		nanosleep(&ts, NULL);
		waited += SLOT_POLL_USEC;
	}
	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return -ENOMEM;
	}
	s->fd = fd;
	s->index = index;
	*ret = s;
	return 0;
}

int slot_index(const struct slot *s)
{
	return s->index;
}

void slot_release(struct slot *s)
{
	if (!s)
		return;
	close(s->fd);
	free(s);
}

int slot_busy(const char *dir, const char *name, int max, int *ret_busy)
{
	int busy = 0;

	for (int i = 0; i < max; i++) {
		_cleanup_close_ int fd = slot_open(dir, name, i);

		if (fd < 0)
			return errno == ENOENT ? 0 : negerrno();
		if (flock(fd, LOCK_EX | LOCK_NB) < 0)
			busy++;
		else
			flock(fd, LOCK_UN);
	}
	*ret_busy = busy;
	return 0;
}
