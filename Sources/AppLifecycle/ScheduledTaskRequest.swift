/// A request for background work the system runs when its time has come
/// and its conditions hold, like iOS's `BGAppRefreshTaskRequest` and
/// `BGProcessingTaskRequest` (BEHAVIOUR.md §3, "Scheduled background work").
///
/// Submit it with ``Application/submitScheduledTask(_:)`` for an identifier
/// registered with ``Application/registerScheduledTask(identifier:launchHandler:)``.
public struct ScheduledTaskRequest: Sendable, Equatable {
    /// The two kinds of scheduled work.
    public enum Kind: String, Sendable, CaseIterable {
        /// Short work to bring the app's content up to date (iOS's app refresh).
        case appRefresh
        /// Longer work that may wait for external power or a network (iOS's processing task).
        case processing
    }

    /// The registered identifier whose launch handler runs the work.
    public let identifier: String
    /// Which kind of work this is.
    public let kind: Kind
    /// How long after submission the work may begin at the earliest.
    public let earliestBeginAfter: Duration
    /// Whether the work waits until the device is on external power
    /// (battery state `charging` or `full`; UPower's `OnBattery` false).
    public let requiresExternalPower: Bool
    /// Whether the work waits until the network path is `satisfied`
    /// (NetworkManager's connectivity `full`).
    public let requiresNetworkConnectivity: Bool

    /// An app refresh: no conditions, begins `earliestBeginAfter` after
    /// submission at the earliest.
    public static func appRefresh(_ identifier: String, earliestBeginAfter: Duration = .zero) -> ScheduledTaskRequest {
        ScheduledTaskRequest(identifier: identifier, kind: .appRefresh, earliestBeginAfter: earliestBeginAfter,
                             requiresExternalPower: false, requiresNetworkConnectivity: false)
    }

    /// A processing task: begins `earliestBeginAfter` after submission at
    /// the earliest, and only while the conditions it requires hold.
    public static func processing(_ identifier: String, earliestBeginAfter: Duration = .zero,
                                  requiresExternalPower: Bool = false,
                                  requiresNetworkConnectivity: Bool = false) -> ScheduledTaskRequest {
        ScheduledTaskRequest(identifier: identifier, kind: .processing, earliestBeginAfter: earliestBeginAfter,
                             requiresExternalPower: requiresExternalPower,
                             requiresNetworkConnectivity: requiresNetworkConnectivity)
    }
}
