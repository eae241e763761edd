import AppLifecycle
import Glibc
import MainLoop
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct AppWorkTests {
    @Test func missedTimersFireOnceAfterResumeInFirstMissedOrderThenKeepTheirSchedule() throws {
        let h = try Harness()
        try h.perform(.launch)
        _ = h.take()
        try h.app.scheduleTimer(after: .seconds(10), repeating: .seconds(10)) { [unowned h] in h.appCode("tick @\(h.now)") }
        try h.advance(to: 15)
        try h.app.scheduleTimer(after: .seconds(10)) { [unowned h] in h.appCode("once @\(h.now)") }
        try h.perform(.home)
        try h.advance(to: 45)
        try h.perform(.foreground)
        try h.advance(to: 55)
        let lines = h.take()
        #expect(lines.first == "tick @10.0")
        #expect(Array(lines.suffix(5)) == ["state active", "didBecomeActive", "tick @45.0", "once @45.0", "tick @50.0"])
        #expect(h.appCodeWhileNotRunning.isEmpty)
    }

    @Test func wakeRunsMissedTimersBeforeSuspendingAgain() throws {
        let h = try Harness()
        try h.perform(.launch)
        try h.app.scheduleTimer(after: .seconds(5)) { [unowned h] in h.appCode("once") }
        try h.perform(.home)
        try h.advance(to: 10)
        _ = h.take()
        try h.perform(.wake)
        #expect(h.take() == ["state background", "once", "state suspended"])
    }

    @Test func cancellingATimerAlsoCancelsAMissedFire() throws {
        let h = try Harness()
        try h.perform(.launch)
        let timer = try h.app.scheduleTimer(after: .seconds(5)) { [unowned h] in h.appCode("once") }
        try h.perform(.home)
        try h.advance(to: 10)
        #expect(timer.isPending)
        timer.cancel()
        _ = h.take()
        try h.perform(.foreground)
        #expect(!h.take().contains("once"))
    }

    @Test func inputReachesOnlyAnActiveApp() throws {
        let h = try Harness()
        try h.app.deliverInput("before-launch")
        try h.loop.runUntilIdle()
        try h.perform(.launch)
        try h.perform(.interrupt)
        try h.app.deliverInput("tap-1")
        try h.loop.runUntilIdle()
        try h.perform(.resumeFromInterrupt)
        try h.app.deliverInput("tap-2")
        try h.loop.runUntilIdle()
        let lines = h.take()
        #expect(lines.contains("discarded before-launch"))
        #expect(lines.contains("discarded tap-1"))
        #expect(lines.last == "input tap-2")
        #expect(h.app.discardedInputCount == 2)
    }

    @Test func postedWorkRunsInOrderAndActionsAreRejectedWhileSuspended() throws {
        let h = try Harness()
        try h.perform(.launch)
        for index in 1...3 { try h.app.post { [unowned h] in h.appCode("task \(index)") } }
        try h.loop.runUntilIdle()
        #expect(h.take().suffix(3) == ["task 1", "task 2", "task 3"])
        try h.perform(.home)
        #expect(throws: LifecycleError.appNotRunning(action: "post", state: .suspended)) { try h.app.post {} }
        #expect(throws: LifecycleError.appNotRunning(action: "beginBackgroundTask", state: .suspended)) {
            _ = try h.app.beginBackgroundTask(name: "x")
        }
        #expect(throws: LifecycleError.appNotRunning(action: "timer", state: .suspended)) {
            try h.app.scheduleTimer(after: .seconds(1)) {}
        }
    }

    @Test func workDequeuedWhileSuspendedWaitsForTheResume() throws {
        let h = try Harness()
        try h.perform(.launch)
        // Posted and home'd in the same callback: the work is dequeued while suspended.
        try h.loop.executeInLoop { [unowned h] in
            try? h.app.post { h.appCode("deferred") }
            try? h.perform(.home)
        }
        try h.loop.runUntilIdle()
        #expect(!h.take().contains("deferred"))
        try h.perform(.foreground)
        #expect(h.take().last == "deferred")
        #expect(h.appCodeWhileNotRunning.isEmpty)
    }

    @Test func appFileDescriptorHandlersDoNotRunWhileSuspended() throws {
        let h = try Harness()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        try h.perform(.launch)
        _ = try h.app.addFileDescriptor(fds[0], interest: .read) { [unowned h] _ in
            var buffer = [UInt8](repeating: 0, count: 16)
            _ = read(fds[0], &buffer, 16)
            h.appCode("readable")
        }
        try h.perform(.home)
        var byte: UInt8 = 7
        _ = write(fds[1], &byte, 1)
        try h.loop.runUntilIdle()
        #expect(!h.take().contains("readable"))
        try h.perform(.foreground)
        try h.loop.runUntilIdle()
        #expect(h.take().last == "readable")
        #expect(h.appCodeWhileNotRunning.isEmpty)
    }

    /// An app fd source that cannot be resumed (while the app was
    /// suspended its descriptor came to name a regular file, which epoll
    /// refuses) is reported to the engine observers, not dropped silently
    /// by a `try?`.
    ///
    /// The number is never free meanwhile (`dup2` replaces what it names in
    /// one step): the suites run in parallel in this process, and a number
    /// closed here was once handed to another test's new descriptor before
    /// the resume (epoll then accepted it and nothing failed), even above 900.
    @Test func anAppSourceThatCannotBeResumedIsReported() throws {
        let h = try Harness()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let regularFile = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)
        #expect(regularFile >= 0)
        defer { close(regularFile) }
        try h.perform(.launch)
        _ = try h.app.addFileDescriptor(fds[0], interest: .read) { _ in }
        try h.perform(.home)
        #expect(dup2(regularFile, fds[0]) == fds[0])
        _ = h.take()
        try h.perform(.foreground)
        let failures = h.take().filter { $0.hasPrefix("appSourceFailed") }
        #expect(failures.count == 1, "\(failures)")
        #expect(failures.first?.hasPrefix("appSourceFailed \(fds[0]) ") == true
                && failures.first?.contains("Operation not permitted") == true, "\(failures)")
    }

    @Test func localNotificationsAreDeliveredWhenActiveAndPresentedOtherwiseAndSurviveAKill() throws {
        let h = try Harness()
        try h.perform(.launch)
        try h.app.scheduleLocalNotification("soon", after: .seconds(5))
        try h.app.scheduleLocalNotification("later", after: .seconds(300))
        try h.advance(to: 10)
        try h.perform(.home)
        try h.perform(.purge)
        try h.advance(to: 400)
        let lines = h.take()
        #expect(lines.contains("local soon"))
        #expect(lines.last == "presented later")
    }

    @Test func onlyTheSoonestSixtyFourLocalNotificationsAreKept() throws {
        let h = try Harness()
        try h.perform(.launch)
        for index in 0..<64 { #expect(try h.app.scheduleLocalNotification("n\(index)", after: .seconds(100 + index))) }
        #expect(try !h.app.scheduleLocalNotification("latest", after: .seconds(1000)), "fires after all 64: dropped")
        #expect(try h.app.scheduleLocalNotification("soonest", after: .seconds(1)), "fires first: kept")
        #expect(h.app.scheduledLocalNotificationLabels.count == 64)
        #expect(h.app.scheduledLocalNotificationLabels.first == "soonest")
        #expect(!h.app.scheduledLocalNotificationLabels.contains("n63"), "the latest was evicted")
    }
}

/// `AppWorkGate`: other code run as the app's (MainLoopNIO's gated EventLoop).
@Suite(.ownThread, .timeLimit(.minutes(2))) struct AppWorkGateTests {
    @Test func runsNowDefersWhileSuspendedAndDropsWhenNotRunning() throws {
        let h = try Harness()
        let gate = AppWorkGate(h.app)
        #expect(gate.belongs(to: h.app) && gate.loop === h.loop)
        let before = h.app.droppedAppWorkCount
        gate.run { h.appCode("before launch") }
        #expect(h.app.droppedAppWorkCount == before + 1)
        try h.perform(.launch)
        gate.run { h.appCode("while active") }
        try h.perform(.home)
        _ = h.take()
        gate.run { h.appCode("while suspended") }
        #expect(h.take().isEmpty)
        try h.perform(.foreground)
        #expect(Array(h.take().suffix(3)) == ["state active", "didBecomeActive", "while suspended"])
        #expect(h.appCodeWhileNotRunning.isEmpty)
    }
}
