import AppLifecycle
import MainLoop
import MainLoopJSON
import SystemNotifications
import Testing
import TestSupport

/// Scheduled background work through the Swift API, on the deterministic
/// loop (the replay's scenarios 152–155 show the observations).
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ScheduledTaskTests {
    @Test func registrationAndSubmissionAreChecked() throws {
        let h = try Harness()
        #expect(throws: LifecycleError.appNotRunning(action: "registerScheduledTask", state: .notRunning)) {
            try h.app.registerScheduledTask(identifier: "r") { _ in }
        }
        try h.perform(.launch)
        #expect(throws: LifecycleError.scheduledTaskNotRegistered("r")) { try h.app.submitScheduledTask(.appRefresh("r")) }
        try h.app.registerScheduledTask(identifier: "r") { _ in }
        #expect(throws: LifecycleError.scheduledTaskAlreadyRegistered("r")) {
            try h.app.registerScheduledTask(identifier: "r") { _ in }
        }
        for index in 0..<11 { try h.app.registerScheduledTask(identifier: "p\(index)") { _ in } }
        for index in 0..<10 { try h.app.submitScheduledTask(.processing("p\(index)")) }
        #expect(throws: LifecycleError.tooManyPendingScheduledTasks(kind: .processing, limit: 10)) {
            try h.app.submitScheduledTask(.processing("p10"))
        }
        try h.app.submitScheduledTask(.processing("p3", earliestBeginAfter: .seconds(9)))
        #expect(h.app.pendingScheduledTaskRequests.count == 10, "a resubmission replaces its identifier's request")
        #expect(h.app.pendingScheduledTaskRequests.last == .processing("p3", earliestBeginAfter: .seconds(9)))
        h.app.cancelAllScheduledTasks()
        #expect(h.app.pendingScheduledTaskRequests.isEmpty)
    }

    /// A task running while the app is in the foreground is not killed at
    /// its limit: it ends, and the next due request may start.
    @Test func aForegroundTaskAtItsLimitEndsWithoutAKill() throws {
        let h = try Harness { $0.appRefreshTaskLimit = .seconds(10) }
        try h.perform(.launch)
        var started: [ScheduledTask] = []
        try h.app.registerScheduledTask(identifier: "r") { [unowned h] task in
            h.appCode("started \(task.identifier)")
            started.append(task)
        }
        try h.app.submitScheduledTask(.appRefresh("r"))
        try h.perform(.home)
        try h.loop.runUntilIdle()
        #expect(h.take().suffix(3) == ["state suspended", "state background", "started r"])
        try h.perform(.foreground)
        try h.advance(to: 11)
        #expect(!h.take().contains { $0.hasPrefix("killed") })
        #expect(started.first?.isCompleted == true)
        #expect(h.app.runningScheduledTask == nil)
        #expect(h.appCodeWhileNotRunning.isEmpty)
    }

    /// The machine is about to sleep: the running task's expiration handler
    /// runs once, then not again at its usual moment.
    @Test func sleepRunsTheExpirationHandlerOnce() throws {
        let h = try Harness { $0.appRefreshTaskLimit = .seconds(30) }
        try h.perform(.launch)
        try h.app.registerScheduledTask(identifier: "r") { [unowned h] task in
            task.expirationHandler = { h.appCode("expired") }
        }
        try h.app.submitScheduledTask(.appRefresh("r"))
        try h.perform(.home)
        try h.loop.runUntilIdle()
        h.app.expireRunningScheduledTask()
        h.app.expireRunningScheduledTask()
        try h.advance(to: 26)
        #expect(h.take().filter { $0 == "expired" }.count == 1)
        h.app.runningScheduledTask?.setTaskCompleted(success: true)
        #expect(h.app.state == .suspended)
    }

    /// A kill ends the running task, the registrations and the waiting
    /// requests: after a relaunch, an identifier must be registered again.
    @Test func aKillEndsEverythingScheduled() throws {
        let h = try Harness { $0.backgroundTaskLimit = .seconds(20); $0.expirationLead = .zero }
        try h.perform(.launch)
        var task: ScheduledTask?
        try h.app.registerScheduledTask(identifier: "r") { task = $0 }
        try h.app.registerScheduledTask(identifier: "p") { _ in }
        try h.app.submitScheduledTask(.appRefresh("r"))
        try h.app.submitScheduledTask(.processing("p", earliestBeginAfter: .seconds(100)))
        _ = try h.app.beginBackgroundTask(name: "kept open")
        try h.perform(.home)
        try h.loop.runUntilIdle()
        #expect(task != nil && task?.isCompleted == false)
        try h.advance(to: 21)
        #expect(h.take().contains("killed backgroundTimeExceeded"))
        #expect(task?.isCompleted == true)
        try h.perform(.launch)
        #expect(h.app.pendingScheduledTaskRequests.isEmpty)
        #expect(throws: LifecycleError.scheduledTaskNotRegistered("r")) { try h.app.submitScheduledTask(.appRefresh("r")) }
    }

    /// A due request that waits for its conditions starts on the event that
    /// makes them hold, even one posted while the app is suspended.
    @Test func conditionsMetByAHeldEventStartTheWork() throws {
        let h = try Harness()
        try h.perform(.launch)
        try h.app.notifications.post(SystemEvent(kind: .networkPath, value: .string("unsatisfied")))
        try h.app.registerScheduledTask(identifier: "sync") { [unowned h] _ in h.appCode("started") }
        try h.app.submitScheduledTask(.processing("sync", requiresNetworkConnectivity: true))
        try h.perform(.home)
        try h.advance(to: 5)
        #expect(!h.take().contains("started"))
        try h.app.notifications.post(SystemEvent(kind: .networkPath, value: .string("satisfied")))
        try h.loop.runUntilIdle()
        #expect(h.take().suffix(2) == ["state background", "started"])
    }
}
