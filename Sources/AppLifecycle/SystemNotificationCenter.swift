import MainLoop
import MainLoopJSON
import SystemNotifications

/// Delivers system notifications to the app on the main loop: live, in
/// arrival order, while the app runs (inactive, active, background); held
/// and coalesced while it is suspended, then delivered on resume as one
/// merged notification per kind (per subject for keyed kinds), in order of
/// each one's first held event (BEHAVIOUR.md §4).
///
/// The center is a view of its application's notification engine (the
/// engine lives in the ``Application``, so the two cannot get out of step,
/// and a center keeps its application alive). `SystemNotificationCenter(application:)`
/// and `application.notifications` are the same center.
///
/// Events take effect in order with every other input (``Application``,
/// "Ordering"): `post(_:)` on the loop thread records the event before it
/// returns (observers of a live change have run by then); the
/// ``poster`` issues events from any thread. The hot path is a
/// ``/SystemNotifications/PreparedEvent`` (``prepare(_:)`` once, ``post(_:)-(PreparedEvent)`` many times):
/// no hashing, no allocation, no reference counting per event.
///
/// Loop thread only, except the ``poster``.
public struct SystemNotificationCenter {
    /// The application whose lifecycle gates delivery.
    public let application: Application

    /// The notification engine of `application`.
    public init(application: Application) {
        self.application = application
    }

    // MARK: Kinds

    /// Registers a rule for a kind of your own; it behaves exactly like a
    /// standard kind of the same shape.
    /// - Returns: the kind, with its slot resolved for fast posting.
    /// - Throws: ``/SystemNotifications/NotificationCenterError/duplicateKind(_:)``.
    @discardableResult
    public func register(_ rule: CoalescingRule) throws(NotificationCenterError) -> NotificationKind {
        application.loop.preconditionInLoop()
        let kind = try application.table.register(rule)
        application.observers.ensureSlots(kind.slot + 1)
        return kind
    }

    /// Every registered kind, in slot order.
    public var kinds: [NotificationKind] { application.table.registeredKinds }

    /// The rule for a kind.
    public func rule(for kind: NotificationKind) throws(NotificationCenterError) -> CoalescingRule {
        try application.table.rule(for: kind)
    }

    // MARK: Events

    /// The subject of a prepared event (a keyed kind's), while the event
    /// is being posted or is current; nil for a value kind's.
    public func subject(of event: PreparedEvent) -> String? {
        application.table.subjectName(of: event)
    }

    /// The value of a prepared event as JSON, while the event is being
    /// posted or is current.
    public func value(of event: PreparedEvent) -> JSONValue {
        application.table.valueJSON(of: event)
    }

    /// The slot of a registered kind: the index a prepared event of it
    /// carries (``/SystemNotifications/PreparedEvent/slot``), for tables of one's own by kind.
    /// - Throws: ``/SystemNotifications/NotificationCenterError/unknownKind(_:)``.
    public func slot(of kind: NotificationKind) throws(NotificationCenterError) -> Int {
        try application.table.slot(of: kind)
    }

    /// The kind of a prepared event.
    public func kind(of event: PreparedEvent) -> NotificationKind {
        application.table.kind(of: event)
    }

    /// Reads a system event in the scenario/control-socket form, an object
    /// with exactly one kind key: `{"orientation": "faceUp"}`.
    public func decodeEvent(_ json: JSONValue) throws(NotificationCenterError) -> SystemEvent {
        try application.table.decodeEvent(json)
    }

    /// Reads an event of `kind` from its payload (what `decodeEvent(_:)`
    /// reads under the kind's key), for a reader that has found the kind
    /// itself. The event's kind carries its slot.
    public func decodeEvent(kind: NotificationKind, payload: JSONValue) throws(NotificationCenterError) -> SystemEvent {
        try application.table.decodeEvent(kind: kind, payload: payload)
    }

