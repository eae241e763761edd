import MainLoop
import MainLoopJSON
import SystemNotifications

/// The iOS-style application lifecycle of BEHAVIOUR.md §1–§5 running on a
/// ``/MainLoop/MainRunLoop``, with its system notification engine.
///
/// The transition table lives in ``LifecycleStateMachine`` (pure) and the
/// coalescing state in ``/SystemNotifications/CoalescingTable`` (pure); this controller carries
/// out the machine's steps: it calls the delegate, starts and stops
/// background time, enforces the time limits with loop timers and the
/// loop's watchdog, gates app code while suspended, and holds, flushes or
/// discards system notifications (see ``notifications``).
///
/// **Ordering.** Every input (lifecycle command, system event, user input)
/// goes through one ordered inbox and takes effect in the order it was
/// issued: program order on the loop thread, arrival order across threads.
/// On the loop thread, ``perform(_:)``, ``deliverInput(_:)`` and the center's
/// `post` first apply everything that arrived before them, then apply
/// themselves before they return. Issued while the engine is busy (from a
/// delegate callback or an observer), events and input wait in the inbox and
/// take effect right after the current input; lifecycle commands are
/// refused then (``LifecycleError/transitionInProgress(command:)``), or
/// queued with ``submit(_:completion:)``.
///
/// **Runs.** What the app owns lives in the data of its `Phase`
/// (`AppRun`): a kill, terminate or purge drops it in one assignment.
///
/// Loop thread only, except ``deliverInput(_:)``, ``submit(_:completion:)``
/// and ``poster``. Who protects what: every stored `var` is touched on the
/// loop thread only; the inbox's cross-thread side has its own lock.
public final class Application {
    /// The application's phase: not running, or running with what the run owns.
    enum Phase {
        case notRunning
        case running(AppRun)
    }

    /// The loop everything runs on.
    public let loop: MainRunLoop
    /// The limits and declared modes.
    public let configuration: LifecycleConfiguration
    /// The app's delegate, held strongly, as `UIApplicationMain` keeps the
    /// delegate it creates: a delegate passed inline stays alive. A
    /// delegate that holds its application makes a cycle that lives as
    /// long as you keep either (for a service's app delegate, the process);
    /// set `delegate = nil` to end it sooner. For a `@MainActor` class on
    /// ``/MainLoop/MainRunLoop/main``, see ``mainActorDelegate``.
    public var delegate: (any ApplicationDelegate)?

    /// The current state, as last announced by a `state` step.
    public private(set) var state: AppState = .notRunning
    /// The transition planner (pure).
    var machine = LifecycleStateMachine()
    /// What the app owns in this run.
    var phase = Phase.notRunning
    /// What the engine is doing: idle, draining the inbox, or busy (how
    /// deep, in a transition, inputs queued meanwhile). See ``EngineActivity``.
    ///
    /// This and the other fields read for every input are
    /// `@exclusivity(unchecked)`: the loop-thread rule is the guarantee, and
    /// with the runtime's checks (these and the observer registry's) a live
    /// delivery and a held coalesce cost twice the instructions (the live
    /// notification and held coalesce rows of `compare`, probes `live` and `held`).
    @exclusivity(unchecked) var activity = EngineActivity()

    /// Every input passes through here, in order (see the type's doc). Set
    /// once in init; read for every input.
    @exclusivity(unchecked) private(set) var inbox: EventChannel<InboxEntry>!

    /// Whether this app holds the main queue (see Application+MainQueue.swift).
    var holdsMainQueue = false

    // Observers.
    private var engineObservers: [(id: Int, body: (EngineEvent) -> Void)] = []
    /// Unchecked exclusivity: read for every input while observed, changed
    /// only by add and remove (the runtime's check cost a recorded event
    /// 150 instructions, scripts/service-instructions.sh events with RECORD=1).
    @exclusivity(unchecked) private var inputObservers: [(id: Int, body: (EngineInput) -> Void,
                                                          prepared: ((PreparedEvent) -> Void)?)] = []
    /// Whether an input observer is installed: one load and test per input
    /// when none is (the live notification row of `compare`).
    @exclusivity(unchecked) var hasInputObservers = false
    private var lifecycleObservers: [(id: Int, body: (LifecycleCallback) -> Void)] = []
    private var nextObserverID = 0

