import SystemNotifications

/// One input to the engine: a lifecycle command, a system event or user
/// input. Every input, from whatever path (the API on the loop thread, a
/// poster on another thread, the control socket), takes effect in the order
/// it was issued (BEHAVIOUR.md §8).
public enum EngineInput: Sendable {
    /// A lifecycle command (BEHAVIOUR.md §1).
    case lifecycle(LifecycleCommand)
    /// A system event (BEHAVIOUR.md §4).
    case system(SystemEvent)
    /// User input (a touch id).
    case input(String)
    /// The system is short of memory (``Application/receiveMemoryWarning()``).
    case memoryWarning
}

/// What the application's inbox carries: an input, plus what the loop
/// thread needs to report its outcome.
enum InboxEntry: Sendable {
    case lifecycle(LifecycleCommand, completion: (@Sendable (Result<AppState, LifecycleError>) -> Void)?)
    case system(SystemEvent)
    case prepared(PreparedEvent)
    case input(String)
    case memoryWarning
}
