import CLoopPeers
import MainLoop
import MainLoopGLib

/// GLib's work on GLib's own `GMainLoop` and on MainLoop running the same
/// context (MainLoopGLib's bridge): what the bridge costs a GLib library.
/// The loop named first is the one that waits.
enum GLibContenders {
    static let timeoutOperation = "GLib timeout 0 ms, fire→attach next"
    static let crossThreadOperation = "GLib source attached from another thread→run, round trip"

    static func rows(timeouts: Int, roundTrips: Int) -> [Contender] {
        [
            Contender(name: "MainLoop \(timeoutOperation)") { try onMainLoop(timeouts) { context, loop in
                peers_glib_timeout_chain(context, timeouts, stopLoop, loop)
                return nil
            } },
            Contender(name: "GLib \(timeoutOperation)") { peers_glib_timeout_chain_ns(timeouts) },
            Contender(name: "MainLoop \(crossThreadOperation)") { try onMainLoop(roundTrips) { context, loop in
                peers_glib_cross_thread_start(context, roundTrips, stopLoop, loop)
            } },
            Contender(name: "GLib \(crossThreadOperation)") { peers_glib_cross_thread_ns(roundTrips) },
        ]
    }

    /// Runs a new context on a new MainLoop until `start`'s work stops it
    /// (the work starts once the loop runs, so the loop owns the context);
    /// nanoseconds per operation.
    private static func onMainLoop(_ count: Int,
                                   _ start: @escaping (OpaquePointer, UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?) throws -> Double {
        let context = g_main_context_new()!
        defer { g_main_context_unref(context) }
        let loop = try MainRunLoop()
        let bridge = try loop.runGLibContext(context)
        var handle: UnsafeMutableRawPointer?
        try loop.executeInLoop { handle = start(context, Unmanaged.passUnretained(loop).toOpaque()) }
        let nanoseconds = try nanosecondsPerEvent(count) { try loop.run() }
        if let handle { peers_glib_cross_thread_join(handle) }
        bridge.release()
        try loop.shutdown()
        return nanoseconds
    }
}

/// `done` for the C workloads: stops the MainLoop they ran on.
private let stopLoop: @convention(c) (UnsafeMutableRawPointer?) -> Void = { loop in
    Unmanaged<MainRunLoop>.fromOpaque(loop!).takeUnretainedValue().stop()
}
