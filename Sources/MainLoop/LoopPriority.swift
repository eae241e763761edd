/// The dispatch priorities of a ``MainRunLoop``, highest first.
///
/// Higher-priority ready work always runs before lower-priority ready work:
/// each priority maps onto one of libevent's priority queues, and a drain of
/// lower-priority work stops between items as soon as higher-priority work
/// is ready on the loop thread. A closed set, so a plain enum.
public enum LoopPriority: Int, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    /// System events (notifications, lifecycle deadlines, timers): never
    /// starved by input or app work.
    case system = 0
    /// User input.
    case input = 1
    /// Default app work (posted closures, the Swift concurrency executor).
    case app = 2

    /// How many libevent priority queues the loop's base is created with.
    static let queueCount = Int32(allCases.count)

    /// The case's name (`system`, `input`, `app`), without reflection.
    public var description: String {
        switch self {
        case .system: "system"
        case .input: "input"
        case .app: "app"
        }
    }

    public static func < (lhs: LoopPriority, rhs: LoopPriority) -> Bool {
        // A lower raw value is a higher priority; `<` orders by urgency.
        lhs.rawValue > rhs.rawValue
    }
}
