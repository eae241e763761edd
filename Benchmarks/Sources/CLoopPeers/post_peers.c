#define _GNU_SOURCE
#include "loop_peers.h"
#include "raw_libevent.h"

#include <glib.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

static double now_ns(void) {
    struct timespec spec;
    clock_gettime(CLOCK_MONOTONIC, &spec);
    return (double)spec.tv_sec * 1e9 + (double)spec.tv_nsec;
}

// MARK: in-loop post→run

struct chain { long remaining; sd_event_source *source; GMainContext *context; };

static gboolean glib_post_step(gpointer data);

/// g_idle_add on a context of our own (g_idle_add itself posts to the
/// global default context).
static void glib_post(struct chain *state) {
    GSource *source = g_idle_source_new();
    g_source_set_callback(source, glib_post_step, state, NULL);
    g_source_attach(source, state->context);
    g_source_unref(source);
}

static gboolean glib_post_step(gpointer data) {
    struct chain *state = data;
    if (--state->remaining > 0) glib_post(state);
    return G_SOURCE_REMOVE;
}

double peers_glib_inloop_post_ns(long posts) {
    struct chain state = {posts, NULL, g_main_context_new()};
    double start = now_ns();
    glib_post(&state);
    while (state.remaining > 0) g_main_context_iteration(state.context, FALSE);
    double elapsed = now_ns() - start;
    g_main_context_unref(state.context);
    return elapsed / (double)posts;
}

static int sd_post_step(sd_event_source *source, void *data) {
    struct chain *state = data;
    if (--state->remaining > 0) return sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
    return sd_event_exit(sd_event_source_get_event(source), 0);
}

double peers_sd_event_inloop_post_ns(long posts) {
    sd_event *event = NULL;
    struct chain state = {posts, NULL, NULL};
    if (sd_event_new(&event) < 0) return -1;
    if (sd_event_add_defer(event, &state.source, sd_post_step, &state) < 0) return -1;
    double start = now_ns();
    sd_event_source_set_enabled(state.source, SD_EVENT_ONESHOT);
    int result = sd_event_loop(event);
    double elapsed = now_ns() - start;
    sd_event_source_unref(state.source);
    sd_event_unref(event);
    return result < 0 ? -1 : elapsed / (double)posts;
}

// MARK: cross-thread wake of a sleeping loop

struct peer_wake {
    int kind;
    int loop_cpu;
    pthread_t thread;
    sem_t ready;
    int failed;
    atomic_int stopping;
    _Atomic double sent_at;
    _Atomic double latency;
    atomic_int delivered;
    // libuv
    uv_loop_t uv_loop;
    uv_async_t async;
    // GLib
    GMainContext *context;
    // sd-event
    sd_event *event;
    sd_event_source *io;
    int fd;
};

static void arrived(struct peer_wake *wake) {
    atomic_store(&wake->latency, now_ns() - atomic_load(&wake->sent_at));
    atomic_store(&wake->delivered, 1);
}

static void on_uv_async(uv_async_t *handle) {
    struct peer_wake *wake = handle->data;
    if (atomic_load(&wake->stopping)) {
        uv_close((uv_handle_t *)handle, NULL);
        return;
    }
    arrived(wake);
}

static gboolean on_glib_invoke(gpointer data) {
    arrived(data);
    return G_SOURCE_REMOVE;
}

static int on_sd_io(sd_event_source *source, int fd, uint32_t revents, void *data) {
    (void)revents;
    struct peer_wake *wake = data;
    uint64_t value;
    if (read(fd, &value, sizeof value) != sizeof value) return 0;
    if (value > 1) return sd_event_exit(sd_event_source_get_event(source), 0);  // the stop request
    arrived(wake);
    return 0;
}

static void *run_peer_wake(void *context) {
    struct peer_wake *wake = context;
    benchmark_pin_current_thread(wake->loop_cpu);
    switch (wake->kind) {
    case PEER_WAKE_LIBUV:
        wake->failed = uv_loop_init(&wake->uv_loop) != 0 || uv_async_init(&wake->uv_loop, &wake->async, on_uv_async) != 0;
        wake->async.data = wake;
        sem_post(&wake->ready);
        if (!wake->failed) {
            uv_run(&wake->uv_loop, UV_RUN_DEFAULT);
            uv_loop_close(&wake->uv_loop);
        }
        break;
    case PEER_WAKE_GLIB:
        wake->context = g_main_context_new();
        g_main_context_acquire(wake->context);
        sem_post(&wake->ready);
        while (!atomic_load(&wake->stopping)) g_main_context_iteration(wake->context, TRUE);
        g_main_context_release(wake->context);
        break;
    default:
        // sd-event objects are used on the thread that made them.
        wake->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        wake->failed = wake->fd < 0 || sd_event_new(&wake->event) < 0
            || sd_event_add_io(wake->event, &wake->io, wake->fd, EPOLLIN, on_sd_io, wake) < 0;
        sem_post(&wake->ready);
        if (!wake->failed) sd_event_loop(wake->event);
        sd_event_source_unref(wake->io);
        sd_event_unref(wake->event);
        break;
    }
    return NULL;
}

struct peer_wake *peer_wake_start(int kind, int loop_cpu) {
    struct peer_wake *wake = calloc(1, sizeof *wake);
    if (!wake) return NULL;
    wake->kind = kind;
    wake->loop_cpu = loop_cpu;
    wake->fd = -1;
    sem_init(&wake->ready, 0, 0);
    if (pthread_create(&wake->thread, NULL, run_peer_wake, wake) != 0) {
        free(wake);
        return NULL;
    }
    sem_wait(&wake->ready);
    if (wake->failed) {
        peer_wake_stop(wake);
        return NULL;
    }
    return wake;
}

double peer_wake_sample(struct peer_wake *wake, int gap_us) {
    usleep((useconds_t)gap_us);  // the loop is back in its wait
    atomic_store(&wake->delivered, 0);
    atomic_store(&wake->sent_at, now_ns());
    uint64_t one = 1;
    switch (wake->kind) {
    case PEER_WAKE_LIBUV:
        if (uv_async_send(&wake->async) != 0) return -1;
        break;
    case PEER_WAKE_GLIB:
        g_main_context_invoke(wake->context, on_glib_invoke, wake);
        break;
    default:
        if (write(wake->fd, &one, sizeof one) != sizeof one) return -1;
        break;
    }
    while (!atomic_load(&wake->delivered)) sched_yield();  // lets a loop thread on this CPU run
    return atomic_load(&wake->latency);
}

void peer_wake_stop(struct peer_wake *wake) {
    atomic_store(&wake->stopping, 1);
    uint64_t stop = 2;
    switch (wake->kind) {
    case PEER_WAKE_LIBUV:
        if (!wake->failed) uv_async_send(&wake->async);
        break;
    case PEER_WAKE_GLIB:
        g_main_context_wakeup(wake->context);
        break;
    default:
        if (!wake->failed && write(wake->fd, &stop, sizeof stop) != sizeof stop) abort();
        break;
    }
    pthread_join(wake->thread, NULL);
    if (wake->context) g_main_context_unref(wake->context);
    if (wake->fd >= 0) close(wake->fd);
    sem_destroy(&wake->ready);
    free(wake);
}
