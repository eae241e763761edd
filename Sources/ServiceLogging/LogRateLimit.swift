import MainLoop

/// At most `burst` log lines per `window` for one kind of event, so a fault
/// that repeats at loop speed (an `accept` that keeps failing, a client
/// sending garbage) cannot flood the log. The first line of each new window
/// says how many were left out of the last. Loop thread only.
public struct LogRateLimit {
    /// Lines logged per window at most.
    public let burst: Int
    /// The window.
    public let window: Duration
    private var windowStart: LoopInstant?
    private var inWindow = 0
    private var suppressed = 0

    /// At most `burst` lines per `window`.
    public init(burst: Int = 5, window: Duration = .seconds(10)) {
        self.burst = burst
        self.window = window
    }

    /// Whether to log an event at `now`; if so, how many were left out
    /// since the last logged one.
    public mutating func admit(at now: LoopInstant) -> (log: Bool, leftOut: Int) {
        if let windowStart, now - windowStart < window {
            guard inWindow < burst else {
                suppressed += 1
                return (false, 0)
            }
        } else {
            windowStart = now
            inWindow = 0
        }
        inWindow += 1
        defer { suppressed = 0 }
        return (true, suppressed)
    }

    /// ``admit(at:)`` for the usual caller: nil when the line is to be left
    /// out, else the ``leftOutNote(_:)`` to append to it ("" when nothing
    /// was left out): `if let note = limit.admittedNote(at: now) { log("…\(note)") }`.
    public mutating func admittedNote(at now: LoopInstant) -> String? {
        let (log, leftOut) = admit(at: now)
        return log ? Self.leftOutNote(leftOut) : nil
    }

    /// " (N similar lines left out)" when `count` lines were left out.
    public static func leftOutNote(_ count: Int) -> String {
        count == 0 ? "" : " (\(count) similar lines left out)"
    }
}
