/// An open background task (SPEC §3).
struct BackgroundTask {
    /// The name given at begin (the replay's `expired` line prints it).
    let name: String
    /// Runs once at limit − lead, unless the task was begun after this
    /// background period's handlers ran.
    let expirationHandler: (() -> Void)?
    /// Whether the handler already ran (it runs at most once).
    var handlerRan = false
}
