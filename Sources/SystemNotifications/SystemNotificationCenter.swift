import AppLifecycle
import MainLoop
import MainLoopJSON

/// Delivers system notifications to the app on the main loop: live, in
/// arrival order, while the app runs (inactive, active, background); held
/// and coalesced while it is suspended, then delivered on resume as one
/// merged notification per kind (per subject for keyed kinds), in order of
/// each kind's first held event (SPEC §4).
///
/// Events enter through ``post(_:)`` (loop thread) or a ``poster`` (any
/// thread) on a typed channel at system priority, so they run before input
/// and app work and cost no allocation. The center follows the lifecycle as
/// a ``LifecycleParticipant``: holding starts at `suspended` and ends at the
/// resume point of a `foreground` or `wake`; a kill discards what is held.
///
/// Loop thread only, except the ``poster``.
public final class SystemNotificationCenter: LifecycleParticipant {
    enum Mode { case notRunning, live, holding }

    /// The application whose lifecycle gates delivery.
    public let application: Application
    /// Per-kind rules, values, counters and held slots, by slot (the twelve
    /// standard kinds first).
    private let table = KindTable()
    private let held = HeldNotificationQueue()
    /// Read for every event; loop thread only, so no dynamic exclusivity
    /// check (see ``KindTable``).
    @exclusivity(unchecked) private var mode = Mode.notRunning
    private var slotsByName: [String: Int] = [:]
    @exclusivity(unchecked) private var observers: [ObserverEntry] = []
    private var nextObserverID = 0
    private var channel: EventChannel<SystemEvent>!
    /// Events posted from other threads for kinds that are not registered.
    public private(set) var unknownKindEvents = 0

    /// A center with the standard kinds, following `application`.
    /// - Precondition: called on the loop thread.
    public init(application: Application) throws(MainLoopError) {
        self.application = application
        for rule in CoalescingRule.standard { add(rule) }
        // Unowned (a weak load measured 6 ns per event); deinit closes the
        // channel so nothing is delivered to a released center.
        channel = try application.loop.makeChannel(of: SystemEvent.self, priority: .system) { [unowned self] event in
            self.handle(event)
        }
        application.addParticipant(self)
        mode = application.state == .suspended ? .holding : (application.state.runsAppCode ? .live : .notRunning)
    }

    deinit {
        application.removeParticipant(self)
        // Released on the loop thread (the normal case): stop the channel.
        // Elsewhere the loop may be running, so only its thread may touch it.
        if application.loop.inLoop { try? channel.close() }
    }

    // MARK: Kinds

    /// Registers a rule for a kind of your own; it behaves exactly like a
    /// standard kind of the same shape.
    /// - Returns: the kind, with its slot resolved for fast posting.
    /// - Throws: ``NotificationCenterError/duplicateKind(_:)``.
    @discardableResult
    public func register(_ rule: CoalescingRule) throws(NotificationCenterError) -> NotificationKind {
        application.loop.preconditionInLoop()
        guard slotsByName[rule.kind.name] == nil else { throw .duplicateKind(rule.kind.name) }
        return add(rule)
    }

    @discardableResult
    private func add(_ rule: CoalescingRule) -> NotificationKind {
        let slot = table.append(KindState(rule: rule))
        slotsByName[rule.kind.name] = slot
        return NotificationKind(name: rule.kind.name, slot: slot)
    }

    /// Every registered kind, in slot order.
    public var kinds: [NotificationKind] {
        (0..<table.count).map { NotificationKind(name: table[$0].pointee.rule.kind.name, slot: $0) }
    }

    /// The rule for a kind.
    public func rule(for kind: NotificationKind) throws(NotificationCenterError) -> CoalescingRule {
        table[try slot(of: kind)].pointee.rule
    }

    private func slot(of kind: NotificationKind) throws(NotificationCenterError) -> Int {
        if kind.slot >= 0, kind.slot < table.count, table[kind.slot].pointee.rule.kind.name == kind.name { return kind.slot }
        guard let slot = slotsByName[kind.name] else { throw .unknownKind(kind.name) }
        return slot
    }

    // MARK: Events

    /// Reads a system event in the scenario/control-socket form, an object
    /// with exactly one kind key: `{"orientation": "faceUp"}`.
    /// - Throws: ``NotificationCenterError`` naming what is wrong.
    public func decodeEvent(_ json: JSONValue) throws(NotificationCenterError) -> SystemEvent {
        guard let object = json.objectValue, object.count == 1, let (name, payload) = object.first(where: { _ in true }) else {
            throw .notASingleEvent("got \(json.jsonText)")
        }
        let rule = table[try slot(of: NotificationKind(name))].pointee.rule
        do {
            return try rule.decodeEvent(payload)
        } catch {
            throw .malformedEvent(error)
        }
    }

    /// Posts a system event; it is handled on the loop at system priority,
    /// after the current callback. From other threads, use ``poster``.
    /// - Throws: ``NotificationCenterError/unknownKind(_:)`` for an
    ///   unregistered kind, ``MainLoopError/shutDown`` after shutdown.
    public func post(_ event: SystemEvent) throws {
        application.loop.preconditionInLoop()
        _ = try slot(of: event.kind)
        try channel.post(event)
    }

    /// A handle that posts events from any thread.
    public var poster: SystemEventPoster { SystemEventPoster(channel: channel) }

