import MainLoop

/// The iOS-style application lifecycle of SPEC §1–§3 and §5, running on a
/// ``MainRunLoop``.
///
/// The transition table lives in ``LifecycleStateMachine`` (pure); this
/// controller carries out its steps: it calls the delegate, starts and stops
/// background time, enforces the time limits with loop timers and the
/// loop's watchdog, gates app code while suspended, and tells the
/// ``LifecycleParticipant``s (the notification center) when to hold and
/// when to deliver.
///
/// Everything here runs on the loop thread: create the application there
/// and call it from there (supervisor commands arriving on other threads
/// should be posted to the loop first). Only ``deliverInput(_:)`` is safe
/// from any thread.
public final class Application {
    /// The loop everything runs on.
    public let loop: MainRunLoop
    /// The limits and declared modes.
    public let configuration: LifecycleConfiguration
    /// The app. Held strongly: the application owns its delegate.
    public var delegate: (any ApplicationDelegate)?

    /// The current state, as last announced by a `state` step.
    public private(set) var state: AppState = .notRunning
    /// The transition planner (pure).
    var machine = LifecycleStateMachine()
    /// True while a transition's steps run; commands are refused then and
    /// suspension waits for the transition's own `suspendIfIdle` step.
    private(set) var isInTransition = false

    /// Not owned: a participant (the notification center) holds the
    /// application, so a strong reference back would leak both, and the
    /// loop with them. Participants remove themselves when released.
    private var participants: [ParticipantReference] = []
    private var engineObservers: [(EngineEvent) -> Void] = []
    private var lifecycleObservers: [(id: Int, body: (LifecycleCallback) -> Void)] = []
    private var nextObserverID = 0

    // Background time (SPEC §2, §3, §5).
    /// When background time started counting, while in background.
    var backgroundStart: LoopInstant?
    /// Whether this background period's expiration handlers already ran.
    var expirationHandlersRan = false
    /// The two background deadlines (created in init, rescheduled each period).
    private(set) var expirationTimer: LoopTimer!
    private(set) var backgroundLimitTimer: LoopTimer!

    // Background tasks, in begin order.
    var tasks: [BackgroundTaskToken: BackgroundTask] = [:]
    var taskOrder: [BackgroundTaskToken] = []
    var nextTaskNumber = 1

    // Services and keep-alive.
    var runningServices: Set<BackgroundMode> = []
    var keepAliveHandler: (() -> Void)?
    private(set) var keepAliveTimer: LoopTimer!

    // App work gated by the lifecycle.
    /// Owned here so a timer fires even if the app drops its handle.
    var appTimers: [ObjectIdentifier: AppTimer] = [:]
    var missedTimers: [AppTimer] = []
    var deferredWork: [() -> Void] = []
    var appSources: [ObjectIdentifier: AppFileDescriptorSource] = [:]
    var droppedAppWork = 0
    /// Bumped when the app dies, so work queued by an earlier run is dropped.
    var appGeneration = 0
    /// What posted work holds instead of the application (see ``AppGate``).
    let gate = AppGate()

    // Local notifications (system-owned), soonest first.
    var localNotifications: [ScheduledLocalNotification] = []
    var nextLocalNotificationNumber = 0

    // Input.
    private(set) var inputChannel: EventChannel<String>!
    /// How many inputs were discarded because the app was not active.
    public internal(set) var discardedInputCount = 0

    /// An application in `notRunning` on `loop`.
    /// - Precondition: called on the loop thread.
    public init(loop: MainRunLoop, configuration: LifecycleConfiguration = LifecycleConfiguration(),
                delegate: (any ApplicationDelegate)? = nil) {
        loop.preconditionInLoop()
        self.loop = loop
        self.configuration = configuration
        self.delegate = delegate
        expirationTimer = loop.makeTimer { [unowned self] in self.runExpirationHandlers() }
        backgroundLimitTimer = loop.makeTimer { [unowned self] in self.backgroundTimeLimitReached() }
        keepAliveTimer = loop.makeTimer { [unowned self] in self.keepAliveFired() }
        gate.application = self
        do {
            inputChannel = try loop.makeChannel(of: String.self, priority: .input) { [unowned self] in self.receiveInput($0) }
        } catch {
            preconditionFailure("Application: the loop cannot create the input channel: \(error)")
        }
    }

