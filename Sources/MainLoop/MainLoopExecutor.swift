/// A `SerialExecutor` that runs Swift concurrency jobs on a ``MainRunLoop``,
/// at app priority, in enqueue order.
///
/// Every loop has one (``MainRunLoop/executor``). To isolate your own actor
/// to a loop:
///
/// ```swift
/// actor Model {
///     let loop: MainRunLoop
///     nonisolated var unownedExecutor: UnownedSerialExecutor {
///         loop.executor.asUnownedSerialExecutor()
///     }
/// }
/// ```
public final class MainLoopExecutor: SerialExecutor, @unchecked Sendable {
    private let channel: EventChannel<Job>
    private let core: LoopCore

    init(channel: EventChannel<Job>, core: LoopCore) {
        self.channel = channel
        self.core = core
    }

    /// Queues `job` on the loop (from any thread).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        do {
            try channel.postFromAnyThread(Job { job.runSynchronously(on: executor) })
        } catch {
            // A job that cannot run would leave its task suspended forever.
            preconditionFailure("MainLoopExecutor: \(error); a task was scheduled on a shut-down loop")
        }
    }

    /// Fails unless called on the loop thread (the runtime's isolation check).
    public func checkIsolated() {
        precondition(core.isLoopThread, "not isolated to this main loop: wrong thread")
    }

    /// Whether the caller is on the loop thread.
    public var isOnLoopThread: Bool { core.isLoopThread }
}
