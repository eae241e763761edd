/// Decodes a ``JSONValue`` (a notification's payload, a control request)
/// into your own `Decodable` type, without a round trip through text:
///
/// ```swift
/// struct Orientation: Decodable { let orientation: String }
/// let decoded = try JSONValueDecoder().decode(Orientation.self, from: .object(notification.payload))
/// ```
///
/// Numbers decode into any integer type only when they are whole and in
/// range (`12.0` is a fine `Int`, `12.5` and `1e40` are not), into `Double`
/// and `Float` as written; a key that is absent or `null` decodes as nil for
/// an optional. Failures are the standard `DecodingError`s with the coding
/// path of the offending value.
public struct JSONValueDecoder: Sendable {
    /// Values for `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    public init() {}

    /// Decodes `type` from `value`.
    /// - Throws: `DecodingError` when `value` does not have the type's shape.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: ValueDecoder(value: value, codingPath: [], userInfo: userInfo))
    }
}

/// The `Decoder` over one value at one coding path.
private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else { throw mismatch(JSONObject.self, at: codingPath, found: value) }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath, userInfo: userInfo))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([JSONValue].self, at: codingPath, found: value) }
        return UnkeyedContainer(elements: elements, codingPath: codingPath, userInfo: userInfo)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValue(value: value, codingPath: codingPath, userInfo: userInfo)
    }
}

/// A type mismatch at `path`, naming what was found.
private func mismatch(_ expected: Any.Type, at path: [any CodingKey], found: JSONValue) -> DecodingError {
    let context = DecodingError.Context(codingPath: path, debugDescription: "expected \(expected), found a JSON \(found.typeName)")
    return found.isNull ? .valueNotFound(expected, context) : .typeMismatch(expected, context)
}

/// Decodes one scalar or a nested value (shared by the three containers).
private func decodeValue<T: Decodable>(_ type: T.Type, from value: JSONValue, at path: [any CodingKey],
                                       userInfo: [CodingUserInfoKey: Any]) throws -> T {
    switch type {
    case is Bool.Type:
        guard case .bool(let bool) = value else { throw mismatch(type, at: path, found: value) }
        return bool as! T
    case is String.Type:
        guard case .string(let string) = value else { throw mismatch(type, at: path, found: value) }
        return string as! T
    case is Double.Type:
        guard case .number(let number) = value else { throw mismatch(type, at: path, found: value) }
        return number.value as! T
    case is Float.Type:
        guard case .number(let number) = value else { throw mismatch(type, at: path, found: value) }
        return Float(number.value) as! T
    case is JSONValue.Type:
        return value as! T
    case is JSONObject.Type:
        guard case .object(let object) = value else { throw mismatch(type, at: path, found: value) }
        return object as! T
    default:
        if let integer = type as? any (FixedWidthInteger & Decodable).Type {
            return try decodeInteger(integer, from: value, at: path) as! T
        }
        return try T(from: ValueDecoder(value: value, codingPath: path, userInfo: userInfo))
    }
}

/// An integer only when the number is whole and in the type's range.
private func decodeInteger<I: FixedWidthInteger>(_ type: I.Type, from value: JSONValue,
                                                   at path: [any CodingKey]) throws -> I {
    guard case .number(let number) = value else { throw mismatch(type, at: path, found: value) }
    guard let exact = I(exactly: number.value) else {
        throw DecodingError.dataCorrupted(.init(codingPath: path,
                                                debugDescription: "\(number.decimalText) is not a whole number in the range of \(type)"))
    }
    return exact
}

/// A key of an array index, for coding paths.
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    var allKeys: [Key] { object.orderedKeys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func value(for key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath,
                                                       debugDescription: "no key '\(key.stringValue)' in the object"))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(for: key).isNull }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeValue(type, from: try value(for: key), at: codingPath + [key], userInfo: userInfo)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = object[key.stringValue], !value.isNull else { return nil }
        return try decodeValue(type, from: value, at: codingPath + [key], userInfo: userInfo)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type,
                                               forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: try value(for: key), codingPath: codingPath + [key], userInfo: userInfo)
            .container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: try value(for: key), codingPath: codingPath + [key], userInfo: userInfo).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: object["super"] ?? .null, codingPath: codingPath, userInfo: userInfo)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key], userInfo: userInfo)
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]
    private(set) var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: Any]) {
        self.elements = elements
        self.codingPath = codingPath
        self.userInfo = userInfo
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next(_ type: Any.Type) throws -> (JSONValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [IndexKey(currentIndex)],
                                                          debugDescription: "the array has only \(elements.count) elements"))
        }
        defer { currentIndex += 1 }
        return (elements[currentIndex], codingPath + [IndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next(type)
        return try decodeValue(type, from: value, at: path, userInfo: userInfo)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next(JSONObject.self)
        return try ValueDecoder(value: value, codingPath: path, userInfo: userInfo).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next([JSONValue].self)
        return try ValueDecoder(value: value, codingPath: path, userInfo: userInfo).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next(JSONValue.self)
        return ValueDecoder(value: value, codingPath: path, userInfo: userInfo)
    }
}

private struct SingleValue: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    func decodeNil() -> Bool { value.isNull }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeValue(type, from: value, at: codingPath, userInfo: userInfo)
    }
}
