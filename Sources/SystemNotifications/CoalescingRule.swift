import MainLoopJSON

/// How events of one kind are delivered and merged: the coalescing rules of
/// BEHAVIOUR.md §4 as data. Every standard kind is built from one of four shapes,
/// and a user kind registered with the same shape behaves the same way.
public final class CoalescingRule: Sendable {
    /// The four merge shapes.
    public enum Shape: String, Sendable, Equatable, CaseIterable {
        /// One value per kind; on resume the last value, or nothing if it
        /// equals the value at suspension (orientation, locale, battery, ...).
        case lastValue
        /// Every event counts; on resume one notification with the most
        /// recent value if any occurred (significantTimeChange).
        case latestEvent
        /// A map of keys; on resume one notification listing every key whose
        /// final value differs from its value at suspension (userDefaults).
        case keyDiff
        /// One value per subject; on resume one notification per subject
        /// whose final value differs (accessory, screen, screenMode).
        case perSubject
    }

    /// How an event's fields are read from JSON.
    public enum EventFormat: Sendable, Equatable {
        /// The event is the value itself: `{"orientation": "faceUp"}`.
        case value(ValueCheck)
        /// The event is an object naming a subject and a value:
        /// `{"accessory": {"id": "dock", "connected": true}}`.
        case subjectAndValue(subjectField: String, valueField: String, value: ValueCheck, valueMayBeAbsent: Bool = false)
    }

    /// How a notification is named from its value.
    public enum Naming: Sendable, Equatable {
        /// Always this name.
        case fixed(String)
        /// By the value: the name paired with the first matching value.
        case byValue([(JSONValue, String)])

        public static func == (lhs: Naming, rhs: Naming) -> Bool {
            switch (lhs, rhs) {
            case (.fixed(let a), .fixed(let b)): return a == b
            case (.byValue(let a), .byValue(let b)):
                return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
            default: return false
            }
        }
    }

    /// How the payload of BEHAVIOUR.md §4 is built.
    public enum PayloadFormat: Sendable, Equatable {
        /// No fields (protectedData).
        case none
        /// `{key: value}`.
        case value(key: String)
        /// `{subjectKey: subject}` (accessory, screen).
        case subject(key: String)
        /// `{subjectKey: subject, valueKey: value}` (screenMode).
        case subjectAndValue(subjectKey: String, valueKey: String)
        /// `{key: {subject: value, ...}}` (userDefaults' `changed`).
        case changedMap(key: String)
    }

    /// The kind this rule governs.
    public let kind: NotificationKind
    /// The merge shape.
    public let shape: Shape
    /// The system's value before any event (per subject for keyed shapes:
    /// the value of a subject never seen, e.g. `false` for "connected").
    public let defaultValue: JSONValue
    /// How events are read.
    public let eventFormat: EventFormat
    /// How notifications are named.
    public let naming: Naming
    /// How payloads are built.
    public let payloadFormat: PayloadFormat

    /// A rule. The kind's name is also its event key in scenarios.
    public init(kind: NotificationKind, shape: Shape, defaultValue: JSONValue, eventFormat: EventFormat,
                naming: Naming, payload: PayloadFormat) {
        self.kind = kind
        self.shape = shape
        self.defaultValue = defaultValue
        self.eventFormat = eventFormat
        self.naming = naming
        self.payloadFormat = payload
    }

    /// Whether events of this kind name a subject.
    public var isKeyed: Bool { shape == .keyDiff || shape == .perSubject }

    /// The check every value of this kind passes.
    public var valueCheck: ValueCheck {
        switch eventFormat {
        case .value(let check), .subjectAndValue(_, _, let check, _): return check
        }
    }

    /// The allowed values, when the kind has a list: its values are then
    /// carried as an index into it (``EventValue/Tag/enumCase``).
    public var enumeratedValues: [String]? {
        if case .oneOf(let values) = valueCheck { return values }
        return nil
    }

    /// The JSON form of a value that is not a symbol.
    func json(forPlain value: EventValue) -> JSONValue {
        switch value.tag {
        case .null: return .null
        case .bool: return .bool(value.bits != 0)
        case .number: return .number(Double(bitPattern: value.bits))
        case .enumCase: return .string(enumeratedValues![Int(value.bits)])
        case .symbol: preconditionFailure("CoalescingRule: a symbol must be resolved by its table")
        }
    }

    func notificationName(_ value: JSONValue) -> String {
        switch naming {
        case .fixed(let name): return name
        case .byValue(let table): return table.first { $0.0 == value }?.1 ?? "\(kind.name)DidChange"
        }
    }

    func payload(_ subject: String?, _ value: JSONValue) -> JSONObject {
        var object = JSONObject()
        forEachPayloadField(subject, value) { object[$0] = $1 }
        return object
    }

    /// The payload's fields in order, each key once (a rule whose subject
    /// and value keys are one key has that key hold the value, as the
    /// object would), without building the object.
    func forEachPayloadField(_ subject: String?, _ value: JSONValue, _ body: (String, JSONValue) -> Void) {
        switch payloadFormat {
        case .none: break
        case .value(let key): body(key, value)
        case .subject(let key): body(key, subject.map(JSONValue.string) ?? .null)
        case .subjectAndValue(let subjectKey, let valueKey):
            if subjectKey != valueKey { body(subjectKey, subject.map(JSONValue.string) ?? .null) }
            body(valueKey, value)
        case .changedMap(let key):
            body(key, subject.map { .object(JSONObject([($0, value)])) } ?? value)
        }
    }

    /// Reads an event of this kind from its JSON payload.
    /// - Throws: ``EventDecodingError`` naming the field and what it expected.
    public func decodeEvent(_ json: JSONValue) throws(EventDecodingError) -> SystemEvent {
        switch eventFormat {
        case .value(let check):
            if let problem = check.problem(with: json) { throw EventDecodingError(kind: kind, problem: problem) }
            return SystemEvent(kind: kind, value: json)
        case .subjectAndValue(let subjectField, let valueField, let check, let valueMayBeAbsent):
            guard let object = json.objectValue else {
                throw EventDecodingError(kind: kind, problem: "expected an object with '\(subjectField)' and '\(valueField)'")
            }
            guard let subject = object[subjectField]?.stringValue else {
                throw EventDecodingError(kind: kind, problem: "'\(subjectField)' must be a string")
            }
            let unknown = object.orderedKeys.filter { $0 != subjectField && $0 != valueField }
            guard unknown.isEmpty else {
                throw EventDecodingError(kind: kind, problem: "unknown field '\(unknown[0])'")
            }
            let value: JSONValue
            if let present = object[valueField] {
                value = present
            } else if valueMayBeAbsent {
                value = .null
            } else {
                throw EventDecodingError(kind: kind, problem: "missing '\(valueField)'")
            }
            if let problem = check.problem(with: value) {
                throw EventDecodingError(kind: kind, problem: "'\(valueField)': \(problem)")
            }
            return SystemEvent(kind: kind, subject: subject, value: value)
        }
    }
}

/// A malformed event payload.
public struct EventDecodingError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The kind whose event was malformed.
    public let kind: NotificationKind
    /// What is wrong.
    public let problem: String
    public var description: String { "\(kind.name) event: \(problem)" }
}
