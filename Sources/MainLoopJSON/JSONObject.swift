/// A JSON object that remembers key insertion order but compares as a set of
/// key/value pairs. Setting an existing key keeps its position.
public struct JSONObject: Hashable, Sendable, Sequence {
    private var keys: [String] = []
    private var values: [String: JSONValue] = [:]

    /// An empty object.
    public init() {}

    /// An object from pairs, in order; a repeated key keeps its first position
    /// and its last value.
    public init(_ pairs: [(String, JSONValue)]) {
        for (key, value) in pairs { self[key] = value }
    }

    /// The value for `key`, or nil when absent. Assigning nil removes the key.
    public subscript(key: String) -> JSONValue? {
        get { values[key] }
        set {
            if let newValue {
                if values.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if values.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    /// The keys in insertion order.
    public var orderedKeys: [String] { keys }
    /// How many keys.
    public var count: Int { keys.count }
    /// Whether there are no keys.
    public var isEmpty: Bool { keys.isEmpty }

    /// Iterates (key, value) in insertion order.
    public func makeIterator() -> AnyIterator<(key: String, value: JSONValue)> {
        var index = 0
        return AnyIterator {
            guard index < keys.count else { return nil }
            defer { index += 1 }
            return (keys[index], values[keys[index]]!)
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.values == rhs.values }

    /// Order-insensitive, like equality: the sum of each pair's own hash.
    public func hash(into hasher: inout Hasher) {
        var sum = 0
        for (key, value) in values {
            var pair = Hasher()
            pair.combine(key)
            pair.combine(value)
            sum &+= pair.finalize()
        }
        hasher.combine(values.count)
        hasher.combine(sum)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// An object from a literal, keys in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}