    // The notification engine (see Application+Notifications.swift).
    /// The coalescing state: rules, current values, counters, held slots.
    @exclusivity(unchecked) var table: CoalescingTable
    /// Deliver, hold or only record events.
    @exclusivity(unchecked) var holdingMode = HoldingMode.notRunning
    /// Notification observers by kind slot.
    let observers = NotificationObservers()

    /// The two background deadlines (created in init, rescheduled each period).
    private(set) var expirationTimer: LoopTimer!
    private(set) var backgroundLimitTimer: LoopTimer!
    /// Fires the keep-alive (its schedule belongs to the run's handler).
    private(set) var keepAliveTimer: LoopTimer!
    /// Starts due scheduled work (at the next begin, or at once to look again).
    private(set) var scheduledWorkTimer: LoopTimer!
    /// The running scheduled task's expiration (limit − lead) and limit.
    private(set) var scheduledTaskExpirationTimer: LoopTimer!
    private(set) var scheduledTaskLimitTimer: LoopTimer!
    /// Whether a due scheduled request waits for external power or a
    /// network: then each input, once applied, looks whether they hold
    /// now. Read for every input.
    @exclusivity(unchecked) var scheduledWorkAwaitsConditions = false
    /// Gives a burst of subjects' storage back, a while after the flush
    /// that freed it (see `giveBackEngineStorage()`).
    private(set) var storageTimer: LoopTimer!

    // Local notifications: the system's, so they survive the app (BEHAVIOUR.md §5).
    var localNotifications: [ScheduledLocalNotification] = []
    var nextLocalNotificationNumber = 0
    var nextTaskNumber = 1

    /// How many inputs were discarded because the app was not active.
    public internal(set) var discardedInputCount = 0
    /// How much posted app work was dropped because the app died first.
    public internal(set) var droppedAppWorkCount = 0

    /// An application in `notRunning` on `loop`.
    /// - Parameters:
    ///   - loop: the loop it runs on; every call is made on its thread.
    ///   - configuration: the time limits and background modes (BEHAVIOUR.md §2, §3).
    ///   - delegate: the app's delegate (held strongly).
    ///   - limits: bounds on what the notification engine stores.
    /// - Precondition: called on the loop thread.
    /// - Throws: ``/MainLoop/MainLoopError`` when the application's inbox
    ///   cannot be made (an eventfd: EMFILE when the process is out of
    ///   descriptors; ``/MainLoop/MainLoopError/shutDown`` on a shut-down loop).
    public init(loop: MainRunLoop, configuration: LifecycleConfiguration = LifecycleConfiguration(),
                delegate: (any ApplicationDelegate)? = nil, limits: CoalescingLimits = CoalescingLimits()) throws(MainLoopError) {
        loop.preconditionInLoop()
        self.loop = loop
        self.configuration = configuration
        self.delegate = delegate
        table = CoalescingTable(limits: limits)
        observers.ensureSlots(table.registeredKinds.count)
        // Weak captures: the loop owns these timers and the inbox, and an
        // application may be released (on any thread) before its loop.
        expirationTimer = loop.makeTimer { [weak self] in self?.runExpirationHandlers() }
        backgroundLimitTimer = loop.makeTimer { [weak self] in self?.backgroundTimeLimitReached() }
        keepAliveTimer = loop.makeTimer { [weak self] in self?.keepAliveFired() }
        storageTimer = loop.makeTimer { [weak self] in self?.giveBackEngineStorage() }
        scheduledWorkTimer = loop.makeTimer { [weak self] in self?.checkScheduledWork() }
        scheduledTaskExpirationTimer = loop.makeTimer { [weak self] in self?.scheduledTaskExpirationReached() }
        scheduledTaskLimitTimer = loop.makeTimer { [weak self] in self?.scheduledTaskLimitReached() }
        inbox = try loop.makeChannel(of: InboxEntry.self, priority: .system) { [weak self] entry in
            self?.applyQueued(entry)
        }
    }

