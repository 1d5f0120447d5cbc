// Queues one System V message and removes the queue: freeque() frees the
// message and then reads it.
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>

int main(void)
{
	struct {
		long mtype;
		char mtext[64];
	} m = { .mtype = 1 };
	int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

	if (q < 0) {
		perror("msgget");
		return 1;
	}
	strcpy(m.mtext, "kfix");
	if (msgsnd(q, &m, sizeof(m.mtext), 0) < 0)
		perror("msgsnd");
	if (msgctl(q, IPC_RMID, NULL) < 0)
		perror("msgctl");
	return 0;
}
