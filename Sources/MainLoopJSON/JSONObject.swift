/// A JSON object that remembers key insertion order but compares as a set of
/// key/value pairs. Setting an existing key keeps its position.
public struct JSONObject: Hashable, Sendable, Sequence {
    /// The pairs, in insertion order: what printing and iteration walk,
    /// with no hashing.
    private var entries: [Entry] = []
    /// Key → position in `entries`, kept once the object has more than
    /// `indexedFrom` keys. A smaller object (a reply, a request) is
    /// searched linearly: comparing a few short keys costs less than
    /// hashing them.
    private var index: [String: Int]?
    private static let indexedFrom = 12

    /// An empty object.
    public init() {}

    /// An object from pairs, in order; a repeated key keeps its first position
    /// and its last value.
    public init(_ pairs: [(String, JSONValue)]) {
        entries.reserveCapacity(pairs.count)
        for (key, value) in pairs { self[key] = value }
    }

    /// One pair as stored: a struct, not a tuple, because an array of
    /// tuples is destroyed through the runtime's generic tuple witness
    /// (for every pair of every request and reply).
    package struct Entry {
        var key: String
        var value: JSONValue

        /// The pair `key: value`.
        package init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// An object of `entries`, in order, taken as they are: the caller
    /// (this package's own replies, whose keys are distinct literals)
    /// vouches that no key repeats, so no key is compared with another
    /// and the array is kept as it is (the six-key state reply took 3,826
    /// instructions to build from a literal, 754 so). Debug builds check
    /// the promise.
    package init(distinctKeys entries: [Entry]) {
        assert(Set(entries.map(\.key)).count == entries.count, "JSONObject(distinctKeys:): a key repeats")
        self.entries = entries
        rebuildIndex()
    }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        return entries.firstIndex { $0.key == key }
    }

    private mutating func rebuildIndex() {
        guard entries.count > Self.indexedFrom else { return index = nil }
        var built = [String: Int](minimumCapacity: entries.count)
        for (position, entry) in entries.enumerated() { built[entry.key] = position }
        index = built
    }

    /// The value for `key`, or nil when absent. Assigning nil removes the key.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { entries[$0].value } }
        set {
            if let newValue {
                if let position = position(of: key) {
                    entries[position].value = newValue
                } else {
                    appendNewKey(key, newValue)
                }
            } else if let position = position(of: key) {
                entries.remove(at: position)
                // The positions after it moved (O(n), as removing from an
                // ordered key list always was).
                if index != nil { rebuildIndex() }
            }
        }
    }

    /// Adds `key`, which the caller has just found absent, after the others
    /// (the parser's insert, with no second search).
    mutating func appendNewKey(_ key: String, _ value: JSONValue) {
        entries.append(Entry(key, value))
        if index != nil {
            index![key] = entries.count - 1
        } else if entries.count > Self.indexedFrom {
            rebuildIndex()
        }
    }

    /// Makes room for `count` keys in all, so that adding keys up to it
    /// does not reallocate (a line built field by field).
    public mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
    }

    /// The keys in insertion order.
    public var orderedKeys: [String] { entries.map(\.key) }
    /// How many keys.
    public var count: Int { entries.count }
    /// Whether there are no keys.
    public var isEmpty: Bool { entries.isEmpty }

    /// `body` with the pairs in insertion order, in place: the printer
    /// reads each pair where it is stored, with no copy (and no retain)
    /// of its key and value.
    func withEntries<Result>(_ body: (UnsafeBufferPointer<Entry>) -> Result) -> Result {
        entries.withUnsafeBufferPointer(body)
    }

    /// Walks the pairs in insertion order.
    public struct Iterator: IteratorProtocol {
        private let entries: [Entry]
        private var position = 0

        init(_ entries: [Entry]) { self.entries = entries }

        /// The next pair, or nil after the last.
        public mutating func next() -> (key: String, value: JSONValue)? {
            guard position < entries.count else { return nil }
            defer { position += 1 }
            return (entries[position].key, entries[position].value)
        }
    }

    /// Iterates (key, value) in insertion order.
    public func makeIterator() -> Iterator { Iterator(entries) }

    /// Whether the two share their storage: one is a copy of the other and
    /// neither changed since, so they are the same in every way, key order
    /// included. O(1), for caching what was made from an object (its text);
    /// false does not mean they differ.
    public func isIdentical(to other: JSONObject) -> Bool {
        entries.count == other.entries.count && entries.withUnsafeBufferPointer { mine in
            other.entries.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress }
        }
    }

    /// Equal when both hold the same pairs, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.count == rhs.count && lhs.entries.allSatisfy { rhs[$0.key] == $0.value }
    }

    /// Order-insensitive, like equality: the sum of each pair's own hash.
    public func hash(into hasher: inout Hasher) {
        var sum = 0
        for entry in entries {
            var pair = Hasher()
            pair.combine(entry.key)
            pair.combine(entry.value)
            sum &+= pair.finalize()
        }
        hasher.combine(entries.count)
        hasher.combine(sum)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// An object from a literal, keys in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}
