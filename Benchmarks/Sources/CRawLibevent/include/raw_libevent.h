#ifndef RAW_LIBEVENT_H
#define RAW_LIBEVENT_H

/// The reference point of the comparison: raw C libevent, one user event
/// that re-activates itself from its own callback, so each event costs one
/// event_active() plus one callback dispatch and nothing else.
///
/// Returns nanoseconds per event_active→callback over `events` events.
double raw_libevent_inloop_ns_per_event(long events);

/// Calls evthread_use_pthreads(): every base created afterwards takes a
/// lock around each operation. Process-wide and irreversible, so the
/// comparison measures everything else first.
void raw_libevent_enable_pthreads(void);

#endif