    /// Checks an event against its kind's rule without posting it (limits
    /// are checked when it is posted).
    /// - Throws: ``/SystemNotifications/NotificationCenterError`` naming what is wrong.
    public func validate(_ event: SystemEvent) throws(NotificationCenterError) {
        try application.table.validate(event)
    }

    /// Prepares an event for the hot path: its kind, subject and value are
    /// resolved and checked once and kept for the application's life (pin
    /// only events you will post many times).
    /// - Throws: ``/SystemNotifications/NotificationCenterError`` (unknown kind, malformed, over a limit).
    public func prepare(_ event: SystemEvent) throws(NotificationCenterError) -> PreparedEvent {
        application.loop.preconditionInLoop()
        return try application.table.prepare(event, pinned: true)
    }

    /// Posts a system event from the loop thread. It takes effect after
    /// every input issued before it and, with the engine idle, before this
    /// returns: a live change has reached the observers, a held one is held.
    /// - Throws: ``/SystemNotifications/NotificationCenterError`` for an event the engine refuses
    ///   (nothing changes), ``/MainLoop/MainLoopError/shutDown`` after shutdown.
    public func post(_ event: SystemEvent) throws {
        try application.postSystemEvent(event)
    }

    /// Posts a prepared event from the loop thread (the hot path); see ``post(_:)-(SystemEvent)``.
    @inlinable
    public func post(_ event: PreparedEvent) throws {
        try application.postPrepared(event)
    }

    /// A handle that posts events (and other inputs) from any thread.
    public var poster: EngineInputPoster { application.poster }

    // MARK: Current values

    /// The system's current value of a kind (for keyed kinds, of a subject,
    /// or an object of every subject that differs from the default).
    public func currentValue(of kind: NotificationKind, subject: String? = nil) throws(NotificationCenterError) -> JSONValue {
        try application.table.currentValue(of: kind, subject: subject)
    }

    /// Sets the system's current value without any notification: the
    /// initial state before launch (BEHAVIOUR.md §7 `initial`).
    /// - Throws: ``/SystemNotifications/NotificationCenterError/appRunning`` unless the app is
    ///   not running, or why the event is refused.
    public func setInitialValue(_ event: SystemEvent) throws(NotificationCenterError) {
        application.loop.preconditionInLoop()
        guard application.state == .notRunning else { throw .appRunning }
        try application.table.setInitialValue(event)
    }

    // MARK: Observers

    /// Observes notifications of one kind, or of every kind with `nil`.
    /// Observers are app code: they run only while the app runs, on the
    /// loop thread, in registration order.
    @discardableResult
    public func addObserver(for kind: NotificationKind? = nil,
                            _ body: @escaping (SystemNotification) -> Void) throws(NotificationCenterError) -> NotificationObserverToken {
        application.loop.preconditionInLoop()
        let slot = try kind.map { (kind) throws(NotificationCenterError) in try application.table.slot(of: kind) }
        return application.observers.add(slot: slot, body)
    }

    /// Removes an observer; safe during delivery (it gets nothing further).
    /// Returns false for an unknown or already removed token.
    @discardableResult
    public func removeObserver(_ token: NotificationObserverToken) -> Bool {
        application.loop.preconditionInLoop()
        return application.observers.remove(token)
    }

    // MARK: Accounting

    /// Counters per kind, in slot order.
    public var statistics: [(kind: NotificationKind, counters: NotificationCounters)] { application.table.statistics }

    /// The counters of one kind.
    public func counters(for kind: NotificationKind) throws(NotificationCenterError) -> NotificationCounters {
        try application.table.counters(for: kind)
    }

    /// How many held slots are occupied (bounded by kinds and subjects).
    public var heldSlotCount: Int { application.table.heldSlotCount }

    /// Whether the center is holding (the app is suspended and not yet resumed).
    public var isHolding: Bool { application.holdingMode == .holding }

    /// The engine's limits.
    public var limits: CoalescingLimits { application.table.limits }
}
