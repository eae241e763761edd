import MainLoop
import Testing

@Suite struct MisuseTests {
    @Test func postingToAShutDownLoopThrows() throws {
        let loop = try MainRunLoop(deterministic: true)
        let channel = try loop.makeChannel(of: Int.self) { _ in }
        try loop.shutdown()
        #expect(throws: MainLoopError.shutDown) { try loop.execute {} }
        #expect(throws: MainLoopError.shutDown) { try loop.executeInLoop {} }
        #expect(throws: MainLoopError.shutDown) { try channel.post(1) }
        #expect(throws: MainLoopError.shutDown) { try loop.shutdown() }
        #expect(throws: MainLoopError.shutDown) { try loop.runUntilIdle() }
        #expect(throws: MainLoopError.shutDown) { try loop.stop() }
    }

    @Test func stoppingTwiceThrows() throws {
        let loop = try MainRunLoop()
        try loop.stop()
        #expect(throws: MainLoopError.stopAlreadyRequested) { try loop.stop() }
        try loop.run()  // consumes the pending stop and returns at once
        try loop.stop()  // a new request is fine again
    }

    @Test func manualClockCallsNeedADeterministicLoop() throws {
        let loop = try MainRunLoop()
        #expect(throws: MainLoopError.notDeterministic) { try loop.advance(by: .seconds(1)) }
        let manual = try MainRunLoop(deterministic: true)
        #expect(throws: MainLoopError.notDeterministic) { try manual.runOnce() }
    }

    @Test func runningFromInsideACallbackIsRejected() throws {
        let loop = try MainRunLoop(deterministic: true)
        var errors: [MainLoopError] = []
        try loop.executeInLoop {
            do throws(MainLoopError) { try loop.runUntilIdle() } catch { errors.append(error) }
            do throws(MainLoopError) { try loop.shutdown() } catch { errors.append(error) }
        }
        try loop.runUntilIdle()
        #expect(errors == [.reentrantDispatch, .reentrantDispatch])
    }

    @Test func loopOnlyMethodsFailTheirPreconditionOffTheLoopThread() async {
        await #expect(processExitsWith: .failure) {
            let loop = try! MainRunLoop()
            let thread = TestThread { _ = loop.makeTimer {} }
            thread.join()
        }
    }
}
