import CGLib
import Glibc
import MainLoop
import MainLoopGLib
import Testing
import TestSupport

/// A descriptor number GLib watches can come back as another file: a
/// callback removes its watch, closes its socket and accepts a new one,
/// which the kernel gives the lowest free number, the one just closed. The
/// kernel drops the loop's epoll registration with the old file, so a query
/// that asks for the same number and condition as before must not be taken
/// as "nothing changed".
@Suite(.ownThread, .timeLimit(.minutes(2))) struct GLibDescriptorReuseTests {
    @Test func aWatchOnANumberReusedByAnotherFileStillFires() throws {
        let context = g_main_context_new()!
        defer { g_main_context_unref(context) }
        let loop = try MainRunLoop()
        let bridge = try loop.runGLibContext(context)
        let first = TestPipe(), second = TestPipe()
        let number = first.readEnd
        var log: [String] = []
        addWatch(number, to: context) {
            log.append("first")
            // The number now names the second pipe's read end; the first
            // pipe's read end is closed (dup2 swaps the two at once).
            precondition(dup2(second.readEnd, number) == number)
            addWatch(number, to: context) {
                log.append("second")
                loop.stop()
                return false
            }
            // Written after the loop has waited again: only a registration
            // of the new file wakes it.
            loop.scheduleTimer(after: .milliseconds(20)) { second.writeByte() }
            return false
        }
        first.writeByte()
        // A loop that never hears of the second pipe stops here instead.
        loop.scheduleTimer(after: .seconds(5)) { loop.stop() }
        try loop.run()
        bridge.release()
        try loop.shutdown()
        #expect(log == ["first", "second"])
    }
}

/// A GLib watch (a GIOChannel's) for `descriptor` readable on `context`;
/// `body` reads nothing, and returns whether the watch stays.
@discardableResult
private func addWatch(_ descriptor: Int32, to context: OpaquePointer, _ body: @escaping () -> Bool) -> guint {
    let channel = g_io_channel_unix_new(descriptor)!
    let source = g_io_create_watch(channel, G_IO_IN)!
    g_io_channel_unref(channel)
    let box = Unmanaged.passRetained(GLibCallback(body)).toOpaque()
    let callback: @convention(c) (UnsafeMutablePointer<GIOChannel>?, GIOCondition, gpointer?) -> gboolean = { _, _, data in
        Unmanaged<GLibCallback>.fromOpaque(data!).takeUnretainedValue().body() ? 1 : 0
    }
    g_source_set_callback(source, unsafeBitCast(callback, to: GSourceFunc.self), box) { data in
        Unmanaged<GLibCallback>.fromOpaque(data!).release()
    }
    let id = g_source_attach(source, context)
    g_source_unref(source)
    return id
}
