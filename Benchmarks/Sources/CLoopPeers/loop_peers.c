#define _GNU_SOURCE
#include "loop_peers.h"

#include <glib.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

extern char **environ;

static double now_ns(void) {
    struct timespec spec;
    clock_gettime(CLOCK_MONOTONIC, &spec);
    return (double)spec.tv_sec * 1e9 + (double)spec.tv_nsec;
}

// MARK: idle passes

struct countdown { long remaining; };

static void uv_idle_tick(uv_idle_t *handle) {
    struct countdown *state = handle->data;
    if (--state->remaining == 0) uv_idle_stop(handle);
}

double peers_uv_idle_pass_ns(long passes) {
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) return -1;
    uv_idle_t idle;
    struct countdown state = {passes};
    uv_idle_init(&loop, &idle);
    idle.data = &state;
    uv_idle_start(&idle, uv_idle_tick);
    double start = now_ns();
    uv_run(&loop, UV_RUN_DEFAULT);
    double elapsed = now_ns() - start;
    uv_close((uv_handle_t *)&idle, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    return elapsed / (double)passes;
}

static gboolean glib_idle_tick(gpointer data) {
    struct countdown *state = data;
    return --state->remaining > 0 ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

double peers_glib_idle_pass_ns(long passes) {
    GMainContext *context = g_main_context_new();
    struct countdown state = {passes};
    GSource *source = g_idle_source_new();
    g_source_set_callback(source, glib_idle_tick, &state, NULL);
    g_source_attach(source, context);
    g_source_unref(source);
    double start = now_ns();
    while (state.remaining > 0) g_main_context_iteration(context, TRUE);
    double elapsed = now_ns() - start;
    g_main_context_unref(context);
    return elapsed / (double)passes;
}

static int sd_defer_tick(sd_event_source *source, void *data) {
    struct countdown *state = data;
    if (--state->remaining == 0) return sd_event_exit(sd_event_source_get_event(source), 0);
    return 0;
}

double peers_sd_event_defer_pass_ns(long passes) {
    sd_event *event = NULL;
    sd_event_source *source = NULL;
    struct countdown state = {passes};
    if (sd_event_new(&event) < 0) return -1;
    if (sd_event_add_defer(event, &source, sd_defer_tick, &state) < 0) return -1;
    sd_event_source_set_enabled(source, SD_EVENT_ON);
    double start = now_ns();
    sd_event_loop(event);
    double elapsed = now_ns() - start;
    sd_event_source_unref(source);
    sd_event_unref(event);
    return elapsed / (double)passes;
}

// MARK: child cycles

static pid_t spawn_true(void) {
    pid_t pid = 0;
    char *argv[] = {"/bin/true", NULL};
    return posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) == 0 ? pid : -1;
}

struct cycles { int remaining; };

static void uv_child_exited(uv_process_t *process, int64_t status, int signal) {
    (void)status; (void)signal;
    uv_close((uv_handle_t *)process, NULL);
}

double peers_uv_child_cycle_ns(int children) {
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) return -1;
    char *argv[] = {"/bin/true", NULL};
    uv_process_options_t options = {0};
    options.file = "/bin/true";
    options.args = argv;
    options.exit_cb = uv_child_exited;
    double start = now_ns();
    for (int index = 0; index < children; index++) {
        uv_process_t process;
        if (uv_spawn(&loop, &process, &options) != 0) return -1;
        uv_run(&loop, UV_RUN_DEFAULT);
    }
    double elapsed = now_ns() - start;
    uv_loop_close(&loop);
    return elapsed / (double)children;
}

static void glib_child_exited(GPid pid, gint status, gpointer data) {
    (void)status;
    g_spawn_close_pid(pid);
    *(gboolean *)data = TRUE;
}

double peers_glib_child_cycle_ns(int children) {
    GMainContext *context = g_main_context_new();
    double start = now_ns();
    for (int index = 0; index < children; index++) {
        pid_t pid = spawn_true();
        if (pid < 0) return -1;
        gboolean ended = FALSE;
        GSource *watch = g_child_watch_source_new(pid);
        g_source_set_callback(watch, G_SOURCE_FUNC(glib_child_exited), &ended, NULL);
        g_source_attach(watch, context);
        g_source_unref(watch);
        while (!ended) g_main_context_iteration(context, TRUE);
    }
    double elapsed = now_ns() - start;
    g_main_context_unref(context);
    return elapsed / (double)children;
}

static int sd_child_exited(sd_event_source *source, const siginfo_t *info, void *data) {
    (void)info; (void)data;
    return sd_event_exit(sd_event_source_get_event(source), 0);
}

