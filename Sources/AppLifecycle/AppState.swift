/// The five application states of BEHAVIOUR.md §1. A closed set.
public enum AppState: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Not launched, or killed/terminated.
    case notRunning
    /// In the foreground but not receiving input.
    case inactive
    /// In the foreground, receiving input.
    case active
    /// Running in the background.
    case background
    /// In memory but running no code.
    case suspended

    /// Whether app code (delegate, observers, timers, posted work, handlers)
    /// may run in this state.
    public var runsAppCode: Bool {
        switch self {
        case .inactive, .active, .background: return true
        case .notRunning, .suspended: return false
        }
    }

    public var description: String { rawValue }
}
