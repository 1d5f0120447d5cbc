// Sets the host name and reads it back, as a program that depends on the
// name would: sethostname() writes one byte past the buffer it allocates
// for the name.  Exits 1 when the name read back is not the one set.
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

int main(void)
{
	static const char name[] = "kfix-test";
	struct utsname u;

	if (sethostname(name, strlen(name)) < 0) {
		perror("sethostname");
		return 1;
	}
	if (uname(&u) < 0) {
		perror("uname");
		return 1;
	}
	if (strcmp(u.nodename, name) != 0) {
		fprintf(stderr, "hostname: set \"%s\", read back \"%s\"\n", name, u.nodename);
		return 1;
	}
	printf("hostname: %s\n", u.nodename);
	return 0;
}
