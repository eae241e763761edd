#define _GNU_SOURCE
#include "loop_peers.h"

#include <glib.h>
#include <glib-unix.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

// Timer schedule+cancel and fd readiness dispatch on libuv, GLib and
// sd-event, in the shape raw libevent's rows use (raw_libevent.c): the
// pending timers are due 1 to 1,000 s out, spread by the same generator, and
// the measured timer is armed and disarmed again, each loop with its
// cheapest idiom for re-arming one timer; the fd rows watch `fds` eventfds,
// write the next one and run one loop iteration per dispatch.

static double now_ns(void) {
    struct timespec spec;
    clock_gettime(CLOCK_MONOTONIC, &spec);
    return (double)spec.tv_sec * 1e9 + (double)spec.tv_nsec;
}

/// Milliseconds of the i-th pending timer (1 to 1,000 s, as raw libevent's).
static uint64_t pending_ms(unsigned *seed) {
    *seed = *seed * 1103515245u + 12345u;
    return 1000u * (1u + *seed % 1000u) + (*seed % 1000000u) / 1000u;
}

/// Milliseconds of the measured timer's i-th arming.
static uint64_t measured_ms(long i) { return 1000u * (uint64_t)(1 + i % 1000) + (uint64_t)((i * 7919) % 1000000) / 1000u; }

// MARK: libuv: uv_timer_start / uv_timer_stop on one handle

static void uv_never(uv_timer_t *timer) { (void)timer; }

double peers_uv_timer_schedule_cancel_ns(long pending, long operations) {
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) return -1;
    uv_timer_t *waiting = calloc((size_t)pending + 1, sizeof(uv_timer_t));
    if (!waiting) return -1;
    unsigned seed = 12345;
    for (long i = 0; i < pending; i++) {
        uv_timer_init(&loop, &waiting[i]);
        uv_timer_start(&waiting[i], uv_never, pending_ms(&seed), 0);
    }
    uv_timer_t *timer = &waiting[pending];
    uv_timer_init(&loop, timer);
    double start = now_ns();
    for (long i = 0; i < operations; i++) {
        uv_timer_start(timer, uv_never, measured_ms(i), 0);
        uv_timer_stop(timer);
    }
    double elapsed = now_ns() - start;
    for (long i = 0; i <= pending; i++) uv_close((uv_handle_t *)&waiting[i], NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    free(waiting);
    return elapsed / (double)operations;
}

// MARK: GLib: a timeout source cannot be re-armed. Its two idioms are a new
// timeout source attached and destroyed (g_timeout_add + g_source_remove),
// and g_source_set_ready_time on one source, which signals the context's
// wake-up descriptor each time; the row takes the faster of the two.

