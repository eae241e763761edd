/// The lifecycle commands a supervisor (or the replay) issues, BEHAVIOUR.md §1.
public enum LifecycleCommand: String, Sendable, CaseIterable, CustomStringConvertible {
    case launch, launchInBackground, interrupt, resumeFromInterrupt, home, foreground, wake, terminate
    /// Memory pressure: the system discards a suspended app.
    case purge

    public var description: String { rawValue }
}
