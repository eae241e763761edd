import MainLoopJSON
import Testing
import TestSupport

/// Numbers are written as bytes without a String in between; the text is
/// exactly what it was when each went through Swift's `description`.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct NumberFormattingTests {
    /// How numbers were formatted before: integers without a fraction,
    /// everything else Swift's shortest round-trip text.
    private func reference(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return "\(value)"
    }

    private func written(_ value: Double) -> String {
        var bytes: [UInt8] = []
        JSONValue.number(value).appendJSON(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func everyNumberIsWrittenAsBefore() {
        var values: [Double] = [0, -0.0, 1, -1, 0.5, 0.1, 0.001, 0.0001, 0.00123, 1e-7, 123.456, -123.456, 1e15, 1e16,
                                9_007_199_254_740_991, 9_007_199_254_740_992, 9_007_199_254_740_994, 4.4e12, 4_398_046_511_103.999,
                                1_795_546_609.301, 1_795_546_609.3, 1_795_546_609.05, 1_795_546_609.001, 1_795_546_609.999,
                                .greatestFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude, .pi, -.pi]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            // Wall-clock instants to the millisecond (every observation's `at`).
            values.append(Double(Int64.random(in: 0..<4_000_000_000_000, using: &generator)) / 1000)
            values.append(-Double(Int64.random(in: 0..<4_000_000, using: &generator)) / 1000)
            // Arbitrary doubles of every magnitude.
            values.append(Double(bitPattern: UInt64.random(in: 0..<0x7FF0_0000_0000_0000, using: &generator)))
            values.append(Double.random(in: -1e6...1e6, using: &generator))
            values.append(Double(Int.random(in: -1_000_000...1_000_000, using: &generator)) / 100)
        }
        for value in values {
            #expect(written(value) == reference(value == 0 ? 0 : value), "\(value.bitPattern)")
            #expect(JSONValue.format(value) == reference(value), "\(value.bitPattern)")
        }
        #expect(written(.nan) == "null" && written(.infinity) == "null")
    }

    /// A byte to escape (or a multi-byte character) at every position of
    /// texts of 0 to 24 bytes, alone and beside another: the writer tests
    /// eight bytes at once, then the last eight (overlapping what it passed),
    /// then a short text byte by byte, and each way must find every one.
    @Test func everyPositionOfAnEscapeInShortTexts() throws {
        let specials = ["\"", "\\", "\n", "\u{01}", "\u{1f}", "\t", "é", "😀"]
        for length in 1...24 {
            for position in 0..<length {
                for special in specials {
                    for second in [nil, "\""] as [String?] {
                        var scalars = Array(repeating: "a", count: length)
                        scalars[position] = special
                        if let second { scalars[length - 1 - position] = second }
                        let text = scalars.joined()
                        var bytes: [UInt8] = []
                        JSONValue.string(text).appendJSON(to: &bytes)
                        let printed = String(decoding: bytes, as: UTF8.self)
                        #expect(printed == referenceEscaped(text), "\(length) \(position) \(special)")
                        #expect(try JSONValue.parse(printed) == .string(text))
                    }
                }
            }
        }
    }

    /// Strings of any length (past the writer's 512-byte buffer, escapes
    /// on its boundary) print as a plain escaper prints them, and read back.
    @Test func stringsOfAnyLengthAreEscapedAsBefore() throws {
        let pieces = ["a", "\"", "\\", "\n", "\u{01}", "\u{1f}", "é", "😀", "\t", "xyz", "\r"]
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 255, 509, 510, 511, 512, 513, 1_000, 3_000] {
            var text = ""
            while text.unicodeScalars.count < length { text += pieces.randomElement(using: &generator)! }
            var bytes: [UInt8] = [UInt8(ascii: "[")]
            JSONValue.array([.string(text), .number(0.5), .string(text)]).appendJSON(to: &bytes)
            let printed = String(decoding: bytes.dropFirst(), as: UTF8.self)
            #expect(printed == "[" + referenceEscaped(text) + ",0.5," + referenceEscaped(text) + "]")
            #expect(try JSONValue.parse(printed) == .array([.string(text), .number(0.5), .string(text)]))
        }
    }
}

/// The JSON text of `text` as a plain escaper writes it, scalar by scalar.
private func referenceEscaped(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20: out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
