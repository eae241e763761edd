// MainLoop inside a loop it does not own (MainLoopGLib's GLibDrivenLoop): a
// GMainLoop owns the thread, and MainLoop's timers, a channel fed from
// another thread and an Application run inside it. The app is suspended
// for a while: its timer's ticks are held and delivered at the resume, as
// under `run()`.
// Prints what ran, then exits 0.
import Dispatch
import Glibc
import MainLoopGLib
import MainLoopKit

/// Writes one line at once (unbuffered, so the order is the real one).
func emit(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
}

let glibLoop = g_main_loop_new(nil, 0)
let loop = try MainRunLoop()
let driven = try GLibDrivenLoop(loop: loop) { error in
    emit("the loop can no longer be driven: \(error)")
    exit(1)
}
let application = try Application(loop: loop)
try application.perform(.launch)
emit("app \(application.state), inside GLib's loop")

// Each step starts the next, so the output does not depend on timing.
var ticks = 0, ticksAtHome = 0, ticksAtResume = 0

/// Runs `body` from a GLib timeout of `milliseconds` (GLib's own source).
/// GLib runs it on this, the main, thread: the main actor's.
func afterGLibTimeout(_ milliseconds: UInt32, _ body: @escaping @MainActor () -> Void) {
    // Made, run and released on the main thread.
    final class Box: @unchecked Sendable {
        let body: @MainActor () -> Void
        init(_ body: @escaping @MainActor () -> Void) { self.body = body }
    }
    g_timeout_add_full(G_PRIORITY_DEFAULT, milliseconds, { data in
        let box = Unmanaged<Box>.fromOpaque(data!).takeUnretainedValue()
        MainActor.assumeIsolated { box.body() }
        return 0
    }, Unmanaged.passRetained(Box(body)).toOpaque(), { data in Unmanaged<Box>.fromOpaque(data!).release() })
}

/// The app is suspended by a GLib timeout, and resumed by another 100 ms
/// later; a loop timer then ends GLib's loop once the resumed app ticked.
@MainActor func suspendAndResume() {
    afterGLibTimeout(10) {
        try! application.perform(.home)
        emit("app \(application.state) (by a GLib timeout)")
        ticksAtHome = ticks
        afterGLibTimeout(100) {
            emit("app timer ticks while suspended: \(ticks - ticksAtHome)")
            ticksAtResume = ticks
            try! application.perform(.foreground)
            emit("app \(application.state) (by a GLib timeout)")
            loop.scheduleTimer(after: .milliseconds(50)) {
                emit("app timer ticked again after the resume: \(ticks > ticksAtResume)")
                g_main_loop_quit(glibLoop)
            }
        }
    }
}

// A channel fed from another thread (its post wakes GLib's poll); its
// message starts an app timer every 20 ms, paused while the app is suspended.
let channel = try loop.makeChannel(of: String.self) { message in
    emit("channel: \(message)")
    _ = try! application.scheduleTimer(after: .milliseconds(20), repeating: .milliseconds(20)) {
        ticks += 1
        if ticks == 2 {
            emit("app timer ticked twice while active")
            suspendAndResume()
        }
    }
}
DispatchQueue.global().async {
    try! channel.post("posted from another thread")
}

g_main_loop_run(glibLoop)
driven.detach()
try application.perform(.terminate)
g_main_loop_unref(glibLoop)
emit("stopped cleanly")
