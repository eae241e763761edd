import Glibc

/// The Swift concurrency executor of a ``MainRunLoop``: runs jobs on the
/// loop thread, at app priority, in enqueue order (FIFO with the loop's
/// other app-priority work).
///
/// Every loop has one (``MainRunLoop/executor``). It is both a
/// `SerialExecutor`, to isolate your own actors to a loop, and a
/// `TaskExecutor`, to run a task's nonisolated code there:
///
/// ```swift
/// actor Model {
///     let loop: MainRunLoop
///     nonisolated var unownedExecutor: UnownedSerialExecutor {
///         loop.executor.asUnownedSerialExecutor()
///     }
/// }
///
/// Task(executorPreference: loop.executor) {
///     try await loop.clock.sleep(for: .seconds(1))   // resumes on the loop
/// }
/// ```
///
/// `assumeIsolated` works from plain loop callbacks (timers, fd handlers,
/// posted work): the runtime asks ``isIsolatingCurrentContext()``, which
/// says yes on the loop thread. On the process's main loop, `@MainActor` is
/// the way to isolate code (see ``MainRunLoop/main``).
public final class MainLoopExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    private let channel: EventChannel<Job>
    private let core: LoopCore

    init(channel: EventChannel<Job>, core: LoopCore) {
        self.channel = channel
        self.core = core
    }

    /// Queues `job` on the loop (from any thread).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        do {
            // One enqueue serves both roles: the job runs isolated to this
            // serial executor and with this task executor preferred (`Job.run`).
            try channel.postFromAnyThread(.task(job, .passUnretained(self)))
        } catch {
            let serial = asUnownedSerialExecutor(), preferred = asUnownedTaskExecutor()
            // The loop is shut down. On its thread the job still runs
            // isolated (nothing else runs there concurrently): that is how a
            // task whose sleep the shutdown ended gets its error. From another
            // thread it can never run isolated; it is dropped and said so.
            if core.isLoopThread {
                job.runSynchronously(isolatedTo: serial, taskExecutor: preferred)
            } else {
                reportDroppedJob()
            }
        }
    }

    /// How many jobs were enqueued from other threads after the loop shut
    /// down (their tasks never resume).
    public var droppedJobCount: Int { dropped.withLock { $0 } }
    private let dropped = LockedValue(0)

    private func reportDroppedJob() {
        let first = dropped.withLock { count -> Bool in
            count += 1
            return count == 1
        }
        if first {
            let message = "MainLoopExecutor: a task was enqueued on a shut-down loop from another thread; "
                + "it can never run (see droppedJobCount)\n"
            _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        }
    }

    /// Fails unless called on the loop thread (the runtime's isolation
    /// check, used when ``isIsolatingCurrentContext()`` cannot answer).
    public func checkIsolated() {
        precondition(core.isLoopThread, "not isolated to this main loop: called off the loop's thread")
    }

    /// Whether the current code runs isolated to this executor: true on the
    /// loop thread (SE-0471), so `assumeIsolated` and isolation checks work
    /// from plain loop callbacks without a crash-or-pass `checkIsolated()`.
    public func isIsolatingCurrentContext() -> Bool? { core.isLoopThread }

    /// Whether the caller is on the loop thread.
    public var isOnLoopThread: Bool { core.isLoopThread }
}
