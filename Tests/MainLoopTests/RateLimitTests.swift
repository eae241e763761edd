import Glibc
import MainLoop
import Testing
import TestSupport

/// sd-event's rate limit on the loop's sources, on the manual clock: a
/// burst per window, a pause until the window ends, nothing lost.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct RateLimitTests {
    @Test func aReadableDescriptorIsPausedPastItsBurstAndStaysReadable() throws {
        let loop = try MainRunLoop(deterministic: true)
        let pipe = TestPipe()
        pipe.writeByte()  // never read: ready on every pass
        var dispatches: [LoopInstant] = []
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { _ in dispatches.append(loop.now) }
        try source.setRateLimit(RateLimit(interval: .seconds(1), burst: 3))
        try loop.runUntilIdle()
        #expect(dispatches.count == 3)
        #expect(source.isPaused && loop.rateLimitPauses == 1)
        try loop.advance(by: .milliseconds(999))
        #expect(dispatches.count == 3, "paused until the window ends")
        try loop.advance(by: .milliseconds(1))
        #expect(dispatches.count == 6, "the window ended: the readiness that waited is delivered")
        #expect(dispatches[3] == LoopInstant(nanoseconds: 1_000_000_000))
        #expect(loop.rateLimitPauses == 2)
        // Lifting the limit resumes at once; removing ends it.
        try source.setRateLimit(nil)
        #expect(!source.isPaused)
        pipe.drain()
        try loop.runUntilIdle()
        try source.remove()
        #expect(throws: MainLoopError.sourceRemoved) { try source.setRateLimit(nil) }
    }

    /// A paused descriptor whose interest changes stays paused.
    @Test func changingInterestWhilePausedKeepsThePause() throws {
        let loop = try MainRunLoop(deterministic: true)
        let pipe = TestPipe()
        pipe.writeByte()
        var count = 0
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { _ in count += 1 }
        try source.setRateLimit(RateLimit(interval: .seconds(1), burst: 1))
        try loop.runUntilIdle()
        try source.update(interest: [.read, .peerClosed])
        try loop.runUntilIdle()
        #expect(count == 1 && source.isPaused)
        try loop.advance(by: .seconds(1))
        #expect(count == 2)
        try source.remove()
    }

    /// A repeating timer past its burst runs once at the window's end and
    /// goes on from there; nothing fires early.
    @Test func aTimerPastItsBurstWaitsForTheWindow() throws {
        let loop = try MainRunLoop(deterministic: true)
        var fires: [Int64] = []
        let timer = loop.scheduleTimer(after: .milliseconds(100), repeating: .milliseconds(100)) {
            fires.append(loop.now.nanoseconds / 1_000_000)
        }
        timer.setRateLimit(try RateLimit(interval: .seconds(1), burst: 2))
        try loop.advance(to: LoopInstant(nanoseconds: 1_350_000_000))
        #expect(fires == [100, 200, 1100, 1200])
        #expect(loop.rateLimitPauses == 2, "paused at 300 and again at 1300")
        timer.cancel()
    }

    @Test func invalidLimitsAreRefused() {
        #expect(throws: MainLoopError.invalidArgument("a rate limit's interval must be positive, not 0.0 seconds")) {
            try RateLimit(interval: .zero, burst: 1)
        }
        #expect(throws: MainLoopError.invalidArgument("a rate limit's interval must be positive, not -1.0 seconds")) {
            try RateLimit(interval: .seconds(-1), burst: 1)
        }
        #expect(throws: MainLoopError.invalidArgument("a rate limit's burst must be at least 1, not 0")) {
            try RateLimit(interval: .seconds(1), burst: 0)
        }
    }
}
