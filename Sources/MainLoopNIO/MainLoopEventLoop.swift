import AppLifecycle
import Dispatch
import MainLoop
import NIOCore

/// A ``/MainLoop/MainRunLoop`` seen as a SwiftNIO `EventLoop`: what runs
/// on it runs on the loop thread, serially with everything else the loop
/// dispatches, at one ``/MainLoop/LoopPriority``.
///
/// Get one with ``MainLoop/MainRunLoop/eventLoop`` (app priority) or
/// ``MainLoop/MainRunLoop/eventLoop(priority:)``; the same object comes
/// back while anyone holds it, so futures compare their loops by identity
/// as NIO expects.
///
/// - `execute` posts like ``/MainLoop/MainRunLoop/execute(priority:_:)``:
///   first in, first out among the work of this priority, after work of
///   higher priorities that is ready.
/// - Scheduled tasks and callbacks are the loop's own timers: never early,
///   on the loop's clock. On a deterministic loop that is the manual clock,
///   so ``/MainLoop/MainRunLoop/advance(by:)`` runs them at their exact
///   instants and ``now`` reads it.
/// - `execute`, `scheduleTask`, `scheduleCallback` and cancellation are
///   safe from any thread.
/// - ``shutdownGracefully(queue:_:)`` closes the views of the loop, not the
///   loop (see its documentation); shutting the loop down closes them too.
public final class MainLoopEventLoop: EventLoop, CustomStringConvertible {
    /// The loop this view runs on.
    public let loop: MainRunLoop
    /// The priority its work runs at.
    public let priority: LoopPriority
    /// For an application's view: its work runs as app code, by the rules
    /// of ``/AppLifecycle/AppWorkGate``. Nil for the loop's own views.
    let gate: AppWorkGate?
    let state: EventLoopState

    init(loop: MainRunLoop, priority: LoopPriority, gate: AppWorkGate? = nil, state: EventLoopState) {
        self.loop = loop
        self.priority = priority
        self.gate = gate
        self.state = state
    }

    /// Whether this view's work runs as an application's app code (held
    /// while the app is suspended), rather than as loop work.
    public var runsAsAppCode: Bool { gate != nil }

    /// Whether the caller runs on the loop thread.
    public var inEventLoop: Bool { loop.inLoop }

    /// Now on the loop's clock (the manual clock on a deterministic loop).
    /// On a production loop this is `CLOCK_MONOTONIC`, the clock of
    /// `NIODeadline.now()`, so the two agree there.
    public var now: NIODeadline { .uptimeNanoseconds(UInt64(clamping: loop.now.nanoseconds)) }

    /// Whether ``shutdownGracefully(queue:_:)`` ran or the loop shut down:
    /// new tasks are refused.
    public var isShutDown: Bool { state.isClosed }

    /// How many `execute` closures had nowhere to run because the loop
    /// itself was shut down (they are dropped, and counted here).
    public var droppedWorkCount: Int { state.dropped.load(ordering: .relaxed) }

    public var description: String {
        "MainLoopEventLoop(\(priority), \(loop.isDeterministic ? "manual clock" : "monotonic clock")\(isShutDown ? ", shut down" : ""))"
    }

    // MARK: Running work

