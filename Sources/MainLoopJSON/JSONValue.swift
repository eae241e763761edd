/// A JSON value: the payload type of system events and notifications, and
/// the data model of replay scenarios, observations and control messages.
///
/// Values compare and hash as JSON values: numbers by value (`12 == 12.0`,
/// and `true` is not `1`), objects without regard to key order. Objects
/// keep their keys in insertion order so output reads in a stable order.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// A number, with the exact text it was written as (see ``JSONNumber``).
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The string, if this is a string.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// A number from a Double.
    public static func number(_ value: Double) -> JSONValue { .number(JSONNumber(value)) }

    /// The number, if this is a number.
    public var numberValue: Double? { if case .number(let n) = self { return n.value } else { return nil } }
    /// The number with its exact text, if this is a number.
    public var exactNumber: JSONNumber? { if case .number(let n) = self { return n } else { return nil } }
    /// The Bool, if this is a Bool.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    /// The object, if this is an object.
    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }
    /// The array, if this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    /// Whether this is `null`.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// A short name of the value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

// Deliberately not ExpressibleByNilLiteral: with it, `dict[key] = c ? nil : v`
// and `c ? value : nil` silently produce `.null` instead of "no value" (the
// cause of two defects: a keyed subject stored as null, a flushed value
// printed as null). Write `.null` for JSON null.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}
