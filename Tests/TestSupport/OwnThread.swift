import Glibc
import Testing

/// Runs each test of a suite on a thread of its own instead of Swift's
/// cooperative pool, which has one thread per core: a test that blocks its
/// thread (`runOnce`, a join, a wait for a child process, a poll) would
/// otherwise hold one of the two threads of this machine, and the tests
/// and time limits waiting for one would starve. The body's time limit
/// starts once it has a thread; at most ``OwnThread/slots`` such tests run
/// at once, the others waiting (without a thread) for a slot.
///
/// ```swift
/// @Suite(.ownThread, .timeLimit(.minutes(2))) struct MyTests { ... }
/// ```
public struct OwnThread: SuiteTrait, TestTrait, TestScoping {
    /// How many tests run on their own threads at once: twice the cores,
    /// at least 4 (most tests wait for I/O, a peer or a timer).
    public static let slots = max(4, 2 * Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    private static let gate = AsyncGate(slots: slots)

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> OwnThread? {
        // The test functions only: a suite's own scope would hold a slot
        // while its tests wait for one.
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        await Self.gate.enter()
        defer { Self.gate.leave() }
        let executor = ThreadExecutor()
        defer { executor.finish() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OwnThread {
    /// Each test on a thread of its own (``OwnThread``).
    public static var ownThread: OwnThread { OwnThread() }
}

/// A task executor with one thread of its own, which runs the jobs
/// enqueued on it in order until ``finish()``. A job enqueued after that
/// (a task the test started and did not wait for) goes to the global
/// executor, so nothing is left waiting for a thread that has gone.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let ready = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Under `lock`.
    private var jobs: [UnownedJob] = []
    private var finished = false

    init() {
        pthread_mutex_init(lock, nil)
        pthread_cond_init(ready, nil)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, nil, { raw in
            Unmanaged<ThreadExecutor>.fromOpaque(raw!).takeRetainedValue().serve()
            return nil
        }, context)
        precondition(status == 0, "pthread_create failed: \(status)")
        pthread_detach(thread)
    }

    deinit {
        pthread_cond_destroy(ready)
        pthread_mutex_destroy(lock)
        ready.deallocate()
        lock.deallocate()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        pthread_mutex_lock(lock)
        let open = !finished
        if open { jobs.append(unowned) }
        pthread_cond_signal(ready)
        pthread_mutex_unlock(lock)
        if !open { globalConcurrentExecutor.enqueue(ExecutorJob(unowned)) }
    }

    /// Ends the thread once the jobs enqueued so far have run.
    func finish() {
        pthread_mutex_lock(lock)
        finished = true
        pthread_cond_signal(ready)
        pthread_mutex_unlock(lock)
    }

    private func serve() {
        while true {
            pthread_mutex_lock(lock)
            while jobs.isEmpty && !finished { pthread_cond_wait(ready, lock) }
            let taken = jobs
            jobs.removeAll()
            let done = finished && taken.isEmpty
            pthread_mutex_unlock(lock)
            if done { return }
            for job in taken { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}

/// A counting semaphore for tasks: `enter` suspends (holding no thread)
/// until a slot is free. A pthread mutex, which ThreadSanitizer sees
/// (it does not see `Synchronization.Mutex`'s futex calls).
final class AsyncGate: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Under `lock`.
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(slots: Int) {
        free = slots
        pthread_mutex_init(lock, nil)
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            pthread_mutex_lock(lock)
            let admitted = free > 0
            if admitted { free -= 1 } else { waiting.append(continuation) }
            pthread_mutex_unlock(lock)
            if admitted { continuation.resume() }
        }
    }

    func leave() {
        pthread_mutex_lock(lock)
        let next = waiting.isEmpty ? nil : waiting.removeFirst()
        if next == nil { free += 1 }
        pthread_mutex_unlock(lock)
        next?.resume()
    }
}
