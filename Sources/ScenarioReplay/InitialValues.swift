import MainLoopJSON
import SystemNotifications

/// Turns a scenario's `initial` object (SPEC §6) into silent initial events.
enum InitialValues {
    /// The events for `initial`, each in the `{"kind": payload}` form the
    /// center decodes (and validates) like any system event.
    static func events(_ initial: JSONObject, customKinds: [CoalescingRule]) throws(ScenarioError) -> [JSONValue] {
        var events: [JSONValue] = []
        func event(_ kind: String, _ payload: JSONValue) { events.append(.object(JSONObject([(kind, payload)]))) }
        for (key, value) in initial {
            switch key {
            case "orientation", "locale", "batteryLevel", "batteryState", "proximity", "protectedData", "ubiquityIdentity":
                event(key, value)
            case "defaults":
                guard let defaults = value.objectValue else { throw ScenarioError(problem: "initial 'defaults' must be an object") }
                for (name, setting) in defaults { event("userDefaults", ["key": .string(name), "value": setting]) }
            case "accessories", "screens":
                guard let ids = value.arrayValue, ids.allSatisfy({ $0.stringValue != nil }) else {
                    throw ScenarioError(problem: "initial '\(key)' must be an array of ids")
                }
                for id in ids { event(key == "accessories" ? "accessory" : "screen", ["id": id, "connected": true]) }
            case "screenModes":
                guard let modes = value.objectValue else { throw ScenarioError(problem: "initial 'screenModes' must be an object") }
                for (screen, mode) in modes { event("screenMode", ["screen": .string(screen), "mode": mode]) }
            default:
                guard let rule = customKinds.first(where: { $0.kind.name == key }) else {
                    throw ScenarioError(problem: "unknown initial key '\(key)'")
                }
                if rule.isKeyed {
                    guard let subjects = value.objectValue, case .subjectAndValue(let subjectField, let valueField, _, _) = rule.eventFormat else {
                        throw ScenarioError(problem: "initial '\(key)' must be an object of subject to value")
                    }
                    for (subject, subjectValue) in subjects {
                        event(key, .object(JSONObject([(subjectField, .string(subject)), (valueField, subjectValue)])))
                    }
                } else {
                    event(key, value)
                }
            }
        }
        return events
    }
}
