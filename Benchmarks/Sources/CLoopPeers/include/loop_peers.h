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

#endif
