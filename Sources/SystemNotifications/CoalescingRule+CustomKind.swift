import MainLoopJSON

/// Why a custom kind's JSON entry cannot be read, or why a rule cannot be
/// written as one.
public struct CustomKindError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the field.
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// A rule as a custom kind's JSON entry (a scenario's `config.customKinds`,
/// `mainloop replay --kinds FILE`), and back: one declaration serves the
/// service's Swift code and the scenarios that test it.
///
/// ```json
/// {"name": "mood", "shape": "lastValue", "default": "calm",
///  "notification": "moodDidChange", "payloadKey": "mood", "values": ["calm", "busy"]}
/// ```
///
/// The fields are listed in docs/BEHAVIOUR.md §7. Every rule whose event
/// format and payload fit its shape has an entry, and reading the entry
/// gives a rule equal to it.
extension CoalescingRule {
    /// The keys every notification line has (BEHAVIOUR.md §7): a payload key
    /// of that name would overwrite the line's time, its name or its merge count.
    public static let observationKeys: Set<String> = ["at", "notification", "merged"]

    private static let entryKeys = ["name", "shape", "default", "notification", "notificationByValue", "values",
                                    "valueType", "minimum", "maximum", "subjectField", "valueField",
                                    "valueMayBeAbsent", "payloadKey", "subjectKey", "valueKey", "noPayload"]

