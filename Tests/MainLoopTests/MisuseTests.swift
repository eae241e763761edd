import Glibc
import MainLoop
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct MisuseTests {
    @Test func postingToAShutDownLoopThrows() throws {
        let loop = try MainRunLoop(deterministic: true)
        let channel = try loop.makeChannel(of: Int.self) { _ in }
        try loop.shutdown()
        #expect(throws: MainLoopError.shutDown) { try loop.execute {} }
        #expect(throws: MainLoopError.shutDown) { try loop.executeInLoop {} }
        #expect(throws: MainLoopError.shutDown) { try channel.post(1) }
        #expect(throws: MainLoopError.shutDown) { try loop.shutdown() }
        #expect(throws: MainLoopError.shutDown) { try loop.runUntilIdle() }
        loop.stop()  // nothing to stop: no error, no effect
    }

    /// A descriptor that is not open is refused with the kernel's answer,
    /// and the loop goes on. (The highest number the process may open,
    /// which nothing here opens: a number just closed could be handed to a
    /// test running beside this one.)
    @Test func aClosedDescriptorIsRefused() throws {
        let loop = try MainRunLoop(deterministic: true)
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let closed = Int32(limit.rlim_cur - 1)
        try #require(fcntl(closed, F_GETFD) == -1)
        #expect(throws: MainLoopError.system(operation: "event_add for fd \(closed)", errno: EBADF)) {
            try loop.addFileDescriptor(closed, interest: .read) { _ in }
        }
        var ran = false
        try loop.executeInLoop { ran = true }
        try loop.runUntilIdle()
        #expect(ran)
    }

    @Test func stopIsIdempotentAndConsumedByRun() throws {
        let loop = try MainRunLoop()
        loop.stop()
        loop.stop()  // the same request: no error
        try loop.run()  // consumes the pending request and returns at once
        var ran = false
        try loop.executeInLoop {
            ran = true
            loop.stop()
        }
        try loop.run()  // the earlier requests are gone: it runs the job, which stops it
        #expect(ran)
    }

    @Test func everyEntryPointRefusesReentryFromACallback() throws {
        let loop = try MainRunLoop()
        var errors: [MainLoopError] = []
        try loop.executeInLoop {
            for entry in [loop.run, loop.runOnce, loop.runUntilIdle, loop.shutdown] as [() throws(MainLoopError) -> Void] {
                do throws(MainLoopError) { try entry() } catch { errors.append(error) }
            }
        }
        try loop.runUntilIdle()
        #expect(errors == Array(repeating: .reentrantDispatch, count: 4))
        try loop.shutdown()
        #expect(throws: MainLoopError.shutDown) { try loop.run() }
        #expect(throws: MainLoopError.shutDown) { try loop.runOnce() }
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

    /// The failure names the method, its file and the rule.
    @Test func loopOnlyMethodsFailTheirPreconditionOffTheLoopThread() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try! MainRunLoop()
            let thread = TestThread { _ = loop.makeTimer {} }
            thread.join()
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("makeTimer(_:) (MainLoop/MainRunLoop.swift) must be called on its loop's thread"), "\(message)")
        #expect(message.contains("hop with loop.execute"))
    }
}
