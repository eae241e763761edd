import MainLoopJSON
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct JSONTests {
    /// Small objects are searched linearly and large ones through an index:
    /// both keep insertion order, first positions and last values, remove
    /// keys, and compare as sets of pairs whatever their order or size.
    @Test func objectsSmallAndLargeBehaveAlike() throws {
        for size in [0, 1, 5, 12, 13, 40, 1_000] {
            var object = JSONObject()
            for key in (0..<size).reversed() { object["k\(key)"] = .number(Double(key)) }
            object["k0"] = .string("last")  // a repeated key keeps its first position
            #expect(object.count == size || (size == 0 && object.count == 1))
            #expect(object.orderedKeys == (size == 0 ? ["k0"] : (0..<size).reversed().map { "k\($0)" }))
            #expect(object["k0"] == .string("last"))
            if size > 1 {
                object["k1"] = nil
                #expect(object["k1"] == nil && object.count == size - 1)
                #expect(!object.orderedKeys.contains("k1"))
                #expect(object[object.orderedKeys.last!] == .string("last"))
            }
            var reversed = JSONObject()
            for (key, value) in object.map({ ($0.key, $0.value) }).reversed() { reversed[key] = value }
            #expect(reversed == object && reversed.hashValue == object.hashValue)
            reversed["extra"] = .null
            #expect(reversed != object)
        }
    }

    /// Strings without escapes take a one-step path, strings with them the
    /// scalar loop: both give the same strings and the same errors.
    @Test func stringsWithAndWithoutEscapesParseAlike() throws {
        #expect(try JSONValue.parse(#""""#) == .string(""))
        #expect(try JSONValue.parse(#""plain ascii""#) == .string("plain ascii"))
        #expect(try JSONValue.parse("\"héllo wörld 😀\"") == .string("héllo wörld 😀"))
        #expect(try JSONValue.parse(#""ünïcode then \n escape""#) == .string("ünïcode then \n escape"))
        #expect(try JSONValue.parse(#""\u00e9 first""#) == .string("é first"))
        #expect(try JSONValue.parse(#"{"key":"value","k2":"a\"b"}"#) == .object(["key": "value", "k2": "a\"b"]))
        func failure(_ text: String) -> String? {
            do {
                _ = try JSONValue.parse(text)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(failure(#""no end "#) == "line 1, column 9: unterminated string")
        #expect(failure("\"ab\u{01}\"") == "line 1, column 4: control character in string")
        #expect(failure(#""a\nb"#) == "line 1, column 6: unterminated string")
    }

    @Test func parsesAndPrintsEveryValueType() throws {
        let text = #"{"a":null,"b":true,"c":-12.5,"d":"x\"y\\z\n\u00e9\ud83d\ude00","e":[1,2e3,{}],"f":{"g":[]}}"#
        let value = try JSONValue.parse(text)
        #expect(value.objectValue?["c"] == .number(-12.5))
        #expect(value.objectValue?["d"]?.stringValue == "x\"y\\z\né😀")
        #expect(try JSONValue.parse(value.jsonText) == value, "printing round-trips")
        #expect(JSONValue.number(27).jsonText == "27")
        #expect(JSONValue.string("\u{01}a\u{1F}").jsonText == #""\u0001a\u001f""#)
        #expect(JSONValue.number(0.4).jsonText == "0.4")
    }

    @Test func objectsCompareWithoutKeyOrderButPrintInInsertionOrder() throws {
        let a = try JSONValue.parse(#"{"x":1,"y":2}"#)
        let b = try JSONValue.parse(#"{"y":2.0,"x":1}"#)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue, "equal JSON values hash alike, whatever the key order")
        #expect(b.jsonText == #"{"y":2.0,"x":1}"#, "numbers print as written")
        #expect(JSONValue.number(2.0).jsonText == "2", "a Double prints without a needless fraction")
    }

    @Test func numbersKeepTheirExactDecimalText() throws {
        let json = try JSONValue.parse(#"[0.1, 999999999.123456789, -0, 1e-9]"#)
        let numbers = json.arrayValue!.map { $0.exactNumber! }
        #expect(numbers.map(\.decimalText) == ["0.1", "999999999.123456789", "-0", "1e-9"])
        #expect(numbers[2] == JSONNumber(0), "-0 is 0")
        #expect(JSONValue.bool(true) != JSONValue.number(1), "true is not 1")
    }

    @Test func duplicateKeysAreRejectedNotLastWins() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"a":1,"a":2}"#) }
    }

    @Test(arguments: [
        ("", "line 1, column 1: unexpected end of input"),
        ("{\"a\":1,}", "line 1, column 8: expected a string key"),
        ("[1,\n 2,\n x]", "line 3, column 2: unexpected character 'x'"),
        ("01", "leading zero"),
        ("\"abc", "unterminated string"),
        ("{} {}", "unexpected content after the JSON value"),
        ("tru", "invalid literal"),
    ])
    func syntaxErrorsSayWhereAndWhat(text: String, expected: String) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
        do { _ = try JSONValue.parse(text) } catch { #expect(error.description.contains(expected), "\(error)") }
    }

    /// Requests are parsed from the bytes read, with no String
    /// made of them first; the result is the text's.
    @Test func bytesParseAsTheirTextDoes() throws {
        for text in [#"{"system":{"orientation":"faceUp"}}"#, #"["é", "a\nb", "🎉\u00e9", 1.5, null, {"k": [true]}]"#,
                     #" "plain" "#, #"{"id":"accessory-é-12345678901234567890"}"#] {
            #expect(try JSONValue.parse(utf8: Array(text.utf8)) == JSONValue.parse(text), "\(text)")
        }
    }

    /// Bytes that are not UTF-8 are an error wherever they are: in a plain
    /// string, in one with escapes, outside any string; a truncated
    /// sequence, an overlong one, an encoded surrogate.
    @Test func bytesThatAreNotUTF8AreAnError() {
        let quote = Array(#"""#.utf8)
        let cases: [[UInt8]] = [
            quote + [0x61, 0xFF] + quote,
            quote + Array(#"a\n"#.utf8) + [0xFE] + quote,
            quote + [0xFE] + Array(#"\n"#.utf8) + quote,
            Array("[1,".utf8) + [0xFF] + Array("]".utf8),
            quote + [0xC3] + quote,
            quote + [0xC0, 0x80] + quote,
            quote + [0xED, 0xA0, 0x80] + quote,
        ]
        for bytes in cases {
            #expect(throws: JSONParseError.self, "\(bytes)") { try JSONValue.parse(utf8: bytes) }
        }
    }

    @Test func deepNestingIsRejectedInsteadOfExhaustingTheStack() {
        let text = String(repeating: "[", count: 100_000)
        do { _ = try JSONValue.parse(text) } catch { #expect(error.message.contains("nesting deeper")) }
    }
}

/// The byte printer (JSON written as bytes, a run of plain bytes
/// at a time): escapes exactly what JSON needs and round-trips.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct JSONBytePrinterTests {
    @Test func escapesQuotesBackslashesAndControlCharactersOnly() throws {
        let text = "a\"b\\c\nd\re\tf\u{01}g\u{1F}h é 🎉 \u{7F}"
        let printed = JSONValue.string(text).jsonText
        #expect(printed == #""a\"b\\c\nd\re\tf\u0001g\u001fh é 🎉 "# + "\u{7F}\"")
        #expect(try JSONValue.parse(printed) == .string(text))
        var bytes: [UInt8] = []
        JSONValue.object(["k": .string(text), "n": 1.5, "a": [true, .null]]).appendJSON(to: &bytes)
        #expect(try JSONValue.parse(String(decoding: bytes, as: UTF8.self)) == .object(["k": .string(text), "n": 1.5, "a": [true, .null]]))
    }
}
