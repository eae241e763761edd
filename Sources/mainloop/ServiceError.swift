/// A service part used in a way it does not allow (not a system-call
/// failure: those are `MainLoopError`).
enum ServiceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A one-time step (named) was called again.
    case alreadyStarted(String)

    var description: String {
        switch self {
        case .alreadyStarted(let step): return "\(step) was already called; it runs once"
        }
    }
}
