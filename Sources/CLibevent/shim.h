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
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

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

/// EV_READ/EV_WRITE/EV_CLOSED/EV_PERSIST are ints in the header but
/// event_new takes a short; this wrapper takes the Swift-friendly readiness
/// bits and adds EV_PERSIST so an fd source stays registered until removed.
/// EV_CLOSED is the peer's shutdown of its sending side (EPOLLRDHUP; the
/// base requires EV_FEATURE_EARLY_CLOSE, so it is seen without a read).
static inline struct event *CLibevent_fd_event_new(struct event_base *base,
                                                   int fd, int want_read,
                                                   int want_write,
                                                   int want_closed,
                                                   event_callback_fn callback,
                                                   void *context) {
    short what = EV_PERSIST;
    if (want_read) what |= EV_READ;
    if (want_write) what |= EV_WRITE;
    if (want_closed) what |= EV_CLOSED;
    return event_new(base, fd, what, callback, context);
}

/// fdTrampoline (FileDescriptorSource.swift) maps these bits to `Readiness`
/// (read 0x01, write 0x02, peerClosed 0x40) by shifting them down by one.
_Static_assert(EV_READ == 0x02 && EV_WRITE == 0x04 && EV_CLOSED == 0x80,
               "libevent's readiness bits moved: update fdTrampoline");

/// A persistent, edge-triggered read event: it fires once for each write
/// to the descriptor that comes after the loop collected the previous one,
/// whether or not the descriptor was read (an eventfd's counter then only
/// grows, 1 a write, which takes 2^64 writes to fill).
static inline struct event *CLibevent_edge_read_event_new(struct event_base *base, int fd,
                                                          event_callback_fn callback,
                                                          void *context) {
    return event_new(base, fd, EV_READ | EV_PERSIST | EV_ET, callback, context);
}

/// A base as `CLibevent_base_new` makes; from priority `serial_from` on
/// (none when it is negative) one callback runs per pass: libevent runs a
/// lower priority only when every higher one is empty, so such a callback
/// runs only once the work made ready before it has run (a per-callback
/// loop's outside events).
static inline struct event_base *CLibevent_base_new_serial(int npriorities, int serial_from) {
    struct event_config *config = event_config_new();
    if (config == NULL) return NULL;
    struct event_base *base = NULL;
    // The environment does not choose the backend (libevent reads
    // EVENT_NOEPOLL and the like unless told not to), and the backend must
    // do edge-triggered events: the channels' eventfds are never read
    // (`CLibevent_edge_read_event_new`), so a level-triggered one would
    // report them ready on every pass and the loop would never sleep. It
    // must also report a peer's shutdown without a read (EV_CLOSED, epoll's
    // EPOLLRDHUP), which fd sources offer as `Readiness.peerClosed`.
    if (event_config_set_flag(config, EVENT_BASE_FLAG_NO_CACHE_TIME) == 0
        && event_config_set_flag(config, EVENT_BASE_FLAG_IGNORE_ENV) == 0
        && event_config_require_features(config, EV_FEATURE_ET | EV_FEATURE_EARLY_CLOSE) == 0
        && (serial_from < 0 || event_config_set_max_dispatch_interval(config, NULL, 1, serial_from) == 0))
        base = event_base_new_with_config(config);
    event_config_free(config);
    if (base == NULL) return NULL;
    if (event_base_priority_init(base, npriorities) != 0) {
        event_base_free(base);
        return NULL;
    }
    return base;
}

/// A base with `npriorities` priority queues, initialised before any event
/// is added as libevent needs. The loop's timers run on its own timerfd
/// (libevent's timeouts only stand in when the kernel refuses to arm it),
/// hence the flags:
/// - not EVENT_BASE_FLAG_PRECISE_TIMER, which makes the epoll backend call
///   timerfd_settime on every loop pass (the fd dispatch row of `compare`);
/// - EVENT_BASE_FLAG_NO_CACHE_TIME: otherwise libevent reads the clock after
///   every poll to cache it for its timeouts and
///   event_base_gettimeofday_cached, which the loop, with a clock of its
///   own, never reads (the fd dispatch row of `compare`); the stand-in timeout
///   then reads the clock when it is added.
static inline struct event_base *CLibevent_base_new(int npriorities) {
    return CLibevent_base_new_serial(npriorities, -1);
}

/// The priority of the event whose callback is running, or -1 when none is.
static inline int CLibevent_running_priority(struct event_base *base) {
    struct event *running = event_base_get_running_event(base);
    return running == NULL ? -1 : event_get_priority(running);
}

/// event_add with no timeout (fd, signal and persistent events).
static inline int CLibevent_add(struct event *ev) { return event_add(ev, NULL); }

/// Loop flags are macros; name them as functions for Swift.
static inline int CLibevent_loop_once(struct event_base *base) { return event_base_loop(base, EVLOOP_ONCE); }
static inline int CLibevent_loop_nonblock(struct event_base *base) { return event_base_loop(base, EVLOOP_NONBLOCK); }
static inline int CLibevent_loop_forever(struct event_base *base) { return event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY); }

#endif
