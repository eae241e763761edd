/// A JSON syntax error, with the 1-based line and column where it was found.
public struct JSONParseError: Error, Equatable, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let message: String
    /// 1-based line of the offending character.
    public let line: Int
    /// 1-based column of the offending character.
    public let column: Int

    public var description: String { "line \(line), column \(column): \(message)" }
}

extension JSONValue {
    /// Parses one JSON text (RFC 8259); surrounding whitespace is allowed,
    /// trailing content is not. Nesting deeper than 512 levels is rejected so
    /// hostile input (e.g. from the control socket) cannot exhaust the stack.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(utf8: Array(text.utf8))
    }

    /// Parses one JSON text given as its UTF-8 bytes (as read from a socket
    /// or a file), with no `String` made of the whole text first. Bytes that
    /// are not UTF-8 are an error, wherever they are: inside a string they
    /// are checked, outside one no JSON token has them.
    public static func parse(utf8 bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) in try parse(utf8: buffer) }
    }

    /// Parses one JSON text from UTF-8 bytes in memory the caller owns (a
    /// line in a receive buffer), with no copy of them made: as
    /// ``parse(utf8:)-([UInt8])``, for a caller that has a buffer.
    public static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.atEnd else { throw parser.error("unexpected content after the JSON value") }
        return value
    }
}

/// A recursive-descent parser over bytes it does not own (valid for the
/// parse only). Every read is at an index it has just compared with
/// `bytes.count`, so the buffer's own checks are left to debug builds
/// (an unsafe buffer checks only there) and indices move with `&+`: an
/// index never passes the count, which is far from `Int.max`.
private struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private static let maxDepth = 512

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { index >= bytes.count }

    func error(_ message: String) -> JSONParseError {
        var line = 1, column = 1
        for byte in bytes[..<min(index, bytes.count)] {
            if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else { column += 1 }
        }
        return JSONParseError(message: message, line: line, column: column)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index &+= 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
        guard index < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character '\(Character(Unicode.Scalar(bytes[index])))'")
        }
    }

    private mutating func expectWord(_ word: String) throws(JSONParseError) {
        let utf8 = Array(word.utf8)
        guard index + utf8.count <= bytes.count, bytes[index..<index + utf8.count].elementsEqual(utf8) else {
            throw error("invalid literal, expected '\(word)'")
        }
        index += utf8.count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        index &+= 1
        var object = JSONObject()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index &+= 1; return .object(object) }
        // Room for four keys at once (most requests' objects fit), where
        // growing from empty reallocated as the keys came.
        object.reserveCapacity(4)
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after key") }
            index &+= 1
            skipWhitespace()
            // Last-wins would silently drop data (two keys collapse into one);
            // a duplicate is as malformed as a missing colon.
            guard object[key] == nil else { throw error("duplicate key \"\(key)\" in object") }
            object.appendNewKey(key, try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input in object") }
            if bytes[index] == UInt8(ascii: ",") { index &+= 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index &+= 1; return .object(object) }
            throw error("expected ',' or '}' in object")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        index &+= 1
        var array: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index &+= 1; return .array(array) }
        while true {
            skipWhitespace()
            array.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input in array") }
            if bytes[index] == UInt8(ascii: ",") { index &+= 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index &+= 1; return .array(array) }
            throw error("expected ',' or ']' in array")
        }
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index &+= 1
        // Most strings (keys, names) have no escape: decode them in one
        // step from the bytes, as the loop below would, without building
        // them scalar by scalar. Only a string with a byte of 0x80 or more
        // needs its UTF-8 checked (text that came as a String always passes).
        let start = index
        var nonASCII: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index &+= 1
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index &- 1])
                guard nonASCII & 0x80 != 0 else { return String(decoding: text, as: UTF8.self) }
                guard let string = String(validating: text, as: UTF8.self) else {
                    index = start
                    throw error("invalid UTF-8 in string")
                }
                return string
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            nonASCII |= byte
            index &+= 1
        }
        var scalars = String.UnicodeScalarView()
        var run = Array(bytes[start..<index])
        func flush(_ run: inout [UInt8], into scalars: inout String.UnicodeScalarView) throws(JSONParseError) {
            guard !run.isEmpty else { return }
            guard let text = String(validating: run, as: UTF8.self) else { throw error("invalid UTF-8 in string") }
            scalars.append(contentsOf: text.unicodeScalars)
            run.removeAll()
        }
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { index &+= 1; break }
            if byte < 0x20 { throw error("control character in string") }
            if byte != UInt8(ascii: "\\") { run.append(byte); index &+= 1; continue }
            try flush(&run, into: &scalars)
            index &+= 1
            guard index < bytes.count else { throw error("unterminated escape") }
            let escape = bytes[index]
            index &+= 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try parseHex4()
                if (0xD800...0xDBFF).contains(code) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    else { throw error("unpaired surrogate") }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid low surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw error("invalid unicode escape") }
                scalars.append(scalar)
            default: throw error("invalid escape")
            }
        }
        try flush(&run, into: &scalars)
        return String(scalars)
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value * 16 + digit
            index &+= 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index &+= 1 }
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while parser.index < parser.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index]) {
                parser.index &+= 1
            }
            return parser.index - from
        }
        let intDigits = digits(&self)
        guard intDigits > 0 else { throw error("invalid number") }
        if intDigits > 1, bytes[index - intDigits] == UInt8(ascii: "0") { throw error("leading zero in number") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index &+= 1
            guard digits(&self) > 0 else { throw error("expected digits after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index &+= 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index &+= 1 }
            guard digits(&self) > 0 else { throw error("expected digits in exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let number = JSONNumber(decimalText: text) else { throw error("number out of range") }
        return number
    }
}
