import MainLoop
import SystemNotifications

/// What the engine (not the app) observes: state changes, kills, discarded
/// input, notifications the system presented on the app's behalf, and
/// inputs it refused. Engine observers are called in every state, including
/// suspended.
public enum EngineEvent: Equatable, Sendable {
    /// The app entered a state.
    case stateChanged(AppState)
    /// The system killed the app (followed by `stateChanged(.notRunning)`).
    case killed(KillReason)
    /// Input arrived while the app was not active.
    case inputDiscarded(String)
    /// A local notification fired while the app was not active.
    case localNotificationPresented(String)
    /// A lifecycle command submitted through the inbox (``Application/submit(_:completion:)``
    /// or a poster) was rejected; nothing changed.
    case commandRejected(LifecycleCommand, LifecycleError)
    /// A system event posted from another thread was refused when the loop
    /// applied it (unknown kind, malformed value, over a limit); nothing changed.
    case systemEventRefused(NotificationCenterError)
    /// The system reported memory pressure. `deliveredToApp`: the app was
    /// running code and its delegate got
    /// ``ApplicationDelegate/applicationDidReceiveMemoryWarning(_:)``; a
    /// suspended or not running app runs no code, so it is told nothing.
    case memoryWarning(deliveredToApp: Bool)
    /// An app fd source could not be parked (at suspension) or resumed (at
    /// the resume): libevent refused to change what it watches. The source
    /// keeps its previous interest; the app is told nothing (it may be
    /// suspended), so a supervisor hears it here.
    case appSourceFailed(fileDescriptor: Int32, error: MainLoopError)
}
