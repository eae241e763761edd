import AppLifecycle
import MainLoopJSON
import SystemNotifications

/// Turns a scenario's `initial` object (BEHAVIOUR.md §7) into silent initial events.
///
/// A key is a kind's name (`orientation`, `locale`, a custom kind's name):
/// its value for a value kind, an object of subject to value for a keyed
/// kind. BEHAVIOUR.md §7 names four keyed standard kinds differently, and only
/// those are spelled out here: `defaults` (userDefaults, an object),
/// `accessories` and `screens` (arrays of connected ids) and `screenModes`.
enum InitialValues {
    /// The contract's names for keyed standard kinds whose initial form is a list of connected ids.
    private static let connectedLists: [String: NotificationKind] = ["accessories": .accessory, "screens": .screen]
    /// The contract's names for keyed standard kinds whose initial form is an object of subject to value.
    private static let subjectObjects: [String: NotificationKind] = ["defaults": .userDefaults, "screenModes": .screenMode]

    /// The events for `initial`, checked against the center's rules.
    static func events(_ initial: JSONObject, center: SystemNotificationCenter) throws(ScenarioError) -> [SystemEvent] {
        var events: [SystemEvent] = []
        for (key, value) in initial {
            func fail(_ problem: String) -> ScenarioError { ScenarioError(problem: "initial '\(key)': \(problem)") }
            if let kind = connectedLists[key] {
                guard let ids = value.arrayValue, ids.allSatisfy({ $0.stringValue != nil }) else {
                    throw fail("must be an array of connected ids")
                }
                events += ids.compactMap(\.stringValue).map { SystemEvent(kind: kind, subject: $0, value: true) }
                continue
            }
            let kind = subjectObjects[key] ?? NotificationKind(key)
            let rule: CoalescingRule
            do { rule = try center.rule(for: kind) } catch { throw ScenarioError(problem: "unknown initial key '\(key)'") }
            if rule.isKeyed {
                guard let subjects = value.objectValue else { throw fail("must be an object of subject to value") }
                events += subjects.map { SystemEvent(kind: kind, subject: $0.key, value: $0.value) }
            } else {
                events.append(SystemEvent(kind: kind, value: value))
            }
        }
        return events
    }
}
