/// At most ``burst`` dispatches of a source in each window of ``interval``,
/// sd-event's rate limit (`sd_event_source_set_ratelimit`): a window
/// begins with the first dispatch after the previous window ended; the
/// dispatch that would exceed the burst does not run, and the source is
/// paused until its window ends. Nothing that came meanwhile is lost: a
/// readable descriptor is still readable, a signal that arrived is
/// delivered once, a timer's tick runs when the window ends. The loop
/// counts each pause (``MainRunLoop/rateLimitPauses``).
///
/// Set on ``FileDescriptorSource``, ``SignalSource`` and ``LoopTimer``
/// with their `setRateLimit(_:)`. Windows are measured on the loop's clock,
/// so they run on the manual clock in deterministic mode.
public struct RateLimit: Sendable, Hashable, CustomStringConvertible {
    /// The window's length.
    public let interval: Duration
    /// How many dispatches a window allows.
    public let burst: Int

    /// - Throws: ``MainLoopError/invalidArgument(_:)`` unless `interval`
    ///   is positive and `burst` at least 1.
    public init(interval: Duration, burst: Int) throws(MainLoopError) {
        guard interval > .zero else { throw .invalidArgument("a rate limit's interval must be positive, not \(interval)") }
        guard burst >= 1 else { throw .invalidArgument("a rate limit's burst must be at least 1, not \(burst)") }
        self.interval = interval
        self.burst = burst
    }

    /// "at most 5 in 1.0 seconds".
    public var description: String { "at most \(burst) in \(interval)" }
}

/// A source's current window and its pause (loop thread only).
struct RateLimitWindow {
    let limit: RateLimit
    /// When the current window began (nanoseconds on the loop's clock).
    private var begin: Int64 = 0
    /// Dispatches in the current window (0: no window yet).
    private var count = 0

    init(_ limit: RateLimit) { self.limit = limit }

    /// Whether a dispatch at `now` is allowed, counting it (sd-event's
    /// `ratelimit_below`). A window is [begin, begin + interval): sd-event
    /// starts a new one only strictly after that end, which on the real
    /// clock is the same, but on the manual clock, where the resume runs at
    /// exactly the end, would pause the source again at the same instant.
    mutating func admits(at now: LoopInstant) -> Bool {
        if count == 0 || now.nanoseconds &- begin >= limit.interval.nanosecondsClamped {
            begin = now.nanoseconds
            count = 1
            return true
        }
        if count < Int.max { count += 1 }
        return count <= limit.burst
    }

    /// When the current window ends: the paused source resumes then.
    var windowEnd: LoopInstant {
        let (end, overflow) = begin.addingReportingOverflow(limit.interval.nanosecondsClamped)
        return LoopInstant(nanoseconds: overflow ? .max : end)
    }
}

/// A source paused by its rate limit: a timer on the loop that resumes it
/// when the window ends, and the count of pauses the loop reports.
final class RateLimitPause {
    private let timer: LoopTimer?

    init(core: LoopCore, until end: LoopInstant, resume: @escaping () -> Void) {
        core.rateLimitPauses += 1
        timer = core.scheduler.map { LoopTimer(scheduler: $0, handler: resume) }
        timer?.schedule(at: end)
    }

    func cancel() { timer?.cancel() }
}

/// A source's rate limit: the window, and past its burst the pause until
/// the window ends. Shared by the fd, signal and path sources, which each
/// say what pausing means for them (a descriptor leaves epoll, a signal is
/// remembered, path events are kept) and what resuming does.
struct SourceRateLimit {
    private var window: RateLimitWindow?
    private var pause: RateLimitPause?

    /// The limit, if one is set.
    var limit: RateLimit? { window?.limit }
    /// Whether a limit is set (one check per dispatch).
    var isLimited: Bool { window != nil }
    /// Whether the source waits for its window to end.
    var isPaused: Bool { pause != nil }

    /// Sets the limit (nil lifts it). Returns true when lifting it ended a
    /// pause: the source resumes now.
    mutating func set(_ newLimit: RateLimit?) -> Bool {
        window = newLimit.map(RateLimitWindow.init)
        guard newLimit == nil, pause != nil else { return false }
        endPause()
        return true
    }

    /// Counts a dispatch at `now`: whether it may run (sd-event's
    /// `ratelimit_below`). One it refuses is followed by ``pause(core:resume:)``.
    mutating func admits(at now: LoopInstant) -> Bool { window!.admits(at: now) }

    /// Pauses until the current window ends (or, `again`, one interval
    /// from now: a resume that failed), then calls `resume`.
    mutating func pause(core: LoopCore, again: Bool = false, resume: @escaping () -> Void) {
        guard let window else { return }
        pause = RateLimitPause(core: core, until: again ? core.now + window.limit.interval : window.windowEnd,
                               resume: resume)
    }

    /// Ends a pause (the window ended, the limit was lifted, the source went).
    mutating func endPause() {
        pause?.cancel()
        pause = nil
    }
}
