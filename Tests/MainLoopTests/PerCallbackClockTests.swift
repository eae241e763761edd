import Glibc
import MainLoop
import Testing
import TestSupport

/// ``ClockReading/perCallback``: the instants a callback sees are the ones a
/// replay on the manual clock would give it.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct PerCallbackClockTests {
    /// Within a callback `now` stands still; a timer runs at its deadline,
    /// computed from the instant of the callback that scheduled it; and it
    /// never runs before that deadline on the real clock.
    @Test func aTimerRunsAtTheDeadlineItsCallbackComputed() throws {
        let loop = try MainRunLoop(clockReading: .perCallback)
        #expect(loop.clockReading == .perCallback)
        let pipe = TestPipe()
        var scheduledAt: LoopInstant?
        var firedAt: LoopInstant?
        var realAtFire: LoopInstant?
        var stoodStill = true
        var timer: LoopTimer?
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { _ in
            pipe.drain()
            let first = loop.now
            usleep(2_000)
            stoodStill = stoodStill && loop.now == first
            scheduledAt = first
            timer = loop.scheduleTimer(after: .milliseconds(3)) {
                firedAt = loop.now
                realAtFire = .monotonicNow()
                loop.stop()
            }
        }
        pipe.writeByte()
        try loop.run()
        try source.remove()
        _ = timer
        let deadline = try #require(scheduledAt) + .milliseconds(3)
        #expect(stoodStill)
        #expect(firedAt == deadline)
        #expect(try #require(realAtFire) >= deadline)
    }

    /// A callback that runs while a timer is due and has not run yet (both
    /// became ready in one pass) happens before the timer on the loop's
    /// clock, whichever libevent ran first: what the manual clock, which
    /// runs what is due before an instant's input, replays in the same order.
    @Test func aCallbackBesideADueTimerIsStampedInTheOrderItRan() throws {
        let loop = try MainRunLoop(clockReading: .perCallback)
        let pipe = TestPipe()
        var order: [(String, LoopInstant)] = []
        var deadline: LoopInstant?
        var timer: LoopTimer?
        let kick = loop.scheduleTimer(after: .zero) {
            deadline = loop.now + .milliseconds(1)
            timer = loop.scheduleTimer(after: .milliseconds(1)) {
                order.append(("timer", loop.now))
                if order.count == 2 { loop.stop() }
            }
            // Both the timer and the pipe are ready when this returns.
            pipe.writeByte()
            usleep(3_000)
        }
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { _ in
            pipe.drain()
            order.append(("fd", loop.now))
            if order.count == 2 { loop.stop() }
        }
        try loop.run()
        try source.remove()
        _ = (kick, timer)
        let due = try #require(deadline)
        try #require(order.count == 2)
        for (label, instant) in order where label == "timer" { #expect(instant == due) }
        // The instants increase in the order the callbacks ran.
        #expect(order[0].1 < order[1].1)
        if order[0].0 == "fd" { #expect(order[0].1 < due) }
    }

    /// A continuous loop (the default) reads the clock at every `now`.
    @Test func theDefaultReadsTheClockEveryTime() throws {
        let loop = try MainRunLoop()
        #expect(loop.clockReading == .continuous)
        let first = loop.now
        usleep(1_000)
        #expect(loop.now > first)
    }
}
