/* The start-up floor: a C program that does only what a service must to be
 * seen ready, sending READY=1 to $NOTIFY_SOCKET, then waits for a signal.
 * measure.py runs it beside `mainloop run`; build with
 *   cc -O2 -o .build-startup/ready-floor Benchmarks/startup/ready-floor.c
 * (run.sh does). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(void) {
    const char *path = getenv("NOTIFY_SOCKET");
    if (path == NULL || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) return 1;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strcpy(address.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 1;
    const char message[] = "READY=1";
    if (sendto(fd, message, sizeof message - 1, 0, (struct sockaddr *)&address, sizeof address) < 0) return 1;
    pause();
    return 0;
}
