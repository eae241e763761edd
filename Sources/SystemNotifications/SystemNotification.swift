import MainLoopJSON

/// A notification as it reaches the app: one per live event, or one merged
/// notification per kind (per subject for keyed kinds) on resume.
///
/// It carries the raw net value; the payload object of SPEC §4 is built
/// only when asked for (``payload``), so live delivery allocates nothing.
public struct SystemNotification: Sendable {
    /// The kind it belongs to.
    public let kind: NotificationKind
    /// The subject for keyed kinds (nil for a merged userDefaults change).
    public let subject: String?
    /// The net value (for a merged userDefaults change, an object of every
    /// changed key to its new value or null).
    public let value: JSONValue
    /// How many events it folds (1 when delivered live).
    public let merged: Int
    let rule: CoalescingRule

    /// The notification's name, e.g. `orientationDidChange`.
    public var name: String { rule.notificationName(value) }

    /// The payload fields of SPEC §4, e.g. `{"orientation": "faceUp"}`.
    public var payload: JSONObject { rule.payload(subject, value) }

    /// The SPEC §7 observation fields: notification name, payload, merged.
    public var observation: JSONObject {
        var object = JSONObject()
        object["notification"] = .string(name)
        for (key, value) in payload { object[key] = value }
        object["merged"] = .number(Double(merged))
        return object
    }
}
