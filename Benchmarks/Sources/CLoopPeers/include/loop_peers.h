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

#endif
