#ifndef LOOP_PEERS_H
#define LOOP_PEERS_H

// The C loops a Linux service would pick instead of MainLoop, doing what
// MainLoop's rows of the same name do. Each returns nanoseconds per
// operation (negative on a setup failure).

/// One pass of a loop with one idle callback installed and nothing else:
/// libuv's idle handle, GLib's idle source, sd-event's defer source (its
/// idiom for "run on every iteration").
double peers_uv_idle_pass_ns(long passes);
double peers_glib_idle_pass_ns(long passes);
double peers_sd_event_defer_pass_ns(long passes);

/// A child process (/bin/true) started and its end delivered to a
/// handler, one after another: libuv's uv_spawn exit callback, GLib's
/// child watch on a posix_spawn'ed child, sd-event's pidfd child source.
double peers_uv_child_cycle_ns(int children);
double peers_glib_child_cycle_ns(int children);
double peers_sd_event_child_cycle_ns(int children);

/// GLib work, for GLib run by its own GMainLoop and by MainLoop's bridge
/// (MainLoopGLib): a chain of 0 ms timeouts (each callback attaches the
/// next), and sources attached from another thread, each after the last
/// one ran (a cross-thread wake and its round trip). `done(data)` is
/// called on the context's thread after the last; the `_ns` forms run a
/// GMainLoop on a new context and time it.
typedef struct _GMainContext GMainContext;
void peers_glib_timeout_chain(GMainContext *context, long count, void (*done)(void *), void *data);
void *peers_glib_cross_thread_start(GMainContext *context, long count, void (*done)(void *), void *data);
void peers_glib_cross_thread_join(void *handle);
double peers_glib_timeout_chain_ns(long count);
double peers_glib_cross_thread_ns(long count);

/// One timer armed and disarmed again with `pending` others due 1 to
/// 1,000 s out, as raw libevent's row does (evtimer_add + event_del on one
/// event): libuv's uv_timer_start + uv_timer_stop on one handle, sd-event's
/// sd_event_source_set_time + set_enabled(ONESHOT, OFF) on one source, and
/// GLib's faster of a timeout source attached and destroyed and
/// g_source_set_ready_time on one source (both forms also given alone).
double peers_uv_timer_schedule_cancel_ns(long pending, long operations);
double peers_glib_timer_schedule_cancel_ns(long pending, long operations);
double peers_glib_timeout_add_remove_ns(long pending, long operations);
double peers_glib_ready_time_ns(long pending, long operations);
double peers_sd_event_timer_schedule_cancel_ns(long pending, long operations);

/// fd readiness dispatch, `active` ready of `fds` eventfds, libevent's
/// bench.c shape: each round writes `active` eventfds spread over the
/// others and runs loop iterations until each callback read its own
/// (libuv's uv_poll, GLib's unix fd source, sd-event's io source). The ns
/// per dispatched descriptor, or -1 when a readiness was lost.
double peers_uv_fd_dispatch_ns(int fds, int active, long rounds);
double peers_glib_fd_dispatch_ns(int fds, int active, long rounds);
double peers_sd_event_fd_dispatch_ns(int fds, int active, long rounds);

/// libuv's million_timers: `count` one-shot timers, each `per_ms` of them
/// due 1 ms after the `per_ms` before, scheduled, run until all fired, and
/// freed. `phases` gets each phase's thread CPU time per timer (schedule,
/// dispatch, free): the dispatch phase counts the loop's work, not its
/// waits for the clock. 0, or -1 when a timer did not fire.
int peers_uv_million_timers(long count, long per_ms, double phases[3]);
int peers_glib_million_timers(long count, long per_ms, double phases[3]);
int peers_sd_event_million_timers(long count, long per_ms, double phases[3]);

/// In-loop post→run, each callback posting the next (as raw libevent's
/// event_active row and MainLoop's in-loop rows do): GLib's g_idle_add (a
/// source per post, its idiom), sd-event's defer source enabled ONESHOT
/// again (one source, like libevent's one event). libuv has no in-loop
/// post (its idle handle runs on every pass: the idle row).
double peers_glib_inloop_post_ns(long posts);
double peers_sd_event_inloop_post_ns(long posts);

/// Cross-thread wake of a sleeping loop, as raw_wake_floor (raw_libevent.h)
/// measures libevent: a loop thread pinned to `loop_cpu`, asleep; another
/// thread stamps the time and posts with the loop's own cross-thread call:
/// libuv's uv_async_send, GLib's g_main_context_invoke (an idle source
/// attached from the other thread), sd-event's eventfd io source (sd-event
/// has no thread-safe post; an eventfd is its users' idiom). NULL when the
/// loop thread could not start.
enum { PEER_WAKE_LIBUV = 0, PEER_WAKE_GLIB = 1, PEER_WAKE_SD_EVENT = 2 };
struct peer_wake;
struct peer_wake *peer_wake_start(int kind, int loop_cpu);
/// One sample: waits `gap_us` µs, stamps, posts, yields until the callback
/// ran; its latency in ns, or -1 when the post failed.
double peer_wake_sample(struct peer_wake *wake, int gap_us);
/// Stops the loop thread, joins it and frees everything.
void peer_wake_stop(struct peer_wake *wake);

#endif
