import Glibc

/// A value guarded by a `pthread_mutex_t`: the one lock of this project
/// (its rule: state shared between threads lives in a `LockedValue`;
/// `Synchronization.Mutex` is not used).
///
/// Used instead of `Synchronization.Mutex` because on Linux that mutex locks
/// with raw futex system calls, which ThreadSanitizer cannot see, so every
/// correctly locked access would be reported as a race under
/// `swift test --sanitize=thread`. An uncontended pthread mutex costs about
/// the same (a futex fast path in glibc). `@inlinable` so the cross-thread
/// post path is specialized in the caller.
///
/// Why `@unchecked Sendable` is safe: the value is reached only inside
/// ``withLock(_:)``, under the mutex.
public final class LockedValue<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Guarded by `mutex`, which already makes every access exclusive (a
    /// nested `withLock` deadlocks rather than overlapping), so Swift's
    /// dynamic exclusivity check is skipped: it cost each `withLock` a
    /// `swift_beginAccess` with its thread-local access set (the fd
    /// dispatch row of `compare`).
    @exclusivity(unchecked) @usableFromInline var value: Value

    /// A lock around `value`.
    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
