#ifndef SD_EVENT_PEER_H
#define SD_EVENT_PEER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

// Sequences run on the real sd-event (libsystemd), for differential tests
// of MainLoop's idle work, exit handlers, rate limits and child processes.
// Each writes what its callbacks did, in order, comma-separated, into `log`
// and returns 0, or a negative errno from sd-event.

/// Defer sources as idle work: an important and a normal one, two at idle
/// priority (the first posts a normal one when it runs).
int sd_event_peer_idle_order(char *log, size_t capacity);

/// Exit sources at three priorities, added least urgent first, run by
/// sd_event_exit.
int sd_event_peer_exit_order(char *log, size_t capacity);

/// An I/O source on a descriptor that stays readable, rate-limited to
/// `burst` per `interval_usec`, dispatched `dispatches` times: writes the
/// monotonic time of each dispatch (microseconds) into `times`.
int sd_event_peer_rate_limited_io(int fd, uint64_t interval_usec, unsigned burst, unsigned dispatches, uint64_t *times);

/// Watches child `pidfd` (WEXITED) until it ends: its siginfo si_code and si_status.
int sd_event_peer_child(int pidfd, int *code, int *status);

/// MainLoop driven by sd-event, as the foreign-driver protocol says: an io
/// source on `fd` (the loop's backend descriptor) and a monotonic time
/// source re-armed before each iteration for `deadline_usec` (microseconds
/// from now, negative for none); both call `dispatch`. Iterates until
/// `done` returns nonzero; returns 0, or a negative errno from sd-event.
int sd_event_peer_drive(int fd, int64_t (*deadline_usec)(void *), void (*dispatch)(void *),
                        int (*done)(void *), void *context);

#endif
