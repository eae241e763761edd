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

#ifndef RAW_LIBEVENT_MORE_H
#define RAW_LIBEVENT_MORE_H
/// Timer schedule + cancel with `pending` other timers waiting (1 to 1000 s
/// out, spread like a real service's deadlines): evtimer_add then event_del
/// of one timer, `operations` times. Nanoseconds per add+del.
double raw_libevent_timer_add_del_ns(long pending, long operations);

/// The same on a base with EVENT_BASE_FLAG_PRECISE_TIMER, whose deadlines
/// come from CLOCK_MONOTONIC (MainLoop's clock) rather than the coarse clock.
double raw_libevent_precise_timer_add_del_ns(long pending, long operations);

/// fd readiness dispatch, one ready of `fds` eventfds: each round writes the
/// next eventfd, runs one libevent loop iteration and reads it in the
/// callback. Nanoseconds per dispatched readiness (syscalls included).
double raw_libevent_fd_dispatch_ns(int fds, long rounds);
/// The same as a handle, so that `compare` can interleave it with MainLoop's
/// fd dispatch in short chunks (both then see the same moments of the VM):
/// `fds` eventfds watched by one base; each run writes the next ones in turn.
/// NULL when it could not be allocated.
struct raw_fd_bench;
struct raw_fd_bench *raw_fd_bench_create(int fds);
/// `rounds` rounds, each writing `active` eventfds spread evenly over the
/// others (libevent's bench.c) and running loop iterations until all were
/// dispatched; the total nanoseconds they took, or -1 when one was lost.
double raw_fd_bench_run_ns(struct raw_fd_bench *bench, long rounds, int active);
/// Frees the base, its events and closes the eventfds.
void raw_fd_bench_destroy(struct raw_fd_bench *bench);

/// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), which Swift's Glibc module lacks.
int benchmark_eventfd(void);
/// Cross-thread wake latency, the floor: a libevent loop thread asleep on an
/// eventfd, pinned to CPU `loop_cpu` (see `benchmark_pin_current_thread`).
/// NULL when the thread could not start.
struct raw_wake_floor;
struct raw_wake_floor *raw_wake_floor_start(int loop_cpu);
/// One sample, on the calling thread: waits `gap_us` µs (so the loop is back
/// in epoll_wait), stamps CLOCK_MONOTONIC and writes the eventfd; the
/// callback reads it and takes now − stamp; returns that (ns), or -1 when
/// the write failed. The caller yields while it waits, so a loop thread on
/// its CPU can run.
double raw_wake_floor_sample(struct raw_wake_floor *floor, int gap_us);
/// Stops the loop thread, joins it and frees everything.
void raw_wake_floor_stop(struct raw_wake_floor *floor);
/// Pins the calling thread to `cpu` (modulo the CPUs online), or lets it run
/// on every CPU again when `cpu` is negative. The wake benchmarks pin the
/// poster and the loop thread to different CPUs: left to the scheduler, a
/// wake-up sometimes moved the loop thread onto the poster's CPU, where it
/// waited for the spinning poster (a 4 µs scheduling delay that measured
/// the placement, not the loop). Returns pthread_setaffinity_np's status.
int benchmark_pin_current_thread(int cpu);

/// A million timers (libuv's million_timers), as the C peers' rows:
/// `count` one-shot timers, each `per_ms` due 1 ms after the `per_ms`
/// before; `phases` gets the thread CPU time per timer of scheduling them,
/// dispatching them all (event_base_dispatch) and freeing them.
int raw_libevent_million_timers(long count, long per_ms, double phases[3]);
/// Counting the process's heap allocations (malloc, calloc, realloc and
/// the aligned forms, on every thread) while `on`; the count so far.
void allocation_counting(int on);
long allocation_count(void);

#endif
