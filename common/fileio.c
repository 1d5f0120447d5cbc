#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "fileio.h"
#include "macro.h"

int read_fd_bounded(int fd, size_t max, char **ret_data, size_t *ret_len)
{
	_cleanup_buf_ struct buf b = BUF_INIT(max);
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		int r;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negerrno();
		}
		if (n == 0)
			break;
		r = buf_append(&b, chunk, (size_t)n);
		if (r == -E2BIG)
			return -EFBIG;
		if (r < 0)
			return r;
	}
	*ret_data = buf_steal(&b, ret_len);
	return *ret_data ? 0 : -ENOMEM;
}

int read_file_bounded(const char *path, size_t max, char **ret_data,
		      size_t *ret_len)
{
	_cleanup_close_ int fd = -1;

	if (strcmp(path, "-") == 0)
		return read_fd_bounded(STDIN_FILENO, max, ret_data, ret_len);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negerrno();
	return read_fd_bounded(fd, max, ret_data, ret_len);
}

int write_file_atomic(const char *path, const void *data, size_t len,
		      mode_t mode)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	const char *p = data;

	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return negerrno();
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			int r = negerrno();

			if (errno == EINTR)
				continue;
			unlink(tmp);
			return r;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0 || rename(tmp, path) < 0) {
		int r = negerrno();

		unlink(tmp);
		return r;
	}
	return 0;
}

int mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return negerrno();
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return negerrno();
	return 0;
}

static int rm_rf_at(int dfd, const char *name)
{
	_cleanup_close_ int fd = -1;
	struct dirent *de;
	DIR *d;
	int r = 0;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOTDIR || errno == ELOOP)
			return unlinkat(dfd, name, 0) < 0 ? negerrno() : 0;
		return errno == ENOENT ? 0 : negerrno();
	}
	d = fdopendir(fd);
	if (!d)
		return negerrno();
	fd = -1; /* owned by d now */
	while ((de = readdir(d))) {
		int q;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_type == DT_DIR)
			q = rm_rf_at(dirfd(d), de->d_name);
		else
			q = unlinkat(dirfd(d), de->d_name, 0) < 0 ? negerrno() : 0;
		if (q < 0 && r == 0)
			r = q;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && r == 0 && errno != ENOENT)
		r = negerrno();
	return r;
}

int rm_rf(const char *path)
{
	return rm_rf_at(AT_FDCWD, path);
}

int copy_file_bounded(const char *from, const char *to, size_t max)
{
	_cleanup_free_ char *data = NULL;
	size_t len;
	int r;

	r = read_file_bounded(from, max, &data, &len);
	if (r < 0)
		return r;
	return write_file_atomic(to, data, len, 0644);
}
