#define _GNU_SOURCE  // pthread_setaffinity_np, CPU_SET
#include "raw_libevent.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <time.h>

struct self_activation {
    struct event *event;
    long remaining;
};

static void on_event(evutil_socket_t fd, short what, void *context) {
    (void)fd;
    (void)what;
    struct self_activation *state = context;
    if (--state->remaining > 0) event_active(state->event, 0, 0);
}

static double now_ns(void) {
    struct timespec spec;
    clock_gettime(CLOCK_MONOTONIC, &spec);
    return (double)spec.tv_sec * 1e9 + (double)spec.tv_nsec;
}

double raw_libevent_inloop_ns_per_event(long events) {
    struct event_base *base = event_base_new();
    struct self_activation state = {0};
    state.event = event_new(base, -1, 0, on_event, &state);
    state.remaining = events;
    double start = now_ns();
    event_active(state.event, 0, 0);
    event_base_loop(base, EVLOOP_NONBLOCK);
    double elapsed = now_ns() - start;
    event_free(state.event);
    event_base_free(base);
    return elapsed / (double)events;
}

void raw_libevent_enable_pthreads(void) { evthread_use_pthreads(); }

#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void on_timer(evutil_socket_t fd, short what, void *context) {
    (void)fd; (void)what; (void)context;
}

static double timer_add_del_ns(struct event_base *base, long pending, long operations);

double raw_libevent_timer_add_del_ns(long pending, long operations) {
    return timer_add_del_ns(event_base_new(), pending, operations);
}

double raw_libevent_precise_timer_add_del_ns(long pending, long operations) {
    struct event_config *config = event_config_new();
    event_config_set_flag(config, EVENT_BASE_FLAG_PRECISE_TIMER);
    struct event_base *base = event_base_new_with_config(config);
    event_config_free(config);
    return timer_add_del_ns(base, pending, operations);
}

static double timer_add_del_ns(struct event_base *base, long pending, long operations) {
    struct event **waiting = calloc((size_t)pending, sizeof(struct event *));
    unsigned seed = 12345;
    for (long i = 0; i < pending; i++) {
        waiting[i] = evtimer_new(base, on_timer, NULL);
        seed = seed * 1103515245u + 12345u;
        struct timeval tv = { 1 + (long)(seed % 1000), (long)(seed % 1000000) };
        evtimer_add(waiting[i], &tv);
    }
    struct event *timer = evtimer_new(base, on_timer, NULL);
    double start = now_ns();
    for (long i = 0; i < operations; i++) {
        struct timeval tv = { 1 + (i % 1000), (long)((i * 7919) % 1000000) };
        evtimer_add(timer, &tv);
        event_del(timer);
    }
    double elapsed = now_ns() - start;
    event_free(timer);
    for (long i = 0; i < pending; i++) event_free(waiting[i]);
    free(waiting);
    event_base_free(base);
    return elapsed / (double)operations;
}

struct fd_watch {
    int fd;
    long *dispatched;
};

static void on_readable(evutil_socket_t fd, short what, void *context) {
    (void)what;
    struct fd_watch *watch = context;
    uint64_t value;
    if (read(fd, &value, sizeof value) == sizeof value) (*watch->dispatched)++;
}

struct raw_fd_bench {
    struct event_base *base;
    struct event **events;
    struct fd_watch *watches;
    int fds;
    long next;
    long dispatched;
};

struct raw_fd_bench *raw_fd_bench_create(int fds) {
    struct raw_fd_bench *bench = calloc(1, sizeof *bench);
    if (!bench) return NULL;
    bench->base = event_base_new();
    bench->events = calloc((size_t)fds, sizeof(struct event *));
    bench->watches = calloc((size_t)fds, sizeof(struct fd_watch));
    bench->fds = fds;
    for (int i = 0; i < fds; i++) {
        bench->watches[i].fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        bench->watches[i].dispatched = &bench->dispatched;
        bench->events[i] = event_new(bench->base, bench->watches[i].fd, EV_READ | EV_PERSIST, on_readable,
                                     &bench->watches[i]);
        event_add(bench->events[i], NULL);
    }
    return bench;
}

double raw_fd_bench_run_ns(struct raw_fd_bench *bench, long rounds, int active) {
    uint64_t one = 1;
    long spacing = bench->fds / active;
    long before = bench->dispatched, expected = before;
    double start = now_ns();
    for (long round = 0; round < rounds; round++) {
        for (long k = 0; k < active; k++) {
            int fd = bench->watches[(bench->next + k * spacing) % bench->fds].fd;
            if (write(fd, &one, sizeof one) == sizeof one) expected++;
        }
        bench->next = (bench->next + 1) % bench->fds;
        while (bench->dispatched < expected) event_base_loop(bench->base, EVLOOP_ONCE);
    }
    double elapsed = now_ns() - start;
    return bench->dispatched - before == rounds * active ? elapsed : -1;
}

