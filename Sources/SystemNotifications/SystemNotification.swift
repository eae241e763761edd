import MainLoopJSON

/// A notification as it reaches the app: one per live event, or one merged
/// notification per kind (per subject for keyed kinds) on resume.
///
/// It is plain data (the kind's slot, the merged count, the net value in the
/// engine's form) plus, only when needed, one reference to immutable
/// ``NotificationDetails`` (a subject's name, a resolved JSON value, a user
/// kind's rule), shared per subject and per user kind. A notification of a
/// standard value kind (orientation, battery, proximity, ...) holds no
/// reference at all, so delivering it counts none. Its ``name``, ``value``
/// and ``payload`` are built only when asked, and it stays valid after its
/// delivery.
public struct SystemNotification: Sendable {
    /// The kind's slot in its engine.
    public let slot: Int
    /// How many events it folds (1 when delivered live).
    public let merged: Int
    /// The net value in the engine's form.
    let encoded: EventValue
    /// What is not plain data; nil for a standard value kind.
    let details: NotificationDetails?

    /// The net value in the engine's form, when that is all there is to
    /// it (a standard value kind: no subject, no resolved value, no rule of
    /// a user's); nil otherwise. For a writer that prints such values from
    /// text it made once per kind.
    package var plainValue: EventValue? { details == nil ? encoded : nil }

    @usableFromInline
    package init(slot: Int, merged: Int, encoded: EventValue, details: NotificationDetails?) {
        self.slot = slot
        self.merged = merged
        self.encoded = encoded
        self.details = details
    }

    /// The subject the notification is about (an accessory or screen id, a
    /// defaults key delivered live); nil for value kinds and for a merged
    /// userDefaults change, which names its keys in ``value``.
    public var subject: String? { details?.subject }

    /// The kind it belongs to.
    public var kind: NotificationKind { NotificationKind(name: rule.kind.name, slot: slot) }

    /// The rule that names and shapes it.
    public var rule: CoalescingRule { details?.customRule ?? CoalescingRule.standard[slot] }

    /// The net value (for a merged userDefaults change, an object of every
    /// changed key to its new value or null).
    public var value: JSONValue { details?.resolved ?? rule.json(forPlain: encoded) }

    /// The notification's name, e.g. `orientationDidChange`. Most kinds
    /// have one name whatever the value: the value is made (a JSON value)
    /// only for a kind named by its value.
    public var name: String {
        let rule = rule
        if case .fixed(let name) = rule.naming { return name }
        return rule.notificationName(value)
    }

    /// The payload fields of BEHAVIOUR.md §4, e.g. `{"orientation": "faceUp"}`.
    public var payload: JSONObject { rule.payload(subject, value) }

    /// Calls `body` with each field of ``payload`` (key, value), in order,
    /// each key once, without building the object: for writing a
    /// notification out at the rate notifications come.
    public func forEachPayloadField(_ body: (_ key: String, _ value: JSONValue) -> Void) {
        rule.forEachPayloadField(subject, value, body)
    }
}

/// The parts of a notification that are not plain data. Immutable and
/// shared: one per subject (its name and its kind's rule), one per user
/// kind (its rule); a resolved JSON value (a symbol, a keyDiff map) gets its own.
public final class NotificationDetails: Sendable {
    let subject: String?
    let resolved: JSONValue?
    let customRule: CoalescingRule?

    init(subject: String?, resolved: JSONValue?, customRule: CoalescingRule?) {
        self.subject = subject
        self.resolved = resolved
        self.customRule = customRule
    }
}