    deinit {
        // The loop owns the timers and the inbox; their handlers hold this
        // application weakly, so they are harmless, but their resources are
        // freed on the loop's thread (a hop when released elsewhere).
        let resources = LoopBound(handingOver: LoopResources(timers: [expirationTimer, backgroundLimitTimer, keepAliveTimer, storageTimer,
                                                                      scheduledWorkTimer, scheduledTaskExpirationTimer, scheduledTaskLimitTimer]
                                                              + localNotifications.compactMap(\.timer),
                                                            run: currentRun, inbox: inbox,
                                                            heldMainQueue: holdsMainQueue ? loop : nil),
                                  to: loop)
        if loop.inLoop {
            resources.value.release()
        } else {
            // A loop that is shut down (execute throws) already freed
            // everything it owned: nothing is left to release.
            try? loop.execute { resources.value.release() }
        }
    }

    /// The run, while the app is running.
    var currentRun: AppRun? {
        if case .running(let run) = phase { return run }
        return nil
    }

    // MARK: Observers

    /// Observes engine events in every state, synchronously, as they
    /// happen (monitoring, supervisors, metrics, replay output): a
    /// `.stateChanged(.suspended)` arrives inside the transition, while app
    /// code is already gated. Returns a token for ``removeEngineObserver(_:)``.
    @discardableResult
    public func addEngineObserver(_ observer: @escaping (EngineEvent) -> Void) -> Int {
        loop.preconditionInLoop()
        nextObserverID += 1
        engineObservers.append((nextObserverID, observer))
        return nextObserverID
    }

    /// Removes an engine observer; unknown tokens are ignored.
    public func removeEngineObserver(_ token: Int) {
        loop.preconditionInLoop()
        engineObservers.removeAll { $0.id == token }
    }

    /// Observes every input as it takes effect, in the order inputs take
    /// effect (BEHAVIOUR.md §8), from every path: the API on the loop
    /// thread, posters on other threads, the control socket, sources that
    /// post straight to the center, commands from signal handlers. An
    /// observer is called just before the input changes anything, with the
    /// engine busy (an input it issues waits, as from any observer). What
    /// it sees: a lifecycle command the state allows (a command queued with
    /// ``submit(_:completion:)`` or a poster also when refused, since its
    /// refusal is reported as ``EngineEvent/commandRejected(_:_:)``), a
    /// system event the engine accepted (a refused one changed nothing),
    /// and every user input. What a session recorder records. Returns a
    /// token for ``removeInputObserver(_:)``.
    ///
    /// With `prepared`, an event posted in its prepared form (the hot path,
    /// ``SystemNotificationCenter/post(_:)-(PreparedEvent)``) goes there as
    /// it is, instead of to `observer` in its plain form: an observer that
    /// writes events out reads the prepared one without building the plain
    /// one (``SystemNotificationCenter/subject(of:)``, ``SystemNotificationCenter/value(of:)``).
    @discardableResult
    public func addInputObserver(_ observer: @escaping (EngineInput) -> Void,
                                 prepared: ((PreparedEvent) -> Void)? = nil) -> Int {
        loop.preconditionInLoop()
        nextObserverID += 1
        inputObservers.append((nextObserverID, observer, prepared))
        hasInputObservers = true
        return nextObserverID
    }

    /// Removes an input observer; unknown tokens are ignored.
    public func removeInputObserver(_ token: Int) {
        loop.preconditionInLoop()
        inputObservers.removeAll { $0.id == token }
        hasInputObservers = !inputObservers.isEmpty
    }

