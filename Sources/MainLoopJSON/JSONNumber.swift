/// A JSON number: its value, and the decimal text it was written as.
///
/// Numbers compare and hash by value (`1` is `1.0`, `-0` is `0`), as JSON
/// values do. The literal is kept because a Double cannot hold every
/// decimal exactly: BEHAVIOUR.md §7 times are decimal seconds to the nanosecond
/// (`999999999.123456789` has more digits than a Double keeps), so code
/// that needs the exact number reads ``decimalText``.
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    /// The value. Numbers read from JSON text are always finite; one built
    /// from a non-finite Double keeps it (so nothing changes silently), and
    /// the engine's value checks reject it. It prints as `null`, since JSON
    /// has no NaN or infinity.
    public let value: Double
    /// The text as written in the JSON source, or as produced exactly (for
    /// example a nanosecond instant); nil for a number built from a Double.
    public let literal: String?

    /// A number from a Double (`-0` is stored as `0`).
    public init(_ value: Double) {
        self.value = value == 0 ? 0 : value
        literal = nil
    }

    /// A number from its exact decimal text (`"0.3"`, `"-12"`, `"1e-9"`);
    /// nil when the text is not a finite JSON number.
    public init?(decimalText: String) {
        guard Self.isJSONNumberSyntax(decimalText), let value = Double(decimalText), value.isFinite else { return nil }
        self.value = value == 0 ? 0 : value
        literal = decimalText
    }

    /// A number whose exact decimal text the caller made from the value
    /// it stands for, with no parse: `value` must be what `decimalText`
    /// reads as (the nearest Double). For texts made many times a second
    /// (an observation's instant), where reading them back was the cost.
    package init(value: Double, exactText decimalText: String) {
        self.value = value == 0 ? 0 : value
        literal = decimalText
    }

    /// The exact decimal text: the literal, or the shortest text that reads
    /// back as the same Double.
    public var decimalText: String { literal ?? (value.isFinite ? JSONValue.format(value) : "null") }

    public var description: String { decimalText }

    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool { lhs.value == rhs.value }
    public func hash(into hasher: inout Hasher) { hasher.combine(value) }

    /// RFC 8259 number syntax: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isJSONNumberSyntax(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        func digits() -> Int {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let leading = bytes.first
        let integerDigits = digits()
        guard integerDigits > 0, !(integerDigits > 1 && leading == UInt8(ascii: "0")) else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
