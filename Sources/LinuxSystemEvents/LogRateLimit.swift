import MainLoop

/// At most `burst` log lines per `window` for one kind of event, so a fault
/// that repeats at loop speed (an `accept` that keeps failing, a client
/// sending garbage) cannot flood the log. The first line of each new window
/// says how many were left out of the last. Loop thread only.
struct LogRateLimit {
    let burst: Int
    let window: Duration
    private var windowStart: LoopInstant?
    private var inWindow = 0
    private var suppressed = 0

    init(burst: Int = 5, window: Duration = .seconds(10)) {
        self.burst = burst
        self.window = window
    }

    /// Whether to log an event at `now`; if so, how many were left out
    /// since the last logged one.
    mutating func admit(at now: LoopInstant) -> (log: Bool, leftOut: Int) {
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
}
