// A POSIX timer, read back, then deleted: timer_create() fills in the
// timer, timer_gettime() asks its clock for the time left.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct sigevent sev;
	struct itimerspec its;
	timer_t t;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_NONE;
	if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &t) != 0) {
		perror("timer_create");
		return 1;
	}
	/* an error here is the kernel's answer, not the end of the story:
	 * the timer is deleted either way */
	if (syscall(SYS_timer_gettime, t, &its) != 0)
		perror("timer_gettime");
	if (syscall(SYS_timer_delete, t) != 0) {
		perror("timer_delete");
		return 1;
	}
	printf("timer read and deleted\n");
	return 0;
}