    /// Handles one event on the loop thread: drop it if it changes nothing,
    /// update the current value, then deliver, hold or (not running) keep
    /// only the value.
    private func handle(_ event: SystemEvent) {
        guard let slot = try? slot(of: event.kind) else {
            unknownKindEvents += 1
            return
        }
        let kind = table[slot]
        kind.pointee.counters.received &+= 1
        let rule = kind.pointee.rule
        let previous: JSONValue
        if rule.isKeyed {
            guard let subject = event.subject else {
                kind.pointee.counters.ignoredUnchanged &+= 1
                return
            }
            previous = kind.pointee.subjects[subject] ?? rule.defaultValue
            guard previous != event.value else {
                kind.pointee.counters.ignoredUnchanged &+= 1
                return
            }
            // An absent subject has the default value, so storing defaults
            // would only grow memory.
            kind.pointee.subjects[subject] = event.value == rule.defaultValue ? nil : event.value
        } else {
            previous = kind.pointee.value
            guard rule.shape == .latestEvent || previous != event.value else {
                kind.pointee.counters.ignoredUnchanged &+= 1
                return
            }
            kind.pointee.value = event.value
        }
        switch mode {
        case .notRunning:
            kind.pointee.counters.changedWhileNotRunning &+= 1
        case .live:
            kind.pointee.counters.deliveredLive &+= 1
            deliver(SystemNotification(kind: rule.kind, subject: event.subject, value: event.value, merged: 1, rule: rule),
                    slot: slot)
        case .holding:
            kind.pointee.counters.held &+= 1
            held.hold(kind, slot: slot, subject: event.subject, previous: previous, new: event.value)
        }
    }

    private func deliver(_ notification: SystemNotification, slot: Int) {
        for entry in observers where entry.isActive && (entry.slot < 0 || entry.slot == slot) {
            entry.body(notification)
        }
    }

    // MARK: Current values

    /// The system's current value of a kind (for keyed kinds, of a subject,
    /// or an object of every subject that differs from the default).
    public func currentValue(of kind: NotificationKind, subject: String? = nil) throws(NotificationCenterError) -> JSONValue {
        let state = table[try slot(of: kind)]
        guard state.pointee.rule.isKeyed else { return state.pointee.value }
        guard let subject else { return .object(JSONObject(state.pointee.subjects.sorted { $0.key < $1.key })) }
        return state.pointee.subjects[subject] ?? state.pointee.rule.defaultValue
    }

    /// Sets the system's current value without any notification: the
    /// initial state before launch (SPEC §6 `initial`).
    /// - Throws: ``NotificationCenterError/appRunning`` unless the app is
    ///   not running.
    public func setInitialValue(_ event: SystemEvent) throws(NotificationCenterError) {
        application.loop.preconditionInLoop()
        guard application.state == .notRunning else { throw .appRunning }
        let state = table[try slot(of: event.kind)]
        if state.pointee.rule.isKeyed {
            guard let subject = event.subject else {
                throw .malformedEvent(EventDecodingError(kind: event.kind, problem: "missing subject"))
            }
            state.pointee.subjects[subject] = event.value == state.pointee.rule.defaultValue ? nil : event.value
        } else {
            state.pointee.value = event.value
        }
    }

    // MARK: Observers

    /// Observes notifications of one kind, or of every kind with `nil`.
    /// Observers are app code: they run only while the app runs.
    @discardableResult
    public func addObserver(for kind: NotificationKind? = nil,
                            _ body: @escaping (SystemNotification) -> Void) throws(NotificationCenterError) -> NotificationObserverToken {
        application.loop.preconditionInLoop()
        let slot = try kind.map { (kind) throws(NotificationCenterError) in try self.slot(of: kind) } ?? -1
        nextObserverID += 1
        let token = NotificationObserverToken(id: nextObserverID)
        observers.append(ObserverEntry(token: token, slot: slot, body: body))
        return token
    }

    /// Removes an observer; safe during delivery (it gets nothing further).
    /// Returns false for an unknown or already removed token.
    @discardableResult
    public func removeObserver(_ token: NotificationObserverToken) -> Bool {
        application.loop.preconditionInLoop()
        guard let index = observers.firstIndex(where: { $0.token == token }) else { return false }
        observers[index].isActive = false
        observers.remove(at: index)
        return true
    }

    // MARK: Accounting

    /// Counters per kind, in slot order.
    public var statistics: [(kind: NotificationKind, counters: NotificationCounters)] {
        kinds.map { ($0, table[$0.slot].pointee.counters) }
    }

    /// The counters of one kind.
    public func counters(for kind: NotificationKind) throws(NotificationCenterError) -> NotificationCounters {
        table[try slot(of: kind)].pointee.counters
    }

    /// How many held slots are occupied (bounded by kinds and subjects).
    public var heldSlotCount: Int { held.occupiedSlotCount(in: table) }

    /// Whether the center is holding (the app is suspended and not yet resumed).
    public var isHolding: Bool { mode == .holding }

    // MARK: LifecycleParticipant

    public func application(_ application: Application, didEnter state: AppState) {
        switch state {
        case .suspended: mode = .holding
        case .notRunning: mode = .notRunning
        case .inactive, .active, .background:
            // A resume keeps holding until its delivery point.
            if mode == .notRunning { mode = .live }
        }
    }

    public func applicationShouldDeliverHeldEvents(_ application: Application) {
        mode = .live
        for (slot, notification) in held.flush(table) { deliver(notification, slot: slot) }
    }

    public func applicationDidEnd(_ application: Application) {
        held.discard(table)
    }
}
