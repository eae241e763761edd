import MainLoopJSON

/// A notification as it reaches the app: one per live event, or one merged
/// notification per kind (per subject for keyed kinds) on resume.
///
/// It is plain data: the kind, the subject, the net value in the engine's
/// form and the merged count. Its ``name``, ``value`` and ``payload`` are
/// built only when asked, so delivering it to an observer allocates nothing
/// and counts no references for the standard kinds. Strings and JSON values
/// of the engine's symbol table are resolved when the notification is made,
/// so a notification kept after its delivery stays valid.
public struct SystemNotification: Sendable {
    /// The kind's slot in its engine.
    package let slot: Int
    /// The subject the notification is about (an accessory or screen id, a
    /// defaults key delivered live); nil for value kinds and for a merged
    /// userDefaults change, which names its keys in ``value``.
    public let subject: String?
    /// How many events it folds (1 when delivered live).
    public let merged: Int
    /// The net value in the engine's form.
    let encoded: EventValue
    /// The net value, already resolved when it is a symbol or a keyDiff map.
    let resolved: JSONValue?
    /// The rule of a user kind; nil for the standard kinds, whose rules are
    /// global constants (so a notification of a standard kind holds no reference).
    let customRule: CoalescingRule?

    init(slot: Int, subject: String?, merged: Int, encoded: EventValue, resolved: JSONValue?,
         customRule: CoalescingRule?) {
        self.slot = slot
        self.subject = subject
        self.merged = merged
        self.encoded = encoded
        self.resolved = resolved
        self.customRule = customRule
    }

    /// The kind it belongs to.
    public var kind: NotificationKind { NotificationKind(name: rule.kind.name, slot: slot) }

    /// The rule that names and shapes it.
    public var rule: CoalescingRule { customRule ?? CoalescingRule.standard[slot] }

    /// The net value (for a merged userDefaults change, an object of every
    /// changed key to its new value or null).
    public var value: JSONValue { resolved ?? rule.json(forPlain: encoded) }

    /// The notification's name, e.g. `orientationDidChange`.
    public var name: String { rule.notificationName(value) }

    /// The payload fields of SPEC §4, e.g. `{"orientation": "faceUp"}`.
    public var payload: JSONObject { rule.payload(subject, value) }
}
