import Glibc
import MainLoop
import Testing

@MainLoopActor private var actorCounter = 0

@MainLoopActor private func incrementOnTheLoop() -> Bool {
    actorCounter += 1
    return MainLoopActor.loop.inLoop
}

private actor LoopBoundModel {
    let loop: MainRunLoop
    var values: [Int] = []
    init(loop: MainRunLoop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }
    func append(_ value: Int) -> Bool {
        values.append(value)
        return loop.inLoop
    }
}

@Suite struct ConcurrencyTests {
    @Test func globalActorCodeRunsOnTheLoopThread() async {
        for _ in 0..<100 { #expect(await incrementOnTheLoop()) }
        #expect(await MainLoopActor.run { actorCounter } >= 100)
    }

    @Test func customActorOnALoopExecutor() async throws {
        let thread = try LoopThread.start()
        let model = LoopBoundModel(loop: thread.loop)
        for value in 0..<50 { #expect(await model.append(value)) }
        #expect(await model.values == Array(0..<50))
        thread.stopAndJoin()
    }
}

@Suite struct WatchdogTests {
    @Test func realClockWatchdogNoticesABlockedLoopThread() throws {
        let loop = try MainRunLoop()
        let outcome = loop.runWatched(limit: .milliseconds(20)) { loop.blockMainThread(for: .milliseconds(80)) }
        guard case .overran = outcome else {
            Issue.record("expected an overrun, got \(outcome)")
            return
        }
        let quick = loop.runWatched(limit: .milliseconds(500)) {}
        guard case .completed = quick else {
            Issue.record("expected completion, got \(quick)")
            return
        }
    }
}
