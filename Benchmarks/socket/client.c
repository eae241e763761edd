// A control-socket load client: C, so the client is never the bottleneck.
//   client PATH CLIENTS DEPTH SECONDS [REQUEST [REQUEST2]]
// With two requests the client alternates them (events that each change
// something: two orientations).
// Each of CLIENTS threads keeps DEPTH requests in flight on its own
// connection (sends DEPTH lines, then one more per reply read) for SECONDS,
// and records each request's round trip. Prints requests per second and
// the p50 / p99 round trip in microseconds.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *path, *requests[2];
static int depth;
static double seconds;

typedef struct { long count; double *latencies; long capacity; } result;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *run(void *arg) {
    result *r = arg;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {0};
    a.sun_family = AF_UNIX;
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); exit(1); }
    int next = 0;
    double *sent = calloc(depth, sizeof(double));
    int head = 0, tail = 0;  // ring of send times
    double end = now() + seconds;
    for (int i = 0; i < depth; i++) {
        sent[tail] = now(); tail = (tail + 1) % depth;
        const char *q = requests[next]; next ^= requests[1] != NULL;
        if (write(fd, q, strlen(q)) != (ssize_t)strlen(q)) exit(2);
    }
    char buffer[65536];
    while (now() < end) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n <= 0) { perror("read"); exit(3); }
        for (ssize_t i = 0; i < n; i++) {
            if (buffer[i] != '\n') continue;
            double t = now();
            if (r->count == r->capacity) { r->capacity *= 2; r->latencies = realloc(r->latencies, r->capacity * sizeof(double)); }
            r->latencies[r->count++] = t - sent[head];
            head = (head + 1) % depth;
            sent[tail] = now(); tail = (tail + 1) % depth;
            const char *q = requests[next]; next ^= requests[1] != NULL;
            if (write(fd, q, strlen(q)) != (ssize_t)strlen(q)) exit(2);
        }
    }
    close(fd);
    return NULL;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: client PATH CLIENTS DEPTH SECONDS [REQUEST]\n"); return 64; }
    signal(SIGPIPE, SIG_IGN);
    path = argv[1];
    int clients = atoi(argv[2]);
    depth = atoi(argv[3]);
    seconds = atof(argv[4]);
    requests[0] = argc > 5 ? argv[5] : "{\"query\":\"state\"}\n";
    requests[1] = argc > 6 ? argv[6] : NULL;
    pthread_t threads[256];
    result results[256];
    for (int i = 0; i < clients; i++) {
        results[i] = (result){0, malloc((1 << 20) * sizeof(double)), 1 << 20};
        pthread_create(&threads[i], NULL, run, &results[i]);
    }
    long total = 0;
    for (int i = 0; i < clients; i++) { pthread_join(threads[i], NULL); total += results[i].count; }
    double *all = malloc(total * sizeof(double));
    long k = 0;
    for (int i = 0; i < clients; i++) { memcpy(all + k, results[i].latencies, results[i].count * sizeof(double)); k += results[i].count; }
    qsort(all, total, sizeof(double), compare);
    printf("%d x %d: %.0f req/s, p50 %.1f us, p99 %.1f us\n", clients, depth, total / seconds,
           all[total / 2] * 1e6, all[(long)(total * 0.99)] * 1e6);
    return 0;
}
