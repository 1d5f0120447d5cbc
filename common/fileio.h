/* Bounded file reads and crash-safe writes. */
#ifndef KFIX_FILEIO_H
#define KFIX_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* Reads a whole file ("-" is stdin) of at most max bytes; -EFBIG if larger.
 * The result is NUL-terminated (the NUL is not counted in ret_len). */
int read_file_bounded(const char *path, size_t max, char **ret_data,
		      size_t *ret_len);
int read_fd_bounded(int fd, size_t max, char **ret_data, size_t *ret_len);
/* Writes to a temporary file, fsyncs it and renames it over path, so a
 * reader sees the old or the new content, never a mix. */
int write_file_atomic(const char *path, const void *data, size_t len,
		      mode_t mode);
/* A copy of a file of at most max bytes, written as write_file_atomic
 * does, with mode 0644. */
int copy_file_bounded(const char *from, const char *to, size_t max);
int mkdir_p(const char *path, mode_t mode);
/* Removes a directory tree without following symlinks. */
int rm_rf(const char *path);

#endif
