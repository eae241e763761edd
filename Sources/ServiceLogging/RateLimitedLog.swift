import Logging
import MainLoop

/// One log site that a peer or a file can trigger again and again (a
/// refused client, a watched file that cannot be read, an event over a
/// limit): at most ``LogRateLimit/burst`` lines per window, then one line
/// that says how many were left out. Loop thread only.
///
/// ```swift
/// let refusals = RateLimitedLog(logger: logger, loop: loop)
/// refusals.log(.warning, "refused a connection from uid \(uid)")
/// ```
public final class RateLimitedLog {
    private let logger: Logger
    private let loop: MainRunLoop
    private var limit: LogRateLimit
    /// Lines left out so far (over the whole life, for stats and tests).
    public private(set) var leftOut = 0

    /// A site that logs through `logger`, timed by `loop`'s clock.
    public init(logger: Logger, loop: MainRunLoop, burst: Int = 5, window: Duration = .seconds(10)) {
        self.logger = logger
        self.loop = loop
        limit = LogRateLimit(burst: burst, window: window)
    }

    /// Logs `message` at `level` unless this site is over its rate; the
    /// message is not even built then.
    public func log(_ level: Logger.Level, _ message: @autoclosure () -> String) {
        guard let note = limit.admittedNote(at: loop.now) else {
            leftOut += 1
            return
        }
        logger.log(level: level, "\(message())\(note)")
    }
}