void raw_fd_bench_destroy(struct raw_fd_bench *bench) {
    for (int i = 0; i < bench->fds; i++) {
        event_free(bench->events[i]);
        close(bench->watches[i].fd);
    }
    free(bench->events);
    free(bench->watches);
    event_base_free(bench->base);
    free(bench);
}

double raw_libevent_fd_dispatch_ns(int fds, long rounds) {
    struct raw_fd_bench *bench = raw_fd_bench_create(fds);
    if (!bench) return -1;
    double elapsed = raw_fd_bench_run_ns(bench, rounds, 1);
    raw_fd_bench_destroy(bench);
    return elapsed < 0 ? -1 : elapsed / (double)rounds;
}

int benchmark_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

int benchmark_pin_current_thread(int cpu) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu < 0) {
        for (long index = 0; index < cpus; index++) CPU_SET((int)index, &set);
    } else {
        CPU_SET(cpus > 0 ? (int)(cpu % cpus) : 0, &set);
    }
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/// The floor of a cross-thread wake: a libevent loop thread asleep in
/// epoll_wait on an eventfd; another thread stamps the time and writes the
/// eventfd; the callback reads it and records how long the wake took.
struct raw_wake_floor {
    struct event_base *base;
    struct event *event;
    pthread_t thread;
    int fd;
    int loop_cpu;
    _Atomic double sent_at;
    _Atomic double latency;
    atomic_int delivered;
};

static void on_wake(evutil_socket_t fd, short what, void *context) {
    (void)what;
    struct raw_wake_floor *floor = context;
    uint64_t value;
    if (read(fd, &value, sizeof value) != sizeof value) return;
    if (value > 1) {  // the stop request (see raw_wake_floor_stop)
        event_base_loopbreak(floor->base);
        return;
    }
    atomic_store(&floor->latency, now_ns() - atomic_load(&floor->sent_at));
    atomic_store(&floor->delivered, 1);
}

static void *run_wake_floor(void *context) {
    struct raw_wake_floor *floor = context;
    benchmark_pin_current_thread(floor->loop_cpu);
    event_base_dispatch(floor->base);
    return NULL;
}

struct raw_wake_floor *raw_wake_floor_start(int loop_cpu) {
    struct raw_wake_floor *floor = calloc(1, sizeof *floor);
    if (!floor) return NULL;
    floor->base = event_base_new();
    floor->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    floor->loop_cpu = loop_cpu;
    floor->event = event_new(floor->base, floor->fd, EV_READ | EV_PERSIST, on_wake, floor);
    event_add(floor->event, NULL);
    if (pthread_create(&floor->thread, NULL, run_wake_floor, floor) != 0) {
        event_free(floor->event);
        close(floor->fd);
        event_base_free(floor->base);
        free(floor);
        return NULL;
    }
    return floor;
}

double raw_wake_floor_sample(struct raw_wake_floor *floor, int gap_us) {
    uint64_t one = 1;
    usleep((useconds_t)gap_us);  // the loop is back in epoll_wait
    atomic_store(&floor->delivered, 0);
    atomic_store(&floor->sent_at, now_ns());
    if (write(floor->fd, &one, sizeof one) != sizeof one) return -1;
    while (!atomic_load(&floor->delivered)) sched_yield();  // lets a loop thread on this CPU run
    return atomic_load(&floor->latency);
}

void raw_wake_floor_stop(struct raw_wake_floor *floor) {
    uint64_t stop = 2;
    if (write(floor->fd, &stop, sizeof stop) == sizeof stop) pthread_join(floor->thread, NULL);
    event_free(floor->event);
    close(floor->fd);
    event_base_free(floor->base);
    free(floor);
}

// MARK: a million timers, as loop_peers.h's peers_*_million_timers

static double thread_cpu_ns(void) {
    struct timespec spec;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec);
    return (double)spec.tv_sec * 1e9 + (double)spec.tv_nsec;
}

static void on_million_timer(evutil_socket_t fd, short what, void *context) {
    (void)fd; (void)what;
    (*(long *)context)++;
}

int raw_libevent_million_timers(long count, long per_ms, double phases[3]) {
    struct event_base *base = event_base_new();
    struct event **timers = malloc((size_t)count * sizeof(struct event *));
    if (!base || !timers) return -1;
    long fired = 0;
    double start = thread_cpu_ns();
    for (long i = 0; i < count; i++) {
        long ms = 1 + i / per_ms;
        struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
        timers[i] = evtimer_new(base, on_million_timer, &fired);
        evtimer_add(timers[i], &tv);
    }
    double scheduled = thread_cpu_ns();
    event_base_dispatch(base);
    double dispatched = thread_cpu_ns();
    for (long i = 0; i < count; i++) event_free(timers[i]);
    free(timers);
    event_base_free(base);
    double freed = thread_cpu_ns();
    const double marks[4] = {start, scheduled, dispatched, freed};
    for (int phase = 0; phase < 3; phase++) phases[phase] = (marks[phase + 1] - marks[phase]) / (double)count;
    return fired == count ? 0 : -1;
}
