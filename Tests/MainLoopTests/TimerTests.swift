import Glibc
import MainLoop
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct TimerTests {
    @Test func timersNeverFireEarlyOnTheRealClock() throws {
        let loop = try MainRunLoop()
        var lateness: [Int64] = []
        let delays: [Duration] = [.microseconds(1), .microseconds(150), .milliseconds(1), .milliseconds(3),
                                  .microseconds(2_500), .milliseconds(7), .milliseconds(10), .microseconds(333)]
        var remaining = delays.count * 5
        for round in 0..<5 {
            for delay in delays {
                let due = loop.now + delay + .microseconds(round * 100)
                let timer = loop.makeTimer {
                    lateness.append(LoopInstant.monotonicNow().nanoseconds - due.nanoseconds)
                    remaining -= 1
                    if remaining == 0 { loop.stop() }
                }
                timer.schedule(at: due)
            }
        }
        try loop.run()
        #expect(lateness.count == delays.count * 5)
        #expect(lateness.allSatisfy { $0 >= 0 }, "a timer fired early: \(lateness.filter { $0 < 0 })")
    }

    @Test func cancelBeforeFiring() throws {
        let loop = try MainRunLoop(deterministic: true)
        var fired = false
        let timer = loop.scheduleTimer(after: .seconds(1)) { fired = true }
        #expect(timer.cancel())
        #expect(!timer.cancel(), "a second cancel reports nothing was scheduled")
        try loop.advance(by: .seconds(2))
        #expect(!fired)
    }

    @Test func repeatingTimerCancelledFromItsOwnHandlerStops() throws {
        let loop = try MainRunLoop(deterministic: true)
        var fires = 0
        var timer: LoopTimer!
        timer = loop.scheduleTimer(after: .seconds(1), repeating: .seconds(1)) {
            fires += 1
            if fires == 3 { timer.cancel() }
        }
        try loop.advance(by: .seconds(10))
        #expect(fires == 3)
        #expect(!timer.isScheduled)
    }

    @Test func cancellingAnotherTimerDueAtTheSameInstant() throws {
        let loop = try MainRunLoop(deterministic: true)
        var ran: [String] = []
        var second: LoopTimer!
        loop.scheduleTimer(after: .seconds(1)) { ran.append("first"); second.cancel() }
        second = loop.scheduleTimer(after: .seconds(1)) { ran.append("second") }
        try loop.advance(by: .seconds(1))
        #expect(ran == ["first"])
    }

    @Test func repeatingTimersKeepTheirScheduleOnTheRealClock() throws {
        let loop = try MainRunLoop()
        var fireTimes: [LoopInstant] = []
        var deadlines: [LoopInstant] = []
        var timer: LoopTimer!
        timer = loop.scheduleTimer(after: .milliseconds(2), repeating: .milliseconds(2)) {
            deadlines.append(timer.deadline)
            fireTimes.append(LoopInstant.monotonicNow())
            if fireTimes.count == 10 { timer.cancel(); loop.stop() }
        }
        try loop.run()
        // Deadlines stay on start + k·2ms (no drift), and none fired early.
        let first = try #require(deadlines.first)
        for (index, deadline) in deadlines.enumerated() {
            let offset = deadline.nanoseconds - first.nanoseconds
            #expect(offset % 2_000_000 == 0 && offset >= Int64(index) * 2_000_000, "deadline \(index) drifted: \(offset)")
            #expect(fireTimes[index] >= deadline)
        }
    }

    @Test func rescheduleReplacesTheEarlierSchedule() throws {
        let loop = try MainRunLoop(deterministic: true)
        var firedAt: [Double] = []
        let timer = loop.scheduleTimer(after: .seconds(1)) { firedAt.append(loop.now.seconds) }
        timer.schedule(after: .seconds(3))
        try loop.advance(by: .seconds(5))
        #expect(firedAt == [3])
    }

    /// Scheduling a scheduled timer again moves it (its slot and the loop's
    /// reference stay): it goes behind a timer already due at its new
    /// instant, as a new schedule would, fires once even when its owner let
    /// go of it, and is freed after.
    @Test func aMovedTimerGoesBehindTheOthersOfItsInstantAndIsFreedAfterItFires() throws {
        let loop = try MainRunLoop(deterministic: true)
        var ran: [String] = []
        weak var moved: LoopTimer?
        do {
            let timer = loop.scheduleTimer(after: .seconds(2)) { ran.append("moved") }
            moved = timer
            loop.scheduleTimer(after: .seconds(1)) { ran.append("first") }
            try loop.runUntilIdle()                  // both in the heap's order
            timer.schedule(after: .seconds(1))       // from the heap
            timer.schedule(after: .seconds(1))       // from where the move put it
            loop.scheduleTimer(after: .seconds(1)) { ran.append("last") }
        }
        #expect(moved != nil, "a scheduled timer is kept by its loop")
        try loop.advance(by: .seconds(3))
        #expect(ran == ["first", "moved", "last"])
        #expect(moved == nil, "fired, the timer is released")
    }
}

/// A repeating timer whose interval is shorter than a
/// loop pass is always due; libevent runs only the highest non-empty
/// priority per pass, so with every timer at system priority it used to
/// starve input and app work for as long as it repeated.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct TimerStarvationTests {
    @Test func anAlwaysDueRepeatingTimerDoesNotStarveInputOrAppWork() throws {
        let loop = try MainRunLoop()
        var fires = 0
        let timer = loop.scheduleTimer(after: .zero, repeating: .nanoseconds(500)) { fires += 1 }
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]); close(descriptors[1]) }
        var inputSeen = false, appWorkSeen = false
        let source = try loop.addFileDescriptor(descriptors[0], interest: .read, priority: .input) { _ in
            var byte: UInt8 = 0
            _ = read(descriptors[0], &byte, 1)
            inputSeen = true
        }
        try loop.executeInLoop(priority: .app) { appWorkSeen = true }
        var one: UInt8 = 1
        #expect(write(descriptors[1], &one, 1) == 1)
        // Ends the run once both ran and the timer kept firing meanwhile, or
        // after 2 s of starvation (a deadline far beyond what a fair loop
        // needs). The fires are part of the condition, not counted after a
        // fixed time: under ThreadSanitizer a millisecond holds only a few
        // loop turns.
        let check = loop.scheduleTimer(after: .milliseconds(1), repeating: .milliseconds(1)) {
            if inputSeen && appWorkSeen && fires > 10 { loop.stop() }
        }
        let giveUp = loop.scheduleTimer(after: .seconds(2)) { loop.stop() }
        try loop.run()
        timer.cancel()
        check.cancel()
        giveUp.cancel()
        try source.remove()
        #expect(inputSeen, "the input fd was starved by the repeating timer (\(fires) fires)")
        #expect(appWorkSeen, "app work was starved by the repeating timer (\(fires) fires)")
        #expect(fires > 10)
    }
}
