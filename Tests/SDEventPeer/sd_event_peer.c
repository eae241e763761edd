#include "sd_event_peer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>
#include <time.h>

struct log { char *text; size_t capacity; };

static void append(struct log *log, const char *entry) {
    size_t used = strlen(log->text);
    if (used && used + 1 < log->capacity) log->text[used++] = ',', log->text[used] = 0;
    strncat(log->text, entry, log->capacity - used - 1);
}

// Each source carries its name as its description.
static int record(sd_event_source *source, void *userdata) {
    const char *name = NULL;
    sd_event_source_get_description(source, &name);
    append(userdata, name ? name : "?");
    return 0;
}

// Names a new source, sets its priority, and hands it to its event loop
// (floating: the loop frees it).
static int keep_named(sd_event_source *source, const char *name, int64_t priority) {
    sd_event_source_set_description(source, name);
    sd_event_source_set_priority(source, priority);
    sd_event_source_set_floating(source, 1);
    sd_event_source_unref(source);
    return 0;
}

static int add_defer(sd_event *event, const char *name, int64_t priority, sd_event_handler_t handler, struct log *log) {
    sd_event_source *source = NULL;
    int result = sd_event_add_defer(event, &source, handler, log);
    if (result < 0) return result;
    sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
    return keep_named(source, name, priority);
}

static int idle_one(sd_event_source *source, void *userdata) {
    record(source, userdata);
    return add_defer(sd_event_source_get_event(source), "posted by idle 1", SD_EVENT_PRIORITY_NORMAL, record, userdata);
}

static int idle_two(sd_event_source *source, void *userdata) {
    record(source, userdata);
    return sd_event_exit(sd_event_source_get_event(source), 0);
}

int sd_event_peer_idle_order(char *text, size_t capacity) {
    struct log log = {text, capacity};
    text[0] = 0;
    sd_event *event = NULL;
    int result = sd_event_new(&event);
    if (result < 0) return result;
    // Two idle sources of one priority have no order in sd-event's queue:
    // the second is one step less urgent, which is the order they were added.
    if ((result = add_defer(event, "idle 1", SD_EVENT_PRIORITY_IDLE, idle_one, &log)) >= 0 &&
        (result = add_defer(event, "idle 2", SD_EVENT_PRIORITY_IDLE + 1, idle_two, &log)) >= 0 &&
        (result = add_defer(event, "app", SD_EVENT_PRIORITY_NORMAL, record, &log)) >= 0 &&
        (result = add_defer(event, "system", SD_EVENT_PRIORITY_IMPORTANT, record, &log)) >= 0)
        result = sd_event_loop(event);
    sd_event_unref(event);
    return result < 0 ? result : 0;
}

static int add_exit(sd_event *event, const char *name, int64_t priority, struct log *log) {
    sd_event_source *source = NULL;
    int result = sd_event_add_exit(event, &source, record, log);
    return result < 0 ? result : keep_named(source, name, priority);
}

static int request_exit(sd_event_source *source, void *userdata) {
    (void)userdata;
    return sd_event_exit(sd_event_source_get_event(source), 0);
}

int sd_event_peer_exit_order(char *text, size_t capacity) {
    struct log log = {text, capacity};
    text[0] = 0;
    sd_event *event = NULL;
    int result = sd_event_new(&event);
    if (result < 0) return result;
    if ((result = add_exit(event, "app", SD_EVENT_PRIORITY_NORMAL, &log)) >= 0 &&
        (result = add_exit(event, "system", SD_EVENT_PRIORITY_IMPORTANT, &log)) >= 0 &&
        (result = add_exit(event, "input", SD_EVENT_PRIORITY_IMPORTANT / 2, &log)) >= 0 &&
        (result = add_defer(event, "stop", SD_EVENT_PRIORITY_NORMAL, request_exit, &log)) >= 0)
        result = sd_event_loop(event);
    sd_event_unref(event);
    return result < 0 ? result : 0;
}

struct rate_run { uint64_t *times; unsigned count; unsigned wanted; };

static int readable(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
    (void)fd; (void)revents;
    struct rate_run *run = userdata;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    run->times[run->count++] = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
    if (run->count == run->wanted) return sd_event_exit(sd_event_source_get_event(source), 0);
    return 0;
}

int sd_event_peer_rate_limited_io(int fd, uint64_t interval_usec, unsigned burst, unsigned dispatches, uint64_t *times) {
    struct rate_run run = {times, 0, dispatches};
    sd_event *event = NULL;
    sd_event_source *source = NULL;
    int result = sd_event_new(&event);
    if (result < 0) return result;
    if ((result = sd_event_add_io(event, &source, fd, EPOLLIN, readable, &run)) >= 0 &&
        (result = sd_event_source_set_ratelimit(source, interval_usec, burst)) >= 0)
        result = sd_event_loop(event);
    sd_event_source_unref(source);
    sd_event_unref(event);
    return result < 0 ? result : 0;
}

struct child_run { int code; int status; };

static int child_ended(sd_event_source *source, const siginfo_t *info, void *userdata) {
    struct child_run *run = userdata;
    run->code = info->si_code;
    run->status = info->si_status;
    return sd_event_exit(sd_event_source_get_event(source), 0);
}

int sd_event_peer_child(int pidfd, int *code, int *status) {
    struct child_run run = {0, 0};
    sd_event *event = NULL;
    sd_event_source *source = NULL;
    // sd-event insists that the calling thread blocks SIGCHLD; with a
    // pidfd it waits on the descriptor, not on the signal.
    sigset_t chld, previous;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &previous);
    int result = sd_event_new(&event);
    if (result >= 0 && (result = sd_event_add_child_pidfd(event, &source, pidfd, WEXITED, child_ended, &run)) >= 0)
        result = sd_event_loop(event);
    sd_event_source_unref(source);
    sd_event_unref(event);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    *code = run.code;
    *status = run.status;
    return result < 0 ? result : 0;
}

struct driver { void (*dispatch)(void *); void *context; };

static int drive_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
    struct driver *driver = userdata;
    driver->dispatch(driver->context);
    return 0;
}

static int drive_time(sd_event_source *source, uint64_t usec, void *userdata) {
    struct driver *driver = userdata;
    driver->dispatch(driver->context);
    return 0;
}

int sd_event_peer_drive(int fd, int64_t (*deadline_usec)(void *), void (*dispatch)(void *),
                        int (*done)(void *), void *context) {
    struct driver driver = { dispatch, context };
    sd_event *event = NULL;
    sd_event_source *io = NULL, *timer = NULL;
    int r = sd_event_new(&event);
    if (r >= 0) r = sd_event_add_io(event, &io, fd, EPOLLIN, drive_io, &driver);
    if (r >= 0) r = sd_event_add_time_relative(event, &timer, CLOCK_MONOTONIC, 0, 0, drive_time, &driver);
    while (r >= 0 && !done(context)) {
        int64_t deadline = deadline_usec(context);
        if (deadline < 0) {
            r = sd_event_source_set_enabled(timer, SD_EVENT_OFF);
        } else {
            r = sd_event_source_set_time_relative(timer, (uint64_t)deadline);
            if (r >= 0) r = sd_event_source_set_enabled(timer, SD_EVENT_ONESHOT);
        }
        if (r >= 0) r = sd_event_run(event, UINT64_MAX);
    }
    sd_event_source_unref(io);
    sd_event_source_unref(timer);
    sd_event_unref(event);
    return r < 0 ? r : 0;
}
