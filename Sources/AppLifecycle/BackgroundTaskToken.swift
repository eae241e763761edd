/// Identifies a background task. Tokens are unique for the life of an
/// ``Application``; ``invalid`` means "no task" (background time ran out).
public struct BackgroundTaskToken: Hashable, Sendable, CustomStringConvertible {
    /// The token's number; 0 is invalid.
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Returned by `beginBackgroundTask` when background time has run out.
    public static let invalid = BackgroundTaskToken(rawValue: 0)

    /// Whether this is a real task.
    public var isValid: Bool { rawValue != 0 }

    public var description: String { "#\(rawValue)" }
}