static gboolean glib_dispatch_never(GSource *source, GSourceFunc callback, gpointer data) {
    (void)source; (void)callback; (void)data;
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs glib_ready_time_funcs = { NULL, NULL, glib_dispatch_never, NULL, NULL, NULL };

static gboolean glib_timeout_never(gpointer data) {
    (void)data;
    return G_SOURCE_CONTINUE;
}

/// Attaches `pending` sources due 1 to 1,000 s out to `context`.
static GSource **glib_pending_sources(GMainContext *context, long pending, gint64 base) {
    GSource **waiting = calloc((size_t)pending, sizeof(GSource *));
    if (!waiting) return NULL;
    unsigned seed = 12345;
    for (long i = 0; i < pending; i++) {
        waiting[i] = g_source_new(&glib_ready_time_funcs, sizeof(GSource));
        g_source_set_ready_time(waiting[i], base + (gint64)pending_ms(&seed) * 1000);
        g_source_attach(waiting[i], context);
    }
    return waiting;
}

static void glib_destroy_sources(GSource **sources, long count) {
    for (long i = 0; i < count; i++) {
        g_source_destroy(sources[i]);
        g_source_unref(sources[i]);
    }
    free(sources);
}

double peers_glib_timeout_add_remove_ns(long pending, long operations) {
    GMainContext *context = g_main_context_new();
    g_main_context_acquire(context);
    GSource **waiting = glib_pending_sources(context, pending, g_get_monotonic_time());
    if (!waiting) return -1;
    double start = now_ns();
    for (long i = 0; i < operations; i++) {
        GSource *timer = g_timeout_source_new((guint)measured_ms(i));
        g_source_set_callback(timer, glib_timeout_never, NULL, NULL);
        g_source_attach(timer, context);
        g_source_destroy(timer);
        g_source_unref(timer);
    }
    double elapsed = now_ns() - start;
    glib_destroy_sources(waiting, pending);
    g_main_context_release(context);
    g_main_context_unref(context);
    return elapsed / (double)operations;
}

double peers_glib_ready_time_ns(long pending, long operations) {
    GMainContext *context = g_main_context_new();
    g_main_context_acquire(context);
    gint64 base = g_get_monotonic_time();
    GSource **waiting = glib_pending_sources(context, pending, base);
    if (!waiting) return -1;
    GSource *timer = g_source_new(&glib_ready_time_funcs, sizeof(GSource));
    g_source_attach(timer, context);
    double start = now_ns();
    for (long i = 0; i < operations; i++) {
        g_source_set_ready_time(timer, base + (gint64)measured_ms(i) * 1000);
        g_source_set_ready_time(timer, -1);
    }
    double elapsed = now_ns() - start;
    g_source_destroy(timer);
    g_source_unref(timer);
    glib_destroy_sources(waiting, pending);
    g_main_context_release(context);
    g_main_context_unref(context);
    return elapsed / (double)operations;
}

double peers_glib_timer_schedule_cancel_ns(long pending, long operations) {
    double added = peers_glib_timeout_add_remove_ns(pending, operations);
    double ready = peers_glib_ready_time_ns(pending, operations);
    return added < ready ? added : ready;
}

// MARK: sd-event: sd_event_source_set_time + set_enabled on one source

static int sd_never(sd_event_source *source, uint64_t usec, void *data) {
    (void)source; (void)usec; (void)data;
    return 0;
}

double peers_sd_event_timer_schedule_cancel_ns(long pending, long operations) {
    sd_event *event = NULL;
    if (sd_event_new(&event) < 0) return -1;
    sd_event_source **waiting = calloc((size_t)pending, sizeof(sd_event_source *));
    if (!waiting) return -1;
    uint64_t base = 0;
    sd_event_now(event, CLOCK_MONOTONIC, &base);
    unsigned seed = 12345;
    for (long i = 0; i < pending; i++) {
        if (sd_event_add_time(event, &waiting[i], CLOCK_MONOTONIC, base + pending_ms(&seed) * 1000, 1, sd_never, NULL) < 0)
            return -1;
    }
    sd_event_source *timer = NULL;
    if (sd_event_add_time(event, &timer, CLOCK_MONOTONIC, base + 1000000, 1, sd_never, NULL) < 0) return -1;
    sd_event_source_set_enabled(timer, SD_EVENT_OFF);
    double start = now_ns();
    for (long i = 0; i < operations; i++) {
        sd_event_source_set_time(timer, base + measured_ms(i) * 1000);
        sd_event_source_set_enabled(timer, SD_EVENT_ONESHOT);
        sd_event_source_set_enabled(timer, SD_EVENT_OFF);
    }
    double elapsed = now_ns() - start;
    sd_event_source_unref(timer);
    for (long i = 0; i < pending; i++) sd_event_source_unref(waiting[i]);
    free(waiting);
    sd_event_unref(event);
    return elapsed / (double)operations;
}

// MARK: fd readiness dispatch, 1 ready of `fds`

struct peer_fd_counter { long dispatched; };

static void read_eventfd(int fd, struct peer_fd_counter *counter) {
    uint64_t value;
    if (read(fd, &value, sizeof value) == sizeof value) counter->dispatched++;
}

static int *open_eventfds(int fds) {
    int *descriptors = calloc((size_t)fds, sizeof(int));
    if (!descriptors) return NULL;
    for (int i = 0; i < fds; i++) {
        descriptors[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (descriptors[i] < 0) {
            for (int j = 0; j < i; j++) close(descriptors[j]);
            free(descriptors);
            return NULL;
        }
    }
    return descriptors;
}

static void close_eventfds(int *descriptors, int fds) {
    for (int i = 0; i < fds; i++) close(descriptors[i]);
    free(descriptors);
}

/// `rounds` rounds, each writing `active` eventfds spread evenly over the
/// `fds` (libevent's bench.c: the next round starts one further) and
/// running iterations until all of them were dispatched (sd-event
/// dispatches one source per iteration, the others all that are ready);
/// `elapsed` gets the nanoseconds, or -1 when a readiness was lost. One
/// round runs first, untimed: libuv registers its descriptors with epoll in
/// its first iteration, the others when they are added.
#define RUN_FD_ROUNDS(descriptors, fds, active, rounds, counter, iterate)          \
    do {                                                                           \
        uint64_t one = 1;                                                          \
        long spacing = (fds) / (active);                                           \
        if (write((descriptors)[0], &one, sizeof one) == sizeof one) { iterate; } \
        long before = (counter).dispatched, expected = before;                     \
        double start = now_ns();                                                   \
        for (long round = 0; round < (rounds); round++) {                          \
            for (long k = 0; k < (active); k++) {                                  \
                int fd = (descriptors)[(round + k * spacing) % (fds)];             \
                if (write(fd, &one, sizeof one) == sizeof one) expected++;         \
            }                                                                      \
            while ((counter).dispatched < expected) { iterate; }                   \
        }                                                                          \
        elapsed = now_ns() - start;                                                \
        if ((counter).dispatched - before != (rounds) * (active)) elapsed = -1;    \
    } while (0)

struct uv_fd_watch { uv_poll_t poll; int fd; struct peer_fd_counter *counter; };

static void uv_readable(uv_poll_t *poll, int status, int events) {
    (void)status; (void)events;
    struct uv_fd_watch *watch = (struct uv_fd_watch *)poll;
    read_eventfd(watch->fd, watch->counter);
}

double peers_uv_fd_dispatch_ns(int fds, int active, long rounds) {
    int *descriptors = open_eventfds(fds);
    if (!descriptors) return -1;
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) return -1;
    struct peer_fd_counter counter = {0};
    struct uv_fd_watch *watches = calloc((size_t)fds, sizeof *watches);
    for (int i = 0; i < fds; i++) {
        watches[i].fd = descriptors[i];
        watches[i].counter = &counter;
        uv_poll_init(&loop, &watches[i].poll, descriptors[i]);
        uv_poll_start(&watches[i].poll, UV_READABLE, uv_readable);
    }
    double elapsed;
    RUN_FD_ROUNDS(descriptors, fds, active, rounds, counter, uv_run(&loop, UV_RUN_ONCE));
    for (int i = 0; i < fds; i++) uv_close((uv_handle_t *)&watches[i].poll, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    free(watches);
    close_eventfds(descriptors, fds);
    return elapsed < 0 ? -1 : elapsed / (double)(rounds * active);
}

struct glib_fd_watch { int fd; struct peer_fd_counter *counter; };

static gboolean glib_readable(gint fd, GIOCondition condition, gpointer data) {
    (void)condition;
    struct glib_fd_watch *watch = data;
    read_eventfd(fd, watch->counter);
    return G_SOURCE_CONTINUE;
}

double peers_glib_fd_dispatch_ns(int fds, int active, long rounds) {
    int *descriptors = open_eventfds(fds);
    if (!descriptors) return -1;
    GMainContext *context = g_main_context_new();
    struct peer_fd_counter counter = {0};
    struct glib_fd_watch *watches = calloc((size_t)fds, sizeof *watches);
    GSource **sources = calloc((size_t)fds, sizeof(GSource *));
    for (int i = 0; i < fds; i++) {
        watches[i].fd = descriptors[i];
        watches[i].counter = &counter;
        sources[i] = g_unix_fd_source_new(descriptors[i], G_IO_IN);
        g_source_set_callback(sources[i], (GSourceFunc)(void (*)(void))glib_readable, &watches[i], NULL);
        g_source_attach(sources[i], context);
    }
    double elapsed;
    RUN_FD_ROUNDS(descriptors, fds, active, rounds, counter, g_main_context_iteration(context, TRUE));
    for (int i = 0; i < fds; i++) {
        g_source_destroy(sources[i]);
        g_source_unref(sources[i]);
    }
    free(sources);
    free(watches);
    g_main_context_unref(context);
    close_eventfds(descriptors, fds);
    return elapsed < 0 ? -1 : elapsed / (double)(rounds * active);
}

static int sd_readable(sd_event_source *source, int fd, uint32_t revents, void *data) {
    (void)source; (void)revents;
    read_eventfd(fd, data);
    return 0;
}

double peers_sd_event_fd_dispatch_ns(int fds, int active, long rounds) {
    int *descriptors = open_eventfds(fds);
    if (!descriptors) return -1;
    sd_event *event = NULL;
    if (sd_event_new(&event) < 0) return -1;
    struct peer_fd_counter counter = {0};
    sd_event_source **sources = calloc((size_t)fds, sizeof(sd_event_source *));
    for (int i = 0; i < fds; i++) {
        if (sd_event_add_io(event, &sources[i], descriptors[i], EPOLLIN, sd_readable, &counter) < 0) return -1;
    }
    double elapsed;
    RUN_FD_ROUNDS(descriptors, fds, active, rounds, counter, sd_event_run(event, UINT64_MAX));
    for (int i = 0; i < fds; i++) sd_event_source_unref(sources[i]);
    free(sources);
    sd_event_unref(event);
    close_eventfds(descriptors, fds);
    return elapsed < 0 ? -1 : elapsed / (double)(rounds * active);
}

// MARK: a million timers (libuv's million_timers): schedule, dispatch and
// free `count` one-shot timers, each `per_ms` due 1 ms after the `per_ms`
// before; each phase in the thread's CPU time, so the dispatch phase counts
// the loop's work, not its waits for the clock.

static double cpu_ns(void) {
    struct timespec spec;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec);
    return (double)spec.tv_sec * 1e9 + (double)spec.tv_nsec;
}

static uint64_t million_timeout_ms(long i, long per_ms) { return 1 + (uint64_t)(i / per_ms); }

struct fired_count { long fired; };

static void uv_fired(uv_timer_t *timer) { ((struct fired_count *)timer->loop->data)->fired++; }

int peers_uv_million_timers(long count, long per_ms, double phases[3]) {
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) return -1;
    struct fired_count fired = {0};
    loop.data = &fired;
    uv_timer_t *timers = malloc((size_t)count * sizeof(uv_timer_t));
    if (!timers) return -1;
    double start = cpu_ns();
    for (long i = 0; i < count; i++) {
        uv_timer_init(&loop, &timers[i]);
        uv_timer_start(&timers[i], uv_fired, million_timeout_ms(i, per_ms), 0);
    }
    double scheduled = cpu_ns();
    uv_run(&loop, UV_RUN_DEFAULT);
    double dispatched = cpu_ns();
    for (long i = 0; i < count; i++) uv_close((uv_handle_t *)&timers[i], NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    free(timers);
    double freed = cpu_ns();
    const double marks[4] = {start, scheduled, dispatched, freed};
    for (int phase = 0; phase < 3; phase++) phases[phase] = (marks[phase + 1] - marks[phase]) / (double)count;
    return fired.fired == count ? 0 : -1;
}

struct glib_fired { long fired; long count; GMainLoop *loop; };

static gboolean glib_timer_fired(gpointer data) {
    struct glib_fired *state = data;
    if (++state->fired == state->count) g_main_loop_quit(state->loop);
    return G_SOURCE_REMOVE;
}

int peers_glib_million_timers(long count, long per_ms, double phases[3]) {
    GMainContext *context = g_main_context_new();
    struct glib_fired state = {0, count, g_main_loop_new(context, FALSE)};
    GSource **timers = malloc((size_t)count * sizeof(GSource *));
    if (!timers) return -1;
    double start = cpu_ns();
    for (long i = 0; i < count; i++) {
        timers[i] = g_timeout_source_new((guint)million_timeout_ms(i, per_ms));
        g_source_set_callback(timers[i], glib_timer_fired, &state, NULL);
        g_source_attach(timers[i], context);
    }
    double scheduled = cpu_ns();
    g_main_loop_run(state.loop);
    double dispatched = cpu_ns();
    for (long i = 0; i < count; i++) g_source_unref(timers[i]);
    free(timers);
    g_main_loop_unref(state.loop);
    g_main_context_unref(context);
    double freed = cpu_ns();
    const double marks[4] = {start, scheduled, dispatched, freed};
    for (int phase = 0; phase < 3; phase++) phases[phase] = (marks[phase + 1] - marks[phase]) / (double)count;
    return state.fired == count ? 0 : -1;
}

static int sd_fired(sd_event_source *source, uint64_t usec, void *data) {
    (void)usec;
    struct fired_count *fired = data;
    fired->fired++;
    (void)source;
    return 0;
}

int peers_sd_event_million_timers(long count, long per_ms, double phases[3]) {
    sd_event *event = NULL;
    if (sd_event_new(&event) < 0) return -1;
    struct fired_count fired = {0};
    sd_event_source **timers = malloc((size_t)count * sizeof(sd_event_source *));
    if (!timers) return -1;
    uint64_t base = 0;
    sd_event_now(event, CLOCK_MONOTONIC, &base);
    double start = cpu_ns();
    for (long i = 0; i < count; i++) {
        if (sd_event_add_time(event, &timers[i], CLOCK_MONOTONIC, base + million_timeout_ms(i, per_ms) * 1000, 1,
                              sd_fired, &fired) < 0)
            return -1;
    }
    double scheduled = cpu_ns();
    while (fired.fired < count) {
        if (sd_event_run(event, UINT64_MAX) < 0) return -1;
    }
    double dispatched = cpu_ns();
    for (long i = 0; i < count; i++) sd_event_source_unref(timers[i]);
    free(timers);
    sd_event_unref(event);
    double freed = cpu_ns();
    const double marks[4] = {start, scheduled, dispatched, freed};
    for (int phase = 0; phase < 3; phase++) phases[phase] = (marks[phase + 1] - marks[phase]) / (double)count;
    return 0;
}
