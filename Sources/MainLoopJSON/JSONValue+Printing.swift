extension JSONValue {
    /// Compact JSON text (no spaces), object keys in insertion order.
    /// Integral numbers print without a fraction (`27`, not `27.0`).
    public var jsonText: String {
        var bytes: [UInt8] = []
        appendJSON(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the compact JSON text as UTF-8 bytes (what a socket sends:
    /// no String in between). Strings are copied a run of plain bytes at a
    /// time; only quotes, backslashes and control characters are escaped.
    public func appendJSON(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: value ? "true".utf8 : "false".utf8)
        case .number(let number): output.append(contentsOf: number.decimalText.utf8)
        case .string(let value): JSONValue.appendString(value, to: &output)
        case .array(let values):
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                value.appendJSON(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (index, pair) in object.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSONValue.appendString(pair.key, to: &output)
                output.append(UInt8(ascii: ":"))
                pair.value.appendJSON(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Formats a number the way JSON readers expect: integers without a
    /// fraction, everything else in Swift's shortest round-trip form.
    public static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            return String(Int64(value))
        }
        return "\(value)"
    }

    private static func appendString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                // Bytes of multi-byte characters are all >= 0x80: copied as they are.
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
                case 0x0A: output.append(contentsOf: #"\n"#.utf8)
                case 0x0D: output.append(contentsOf: #"\r"#.utf8)
                case 0x09: output.append(contentsOf: #"\t"#.utf8)
                default:
                    output.append(contentsOf: #"\u00"#.utf8)
                    output.append(hexDigit(byte >> 4))
                    output.append(hexDigit(byte & 0x0F))
                }
                runStart = index + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The lowercase hex digit of `nibble` (0...15), without building a table.
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
