import MainLoop
import MainLoopJSON
import SystemNotifications

/// Scheduled background work, like iOS's BGTaskScheduler (BEHAVIOUR.md §3,
/// "Scheduled background work"): the app registers launch handlers and
/// submits requests; the system side here runs a due request whose
/// conditions hold, waking a suspended app into the background for it.
extension Application {
    /// Registers the launch handler of scheduled work `identifier` for
    /// this run of the app (register before submitting; a kill, terminate
    /// or purge forgets it).
    /// - Throws: ``LifecycleError/scheduledTaskAlreadyRegistered(_:)``, or
    ///   ``LifecycleError/appNotRunning(action:state:)``.
    public func registerScheduledTask(identifier: String,
                                      launchHandler: @escaping (ScheduledTask) -> Void) throws(LifecycleError) {
        let run = try requireAppCode("registerScheduledTask")
        guard run.scheduledWork.launchHandlers[identifier] == nil else { throw .scheduledTaskAlreadyRegistered(identifier) }
        run.scheduledWork.launchHandlers[identifier] = launchHandler
    }

    /// Submits a request; one already waiting with the same identifier is
    /// replaced. The work runs when the app is in the background or
    /// suspended, its begin has come and its conditions hold.
    /// - Throws: ``LifecycleError/scheduledTaskNotRegistered(_:)``,
    ///   ``LifecycleError/tooManyPendingScheduledTasks(kind:limit:)`` (one
    ///   app refresh and ten processing tasks may wait), or
    ///   ``LifecycleError/appNotRunning(action:state:)``. Nothing changes then.
    public func submitScheduledTask(_ request: ScheduledTaskRequest) throws(LifecycleError) {
        let run = try requireAppCode("submitScheduledTask")
        guard run.scheduledWork.launchHandlers[request.identifier] != nil else {
            throw .scheduledTaskNotRegistered(request.identifier)
        }
        var pending = run.scheduledWork.pending
        pending.removeAll { $0.request.identifier == request.identifier }
        let limit = ScheduledWork.limit(of: request.kind)
        guard pending.count(where: { $0.request.kind == request.kind }) < limit else {
            throw .tooManyPendingScheduledTasks(kind: request.kind, limit: limit)
        }
        pending.append(ScheduledWork.Pending(request: request, begin: loop.now + request.earliestBeginAfter))
        run.scheduledWork.pending = pending
        scheduleScheduledWorkCheck()
    }

    /// Withdraws the waiting request `identifier`, if any (a running task
    /// is not stopped).
    public func cancelScheduledTask(identifier: String) {
        loop.preconditionInLoop()
        currentRun?.scheduledWork.pending.removeAll { $0.request.identifier == identifier }
    }

    /// Withdraws every waiting request.
    public func cancelAllScheduledTasks() {
        loop.preconditionInLoop()
        currentRun?.scheduledWork.pending.removeAll()
    }

    /// The requests waiting, in submission order.
    public var pendingScheduledTaskRequests: [ScheduledTaskRequest] {
        currentRun?.scheduledWork.pending.map(\.request) ?? []
    }

    /// The scheduled task running now, if any.
    public var runningScheduledTask: ScheduledTask? { currentRun?.scheduledWork.running }

    /// The system is about to take the app's time away (the machine
    /// prepares to sleep): the running task's expiration handler runs now,
    /// unless it ran already. Its time limit still stands.
    public func expireRunningScheduledTask() {
        loop.preconditionInLoop()
        guard let task = currentRun?.scheduledWork.running, !task.expirationPassed else { return }
        enterEngine()
        defer { leaveEngine() }
        runExpiration(of: task)
    }

    // MARK: The system side

    /// Looks for due work at the next turn of the loop.
    func scheduleScheduledWorkCheck() {
        guard let run = currentRun, !run.scheduledWork.pending.isEmpty else { return }
        scheduledWorkTimer.schedule(after: .zero)
    }

    /// Whether the device is on external power and the network path is
    /// satisfied, by the engine's current values (held changes count:
    /// they are the system's state even while the app is told nothing).
    private var scheduledWorkConditions: (externalPower: Bool, network: Bool) {
        let battery = currentString(of: .batteryState)
        return (battery == "charging" || battery == "full", currentString(of: .networkPath) == "satisfied")
    }

