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
