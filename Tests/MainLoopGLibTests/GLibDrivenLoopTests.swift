import CGLib
import Glibc
import MainLoop
import MainLoopGLib
import Testing
import TestSupport

/// A MainLoop inside a `GMainLoop` that GLib owns: its timers, posts from
/// other threads, descriptors and idle handlers all run, on time.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct GLibDrivenLoopTests {
    @Test func aGMainLoopRunsTheLoopsTimersPostsAndDescriptors() throws {
        let context = g_main_context_new()!
        defer { g_main_context_unref(context) }
        let glibLoop = g_main_loop_new(context, 0)!
        defer { g_main_loop_unref(glibLoop) }
        let loop = try MainRunLoop()
        let driven = try GLibDrivenLoop(loop: loop, context: context) { error in
            Issue.record("the driven loop failed: \(error)")
        }
        var log: [String] = []
        let start = loop.now
        var timerAt: Duration?
        loop.scheduleTimer(after: .milliseconds(20)) {
            timerAt = loop.now - start
            log.append("timer")
        }
        let pipe = TestPipe()
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { _ in
            pipe.drain()
            log.append("descriptor")
        }
        let handedLoop = Handed(value: loop), handedGLib = Handed(value: glibLoop)
        let poster = TestThread {
            usleep(40_000)
            pipe.writeByte()
            usleep(10_000)
            try! handedLoop.value.execute {
                handedLoop.value.preconditionInLoop()
                _ = try? handedLoop.value.executeWhenIdle {
                    // Idle: nothing else is ready; GLib's loop ends.
                    g_main_loop_quit(handedGLib.value)
                }
            }
        }
        g_main_loop_run(glibLoop)
        poster.join()
        try source.remove()
        driven.detach()
        #expect(log == ["timer", "descriptor"])
        #expect(try #require(timerAt) >= .milliseconds(20), "a 20 ms loop timer fired early under GLib")
        #expect(driven.isDetached)
    }

    /// A driven loop that is shut down ends its source and says why.
    @Test func aShutDownLoopDetachesWithItsError() throws {
        let context = g_main_context_new()!
        defer { g_main_context_unref(context) }
        let loop = try MainRunLoop()
        var reported: MainLoopError?
        let driven = try GLibDrivenLoop(loop: loop, context: context) { reported = $0 }
        try loop.executeInLoop {}
        try loop.shutdown()
        while !driven.isDetached, g_main_context_iteration(context, 0) != 0 {}
        #expect(reported == .shutDown)
        #expect(driven.isDetached)
    }

    /// A manual-clock loop is stepped with `advance`, not driven.
    @Test func aDeterministicLoopIsRefused() throws {
        let loop = try MainRunLoop(deterministic: true)
        #expect(throws: MainLoopError.notDeterministic) { _ = try GLibDrivenLoop(loop: loop) { _ in } }
    }
}
