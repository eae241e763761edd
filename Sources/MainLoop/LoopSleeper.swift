/// One `LoopClock.sleep`: its timer, and the task's continuation, resumed
/// exactly once by whichever comes first of the timer (loop thread), the
/// task's cancellation (any thread) or the loop's shutdown.
///
/// The timer is armed when the sleep starts: at once when the sleep starts
/// on the loop thread (so code isolated to the loop has its timer before
/// it suspends, and a deterministic `advance` sees it), else by a job on
/// the loop. The continuation arrives a moment later (the runtime may run
/// `withTaskCancellationHandler`'s operation on another executor), so each
/// outcome may come before it and is kept until then. The outcome is
/// guarded by a mutex; the timer is loop-thread state.
final class LoopSleeper: @unchecked Sendable {
    private enum State {
        /// Armed; the continuation is not there yet.
        case pending
        /// Waiting for its deadline, cancellation or shutdown.
        case waiting(UnsafeContinuation<Void, any Error>)
        /// Ended before the continuation arrived; delivered when it does.
        case ended(Result<Void, any Error>)
        /// Resumed.
        case finished
    }

    private let loop: MainRunLoop
    private let deadline: LoopInstant
    private let state = LockedValue(State.pending)
    /// The timer, while scheduled. Loop thread only.
    private var timer: LoopTimer?

    init(loop: MainRunLoop, deadline: LoopInstant) {
        self.loop = loop
        self.deadline = deadline
    }

    /// Arms the timer (on the caller's thread when that is the loop thread).
    func arm() {
        guard loop.registerSleeper(self) else {
            end(.failure(MainLoopError.shutDown))
            return
        }
        if loop.inLoop {
            schedule()
        } else {
            do {
                try loop.execute(priority: .app) { self.schedule() }
            } catch {
                end(.failure(error))
            }
        }
    }

    /// Takes the task's continuation; resumes it at once if the sleep already ended.
    func attach(_ continuation: UnsafeContinuation<Void, any Error>) {
        let outcome = state.withLock { state -> Result<Void, any Error>? in
            switch state {
            case .pending:
                state = .waiting(continuation)
                return nil
            case .ended(let result):
                state = .finished
                return result
            case .waiting, .finished:
                preconditionFailure("LoopSleeper: a continuation attached twice")
            }
        }
        if let outcome { resume(continuation, with: outcome) }
    }

    /// Resumes the task; it counts as in flight until it is back on its
    /// executor (``landed()``), so a deterministic `advance` can wait for it.
    private func resume(_ continuation: UnsafeContinuation<Void, any Error>, with result: Result<Void, any Error>) {
        loop.sleepersInFlight.add(1, ordering: .relaxed)
        continuation.resume(with: result)
    }

    /// The task runs again after its sleep (on its own executor).
    func landed() {
        guard case .finished = state.withLock({ $0 }) else { return }
        let left = loop.sleepersInFlight.subtract(1, ordering: .releasing).newValue
        if left == 0, loop.isDeterministic { loop.wakeUp() }
    }

    /// The task was cancelled (any thread): the sleep ends with
    /// `CancellationError` and its timer is removed on the loop.
    func cancel() {
        guard end(.failure(CancellationError())) else { return }
        if loop.inLoop {
            unschedule()
        } else {
            // If the loop is shut down, its timers are gone already.
            _ = try? loop.execute(priority: .app) { self.unschedule() }
        }
    }

    /// Ends the sleep with `result` unless it already ended; resumes the
    /// task now if its continuation is there, else when it arrives.
    /// Returns whether this call ended it.
    @discardableResult
    func end(_ result: Result<Void, any Error>) -> Bool {
        let (ended, continuation) = state.withLock { state -> (Bool, UnsafeContinuation<Void, any Error>?) in
            switch state {
            case .pending:
                state = .ended(result)
                return (true, nil)
            case .waiting(let continuation):
                state = .finished
                return (true, continuation)
            case .ended, .finished:
                return (false, nil)
            }
        }
        if ended { loop.unregisterSleeper(self) }
        if let continuation { resume(continuation, with: result) }
        return ended
    }

    /// Loop thread: arms the timer unless the sleep already ended.
    private func schedule() {
        let isLive = state.withLock { state -> Bool in
            switch state {
            case .pending, .waiting: return true
            case .ended, .finished: return false
            }
        }
        guard isLive else { return }
        let timer = loop.makeTimer { [self] in
            self.timer = nil
            end(.success(()))
        }
        self.timer = timer
        timer.schedule(at: deadline)
    }

    /// Loop thread: removes the timer of a cancelled sleep.
    private func unschedule() {
        timer?.cancel()
        timer = nil
    }
}

extension MainRunLoop {
    /// Adds a sleeper to those ended at shutdown; false when shut down.
    func registerSleeper(_ sleeper: LoopSleeper) -> Bool {
        sleepers.withLock { sleepers in
            guard sleepers != nil else { return false }
            sleepers![ObjectIdentifier(sleeper)] = sleeper
            return true
        }
    }

    func unregisterSleeper(_ sleeper: LoopSleeper) {
        sleepers.withLock { $0?[ObjectIdentifier(sleeper)] = nil }
    }

    /// At shutdown: every sleep still waiting throws ``MainLoopError/shutDown``.
    func resumeSleepersAtShutdown() {
        let waiting = sleepers.withLock { sleepers -> [LoopSleeper] in
            defer { sleepers = nil }
            return sleepers.map { Array($0.values) } ?? []
        }
        for sleeper in waiting { sleeper.end(.failure(MainLoopError.shutDown)) }
    }
}

