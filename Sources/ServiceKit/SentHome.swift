import AppLifecycle

/// An app sent home for the system's own reason (the process stopped by
/// SIGTSTP, the machine going to sleep) and brought back when that is over:
/// only an app in the foreground goes, and only one that went comes back,
/// if it is still away (background or suspended). Loop thread only.
struct SentHome {
    /// Whether the app went home by ``sendHome(_:)`` and is not back yet.
    private(set) var isAway = false

    /// Sends `application` home if it is in the foreground (active or inactive).
    mutating func sendHome(_ application: Application) throws(LifecycleError) {
        guard application.state == .active || application.state == .inactive else { return }
        try application.perform(.home)
        isAway = true
    }

    /// Brings `application` back to the foreground if ``sendHome(_:)`` sent
    /// it and it is still away.
    mutating func bringBack(_ application: Application) throws(LifecycleError) {
        guard isAway else { return }
        isAway = false
        guard application.state == .suspended || application.state == .background else { return }
        try application.perform(.foreground)
    }
}
