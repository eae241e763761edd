import CLibevent
import CLinux
import Glibc
import Synchronization


private let janitorTrampoline: event_callback_fn = { _, _, context in
    let core = Unmanaged<LoopCore>.fromOpaque(context!).takeUnretainedValue()
    core.noteWake()
    core.releaseRetired()
}

private let controlTrampoline: event_callback_fn = { _, _, context in
    let loop = Unmanaged<MainRunLoop>.fromOpaque(context!).takeUnretainedValue()
    loop.core.noteWake()
    loop.receiveControl()
}

/// A serial main run loop on one libevent `event_base`.
///
/// Everything the loop runs (posted work, typed channel events, timers, fd
/// and signal callbacks) runs on the loop thread, one callback at a time,
/// higher ``LoopPriority`` first. The loop thread is the thread that created
/// the loop; `run()`, sources and timers are used from it, while `execute`,
/// channel posts and `stop()` work from any thread.
///
/// Two clocks, one scheduler:
/// - a production loop (`MainRunLoop()`) reads `CLOCK_MONOTONIC` and blocks in
///   libevent until something is ready;
/// - a deterministic loop (`MainRunLoop(deterministic: true)`) has a manual
///   clock that starts at zero and only moves in ``advance(by:)`` /
///   ``advance(to:)``, which run everything that comes due, in order, without
///   sleeping. Timers, channels and priorities are the same code in both:
///   due timers are dispatched through the same libevent event, posted work
///   through the same libevent drains.
///
/// Who protects what: fields marked "loop thread" are only touched on the
/// owner thread; the phase and the stop request are atomics; the rest is immutable.
public final class MainRunLoop: @unchecked Sendable {
    private enum RunPhase: UInt8, Equatable {
        /// Not inside libevent: `run`, `runOnce`, `runUntilIdle`, `advance`
        /// and `shutdown` may start.
        case idle
        /// Inside `run()`: a stop request ends it.
        case running
        /// Inside `runOnce`/`runUntilIdle` (and each step of `advance`).
        case dispatching
        /// Shut down for good.
        case shutDown
    }

    /// Whether this loop runs on the manual clock.
    public var isDeterministic: Bool { core.isDeterministic }

    /// The libevent backend the loop's base uses ("epoll"; tests).
    var backendMethod: String { core.base.map { String(cString: event_base_get_method($0)) } ?? "" }

    @usableFromInline let core: LoopCore
    /// What the loop is doing (a `RunPhase`), changed only on the loop
    /// thread, by ``begin(_:)``, ``end()`` and `shutdown()`, and read from
    /// any thread by ``stop()`` and ``isShutDown``.
    ///
    /// The phase and the stop request are two atomics rather than one word
    /// changed by compare-and-exchange: the loop thread is the phase's only
    /// writer, so a dispatch stores it with a plain release store, where the
    /// word cost `runOnce` two locked compare-and-exchanges (and 54 of an fd
    /// dispatch's instructions). The one handshake that needs both, a stop
    /// racing with `run()`'s start, is ordered sequentially consistent on
    /// both sides (see ``begin(_:)`` and ``stop()``).
    private let phaseWord = Atomic<UInt8>(RunPhase.idle.rawValue)
    /// Set by ``stop()`` from any thread; consumed when `run()` starts with
    /// it set, when `run()` ends, and by a deterministic `advance`.
    private let stopRequested = Atomic<Bool>(false)

    /// The phase as the loop thread sees it (it is the only writer).
    private var loopPhase: RunPhase { RunPhase(rawValue: phaseWord.load(ordering: .relaxed))! }

    /// The manual clock (deterministic loops). Loop thread.
    var manualNow: LoopInstant {
        get { core.manualNow }
        set { core.manualNow = newValue }
    }
    /// The loop's timers. A `let`, so `runOnce` reads it without a
    /// retain/release pair each time (two pairs per call as an optional `var`).
    let timers: TimerScheduler

