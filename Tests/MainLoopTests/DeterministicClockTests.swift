@_spi(Testing) import MainLoop
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct DeterministicClockTests {
    /// A small scenario mixing timers, repeats, posts and cancels; returns
    /// what ran, with the manual clock's reading.
    private func runScenario() throws -> [String] {
        let loop = try MainRunLoop(deterministic: true)
        let record = Recorder()
        let stamp = { (label: String) in record("\(label)@\(loop.now.seconds)") }
        let tick = loop.scheduleTimer(after: .seconds(2), repeating: .seconds(2)) { stamp("tick") }
        loop.scheduleTimer(after: .seconds(3)) {
            stamp("once")
            try? loop.executeInLoop { stamp("posted") }
        }
        loop.scheduleTimer(after: .seconds(7)) { tick.cancel(); stamp("stop-tick") }
        try loop.advance(by: .seconds(10))
        return record.entries
    }

    @Test func theSameScenarioGivesTheSameOrderEveryTime() throws {
        let first = try runScenario()
        #expect(first == ["tick@2.0", "once@3.0", "posted@3.0", "tick@4.0", "tick@6.0", "stop-tick@7.0"])
        for _ in 0..<20 { #expect(try runScenario() == first) }
    }

    @Test func clockOnlyMovesWhenAdvanced() throws {
        let loop = try MainRunLoop(deterministic: true)
        #expect(loop.now == .zero)
        try loop.runUntilIdle()
        #expect(loop.now == .zero)
        try loop.advance(by: .milliseconds(1500))
        #expect(loop.now == LoopInstant(nanoseconds: 1_500_000_000))
        try loop.advance(to: .zero)  // the past: no-op
        #expect(loop.now == LoopInstant(nanoseconds: 1_500_000_000))
    }

    @Test func timersRunAtTheirOwnDeadlineDuringAnAdvance() throws {
        let loop = try MainRunLoop(deterministic: true)
        var seen: [Double] = []
        loop.scheduleTimer(after: .seconds(1), repeating: .seconds(1)) { seen.append(loop.now.seconds) }
        try loop.advance(by: .seconds(4))
        #expect(seen == [1, 2, 3, 4])
    }

    @Test func simulatedBlockingStopsAtTheWatchdogDeadline() throws {
        let loop = try MainRunLoop(deterministic: true)
        let outcome = loop.runWatched(limit: .seconds(5)) { loop.blockMainThread(for: .seconds(7)) }
        #expect(outcome == .overran(deadline: LoopInstant(nanoseconds: 5_000_000_000)))
        #expect(loop.now.seconds == 5)
        let fine = loop.runWatched(limit: .seconds(5)) { loop.blockMainThread(for: .seconds(2)) }
        #expect(fine == .completed(elapsed: .seconds(2)))
    }
}