    /// Runs `task` on the loop thread, after the work of this priority
    /// posted before it. Keeps running after ``shutdownGracefully(queue:_:)``
    /// (futures deliver their callbacks through it); once the loop itself is
    /// shut down, `task` is dropped and counted in ``droppedWorkCount``.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        let job: @Sendable () -> Void = if let gate { { gate.run(task) } } else { task }
        do {
            if loop.inLoop {
                try loop.executeInLoop(priority: priority, job)
            } else {
                try loop.execute(priority: priority, job)
            }
        } catch {
            state.dropped.add(1, ordering: .relaxed)
        }
    }

    /// The isolated form of ``execute(_:)`` (NIO calls it on the loop thread).
    public func _executeIsolatedUnsafeUnchecked(_ task: @escaping () -> Void) {
        let job: () -> Void = if let gate { { gate.run(task) } } else { task }
        do {
            try loop.executeInLoop(priority: priority, job)
        } catch {
            state.dropped.add(1, ordering: .relaxed)
        }
    }

    /// Runs `task` on the loop and completes the future with its result;
    /// a future failed with `EventLoopError.shutdown` after shutdown.
    public func submit<T>(_ task: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        let promise = makePromise(of: T.self)
        guard !isShutDown else {
            promise.fail(EventLoopError.shutdown)
            return promise.futureResult
        }
        execute { Self.complete(promise, running: task) }
        return promise.futureResult
    }

    /// Completes `promise` with what `task` returns or throws. On the loop
    /// thread (only called from work the loop runs), so a value that is not
    /// Sendable never crosses a thread, as in NIO's own `submit`.
    private static func complete<T>(_ promise: EventLoopPromise<T>, running task: () throws -> T) {
        do {
            promise.assumeIsolatedUnsafeUnchecked().succeed(try task())
        } catch {
            promise.fail(error)
        }
    }

    // MARK: Scheduling

    /// Runs `task` on the loop thread once the loop's clock reaches
    /// `deadline` (never before). After shutdown, or at a shutdown while it
    /// waits, its future fails with `EventLoopError.shutdown`.
    @discardableResult
    public func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        let promise = makePromise(of: T.self)
        let work = ScheduledLoopWork(
            id: state.nextID.add(1, ordering: .relaxed).oldValue,
            deadline: LoopInstant(deadline),
            run: asOwner { Self.complete(promise, running: task) },
            abandoned: asOwner { promise.fail(EventLoopError.shutdown) }
        )
        schedule(work)
        return Scheduled(promise: promise) { [self] in cancel(work) }
    }

    /// Like ``scheduleTask(deadline:_:)``, `amount` from ``now``.
    @discardableResult
    public func scheduleTask<T>(in amount: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        scheduleTask(deadline: now + amount, task)
    }

    /// Calls `handler` on the loop thread once the loop's clock reaches
    /// `deadline`; its cancellation handler runs instead if the callback is
    /// cancelled first or the view shuts down first.
    /// - Throws: `EventLoopError.shutdown` after shutdown.
    @discardableResult
    public func scheduleCallback(at deadline: NIODeadline,
                                 handler: some (NIOScheduledCallbackHandler & Sendable)) throws -> NIOScheduledCallback {
        guard !isShutDown else { throw EventLoopError.shutdown }
        let work = ScheduledLoopWork(
            id: state.nextID.add(1, ordering: .relaxed).oldValue,
            deadline: LoopInstant(deadline),
            run: asOwner { [self] in handler.handleScheduledCallback(eventLoop: self) },
            abandoned: asOwner { [self] in handler.didCancelScheduledCallback(eventLoop: self) }
        )
        schedule(work)
        return NIOScheduledCallback(self, id: work.id)
    }

    /// Like ``scheduleCallback(at:handler:)``, `amount` from ``now`` (the
    /// loop's clock, so a manual clock on a deterministic loop).
    @discardableResult
    public func scheduleCallback(in amount: TimeAmount,
                                 handler: some (NIOScheduledCallbackHandler & Sendable)) throws -> NIOScheduledCallback {
        try scheduleCallback(at: now + amount, handler: handler)
    }

    /// Cancels a callback scheduled here; its cancellation handler runs
    /// once, unless it already ran, was cancelled or was failed by a shutdown.
    public func cancelScheduledCallback(_ scheduledCallback: NIOScheduledCallback) {
        guard let id = scheduledCallback.customCallbackID else {
            preconditionFailure("\(self) did not schedule \(scheduledCallback)")
        }
        guard let work = state.take(id) else { return }
        onLoop(evenAfterShutdown: true) {
            work.disarm()
            work.abandon()
        }
    }

    /// Records `work` and arms its timer on the loop thread; abandons it at
    /// once after a shutdown.
    func schedule(_ work: ScheduledLoopWork) {
        guard state.register(work) else { return onLoop(evenAfterShutdown: true) { work.abandon() } }
        if loop.inLoop { return arm(work) }
        onLoop { [self] in
            // Cancelled, or failed by a shutdown, before it got here.
            guard state.isPending(work.id) else { return }
            arm(work)
        }
    }

    private func arm(_ work: ScheduledLoopWork) {
        // The handler finds the work by its id: holding the work would tie
        // it and its timer in a cycle that a shutdown (which drops timers
        // without firing them) would never break.
        let id = work.id
        let timer = loop.makeTimer { [state] in
            guard let work = state.take(id) else { return }
            work.fire()
        }
        work.timer = timer
        timer.schedule(at: work.deadline)
    }

    /// Cancels `work` if it is still pending (its promise is failed by
    /// `Scheduled.cancel()` itself).
    func cancel(_ work: ScheduledLoopWork) {
        guard let work = state.take(work.id) else { return }
        onLoop { work.disarm() }
    }

    /// `body` as the owner of this view's work runs it: through the app's
    /// gate on an application's view (app code, held while suspended),
    /// as it is on the loop's own views.
    private func asOwner(_ body: @escaping () -> Void) -> () -> Void {
        guard let gate else { return body }
        return { gate.run(body) }
    }

    /// Runs `body` now on the loop thread, else posts it there at system
    /// priority, so that timers and cancellation handlers do not queue
    /// behind app work (a work not yet armed when it is taken is never
    /// armed). After the loop shut down, its timers are gone with it: a
    /// timer operation is dropped, and an owner's notification
    /// (`evenAfterShutdown`) runs here, since no loop thread will run it.
    private func onLoop(evenAfterShutdown: Bool = false, _ body: @escaping () -> Void) {
        if loop.inLoop { return body() }
        let handoff = LoopBound(handingOver: body, to: loop)
        do {
            try loop.execute(priority: .system) { handoff.value() }
        } catch {
            let body = handoff.valueAfterShutdown
            if evenAfterShutdown { body() }
        }
    }

    // MARK: Shutdown

    /// Closes every NIO view of this loop (not the loop: it belongs to
    /// whoever runs it, and keeps running). From then on `submit` and
    /// `scheduleTask` return futures failed with `EventLoopError.shutdown`,
    /// `scheduleCallback` throws it, and the scheduled work still pending
    /// fails with it (callbacks get their cancellation handler); `execute`
    /// keeps running on the loop so futures can still deliver their results.
    /// Safe from any thread: new tasks are refused at once; the pending
    /// work is failed on the loop thread (at once there, else when the loop
    /// next runs: its handlers run where NIO runs them), and `callback` is
    /// then called on `queue`. A second call closes nothing more and calls
    /// back likewise.
    public func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable (Error?) -> Void) {
        let abandoned = state.close()
        onLoop(evenAfterShutdown: true) {
            for work in abandoned {
                work.disarm()
                work.abandon()
            }
            queue.async { callback(nil) }
        }
    }

    // MARK: Checks

    /// `wait()` on the loop thread: allowed on a deterministic loop (the
    /// test thread drives it, as with NIO's `EmbeddedEventLoop`, and a
    /// future already completed there returns at once), a precondition
    /// failure on a production loop, where it would block the loop forever.
    public func _preconditionSafeToWait(file: StaticString, line: UInt) {
        guard !loop.isDeterministic else { return }
        preconditionNotInEventLoop(file: file, line: line)
    }

    /// `syncShutdownGracefully()` is safe anywhere: the shutdown never waits
    /// for the loop when called on its thread.
    public func _preconditionSafeToSyncShutdown(file: StaticString, line: UInt) {}
}

/// Why `@unchecked Sendable` is safe: `loop`, `priority` and `state` are
/// immutable references to Sendable objects; everything mutable lives in
/// `state` (see ``EventLoopState``).
extension MainLoopEventLoop: @unchecked Sendable {}

extension LoopInstant {
    /// The instant of a NIO deadline on the same clock (clamped to the
    /// instants a loop can represent).
    init(_ deadline: NIODeadline) {
        self.init(nanoseconds: Int64(clamping: deadline.uptimeNanoseconds))
    }
}

/// Each view is its own Swift concurrency executor (NIO's mix-in, as NIO's
/// own loops do): `eventLoop.executor` is the view itself, so an actor that
/// keeps `executor.asUnownedSerialExecutor()` keeps a live executor. Jobs
/// run through ``MainLoopEventLoop/execute(_:)``, at the view's priority
/// (and, for an application's view, as app code).
extension MainLoopEventLoop: NIOSerialEventLoopExecutor {}
