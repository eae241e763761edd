/// The properties a source reads from a daemon's object, each with the
/// kind of value it must have. A property of another kind is left out and
/// named (a daemon's bug or an impostor's value must not read like a real
/// reading, nor silently leave the default in place); properties the
/// schema does not name are ignored.
public struct DBusPropertySchema: Sendable {
    /// The kinds a property can be required to have.
    public enum Kind: String, Sendable {
        case bool, integer, double, string

        /// Whether `value` (already out of its variant) is of this kind.
        func admits(_ value: DBusValue) -> Bool {
            switch (self, value) {
            case (.bool, .bool), (.integer, .int), (.integer, .uint), (.double, .double), (.string, .string):
                return true
            default:
                return false
            }
        }
    }

    /// Each property's required kind, by name.
    public let kinds: [String: Kind]

    /// A schema of `kinds`.
    public init(_ kinds: [String: Kind]) { self.kinds = kinds }

    /// The properties the schema names and whose values have the right
    /// kind, and a description of each that had another.
    public func accept(_ properties: [String: DBusValue]) -> (accepted: [String: DBusValue], problems: [String]) {
        var accepted: [String: DBusValue] = [:]
        var problems: [String] = []
        for (name, value) in properties {
            guard let kind = kinds[name] else { continue }
            let inner = value.unwrapped
            if kind.admits(inner) {
                accepted[name] = inner
            } else {
                problems.append("\(name) is \(inner.kindName), not \(kind.rawValue); ignored")
            }
        }
        return (accepted, problems.sorted())
    }
}

extension DBusValue {
    /// What kind of value this is, for messages.
    var kindName: String {
        switch self {
        case .bool: return "bool"
        case .int, .uint: return "integer"
        case .double: return "double"
        case .string: return "string"
        case .objectPath: return "object path"
        case .signature: return "signature"
        case .unixFD: return "unix fd"
        case .array: return "array"
        case .dictionary: return "dictionary"
        case .structure: return "structure"
        case .variant: return "variant"
        }
    }
}