    /// Tells the input observers (``hasInputObservers`` checked by the caller).
    @inline(never)
    func noteInput(_ input: EngineInput) {
        for observer in inputObservers { observer.body(input) }
    }

    /// Tells the input observers of a prepared event (turned back into its
    /// plain form only when someone observes).
    @inline(never)
    func notePrepared(_ event: PreparedEvent) {
        for observer in inputObservers {
            if let prepared = observer.prepared {
                prepared(event)
            } else {
                observer.body(.system(table.event(from: event)))
            }
        }
    }

    /// Observes lifecycle callbacks: called after the delegate's matching
    /// method, like UIKit's lifecycle notifications. Returns a token for
    /// ``removeLifecycleObserver(_:)``.
    @discardableResult
    public func addLifecycleObserver(_ observer: @escaping (LifecycleCallback) -> Void) -> Int {
        loop.preconditionInLoop()
        nextObserverID += 1
        lifecycleObservers.append((nextObserverID, observer))
        return nextObserverID
    }

    /// Removes a lifecycle observer; unknown tokens are ignored.
    public func removeLifecycleObserver(_ token: Int) {
        loop.preconditionInLoop()
        lifecycleObservers.removeAll { $0.id == token }
    }

    func emit(_ event: EngineEvent) {
        for observer in engineObservers { observer.body(event) }
    }

    // MARK: Commands

    /// Carries out a lifecycle command (BEHAVIOUR.md §1), after every input that
    /// arrived before it.
    /// - Throws: ``LifecycleError/commandNotAllowed(command:state:)`` when
    ///   the command is not allowed in the current state, or
    ///   ``LifecycleError/transitionInProgress(command:)`` while the engine
    ///   is busy (from a callback or observer; use ``submit(_:completion:)``
    ///   to queue it). Nothing changes then.
    public func perform(_ command: LifecycleCommand) throws(LifecycleError) {
        loop.preconditionInLoop()
        guard !activity.isBusy else { throw .transitionInProgress(command: command) }
        applyPendingInputs()
        enterEngine()
        defer { leaveEngine() }
        try apply(command)
    }

    /// Queues a lifecycle command behind every input issued before it; safe
    /// from any thread. `completion` (on the loop thread) gets the state
    /// the command led to, or why it was rejected; a rejection is also
    /// reported to engine observers (``EngineEvent/commandRejected(_:_:)``).
    /// On the loop thread with the engine idle, the command takes effect
    /// before this returns.
    /// - Throws: ``/MainLoop/MainLoopError/shutDown`` after the loop was shut down.
    public func submit(_ command: LifecycleCommand,
                       completion: (@Sendable (Result<AppState, LifecycleError>) -> Void)? = nil) throws(MainLoopError) {
        try enqueue(.lifecycle(command, completion: completion))
    }

    private func apply(_ command: LifecycleCommand) throws(LifecycleError) {
        let steps = try machine.plan(command)
        if hasInputObservers { noteInput(.lifecycle(command)) }
        runTransition(steps)
    }

    /// Runs steps in order; stops early when a step ends the app (a kill).
    func runTransition(_ steps: [LifecycleStep]) {
        enterEngine(transition: true)
        defer { leaveEngine(transition: true) }
        for step in steps {
            guard carryOut(step) else { return }
        }
    }

    /// Carries out one step; returns false when the app was killed by it.
    private func carryOut(_ step: LifecycleStep) -> Bool {
        switch step {
        case .enterState(let newState):
            enter(newState)
        case .callback(let callback):
            return deliverCallback(callback)
        case .startBackgroundTime:
            startBackgroundTime()
        case .stopBackgroundTime:
            stopBackgroundTime()
        case .deliverHeldNotifications:
            deliverHeldNotifications()
        case .runKeepAliveHandler:
            runKeepAliveHandler()
        case .runScheduledTask:
            launchScheduledTask()
        case .runMissedAppWork:
            runMissedAppWork()
        case .suspendIfIdle:
            suspendIfIdle(force: true)
        case .endApp:
            endApp()
        }
        return state != .notRunning || step == .enterState(.notRunning) || step == .endApp
    }

