/// What an fd source waits for, and what it reports as ready.
public struct Readiness: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The fd is readable (or at end of file / hung up).
    public static let read = Readiness(rawValue: 1 << 0)
    /// The fd is writable.
    public static let write = Readiness(rawValue: 1 << 1)
    /// Both.
    public static let readWrite: Readiness = [.read, .write]
}
