import MainLoop

/// Everything one run of the app owns, from launch to the kill, terminate
/// or purge that ends it (BEHAVIOUR.md §3): open background tasks and their names,
/// running services, the keep-alive handler, app timers, work posted or
/// deferred, app fd sources, the app's run-local settings and the current
/// background period.
///
/// The application keeps it in its ``Application/Phase``; ending the run
/// tears down what the loop holds for it (``end()``) and drops it in one
/// assignment, so nothing of an earlier run can leak into the next one.
/// A class (not a struct) so app code that runs while the run is being
/// changed (a timer handler beginning a task) sees one current run.
/// Loop thread only.
final class AppRun {
    /// Open background tasks, in begin order.
    var tasks: [BackgroundTask] = []
    /// Running background services.
    var services: Set<BackgroundMode> = []
    /// Scheduled background work: launch handlers, waiting requests, the running task.
    var scheduledWork = ScheduledWork()
    /// The voip keep-alive handler, if set.
    var keepAliveHandler: (() -> Void)?
    /// App timers, owned here so a timer fires even if the app drops its handle.
    var timers: [ObjectIdentifier: AppTimer] = [:]
    /// Timers that came due while suspended, in the order they came due.
    var missedTimers: [AppTimer] = []
    /// Posted work dequeued while suspended, run after the resume, in
    /// order: the items from `deferredHead` on are still to run (a queue
    /// with O(1) take; emptied once all ran).
    private var deferredWork: [() -> Void] = []
    private var deferredHead = 0
    /// App fd sources (parked while suspended).
    var sources: [ObjectIdentifier: AppFileDescriptorSource] = [:]
    /// App path sources (held while suspended) and repeating idle handlers.
    var pathSources: [PathSource] = []
    var idleSources: [IdleSource] = []
    /// Values the app keeps for this run (``RunLocalKey``).
    var locals: [ObjectIdentifier: Any] = [:]
    /// The current background period, while in background.
    var background: BackgroundPeriod?

    /// Defers work to the resume.
    func deferWork(_ work: @escaping () -> Void) { deferredWork.append(work) }

    /// The next deferred work, in order, or nil when none is left.
    func takeDeferredWork() -> (() -> Void)? {
        guard deferredHead < deferredWork.count else { return nil }
        let work = deferredWork[deferredHead]
        deferredHead += 1
        if deferredHead == deferredWork.count {
            deferredWork.removeAll(keepingCapacity: true)
            deferredHead = 0
        }
        return work
    }

    /// The open task with `token`, if any.
    func taskIndex(_ token: BackgroundTaskToken) -> Int? { tasks.firstIndex { $0.token == token } }

    /// Tears down what the loop holds for this run: timers are cancelled and
    /// fd sources removed. Returns how much posted or deferred work is lost.
    func end() -> Int {
        for timer in timers.values { timer.cancelForKill() }
        for source in sources.values { source.removeForKill() }
        for source in pathSources { source.removeIfNeeded() }
        for source in idleSources { source.removeIfNeeded() }
        let lost = deferredWork.count - deferredHead
        tasks.removeAll()
        services.removeAll()
        keepAliveHandler = nil
        scheduledWork.running?.endedBySystem()
        scheduledWork = ScheduledWork()
        timers.removeAll()
        missedTimers.removeAll()
        deferredWork.removeAll()
        deferredHead = 0
        sources.removeAll()
        pathSources.removeAll()
        idleSources.removeAll()
        locals.removeAll()
        background = nil
        return lost
    }
}

/// One period in the background (BEHAVIOUR.md §2, §3): background time counts from
/// `start`; `expirationPassed` once the expiration instant has passed, after
/// which a new task gets no handler.
struct BackgroundPeriod {
    let start: LoopInstant
    var expirationPassed = false
}

/// A value the app keeps for one run, such as a setting it chose: dropped,
/// like everything else the app owned, when the app is killed, terminated
/// or purged. Create one key per setting and keep it (keys compare by identity).
///
/// ```swift
/// let theme = RunLocalKey<String>()
/// try application.setRunLocal("dark", for: theme)
/// application[runLocal: theme]   // "dark" until the app dies
/// ```
public final class RunLocalKey<Value>: Sendable {
    /// A new key.
    public init() {}
}
