/// What the engine (not the app) observes: state changes, kills, discarded
/// input and notifications the system presented on the app's behalf.
/// Engine observers are called in every state, including suspended.
public enum EngineEvent: Equatable, Sendable {
    /// The app entered a state.
    case stateChanged(AppState)
    /// The system killed the app (followed by `stateChanged(.notRunning)`).
    case killed(KillReason)
    /// Input arrived while the app was not active.
    case inputDiscarded(String)
    /// A local notification fired while the app was not active.
    case localNotificationPresented(String)
}