    private func currentString(of kind: NotificationKind) -> String? {
        do {
            return try table.currentValue(of: kind).stringValue
        } catch {
            preconditionFailure("a standard kind is always registered: \(error)")
        }
    }

    /// After an input, while a due request waits for its conditions:
    /// looks again if they may hold now.
    func scheduledWorkConditionsMayHaveChanged() {
        guard let run = currentRun else {
            scheduledWorkAwaitsConditions = false
            return
        }
        let conditions = scheduledWorkConditions
        if run.scheduledWork.due(at: loop.now, externalPower: conditions.externalPower, network: conditions.network) != nil {
            scheduledWorkAwaitsConditions = false
            scheduleScheduledWorkCheck()
        }
    }

    /// Starts the due request whose conditions hold, if the app is in the
    /// background or suspended and no task runs; else waits for the next
    /// begin, for the conditions, or for the app to leave the foreground.
    func checkScheduledWork() {
        scheduledWorkAwaitsConditions = false
        guard let run = currentRun, run.scheduledWork.running == nil, !run.scheduledWork.pending.isEmpty else { return }
        guard !activity.isBusy else {
            scheduledWorkTimer.schedule(after: .zero)
            return
        }
        let now = loop.now
        if let next = run.scheduledWork.nextBegin(after: now) { scheduledWorkTimer.schedule(at: next) }
        guard state == .background || state == .suspended else { return }
        let conditions = scheduledWorkConditions
        guard let index = run.scheduledWork.due(at: now, externalPower: conditions.externalPower,
                                                network: conditions.network) else {
            scheduledWorkAwaitsConditions = run.scheduledWork.waitsForConditions(at: now)
            return
        }
        let request = run.scheduledWork.pending.remove(at: index).request
        run.scheduledWork.running = ScheduledTask(identifier: request.identifier, kind: request.kind, application: self)
        if state == .suspended {
            // The machine is suspended with the app: it plans the wake.
            guard let steps = machine.planScheduledTaskWake() else { preconditionFailure("suspended, but the machine is not") }
            runTransition(steps)
        } else {
            enterEngine()
            defer { leaveEngine() }
            launchScheduledTask()
        }
    }

    /// The `runScheduledTask` step: the limit starts and the launch
    /// handler runs.
    func launchScheduledTask() {
        guard state == .background, let run = currentRun, let task = run.scheduledWork.running,
              let handler = run.scheduledWork.launchHandlers[task.identifier] else { return }
        let limit = task.kind == .appRefresh ? configuration.appRefreshTaskLimit : configuration.processingTaskLimit
        scheduledTaskExpirationTimer.schedule(after: max(.zero, limit - configuration.expirationLead))
        scheduledTaskLimitTimer.schedule(after: limit)
        handler(task)
    }

    /// At limit − lead: the running task's expiration handler.
    func scheduledTaskExpirationReached() {
        guard let task = currentRun?.scheduledWork.running, !task.expirationPassed else { return }
        enterEngine()
        defer { leaveEngine() }
        runExpiration(of: task)
    }

    private func runExpiration(of task: ScheduledTask) {
        task.expirationPassed = true
        scheduledTaskExpirationTimer.cancel()
        guard state.runsAppCode else { return }
        task.expirationHandler?()
    }

    /// At the limit: a task still running ends; in the background the app
    /// is killed for it, as for a background task still open at its limit.
    func scheduledTaskLimitReached() {
        guard let run = currentRun, let task = run.scheduledWork.running else { return }
        task.endedBySystem()
        run.scheduledWork.running = nil
        if state == .background {
            kill(.scheduledTaskTimeExceeded)
        } else {
            scheduleScheduledWorkCheck()
        }
    }

    /// The app completed `task`: a background app with nothing else
    /// keeping it running is suspended, and the next due work may start.
    func scheduledTaskEnded(_ task: ScheduledTask) {
        guard let run = currentRun, run.scheduledWork.running === task else { return }
        run.scheduledWork.running = nil
        stopScheduledTaskTimers()
        suspendIfIdle()
        scheduleScheduledWorkCheck()
    }

    func stopScheduledTaskTimers() {
        scheduledTaskExpirationTimer.cancel()
        scheduledTaskLimitTimer.cancel()
    }
}
