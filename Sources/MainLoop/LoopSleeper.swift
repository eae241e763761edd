/// One `LoopClock.sleep`: a continuation resumed exactly once, by whichever
/// comes first of its timer (on the loop thread), the task's cancellation
/// (any thread) or the loop's shutdown.
///
/// The continuation is guarded by a mutex because those three can race;
/// the timer is loop-thread state, created by a job the sleep posts (or at
/// once, when the sleep starts on the loop thread, so a deterministic
/// `advance` sees it).
final class LoopSleeper: @unchecked Sendable {
    private enum State {
        /// Created; the continuation is not there yet.
        case created
        /// Waiting for its deadline.
        case waiting(UnsafeContinuation<Void, any Error>)
        /// Cancelled before the continuation arrived.
        case cancelledEarly
        /// Resumed.
        case finished
    }

    private let loop: MainRunLoop
    private let deadline: LoopInstant
    private let state = LockedValue(State.created)
    /// The timer, while scheduled. Loop thread only.
    private var timer: LoopTimer?

    init(loop: MainRunLoop, deadline: LoopInstant) {
        self.loop = loop
        self.deadline = deadline
    }

    /// Takes the task's continuation and schedules the timer on the loop.
    func start(_ continuation: UnsafeContinuation<Void, any Error>) {
        // Registered before it can be resumed, so a resume always finds it.
        guard loop.registerSleeper(self) else { return continuation.resume(throwing: MainLoopError.shutDown) }
        let cancelled = state.withLock { state -> Bool in
            if case .cancelledEarly = state { return true }
            state = .waiting(continuation)
            return false
        }
        if cancelled {
            loop.unregisterSleeper(self)
            return continuation.resume(throwing: CancellationError())
        }
        if loop.inLoop {
            schedule()
        } else {
            do {
                try loop.execute(priority: .app) { self.schedule() }
            } catch {
                finish(.failure(error))
            }
        }
    }

    /// The task was cancelled (any thread): resume now, and drop the timer on the loop.
    func cancel() {
        let wasWaiting = state.withLock { state -> Bool in
            switch state {
            case .created:
                state = .cancelledEarly
                return false
            case .waiting: return true
            case .cancelledEarly, .finished: return false
            }
        }
        guard wasWaiting else { return }
        finish(.failure(CancellationError()))
        if loop.inLoop {
            unschedule()
        } else {
            // If the loop is shut down, its timers are gone already.
            _ = try? loop.execute(priority: .app) { self.unschedule() }
        }
    }

    /// Resumes the task once (later calls do nothing) and leaves the loop's registry.
    func finish(_ result: Result<Void, any Error>) {
        let continuation = state.withLock { state -> UnsafeContinuation<Void, any Error>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .finished
            return continuation
        }
        guard let continuation else { return }
        loop.unregisterSleeper(self)
        continuation.resume(with: result)
    }

    /// Loop thread: arms the timer unless the sleep already ended.
    private func schedule() {
        let isWaiting = state.withLock { state -> Bool in
            if case .waiting = state { return true }
            return false
        }
        guard isWaiting else { return }
        let timer = loop.makeTimer { [self] in
            self.timer = nil
            finish(.success(()))
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
    /// Adds a sleeper to those resumed at shutdown; false when shut down.
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
        for sleeper in waiting { sleeper.finish(.failure(MainLoopError.shutDown)) }
    }
}
