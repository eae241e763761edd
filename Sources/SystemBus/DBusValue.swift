/// A value read from a D-Bus message: every basic type, arrays,
/// dictionaries (arrays of dict entries), structures and variants.
public indirect enum DBusValue: Equatable, Sendable {
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A Unix descriptor passed in the message (its number in the message).
    case unixFD(Int32)
    case array([DBusValue])
    /// An `a{..}`: key/value pairs in message order.
    case dictionary([(key: DBusValue, value: DBusValue)])
    case structure([DBusValue])
    case variant(DBusValue)

    /// The value inside any number of variants.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// A string or object path (through variants).
    public var stringValue: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text), .signature(let text): return text
        default: return nil
        }
    }

    /// A boolean (through variants).
    public var boolValue: Bool? {
        if case .bool(let value) = unwrapped { return value }
        return nil
    }

    /// Any number as a Double (through variants).
    public var doubleValue: Double? {
        switch unwrapped {
        case .double(let value): return value
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        default: return nil
        }
    }

    /// Any integer as an Int64 (through variants), if it fits.
    public var integerValue: Int64? {
        switch unwrapped {
        case .int(let value): return value
        case .uint(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    /// An `a{sv}` (or any string-keyed dictionary) as a Swift dictionary of
    /// the values inside their variants; nil for anything else.
    public var properties: [String: DBusValue]? {
        guard case .dictionary(let pairs) = unwrapped else { return nil }
        var result: [String: DBusValue] = [:]
        for (key, value) in pairs {
            guard let name = key.stringValue else { return nil }
            result[name] = value.unwrapped
        }
        return result
    }

    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.uint(let a), .uint(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)), (.objectPath(let a), .objectPath(let b)), (.signature(let a), .signature(let b)):
            return a == b
        case (.unixFD(let a), .unixFD(let b)): return a == b
        case (.array(let a), .array(let b)), (.structure(let a), .structure(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.variant(let a), .variant(let b)): return a == b
        default: return false
        }
    }
}