    private func enter(_ newState: AppState) {
        let previous = state
        state = newState
        if previous == .notRunning, newState != .notRunning { phase = .running(AppRun()) }
        if newState == .suspended { pauseAppSources() }
        if previous == .suspended, newState.runsAppCode { resumeAppSources() }
        updateMainQueueHold(from: previous, to: newState)
        updateHoldingMode(for: newState)
        emit(.stateChanged(newState))
        // Scheduled work waits while the app is in the foreground.
        if newState == .background || newState == .suspended { scheduleScheduledWorkCheck() }
    }

    /// Calls the delegate method, then the lifecycle observers. The
    /// didEnterBackground callback runs under the watchdog; overrunning it
    /// kills the app. Returns false when the app was killed.
    private func deliverCallback(_ callback: LifecycleCallback) -> Bool {
        guard callback == .didEnterBackground else {
            invokeDelegate(callback)
            return true
        }
        let outcome = loop.runWatched(limit: configuration.didEnterBackgroundLimit) { invokeDelegate(callback) }
        if case .overran = outcome {
            kill(.didEnterBackgroundTimeout)
            return false
        }
        return true
    }

    private func invokeDelegate(_ callback: LifecycleCallback) {
        if let delegate {
            switch callback {
            case .willFinishLaunching: delegate.applicationWillFinishLaunching(self)
            case .didFinishLaunching: delegate.applicationDidFinishLaunching(self)
            case .didBecomeActive: delegate.applicationDidBecomeActive(self)
            case .willResignActive: delegate.applicationWillResignActive(self)
            case .didEnterBackground: delegate.applicationDidEnterBackground(self)
            case .willEnterForeground: delegate.applicationWillEnterForeground(self)
            case .willTerminate: delegate.applicationWillTerminate(self)
            }
        }
        for observer in lifecycleObservers { observer.body(callback) }
    }

    /// The system kills the app (no willTerminate), BEHAVIOUR.md §2.
    func kill(_ reason: KillReason) {
        guard let steps = machine.kill() else { return }
        emit(.killed(reason))
        runTransition(steps)
    }

    /// Suspends a background app that nothing keeps running (BEHAVIOUR.md §3).
    /// Outside `force`, waits while a transition runs (its own
    /// `suspendIfIdle` step decides at the end).
    func suspendIfIdle(force: Bool = false) {
        guard force || !activity.isInTransition else { return }
        guard state == .background, let run = currentRun, run.tasks.isEmpty, run.services.isEmpty,
              run.scheduledWork.running == nil, let steps = machine.suspend() else { return }
        runTransition(steps)
    }

    /// The app dies: everything its run owned goes at once, and what is held
    /// for it is discarded. Local notifications survive (they are the system's).
    private func endApp() {
        stopBackgroundTime()
        keepAliveTimer.cancel()
        stopScheduledTaskTimers()
        scheduledWorkTimer.cancel()
        scheduledWorkAwaitsConditions = false
        if let run = currentRun { droppedAppWorkCount += run.end() }
        phase = .notRunning
        table.discard()
    }
}

/// What an application leaves on its loop, released on the loop's thread
/// (carried there in a ``/MainLoop/LoopBound``).
private struct LoopResources {
    let timers: [LoopTimer]
    let run: AppRun?
    let inbox: EventChannel<InboxEntry>?
    /// The main loop, when the application held its main queue.
    let heldMainQueue: MainRunLoop?

    func release() {
        for timer in timers { timer.cancel() }
        _ = run?.end()
        // Closing fails only for an inbox already closed or a loop already
        // shut down: either way there is nothing left to release.
        try? inbox?.close()
        // A released app gates nothing any more: what waited runs.
        heldMainQueue?.releaseMainQueue(drainNow: false)
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension Application: Sendable {}
