import AppLifecycle
import Glibc
@_spi(Testing) import MainLoop
import Synchronization
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct RealClockWatchdogTests {
    /// A didEnterBackground that really blocks the loop thread past a short
    /// configured limit gets the app killed; one within it does not.
    @Test func blockedDidEnterBackgroundIsKilledOnTheRealClock() throws {
        final class Blocking: ApplicationDelegate {
            let block: Duration
            init(block: Duration) { self.block = block }
            func applicationDidEnterBackground(_ application: Application) { application.loop.blockMainThread(for: block) }
        }
        let loop = try MainRunLoop()
        var configuration = LifecycleConfiguration()
        configuration.didEnterBackgroundLimit = .milliseconds(50)
        // The application holds its delegate.
        let blocking = Blocking(block: .milliseconds(200)), quickDelegate = Blocking(block: .milliseconds(1))
        defer { withExtendedLifetime((blocking, quickDelegate)) {} }
        let app = try Application(loop: loop, configuration: configuration, delegate: blocking)
        var events: [EngineEvent] = []
        app.addEngineObserver { events.append($0) }
        try app.perform(.launch)
        let start = LoopInstant.monotonicNow()
        try app.perform(.home)
        #expect(LoopInstant.monotonicNow() - start >= .milliseconds(200), "the callback really blocked")
        #expect(events.suffix(2) == [.killed(.didEnterBackgroundTimeout), .stateChanged(.notRunning)])

        let quick = try Application(loop: loop, configuration: configuration, delegate: quickDelegate)
        try quick.perform(.launch)
        try quick.perform(.home)
        #expect(quick.state == .suspended)
    }
}