    /// Reads a rule from a custom kind's JSON entry.
    /// - Throws: ``CustomKindError`` naming the field that is missing,
    ///   unknown, of the wrong type or not allowed for the shape. A standard
    ///   kind's name is refused: a custom kind needs its own.
    public convenience init(customKind json: JSONValue) throws(CustomKindError) {
        guard let entry = json.objectValue else { throw CustomKindError("must be an object") }
        if let unknown = entry.orderedKeys.first(where: { !Self.entryKeys.contains($0) }) {
            throw CustomKindError("unknown key '\(unknown)' in custom kind (known: \(Self.entryKeys.joined(separator: ", ")))")
        }
        guard let name = entry["name"]?.stringValue, !name.isEmpty else { throw CustomKindError("needs a 'name'") }
        guard !NotificationKind.standard.contains(NotificationKind(name)) else {
            throw CustomKindError("'\(name)' is a standard kind; a custom kind needs its own name")
        }
        guard let shapeName = entry["shape"]?.stringValue, let shape = Shape(rawValue: shapeName) else {
            throw CustomKindError("needs a 'shape' (one of \(Shape.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let keyed = shape == .keyDiff || shape == .perSubject
        let notFor: [String] = switch shape {
        case .lastValue, .latestEvent: ["subjectField", "valueField", "valueMayBeAbsent", "subjectKey", "valueKey"]
        case .keyDiff: ["subjectKey", "valueKey"]
        case .perSubject: ["payloadKey"]
        }
        if let misplaced = notFor.first(where: { entry[$0] != nil }) {
            throw CustomKindError("'\(misplaced)' does not apply to the \(shape.rawValue) shape")
        }
        let check = try Self.valueCheck(entry)
        let eventFormat: EventFormat = keyed
            ? .subjectAndValue(subjectField: try Self.string(entry, "subjectField") ?? "id",
                               valueField: try Self.string(entry, "valueField") ?? "value", value: check,
                               valueMayBeAbsent: try Self.flag(entry, "valueMayBeAbsent"))
            : .value(check)
        self.init(kind: NotificationKind(name), shape: shape, defaultValue: entry["default"] ?? .null,
                  eventFormat: eventFormat, naming: try Self.naming(entry), payload: try Self.payload(entry, shape: shape))
    }

    /// The custom kind's JSON entry for this rule, every field written out.
    /// - Throws: ``CustomKindError`` when the rule has no entry: its event
    ///   format or payload does not fit its shape, a payload key is one of
    ///   ``observationKeys``, it is a standard kind, or a number range is
    ///   not one JSON can write.
    public func customKindJSON() throws(CustomKindError) -> JSONValue {
        var entry = JSONObject()
        entry["name"] = .string(kind.name)
        entry["shape"] = .string(shape.rawValue)
        entry["default"] = defaultValue
        switch naming {
        case .fixed(let name): entry["notification"] = .string(name)
        case .byValue(let table): entry["notificationByValue"] = .array(table.map { .array([$0.0, .string($0.1)]) })
        }
        try write(valueCheck, into: &entry)
        switch (eventFormat, isKeyed) {
        case (.value, false): break
        case (.subjectAndValue(let subjectField, let valueField, _, let valueMayBeAbsent), true):
            entry["subjectField"] = .string(subjectField)
            entry["valueField"] = .string(valueField)
            if valueMayBeAbsent { entry["valueMayBeAbsent"] = .bool(true) }
        default:
            throw CustomKindError("the \(shape.rawValue) shape's events \(isKeyed ? "name" : "do not name") a subject; "
                                  + "this rule's event format says otherwise")
        }
        switch (payloadFormat, shape) {
        case (.none, _): entry["noPayload"] = .bool(true)
        case (.value(let key), .lastValue), (.value(let key), .latestEvent), (.changedMap(let key), .keyDiff):
            entry["payloadKey"] = .string(key)
        case (.subject(let key), .perSubject): entry["subjectKey"] = .string(key)
        case (.subjectAndValue(let subjectKey, let valueKey), .perSubject):
            entry["subjectKey"] = .string(subjectKey)
            entry["valueKey"] = .string(valueKey)
        default: throw CustomKindError("the payload \(payloadFormat) does not fit the \(shape.rawValue) shape")
        }
        let json = JSONValue.object(entry)
        // What is written must read back: the reader's checks (a standard
        // name, an observation key) are the entry's whole contract.
        _ = try CoalescingRule(customKind: json)
        return json
    }

    private func write(_ check: ValueCheck, into entry: inout JSONObject) throws(CustomKindError) {
        switch check {
        case .any: entry["valueType"] = "any"
        case .string: entry["valueType"] = "string"
        case .stringOrNull: entry["valueType"] = "stringOrNull"
        case .bool: entry["valueType"] = "bool"
        case .oneOf(let values): entry["values"] = .array(values.map(JSONValue.string))
        case .number(let range):
            entry["valueType"] = "number"
            for (field, bound, unbounded) in [("minimum", range.lowerBound, -Double.infinity),
                                              ("maximum", range.upperBound, Double.infinity)] where bound != unbounded {
                guard bound.isFinite else {
                    throw CustomKindError("the number range \(range) has a bound JSON cannot write")
                }
                entry[field] = .number(bound)
            }
        }
    }

    private static func valueCheck(_ entry: JSONObject) throws(CustomKindError) -> ValueCheck {
        if let values = entry["values"] {
            guard entry["valueType"] == nil else { throw CustomKindError("give 'values' or 'valueType', not both") }
            guard let list = values.arrayValue, case let strings = list.compactMap(\.stringValue),
                  strings.count == list.count else {
                throw CustomKindError("'values' must be an array of strings")
            }
            guard entry["minimum"] == nil, entry["maximum"] == nil else {
                throw CustomKindError("'minimum' and 'maximum' go with \"valueType\": \"number\"")
            }
            return .oneOf(strings)
        }
        let type = try string(entry, "valueType") ?? "any"
        if type != "number", entry["minimum"] != nil || entry["maximum"] != nil {
            throw CustomKindError("'minimum' and 'maximum' go with \"valueType\": \"number\"")
        }
        switch type {
        case "any": return .any
        case "string": return .string
        case "stringOrNull": return .stringOrNull
        case "bool": return .bool
        case "number":
            let minimum = try number(entry, "minimum") ?? -.infinity
            let maximum = try number(entry, "maximum") ?? .infinity
            guard minimum <= maximum else {
                throw CustomKindError("'minimum' (\(JSONValue.format(minimum))) is above 'maximum' (\(JSONValue.format(maximum)))")
            }
            return .number(minimum...maximum)
        default:
            throw CustomKindError("'valueType' must be one of any, string, stringOrNull, bool, number; not '\(type)'")
        }
    }

    private static func naming(_ entry: JSONObject) throws(CustomKindError) -> Naming {
        switch (entry["notification"], entry["notificationByValue"]) {
        case (.some(let fixed), nil):
            guard let name = fixed.stringValue else { throw CustomKindError("'notification' must be a string") }
            return .fixed(name)
        case (nil, .some(let table)):
            guard let entries = table.arrayValue else { throw CustomKindError("'notificationByValue' must be an array") }
            var pairs: [(JSONValue, String)] = []
            for pair in entries {
                guard let pair = pair.arrayValue, pair.count == 2, let name = pair[1].stringValue else {
                    throw CustomKindError("'notificationByValue' entries must be [value, name]")
                }
                pairs.append((pair[0], name))
            }
            return .byValue(pairs)
        case (.some, .some): throw CustomKindError("give 'notification' or 'notificationByValue', not both")
        case (nil, nil): throw CustomKindError("needs 'notification' or 'notificationByValue'")
        }
    }

    private static func payload(_ entry: JSONObject, shape: Shape) throws(CustomKindError) -> PayloadFormat {
        for field in ["payloadKey", "subjectKey", "valueKey"] {
            if let key = try string(entry, field), observationKeys.contains(key) {
                throw CustomKindError("'\(field)' may not be '\(key)': 'at', 'notification' and 'merged' are the observation's own keys")
            }
        }
        if try flag(entry, "noPayload") {
            if let key = ["payloadKey", "subjectKey", "valueKey"].first(where: { entry[$0] != nil }) {
                throw CustomKindError("'noPayload' and '\(key)' exclude each other")
            }
            return .none
        }
        switch shape {
        case .lastValue, .latestEvent: return .value(key: try string(entry, "payloadKey") ?? "value")
        case .keyDiff: return .changedMap(key: try string(entry, "payloadKey") ?? "changed")
        case .perSubject:
            let subjectKey = try string(entry, "subjectKey") ?? "subject"
            guard let valueKey = try string(entry, "valueKey") else { return .subject(key: subjectKey) }
            guard valueKey != subjectKey else {
                throw CustomKindError("'subjectKey' and 'valueKey' are both '\(valueKey)'; one would overwrite the other")
            }
            return .subjectAndValue(subjectKey: subjectKey, valueKey: valueKey)
        }
    }

    private static func string(_ entry: JSONObject, _ field: String) throws(CustomKindError) -> String? {
        guard let value = entry[field] else { return nil }
        guard let string = value.stringValue else { throw CustomKindError("'\(field)' must be a string") }
        return string
    }

    private static func number(_ entry: JSONObject, _ field: String) throws(CustomKindError) -> Double? {
        guard let value = entry[field] else { return nil }
        guard let number = value.numberValue, number.isFinite else { throw CustomKindError("'\(field)' must be a number") }
        return number
    }

    private static func flag(_ entry: JSONObject, _ field: String) throws(CustomKindError) -> Bool {
        guard let value = entry[field] else { return false }
        guard let flag = value.boolValue else { throw CustomKindError("'\(field)' must be true or false") }
        return flag
    }
}

extension CoalescingRule: Equatable {
    /// Two rules are equal when every field is: they govern a kind of the
    /// same name in the same way.
    public static func == (lhs: CoalescingRule, rhs: CoalescingRule) -> Bool {
        lhs.kind.name == rhs.kind.name && lhs.shape == rhs.shape && lhs.defaultValue == rhs.defaultValue
            && lhs.eventFormat == rhs.eventFormat && lhs.naming == rhs.naming && lhs.payloadFormat == rhs.payloadFormat
    }
}
