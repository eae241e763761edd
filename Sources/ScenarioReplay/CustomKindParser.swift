import EngineWire
import MainLoopJSON
import SystemNotifications

/// Reads a user kind's rule from a scenario's `config.customKinds` entry:
///
/// ```json
/// {"name": "thermalState", "shape": "lastValue", "default": "nominal",
///  "notification": "thermalStateDidChange", "payloadKey": "state",
///  "values": ["nominal", "fair", "serious", "critical"]}
/// {"name": "peer", "shape": "perSubject", "default": false,
///  "subjectField": "id", "valueField": "online",
///  "notificationByValue": [[true, "peerDidAppear"], [false, "peerDidVanish"]],
///  "subjectKey": "peer"}
/// ```
///
/// Shapes: lastValue, latestEvent (value events), keyDiff and perSubject
/// (events name a subject). The rule is then registered with the center
/// exactly as a standard kind is.
enum CustomKindParser {
    /// The keys every notification line has (BEHAVIOUR.md §7), so no payload key.
    static let observationKeys: Set<String> = ["at", "notification", "merged"]

    static func rule(from json: JSONValue) throws(RequestError) -> CoalescingRule {
        guard let object = json.objectValue else { throw RequestError("must be an object") }
        try RequestDecoder.requireKnownKeys(object, ["name", "shape", "default", "notification", "notificationByValue",
                                               "payloadKey", "subjectKey", "valueKey", "subjectField", "valueField",
                                               "values"], what: "custom kind")
        guard let name = object["name"]?.stringValue, !name.isEmpty else { throw RequestError("needs a 'name'") }
        guard !NotificationKind.standard.contains(NotificationKind(name)) else {
            throw RequestError("'\(name)' is a standard kind; a custom kind needs its own name")
        }
        guard let shapeName = object["shape"]?.stringValue, let shape = CoalescingRule.Shape(rawValue: shapeName) else {
            let shapes = CoalescingRule.Shape.allCases.map(\.rawValue).joined(separator: ", ")
            throw RequestError("needs a 'shape' (one of \(shapes))")
        }
        let naming: CoalescingRule.Naming
        if let fixed = object["notification"]?.stringValue {
            naming = .fixed(fixed)
        } else if let table = object["notificationByValue"]?.arrayValue {
            var pairs: [(JSONValue, String)] = []
            for entry in table {
                guard let pair = entry.arrayValue, pair.count == 2, let notification = pair[1].stringValue else {
                    throw RequestError("'notificationByValue' entries must be [value, name]")
                }
                pairs.append((pair[0], notification))
            }
            naming = .byValue(pairs)
        } else {
            throw RequestError("needs 'notification' or 'notificationByValue'")
        }
        var check = ValueCheck.any
        if let values = object["values"] {
            guard let list = values.arrayValue?.compactMap(\.stringValue), list.count == values.arrayValue?.count else {
                throw RequestError("'values' must be an array of strings")
            }
            check = .oneOf(list)
        }
        let keyed = shape == .keyDiff || shape == .perSubject
        let eventFormat: CoalescingRule.EventFormat = keyed
            ? .subjectAndValue(subjectField: object["subjectField"]?.stringValue ?? "id",
                               valueField: object["valueField"]?.stringValue ?? "value", value: check)
            : .value(check)
        // The observation line's own keys (BEHAVIOUR.md §7, revision 3): a payload
        // key of that name would overwrite the line's time, its name or its
        // merge count.
        for field in ["payloadKey", "subjectKey", "valueKey"] {
            if let key = object[field]?.stringValue, observationKeys.contains(key) {
                throw RequestError("'\(field)' may not be '\(key)': 'at', 'notification' and 'merged' are the observation's own keys")
            }
        }
        if shape == .perSubject, let valueKey = object["valueKey"]?.stringValue,
           valueKey == (object["subjectKey"]?.stringValue ?? "subject") {
            throw RequestError("'subjectKey' and 'valueKey' are both '\(valueKey)'; one would overwrite the other")
        }
        let payload: CoalescingRule.PayloadFormat
        switch shape {
        case .lastValue, .latestEvent:
            payload = .value(key: object["payloadKey"]?.stringValue ?? "value")
        case .keyDiff:
            payload = .changedMap(key: object["payloadKey"]?.stringValue ?? "changed")
        case .perSubject:
            let subjectKey = object["subjectKey"]?.stringValue ?? "subject"
            payload = object["valueKey"]?.stringValue.map { .subjectAndValue(subjectKey: subjectKey, valueKey: $0) }
                ?? .subject(key: subjectKey)
        }
        return CoalescingRule(kind: NotificationKind(name), shape: shape, defaultValue: object["default"] ?? .null,
                              eventFormat: eventFormat, naming: naming, payload: payload)
    }
}