    /// How often the kernel refused to arm the loop's timerfd, so that
    /// libevent's own (microsecond) timeout woke the loop for the timers
    /// instead: 0 on a healthy system. Loop thread only.
    public var timerArmFailures: Int { timers.armFailures }
    /// One job channel per priority (index = raw value). Immutable after
    /// init (hence no dynamic exclusivity check: `execute` paid one, and a
    /// retain and release of the channel, on every call).
    @exclusivity(unchecked) private var jobChannels: [EventChannel<Job>] = []
    /// Views of `jobChannels`, which owns them, read by `execute` without
    /// counting a reference.
    @exclusivity(unchecked) private var jobChannelViews: [Unmanaged<EventChannel<Job>>] = []
    /// Wakes the loop for `stop()` from another thread.
    let controlFD: Int32
    /// libevent's epoll descriptor, once a foreign driver asked for it.
    let backendDescriptor = LockedValue<Int32?>(nil)
    /// The event that ends a foreign driver's pass (made by its first pass).
    var foreignPassEnd: OpaquePointer?
    private var controlEvent: OpaquePointer?
    /// The main dispatch queue's link, on ``main`` only. Loop thread.
    var mainQueue: MainQueueLink?
    /// Tasks sleeping on ``clock``, resumed with an error at shutdown (nil
    /// once shut down). Any thread, under its mutex.
    let sleepers = LockedValue<[ObjectIdentifier: LoopSleeper]?>([:])
    /// Sleeps resumed whose tasks are not yet back on their executors
    /// (deterministic `runUntilIdle` waits for them). Any thread.
    let sleepersInFlight = Atomic<Int>(0)
    /// Per-loop state libraries keep with the loop (``attachment(_:make:)``),
    /// handed their shutdown once. Any thread, under its mutex.
    let attachments = LockedValue(LoopAttachments())
    /// The simulated-blocking watchdog deadline (deterministic loops). Loop thread.
    var manualWatchdog: (deadline: LoopInstant, tripped: Bool)?

    /// The Swift concurrency executor that runs jobs on this loop at app priority.
    public private(set) var executor: MainLoopExecutor!

    /// Creates a loop owned by the calling thread.
    ///
    /// - Parameter deterministic: use the manual clock instead of
    ///   `CLOCK_MONOTONIC` (tests and scenario replay).
    /// - Throws: ``MainLoopError/system(operation:errno:)`` when libevent or
    ///   the kernel cannot provide the base or its eventfd.
    public convenience init(deterministic: Bool = false) throws(MainLoopError) {
        try self.init(deterministic: deterministic, clockReading: .continuous)
    }

    /// Creates a loop on `CLOCK_MONOTONIC` owned by the calling thread,
    /// reading the clock as `clockReading` says: ``ClockReading/perCallback``
    /// makes what the loop's code does reproducible on the manual clock
    /// (a recorded session replays to the nanosecond).
    /// - Throws: ``MainLoopError/system(operation:errno:)`` when libevent or
    ///   the kernel cannot provide the base or its eventfd.
    public convenience init(clockReading: ClockReading) throws(MainLoopError) {
        try self.init(deterministic: false, clockReading: clockReading)
    }

