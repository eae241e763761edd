/// Errors from the system notification center; a failing call changes nothing.
public enum NotificationCenterError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No rule is registered for this kind.
    case unknownKind(String)
    /// A rule for this kind is already registered.
    case duplicateKind(String)
    /// An event payload did not match its kind's format.
    case malformedEvent(EventDecodingError)
    /// A system event object must have exactly one key: the kind.
    case notASingleEvent(String)
    /// Initial values can only be set while the app is not running.
    case appRunning
    /// The event is over one of the engine's limits (``CoalescingLimits``).
    case overLimit(kind: String, limit: String)
    /// A prepared event that this engine did not prepare (or whose subject
    /// it no longer keeps).
    case foreignPreparedEvent

    public var description: String {
        switch self {
        case .unknownKind(let name): return "unknown notification kind '\(name)'"
        case .duplicateKind(let name): return "a rule for kind '\(name)' is already registered"
        case .malformedEvent(let error): return error.description
        case .notASingleEvent(let detail): return "a system event must be an object with exactly one kind key (\(detail))"
        case .appRunning: return "initial values can only be set while the app is not running"
        case .overLimit(let kind, let limit): return "\(kind) event refused: \(limit)"
        case .foreignPreparedEvent: return "the prepared event was not prepared by this notification engine"
        }
    }
}