    deinit {
        gate.application = nil
        // The loop owns the timers and the input channel, whose handlers
        // capture this application unowned: released on the loop thread
        // (the normal case), stop them so nothing fires into a freed object.
        guard loop.inLoop else { return }
        expirationTimer.cancel()
        backgroundLimitTimer.cancel()
        keepAliveTimer.cancel()
        for timer in appTimers.values { timer.cancelForKill() }
        for notification in localNotifications { notification.timer?.cancel() }
        try? inputChannel.close()
    }

    // MARK: Observers

    /// Adds an engine component that follows the lifecycle. The application
    /// does not own it: it must call ``removeParticipant(_:)`` before it is
    /// released (``SystemNotificationCenter`` does so in `deinit`).
    public func addParticipant(_ participant: any LifecycleParticipant) {
        loop.preconditionInLoop()
        participants.append(ParticipantReference(participant: participant))
    }

    /// Removes a participant added with ``addParticipant(_:)``.
    public func removeParticipant(_ participant: any LifecycleParticipant) {
        participants.removeAll { $0.participant === participant }
    }

    /// Observes engine events in every state (monitoring, replay output).
    public func addEngineObserver(_ observer: @escaping (EngineEvent) -> Void) {
        loop.preconditionInLoop()
        engineObservers.append(observer)
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
        lifecycleObservers.removeAll { $0.id == token }
    }

    func emit(_ event: EngineEvent) {
        for observer in engineObservers { observer(event) }
    }

    // MARK: Commands

    /// Carries out a lifecycle command (SPEC §1).
    /// - Throws: ``LifecycleError/commandNotAllowed(command:state:)`` when
    ///   the command is not allowed in the current state, or
    ///   ``LifecycleError/transitionInProgress(command:)`` from inside a
    ///   transition. Nothing changes then.
    public func perform(_ command: LifecycleCommand) throws(LifecycleError) {
        loop.preconditionInLoop()
        guard !isInTransition else { throw .transitionInProgress(command: command) }
        let steps = try machine.plan(command)
        runTransition(steps)
    }

    /// Runs steps in order; stops early when a step ends the app (a kill).
    func runTransition(_ steps: [LifecycleStep]) {
        let outer = isInTransition
        isInTransition = true
        defer { isInTransition = outer }
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
            for reference in participants { reference.participant.applicationShouldDeliverHeldEvents(self) }
        case .runKeepAliveHandler:
            runKeepAliveHandler()
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
        if newState == .suspended { pauseAppSources() }
        if previous == .suspended, newState.runsAppCode { resumeAppSources() }
        emit(.stateChanged(newState))
        for reference in participants { reference.participant.application(self, didEnter: newState) }
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

    /// The system kills the app (no willTerminate), SPEC §2.
    func kill(_ reason: KillReason) {
        guard let steps = machine.kill() else { return }
        emit(.killed(reason))
        runTransition(steps)
    }

    /// Suspends a background app that nothing keeps running (SPEC §3).
    /// Outside `force`, waits while a transition runs (its own
    /// `suspendIfIdle` step decides at the end).
    func suspendIfIdle(force: Bool = false) {
        guard force || !isInTransition else { return }
        guard state == .background, tasks.isEmpty, runningServices.isEmpty,
              let steps = machine.suspend() else { return }
        runTransition(steps)
    }

    /// The app dies: everything it owned goes, except what belongs to the
    /// system (scheduled local notifications survive, SPEC §5).
    private func endApp() {
        stopBackgroundTime()
        tasks.removeAll()
        taskOrder.removeAll()
        runningServices.removeAll()
        keepAliveHandler = nil
        keepAliveTimer.cancel()
        cancelAllAppTimers()
        droppedAppWork += deferredWork.count
        deferredWork.removeAll()
        removeAllAppSources()
        for reference in participants { reference.participant.applicationDidEnd(self) }
    }
}
