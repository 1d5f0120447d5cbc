// Gives a notification pipe a ring of notes and closes it: the revert of
// upstream b490207017ba ("watch_queue: Free the page array when
// watch_queue is dismantled", CVE-2022-49148) frees the notes' pages but
// not the array watch_queue_set_size() allocated for them, which kmemleak
// reports once it is unreferenced.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* From <linux/watch_queue.h>, which clashes with glibc's <fcntl.h>. */
#define O_NOTIFICATION_PIPE O_EXCL
#define IOC_WATCH_QUEUE_SET_SIZE _IO('W', 0x60)

int main(void)
{
	for (int i = 0; i < 4; i++) {
		int fds[2];

		if (pipe2(fds, O_NOTIFICATION_PIPE) < 0) {
			perror("pipe2");
			return 1;
		}
		if (ioctl(fds[0], IOC_WATCH_QUEUE_SET_SIZE, 128) < 0) {
			perror("IOC_WATCH_QUEUE_SET_SIZE");
			return 1;
		}
		close(fds[0]);
		close(fds[1]);
	}
	return 0;
}
