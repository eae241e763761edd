/// A loop's clock as a Swift `Clock`: `CLOCK_MONOTONIC` on a production
/// loop, the manual clock on a deterministic one.
///
/// ```swift
/// try await loop.clock.sleep(for: .milliseconds(300))
/// try await Task.sleep(for: .seconds(1), clock: loop.clock)
/// ```
///
/// A sleep waits on the loop's own timer heap, so it never returns early
/// (like every ``LoopTimer``) and it is resumed on the loop thread, in
/// deadline order with the loop's other timers; the sleeping task then
/// continues on its own executor. Cancelling the task removes the timer and
/// the sleep throws `CancellationError`; a loop shut down while tasks sleep
/// on it makes their sleeps throw ``MainLoopError/shutDown``.
///
/// On a deterministic loop, ``MainRunLoop/advance(by:)`` and
/// ``MainRunLoop/advance(to:)`` resume the sleepers that come due, each at
/// its own deadline, and code isolated to the loop (an actor whose
/// `unownedExecutor` is `loop.executor`, or `@MainActor` on
/// ``MainRunLoop/main``) runs before `advance` returns, with the clock
/// reading the instant it woke: async code is testable on the manual clock.
/// `tolerance` is accepted and not used (timers are never coalesced).
public struct LoopClock: Clock, Sendable {
    public typealias Instant = LoopInstant
    public typealias Duration = Swift.Duration

    /// The loop whose clock this is.
    public let loop: MainRunLoop

    /// Now on the loop's clock (from any thread).
    public var now: LoopInstant { loop.now }

    /// One nanosecond, the loop clock's resolution.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Suspends until `deadline` on the loop's clock (never earlier).
    ///
    /// `nonisolated(nonsending)`: the sleep starts on the caller's executor,
    /// so code isolated to the loop arms its timer before it suspends (a
    /// plain nonisolated async function would first hop to the global
    /// executor, and a deterministic `advance` could run before the timer
    /// exists). Called through the `Clock` protocol (e.g. by
    /// `Task.sleep(for:clock:)`) it may start elsewhere: then the timer is
    /// armed by a job on the loop.
    /// - Throws: `CancellationError` when the task is cancelled,
    ///   ``MainLoopError/shutDown`` when the loop is (or gets) shut down.
    nonisolated(nonsending)
    public func sleep(until deadline: LoopInstant, tolerance: Duration? = nil) async throws {
        try await sleep(until: deadline, on: #isolation)
    }

    /// The sleep, isolated to the caller's actor: the operation closure
    /// captures `isolation`, so it too runs there (a closure that does not
    /// would run on the global executor, and the continuation would arrive
    /// on another thread, after the loop may already have moved on).
    private func sleep(until deadline: LoopInstant, on isolation: isolated (any Actor)?) async throws {
        try Task.checkCancellation()
        let sleeper = LoopSleeper(loop: loop, deadline: deadline)
        // Armed here, on the caller's executor, before anything suspends.
        sleeper.arm()
        // Runs once the task is back on its executor after the resume.
        defer { sleeper.landed() }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation(isolation: isolation) { continuation in
                sleeper.attach(continuation)
            }
        } onCancel: {
            sleeper.cancel()
        }

    }
}

extension LoopClock {
    /// Suspends for `duration` on the loop's clock (never less), starting
    /// on the caller's executor like ``sleep(until:tolerance:)``.
    nonisolated(nonsending)
    public func sleep(for duration: Duration, tolerance: Duration? = nil) async throws {
        try await sleep(until: now.advanced(by: duration), tolerance: tolerance)
    }
}

extension LoopInstant: InstantProtocol {
    public typealias Duration = Swift.Duration

    /// The instant `duration` later (saturating).
    public func advanced(by duration: Duration) -> LoopInstant { self + duration }

    /// The duration from this instant to `other`.
    public func duration(to other: LoopInstant) -> Duration { other - self }
}

extension MainRunLoop {
    /// This loop's clock, for `Task.sleep(for:clock:)`, `clock.sleep(for:)`
    /// and anything generic over `Clock`.
    public var clock: LoopClock { LoopClock(loop: self) }
}
