import Glibc
import MainLoopJSON

/// The parts of a request line of the commonest form,
/// `{"system":{"<kind>":<value>}}` (JSON whitespace anywhere between the
/// tokens), read straight from its bytes: the kind's name and the value,
/// with no JSON tree built for the request.
///
/// Only a plain line is read so: every byte ASCII, the kind's name a
/// string with no escape, the value a string with no escape, a number,
/// `true`, `false` or `null`. Any other line (another request, a
/// duplicate key, an escape, an object value, a syntax error) is not
/// read here, and its reader parses it as JSON instead: a line read here
/// parses to exactly `{"system": {kind: value}}`, so both ways decode it
/// to the same event.
public struct SystemEventLine {
    /// The kind's name: its bytes in the line (valid as long as the line).
    public let kindName: UnsafeBufferPointer<UInt8>
    /// The value's JSON text as written (a string with its quotes), in
    /// the line.
    public let valueText: UnsafeBufferPointer<UInt8>
    /// What the value is. (The struct holds nothing to release: an
    /// optional of one that did was destroyed through generic code.)
    private let token: ValueToken

    /// The event's value.
    public var value: JSONValue {
        switch token {
        case .string: return .string(String(decoding: UnsafeBufferPointer(rebasing: valueText.dropFirst().dropLast()), as: UTF8.self))
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .null: return .null
        case .number:
            do {
                return try JSONValue.parse(utf8: valueText)
            } catch {
                preconditionFailure("SystemEventLine: a number read as one no longer parses: \(error)")
            }
        }
    }

    /// Whether the value is `true`, `false` or `null`.
    public var isLiteral: Bool { token == .true || token == .false || token == .null }

    /// Reads `line`; nil when it is not of the plain form.
    public init?(_ line: UnsafeBufferPointer<UInt8>) {
        var reader = Reader(line)
        // The line as clients write it, `{"system":{"` with no whitespace,
        // is checked in one comparison, not token by token with the
        // whitespace before each (any other spelling is read so).
        if Reader.same(UnsafeBufferPointer(rebasing: line.prefix(Self.compactHead.utf8CodeUnitCount)), Self.compactHead) {
            reader.index = Self.compactHead.utf8CodeUnitCount &- 1  // at the kind's opening quote
        } else {
            guard reader.skip("{"), reader.skipString("system"), reader.skip(":"), reader.skip("{") else { return nil }
        }
        guard let kindName = reader.plainString(), reader.skip(":") else { return nil }
        reader.skipWhitespace()
        let valueStart = reader.index
        guard let token = reader.valueToken() else { return nil }
        let valueText = UnsafeBufferPointer(rebasing: line[valueStart..<reader.index])
        guard reader.skip("}"), reader.skip("}"), reader.atEnd else { return nil }
        self.kindName = kindName
        self.valueText = valueText
        self.token = token
    }

    /// How a line of this form starts when written without whitespace.
    private static let compactHead: StaticString = #"{"system":{""#

    /// A value as read (its value is made when asked for).
    private enum ValueToken {
        case string, `true`, `false`, null, number
    }

    /// A cursor over the line's bytes; every read is at an index just
    /// compared with the count.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        /// Whether only whitespace is left.
        var atEnd: Bool {
            mutating get {
                skipWhitespace()
                return index == bytes.count
            }
        }

        mutating func skipWhitespace() {
            while index < bytes.count, Self.isWhitespace(bytes[index]) { index &+= 1 }
        }

        static func isWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
        }

        /// Skips whitespace and then `token` (one byte), if it is next.
        mutating func skip(_ token: Unicode.Scalar) -> Bool {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: token) else { return false }
            index &+= 1
            return true
        }

        /// Skips whitespace and then the string `text` (plain, as JSON).
        mutating func skipString(_ text: StaticString) -> Bool {
            guard let string = plainString() else { return false }
            return Self.same(string, text)
        }

        /// Whether `bytes` are the bytes at `other` (as many as `bytes` has).
        static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ other: UnsafePointer<UInt8>) -> Bool {
            guard let base = bytes.baseAddress else { return true }
            return memcmp(base, other, bytes.count) == 0
        }

        /// Whether `bytes` are exactly `text`'s bytes.
        static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
            bytes.count == text.utf8CodeUnitCount && same(bytes, text.utf8Start)
        }

        /// Skips whitespace and then a string of printable ASCII with no
        /// escape: the bytes between its quotes.
        mutating func plainString() -> UnsafeBufferPointer<UInt8>? {
            guard skip("\""), let base = bytes.baseAddress else { return nil }
            // The closing quote found by `memchr`, then the bytes before it
            // checked in one pass that folds every byte's test into one
            // flag instead of leaving at the first bad byte (a loop that
            // tested each byte in turn, and could leave at each, took
            // about twelve instructions a byte).
            let start = index, rest = bytes.count &- start
            guard rest > 0, let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), rest) else { return nil }
            let string = UnsafeBufferPointer(start: base + start,
                                             count: UnsafeRawPointer(base + start).distance(to: UnsafeRawPointer(quote)))
            // A control byte is an error, an escape or a non-ASCII byte
            // needs the full parser: not a plain string.
            var notPlain: UInt8 = 0
            for byte in string {
                notPlain |= (byte &- 0x20 >= 0x5F ? 1 : 0) | (byte == UInt8(ascii: "\\") ? 1 : 0)
            }
            guard notPlain == 0 else { return nil }
            index = start &+ string.count &+ 1
            return string
        }

        /// Skips a plain string, a literal or a number; nil for anything else.
        mutating func valueToken() -> ValueToken? {
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "\"") { return plainString() == nil ? nil : .string }
            // A literal's or a number's bytes; a number is checked by the
            // JSON parser itself (its grammar is not repeated here).
            let start = index
            while index < bytes.count, Self.isScalarByte(bytes[index]) { index &+= 1 }
            let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
            if Self.same(text, "true") { return .true }
            if Self.same(text, "false") { return .false }
            if Self.same(text, "null") { return .null }
            guard !text.isEmpty else { return nil }
            do {
                guard case .number = try JSONValue.parse(utf8: text) else { return nil }
            } catch {
                // Not a number: the line is left to the full parser, which
                // words the error (nothing is lost here).
                return nil
            }
            return .number
        }

        /// A byte of a number or a literal (`true`, `false`, `null`).
        static func isScalarByte(_ byte: UInt8) -> Bool {
            // Compared, not matched against ranges (a range pattern is
            // matched through generic code).
            let letter = byte | 0x20  // lower case for a letter
            return (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || (letter >= UInt8(ascii: "a") && letter <= UInt8(ascii: "z"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
        }
    }
}
