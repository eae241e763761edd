import MainLoop
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct OrderingTests {
    @Test func postsRunInFIFOOrder() throws {
        let loop = try MainRunLoop(deterministic: true)
        let record = Recorder()
        for index in 0..<1000 { try loop.executeInLoop { record("\(index)") } }
        #expect(record.entries.isEmpty, "posted work must not run synchronously")
        try loop.runUntilIdle()
        #expect(record.entries == (0..<1000).map { "\($0)" })
    }

    @Test func higherPriorityReadyWorkRunsFirst() throws {
        let loop = try MainRunLoop(deterministic: true)
        let record = Recorder()
        try loop.executeInLoop(priority: .app) { record("app-1") }
        try loop.executeInLoop(priority: .input) { record("input-1") }
        try loop.executeInLoop(priority: .app) { record("app-2") }
        try loop.executeInLoop(priority: .system) { record("system-1") }
        try loop.runUntilIdle()
        #expect(record.entries == ["system-1", "input-1", "app-1", "app-2"])
    }

    @Test func appDrainYieldsToSystemWorkPostedMidBatch() throws {
        let loop = try MainRunLoop(deterministic: true)
        let record = Recorder()
        try loop.executeInLoop(priority: .app) {
            record("app-1")
            try? loop.executeInLoop(priority: .system) { record("system") }
        }
        try loop.executeInLoop(priority: .app) { record("app-2") }
        try loop.runUntilIdle()
        #expect(record.entries == ["app-1", "system", "app-2"])
    }

    @Test func timersDueAtTheSameInstantRunInSchedulingOrder() throws {
        let loop = try MainRunLoop(deterministic: true)
        let record = Recorder()
        loop.scheduleTimer(after: .seconds(5)) { record("b") }
        loop.scheduleTimer(after: .seconds(3)) { record("a") }
        loop.scheduleTimer(after: .seconds(5)) { record("c") }
        loop.scheduleTimer(after: .seconds(5)) { record("d") }
        try loop.advance(by: .seconds(5))
        #expect(record.entries == ["a", "b", "c", "d"])
    }

    @Test func workPostedByATimerRunsAfterTheTimersOfThatInstant() throws {
        let loop = try MainRunLoop(deterministic: true)
        let record = Recorder()
        loop.scheduleTimer(after: .seconds(1)) {
            record("t1")
            try? loop.executeInLoop { record("posted-by-t1") }
        }
        loop.scheduleTimer(after: .seconds(1)) { record("t2") }
        try loop.advance(by: .seconds(1))
        #expect(record.entries == ["t1", "t2", "posted-by-t1"])
    }

    @Test func typedChannelDeliversValuesInOrder() throws {
        let loop = try MainRunLoop(deterministic: true)
        var received: [Int] = []
        let channel = try loop.makeChannel(of: Int.self) { received.append($0) }
        for value in 0..<5000 { try channel.post(value) }
        try loop.runUntilIdle()
        #expect(received == Array(0..<5000))
    }
}
