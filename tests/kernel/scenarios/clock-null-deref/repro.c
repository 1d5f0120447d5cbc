// Asks for a clock that does not exist.  The syscall is made directly:
// the vDSO would answer for valid clocks only anyway.
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec ts;

	if (syscall(SYS_clock_gettime, 100, &ts) < 0)
		perror("clock_gettime");
	return 0;
}
