/// An open background task (BEHAVIOUR.md §3).
struct BackgroundTask {
    /// Its token.
    let token: BackgroundTaskToken
    /// The name given at begin (the replay's `expired` line prints it).
    let name: String
    /// Runs once at limit − lead, unless the task was begun after this
    /// background period's expiration instant.
    let expirationHandler: (() -> Void)?
    /// Whether the handler already ran (it runs at most once in the task's life).
    var handlerRan = false
}