    private init(deterministic: Bool, clockReading: ClockReading) throws(MainLoopError) {
        let perCallback = !deterministic && clockReading == .perCallback
        // A per-callback loop has one more libevent priority, below the
        // others, for the events that come from outside (see LoopCore.outsidePriority).
        guard let base = perCallback ? CLibevent_base_new_serial(LoopPriority.queueCount + 1, LoopPriority.queueCount)
                                     : CLibevent_base_new(LoopPriority.queueCount)
        else {
            throw systemError("event_base_new")
        }
        core = LoopCore(base: base, deterministic: deterministic, clockReading: clockReading)
        do throws(MainLoopError) {
            timers = try TimerScheduler(core: core)
            core.scheduler = timers
        } catch {
            event_base_free(base)
            core.base = nil
            throw error
        }
        controlFD = CLinux_eventfd_nonblocking()
        guard controlFD >= 0 else {
            let error = systemError("eventfd")
            timers.releaseAll()
            event_base_free(base)
            core.base = nil
            throw error
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        controlEvent = CLibevent_fd_event_new(base, controlFD, 1, 0, 0, controlTrampoline, context)
        do throws(MainLoopError) {
            let janitor = CLibevent_user_event_new(base, janitorTrampoline, Unmanaged.passUnretained(core).toOpaque())
            guard let janitor, event_priority_set(janitor, Int32(LoopPriority.app.rawValue)) == 0 else {
                throw systemError("creating the loop's janitor event")
            }
            core.janitorEvent = janitor
            guard let controlEvent,
                  event_priority_set(controlEvent, core.libeventPriority(.system, outside: true)) == 0,
                  CLibevent_add(controlEvent) == 0
            else { throw systemError("creating the loop's libevent events") }
            for priority in LoopPriority.allCases {
                let channel = try EventChannel<Job>(core: core, priority: priority, handler: { $0.run() },
                                                            drainer: EventChannel.drain, receiver: EventChannel.receive)
                jobChannels.append(channel)
                jobChannelViews.append(.passUnretained(channel))
                core.registered[ObjectIdentifier(channel)] = channel
            }
        } catch {
            releaseEverything()
            throw error
        }
        executor = MainLoopExecutor(channel: jobChannels[LoopPriority.app.rawValue], core: core)
    }

    deinit {
        // A loop dropped without shutdown() still releases its libevent objects.
        releaseEverything()
    }

    // MARK: Clock

    /// Now on this loop's clock: the monotonic clock, the manual one, or
    /// (``ClockReading/perCallback``) the instant the current callback began.
    public var now: LoopInstant { core.now }

    /// A per-callback loop's count of the callbacks begun: two inputs seen
    /// with the same count were applied in one turn, nothing run between
    /// them (what a session recorder marks). Loop thread only.
    package var callbackTurn: UInt64 { core.callbackTurn }

    /// How this loop reads its clock.
    public var clockReading: ClockReading { core.readsClockPerCallback ? .perCallback : .continuous }

    // MARK: Posting work

    /// Runs `work` on the loop thread, after work already posted at the same
    /// priority. Safe from any thread.
    /// - Throws: ``MainLoopError/shutDown`` after the loop was shut down.
    public func execute(priority: LoopPriority = .app, _ work: @escaping @Sendable () -> Void) throws(MainLoopError) {
        try withJobChannel(priority) { channel throws(MainLoopError) in try channel.postFromAnyThread(.closure(work)) }
    }

    /// Runs `work` on the loop thread, like ``execute(priority:_:)``, for
    /// callers already on the loop thread whose work need not be Sendable.
    /// - Precondition: called on the loop thread.
    public func executeInLoop(priority: LoopPriority = .app, _ work: @escaping () -> Void) throws(MainLoopError) {
        try withJobChannel(priority) { channel throws(MainLoopError) in try channel.postInLoop(.closure(work)) }
    }

    /// Runs `body` on the job channel of `priority`, borrowed through its
    /// view (no reference counted; `jobChannels` owns it).
    @inline(__always)
    private func withJobChannel(_ priority: LoopPriority,
                                _ body: (EventChannel<Job>) throws(MainLoopError) -> Void) throws(MainLoopError) {
        var failure: MainLoopError?
        jobChannelViews[priority.rawValue]._withUnsafeGuaranteedRef { channel in
            do throws(MainLoopError) { try body(channel) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Creates a typed channel: values posted to it are handed to `handler`
    /// on the loop thread, in post order, with no allocation per value.
    /// - Precondition: called on the loop thread.
    @inlinable
    public func makeChannel<Value>(of type: Value.Type = Value.self, priority: LoopPriority = .app,
                                   handler: @escaping (Value) -> Void) throws(MainLoopError) -> EventChannel<Value> {
        preconditionInLoop()
        // Inlined into the caller, so the drain loops are specialized there.
        let channel = try EventChannel<Value>(core: core, priority: priority, handler: handler,
                                              drainer: EventChannel<Value>.drain, receiver: EventChannel<Value>.receive)
        register(channel)
        return channel
    }

    @usableFromInline
    func register(_ channel: ChannelBase) {
        core.registered[ObjectIdentifier(channel)] = channel
    }

    // MARK: Sources

    /// Watches `fileDescriptor` for `interest`; `handler` gets what is ready.
    /// - Precondition: called on the loop thread.
    public func addFileDescriptor(_ fileDescriptor: Int32, interest: Readiness, priority: LoopPriority = .app,
                                  handler: @escaping (Readiness) -> Void) throws(MainLoopError) -> FileDescriptorSource {
        preconditionInLoop()
        let source = try FileDescriptorSource(core: core, fileDescriptor: fileDescriptor, interest: interest,
                                              priority: priority, handler: handler)
        core.registered[ObjectIdentifier(source)] = source
        return source
    }

    /// Watches `fileDescriptor` for `owner`, which the source holds weakly:
    /// `handler` gets the owner and what is ready. Once the owner is gone
    /// (released on any thread, its cleanup hop still on its way), the next
    /// readiness removes the source instead of calling anyone: a
    /// level-triggered descriptor nobody reads would otherwise be ready on
    /// every pass and, at its priority, starve the lower-priority work that
    /// carries the owner's cleanup.
    /// - Precondition: called on the loop thread.
    public func addFileDescriptor<Owner: AnyObject>(
        _ fileDescriptor: Int32, interest: Readiness, priority: LoopPriority = .app, owner: Owner,
        handler: @escaping (Owner, Readiness) -> Void
    ) throws(MainLoopError) -> FileDescriptorSource {
        let orphaned = OrphanedSourceRemover()
        let source = try addFileDescriptor(fileDescriptor, interest: interest, priority: priority) { [weak owner] ready in
            guard let owner else { return orphaned.removeSource() }
            handler(owner, ready)
        }
        orphaned.source = source
        return source
    }

    /// Delivers `signalNumber` to `handler` on the loop thread.
    /// - Throws: ``MainLoopError/signalReserved(signal:owner:)`` for a
    ///   signal reserved for someone else (``reserveSignals(_:for:)``).
    /// - Precondition: called on the loop thread.
    public func addSignal(_ signalNumber: Int32, handler: @escaping () -> Void) throws(MainLoopError) -> SignalSource {
        preconditionInLoop()
        if let owner = SignalReservations.owner(of: signalNumber) { throw .signalReserved(signal: signalNumber, owner: owner) }
        let source = try SignalSource(core: core, signalNumber: signalNumber, handler: handler)
        core.registered[ObjectIdentifier(source)] = source
        return source
    }


    // MARK: Timers

    /// Creates an unscheduled timer; schedule it with ``LoopTimer/schedule(after:repeating:)``.
    /// Reusing one timer object for many schedules allocates nothing.
    public func makeTimer(_ handler: @escaping () -> Void) -> LoopTimer {
        preconditionInLoop()
        return LoopTimer(scheduler: timers, handler: handler)
    }

    /// Schedules `handler` `delay` from now, optionally repeating.
    @discardableResult
    public func scheduleTimer(after delay: Duration, repeating interval: Duration? = nil,
                              _ handler: @escaping () -> Void) -> LoopTimer {
        let timer = makeTimer(handler)
        timer.schedule(after: delay, repeating: interval)
        return timer
    }

    /// The earliest scheduled timer deadline, if any.
    public var nextTimerDeadline: LoopInstant? { timers.nextDeadline }

    /// How many timers are scheduled.
    public var scheduledTimerCount: Int { timers.count }

    /// How many times a ``RateLimit`` paused one of the loop's sources.
    /// Loop thread only.
    public var rateLimitPauses: Int { core.rateLimitPauses }

    // MARK: Running

    /// Starts a dispatch (or a shutdown) after the one check every entry
    /// point makes, in this order: the loop thread, not shut down, not
    /// already inside the loop (libevent is not reentrant).
    /// - Returns: false when `phase` is `.running` and a pending stop
    ///   request was consumed instead (`run()` then runs no pass, only its
    ///   exit work, and returns; the phase stays `.running` until ``end()``).
    ///
    /// Inlined, as is ``end()``: each caller passes a constant phase, so
    /// the checks fold to what that phase needs (the fd dispatch row of
    /// `compare` runs `runOnce` once per dispatch).
    @inline(__always)
    private func begin(_ phase: RunPhase) throws(MainLoopError) -> Bool {
        preconditionInLoop()
        switch loopPhase {
        case .shutDown: throw .shutDown
        case .running, .dispatching: throw .reentrantDispatch
        case .idle: break
        }
        guard phase == .running else {
            phaseWord.store(phase.rawValue, ordering: .releasing)
            return true
        }
        // Against `stop()` on another thread, which stores its request and
        // then reads the phase: both sides store first and read second,
        // sequentially consistent, so at least one sees the other. Either
        // this start takes the request (and returns at once), or the stop
        // sees `.running` and wakes the loop, whose control event ends it.
        phaseWord.store(RunPhase.running.rawValue, ordering: .sequentiallyConsistent)
        return !stopRequested.exchange(false, ordering: .sequentiallyConsistent)
    }

    /// Ends what ``begin(_:)`` started; leaving `run()` consumes the stop
    /// request. A stop that comes between the two stores below stays
    /// pending, as one that comes after `run()` returned does: the next
    /// `run()` returns at once. No stop is lost.
    @inline(__always)
    private func end() {
        let phase = loopPhase
        if phase == .running { stopRequested.store(false, ordering: .sequentiallyConsistent) }
        if phase != .shutDown { phaseWord.store(RunPhase.idle.rawValue, ordering: .releasing) }
    }

    /// Runs the loop until ``stop()``, pass after pass (see ``LoopActivity``),
    /// then runs the exit handlers and the work they post, and returns. A
    /// stop requested before `run()` starts makes it run only that exit work
    /// (the request is consumed either way).
    ///
    /// Unavailable from async code: it blocks its thread until the loop
    /// stops, and in an `async` main the main thread is not yours (Swift
    /// parks it in dispatch_main(), and code after an `await` runs on
    /// another thread). Run the main loop from a synchronous `main()`, with
    /// async code in ``runMain(_:)`` or a `Task`.
    /// - Throws: ``MainLoopError/shutDown`` after shutdown,
    ///   ``MainLoopError/reentrantDispatch`` from a callback,
    ///   ``MainLoopError/system(operation:errno:)`` when libevent cannot wait.
    @available(*, noasync, message: "run() blocks its thread until stop(): call it from a synchronous main() (an async main never runs the main loop); for async code use MainRunLoop.runMain { ... } or start a Task before run()")
    public func run() throws(MainLoopError) {
        let stoppedBeforeStart = try !begin(.running)
        defer { end() }
        guard let base = core.base else { return }
        core.passHooks?.notify(.entry)
        if !stoppedBeforeStart { try runPasses(base) }
        runExitWork(base)
        core.passHooks?.notify(.exit)
    }

    /// `run()`'s passes, until a stop is requested. Without pass hooks, the
    /// loop stays inside libevent's own loop (nothing to call between its
    /// passes); the first hook added ends that, and passes go on one by one.
    /// - Throws: ``MainLoopError/system(operation:errno:)`` when libevent's
    ///   wait fails (epoll refused): a loop that cannot wait cannot run.
    private func runPasses(_ base: OpaquePointer) throws(MainLoopError) {
        while !stopRequested.load(ordering: .acquiring), !core.isShutDown {
            if let hooks = core.passHooks {
                try runPass(base, hooks, endsOnStop: true)
            } else {
                timers.activateIfDue()
                timers.rearm()
                core.inLibeventLoop = true
                let result = CLibevent_loop_forever(base)
                core.inLibeventLoop = false
                if result < 0 { throw systemError("event_base_loop") }
            }
        }
    }

    /// One pass with hooks: the observers' points, the idle handlers when
    /// nothing is ready, then libevent waits (if nothing is ready) and
    /// dispatches everything ready. `endsOnStop`: a stop requested by a
    /// hook ends the pass before the wait (`run()`; libevent's own
    /// `loopbreak` would be forgotten by the next `event_base_loop`).
    private func runPass(_ base: OpaquePointer, _ hooks: LoopPassHooks, endsOnStop: Bool) throws(MainLoopError) {
        core.noteWakeBetweenCallbacks()
        hooks.notify(.beforeTimers)
        timers.activateIfDue()
        hooks.notify(.beforeSources)
        prepareToWait(hooks)
        if endsOnStop, stopRequested.load(ordering: .acquiring) { return }
        if core.isShutDown { return }
        timers.rearm()
        let result = CLibevent_loop_once(base)
        core.noteWakeBetweenCallbacks()
        if result < 0 { throw systemError("event_base_loop") }
    }

    /// A foreign driver's pass (``dispatchReady()``) begins: the checks of
    /// every entry point.
    func beginForeignPass() throws(MainLoopError) -> Bool { try begin(.dispatching) }

    /// A foreign driver's pass ends.
    func endForeignPass() { end() }

    /// A foreign driver is about to wait: the idle handlers and the
    /// before-waiting observers, as before a wait of `run()`.
    func announceWait(_ hooks: LoopPassHooks) { prepareToWait(hooks) }

    /// When nothing is ready: the idle handlers, then (if they made nothing
    /// ready) the before-waiting observers, marking the wait for the
    /// after-waiting ones.
    private func prepareToWait(_ hooks: LoopPassHooks, announcesWait: Bool = true) {
        if hooks.hasIdleWork, !core.hasActiveEvents {
            hooks.runIdleHandlers()
            timers.activateIfDue()
        }
        guard announcesWait, !core.hasActiveEvents, !core.isShutDown else { return }
        hooks.notify(.beforeWaiting)
        if hooks.observes(.afterWaiting) {
            core.observersAwaitWake = true
            core.afterWaitingPending = true
        }
    }

    /// The exit handlers, each followed by the work it posted, until none
    /// is left (exit handlers added meanwhile included). A stop requested
    /// meanwhile changes nothing: leaving `run()` consumes it.
    func runExitWork(_ base: OpaquePointer) {
        guard let hooks = core.passHooks else { return }
        while !core.isShutDown, let exitHandler = hooks.takeNextExitHandler() {
            core.noteWakeBetweenCallbacks()
            hooks.run(exitHandler)
            dispatchUntilIdle(base, announcesWait: false)
        }
    }

    /// Waits until something is ready (real clock only), then runs what is
    /// ready, highest priority first, and returns.
    /// - Throws: ``MainLoopError/notDeterministic`` on a manual-clock loop,
    ///   ``MainLoopError/shutDown``, ``MainLoopError/reentrantDispatch``,
    ///   ``MainLoopError/system(operation:errno:)`` when libevent cannot wait.
    public func runOnce() throws(MainLoopError) {
        guard !isDeterministic else { throw .notDeterministic }
        guard try begin(.dispatching), let base = core.base else { return }
        defer { end() }
        if let hooks = core.passHooks { return try runPass(base, hooks, endsOnStop: false) }
        timers.activateIfDue()
        timers.rearm()
        if CLibevent_loop_once(base) < 0 { throw systemError("event_base_loop") }
    }

    /// Runs everything that is ready now (posted work, due timers, ready fds,
    /// work posted by that work) until nothing is left, without waiting.
    /// - Throws: ``MainLoopError/shutDown``, ``MainLoopError/reentrantDispatch``.
    public func runUntilIdle() throws(MainLoopError) {
        guard try begin(.dispatching), let base = core.base else { return }
        defer { end() }
        dispatchUntilIdle(base, announcesWait: true)
    }

    /// ``runUntilIdle()``'s work, inside a dispatch already begun: passes
    /// that never wait, until one runs nothing; then the idle handlers and
    /// (`announcesWait`: not for the exit work, after which the loop does
    /// not wait) the before-waiting observers, and more passes if they made work.
    func dispatchUntilIdle(_ base: OpaquePointer, announcesWait: Bool) {
        core.noteWakeBetweenCallbacks()
        var waitedForSleepers = 0
        let heldSignals = mainQueue?.signalsWhileHeld
        while true {
            var before: UInt64
            repeat {
                before = core.workCounter
                core.passHooks?.notify(.beforeTimers)
                timers.activateIfDue()
                core.passHooks?.notify(.beforeSources)
                _ = CLibevent_loop_nonblock(base)
                if core.isShutDown { return }
            } while core.workCounter != before
            if isDeterministic, waitsForResumedSleepers(since: heldSignals, waited: waitedForSleepers) {
                usleep(50)
                waitedForSleepers += 1
                continue
            }
            guard let hooks = core.passHooks else { return }
            prepareToWait(hooks, announcesWait: announcesWait)
            guard core.hasActiveEvents, !core.isShutDown else { return }
        }
    }

    /// Deterministic loops: whether `runUntilIdle` should wait a moment
    /// longer for tasks whose sleeps just ended. The runtime resumes a task
    /// on the global executor, which then hops it to its own executor (this
    /// loop's, or the main queue) from another thread; idle means it got
    /// there and ran. While the main queue is held such a task cannot run:
    /// then its arrival in the queue (libdispatch signals it) is enough.
    /// Waited for in 50 µs steps, at most 5 s (a task stuck elsewhere is not
    /// waited for).
    private func waitsForResumedSleepers(since heldSignals: Int?, waited: Int) -> Bool {
        guard sleepersInFlight.load(ordering: .acquiring) > 0, waited < 100_000 else { return false }
        if let link = mainQueue, link.onReadyWhileHeld != nil {
            return link.signalsWhileHeld == heldSignals && waited < 400
        }
        return true
    }

    /// Asks the loop to stop: `run()` returns after the current callback, or
    /// at once if it starts later; a deterministic `advance` ends after the
    /// current instant. Idempotent (a second request before it takes effect
    /// changes nothing) and safe from any thread; after shutdown it does
    /// nothing.
    public func stop() {
        if RunPhase(rawValue: phaseWord.load(ordering: .acquiring)) == .shutDown { return }
        // Stored before the phase is read: see `begin(_:)`.
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        switch RunPhase(rawValue: phaseWord.load(ordering: .sequentiallyConsistent))! {
        case .shutDown, .idle: return
        case .running, .dispatching:
            if core.isLoopThread {
                if let base = core.base { event_base_loopbreak(base) }
            } else {
                var one: UInt64 = 1
                _ = write(controlFD, &one, 8)
            }
        }
    }

    /// Wakes the loop if it waits in libevent (any thread).
    func wakeUp() {
        var one: UInt64 = 1
        _ = write(controlFD, &one, 8)
    }

    /// Takes a pending stop request, if any (deterministic `advance`).
    func consumeStopRequest() -> Bool {
        stopRequested.exchange(false, ordering: .sequentiallyConsistent)
    }

    /// A deterministic `advance` took a stop request: the exit handlers
    /// and their work run, as when `run()` stops; a stop requested by them
    /// changes nothing.
    func runExitWorkAfterStop() throws(MainLoopError) {
        guard core.passHooks != nil else { return }
        guard try begin(.dispatching), let base = core.base else { return }
        defer { end() }
        runExitWork(base)
        _ = consumeStopRequest()
    }

    func receiveControl() {
        var counter: UInt64 = 0
        _ = read(controlFD, &counter, 8)
        let shouldBreak = loopPhase == .running && stopRequested.load(ordering: .sequentiallyConsistent)
        if shouldBreak, let base = core.base { event_base_loopbreak(base) }
    }

    /// Releases every libevent object and descriptor the loop owns. Work
    /// still queued is dropped (call ``runUntilIdle()`` first to finish it);
    /// later posts throw ``MainLoopError/shutDown``.
    /// - Throws: ``MainLoopError/reentrantDispatch`` from a callback,
    ///   ``MainLoopError/shutDown`` when already shut down.
    public func shutdown() throws(MainLoopError) {
        _ = try begin(.dispatching)
        releaseEverything()
    }

    /// Whether ``shutdown()`` has run.
    public var isShutDown: Bool { phaseWord.load(ordering: .acquiring) == RunPhase.shutDown.rawValue }

    private func releaseEverything() {
        phaseWord.store(RunPhase.shutDown.rawValue, ordering: .releasing)
        for source in core.registered.values { source.releaseLoopResources() }
        core.registered.removeAll()
        core.retired.removeAll()
        core.passHooks?.removeAll()
        core.passHooks = nil
        core.afterWaitingPending = false
        core.observersAwaitWake = false
        if let foreignPassEnd { event_free(foreignPassEnd) }
        foreignPassEnd = nil
        if let janitor = core.janitorEvent { event_free(janitor) }
        core.janitorEvent = nil
        timers.releaseAll()
        if let controlEvent { event_free(controlEvent) }
        controlEvent = nil
        if controlFD >= 0, core.base != nil { close(controlFD) }
        if let base = core.base { event_base_free(base) }
        core.base = nil
        resumeSleepersAtShutdown()
        shutDownAttachments()
    }
}

/// Work on a loop's job channels: a posted closure, or a Swift concurrency
/// job for the loop's executor. A closure in an enum case keeps its natural
/// form inside the generic ring buffer (stored bare as a generic
/// `() -> Void` it would be re-wrapped in a thunk, one allocation per post).
/// An executor job is carried as itself: wrapped in a closure, every actor
/// hop onto the loop allocated (and the loop freed) a context.
enum Job {
    /// `execute`'s work.
    case closure(() -> Void)
    /// A job enqueued on the loop's executor, which the loop owns (so the
    /// view stays valid while the job is queued).
    case task(UnownedJob, Unmanaged<MainLoopExecutor>)

    func run() {
        switch self {
        case .closure(let work):
            work()
        case .task(let job, let executor):
            executor._withUnsafeGuaranteedRef { executor in
                // Both roles, as enqueued: isolated to this serial executor,
                // with this task executor preferred.
                job.runSynchronously(isolatedTo: executor.asUnownedSerialExecutor(),
                                     taskExecutor: executor.asUnownedTaskExecutor())
            }
        }
    }
}
