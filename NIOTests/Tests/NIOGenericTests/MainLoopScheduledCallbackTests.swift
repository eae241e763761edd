import MainLoop
import MainLoopNIO
import NIOCore
import XCTest

/// SwiftNIO's scheduled-callback suite (`_BaseScheduledCallbackTests`, in
/// the copied NIOScheduledCallbackTests.swift) against a real-clock
/// MainRunLoop run by its own thread: the requirements NIO's own
/// `MTELGScheduledCallbackTests` meets with a MultiThreadedEventLoopGroup.
final class MainLoopThreadScheduledCallbackTests: _BaseScheduledCallbackTests {
    struct Requirements: ScheduledCallbackTestRequirements {
        let thread: LoopThread
        var loop: (any EventLoop) { thread.loop.eventLoop }

        func advanceTime(by amount: TimeAmount) async throws {
            try await Task.sleep(nanoseconds: UInt64(amount.nanoseconds))
        }

        func shutdownEventLoop() async throws {
            try await loop.shutdownGracefully()
            try thread.stopAndJoin()
        }

        func waitForLoopTick() async throws {
            try await loop.submit {}.get()
        }
    }

    override func setUp() async throws {
        self.requirements = Requirements(thread: try LoopThread.start())
    }

    // XCTest on Linux finds a class's inherited tests (the base suite's
    // eleven) only once the class declares a test of its own: this one.

    /// The callback runs on the loop's own thread, where the loop runs it.
    func testScheduledCallbackRunsOnTheLoopThread() async throws {
        let ranOnLoop = LockedValue<Bool?>(nil)
        struct Probe: NIOScheduledCallbackHandler, Sendable {
            let ranOnLoop: LockedValue<Bool?>
            func handleScheduledCallback(eventLoop: some EventLoop) {
                ranOnLoop.withLock { $0 = eventLoop.inEventLoop }
            }
        }
        _ = try loop.scheduleCallback(in: .milliseconds(1), handler: Probe(ranOnLoop: ranOnLoop))
        try await requirements.advanceTime(by: .milliseconds(1))
        try await requirements.waitForLoopTick()
        XCTAssertEqual(ranOnLoop.withLock { $0 }, true)
        try await requirements.shutdownEventLoop()
    }
}
