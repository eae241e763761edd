import Glibc

/// The thread that watches callbacks run under
/// ``MainRunLoop/runWatched(limit:onOverrun:_:)`` on the real clock, one for
/// the whole process, started by the first watch.
///
/// Why a thread of its own and not `DispatchQueue.asyncAfter`: a dispatch
/// timer cannot be withdrawn. Every watched callback left one armed in
/// libdispatch for its whole limit (five seconds for didEnterBackground),
/// allocated nine times, and had libdispatch's manager thread arm it (and
/// now and then grow its timer heap) at a moment nobody chose, such as the
/// middle of a later measurement. Here a watch is a few stores under a
/// lock: a watch that ended is gone at once, and nothing allocates once
/// the list has room (it keeps its capacity).
final class WatchdogThread: @unchecked Sendable {
    /// One armed watch.
    private struct Watch {
        let id: UInt64
        /// `CLOCK_MONOTONIC` nanoseconds.
        let deadline: Int64
        let onOverrun: (@Sendable () -> Void)?
    }

    /// The process's watchdog.
    static let shared = WatchdogThread()

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    /// Everything below is guarded by `mutex` (why `@unchecked Sendable`
    /// is safe).
    private var watches: [Watch] = []
    private var nextID: UInt64 = 1
    private var started = false

    private init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        changed = .allocate(capacity: 1)
        changed.initialize(to: pthread_cond_t())
        // Timed waits on the monotonic clock, the clock the deadlines are on:
        // a wall clock set back must not delay an overrun.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(changed, &attributes)
        pthread_condattr_destroy(&attributes)
        watches.reserveCapacity(8)
    }

    /// Arms a watch that calls `onOverrun` (from the watchdog thread) if it
    /// is still armed at `deadline`. Returns its id for ``disarm(_:)``, or
    /// nil when the watchdog thread cannot be started (`pthread_create`
    /// failed; the next watch tries again).
    func arm(deadline: LoopInstant, onOverrun: (@Sendable () -> Void)?) -> UInt64? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard started || startThread() else { return nil }
        let id = nextID
        nextID &+= 1
        // The thread sleeps until the earliest deadline (or for good with
        // nothing armed), so only a new earliest watch has to wake it.
        let isEarliest = watches.allSatisfy { deadline.nanoseconds < $0.deadline }
        watches.append(Watch(id: id, deadline: deadline.nanoseconds, onOverrun: onOverrun))
        if isEarliest { pthread_cond_signal(changed) }
        return id
    }

    /// Ends the watch `id`. Returns true if it was still armed (the callback
    /// returned first), false if the watchdog already tripped it.
    func disarm(_ id: UInt64) -> Bool {
        pthread_mutex_lock(mutex)
        // No wake-up: the thread finds the watch gone when it next looks.
        let ended = watches.firstIndex(where: { $0.id == id }).map { index in
            watches.swapAt(index, watches.count - 1)
            return watches.removeLast()
        }
        pthread_mutex_unlock(mutex)
        // Its handler is released here, after the unlock: whatever that
        // releases may arm a watch of its own.
        return ended != nil
    }

    /// Called with `mutex` held.
    private func startThread() -> Bool {
        let status = HelperThread.startDetached(context: Unmanaged.passUnretained(self).toOpaque()) { raw in
            // `shared` lives for the process, so the thread needs no retain.
            HelperThread.nameCurrentThread("ml-watchdog")
            let watchdog = Unmanaged<WatchdogThread>.fromOpaque(raw!).takeUnretainedValue()
            watchdog.watch()
        }
        guard status == 0 else { return false }
        started = true
        return true
    }

    /// The thread's body: sleep until the earliest deadline, trip every
    /// watch whose deadline has passed, and again.
    private func watch() -> Never {
        pthread_mutex_lock(mutex)
        while true {
            guard let earliest = watches.indices.min(by: { watches[$0].deadline < watches[$1].deadline }) else {
                pthread_cond_wait(changed, mutex)
                continue
            }
            let deadline = watches[earliest].deadline
            guard LoopInstant.monotonicNow().nanoseconds >= deadline else {
                var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                pthread_cond_timedwait(changed, mutex, &until)
                continue
            }
            do {
                watches.swapAt(earliest, watches.count - 1)
                let tripped = watches.removeLast()
                // Outside the lock: the handler may take its own locks, or
                // arm a watch; and it is released before the lock is taken
                // again (at the end of this scope).
                pthread_mutex_unlock(mutex)
                tripped.onOverrun?()
            }
            pthread_mutex_lock(mutex)
        }
    }
}
