/// A system event in the engine's plain-data form: a kind slot, a subject
/// index and a value, 24 bytes and no reference counting.
///
/// Made by ``CoalescingTable/prepare(_:pinned:)`` (or a center's
/// `prepare`) from a ``SystemEvent``. Preparing resolves the kind, checks
/// the value against the kind's rule and interns the subject and value once;
/// posting a prepared event then costs no hashing and no allocation, which
/// is the engine's hot path. A prepared event belongs to the table that
/// prepared it; its subject and value stay valid for that table's life.
public struct PreparedEvent: Hashable, Sendable {
    /// The kind's slot in its table.
    public let slot: Int32
    /// The subject's index in its kind's subject storage, or -1.
    public let subject: Int32
    /// The value.
    public let value: EventValue

    @usableFromInline
    init(slot: Int32, subject: Int32, value: EventValue) {
        self.slot = slot
        self.subject = subject
        self.value = value
    }
}

/// Where an event goes once recorded (the engine's mode, set by the lifecycle).
///
/// `live` is the first case on purpose: a switch on the mode tests the
/// first case first, and live is the hot one.
public enum HoldingMode: Sendable, Equatable {
    /// The app runs code: changes are delivered at once.
    case live
    /// The app is suspended: changes are held and coalesced.
    case holding
    /// The app is not running: events only change the current values.
    case notRunning
}

/// What recording one event did: plain data, so returning it costs no
/// reference counting. For a live change, ``CoalescingTable/liveNotification(_:)``
/// makes the notification to deliver, and ``CoalescingTable/finishLive(_:)``
/// must follow the delivery (a subject back at its default is freed then).
@frozen
public struct RecordOutcome: Sendable, Equatable {
    /// What happened.
    public enum Effect: UInt8, Sendable {
        /// The event did not change the current value (nothing delivered or held).
        case unchanged
        /// The app is not running: only the current value changed.
        case changedWhileNotRunning
        /// Held for the resume.
        case held
        /// A live change: deliver it now.
        case live
    }

    /// What happened.
    public let effect: Effect
    /// The event, as recorded.
    public let event: PreparedEvent
    /// A standard value kind: its notification is plain data (no details).
    package let isPlain: Bool

    @usableFromInline
    package init(_ effect: Effect, _ event: PreparedEvent, isPlain: Bool = false) {
        self.effect = effect
        self.event = event
        self.isPlain = isPlain
    }
}

/// Bounds on what the engine stores, so that no input, however large or
/// hostile, grows it without bound (subjects are per keyed kind; values are
/// measured as JSON text). Over a limit, an event is refused with
/// ``NotificationCenterError/overLimit(kind:limit:)`` and counted in
/// ``NotificationCounters/refused``; nothing is dropped silently.
public struct CoalescingLimits: Sendable, Equatable {
    /// The most subjects (accessories, screens, defaults keys, ...) one keyed
    /// kind keeps at a value other than its default, or held.
    public var maxSubjectsPerKind = 1024
    /// The longest subject id, in UTF-8 bytes.
    public var maxSubjectBytes = 256
    /// The largest value, in bytes of its JSON text.
    public var maxValueBytes = 16 * 1024

    /// The defaults above.
    public init() {}

    /// No limit at all (the scenario replay: its input bounds what it stores).
    public static let unlimited: CoalescingLimits = {
        var limits = CoalescingLimits()
        limits.maxSubjectsPerKind = .max
        limits.maxSubjectBytes = .max
        limits.maxValueBytes = .max
        return limits
    }()
}
