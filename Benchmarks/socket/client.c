// A control-socket load client: C, so the client is never the bottleneck.
//   client PATH CLIENTS DEPTH SECONDS [REQUEST [REQUEST2]]
// With two requests the client alternates them (events that each change
// something: two orientations).
// Each of CLIENTS connections keeps DEPTH requests in flight (sends DEPTH
// lines, then one more per reply read) for SECONDS, and records each
// request's round trip. Prints requests per second and the p50 / p99
// round trip in microseconds.
// Several connections are driven by one thread (epoll), so on this 2-vCPU
// machine the client is one thread beside the server's: with a thread per
// connection (CLIENT_THREADS=1 in the environment) nine threads share two
// CPUs, and a reply waits for its client thread to be scheduled, which is
// the client's latency, not the server's (the faster the server, the more
// client threads are runnable at once and the longer that wait).
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *path, *requests[2];
static int depth;
static double seconds;

typedef struct { long count; double *latencies; long capacity; } result;

// One connection: its socket, the send times of its requests in flight (a
// ring) and which request it sends next.
typedef struct { int fd, next, head, tail; double *sent; } connection;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void send_request(connection *c) {
    c->sent[c->tail] = now(); c->tail = (c->tail + 1) % depth;
    const char *q = requests[c->next]; c->next ^= requests[1] != NULL;
    if (write(c->fd, q, strlen(q)) != (ssize_t)strlen(q)) exit(2);
}

// Connects and sends the first DEPTH requests.
static void open_connection(connection *c) {
    c->fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {0};
    a.sun_family = AF_UNIX;
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); exit(1); }
    c->next = c->head = c->tail = 0;
    c->sent = calloc(depth, sizeof(double));
    for (int i = 0; i < depth; i++) send_request(c);
}

// Reads what the connection has; each reply line records its round trip
// and sends one more request.
static void take_replies(connection *c, result *r) {
    char buffer[65536];
    ssize_t n = read(c->fd, buffer, sizeof buffer);
    if (n <= 0) { perror("read"); exit(3); }
    for (ssize_t i = 0; i < n; i++) {
        if (buffer[i] != '\n') continue;
        double t = now();
        if (r->count == r->capacity) { r->capacity *= 2; r->latencies = realloc(r->latencies, r->capacity * sizeof(double)); }
        r->latencies[r->count++] = t - c->sent[c->head];
        c->head = (c->head + 1) % depth;
        send_request(c);
    }
}

// A thread per connection (CLIENT_THREADS=1, and any single connection).
static void *run(void *arg) {
    result *r = arg;
    connection c;
    open_connection(&c);
    double end = now() + seconds;
    while (now() < end) take_replies(&c, r);
    close(c.fd);
    return NULL;
}

// All connections on one thread: each reply read as epoll reports it.
static void run_multiplexed(int clients, result *r) {
    int poller = epoll_create1(0);
    connection *all = calloc(clients, sizeof(connection));
    for (int i = 0; i < clients; i++) {
        open_connection(&all[i]);
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = &all[i]};
        if (epoll_ctl(poller, EPOLL_CTL_ADD, all[i].fd, &e) != 0) { perror("epoll_ctl"); exit(4); }
    }
    double end = now() + seconds;
    struct epoll_event ready[256];
    while (now() < end) {
        int n = epoll_wait(poller, ready, 256, 100);
        for (int i = 0; i < n; i++) take_replies(ready[i].data.ptr, r);
    }
    for (int i = 0; i < clients; i++) close(all[i].fd);
    close(poller);
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
    if (clients < 1 || clients > 256) { fprintf(stderr, "client: 1 to 256 clients\n"); return 64; }
    pthread_t threads[256];
    result results[256];
    const char *threaded = getenv("CLIENT_THREADS");
    int multiplexed = clients > 1 && !(threaded && strcmp(threaded, "1") == 0);
    int runs = multiplexed ? 1 : clients;
    for (int i = 0; i < runs; i++) results[i] = (result){0, malloc((1 << 20) * sizeof(double)), 1 << 20};
    if (multiplexed) {
        run_multiplexed(clients, &results[0]);
    } else {
        for (int i = 0; i < clients; i++) pthread_create(&threads[i], NULL, run, &results[i]);
        for (int i = 0; i < clients; i++) pthread_join(threads[i], NULL);
    }
    long total = 0;
    for (int i = 0; i < runs; i++) total += results[i].count;
    double *all = malloc(total * sizeof(double));
    long k = 0;
    for (int i = 0; i < runs; i++) { memcpy(all + k, results[i].latencies, results[i].count * sizeof(double)); k += results[i].count; }
    qsort(all, total, sizeof(double), compare);
    printf("%d x %d: %.0f req/s, p50 %.1f us, p99 %.1f us\n", clients, depth, total / seconds,
           all[total / 2] * 1e6, all[(long)(total * 0.99)] * 1e6);
    return 0;
}
