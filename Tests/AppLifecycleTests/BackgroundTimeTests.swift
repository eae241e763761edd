import AppLifecycle
@_spi(Testing) import MainLoop
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct BackgroundTimeTests {
    private func harness(limit: Int = 30, lead: Int = 5, modes: Set<BackgroundMode> = []) throws -> Harness {
        try Harness {
            $0.backgroundTaskLimit = .seconds(limit)
            $0.expirationLead = .seconds(lead)
            $0.backgroundModes = modes
        }
    }

    @Test func expirationHandlerRunsAtLimitMinusLeadAndEndingTheTaskSuspends() throws {
        let h = try harness()
        try h.perform(.launch)
        try h.advance(to: 1)
        var token = BackgroundTaskToken.invalid
        token = try h.app.beginBackgroundTask(name: "upload") { [unowned h] in
            h.appCode("expired upload @\(h.now)")
            try? h.app.endBackgroundTask(token)
        }
        try h.advance(to: 2)
        try h.perform(.home)
        #expect(h.app.remainingBackgroundTime == .seconds(30))
        _ = h.take()
        try h.advance(to: 26.9)
        #expect(h.take().isEmpty)
        #expect(h.app.remainingBackgroundTime == .milliseconds(5_100))
        try h.advance(to: 40)
        #expect(h.take() == ["expired upload @27.0", "state suspended"])
        #expect(h.appCodeWhileNotRunning.isEmpty)
    }

    @Test func aTaskStillOpenAtTheLimitKillsTheAppWithoutWillTerminate() throws {
        let h = try harness()
        try h.perform(.launch)
        _ = try h.app.beginBackgroundTask(name: "upload") { [unowned h] in h.appCode("expired @\(h.now)") }
        try h.perform(.home)
        _ = h.take()
        try h.advance(to: 29.999)
        #expect(h.take() == ["expired @25.0"])
        try h.advance(to: 30)
        #expect(h.take() == ["killed backgroundTimeExceeded", "state notRunning"])
        #expect(h.app.openBackgroundTaskNames.isEmpty)
    }

    @Test func didEnterBackgroundOverrunKillsTheAppAtTheLimit() throws {
        let h = try Harness()
        h.didEnterBackgroundBlocks = .seconds(7)
        try h.perform(.launch)
        try h.advance(to: 2)
        _ = h.take()
        try h.perform(.home)
        #expect(h.take() == ["willResignActive", "state inactive", "state background", "didEnterBackground",
                             "killed didEnterBackgroundTimeout", "state notRunning"])
        #expect(h.now == 7)
    }

    @Test func didEnterBackgroundWithinTheLimitIsFine() throws {
        let h = try Harness()
        h.didEnterBackgroundBlocks = .seconds(5)
        try h.perform(.launch)
        try h.perform(.home)
        #expect(h.take().suffix(2) == ["didEnterBackground", "state suspended"])
        #expect(h.now == 5)
    }

    @Test func backgroundTimeIsSharedCountsOnlyInBackgroundAndRestarts() throws {
        let h = try harness()
        try h.perform(.launch)
        _ = try h.app.beginBackgroundTask(name: "a")
        #expect(h.app.remainingBackgroundTime == nil, "no background time counts in the foreground")
        try h.perform(.home)
        try h.advance(to: 10)
        _ = try h.app.beginBackgroundTask(name: "b")
        #expect(h.app.remainingBackgroundTime == .seconds(20), "tasks share one budget")
        try h.perform(.foreground)
        try h.advance(to: 100)
        #expect(h.app.state == .active, "no kill while in the foreground")
        try h.perform(.home)
        #expect(h.app.remainingBackgroundTime == .seconds(30), "background time restarts")
    }

    @Test func aTaskBegunAfterTheHandlersRanGetsNoHandlerAndKillsAtTheLimit() throws {
        let h = try harness(modes: ["audio"])
        try h.perform(.launch)
        var first = BackgroundTaskToken.invalid
        first = try h.app.beginBackgroundTask(name: "first") { [unowned h] in
            h.appCode("expired first")
            try? h.app.endBackgroundTask(first)
        }
        try h.app.startService("audio")
        try h.perform(.home)
        try h.advance(to: 26)
        _ = try h.app.beginBackgroundTask(name: "late") { [unowned h] in h.appCode("expired late") }
        try h.advance(to: 30)
        #expect(h.take().suffix(3) == ["expired first", "killed backgroundTimeExceeded", "state notRunning"])
    }

    @Test func beginReturnsTheInvalidTokenOnceBackgroundTimeRanOut() throws {
        let h = try harness(modes: ["audio"])
        try h.perform(.launch)
        try h.app.startService("audio")
        try h.perform(.home)
        try h.advance(to: 31)
        #expect(h.app.state == .background, "the service keeps the app running")
        #expect(try h.app.beginBackgroundTask(name: "too-late") == .invalid)
        #expect(h.app.remainingBackgroundTime == .zero)
    }

    @Test func endingAnUnknownOrEndedTokenIsAnErrorNotACrash() throws {
        let h = try Harness()
        try h.perform(.launch)
        let token = try h.app.beginBackgroundTask(name: "t")
        try h.app.endBackgroundTask(token)
        #expect(throws: LifecycleError.unknownBackgroundTask(token)) { try h.app.endBackgroundTask(token) }
        #expect(throws: LifecycleError.unknownBackgroundTask(BackgroundTaskToken(rawValue: 999))) {
            try h.app.endBackgroundTask(BackgroundTaskToken(rawValue: 999))
        }
        #expect(h.app.state == .active)
    }

    @Test func tokensAreUnique() throws {
        let h = try Harness()
        try h.perform(.launch)
        let tokens = try (0..<100).map { _ in try h.app.beginBackgroundTask(name: "t") }
        #expect(Set(tokens).count == 100)
        #expect(tokens.allSatisfy { $0.isValid })
    }
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct ServiceAndKeepAliveTests {
    @Test func aDeclaredServiceKeepsTheAppRunningUntilItStops() throws {
        let h = try Harness { $0.backgroundModes = ["audio"] }
        try h.perform(.launch)
        try h.app.startService("audio")
        #expect(throws: LifecycleError.undeclaredBackgroundMode("location")) { try h.app.startService("location") }
        try h.perform(.home)
        #expect(h.app.state == .background)
        try h.app.stopService("location")  // not running: a no-op
        #expect(h.app.state == .background)
        try h.app.stopService("audio")
        #expect(h.app.state == .suspended)
    }

    @Test func keepAliveNeedsVoipAndTheMinimumTimeout() throws {
        let h = try Harness()
        try h.perform(.launch)
        #expect(throws: LifecycleError.undeclaredBackgroundMode(.voip)) {
            try h.app.setKeepAliveTimeout(.seconds(600)) {}
        }
        let voip = try Harness { $0.backgroundModes = [.voip] }
        try voip.perform(.launch)
        #expect(throws: LifecycleError.keepAliveTimeoutTooShort(requested: .seconds(599), minimum: .seconds(600))) {
            try voip.app.setKeepAliveTimeout(.seconds(599)) {}
        }
    }

    @Test func keepAliveWakesASuspendedAppThenSuspendsItAgain() throws {
        let h = try Harness { $0.backgroundModes = [.voip] }
        try h.perform(.launch)
        try h.app.setKeepAliveTimeout(.seconds(600)) { [unowned h] in h.appCode("keepAlive @\(h.now)") }
        try h.perform(.home)
        _ = h.take()
        try h.advance(to: 1200)
        #expect(h.take() == ["state background", "keepAlive @600.0", "state suspended",
                             "state background", "keepAlive @1200.0", "state suspended"])
        try h.perform(.foreground)
        _ = h.take()
        try h.advance(to: 1800)
        #expect(h.take().isEmpty, "an active app is not called")
        #expect(h.appCodeWhileNotRunning.isEmpty)
    }

    /// `clearKeepAliveTimeout()` (UIKit's name) removes the handler: a
    /// suspended app is no longer woken.
    @Test func clearingTheKeepAliveTimeoutStopsTheWakes() throws {
        let h = try Harness { $0.backgroundModes = [.voip] }
        try h.perform(.launch)
        try h.app.setKeepAliveTimeout(.seconds(600)) { [unowned h] in h.appCode("keepAlive @\(h.now)") }
        try h.perform(.home)
        try h.advance(to: 600)
        #expect(h.take().contains("keepAlive @600.0"))
        try h.perform(.foreground)
        h.app.clearKeepAliveTimeout()
        try h.perform(.home)
        _ = h.take()
        try h.advance(to: 2400)
        #expect(h.take().isEmpty, "no wake after the handler was cleared")
    }

    @Test func keepAliveHandlerOverrunSuspendsTheAppAgain() throws {
        let h = try Harness { $0.backgroundModes = [.voip] }
        try h.perform(.launch)
        try h.app.setKeepAliveTimeout(.seconds(600)) { [unowned h] in
            _ = try? h.app.beginBackgroundTask(name: "held-open")
            h.loop.blockMainThread(for: .seconds(30))
        }
        try h.perform(.home)
        _ = h.take()
        try h.advance(to: 600)
        #expect(h.take() == ["state background", "state suspended"])
        #expect(h.now == 610, "the handler was cut off at its 10 s limit")
        #expect(h.app.openBackgroundTaskNames.isEmpty)
    }

    @Test func aKillClearsTheKeepAlive() throws {
        let h = try Harness { $0.backgroundModes = [.voip] }
        try h.perform(.launch)
        try h.app.setKeepAliveTimeout(.seconds(600)) { [unowned h] in h.appCode("keepAlive") }
        try h.perform(.home)
        try h.perform(.purge)
        _ = h.take()
        try h.advance(to: 2000)
        #expect(h.take().isEmpty)
    }
}
