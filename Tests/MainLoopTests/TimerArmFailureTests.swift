import Dispatch
@testable import MainLoop
import Testing
import TestSupport

/// `TimerScheduler.rearm` ignored `timerfd_settime`'s result, so
/// a timerfd the kernel refused to arm left every timer unfired (the loop
/// slept in epoll forever). Now libevent's own timeout stands in, and the
/// failure is counted.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct TimerArmFailureTests {
    @Test func timersStillFireOnTimeWhenTheTimerFDCannotBeArmed() throws {
        let loop = try MainRunLoop()
        loop.timers.armTimerFD = { _, _ in -1 }
        let start = loop.now
        var firedAt: LoopInstant?
        loop.scheduleTimer(after: .milliseconds(30)) {
            firedAt = loop.now
            loop.stop()
        }
        // A safety net: if the timer never fires, the test fails, not hangs.
        DispatchQueue.global().asyncAfter(deadline: .now() + 5) { loop.stop() }
        try loop.run()
        let fired = try #require(firedAt, "the timer never fired")
        #expect(fired - start >= .milliseconds(30), "never early")
        #expect(fired - start < .seconds(4))
        #expect(loop.timerArmFailures >= 1)
    }
}
