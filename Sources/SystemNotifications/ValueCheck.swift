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

    /// nil if `value` passes, else what was expected.
    public func problem(with value: JSONValue) -> String? {
        switch (self, value) {
        case (.any, _), (.string, .string), (.stringOrNull, .string), (.stringOrNull, .null), (.bool, .bool):
            return nil
        case (.oneOf(let allowed), .string(let string)) where allowed.contains(string):
            return nil
        case (.number(let range), .number(let number)) where range.contains(number):
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
