import TestSupport
import Testing

/// `MainRunLoop.main`: `DispatchQueue.main` and `@MainActor` on the main
/// loop and the main thread, and an app's gate on them while suspended.
/// These need the process's main thread, so each runs the MainQueueProbe
/// executable (Tests/MainQueueProbe) as a child process and reads what it printed.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct MainQueueTests {
    private func probe(_ scenario: String) throws -> [String] {
        let result = try BuiltExecutable.run("MainQueueProbe", [scenario])
        #expect(result.status == 0, "MainQueueProbe \(scenario) failed: \(result.output)\(result.error)")
        return result.output.split(separator: "\n").map(String.init)
    }

    @Test func mainQueueAndMainActorRunOnTheMainThreadInFIFOOrder() throws {
        let lines = try probe("fifo")
        #expect(lines.contains("loop work main=true"))
        #expect(lines.filter { !$0.hasPrefix("loop work") } == [
            "block 1 main=true inLoop=true",
            "main actor 1 main=true",
            "block 2",
            "main actor 2",
            "block from another thread main=true",
            "main actor from another thread main=true",
            "run returned",
        ])
    }

    /// A `@MainActor` class is the delegate and an observer: the
    /// delegate passed inline stays alive, every callback runs on the main
    /// thread, the observer gets one merged notification on resume, and an
    /// engine observer sees background and suspended as they happen.
    @Test func aMainActorDelegateAndObserverOnTheMainLoop() throws {
        #expect(try probe("mainActorApp") == [
            "monitor inactive",
            "delegate didFinishLaunching #1 main=true",
            "monitor active",
            "delegate didBecomeActive #2 main=true",
            "observer orientationDidChange x1 seen=1",
            "delegate willResignActive #3 main=true",
            "monitor inactive",
            "monitor background",
            "delegate didEnterBackground #4 main=true",
            "monitor suspended",
            "monitor background",
            "delegate willEnterForeground #5 main=true",
            "monitor inactive",
            "observer orientationDidChange x2 seen=2",
            "monitor active",
            "delegate didBecomeActive #6 main=true",
            "delegate input tap #7 main=true",
            "delegate willTerminate #8 main=true",
            "monitor notRunning",
            "delegate kept: true",
        ])
    }

    /// `MainRunLoop.runMain` runs async main-actor code on the main loop,
    /// stops when it returns and rethrows its error.
    @Test func runMainRunsAsyncCodeOnTheMainLoop() throws {
        #expect(try probe("runMain") == ["async body main=true inLoop=true", "runMain returned", "runMain rethrew"])
    }

    @Test func mainActorSleepOnTheRealClockResumesOnTheMainThread() throws {
        #expect(try probe("sleep") == ["slept enough: true main=true"])
    }

    /// Work that becomes ready while suspended waits, then runs at the
    /// resume point: after the held notifications and the missed timer, in
    /// FIFO order with the work posted before it.
    @Test func foregroundRunsHeldMainQueueWorkAfterTheResumeSequence() throws {
        #expect(try probe("foreground") == [
            "state suspended",
            "advanced to 2s, nothing ran",
            "notification orientationDidChange x1",
            "app timer runs at 2s",
            "posted work runs at 2s in active",
            "main block runs at 2s in active",
            "main actor woke, runs at 2s in active",
            "resumed",
            "later block runs in active",
            "state active, main queue held: false",
        ])
    }

    /// `wake` resumes the same way, then the app suspends again and the
    /// main queue is held again.
    @Test func wakeRunsHeldMainQueueWorkThenHoldsItAgain() throws {
        #expect(try probe("wake") == [
            "state suspended",
            "advanced to 2s, nothing ran",
            "notification orientationDidChange x1",
            "app timer runs at 2s",
            "posted work runs at 2s in background",
            "main block runs at 2s in background",
            "main actor woke, runs at 2s in background",
            "resumed",
            "state suspended, main queue held: true",
        ])
    }

    @Test func aKilledAppsMainQueueWorkWaitsForTheNextLaunch() throws {
        #expect(try probe("killed") == [
            "purged: notRunning, held: true",
            "launched: active",
            "block runs in active",
            "held: false",
        ])
    }
}
