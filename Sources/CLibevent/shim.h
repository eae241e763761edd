#ifndef CLIBEVENT_SHIM_H
#define CLIBEVENT_SHIM_H

// The parts of libevent 2.1 (Debian's libevent-dev) that MainLoop uses.
//
// libevent spells several of its entry points as function-like macros
// (evtimer_new, evsignal_new, ...) and types its flags as int while
// event_new takes a short. Swift's importer drops function-like macros and
// keeps the int/short mismatch, so each wrapper below exists only to give
// Swift a real, correctly typed function. They add no behaviour.

// System headers first, before any libevent header: libevent's
// event-config.h defines _GNU_SOURCE, and a system header first seen after
// that gets GNU-flavoured declarations (e.g. fd_set's `fds_bits`) that clash
// with the same header in Swift's Glibc and Dispatch modules.
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

/// `evtimer_new` is a macro: a timer is an event with no fd and no flags.
static inline struct event *CLibevent_evtimer_new(struct event_base *base,
                                                  event_callback_fn callback,
                                                  void *context) {
    return event_new(base, -1, 0, callback, context);
}

/// `evsignal_new` is a macro; signals are always persistent here, which is
/// what a long-running service wants (one registration, every delivery).
static inline struct event *CLibevent_evsignal_new(struct event_base *base,
                                                   int signal_number,
                                                   event_callback_fn callback,
                                                   void *context) {
    return event_new(base, signal_number, EV_SIGNAL | EV_PERSIST, callback, context);
}

/// A user-triggered event (no fd): activated with event_active. Used for the
/// drain events of the loop's work queues.
static inline struct event *CLibevent_user_event_new(struct event_base *base,
                                                     event_callback_fn callback,
                                                     void *context) {
    return event_new(base, -1, 0, callback, context);
}

/// EV_READ/EV_WRITE/EV_PERSIST are ints in the header but event_new takes a
/// short; this wrapper takes the Swift-friendly readiness bits and adds
/// EV_PERSIST so an fd source stays registered until removed.
static inline struct event *CLibevent_fd_event_new(struct event_base *base,
                                                   int fd, int want_read,
                                                   int want_write,
                                                   event_callback_fn callback,
                                                   void *context) {
    short what = EV_PERSIST;
    if (want_read) what |= EV_READ;
    if (want_write) what |= EV_WRITE;
    return event_new(base, fd, what, callback, context);
}

/// Readiness bits as plain ints, for the callback side.
static inline int CLibevent_is_readable(short what) { return (what & EV_READ) != 0; }
static inline int CLibevent_is_writable(short what) { return (what & EV_WRITE) != 0; }

/// A base with `npriorities` priority queues, initialised before any event
/// is added as libevent needs. Without EVENT_BASE_FLAG_PRECISE_TIMER: the
/// loop never uses libevent's timeouts (its timers run on its own timerfd,
/// below), and that flag makes the epoll backend call timerfd_settime on
/// every loop pass (measured: +40 % on an fd dispatch, README).
static inline struct event_base *CLibevent_base_new(int npriorities) {
    struct event_base *base = event_base_new();
    if (base == NULL) return NULL;
    if (event_base_priority_init(base, npriorities) != 0) {
        event_base_free(base);
        return NULL;
    }
    return base;
}

/// event_add with no timeout (fd, signal and persistent events).
static inline int CLibevent_add(struct event *ev) { return event_add(ev, NULL); }

/// Loop flags are macros; name them as functions for Swift.
static inline int CLibevent_loop_once(struct event_base *base) { return event_base_loop(base, EVLOOP_ONCE); }
static inline int CLibevent_loop_nonblock(struct event_base *base) { return event_base_loop(base, EVLOOP_NONBLOCK); }
static inline int CLibevent_loop_forever(struct event_base *base) { return event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY); }

/// eventfd flags are macros too.
static inline int CLibevent_eventfd_nonblocking(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/// The loop's timer clock: a CLOCK_MONOTONIC timerfd (flags are macros).
static inline int CLibevent_monotonic_timerfd(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

/// Arms `fd` to expire at the absolute CLOCK_MONOTONIC instant `nanoseconds`
/// (never early: the kernel fires at or after it); 0 or less disarms it.
static inline int CLibevent_arm_timerfd(int fd, long long nanoseconds) {
    struct itimerspec spec = {0};
    if (nanoseconds > 0) {
        spec.it_value.tv_sec = (time_t)(nanoseconds / 1000000000LL);
        spec.it_value.tv_nsec = (long)(nanoseconds % 1000000000LL);
    }
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

// libdispatch's main-queue hooks, the ones CoreFoundation's run loop uses on
// Linux to run the main queue (DispatchQueue.main blocks and, through it,
// @MainActor jobs) on a thread that runs its own loop instead of parking in
// dispatch_main(). They are exported by libdispatch.so but declared only in
// its private headers, so they are declared here. The handle is an eventfd
// (EFD_NONBLOCK) that libdispatch writes when the main queue has work;
// the callback drains the queue on the calling (main) thread.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);

/// The main queue's eventfd (created on first call).
static inline int CLibevent_main_queue_handle(void) { return _dispatch_get_main_queue_handle_4CF(); }

/// Runs what the main queue holds, on the calling thread (the main thread).
static inline void CLibevent_drain_main_queue(void) { _dispatch_main_queue_callback_4CF(NULL); }

/// Whether the calling thread is the process's main thread.
static inline int CLibevent_is_main_thread(void) { return getpid() == (pid_t)syscall(SYS_gettid); }

#endif
