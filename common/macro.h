/* Small language helpers shared by every module: cleanup attributes,
 * attribute shorthands and array sizes.  Every function in kfix releases
 * its resources with _cleanup_ attributes rather than goto labels. */
#ifndef KFIX_MACRO_H
#define KFIX_MACRO_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define _noreturn_ __attribute__((noreturn))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define CLAMP(x, lo, hi) MIN(MAX((x), (lo)), (hi))

static inline void freep(void *p)
{
	free(*(void **)p);
}
static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}
static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

/* Defines NAMEp(T **p) calling FUNC(*p) when non-NULL. */
#define DEFINE_CLEANUP(type, func)                                             \
	static inline void func##p(type **p)                                   \
	{                                                                      \
		if (*p)                                                        \
			func(*p);                                              \
	}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Hands ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p)                                                            \
	({                                                                     \
		__typeof__(p) _tp = (p);                                       \
		(p) = NULL;                                                    \
		_tp;                                                           \
	})
#define TAKE_FD(fd)                                                            \
	({                                                                     \
		int _tf = (fd);                                                \
		(fd) = -1;                                                     \
		_tf;                                                           \
	})

static inline int negerrno(void)
{
	return errno > 0 ? -errno : -EIO;
}

#endif
