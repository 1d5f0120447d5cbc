/* The monotonic clock in microseconds: time limits, deadlines and
 * durations, unaffected by changes of the wall clock. */
#ifndef KFIX_CLOCK_H
#define KFIX_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

#endif
