/// A declared background mode (`audio`, `location`, `voip`, `fetch`, ...).
/// An open set: any name can be declared.
public struct BackgroundMode: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The mode's name as declared.
    public let name: String

    public init(_ name: String) { self.name = name }
    public init(stringLiteral value: String) { self.name = value }

    public static let audio = BackgroundMode("audio")
    public static let location = BackgroundMode("location")
    /// Enables the keep-alive handler (BEHAVIOUR.md §5).
    public static let voip = BackgroundMode("voip")
    public static let fetch = BackgroundMode("fetch")

    public var description: String { name }
}
