/// The time limits and declarations of BEHAVIOUR.md §2 and §3. Defaults are the spec's.
public struct LifecycleConfiguration: Sendable, Equatable {
    /// didEnterBackground must return within this, or the app is killed.
    public var didEnterBackgroundLimit: Duration = .seconds(5)
    /// Background time, counted from entering background, shared by all tasks.
    public var backgroundTaskLimit: Duration = .seconds(180)
    /// Expiration handlers run this long before the limit.
    public var expirationLead: Duration = .seconds(5)
    /// The background modes the app declares.
    public var backgroundModes: Set<BackgroundMode> = []
    /// The smallest keep-alive timeout accepted (voip only).
    public var minimumKeepAliveTimeout: Duration = .seconds(600)
    /// The keep-alive handler must return within this, or the app is suspended again.
    public var keepAliveHandlerLimit: Duration = .seconds(10)
    /// A scheduled app refresh must complete within this (BEHAVIOUR.md §3).
    public var appRefreshTaskLimit: Duration = .seconds(30)
    /// A scheduled processing task must complete within this.
    public var processingTaskLimit: Duration = .seconds(300)
    /// At most this many local notifications stay scheduled (the soonest win).
    public var maxScheduledLocalNotifications = 64

    /// The defaults of BEHAVIOUR.md §2.
    public init() {}
}