double peers_sd_event_child_cycle_ns(int children) {
    // sd-event insists that the calling thread blocks SIGCHLD.
    sigset_t chld, previous;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &previous);
    double start = now_ns();
    for (int index = 0; index < children; index++) {
        pid_t pid = spawn_true();
        if (pid < 0) return -1;
        int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        sd_event *event = NULL;
        sd_event_source *source = NULL;
        if (pidfd < 0 || sd_event_new(&event) < 0) return -1;
        if (sd_event_add_child_pidfd(event, &source, pidfd, WEXITED, sd_child_exited, NULL) < 0) return -1;
        sd_event_source_set_child_pidfd_own(source, 1);
        sd_event_loop(event);
        sd_event_source_unref(source);
        sd_event_unref(event);
    }
    double elapsed = now_ns() - start;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    return elapsed / (double)children;
}

// MARK: GLib work, on GLib's loop or on MainLoop's bridge

struct chain { GMainContext *context; long remaining; void (*done)(void *); void *data; };

static gboolean chain_step(gpointer pointer) {
    struct chain *chain = pointer;
    if (--chain->remaining == 0) {
        chain->done(chain->data);
        g_free(chain);
        return G_SOURCE_REMOVE;
    }
    GSource *next = g_timeout_source_new(0);
    g_source_set_callback(next, chain_step, chain, NULL);
    g_source_attach(next, chain->context);
    g_source_unref(next);
    return G_SOURCE_REMOVE;
}

void peers_glib_timeout_chain(GMainContext *context, long count, void (*done)(void *), void *data) {
    struct chain *chain = g_new(struct chain, 1);
    *chain = (struct chain){context, count + 1, done, data};
    chain_step(chain);
}

struct trips {
    GMainContext *context;
    long count, completed;
    sem_t ran;
    void (*done)(void *);
    void *data;
    pthread_t thread;
};

static gboolean trip_ran(gpointer pointer) {
    struct trips *trips = pointer;
    if (++trips->completed == trips->count) trips->done(trips->data);
    sem_post(&trips->ran);
    return G_SOURCE_REMOVE;
}

static void *trips_thread(void *pointer) {
    struct trips *trips = pointer;
    for (long index = 0; index < trips->count; index++) {
        GSource *source = g_idle_source_new();
        g_source_set_priority(source, G_PRIORITY_DEFAULT);
        g_source_set_callback(source, trip_ran, trips, NULL);
        g_source_attach(source, trips->context);  // wakes the context's owner
        g_source_unref(source);
        sem_wait(&trips->ran);
    }
    return NULL;
}

void *peers_glib_cross_thread_start(GMainContext *context, long count, void (*done)(void *), void *data) {
    struct trips *trips = g_new0(struct trips, 1);
    trips->context = context;
    trips->count = count;
    trips->done = done;
    trips->data = data;
    sem_init(&trips->ran, 0, 0);
    if (pthread_create(&trips->thread, NULL, trips_thread, trips) != 0) { g_free(trips); return NULL; }
    return trips;
}

void peers_glib_cross_thread_join(void *handle) {
    struct trips *trips = handle;
    pthread_join(trips->thread, NULL);
    sem_destroy(&trips->ran);
    g_free(trips);
}

static void quit_main_loop(void *loop) { g_main_loop_quit(loop); }

/// Starts the cross-thread sender once the GMainLoop runs (and so owns the
/// context: a sender that found it unowned could run a source itself).
struct start_trips { GMainContext *context; GMainLoop *loop; long count; void *handle; };

static gboolean start_trips_now(gpointer pointer) {
    struct start_trips *start = pointer;
    start->handle = peers_glib_cross_thread_start(start->context, start->count, quit_main_loop, start->loop);
    return G_SOURCE_REMOVE;
}

double peers_glib_timeout_chain_ns(long count) {
    GMainContext *context = g_main_context_new();
    GMainLoop *loop = g_main_loop_new(context, FALSE);
    double start = now_ns();
    peers_glib_timeout_chain(context, count, quit_main_loop, loop);
    g_main_loop_run(loop);
    double elapsed = now_ns() - start;
    g_main_loop_unref(loop);
    g_main_context_unref(context);
    return elapsed / (double)count;
}

double peers_glib_cross_thread_ns(long count) {
    GMainContext *context = g_main_context_new();
    GMainLoop *loop = g_main_loop_new(context, FALSE);
    struct start_trips start = {context, loop, count, NULL};
    GSource *starter = g_idle_source_new();
    g_source_set_callback(starter, start_trips_now, &start, NULL);
    g_source_attach(starter, context);
    g_source_unref(starter);
    double begin = now_ns();
    g_main_loop_run(loop);
    double elapsed = now_ns() - begin;
    if (start.handle == NULL) return -1;
    peers_glib_cross_thread_join(start.handle);
    g_main_loop_unref(loop);
    g_main_context_unref(context);
    return elapsed / (double)count;
}
