import MainLoopJSON

/// What values an event field accepts; part of a rule's data, used to
/// reject malformed events (from scenarios or the control socket) with a
/// clear message before they change anything.
public enum ValueCheck: Sendable, Equatable {
    /// Any JSON value.
    case any
    /// Any string.
    case string
    /// A string or null.
    case stringOrNull
    /// One of these strings.
    case oneOf([String])
    /// A number in this range.
    case number(ClosedRange<Double>)
    /// true or false.
    case bool

    /// nil if `value` passes, else what was expected. Numbers must be
    /// finite everywhere (JSON has no NaN or infinity).
    public func problem(with value: JSONValue) -> String? {
        if let problem = Self.nonFiniteNumber(in: value) { return problem }
        switch (self, value) {
        case (.any, _), (.string, .string), (.stringOrNull, .string), (.stringOrNull, .null), (.bool, .bool):
            return nil
        case (.oneOf(let allowed), .string(let string)) where allowed.contains(string):
            return nil
        case (.number(let range), .number(let number)) where range.contains(number.value):
            return nil
        case (.string, _): return "expected a string, got \(value.jsonText)"
        case (.stringOrNull, _): return "expected a string or null, got \(value.jsonText)"
        case (.bool, _): return "expected true or false, got \(value.jsonText)"
        case (.oneOf(let allowed), _):
            return "expected one of \(allowed.joined(separator: ", ")), got \(value.jsonText)"
        case (.number(let range), _):
            return "expected a number in \(JSONValue.format(range.lowerBound))...\(JSONValue.format(range.upperBound)), got \(value.jsonText)"
        }
    }
}

extension ValueCheck {
    /// A complaint about the first non-finite number inside `value`, if any.
    static func nonFiniteNumber(in value: JSONValue) -> String? {
        switch value {
        case .number(let number) where !number.value.isFinite: return "expected a finite number, got \(number.value)"
        case .array(let values): return values.lazy.compactMap(nonFiniteNumber(in:)).first
        case .object(let object): return object.lazy.compactMap { nonFiniteNumber(in: $0.value) }.first
        default: return nil
        }
    }
}

extension ValueCheck {
    /// Whether every value that passes is plain data (a Bool, a number,
    /// null, or one of a list of strings): never an interned symbol.
    var isPlainOnly: Bool {
        switch self {
        case .bool, .number, .oneOf: return true
        case .any, .string, .stringOrNull: return false
        }
    }
}
